package bench

import (
	"fmt"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

// extRow is a realistic multilingual row: a loc, a lastmod, 10 alternates
// (one of them the loc itself, one x-default, with a query to escape) and 3
// images (one with a non-ASCII name to percent-encode).
func extRow() encode.Fields {
	const loc = "https://www.example.com/en/catalog/kitchen/product-16770"
	f := encode.Fields{Loc: []byte(loc), Lastmod: []byte("2025-02-13T07:25:32-05:00")}
	add := func(name, v string) {
		c, ok := encode.ParseExtColumn(name)
		if !ok {
			panic(name)
		}
		f.Ext = append(f.Ext, c)
		f.ExtVals = append(f.ExtVals, []byte(v))
	}
	add("alternate:en", loc)
	for _, l := range []string{"de", "de-ch", "fr", "fr-ch", "it", "es", "pt-br", "nl"} {
		add("alternate:"+l, fmt.Sprintf("https://www.example.com/%s/catalog/kitchen/product-16770?ref=sitemap&lang=%s", l, l))
	}
	add("alternate:x-default", "https://www.example.com/catalog/kitchen/product-16770")
	for i, name := range []string{"front.jpg", "side view.jpg", "détail.jpg"} {
		add(fmt.Sprint("image:", i+1), "https://img.example.com/products/16770/"+name)
	}
	return f
}

// BenchmarkEncodeExtensions encodes one row with 10 alternates and 3 images
// (the figure in bench/README.md): ns per row, bytes written, allocations.
func BenchmarkEncodeExtensions(b *testing.B) {
	f := extRow()
	sc, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		b.Fatal(err)
	}
	e := encode.NewEncoder(sc, nil)
	dst, res := e.AppendURL(make([]byte, 0, 16<<10), f)
	if res.Reason != encode.OK || res.Warnings != 0 {
		b.Fatalf("row: reason %v, warnings %b", res.Reason, res.Warnings)
	}
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = e.AppendURL(dst[:0], f)
	}
	b.ReportMetric(float64(len(dst)), "bytes/row")
}
