package hreflang

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

// tpage is a page of a test set: its loc and its links, hreflang → href
// in order.
type tpage struct {
	loc   string
	links [][2]string
}

func (p tpage) page(ref uint64) *Page {
	pg := &Page{Loc: []byte(p.loc), Ref: ref}
	for _, l := range p.links {
		pg.Links = append(pg.Links, Link{Hreflang: []byte(l[0]), Href: []byte(l[1])})
	}
	return pg
}

// run checks the pages with opt and returns each problem as
// "kind page hreflang target" (with "unlinked" for TargetUnlinked), in the
// order Finish gives them, and the counts.
func run(t testing.TB, opt Options, pages []tpage) ([]string, Counts) {
	t.Helper()
	if opt.TempDir == "" {
		opt.TempDir = t.TempDir()
	}
	c := New(opt)
	defer c.Close()
	for i, p := range pages {
		if err := c.Add(p.page(uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	return finish(t, c)
}

func finish(t testing.TB, c *Checker) ([]string, Counts) {
	t.Helper()
	var got []string
	counts, err := c.Finish(func(p *Problem) error {
		s := fmt.Sprintf("%s %s %s %s", p.Kind, p.Page, p.Hreflang, p.Target)
		if p.TargetUnlinked {
			s += " unlinked"
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, counts
}

// bruteForce states the rules directly, in Finish's order.
func bruteForce(pages []tpage) []string {
	isPage := map[string]bool{}
	linksTo := map[[2]string]bool{} // [from, to]
	hasLinks := map[string]bool{}
	for _, p := range pages {
		isPage[p.loc] = true
		for _, l := range p.links {
			linksTo[[2]string{p.loc, l[1]}] = true
			hasLinks[p.loc] = true
		}
	}
	var out []string
	for _, p := range pages {
		self := false
		for _, l := range p.links {
			switch {
			case l[1] == p.loc:
				self = true
			case !isPage[l[1]]:
				out = append(out, fmt.Sprintf("target_missing %s %s %s", p.loc, l[0], l[1]))
			case !linksTo[[2]string{l[1], p.loc}]:
				s := fmt.Sprintf("not_reciprocal %s %s %s", p.loc, l[0], l[1])
				if !hasLinks[l[1]] {
					s += " unlinked"
				}
				out = append(out, s)
			}
		}
		if len(p.links) > 0 && !self {
			out = append(out, fmt.Sprintf("missing_self %s  %s", p.loc, p.loc))
		}
	}
	return out
}

const ex = "https://example.com/"

// fixture: a reciprocal cluster (with x-default), a missing back link, a
// missing self link, a link to a page outside the set, and a link to a page
// of the set that lists no alternates.
var fixture = []tpage{
	{ex + "en", [][2]string{{"en", ex + "en"}, {"de", ex + "de"}, {"fr", ex + "fr"}, {"x-default", ex + "en"}}},
	{ex + "de", [][2]string{{"en", ex + "en"}, {"de", ex + "de"}, {"fr", ex + "fr"}, {"x-default", ex + "en"}}},
	{ex + "fr", [][2]string{{"en", ex + "en"}, {"de", ex + "de"}, {"fr", ex + "fr"}, {"x-default", ex + "en"}}},
	{ex + "plain", nil},
	// es links to it; it lists only itself and pt: no link back to es.
	{ex + "es", [][2]string{{"es", ex + "es"}, {"it", ex + "it"}}},
	{ex + "it", [][2]string{{"it", ex + "it"}, {"pt", ex + "pt"}}},
	{ex + "pt", [][2]string{{"it", ex + "it"}, {"pt", ex + "pt"}}},
	// nl and be link each other, but nl does not list itself.
	{ex + "nl", [][2]string{{"nl-BE", ex + "be"}}},
	{ex + "be", [][2]string{{"nl-BE", ex + "be"}, {"nl", ex + "nl"}}},
	// sv links to a page the set does not list.
	{ex + "sv", [][2]string{{"sv", ex + "sv"}, {"da", "https://other.example/da"}}},
	// fi links to a page that lists no alternates.
	{ex + "fi", [][2]string{{"fi", ex + "fi"}, {"en", ex + "plain"}}},
}

var fixtureWant = []string{
	"not_reciprocal https://example.com/es it https://example.com/it",
	"missing_self https://example.com/nl  https://example.com/nl",
	"target_missing https://example.com/sv da https://other.example/da",
	"not_reciprocal https://example.com/fi en https://example.com/plain unlinked",
}

// TestFixture: exactly the fixture's problems are reported, with their
// counts, whether every record fits one run or each run holds one record.
func TestFixture(t *testing.T) {
	for _, runLen := range []int{0, 1, 3} {
		got, counts := run(t, Options{RunRecords: runLen}, fixture)
		if !slices.Equal(got, fixtureWant) {
			t.Errorf("RunRecords %d: got\n%s\nwant\n%s", runLen, strings.Join(got, "\n"), strings.Join(fixtureWant, "\n"))
		}
		want := Counts{Pages: 11, PagesWithLinks: 10, Links: 25, NotReciprocal: 2, MissingSelf: 1, TargetMissing: 1}
		if counts != want || counts.Problems() != 4 {
			t.Errorf("RunRecords %d: counts %+v, want %+v", runLen, counts, want)
		}
	}
	if want := bruteForce(fixture); !slices.Equal(want, fixtureWant) {
		t.Fatalf("the brute force disagrees with the fixture's answer:\n%s", strings.Join(want, "\n"))
	}
}

// TestProperty: over random alternate graphs (links to pages and to URLs
// outside the set, self links, repeated pages and links, pages without
// alternates) and run sizes, the Checker reports what the brute force does,
// in the same order.
func TestProperty(t *testing.T) {
	langs := []string{"en", "de", "fr", "x-default", "de-AT"}
	dir := t.TempDir()
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		universe := 2 + rng.IntN(40)
		url := func(i int) string { return fmt.Sprintf("%sp%d", ex, i) }
		var pages []tpage
		for range rng.IntN(60) {
			p := tpage{loc: url(rng.IntN(universe))}
			if rng.IntN(4) > 0 {
				for range rng.IntN(6) {
					target := url(rng.IntN(universe))
					if rng.IntN(3) == 0 {
						target = p.loc
					}
					p.links = append(p.links, [2]string{langs[rng.IntN(len(langs))], target})
				}
			}
			pages = append(pages, p)
		}
		// Reciprocal clusters too, so that most links are fine.
		for range rng.IntN(4) {
			var cl []string
			for range 1 + rng.IntN(4) {
				cl = append(cl, url(universe+rng.IntN(20)))
			}
			for _, a := range cl {
				p := tpage{loc: a}
				for i, b := range cl {
					p.links = append(p.links, [2]string{langs[i%len(langs)], b})
				}
				pages = append(pages, p)
			}
		}
		rng.Shuffle(len(pages), func(i, j int) { pages[i], pages[j] = pages[j], pages[i] })
		got, counts := run(t, Options{TempDir: dir, RunRecords: 1 + rng.IntN(50)}, pages)
		want := bruteForce(pages)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: got\n%s\nwant\n%s", seed, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if int(counts.Problems()) != len(want) || counts.Pages != int64(len(pages)) {
			t.Fatalf("seed %d: counts %+v for %d problems, %d pages", seed, counts, len(want), len(pages))
		}
	}
}

// row is a row with alternate:<hreflang> columns, for the encoder.
func encodeRow(t testing.TB, enc *encode.Encoder, loc string, links [][2]string) []byte {
	t.Helper()
	f := encode.Fields{Loc: []byte(loc)}
	for _, l := range links {
		f.Ext = append(f.Ext, encode.ExtColumn{Kind: encode.ExtAlternate, Key: l[0]})
		f.ExtVals = append(f.ExtVals, []byte(l[1]))
	}
	out, res := enc.AppendURL(nil, f)
	if res.Reason != encode.OK {
		t.Fatalf("row %s rejected: %v", loc, res.Reason)
	}
	return out
}

// xmlPage reads an entry back as validate's parser does: XML-decoded text.
func xmlPage(t testing.TB, entry []byte) *Page {
	t.Helper()
	var u struct {
		Loc   string `xml:"loc"`
		Links []struct {
			Hreflang string `xml:"hreflang,attr"`
			Href     string `xml:"href,attr"`
		} `xml:"http://www.w3.org/1999/xhtml link"`
	}
	doc := `<url xmlns:xhtml="http://www.w3.org/1999/xhtml">` + strings.TrimPrefix(string(entry), "<url>")
	if err := xml.Unmarshal([]byte(doc), &u); err != nil {
		t.Fatalf("%v: %s", err, entry)
	}
	p := &Page{Loc: []byte(u.Loc)}
	for _, l := range u.Links {
		if l.Hreflang != "" {
			p.Links = append(p.Links, Link{Hreflang: []byte(l.Hreflang), Href: []byte(l.Href)})
		}
	}
	return p
}

// TestGenerateAndValidateAgree: the fixture written by the encoder (with
// URLs the encoder rewrites: host case, default port, dot segments, '&',
// non-ASCII) and fed as generate does (AddEntry) and as validate does
// (XML-decoded text, Normalize) gives the same problems, with the URLs as
// the sitemap holds them.
func TestGenerateAndValidateAgree(t *testing.T) {
	rewrite := func(u string) string {
		u = strings.Replace(u, "https://example.com/", "HTTPS://Example.COM:443/x/../", 1)
		if strings.HasSuffix(u, "/es") || strings.HasSuffix(u, "/it") {
			u += "?a=1&b=ü"
		}
		return u
	}
	enc := encode.NewEncoder(nil, nil)
	gen := New(Options{TempDir: t.TempDir(), RunRecords: 2})
	val := New(Options{TempDir: t.TempDir(), RunRecords: 2, Normalize: true})
	defer gen.Close()
	defer val.Close()
	for i, p := range fixture {
		var links [][2]string
		for _, l := range p.links {
			links = append(links, [2]string{l[0], rewrite(l[1])})
		}
		entry := encodeRow(t, enc, rewrite(p.loc), links)
		if err := gen.AddEntry(entry, uint64(i)); err != nil {
			t.Fatal(err)
		}
		vp := xmlPage(t, entry)
		vp.Ref = uint64(i)
		if err := val.Add(vp); err != nil {
			t.Fatal(err)
		}
	}
	g, gc := finish(t, gen)
	v, vc := finish(t, val)
	want := slices.Clone(fixtureWant)
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "/es", "/es?a=1&amp;b=%C3%BC")
		want[i] = strings.ReplaceAll(want[i], "/it", "/it?a=1&amp;b=%C3%BC")
	}
	if !slices.Equal(g, want) || !slices.Equal(v, want) || gc != vc {
		t.Fatalf("generate:\n%s\nvalidate:\n%s\nwant:\n%s\ncounts %+v, %+v", strings.Join(g, "\n"), strings.Join(v, "\n"), strings.Join(want, "\n"), gc, vc)
	}
}

// TestParseEntry: AddEntry finds the loc and every hreflang link of the
// encoder's output, alternates columns and lists alike, and leaves media
// alternates out.
func TestParseEntry(t *testing.T) {
	enc := encode.NewEncoder(nil, nil)
	f := encode.Fields{Loc: []byte("https://a.example/p?x=1&y=2"),
		Ext: []encode.ExtColumn{{Kind: encode.ExtAlternate, Key: "de"}, {Kind: encode.ExtMediaAlternate},
			{Kind: encode.ExtAlternateList}, {Kind: encode.ExtImage}},
		ExtVals: [][]byte{[]byte("https://a.example/de"), []byte("https://m.example/p"), nil, []byte("https://a.example/i.jpg")}}
	var list []byte
	for _, rec := range [][3]string{{"fr", "https://a.example/fr", ""}, {"", "https://m2.example/p", "print"}, {"en", "https://a.example/p?x=1&y=2", "screen"}} {
		var r []byte
		if rec[0] != "" {
			r = encode.AppendField(r, encode.AltHreflang, []byte(rec[0]))
		}
		r = encode.AppendField(r, encode.AltHref, []byte(rec[1]))
		if rec[2] != "" {
			r = encode.AppendField(r, encode.AltMedia, []byte(rec[2]))
		}
		list = encode.AppendPacked(list, r)
	}
	f.ExtVals[2] = list
	entry, res := enc.AppendURL(nil, f)
	if res.Reason != encode.OK {
		t.Fatal(res.Reason)
	}
	loc, links, ok := parseEntry(entry, nil)
	var got []string
	for _, l := range links {
		got = append(got, string(l.Hreflang)+"="+string(l.Href))
	}
	want := []string{"de=https://a.example/de", "fr=https://a.example/fr", "en=https://a.example/p?x=1&amp;y=2"}
	if !ok || string(loc) != "https://a.example/p?x=1&amp;y=2" || !slices.Equal(got, want) {
		t.Fatalf("parseEntry(%s) = %q, %q, %v; want links %q", entry, loc, got, ok, want)
	}
	if bytes.Count(entry, []byte("<xhtml:link")) != 5 {
		t.Fatalf("the entry should hold 3 hreflang and 2 media links: %s", entry)
	}
	for _, bad := range []string{"", "<url>", "<url><loc>https://a.example/", `<url><loc>https://a.example/</loc><xhtml:link rel="alternate" hreflang="de"`} {
		if _, _, ok := parseEntry([]byte(bad), nil); ok {
			t.Errorf("parseEntry(%q) accepted", bad)
		}
	}
	c := New(Options{TempDir: t.TempDir()})
	defer c.Close()
	if err := c.AddEntry([]byte("<url><lo"), 0); err == nil {
		t.Error("AddEntry accepted a broken entry")
	}
}

// TestAddEntryAllocs: feeding an entry allocates nothing once the buffers
// have grown (generate calls it for every row).
func TestAddEntryAllocs(t *testing.T) {
	enc := encode.NewEncoder(nil, nil)
	entry := encodeRow(t, enc, ex+"en", fixture[0].links)
	plain := encodeRow(t, enc, ex+"plain", nil)
	c := New(Options{TempDir: t.TempDir(), RunRecords: 1 << 16})
	defer c.Close()
	for range 2000 { // grow the buffers, open the text log
		c.AddEntry(entry, 1)
	}
	n := testing.AllocsPerRun(1000, func() {
		if err := c.AddEntry(entry, 1); err != nil {
			t.Fatal(err)
		}
		if err := c.AddEntry(plain, 2); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("AddEntry: %v allocations per call", n)
	}
	v := New(Options{TempDir: t.TempDir(), RunRecords: 1 << 16, Normalize: true})
	defer v.Close()
	p := xmlPage(t, entry)
	for range 2000 {
		v.Add(p)
	}
	if n := testing.AllocsPerRun(1000, func() { v.Add(p) }); n != 0 {
		t.Errorf("Add with Normalize: %v allocations per call", n)
	}
}

// TestSkipped: with Normalize, a loc or href that is not an absolute
// http(s) URL is skipped and counted, not checked.
func TestSkipped(t *testing.T) {
	got, counts := run(t, Options{Normalize: true}, []tpage{
		{"relative/page", [][2]string{{"en", ex + "a"}}},
		{ex + "a", [][2]string{{"en", ex + "a"}, {"de", "ftp://x.example/"}}},
	})
	if len(got) != 0 || counts.Skipped != 2 || counts.Pages != 1 || counts.Links != 1 {
		t.Fatalf("problems %q, counts %+v", got, counts)
	}
}

// TestFinishOnce: Add after Finish and a second Finish fail; Close after
// Finish is fine; fn's error stops Finish and is returned.
func TestFinishOnce(t *testing.T) {
	c := New(Options{TempDir: t.TempDir()})
	for i, p := range fixture {
		c.Add(p.page(uint64(i)))
	}
	stop := fmt.Errorf("stop")
	n := 0
	if _, err := c.Finish(func(*Problem) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Finish returned %v after %d problems", err, n)
	}
	if err := c.Add(fixture[0].page(0)); err != ErrFinished {
		t.Errorf("Add after Finish: %v", err)
	}
	if _, err := c.Finish(func(*Problem) error { return nil }); err != ErrFinished {
		t.Errorf("second Finish: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

// TestCSV: the report's rows, URLs with their XML entities decoded.
func TestCSV(t *testing.T) {
	var b bytes.Buffer
	w, err := NewCSVWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{TempDir: t.TempDir()})
	for i, p := range fixture {
		if i == 4 { // es: its self link and the link back from it now miss it
			p.loc += "?a=1&amp;b=2"
		}
		c.Add(p.page(uint64(i)))
	}
	if _, err := c.Finish(w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `page,hreflang,target,problem,missing
https://example.com/es?a=1&b=2,es,https://example.com/es,target_missing,the target as a page of the set
https://example.com/es?a=1&b=2,it,https://example.com/it,not_reciprocal,a link from the target back to the page
https://example.com/es?a=1&b=2,,https://example.com/es?a=1&b=2,missing_self,a link from the page to itself
https://example.com/nl,,https://example.com/nl,missing_self,a link from the page to itself
https://example.com/sv,da,https://other.example/da,target_missing,the target as a page of the set
https://example.com/fi,en,https://example.com/plain,not_reciprocal,a link from the target back to the page (the target lists no alternates)
`
	if b.String() != want {
		t.Fatalf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestAddPageFingerprint: the fixture's pages without alternates added by
// their fingerprint give the fixture's answer (the link to "plain" is not
// reciprocal, not a missing target), as added whole; left out, the link to
// a page without alternates becomes a missing target.
func TestAddPageFingerprint(t *testing.T) {
	for _, add := range []bool{true, false} {
		c := New(Options{TempDir: t.TempDir(), RunRecords: 3})
		for i, p := range fixture {
			var err error
			switch {
			case len(p.links) > 0:
				err = c.Add(p.page(uint64(i)))
			case add:
				err = c.AddPageFingerprint(c.Fingerprint([]byte(p.loc)))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got, _ := finish(t, c)
		want := fixtureWant
		if !add {
			want = slices.Clone(fixtureWant)
			want[3] = "target_missing https://example.com/fi en https://example.com/plain"
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages without alternates added: %v: got\n%s\nwant\n%s", add, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
