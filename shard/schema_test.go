package shard

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// extElems holds one valid element of each extension namespace, by the bit
// of its encode.Namespaces flag, as the encoder writes them in a <url>.
var extElems = map[encode.Namespaces]string{
	encode.NSXhtml:  `<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>`,
	encode.NSMobile: `<mobile:mobile/>`,
	encode.NSImage:  `<image:image><image:loc>https://example.com/a.jpg</image:loc></image:image>`,
	encode.NSVideo: `<video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>` +
		`<video:title>T</video:title><video:description>D</video:description>` +
		`<video:content_loc>https://example.com/v.mp4</video:content_loc></video:video>`,
	encode.NSNews: `<news:news><news:publication><news:name>N</news:name><news:language>en</news:language>` +
		`</news:publication><news:publication_date>2024-01-02</news:publication_date><news:title>T</news:title></news:news>`,
}

// allNamespaces is every extension namespace set.
const allNamespaces = encode.NSXhtml | encode.NSMobile | encode.NSImage | encode.NSVideo | encode.NSNews

// extEntry is a <url> using every extension of ns, in the encoder's order.
func extEntry(n int, ns encode.Namespaces) []byte {
	b := fmt.Appendf(nil, "<url><loc>https://example.com/p%d</loc>", n)
	for _, k := range []encode.Namespaces{encode.NSXhtml, encode.NSImage, encode.NSVideo, encode.NSNews, encode.NSMobile} {
		if ns&k != 0 {
			b = append(b, extElems[k]...)
		}
	}
	return append(b, "</url>\n"...)
}

// TestSchemaHeaderValid: for every combination of extension namespaces, a
// shard cut with the schema-location header is valid against the official
// schemas (xmllint), and so is an index starting with IndexHeaderSchema.
// (Headers without locations are URLSetHeader, validated by the tests of
// generate.)
func TestSchemaHeaderValid(t *testing.T) {
	for ns := range allNamespaces + 1 {
		for _, loc := range []bool{false, true} {
			if !loc && ns != 0 && ns != allNamespaces {
				continue // xmllint takes 0.2 s a file: the plain header's combinations are tested elsewhere
			}
			h := URLSetHeaderSchema(ns, loc)
			if !loc && h != URLSetHeader(ns) {
				t.Fatalf("ns %05b: without schema location the header must be URLSetHeader", ns)
			}
			if loc != strings.Contains(h, `xsi:schemaLocation="`+SitemapSchemaLocation) {
				t.Fatalf("ns %05b, location %v: header %s", ns, loc, h)
			}
			c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 1 << 20, Header: h})
			for i := range 3 {
				c.Add(extEntry(i, ns))
			}
			s := c.Flush()
			xmltest.Validate(t, fmt.Sprintf("urlset ns=%05b location=%v", ns, loc), s.Data)
		}
	}
	ix, err := Indexes([]Listed{{Name: "a.xml"}}, IndexOptions{Fanout: 10, Base: "https://example.com/", Describe: nil, Root: "root.xml"})
	if err != nil {
		t.Fatal(err)
	}
	data, ok := bytes.CutPrefix(ix[0].Data, []byte(IndexHeader))
	if !ok || IndexHeaderOf(false) != IndexHeader || IndexHeaderOf(true) != IndexHeaderSchema {
		t.Fatal("an index starts with IndexHeader; IndexHeaderOf picks the header")
	}
	xmltest.Validate(t, "sitemapindex with schema location", append([]byte(IndexHeaderSchema), data...))
}

// TestSchemaLocationsOfficial: every namespace/location pair of the
// headers names a schema whose targetNamespace is that namespace, found by
// the location through the official-URL catalog of shared/schemas, so a
// validator that follows xsi:schemaLocation loads the right schema.
func TestSchemaLocationsOfficial(t *testing.T) {
	dir := xmltest.SharedSchemaDir(t)
	var cat struct {
		URIs []struct {
			Name string `xml:"name,attr"`
			URI  string `xml:"uri,attr"`
		} `xml:"uri"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "catalog.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, u := range cat.URIs {
		files[u.Name] = u.URI
	}
	for _, h := range []string{URLSetHeaderSchema(allNamespaces, true), IndexHeaderSchema} {
		_, attr, _ := strings.Cut(h, `xsi:schemaLocation="`)
		attr, _, _ = strings.Cut(attr, `"`)
		pairs := strings.Fields(attr)
		if len(pairs)%2 != 0 {
			t.Fatalf("odd schemaLocation list %q", attr)
		}
		want := 2
		if h != IndexHeaderSchema {
			want = 12 // sitemap and the five extensions
		}
		if len(pairs) != want {
			t.Errorf("%d schemaLocation tokens, want %d: %q", len(pairs), want, attr)
		}
		for i := 0; i < len(pairs); i += 2 {
			ns, loc := pairs[i], pairs[i+1]
			if !strings.Contains(h, `="`+ns+`"`) {
				t.Errorf("%s is given a schema location but not declared", ns)
			}
			f, ok := files[loc]
			if !ok {
				t.Errorf("%s: location %s is not an official schema URL of the catalog", ns, loc)
				continue
			}
			xsd, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(xsd, []byte(`targetNamespace="`+ns+`"`)) {
				t.Errorf("%s: %s (%s) does not define that namespace", ns, loc, f)
			}
		}
	}
}

// TestSchemaHeaderLimitProperty: with the longer header, over random
// entries, namespaces and limits, every shard starts with the header, stays
// within both limits, is closed only when the next entry would not fit
// (the header's bytes counted exactly), and the shards hold every entry
// once, in order. A limit set to the byte for k entries takes k entries,
// one byte less takes k-1.
func TestSchemaHeaderLimitProperty(t *testing.T) {
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		ns := encode.Namespaces(rng.IntN(int(allNamespaces) + 1))
		h := URLSetHeaderSchema(ns, true)
		maxURLs := 1 + rng.IntN(60)
		maxEntry := 1 + rng.IntN(200)
		maxBytes := len(h) + len(Footer) + maxEntry + rng.IntN(2000)
		c := mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes, Header: h})
		if c.MaxEntry() != maxBytes-len(h)-len(Footer) {
			t.Fatalf("seed %d: MaxEntry %d ignores the header", seed, c.MaxEntry())
		}
		var in, out []byte
		var shards [][]byte
		keep := func(s *Sitemap) {
			if s != nil {
				shards = append(shards, append([]byte(nil), s.Data...))
				c.Recycle(s)
			}
		}
		for i := range 400 {
			e := entry(1+rng.IntN(maxEntry), 'a'+byte(i%26))
			in = append(in, e...)
			keep(c.Add(e))
		}
		keep(c.Flush())
		for i, s := range shards {
			body, ok := bytes.CutPrefix(s, []byte(h))
			body, ok2 := bytes.CutSuffix(body, []byte(Footer))
			if !ok || !ok2 || len(s) > maxBytes || bytes.Count(body, []byte("\n")) > maxURLs {
				t.Fatalf("seed %d: shard %d: %d bytes (limit %d), header and footer present %v %v", seed, i, len(s), maxBytes, ok, ok2)
			}
			if i+1 < len(shards) {
				next := shards[i+1][len(h):]
				next = next[:bytes.IndexByte(next, '\n')+1]
				if bytes.Count(body, []byte("\n")) < maxURLs && len(s)+len(next) <= maxBytes {
					t.Fatalf("seed %d: shard %d closed at %d bytes with room for the next %d-byte entry (limit %d)", seed, i, len(s), len(next), maxBytes)
				}
			}
			out = append(out, body...)
		}
		if !bytes.Equal(in, out) {
			t.Fatalf("seed %d: entries lost, duplicated or reordered", seed)
		}
	}
	// Exact fit with the longest header: k entries to the byte, then one less.
	h := URLSetHeaderSchema(allNamespaces, true)
	const e = 100
	for _, slack := range []int{0, -1} {
		max := len(h) + len(Footer) + 3*e + slack
		c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: max, Header: h})
		var first *Sitemap
		for i := range 4 {
			if s := c.Add(entry(e, 'a'+byte(i))); s != nil && first == nil {
				first = s
			}
		}
		want := 3 + slack
		if first == nil || first.URLs != want || len(first.Data) > max || slack == 0 && len(first.Data) != max {
			t.Fatalf("slack %d: first shard %+v; want %d entries within %d bytes", slack, first, want, max)
		}
	}
}
