package encode

import (
	"bytes"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin and friends, also where the system has no zoneinfo
)

const defaultScope = "http://www.example.com/"

type locTest struct {
	scope string // "" means defaultScope
	in    string
	want  string // the <loc> text; "" when rejected
	why   Reason
}

// locTests read as the loc part of the contract.
var locTests = []locTest{
	// The protocol's own example.
	{in: "http://www.example.com/ümlat.html&q=name", want: "http://www.example.com/%C3%BCmlat.html&amp;q=name"},

	// Percent-encoding: an existing %XX is never encoded twice, its hex is upper-cased.
	{in: "http://www.example.com/%C3%BCmlat.html", want: "http://www.example.com/%C3%BCmlat.html"},
	{in: "http://www.example.com/%c3%bc", want: "http://www.example.com/%C3%BC"},
	{in: "http://www.example.com/%7e%7E~", want: "http://www.example.com/%7E%7E~"},
	{in: "http://www.example.com/100%", want: "http://www.example.com/100%25"},
	{in: "http://www.example.com/%4", want: "http://www.example.com/%254"},
	{in: "http://www.example.com/%zz%", want: "http://www.example.com/%25zz%25"},
	{in: "http://www.example.com/%%41", want: "http://www.example.com/%25%41"},
	{in: "http://www.example.com/a b", want: "http://www.example.com/a%20b"},
	{in: `http://www.example.com/"<>\^` + "`{|}", want: "http://www.example.com/%22%3C%3E%5C%5E%60%7B%7C%7D"},
	{in: "http://www.example.com/[x]", want: "http://www.example.com/%5Bx%5D"},
	{in: "http://www.example.com/?q=é€😀", want: "http://www.example.com/?q=%C3%A9%E2%82%AC%F0%9F%98%80"},
	{in: "http://www.example.com/日本", want: "http://www.example.com/%E6%97%A5%E6%9C%AC"},
	// Unreserved, sub-delims, ':' '@' '/' '?' are kept; & and ' are then XML-escaped.
	{in: "http://www.example.com/-._~!$&'()*+,;=:@/?a?b", want: "http://www.example.com/-._~!$&amp;&apos;()*+,;=:@/?a?b"},
	// One '#' starts the fragment; a second one is data.
	{in: "http://www.example.com/a?x=1#frag#2", want: "http://www.example.com/a?x=1#frag%232"},
	{in: "http://www.example.com/a#f?/x", want: "http://www.example.com/a#f?/x"},

	// Surrounding spaces are trimmed, nothing else is.
	{in: "  http://www.example.com/a  ", want: "http://www.example.com/a"},

	// Scheme and host are case-insensitive and written lower case; the path keeps its case.
	{in: "HTTP://WWW.Example.COM/Path/A", want: "http://www.example.com/Path/A"},
	{scope: "https://www.example.com/", in: "HtTpS://www.example.com/", want: "https://www.example.com/"},

	// An empty path is "/".
	{in: "http://www.example.com", want: "http://www.example.com/"},
	{in: "http://www.example.com?q", want: "http://www.example.com/?q"},
	{in: "http://www.example.com#top", want: "http://www.example.com/#top"},

	// Default and empty ports are dropped; others are kept, without leading zeros.
	{in: "http://www.example.com:80/a", want: "http://www.example.com/a"},
	{in: "http://www.example.com:/a", want: "http://www.example.com/a"},
	{in: "http://www.example.com:0080/a", want: "http://www.example.com/a"},
	{scope: "https://www.example.com/", in: "https://www.example.com:443/a", want: "https://www.example.com/a"},
	{scope: "https://www.example.com:8443/", in: "https://WWW.example.com:08443/a", want: "https://www.example.com:8443/a"},

	// Paths are resolved against the scope's origin, "//host" takes its scheme.
	{in: "/a/b?c", want: "http://www.example.com/a/b?c"},
	{in: "/", want: "http://www.example.com/"},
	{scope: "https://example.com:8443/catalog/", in: "/catalog/x", want: "https://example.com:8443/catalog/x"},
	{scope: "https://example.com/catalog/", in: "/catalog/ü", want: "https://example.com/catalog/%C3%BC"},
	{scope: "https://example.com/", in: "//example.com/a", want: "https://example.com/a"},
	{scope: "https://example.com/", in: "//EXAMPLE.com:443", want: "https://example.com/"},

	// Dot segments are removed (RFC 3986 5.2.4); %2E is a dot.
	{in: "http://www.example.com/a/./b", want: "http://www.example.com/a/b"},
	{in: "http://www.example.com/a/b/../c", want: "http://www.example.com/a/c"},
	{in: "http://www.example.com/a/b/..", want: "http://www.example.com/a/"},
	{in: "http://www.example.com/a/.", want: "http://www.example.com/a/"},
	{in: "http://www.example.com/..", want: "http://www.example.com/"},
	{in: "http://www.example.com/../../a", want: "http://www.example.com/a"},
	{in: "http://www.example.com/a/..//b", want: "http://www.example.com//b"},
	{in: "http://www.example.com/a/%2e%2E/b", want: "http://www.example.com/b"},
	{in: "http://www.example.com/a/.%2e?x", want: "http://www.example.com/?x"},
	{in: "/a/b/../c/./d", want: "http://www.example.com/a/c/d"},
	{in: "http://www.example.com/.well-known/a/.../..b/b..", want: "http://www.example.com/.well-known/a/.../..b/b.."},
	{in: "http://www.example.com/a?x=/../#/./", want: "http://www.example.com/a?x=/../#/./"},

	// IDN hosts become punycode, whatever the case.
	{scope: "https://bücher.example/", in: "https://bücher.example/", want: "https://xn--bcher-kva.example/"},
	{scope: "https://bücher.example/", in: "https://BÜCHER.example/ö", want: "https://xn--bcher-kva.example/%C3%B6"},
	{scope: "https://xn--bcher-kva.example/", in: "https://bücher.example/a", want: "https://xn--bcher-kva.example/a"},
	{scope: "https://bücher.example/", in: "https://XN--BCHER-KVA.example/a", want: "https://xn--bcher-kva.example/a"},
	{scope: "https://bücher.example/", in: "https://bücher.example.", why: OutOfScope},
	{scope: "https://münchen.de/", in: "http://münchen.de/", why: OutOfScope},

	// IPv6 literals, in canonical form.
	{scope: "http://[::1]/", in: "http://[::1]/a", want: "http://[::1]/a"},
	{scope: "http://[::1]:8080/", in: "http://[0:0::1]:8080/a", want: "http://[::1]:8080/a"},
	{scope: "http://[2001:db8::1]/", in: "http://[2001:DB8:0::1]:80", want: "http://[2001:db8::1]/"},

	// Rejections, one reason at a time.
	{in: "", why: EmptyLoc},
	{in: "    ", why: EmptyLoc},
	{in: "\xff", why: InvalidUTF8},
	{in: "http://www.example.com/\xc3", why: InvalidUTF8},
	{in: "http://www.example.com/\xed\xa0\x80", why: InvalidUTF8}, // a surrogate
	{in: "http://www.example.com/\xc3\t", why: InvalidUTF8},
	{in: "http://www.example.com/a\tb", why: ControlChar},
	{in: "http://www.example.com/a\r\n", why: ControlChar},
	{in: "\thttp://www.example.com/", why: ControlChar},
	{in: "http://www.example.com/\x00", why: ControlChar},
	{in: "http://www.example.com/\x7f", why: ControlChar},
	{in: "ftp://www.example.com/", why: NotHTTP},
	{in: "mailto:a@www.example.com", why: NotHTTP},
	{in: "javascript:alert(1)", why: NotHTTP},
	{in: "www.example.com/a", why: NotHTTP},
	{in: "a/b", why: NotHTTP},
	{in: "http:/www.example.com/", why: NotHTTP},
	{in: "http:www.example.com", why: NotHTTP},
	{in: "httpx://www.example.com/", why: NotHTTP},
	{in: "http://", why: BadHost},
	{in: "http:///a", why: BadHost},
	{in: "http://:80/", why: BadHost},
	{in: "http://www.exa mple.com/", why: BadHost},
	{in: "http://www..example.com/", why: BadHost},
	{in: "http://.example.com/", why: BadHost},
	{in: "http://www.example.com../", why: BadHost},
	{in: "http://www%2Eexample.com/", why: BadHost},
	{in: "http://www.example.com\\@evil.com/", why: UserInfo},
	{in: "http://www.example.com\\/", why: BadHost},
	{in: "http://" + strings.Repeat("a", 64) + ".com/", why: BadHost},
	{in: "http://" + strings.Repeat("a.", 127) + "com/", why: BadHost},
	{in: "http://ü_ü.example/", why: BadHost},     // IDNA: '_' is not allowed
	{in: "http://ab--ü.example/", why: BadHost},   // IDNA: "--" at 3 and 4
	{in: "http://[::1/", why: BadHost},            // no ']'
	{in: "http://[1.2.3.4]/", why: BadHost},       // not IPv6
	{in: "http://[fe80::1%25en0]/", why: BadHost}, // zones are for local use
	{in: "http://[::1]x/", why: BadHost},
	{in: "http://[]/", why: BadHost},
	{in: "http://www.example.com:65536/", why: BadPort},
	{in: "http://www.example.com:0/", why: BadPort},
	{in: "http://www.example.com:8a/", why: BadPort},
	{in: "http://www.example.com:-1/", why: BadPort},
	{in: "http://www.example.com:80:80/", why: BadPort},
	{in: "http://www.example.com: 80/", why: BadPort},
	{in: "http://www.example.com:99999999999999999999/", why: BadPort},
	{in: "http://user@www.example.com/", why: UserInfo},
	{in: "http://user:pw@www.example.com/", why: UserInfo},
	{in: "http://@www.example.com/", why: UserInfo},
	{in: "http://www.example.com/a@b", want: "http://www.example.com/a@b"}, // '@' in the path is data

	// Scope: same scheme, host and port, path under the scope folder.
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/", want: "https://example.com/catalog/"},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/?page=2", want: "https://example.com/catalog/?page=2"},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/a/b", want: "https://example.com/catalog/a/b"},
	{scope: "https://example.com/catalog", in: "https://example.com/catalog/a", want: "https://example.com/catalog/a"},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog?x", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalogue", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/Catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "/", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/../admin", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/%2E%2E/admin", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "/catalog/x/../../admin", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com/catalog/x/../y", want: "https://example.com/catalog/y"},
	{scope: "https://example.com/catalog/", in: "http://example.com/catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "//example.com:80/catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://other.com/catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://www.example.com/catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com.evil.com/catalog/a", why: OutOfScope},
	{scope: "https://example.com/catalog/", in: "https://example.com:8443/catalog/a", why: OutOfScope},
	{scope: "https://example.com:8443/", in: "https://example.com/a", why: OutOfScope},
	{scope: "https://example.com/caf%c3%a9/", in: "https://example.com/café/menu", want: "https://example.com/caf%C3%A9/menu"},
	{scope: "https://example.com/a&b/", in: "https://example.com/a&b/c", want: "https://example.com/a&amp;b/c"},

	// Length: shorter than 2,048 bytes once percent-encoded, before XML escaping.
	{in: "http://www.example.com/" + strings.Repeat("a", 2047-23), want: "http://www.example.com/" + strings.Repeat("a", 2047-23)},
	{in: "http://www.example.com/" + strings.Repeat("a", 2048-23), why: TooLong},
	{in: "http://www.example.com/" + strings.Repeat("&", 2047-23), want: "http://www.example.com/" + strings.Repeat("&amp;", 2047-23)},
	{in: "http://www.example.com/" + strings.Repeat("é", 337) + "ab", want: "http://www.example.com/" + strings.Repeat("%C3%A9", 337) + "ab"}, // 2047
	{in: "http://www.example.com/" + strings.Repeat("é", 337) + "abc", why: TooLong},                                                          // 2048
	{in: "http://www.example.com/" + strings.Repeat("a/../", 1000), want: "http://www.example.com/"},
	{in: "http://www.example.com/" + strings.Repeat("a/../", 4000), why: TooLong}, // input over 16 KiB
}

func newTestEncoder(t testing.TB, scope string) *Encoder {
	t.Helper()
	if scope == "" {
		scope = defaultScope
	}
	sc, err := ParseScope(scope)
	if err != nil {
		t.Fatalf("ParseScope(%q): %v", scope, err)
	}
	return NewEncoder(sc, nil)
}

func TestAppendLoc(t *testing.T) {
	for _, tt := range locTests {
		e := newTestEncoder(t, tt.scope)
		prefix := []byte("prefix")
		got, why := e.AppendLoc(prefix, []byte(tt.in))
		if why != tt.why || (why == OK && string(got) != "prefix"+tt.want) {
			t.Errorf("scope %q: AppendLoc(%q) = %q, %v; want %q, %v", tt.scope, tt.in, got, why, "prefix"+tt.want, tt.why)
		}
		if why != OK && string(got) != "prefix" {
			t.Errorf("scope %q: rejected AppendLoc(%q) changed dst: %q", tt.scope, tt.in, got)
		}
	}
}

// The <loc> text is a fixed point: encoding it again gives the same bytes.
func TestAppendLocIdempotent(t *testing.T) {
	for _, tt := range locTests {
		if tt.why != OK {
			continue
		}
		e := newTestEncoder(t, tt.scope)
		again, why := e.AppendLoc(nil, unescapeXML(tt.want))
		if why != OK || string(again) != tt.want {
			t.Errorf("AppendLoc(%q) = %q, %v; want %q", unescapeXML(tt.want), again, why, tt.want)
		}
	}
}

func TestNilScope(t *testing.T) {
	e := NewEncoder(nil, nil)
	for _, tt := range []struct {
		in, want string
		why      Reason
	}{
		{in: "https://anything.example:8080/x", want: "https://anything.example:8080/x"},
		{in: "http://bücher.example/", want: "http://xn--bcher-kva.example/"},
		{in: "/a", why: NotHTTP},
		{in: "//anything.example/a", why: NotHTTP},
	} {
		got, why := e.AppendLoc(nil, []byte(tt.in))
		if string(got) != tt.want || why != tt.why {
			t.Errorf("AppendLoc(%q) = %q, %v; want %q, %v", tt.in, got, why, tt.want, tt.why)
		}
	}
}

// The host cache must not leak one host's result into another's.
func TestHostCache(t *testing.T) {
	e := NewEncoder(nil, nil)
	for range 2 {
		for _, tt := range []struct{ in, want string }{
			{"http://bücher.example/", "http://xn--bcher-kva.example/"},
			{"http://bücher.example/x", "http://xn--bcher-kva.example/x"},
			{"http://münchen.example/", "http://xn--mnchen-3ya.example/"},
			{"http://ü_ü.example/", ""},
			{"http://[::1]/", "http://[::1]/"},
			{"http://[::2]/", "http://[::2]/"},
			{"http://[::1]x/", ""},
			{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		} {
			got, _ := e.AppendLoc(nil, []byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("AppendLoc(%q) = %q; want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestParseScope(t *testing.T) {
	for _, tt := range []struct {
		in, want, origin, path string
	}{
		{"https://example.com/catalog/", "https://example.com/catalog/", "https://example.com", "/catalog/"},
		{"https://example.com/catalog", "https://example.com/catalog/", "https://example.com", "/catalog/"},
		{"HTTPS://Example.COM:443/catalog", "https://example.com/catalog/", "https://example.com", "/catalog/"},
		{"http://example.com", "http://example.com/", "http://example.com", "/"},
		{"http://example.com:8080", "http://example.com:8080/", "http://example.com:8080", "/"},
		{" https://bücher.example/neu ", "https://xn--bcher-kva.example/neu/", "https://xn--bcher-kva.example", "/neu/"},
		{"https://example.com/a/./b/../c", "https://example.com/a/c/", "https://example.com", "/a/c/"},
		{"https://example.com/caf%c3%a9", "https://example.com/caf%C3%A9/", "https://example.com", "/caf%C3%A9/"},
		{"https://example.com/a b/", "https://example.com/a%20b/", "https://example.com", "/a%20b/"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x/", "http://[::1]:8080", "/x/"},
	} {
		s, err := ParseScope(tt.in)
		if err != nil {
			t.Errorf("ParseScope(%q): %v", tt.in, err)
			continue
		}
		if s.String() != tt.want || string(s.origin) != tt.origin || string(s.path) != tt.path {
			t.Errorf("ParseScope(%q) = %q (origin %q, path %q); want %q (%q, %q)", tt.in, s, s.origin, s.path, tt.want, tt.origin, tt.path)
		}
	}
	for _, tt := range []struct{ in, err string }{
		{"", "is empty"},
		{"/catalog/", "not an absolute http or https URL"},
		{"//example.com/", "not an absolute http or https URL"},
		{"ftp://example.com/", "not an absolute http or https URL"},
		{"example.com", "not an absolute http or https URL"},
		{"https://example.com/?q=1", "has a query"},
		{"https://example.com/a?", "has a query"},
		{"https://example.com/a#top", "has a fragment"},
		{"https://user:pw@example.com/", "user info"},
		{"https://example.com:0/", "port"},
		{"https:///", "host"},
		{"https://example.com/\n", "control character"},
	} {
		_, err := ParseScope(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseScope(%q) error = %v; want it to say %q", tt.in, err, tt.err)
		}
	}
}

func TestAppendEscaped(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{`&'"<>`, "&amp;&apos;&quot;&lt;&gt;"},
		{"a&b<c>d'e\"f", "a&amp;b&lt;c&gt;d&apos;e&quot;f"},
		{"ü&ü", "ü&amp;ü"},
	} {
		if got := AppendEscaped([]byte("x"), []byte(tt.in)); string(got) != "x"+tt.want {
			t.Errorf("AppendEscaped(%q) = %q; want %q", tt.in, got, "x"+tt.want)
		}
	}
}

var (
	berlin  = mustLoadLocation("Europe/Berlin")
	newYork = mustLoadLocation("America/New_York")
)

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

type lastmodTest struct {
	in   string
	tz   *time.Location // nil means Europe/Berlin here
	want string         // "" when dropped
	warn Warning
}

var lastmodTests = []lastmodTest{
	// Dates, as they are.
	{in: "2024-05-06", want: "2024-05-06"},
	{in: " 2024-05-06\t", want: "2024-05-06"},
	{in: "2024-02-29", want: "2024-02-29"},
	{in: "2000-02-29", want: "2000-02-29"},
	{in: "0001-01-01", want: "0001-01-01"},
	{in: "9999-12-31", want: "9999-12-31"},
	{in: "1969-12-31", want: "1969-12-31"},

	// Full datetimes with a zone, as they are; 't' and 'z' upper-cased.
	{in: "2024-05-06T07:08:09Z", want: "2024-05-06T07:08:09Z"},
	{in: "2024-05-06t07:08:09z", want: "2024-05-06T07:08:09Z"},
	{in: "2024-05-06T07:08:09+02:00", want: "2024-05-06T07:08:09+02:00"},
	{in: "2024-05-06T07:08:09.123-05:30", want: "2024-05-06T07:08:09.123-05:30"},
	{in: "2024-05-06T07:08:09.000000001Z", want: "2024-05-06T07:08:09.000000001Z"},
	{in: "2024-05-06T07:08:09+00:00", want: "2024-05-06T07:08:09+00:00"},
	{in: "2024-05-06T07:08:09-00:00", want: "2024-05-06T07:08:09-00:00"},
	{in: "2024-05-06T07:08:09+14:00", want: "2024-05-06T07:08:09+14:00"},
	{in: "2024-05-06T07:08:09-14:00", want: "2024-05-06T07:08:09-14:00"},
	// Without seconds: ":00" is added.
	{in: "2024-05-06T07:08Z", want: "2024-05-06T07:08:00Z"},
	{in: "2024-05-06T07:08+01:00", want: "2024-05-06T07:08:00+01:00"},
	// Other zone spellings, written ±hh:mm.
	{in: "2024-05-06T07:08:09+0530", want: "2024-05-06T07:08:09+05:30"},
	{in: "2024-05-06T07:08:09-03", want: "2024-05-06T07:08:09-03:00"},
	{in: "2024-05-06T07:08:09 UTC", want: "2024-05-06T07:08:09Z"},

	// No zone: read in the time zone (Europe/Berlin here).
	{in: "2024-01-15T10:00:00", want: "2024-01-15T10:00:00+01:00"},
	{in: "2024-07-15T10:00:00", want: "2024-07-15T10:00:00+02:00"},
	{in: "2024-07-15T10:00", want: "2024-07-15T10:00:00+02:00"},
	{in: "2024-07-15T10:00:00.250", want: "2024-07-15T10:00:00.250+02:00"},
	{in: "2024-03-31T01:59:59", want: "2024-03-31T01:59:59+01:00"},           // last second of winter time
	{in: "2024-03-31T03:00:00", want: "2024-03-31T03:00:00+02:00"},           // first of summer time
	{in: "2024-03-31T02:30:00", warn: LastmodNonexistent},                    // skipped by the change to summer time: no instant
	{in: "2026-03-08 02:30", tz: newYork, warn: LastmodNonexistent},          // likewise in New York
	{in: "2026-11-01 01:30", tz: newYork, want: "2026-11-01T01:30:00-04:00"}, // repeated: the first of the two
	{in: "1850-06-01T12:00:00.5", want: "1850-06-01T11:06:32.5Z"},            // local mean time +00:53:28
	{in: "2024-07-15T10:00:00", tz: time.UTC, want: "2024-07-15T10:00:00Z"},
	{in: "2024-07-15T10:00:00", tz: time.FixedZone("", -9000), want: "2024-07-15T10:00:00-02:30"},
	{in: "0001-01-01T00:30:00", tz: time.FixedZone("", 3600), want: "0001-01-01T00:30:00+01:00"},
	{in: "0001-01-01T00:30:00", tz: time.FixedZone("", 3630), warn: LastmodInvalid}, // would be year 0 in UTC
	{in: "9999-12-31T23:59:59", tz: time.FixedZone("", -60*60*15), warn: LastmodInvalid},
	// The SQL form, with or without a zone.
	{in: "2024-07-15 10:00", want: "2024-07-15T10:00:00+02:00"},
	{in: "2024-07-15 10:00:05", want: "2024-07-15T10:00:05+02:00"},
	{in: "2024-07-15 10:00:05.123456", want: "2024-07-15T10:00:05.123456+02:00"},
	{in: "2024-07-15 10:00:05+00", want: "2024-07-15T10:00:05+00:00"},
	{in: "2024-07-15 10:00:05.5-0700", want: "2024-07-15T10:00:05.5-07:00"},
	{in: "2024-07-15 10:00:05 UTC", want: "2024-07-15T10:00:05Z"},
	{in: "2024-07-15 10:00:05 utc", want: "2024-07-15T10:00:05Z"},
	{in: "2024-07-15 10:00Z", want: "2024-07-15T10:00:00Z"},

	// A year or a month would need an invented day.
	{in: "2024", warn: LastmodImprecise},
	{in: "2024-05", warn: LastmodImprecise},
	{in: " 2024-05 ", warn: LastmodImprecise},

	// Impossible or unreadable.
	{in: "2024-13", warn: LastmodInvalid},
	{in: "2024-00-10", warn: LastmodInvalid},
	{in: "2024-13-01", warn: LastmodInvalid},
	{in: "2024-02-30", warn: LastmodInvalid},
	{in: "2023-02-29", warn: LastmodInvalid},
	{in: "1900-02-29", warn: LastmodInvalid},
	{in: "2024-04-31", warn: LastmodInvalid},
	{in: "2024-05-00", warn: LastmodInvalid},
	{in: "0000-01-01", warn: LastmodInvalid},
	{in: "0000", warn: LastmodInvalid},
	{in: "10000-01-01", warn: LastmodInvalid},
	{in: "-2024-01-01", warn: LastmodInvalid},
	{in: "2024-5-6", warn: LastmodInvalid},
	{in: "2024/05/06", warn: LastmodInvalid},
	{in: "20240506", warn: LastmodInvalid},
	{in: "May 6, 2024", warn: LastmodInvalid},
	{in: "2024-05-06T", warn: LastmodInvalid},
	{in: "2024-05-06T10", warn: LastmodInvalid},
	{in: "2024-05-06T10Z", warn: LastmodInvalid},
	{in: "2024-05-06T24:00:00Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:60:00Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:60Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:0Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00.Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00.5Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00.1234567890Z", warn: LastmodInvalid}, // over 9 fraction digits
	{in: "2024-05-06T10:00:00+14:01", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00+15", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00+05:60", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00+5", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00+05:3", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00 +02:00", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00ZZ", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00 GMT", warn: LastmodInvalid},
	{in: "2024-05-06X10:00:00Z", warn: LastmodInvalid},
	{in: "2024-05-06T10:00:00Z garbage", warn: LastmodInvalid},
	{in: "2024-05-06 ", want: "2024-05-06"},
	{in: "", warn: LastmodInvalid},
	{in: "yesterday", warn: LastmodInvalid},
	{in: "2024-05-06T१०:00:00Z", warn: LastmodInvalid}, // Devanagari digits
}

func TestAppendLastmod(t *testing.T) {
	for _, tt := range lastmodTests {
		tz := tt.tz
		if tz == nil {
			tz = berlin
		}
		got, key, warn := AppendLastmod([]byte("x"), []byte(tt.in), tz)
		if warn != tt.warn {
			t.Errorf("AppendLastmod(%q, %v) warning = %v; want %v (got %q)", tt.in, tz, warn, tt.warn, got)
			continue
		}
		if warn != 0 {
			if string(got) != "x" || key != NoLastmod {
				t.Errorf("AppendLastmod(%q, %v) = %q, %d with a warning; want dst unchanged and NoLastmod", tt.in, tz, got, key)
			}
			continue
		}
		if string(got) != "x"+tt.want {
			t.Errorf("AppendLastmod(%q, %v) = %q; want %q", tt.in, tz, got[1:], tt.want)
		}
		// The key is the instant written.
		if want, ok := parseLastmod(string(got[1:])); !ok || key != want {
			t.Errorf("AppendLastmod(%q, %v) key = %d; want %d (from %q)", tt.in, tz, key, want, got[1:])
		}
	}
}

// parseLastmod parses a written lastmod with package time and returns its key.
func parseLastmod(s string) (int64, bool) {
	if len(s) == len(time.DateOnly) {
		t, err := time.Parse(time.DateOnly, s)
		return t.UnixMicro(), err == nil && t.Format(time.DateOnly) == s
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.Contains(s, ":") || s[10] != 'T' || s[16] != ':' {
		return 0, false
	}
	return t.UnixMicro(), true
}

// Keys order lastmods in time, across forms and zones.
func TestLastmodKeyOrder(t *testing.T) {
	ordered := []string{
		"0001-01-01",
		"1969-12-31T23:59:59.999999Z",
		"1970-01-01",
		"1970-01-01T00:00:00.000001Z",
		"2024-05-06T01:00:00+02:00",
		"2024-05-05T23:30:00Z",
		"2024-05-06",
		"2024-05-06T00:00:00.5Z",
		"2024-05-06T00:00:00-01:00",
		"9999-12-31T23:59:59.999999Z",
	}
	prev := NoLastmod
	for i, s := range ordered {
		_, key, w := AppendLastmod(nil, []byte(s), nil)
		if w != 0 {
			t.Fatalf("AppendLastmod(%q): warning %v", s, w)
		}
		if i > 0 && key <= prev {
			t.Errorf("key(%q) = %d, not after key(%q) = %d", s, key, ordered[i-1], prev)
		}
		prev = key
	}
	_, a, _ := AppendLastmod(nil, []byte("2024-05-06T01:00:00+02:00"), nil)
	_, b, _ := AppendLastmod(nil, []byte("2024-05-05T23:00:00Z"), nil)
	if a != b {
		t.Errorf("the same instant has keys %d and %d", a, b)
	}
}

func TestDaysFromCivil(t *testing.T) {
	for d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 10000; d = d.AddDate(0, 0, 1) {
		days := d.Unix() / secPerDay
		if got := daysFromCivil(d.Year(), int(d.Month()), d.Day()); got != days {
			t.Fatalf("daysFromCivil(%v) = %d; want %d", d, got, days)
		}
		if y, m, dd := civilFromDays(days); y != d.Year() || m != int(d.Month()) || dd != d.Day() {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d; want %v", days, y, m, dd, d)
		}
	}
}

func TestAppendChangefreq(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"always", "always"},
		{"hourly", "hourly"},
		{"daily", "daily"},
		{"weekly", "weekly"},
		{"monthly", "monthly"},
		{"yearly", "yearly"},
		{"never", "never"},
		{"DAILY", "daily"},
		{" Weekly\t", "weekly"},
		{"", ""},
		{"day", ""},
		{"dailyy", ""},
		{"monthlyy", ""},
		{"MonthlY", "monthly"},
		{"\x00daily", ""},
		{"daily\x00", ""},
		{"daily!", ""},
		{"d aily", ""},
		{"annually", ""},
		{"ΝΕVER", ""}, // Greek capitals
	} {
		got, w := AppendChangefreq([]byte("x"), []byte(tt.in))
		wantW := Warning(0)
		if tt.want == "" {
			wantW = ChangefreqInvalid
		}
		if string(got) != "x"+tt.want || w != wantW {
			t.Errorf("AppendChangefreq(%q) = %q, %v; want %q, %v", tt.in, got, w, "x"+tt.want, wantW)
		}
	}
}

func TestAppendPriority(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0", "0.0"},
		{"1", "1.0"},
		{".5", "0.5"},
		{"0.5", "0.5"},
		{"1.0", "1.0"},
		{"1.", "1.0"},
		{"+0.5", "0.5"},
		{"0.500", "0.5"},
		{"00.50", "0.5"},
		{"0.55", "0.55"},
		{"0.0", "0.0"},
		{"0.", "0.0"},
		{".0", "0.0"},
		{"1.000", "1.0"},
		{"01", "1.0"},
		{" 0.8 ", "0.8"},
		{"0.30000000000000004", "0.30000000000000004"},
		{"-0", "0.0"},
		{"-0.000", "0.0"},
		{"", ""},
		{".", ""},
		{"+", ""},
		{"-", ""},
		{"1.01", ""},
		{"1.5", ""},
		{"2", ""},
		{"10", ""},
		{"-0.5", ""},
		{"-1", ""},
		{"1e-1", ""},
		{"5e-1", ""},
		{"0x1", ""},
		{"0.5.5", ""},
		{"0,5", ""},
		{"0 .5", ""},
		{"++0.5", ""},
		{"NaN", ""},
		{"inf", ""},
		{"high", ""},
	} {
		got, w := AppendPriority([]byte("x"), []byte(tt.in))
		wantW := Warning(0)
		if tt.want == "" {
			wantW = PriorityInvalid
		}
		if string(got) != "x"+tt.want || w != wantW {
			t.Errorf("AppendPriority(%q) = %q, %v; want %q, %v", tt.in, got, w, "x"+tt.want, wantW)
		}
	}
}

func TestAppendURL(t *testing.T) {
	e := newTestEncoder(t, "https://example.com/catalog/")
	e.tz = berlin
	for _, tt := range []struct {
		f    Fields
		want string
		res  Result // LastmodAt is checked apart
	}{
		{
			f:    Fields{Loc: []byte("https://example.com/catalog/a")},
			want: "<url><loc>https://example.com/catalog/a</loc></url>\n",
			res:  Result{LastmodKey: NoLastmod},
		},
		{
			f: Fields{
				Loc:        []byte("/catalog/ü?a=1&b='2'"),
				Lastmod:    []byte("2024-07-15 10:00"),
				Changefreq: []byte("Daily"),
				Priority:   []byte(".5"),
			},
			want: "<url><loc>https://example.com/catalog/%C3%BC?a=1&amp;b=&apos;2&apos;</loc>" +
				"<lastmod>2024-07-15T10:00:00+02:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n",
			res: Result{LastmodKey: time.Date(2024, 7, 15, 8, 0, 0, 0, time.UTC).UnixMicro(), LastmodLen: 25},
		},
		{
			f:    Fields{Loc: []byte("https://example.com/catalog/a"), Lastmod: []byte("2024-05"), Changefreq: []byte("sometimes"), Priority: []byte("2")},
			want: "<url><loc>https://example.com/catalog/a</loc></url>\n",
			res:  Result{Warnings: LastmodImprecise | ChangefreqInvalid | PriorityInvalid, LastmodKey: NoLastmod},
		},
		{
			f:    Fields{Loc: []byte("https://example.com/catalog/a"), Lastmod: []byte("2024-02-30"), Priority: []byte("1")},
			want: "<url><loc>https://example.com/catalog/a</loc><priority>1.0</priority></url>\n",
			res:  Result{Warnings: LastmodInvalid, LastmodKey: NoLastmod},
		},
		{
			// White space only is absent, not invalid.
			f:    Fields{Loc: []byte("https://example.com/catalog/a"), Lastmod: []byte("  "), Changefreq: []byte{}, Priority: []byte("\t")},
			want: "<url><loc>https://example.com/catalog/a</loc></url>\n",
			res:  Result{LastmodKey: NoLastmod},
		},
		{
			f:    Fields{Loc: []byte("https://example.com/catalog/a"), Lastmod: []byte("2024-05-06")},
			want: "<url><loc>https://example.com/catalog/a</loc><lastmod>2024-05-06</lastmod></url>\n",
			res:  Result{LastmodKey: time.Date(2024, 5, 6, 0, 0, 0, 0, time.UTC).UnixMicro(), LastmodLen: 10},
		},
		{
			f:   Fields{Loc: []byte("https://example.com/other"), Lastmod: []byte("2024-05-06"), Priority: []byte("x")},
			res: Result{Reason: OutOfScope, LastmodKey: NoLastmod},
		},
		{
			f:   Fields{Lastmod: []byte("2024-05-06")},
			res: Result{Reason: EmptyLoc, LastmodKey: NoLastmod},
		},
	} {
		dst := make([]byte, 3, 4096)
		copy(dst, "old")
		got, res := e.AppendURL(dst, tt.f)
		at := res.LastmodAt
		res.LastmodAt = 0
		if res != tt.res {
			t.Errorf("AppendURL(%q) result = %+v; want %+v", tt.f.Loc, res, tt.res)
		}
		if string(got) != "old"+tt.want {
			t.Errorf("AppendURL(%q) = %q; want %q", tt.f.Loc, got, "old"+tt.want)
		}
		if res.LastmodLen > 0 {
			lm := got[at : at+res.LastmodLen]
			if !bytes.HasPrefix(got[at-len("<lastmod>"):], []byte("<lastmod>")) || !bytes.HasPrefix(got[at+res.LastmodLen:], []byte("</lastmod>")) {
				t.Errorf("AppendURL(%q): LastmodAt/Len point at %q, not at the lastmod text", tt.f.Loc, lm)
			}
		} else if at != 0 {
			t.Errorf("AppendURL(%q): LastmodAt = %d without a lastmod", tt.f.Loc, at)
		}
	}
}

// A rejected row leaves dst as it was, even when AppendURL had to grow it.
func TestAppendURLRejectKeepsDst(t *testing.T) {
	e := newTestEncoder(t, "https://example.com/catalog/")
	dst := []byte("abc")[:3:3]
	got, res := e.AppendURL(dst, Fields{Loc: []byte("https://example.com/catalog/" + strings.Repeat("x", 3000))})
	if res.Reason != TooLong || len(got) != 3 || cap(got) != 3 || &got[0] != &dst[0] {
		t.Errorf("AppendURL = %q (cap %d), %v; want the same dst, TooLong", got, cap(got), res.Reason)
	}
}

func TestReasonsCovered(t *testing.T) {
	seen := map[Reason]bool{}
	for _, tt := range locTests {
		seen[tt.why] = true
	}
	for r := OK; r < NumReasons; r++ {
		// EntryTooLarge is the cutter's, Duplicate the sort's, RecordTooLong the reader's,
		// the group reasons the pipeline's (--group-by).
		if r != EntryTooLarge && r != Duplicate && r != RecordTooLong && r != GroupEmpty && r != GroupUnnameable && !seen[r] {
			t.Errorf("no loc test rejects with %v", r)
		}
	}
}

var allocRows = []struct {
	name string
	f    Fields
}{
	{"plain", Fields{Loc: []byte("https://example.com/catalog/products/item-12345.html")}},
	{"relative", Fields{Loc: []byte("/catalog/products/item-12345.html")}},
	{"escaping", Fields{Loc: []byte(" HTTPS://Example.com:443/catalog/Bücher & Co/it's \"great\"/<ü>/%7e/./x/../y?q=a b&r=ö#frag#2 ")}},
	{"idn", Fields{Loc: []byte("https://bücher.example.com/catalog/straße")}},
	{"ipv6", Fields{Loc: []byte("https://[2001:DB8::1]/catalog/a")}},
	{"fields", Fields{
		Loc:        []byte("https://example.com/catalog/a?b=c&d=e"),
		Lastmod:    []byte("2024-07-15 10:00:00.123"),
		Changefreq: []byte("Weekly"),
		Priority:   []byte("0.80"),
	}},
	{"fields-zoned", Fields{
		Loc:        []byte("https://example.com/catalog/a"),
		Lastmod:    []byte("2024-07-15T10:00:00.5+0200"),
		Changefreq: []byte("never"),
		Priority:   []byte("1"),
	}},
	{"warnings", Fields{
		Loc:        []byte("https://example.com/catalog/a"),
		Lastmod:    []byte("2024-02-30"),
		Changefreq: []byte("often"),
		Priority:   []byte("1.5"),
	}},
	{"rejected", Fields{Loc: []byte("https://other.example/a")}},
	{"rejected-idn", Fields{Loc: []byte("https://ü_ü.example/a")}},
}

func TestAppendURLAllocs(t *testing.T) {
	sc, err := ParseScope("https://example.com/catalog/")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range allocRows {
		e := NewEncoder(sc, berlin)
		dst := make([]byte, 0, 4096)
		// The first call may fill the host cache.
		e.AppendURL(dst, row.f)
		allocs := testing.AllocsPerRun(100, func() {
			dst, _ = e.AppendURL(dst[:0], row.f)
		})
		if allocs != 0 {
			t.Errorf("%s: AppendURL does %v allocations per call; want 0", row.name, allocs)
		}
	}
	// IDN scope: the fast path does not apply to Unicode input.
	sc, err = ParseScope("https://bücher.example/")
	if err != nil {
		t.Fatal(err)
	}
	e := NewEncoder(sc, nil)
	dst := make([]byte, 0, 4096)
	f := Fields{Loc: []byte("https://bücher.example/ö")}
	if _, res := e.AppendURL(dst, f); res.Reason != OK {
		t.Fatalf("AppendURL(%q): %v", f.Loc, res.Reason)
	}
	if allocs := testing.AllocsPerRun(100, func() { dst, _ = e.AppendURL(dst[:0], f) }); allocs != 0 {
		t.Errorf("IDN scope: AppendURL does %v allocations per call; want 0", allocs)
	}
}

func BenchmarkAppendURL(b *testing.B) {
	for _, bm := range []struct {
		name, scope string
		f           Fields
	}{
		{"plain", "https://example.com/catalog/", allocRows[0].f},
		{"escaping", "https://example.com/catalog/", Fields{Loc: []byte("https://example.com/catalog/Bücher & Co/l'été \"spécial\"/<ü>?q=a b&r=ö")}},
		{"fields", "https://example.com/catalog/", allocRows[5].f},
		{"idn", "https://bücher.example.com/", allocRows[3].f},
	} {
		b.Run(bm.name, func(b *testing.B) {
			e := NewEncoder(newTestScope(b, bm.scope), berlin)
			dst, res := e.AppendURL(make([]byte, 0, 4096), bm.f)
			if res.Reason != OK {
				b.Fatalf("AppendURL(%q): %v", bm.f.Loc, res.Reason)
			}
			b.SetBytes(int64(len(bm.f.Loc) + len(bm.f.Lastmod) + len(bm.f.Changefreq) + len(bm.f.Priority)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = e.AppendURL(dst[:0], bm.f)
			}
		})
	}
}

func newTestScope(t testing.TB, s string) *Scope {
	t.Helper()
	sc, err := ParseScope(s)
	if err != nil {
		t.Fatalf("ParseScope(%q): %v", s, err)
	}
	return sc
}

// unescapeXML undoes the five predefined entities.
func unescapeXML(s string) []byte {
	r := strings.NewReplacer("&amp;", "&", "&apos;", "'", "&quot;", `"`, "&lt;", "<", "&gt;", ">")
	return []byte(r.Replace(s))
}

func TestLastmodWritten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"2024-01-01", true},
		{"2024-01-01T10:00:00Z", true},
		{"2024-01-01T10:00:00.123+02:00", true},
		{"2024-01-01T10:00:00-00:00", true},
		{"2024-02-30", false},          // impossible date
		{"2024-01-01T10:00Z", false},   // no seconds: xsd:dateTime rejects it
		{"2024-01-01T10:00:00", false}, // no zone: W3C Datetime rejects it
		{"2024-01-01 10:00:00Z", false},
		{"2024-01-01t10:00:00z", false}, // AppendLastmod would upper-case it
		{"2024-01-01T10:00:00+0200", false},
		{" 2024-01-01", false},
		{"2024-01", false},
		{"", false},
		{"2024-01-01T10:00:00.1234567890123456789012345Z", false},
	} {
		if got := LastmodWritten([]byte(tc.in)); got != tc.want {
			t.Errorf("LastmodWritten(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { LastmodWritten([]byte("2024-01-01T10:00:00.123+02:00")) }); n != 0 {
		t.Errorf("LastmodWritten allocates %v times", n)
	}
}

func TestUnencodedAt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"https://ex.com/a/b?c=d&e=f#g", -1},
		{"https://ex.com/%C3%BCber", -1},
		{"https://ex.com/über", 15},
		{"https://ex.com/a b", 16},
		{"https://ex.com/a%zz", 16},
		{"https://ex.com/a%2", 16},
		{"https://ex.com/a#b#c", 18},
		{"https://ex.com/a{b}", 16},
		{"https://bücher.de/", 9},
		{"https://[::1]:8080/x", -1},
		{"https://ex.com/it's", -1},
	} {
		if got := UnencodedAt([]byte(tc.in)); got != tc.want {
			t.Errorf("UnencodedAt(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestAppendLocText: the text of a written loc is the normalised URL, for
// the rejects file (a duplicate is found by its written loc).
func TestAppendLocText(t *testing.T) {
	sc, err := ParseScope("https://www.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	enc := NewEncoder(sc, nil)
	for in, want := range map[string]string{
		"https://www.example.com/a?b=1&c='2'": "https://www.example.com/a?b=1&c='2'",
		"https://www.example.com/ü<x>":        "https://www.example.com/%C3%BC%3Cx%3E",
		"https://www.example.com/&amp;":       "https://www.example.com/&amp;",
	} {
		out, res := enc.AppendURL(nil, Fields{Loc: []byte(in)})
		if res.Reason != OK {
			t.Fatalf("%q: %v", in, res.Reason)
		}
		loc := out[bytes.Index(out, []byte("<loc>"))+5 : bytes.Index(out, []byte("</loc>"))]
		if got := string(AppendLocText(nil, loc)); got != want {
			t.Errorf("AppendLocText(%q) = %q, want %q", loc, got, want)
		}
	}
}
