package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/hreflang"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// generated is a sitemap of n entries as generate writes them: the bench
// generator's rows (with bad ones, which the encoder rejects) through the
// encoder.
func generated(tb testing.TB, n int) []byte {
	g := bench.NewGenerator(7, "https://www.example.com/")
	g.Bad = 0.05
	enc := encode.NewEncoder(mustScope(tb, "https://www.example.com/"), nil)
	doc := []byte(urlsetOpen + "\n")
	var row []byte
	for range n {
		var r bench.Row
		row, r = g.AppendRow(row[:0])
		f := encode.Fields{Loc: row[r.Loc[0]:r.Loc[1]], Lastmod: row[r.Lastmod[0]:r.Lastmod[1]],
			Changefreq: row[r.Changefreq[0]:r.Changefreq[1]], Priority: row[r.Priority[0]:r.Priority[1]]}
		out, res := enc.AppendURL(doc, f)
		if res.Reason == encode.OK {
			doc = out
		}
	}
	return append(doc, "</urlset>\n"...)
}

// fastEntries are entries around the fast path's shape: each either taken
// by it or handed to the general path, with every kind of problem.
var fastEntries = []string{
	`<url><loc>https://www.example.com/a?x=1&amp;y=&apos;2&apos;&amp;z=&quot;3&quot;</loc><lastmod>2024-01-02T03:04:05+02:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>`,
	`<url><loc>https://www.example.com/b</loc></url>`,
	`<url><loc>https://www.example.com/b</loc><lastmod>2024-01-02</lastmod></url>`,                    // a duplicate
	`<url><loc>HTTPS://WWW.Example.com:443/b</loc></url>`,                                             // the same URL again
	`<url><loc>https://elsewhere.example/c</loc><changefreq>never</changefreq></url>`,                 // out of scope
	`<url><loc>https://www.example.com/ü</loc></url>`,                                                 // to percent-encode
	`<url><loc>https://www.example.com/a"b'c</loc><priority>1.0</priority></url>`,                     // raw quotes
	`<url><loc>/relative/path/long</loc></url>`, `<url><loc>/x</loc></url>`, `<url><loc></loc></url>`, // relative, short, empty
	`<url><loc>ftp://www.example.com/x</loc></url>`, `<url><loc>https://www.example.com/&lt;x&gt;</loc></url>`,
	`<url><loc>https://www.example.com/&#65;</loc></url>`, `<url><loc>https://www.example.com/a&amp</loc></url>`,
	`<url><loc> https://www.example.com/sp </loc></url>`, `<url><loc>https://www.example.com/a b</loc></url>`,
	`<url><loc>https://www.example.com/x</loc><lastmod>2024-02-30</lastmod></url>`,
	`<url><loc>https://www.example.com/x2</loc><lastmod>2024-02-03T04:05</lastmod></url>`,
	`<url><loc>https://www.example.com/x3</loc><lastmod>2024-02-03T04:05:06</lastmod></url>`,
	`<url><loc>https://www.example.com/x4</loc><lastmod></lastmod><changefreq>Daily</changefreq></url>`,
	`<url><loc>https://www.example.com/x5</loc><priority>1.5</priority></url>`,
	`<url><loc>https://www.example.com/p1</loc><priority>1.1</priority></url>`, `<url><loc>https://www.example.com/p2</loc><priority>0.55</priority></url>`,
	`<url><loc>https://www.example.com/p3</loc><priority>1.00</priority></url>`, `<url><loc>https://www.example.com/p4</loc><priority>0.a</priority></url>`,
	`<url><loc>https://www.example.com/p5</loc><changefreq>DAILY</changefreq></url>`,
	"<url><loc>https://www.example.com/p7</loc><priority>\n0.5</priority></url>", "<url><loc>https://www.example.com/p8</loc><priority>0.5 </priority></url>",
	"<url><loc>https://www.example.com/p9</loc><changefreq>\ndaily</changefreq><lastmod>\n2024-01-01</lastmod></url>",
	"<url><loc>https://www.example.com/\nnl</loc></url>", "<url><loc>https://www.example.com/\ttab</loc></url>", "<url><loc>https://www.exa\nmple.com/h</loc></url>",
	`<url><loc>https://www.exa"mple.com/h</loc></url>`, `<url><loc>https://www.exa'mple.com/h</loc></url>`, `<url><loc>https://www.example.com/it's</loc></url>`,
	`<url><loc>https://www.example.com/x&apos;y</loc></url>`, `<url><loc>https://www.example.com/%7e%zz%41</loc></url>`, `<url><loc>https://www.example.com/a/../b</loc></url>`,
	`<url><loc>https://www.example.com:8080/p</loc></url>`, `<url><loc>https://ü.example.com/idn</loc></url>`, `<url><loc>https://www.exa>mple.com/</loc></url>`, `<url><loc>https://www.example.com/a]]>b</loc></url>`, `<url><loc>https://www.example.com/a>b</loc></url>`, `<url><loc>https://user@www.example.com/p</loc></url>`, `<url><loc>https://www.example.com/p#f#g</loc></url>`,
	"<url><loc>https://www.example.com/\x01c</loc></url>", "<url><loc>https://www.example.com/\xc3\xbc</loc></url>", "<url><loc>https://www.example.com/\xff</loc></url>", `<url><loc>https://www.example.com/p6</loc><changefreq>dail</changefreq></url>`,
	`<url><loc>https://www.example.com/x6</loc><priority>.5</priority><changefreq>daily</changefreq></url>`,
	`<url><loc>https://www.example.com/x7</loc><changefreq>daily</changefreq><lastmod>2024-01-01</lastmod></url>`,
	`<url><loc>https://www.example.com/x8</loc><lastmod>2024-01-01</lastmod><lastmod>2024-01-01</lastmod></url>`,
	`<url><loc>https://www.example.com/x9</loc><priority>0.1</priority><image:image><image:loc>https://www.example.com/i.png</image:loc></image:image></url>`,
	`<url><lastmod>2024-01-01</lastmod></url>`, `<url></url>`, `<url/>`, `<url ><loc>https://www.example.com/y</loc></url >`,
	`<url id="1"><loc>https://www.example.com/y1</loc></url>`, `<url><loc>https://www.example.com/y2</loc>x</url>`,
	`<url><loc>https://www.example.com/y3</loc></url><!-- c -->`, "<url><loc>https://www.example.com/y4</loc></url>\r\n\t ",
	`<sitemap><loc>https://www.example.com/y5</loc></sitemap>`, `<url><loc>https://www.example.com/y6</loc></url><url><loc>`,
	`<url><loc>https://www.example.com/` + strings.Repeat("l", 2040) + `</loc></url>`,
	`<url><loc>https://www.example.com/` + strings.Repeat("&amp;", 2040) + `</loc></url>`,
	`<url><loc>https://www.example.com/z</loc></url><url><loc>https://www.example.com/]]&gt;</loc></url>`,
}

// chunked serves one file in reads of at most n bytes, so that the
// tokenizer's window ends anywhere in the entries.
type chunked struct {
	name string
	data []byte
	n    int
}

func (c chunked) Open(_ context.Context, name string) (io.ReadCloser, error) {
	if name != c.name {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(xmltest.Chunks(c.data, c.n)), nil
}

func (chunked) List(context.Context) ([]string, error) { return nil, nil }
func (chunked) String() string                         { return "(chunked)" }

// agreeFast checks data as a root sitemap with the general path alone and
// with the fast path, reading it in chunks of chunk bytes, and fails when
// the reports differ in anything but the time taken.
func agreeFast(t *testing.T, data []byte, chunk int) {
	t.Helper()
	opt := Options{Limits: Ours, RunRecords: 64, MaxProblems: 200, Workers: 1,
		PublicURL: mustScope(t, "https://www.example.com/"), SkipOrphans: true}
	dir := t.TempDir() // the runs' file is unlinked at once: one folder serves both
	run := func(general bool) *Report {
		o := opt
		o.general, o.TempDir = general, dir
		rep, err := Set(context.Background(), chunked{"s.xml", data, chunk}, "s.xml", o)
		if err != nil {
			t.Fatal(err)
		}
		rep.Seconds = 0
		return rep
	}
	want, got := run(true), run(false)
	if want.BytesUncompressed < int64(len(data)) || stoppedEarly(want) {
		// The bytes read before the stop depend on how far the reader
		// had read ahead: a matter of buffering, on either path.
		got.BytesUncompressed = want.BytesUncompressed
	}
	if want.Stopped {
		// MaxProblems cancels the check; each path notices between
		// tokens or entries of its own, so the URLs counted by then
		// differ (the report says it is incomplete).
		got.URLs = want.URLs
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path (chunks of %d) and general path differ on %q\n got: %+v\nwant: %+v", chunk, data, got, want)
	}
}

// stoppedEarly reports whether a report's file was not read to its end.
func stoppedEarly(r *Report) bool {
	for _, p := range r.List {
		switch p.Code {
		case CodeNotWellFormed, CodeTooLarge, CodeTooNested, CodeGzip, CodeUnreadable:
			return true
		}
	}
	return r.Stopped
}

// TestFastPathAgrees: every entry of fastEntries, alone, after a run of
// entries the fast path takes, and all together, read in chunks from one
// byte to the whole file, gives the general path's report.
func TestFastPathAgrees(t *testing.T) {
	good := `<url><loc>https://www.example.com/g</loc><lastmod>2024-01-02T03:04:05Z</lastmod></url>` + "\n"
	docs := []string{urlsetOpen + strings.Join(fastEntries, "\n") + "\n</urlset>\n"}
	for _, e := range fastEntries {
		docs = append(docs, urlsetOpen+e+"</urlset>", urlsetOpen+good+good+e+"\n"+good+"</urlset>\n")
	}
	docs = append(docs,
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">`+good+`</urlset>`,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">`+good+`</s:urlset>`,
		`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns="urn:x">`+good+`</s:urlset>`,
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">`+good+good+`</urlset>`,
		`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+good+`</sitemapindex>`,
		urlsetOpen+good+"</urlset>"+good, urlsetOpen+good+good, urlsetOpen+good+"<url><loc>https://www.example.com/g</loc></url>",
	)
	var stop strings.Builder // past MaxProblems: the check stops
	for i := range 1000 {
		fmt.Fprintf(&stop, "<url><loc>https://elsewhere.example/%d</loc></url>\n", i)
	}
	docs = append(docs, urlsetOpen+stop.String()+"</urlset>")
	for _, d := range docs {
		for _, chunk := range []int{1, 3, 64, 1 << 20} {
			agreeFast(t, []byte(d), chunk)
		}
	}
	agreeFast(t, generated(t, 3000), 1<<20)
	agreeFast(t, generated(t, 3000), 777)
}

// FuzzFastPath is the differential fuzzer of the fast path: for any file
// (or any body of a urlset, with wrap), read in chunks of any size, the
// report is the general path's.
func FuzzFastPath(f *testing.F) {
	for _, b := range exampleFiles(f) {
		f.Add(b, false, uint16(0))
	}
	f.Add(generated(f, 40), false, uint16(0))
	f.Add(generated(f, 40), false, uint16(100))
	f.Add(benchShard(5), false, uint16(7))
	for i, e := range fastEntries {
		f.Add([]byte(e), true, uint16(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, wrap bool, chunk uint16) {
		if wrap {
			data = append(append([]byte(urlsetOpen), data...), "</urlset>\n"...)
		}
		n := int(chunk) + 1
		if len(data) > 2048 {
			n = max(n, 61) // a large file in single bytes only slows the fuzzer down
		}
		agreeFast(t, data, n)
	})
}

// parseAlone checks doc as one sitemap under https://www.example.com/,
// outside Set, and returns its parser.
func parseAlone(tb testing.TB, doc []byte, general bool) *parser {
	sc := mustScope(tb, "https://www.example.com/")
	dir := tb.TempDir()
	c := &checker{opt: Options{Limits: Ours}, rep: &Report{ByCode: map[Code]int{}},
		names: []string{"s.xml"}, scopes: []*encode.Scope{sc}, news: []bool{false}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	defer c.cancel()
	c.hreflang = hreflang.New(hreflang.Options{TempDir: dir, Normalize: true})
	defer c.hreflang.Close()
	c.dupes = newDupes(dir, 1<<19, 1, c.hreflang.Fingerprint)
	defer c.dupes.close()
	p := &parser{c: c, name: "s.xml", enc: encode.NewEncoder(sc, nil), rawEnc: encode.NewEncoder(nil, nil), general: general}
	p.parse(c.ctx, bytes.NewReader(doc))
	c.dupes.add(&p.batch)
	if len(c.problems) > 0 {
		tb.Fatalf("problems in a clean sitemap: %v", c.problems[:min(3, len(c.problems))])
	}
	return p
}

// TestFastPathTakesGenerated: every entry generate writes goes through the
// fast path (else the differential tests above would prove nothing), and
// a plain generator's entries too; and none goes through it when it is off.
func TestFastPathTakesGenerated(t *testing.T) {
	doc := generated(t, 2000)
	n := int64(bytes.Count(doc, []byte("<url>")))
	if p := parseAlone(t, doc, false); p.fast != n || p.urls != n {
		t.Errorf("fast path took %d of %d entries (%d URLs)", p.fast, n, p.urls)
	}
	if p := parseAlone(t, doc, true); p.fast != 0 || p.urls != n {
		t.Errorf("general path: fast path took %d entries, %d URLs of %d", p.fast, p.urls, n)
	}
	crlf := bytes.ReplaceAll(benchShard(500), []byte("\n"), []byte("\r\n\t"))
	if p := parseAlone(t, crlf, false); p.fast != 500 {
		t.Errorf("fast path took %d of 500 entries of a CRLF file", p.fast)
	}
}

// TestFastPathAllocs: the fast path allocates nothing per URL: checking
// 40,000 URLs allocates no more than checking 10,000 (past the first 4,096,
// whose texts the duplicate check keeps).
func TestFastPathAllocs(t *testing.T) {
	small, large := benchShard(10000), benchShard(40000)
	allocs := func(doc []byte) float64 {
		return testing.AllocsPerRun(3, func() { parseAlone(t, doc, false) })
	}
	a, b := allocs(small), allocs(large)
	if per := (b - a) / 30000; per > 0.001 {
		t.Errorf("%.0f allocations for 10,000 URLs, %.0f for 40,000: %.4f per URL", a, b, per)
	}
}

// FuzzLastmodWritten: every lastmod in a form the encoder writes is valid
// for sitemap.xsd, so the fast path asks only encode.LastmodWritten.
func FuzzLastmodWritten(f *testing.F) {
	for _, s := range []string{"2024-01-02", "2024-02-29T23:59:59Z", "0001-01-01T00:00:00+14:00", "2023-02-29",
		"9999-12-31T24:00:00-14:00", "2024-01-02T03:04:05.999999999+05:30", "10000-01-01", "2024-01-02T03:04:05-00:00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if encode.LastmodWritten(s) && !xsdDateOrDateTime(s) {
			t.Fatalf("%q: a form the encoder writes, yet not an xsd:date or xsd:dateTime", s)
		}
	})
}
