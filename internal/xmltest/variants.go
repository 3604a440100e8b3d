package xmltest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ExamplesDir is the folder of the copies of shared/schemas/examples that
// the tests of check and internal/xmlscan read.
func ExamplesDir() string {
	return filepath.Join(filepath.Dir(schemaDir()), "..", "check", "testdata", "examples")
}

// Example returns the bytes of the example file name, failing t when it
// cannot be read.
func Example(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ExamplesDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A mutation replaces one match of re in a document with one of the values
// ($1, $2... refer to the groups).
type mutation struct {
	re   *regexp.Regexp
	with []string
}

func m(re string, with ...string) mutation { return mutation{regexp.MustCompile(re), with} }

var mutations = []mutation{
	m(`<priority>[^<]*</priority>`, "<priority>0.5</priority>", "<priority>1</priority>", "<priority>.5</priority>",
		"<priority>1.5</priority>", "<priority>-0</priority>", "<priority>abc</priority>", "<priority> 0.3 </priority>",
		"<priority>1.0000</priority>", "<priority>+1</priority>", "<priority>1.</priority>", "<priority></priority>",
		"<priority>0,5</priority>", "<priority>-0.1</priority>"),
	m(`<changefreq>[^<]*</changefreq>`, "<changefreq>daily</changefreq>", "<changefreq>Daily</changefreq>",
		"<changefreq> daily</changefreq>", "<changefreq>sometimes</changefreq>", "<changefreq>never</changefreq>",
		"<changefreq></changefreq>"),
	m(`<lastmod>[^<]*</lastmod>`, "<lastmod>2024-01-01</lastmod>", "<lastmod>2024-01-01T10:00:00Z</lastmod>",
		"<lastmod>2024-01-01T10:00Z</lastmod>", "<lastmod>2024-01-01T10:00:00</lastmod>", "<lastmod>2024-13-01</lastmod>",
		"<lastmod>2024-02-29</lastmod>", "<lastmod>2023-02-29</lastmod>", "<lastmod>01/05/2005</lastmod>",
		"<lastmod>2024-01-01+02:00</lastmod>", "<lastmod> 2024-01-01 </lastmod>", "<lastmod>2024</lastmod>",
		"<lastmod>2024-01-01T10:00:00.123456+05:30</lastmod>", "<lastmod>2024-01-01T10:00:00+15:00</lastmod>",
		"<lastmod>2024-01-01t10:00:00z</lastmod>", "<lastmod>2024-1-01</lastmod>", "<lastmod>2024-01-01T25:00:00Z</lastmod>"),
	m(`<loc>[^<]*</loc>`, "<loc>http://a.b/</loc>", "<loc>https://www.example.com/"+strings.Repeat("a", 2030)+"</loc>",
		"<loc>https://www.example.com/"+strings.Repeat("b", 2010)+"</loc>", "<loc>https://www.example.com/a b</loc>",
		"<loc>https://www.example.com/?a=1&amp;b=2</loc>", "<loc>https://www.example.com/?a=1&b=2</loc>", "<loc></loc>",
		"<loc>https://www.example.com/<x/></loc>", "<loc>https://www.example.com/&lt;</loc>"),
	// structure
	m(`(<lastmod>[^<]*</lastmod>)(\s*)(<changefreq>[^<]*</changefreq>)`, "$3$2$1"),
	m(`(<loc>[^<]*</loc>)(\s*)(<lastmod>[^<]*</lastmod>)`, "$3$2$1"),
	m(`<loc>[^<]*</loc>`, ""),
	m(`(<lastmod>[^<]*</lastmod>)`, "$1$1"),
	m(`(<loc>[^<]*</loc>)`, "$1$1"),
	m(`<url>`, `<url id="x">`, `<url>text`, `<url><foo/>`, `<url><url>`, `</url><url>`),
	m(`</url>`, `<extra xmlns="urn:x"/></url>`, `<priority>0.5</priority></url>`, `</url>junk`),
	m(`<sitemap>`, `<sitemap><loc>https://www.example.com/sitemaps/x.xml</loc>`, `<sitemap xmlns:a="urn:a" a:b="c">`),
	m(`(<sitemap>\s*<loc>[^<]*</loc>)`, "$1<priority>0.5</priority>", "$1<lastmod>2024-01-01</lastmod><lastmod>2024-01-01</lastmod>"),
	m(` xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`, ``, ` xmlns="http://www.sitemaps.org/schemas/sitemap/0.8"`),
	m(`<\?xml[^>]*\?>`, ``, `<?xml version="1.0" encoding="ISO-8859-1"?>`, `<?xml version="1.0"?><!-- c -->`),
	m(`</urlset>`, `</urlset><urlset/>`, `</urlset>x`, ``, `</url>`),
	// extensions
	m(`<image:loc>[^<]*</image:loc>`, ``, `<image:loc>x</image:loc><image:loc>y</image:loc>`),
	m(`<video:title>[^<]*</video:title>`, `<video:title>`+strings.Repeat("t", 101)+`</video:title>`, `<video:title>`+strings.Repeat("ü", 100)+`</video:title>`, ``),
	m(`<video:duration>[^<]*</video:duration>`, `<video:duration>28801</video:duration>`, `<video:duration>0</video:duration>`, `<video:duration>-1</video:duration>`, `<video:duration> 30 </video:duration>`),
	m(`<video:rating>[^<]*</video:rating>`, `<video:rating>5.1</video:rating>`, `<video:rating>5</video:rating>`, `<video:rating>-0.0</video:rating>`),
	m(`<video:family_friendly>[^<]*</video:family_friendly>`, `<video:family_friendly>maybe</video:family_friendly>`, `<video:family_friendly>NO</video:family_friendly>`),
	m(`<video:restriction relationship="allow">[^<]*</video:restriction>`, `<video:restriction>IE</video:restriction>`,
		`<video:restriction relationship="maybe">IE</video:restriction>`, `<video:restriction relationship="deny">ie</video:restriction>`,
		`<video:restriction relationship="deny"></video:restriction>`),
	m(`<video:platform relationship="allow">[^<]*</video:platform>`, `<video:platform relationship="allow">web  tv</video:platform>`, `<video:platform relationship="deny">mobile</video:platform>`),
	m(`<video:price currency="EUR">`, `<video:price currency="eur">`, `<video:price type="rent">`, `<video:price currency="EUR" resolution="4k">`),
	m(`<news:language>[^<]*</news:language>`, `<news:language>EN</news:language>`, `<news:language>zh-cn</news:language>`, `<news:language>deu</news:language>`, `<news:language>e</news:language>`),
	m(`(<news:publication_date>[^<]*</news:publication_date>)`, `$1<news:keywords>a, b</news:keywords>`, `<news:genres>Blog, OpEd</news:genres>$1`, `<news:genres>Blog,Rumour</news:genres>$1`),
	m(`<news:title>[^<]*</news:title>`, ``, `<news:title>t</news:title><news:stock_tickers>NASDAQ:AMAT, BOM:500325</news:stock_tickers>`, `<news:title>t</news:title><news:stock_tickers>AMAT</news:stock_tickers>`),
	m(`<mobile:mobile/>`, `<mobile:mobile>x</mobile:mobile>`, `<mobile:mobile><mobile:mobile/></mobile:mobile>`, `<mobile:mobile type="x"/>`),
	m(`hreflang="de"`, `hreflang="de-CH-1901"`, `hreflang="x-default"`, `hreflang="de_CH"`, `hreflang=""`, `foo="bar"`, `media="only screen"`),
	m(`<xhtml:link `, `<xhtml:link dir="up" `, `<xhtml:link xml:lang="en" `, `<xhtml:link class="a b" `),
}

// Variants returns n documents made from base by one or two mutations of
// the kinds the schemas and the tokenizer get wrong most easily (values,
// order, repetition, escaping, namespaces, extensions); the same seed gives
// the same documents.
func Variants(base []byte, seed uint64, n int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out [][]byte
	for len(out) < n {
		doc := base
		for range 1 + rng.IntN(2) {
			mu := mutations[rng.IntN(len(mutations))]
			locs := mu.re.FindAllSubmatchIndex(doc, -1)
			if len(locs) == 0 {
				continue
			}
			loc := locs[rng.IntN(len(locs))]
			repl := mu.re.Expand(nil, []byte(mu.with[rng.IntN(len(mu.with))]), doc, loc)
			doc = append(append(append([]byte(nil), doc[:loc[0]]...), repl...), doc[loc[1]:]...)
		}
		if !bytes.Equal(doc, base) {
			out = append(out, doc)
		}
	}
	return out
}

// Chunks returns a reader of data that returns at most n bytes per Read,
// so that a reader's buffer boundaries fall anywhere in a document.
func Chunks(data []byte, n int) io.Reader { return &chunkReader{data: data, n: n} }

type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}
