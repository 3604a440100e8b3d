package encode

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzScopes are the scopes FuzzAppendURL picks from: every scope of the
// loc table, and none (nil).
func fuzzScopes(t testing.TB) (names []string, scopes []*Scope) {
	seen := map[string]bool{}
	names = append(names, "")
	scopes = append(scopes, nil)
	for _, tt := range locTests {
		s := tt.scope
		if s == "" {
			s = defaultScope
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		sc, err := ParseScope(s)
		if err != nil {
			t.Fatal(err)
		}
		names, scopes = append(names, s), append(scopes, sc)
	}
	return names, scopes
}

var fuzzZones = []*time.Location{
	time.UTC,
	berlin,
	mustLoadLocation("America/New_York"),
	mustLoadLocation("Asia/Kathmandu"),      // +05:45
	mustLoadLocation("Australia/Lord_Howe"), // half-hour DST
	mustLoadLocation("Pacific/Kiritimati"),  // +14:00
	mustLoadLocation("America/St_Johns"),    // -03:30 and DST
	time.FixedZone("odd", 3600+28),          // not whole minutes
	time.FixedZone("far", -15*3600),         // beyond xsd's 14:00
}

var (
	writtenLastmod = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2}))?$`)
	writtenPrio    = regexp.MustCompile(`^[01]\.\d+$`)
	zonelessInput  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
)

type fuzzURL struct {
	XMLName    xml.Name `xml:"url"`
	Loc        string   `xml:"loc"`
	Lastmod    *string  `xml:"lastmod"`
	Changefreq *string  `xml:"changefreq"`
	Priority   *string  `xml:"priority"`
}

func FuzzAppendURL(f *testing.F) {
	names, scopes := fuzzScopes(f)
	index := map[string]uint8{}
	for i, n := range names {
		index[n] = uint8(i)
	}
	for _, tt := range locTests {
		s := tt.scope
		if s == "" {
			s = defaultScope
		}
		f.Add(index[s], tt.in, "", "", "")
		f.Add(uint8(0), tt.in, "", "", "")
	}
	changefreqs := []string{"always", "HOURLY", " Daily", "weekly", "monthly", "yearly", "never", "day", "monthlyy"}
	for i, tt := range lastmodTests {
		f.Add(uint8(1), "/a", tt.in, changefreqs[i%len(changefreqs)], "0."+strconv.Itoa(i))
	}
	for _, r := range allocRows {
		f.Add(uint8(2), string(r.f.Loc), string(r.f.Lastmod), string(r.f.Changefreq), string(r.f.Priority))
	}

	// Encoders kept across inputs, so their host caches see many hosts.
	shared := make([]*Encoder, len(scopes))
	for i, sc := range scopes {
		shared[i] = NewEncoder(sc, berlin)
	}

	f.Fuzz(func(t *testing.T, si uint8, loc, lastmod, changefreq, priority string) {
		i := int(si) % len(scopes)
		sc, e := scopes[i], shared[i]
		row := Fields{Loc: []byte(loc), Lastmod: []byte(lastmod), Changefreq: []byte(changefreq), Priority: []byte(priority)}

		dst := []byte("previous entry\n")
		out, res := e.AppendURL(dst, row)

		// A fresh encoder (empty host cache) agrees.
		fresh, res2 := NewEncoder(sc, berlin).AppendURL([]byte("previous entry\n"), row)
		if !bytes.Equal(out, fresh) || res != res2 {
			t.Fatalf("shared encoder: %q %+v; fresh encoder: %q %+v", out, res, fresh, res2)
		}

		if res.Reason != OK {
			if string(out) != "previous entry\n" {
				t.Fatalf("rejected (%v) but dst changed: %q", res.Reason, out)
			}
			if res.Reason >= NumReasons || res.Reason == EntryTooLarge {
				t.Fatalf("bad reason %v", res.Reason)
			}
			return
		}
		entry := out[len(dst):]
		if !bytes.HasPrefix(entry, []byte("<url><loc>")) || !bytes.HasSuffix(entry, []byte("</url>\n")) ||
			bytes.Count(entry, []byte("\n")) != 1 {
			t.Fatalf("entry %q is not one <url> line", entry)
		}
		var u fuzzURL
		if err := xml.Unmarshal(entry, &u); err != nil {
			t.Fatalf("entry %q: %v", entry, err)
		}

		// The loc, as written and as XML reads it.
		locText := entry[len("<url><loc>"):bytes.Index(entry, []byte("</loc>"))]
		if got := AppendEscaped(nil, []byte(u.Loc)); !bytes.Equal(got, locText) {
			t.Fatalf("loc text %q is not the escaped form of %q", locText, u.Loc)
		}
		pu, err := url.Parse(u.Loc)
		if err != nil || !pu.IsAbs() || (pu.Scheme != "http" && pu.Scheme != "https") || pu.User != nil || pu.Host == "" {
			t.Fatalf("loc %q: not an absolute http(s) URL: %v", u.Loc, err)
		}
		outTail := u.Loc[len(pu.Scheme)+len("://")+len(pu.Host):]
		if !strings.HasPrefix(outTail, "/") || strings.ContainsAny(outTail, "\"<>\\^`{|}[]") || !printableASCII(u.Loc) || len(u.Loc) >= maxLoc {
			t.Fatalf("loc %q holds a byte it should not, or is too long", u.Loc)
		}
		if sc != nil {
			ps, _ := url.Parse(sc.String())
			if pu.Scheme != ps.Scheme || pu.Host != ps.Host || !strings.HasPrefix(u.Loc, sc.String()) {
				t.Fatalf("loc %q is not under scope %q", u.Loc, sc)
			}
		}
		// Encoding the loc again changes nothing.
		again, why := e.AppendLoc(nil, []byte(u.Loc))
		if why != OK || !bytes.Equal(again, locText) {
			t.Fatalf("AppendLoc(%q) = %q, %v; want %q", u.Loc, again, why, locText)
		}
		// Without dot segments, the path, query and fragment decode to the input's.
		if in, ok := inputTail(strings.Trim(loc, " ")); ok {
			if pctDecode(in) != pctDecode(outTail) {
				t.Fatalf("input tail %q decodes to %q, output tail %q to %q", in, pctDecode(in), outTail, pctDecode(outTail))
			}
		}

		// Optional fields.
		if res.LastmodLen > 0 {
			if u.Lastmod == nil || *u.Lastmod != string(out[res.LastmodAt:res.LastmodAt+res.LastmodLen]) {
				t.Fatalf("LastmodAt/Len = %d/%d do not point at the lastmod of %q", res.LastmodAt, res.LastmodLen, entry)
			}
			key, ok := parseLastmod(*u.Lastmod)
			if !ok || !writtenLastmod.MatchString(*u.Lastmod) || key != res.LastmodKey {
				t.Fatalf("lastmod %q (from %q): parses %v, key %d; want key %d", *u.Lastmod, lastmod, ok, key, res.LastmodKey)
			}
		} else if u.Lastmod != nil || res.LastmodKey != NoLastmod {
			t.Fatalf("lastmod written without LastmodLen: %q", entry)
		}
		if (u.Lastmod == nil) != (res.Warnings&(LastmodInvalid|LastmodImprecise|LastmodNonexistent) != 0 || len(trimWhite(row.Lastmod)) == 0) {
			t.Fatalf("lastmod %q: written %v, warnings %b", lastmod, u.Lastmod != nil, res.Warnings)
		}
		if u.Changefreq != nil {
			if !strings.Contains(" always hourly daily weekly monthly yearly never ", " "+*u.Changefreq+" ") ||
				!strings.EqualFold(*u.Changefreq, strings.TrimSpace(changefreq)) {
				t.Fatalf("changefreq %q written as %q", changefreq, *u.Changefreq)
			}
		} else if res.Warnings&ChangefreqInvalid == 0 && len(trimWhite(row.Changefreq)) > 0 {
			t.Fatalf("changefreq %q dropped without a warning", changefreq)
		}
		if u.Priority != nil {
			p, err := strconv.ParseFloat(*u.Priority, 64)
			q, err2 := strconv.ParseFloat(string(trimWhite(row.Priority)), 64)
			if err != nil || err2 != nil || p < 0 || p > 1 || p != q || !writtenPrio.MatchString(*u.Priority) ||
				(len(*u.Priority) > 3 && strings.HasSuffix(*u.Priority, "0")) {
				t.Fatalf("priority %q written as %q", priority, *u.Priority)
			}
		} else if res.Warnings&PriorityInvalid == 0 && len(trimWhite(row.Priority)) > 0 {
			t.Fatalf("priority %q dropped without a warning", priority)
		}
	})
}

func FuzzAppendLastmod(f *testing.F) {
	for i, tt := range lastmodTests {
		f.Add(tt.in, uint8(i))
	}
	f.Add("2024-11-03T01:30", uint8(2))         // New York, ambiguous
	f.Add("2024-03-10T02:30", uint8(2))         // New York, skipped
	f.Add("2024-04-07 01:45:00", uint8(4))      // Lord Howe, ambiguous half hour
	caches := make([]zoneCache, len(fuzzZones)) // kept across inputs, as an Encoder keeps its own
	f.Fuzz(func(t *testing.T, in string, zi uint8) {
		tz := fuzzZones[int(zi)%len(fuzzZones)]
		out, key, w := AppendLastmod([]byte("x"), []byte(in), tz)
		// An Encoder's cached zone periods change nothing.
		cout, ckey, cw := appendLastmodZone([]byte("x"), []byte(in), tz, &caches[int(zi)%len(fuzzZones)])
		if !bytes.Equal(cout, out) || ckey != key || cw != w {
			t.Fatalf("lastmod %q in %v: %q, %d, %v; with the zone cache %q, %d, %v", in, tz, out, key, w, cout, ckey, cw)
		}
		// The fast path, where it answers, agrees with the general one.
		if fkey, ok := lastmodFast(trimWhite([]byte(in)), tz == time.UTC); ok {
			gout, gkey, gw := appendLastmod([]byte("x"), trimWhite([]byte(in)), tz, nil)
			if gw != 0 || gkey != fkey || !bytes.Equal(gout, out) {
				t.Fatalf("lastmod %q: fast path key %d, %q; general path %q, key %d, %v", in, fkey, out, gout, gkey, gw)
			}
		}
		if w != 0 {
			if string(out) != "x" || key != NoLastmod || (w != LastmodInvalid && w != LastmodImprecise && w != LastmodNonexistent) {
				t.Fatalf("AppendLastmod(%q) = %q, %d, %v", in, out, key, w)
			}
			if w == LastmodNonexistent {
				// Package time agrees: the wall clock it gives the time
				// differs from the one written.
				norm, ok := zonelessWall(in)
				tt, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", norm, tz)
				if !ok || err != nil || tt.Format("2006-01-02T15:04:05.999999999") == norm {
					t.Fatalf("AppendLastmod(%q, %v): %v, but package time reads it as %v (%v)", in, tz, w, tt, err)
				}
			}
			return
		}
		s := string(out[1:])
		want, ok := parseLastmod(s)
		if !ok || !writtenLastmod.MatchString(s) || key != want {
			t.Fatalf("AppendLastmod(%q, %v) = %q, key %d; parses %v with key %d", in, tz, s, key, ok, want)
		}
		// Writing the output again changes nothing.
		again, key2, w2 := AppendLastmod(nil, out[1:], tz)
		if string(again) != s || key2 != key || w2 != 0 {
			t.Fatalf("AppendLastmod(%q) = %q, %d, %v; want it unchanged, key %d", s, again, key2, w2, key)
		}
		// A zone-less input names the instant package time gives it in tz.
		if norm, ok := zonelessWall(in); ok {
			tt, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", norm, tz)
			if err != nil || tt.UnixMicro() != key {
				t.Fatalf("AppendLastmod(%q, %v) = %q, key %d; package time says %v (%d), %v", in, tz, s, key, tt, tt.UnixMicro(), err)
			}
			if wall := tt.Format("2006-01-02T15:04:05.999999999"); wall != strings.TrimRight(strings.TrimRight(norm, "0"), ".") && wall != norm {
				t.Fatalf("AppendLastmod(%q, %v) = %q: the zone skips that wall time (package time: %s)", in, tz, s, wall)
			}
		}
	})
}

// zonelessWall returns a zone-less input as YYYY-MM-DDThh:mm:ss[.f], and
// whether it is one.
func zonelessWall(in string) (string, bool) {
	trimmed := strings.TrimSpace(in)
	if !zonelessInput.MatchString(trimmed) {
		return "", false
	}
	norm := []byte(trimmed)
	norm[10] = 'T'
	if len(norm) == 16 {
		norm = append(norm, ":00"...)
	}
	return string(norm), true
}

// inputTail returns the path, query and fragment of a loc as given, with an
// empty path made "/", when the loc is one whose tail the encoder should
// only re-encode: no dot segments.
func inputTail(loc string) (string, bool) {
	var tail string
	switch {
	case strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//"):
		tail = loc
	default:
		i := strings.Index(loc, "//")
		if i < 0 {
			return "", false
		}
		rest := loc[i+2:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			j = len(rest)
		}
		tail = rest[j:]
	}
	if !strings.HasPrefix(tail, "/") {
		tail = "/" + tail
	}
	path := tail
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j]
	}
	low := strings.ToLower(path)
	if strings.Contains(low, "/.") || strings.Contains(low, "/%2e") {
		return "", false
	}
	return tail, true
}

// pctDecode decodes every valid %XX and keeps anything else, '%' included.
func pctDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && hexVal[s[i+1]] >= 0 && hexVal[s[i+2]] >= 0 {
			b.WriteByte(byte(hexVal[s[i+1]]<<4 | hexVal[s[i+2]]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// fastScopes adds to fuzzScopes scopes whose paths need XML escaping, a port
// and an IDN, where the fast path must step aside or match exactly.
func fastScopes(t testing.TB) []*Scope {
	_, scopes := fuzzScopes(t)
	for _, s := range []string{"https://ex.com/a&b/", "https://ex.com/it's/", "http://ex.com:8080/x/", "https://bücher.example/", "https://[::1]/"} {
		sc, err := ParseScope(s)
		if err != nil {
			t.Fatal(err)
		}
		scopes = append(scopes, sc)
	}
	return scopes
}

// checkLocFast fails when appendLocFast answers for raw and its answer
// differs from the general path's; it reports whether it answered.
func checkLocFast(t *testing.T, sc *Scope, raw string) bool {
	t.Helper()
	e := NewEncoder(sc, nil)
	prefix := []byte("prev")
	fast, ok := e.appendLocFast(prefix, []byte(raw))
	if !ok {
		if string(fast) != "prev" {
			t.Fatalf("scope %v, loc %q: fast path declined but changed dst to %q", sc, raw, fast)
		}
		return false
	}
	slow, r := e.appendLocGeneral(prefix, []byte(raw), e.scope)
	if r != OK || !bytes.Equal(fast, slow) {
		t.Fatalf("scope %v, loc %q: fast path %q; general path %q, %v", sc, raw, fast, slow, r)
	}
	return true
}

// fastCases are locs around every decision of appendLocFast.
var fastCases = []string{
	"/", "/a", "/a/b.html", "/a?b=c&d='e'", "/a#f", "/a#f#g", "/a?b#c?d", "/ü", "/\xff", "/a\x01", "/a\x7f",
	"/./a", "/a/./b", "/a/../b", "/a/.b", "/a/%2e/b", "/a/%2E%2E/b", "/a/b.", "/a/b?x=/./y", "/a#/../b",
	"/%41%zz%", "/a%2", "/a%", "/{}|\\^`\"<> ", "//ex.com/a", " /a ", "", "   ",
	"http://www.example.com", "http://www.example.com/", "http://www.example.com?q", "http://www.example.com#f",
	"http://www.example.com:80/", "http://www.example.com./", "http://WWW.example.com/", "HTTP://www.example.com/",
	"http://www.example.com@evil.com/", "http://www.example.com.evil.com/", "https://www.example.com/",
	"https://ex.com/a&b/c", "https://ex.com/a&amp;b/c", "https://ex.com/it's/x", "http://ex.com:8080/x/y",
	"https://xn--bcher-kva.example/x", "https://bücher.example/x", "https://[::1]/x", "https://[0::1]/x",
	"/" + strings.Repeat("a", maxLoc), "/" + strings.Repeat("&", 500), "/" + strings.Repeat("ü", 700),
}

func TestAppendLocFast(t *testing.T) {
	answered := 0
	for _, sc := range fastScopes(t) {
		for _, tt := range locTests {
			if checkLocFast(t, sc, tt.in) {
				answered++
			}
		}
		for _, raw := range fastCases {
			if checkLocFast(t, sc, raw) {
				answered++
			}
			if sc != nil && checkLocFast(t, sc, sc.String()+raw) {
				answered++
			}
		}
	}
	if answered < 200 {
		t.Errorf("the fast path answered only %d cases", answered)
	}
	// The common shapes must take the fast path, or it buys nothing.
	sc := newTestScope(t, "https://www.example.com/")
	for _, raw := range []string{"https://www.example.com/a/b-1.html?id=2&c=d", "/a/l'été", "https://www.example.com/x#top",
		"/" + strings.Repeat("&", 450) + strings.Repeat("'", 450)} {
		if !checkLocFast(t, sc, raw) {
			t.Errorf("loc %q did not take the fast path", raw)
		}
	}
}

func FuzzAppendLocFast(f *testing.F) {
	scopes := fastScopes(f)
	for i, raw := range fastCases {
		f.Add(uint8(i), raw)
	}
	for _, tt := range locTests {
		f.Add(uint8(1), tt.in)
	}
	f.Fuzz(func(t *testing.T, si uint8, raw string) {
		sc := scopes[int(si)%len(scopes)]
		checkLocFast(t, sc, raw)
		if sc != nil {
			checkLocFast(t, sc, sc.String()+raw)
		}
	})
}

func TestLastmodFast(t *testing.T) {
	in := []string{
		"2024-01-02", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05+05:30", "2024-01-02T03:04:05-00:00",
		"2024-01-02T03:04:05", "2024-01-02 03:04:05", "2024-01-02 03:04:05Z", "2024-01-02t03:04:05",
		"2024-02-29", "2023-02-29", "2024-04-31", "0000-01-01", "0001-01-01", "9999-12-31T23:59:59+14:00",
		"9999-12-31T23:59:59-14:01", "2024-01-02t03:04:05Z", "2024-01-02T03:04:05z", "2024-01-02 03:04:05Z",
		"2024-01-02T24:00:00Z", "2024-01-02T23:60:00Z", "2024-01-02T23:59:60Z", "2024-01-02T03:04:05+05:60",
		"2024-01-02T03:04:05+0530x", "2024-01-02T03:04:05.5Z", "2024-13-02", "2024-00-02", "2024-01-00",
		"2024/01/02", "2024-01-0a", "２０２４-01-02", "-024-01-02", "2024-01-02T03:04:05*05:30",
	}
	for _, tt := range lastmodTests {
		in = append(in, tt.in)
	}
	answered := 0
	for _, s := range in {
		for _, tz := range fuzzZones {
			key, ok := lastmodFast(trimWhite([]byte(s)), tz == time.UTC)
			if !ok {
				continue
			}
			answered++
			want, gkey, w := appendLastmod(nil, trimWhite([]byte(s)), tz, nil)
			got, _, _ := AppendLastmod(nil, []byte(s), tz)
			if w != 0 || gkey != key || string(got) != string(want) {
				t.Errorf("lastmod %q in %v: fast path %q, key %d; general path %q, key %d, %v", s, tz, got, key, want, gkey, w)
			}
		}
	}
	for _, s := range in[:6] {
		if _, ok := lastmodFast([]byte(s), true); !ok {
			t.Errorf("lastmod %q did not take the fast path", s)
		}
	}
	for _, s := range in[4:6] {
		if _, ok := lastmodFast([]byte(s), false); ok {
			t.Errorf("zone-less lastmod %q took the fast path outside UTC", s)
		}
	}
	if answered < 10 {
		t.Errorf("the fast path answered only %d lastmods", answered)
	}
}

// TestZoneCache walks wall-clock times through two years of every test zone
// (DST changes, half-hour and odd offsets) in order and in random jumps:
// the cached offset is always the one time.Date gives.
func TestZoneCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, tz := range fuzzZones {
		var z zoneCache
		check := func(local int64) {
			u := time.Unix(local, 0).UTC()
			y, mo, d := u.Date()
			h, mi, s := u.Clock()
			td := time.Date(y, mo, d, h, mi, s, 0, tz)
			want := int(local - td.Unix())
			wantExists := td.Format(time.DateTime) == u.Format(time.DateTime) // a gap moves the wall clock on
			if got, exists := z.offset(tz, local, y, int(mo), d, h, mi, s); got != want || exists != wantExists {
				t.Fatalf("%v at %v (wall clock): offset %d, exists %v; time.Date %d, %v", tz, u.Format("2006-01-02 15:04:05"), got, exists, want, wantExists)
			}
		}
		from := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		for local := from; local < from+2*365*86400; local += 7 * 60 {
			check(local)
		}
		for range 20000 {
			check(from + rng.Int64N(2*365*86400))
		}
		for _, y := range []int64{1, 1800, 1900, 9999} { // before zones, and far out
			check(time.Date(int(y), 6, 1, 12, 0, 0, 0, time.UTC).Unix())
		}
	}
}
