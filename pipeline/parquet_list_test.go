package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)

func TestParquetListColumns(t *testing.T) {
	rows, want := inputtest.ListRows(300)
	for _, v := range []int{1, 2} {
		t.Run(fmt.Sprint("data page v", v), func(t *testing.T) {
			in := inputtest.WriteParquet(t, "lists.parquet", rows, parquet.DataPageVersion(v))
			pf := openPF(t, in)
			if len(pf.RowGroups()) < 5 {
				t.Fatalf("%d row groups; want several", len(pf.RowGroups()))
			}
			// The file exercises what the reader must handle: several
			// pages per column chunk, dictionary pages.
			pages, dict := 0, false
			for _, g := range pf.RowGroups() {
				for _, c := range g.ColumnChunks() {
					ps := c.Pages()
					for {
						p, err := ps.ReadPage()
						if err != nil {
							break
						}
						pages++
						dict = dict || p.Dictionary() != nil
						parquet.Release(p)
					}
					ps.Close()
				}
			}
			if pages < 3*len(pf.RowGroups())*len(pf.Root().Columns()) || !dict {
				t.Fatalf("%d pages in %d row groups, dictionary %v; want several pages per chunk and a dictionary", pages, len(pf.RowGroups()), dict)
			}
			rep, set, dir := runTo(t, Config{Inputs: []string{in}})
			xmltest.ValidateDir(t, dir)
			checkEntries(t, urlEntries(set), want)
			if !strings.Contains(string(set.Shards[0].Raw), `xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">`) {
				t.Errorf("namespaces: %.400s", set.Shards[0].Raw)
			}
			for reason, n := range map[string]int64{"image_invalid": 1, "alternate_duplicate": 1, "hreflang_invalid": 1, "video_field_invalid": 1, "video_invalid": 1} {
				if got := rep.Warnings.ByReason[reason]; got != n {
					t.Errorf("%s: %d; want %d (all: %v)", reason, got, n, rep.Warnings.ByReason)
				}
			}
		})
	}
}

func openPF(t *testing.T, name string) *parquet.File {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestParquetListLegacy: the 2-level layout (a repeated field, as
// parquet-go writes a slice without the list tag), required elements, and
// a struct without the list annotation.
func TestParquetListLegacy(t *testing.T) {
	type alt struct {
		Hreflang string `parquet:"hreflang"`
		Href     string `parquet:"href"`
	}
	type row struct {
		Loc        string   `parquet:"loc"`
		Images     []string `parquet:"images"`
		Alternates []alt    `parquet:"alternates"`
	}
	var rows []row
	var want []string
	for i := range 200 {
		loc := fmt.Sprintf("https://www.example.com/%d", i)
		r := row{Loc: loc}
		w := "<url><loc>" + loc + "</loc>"
		if i%2 == 0 {
			r.Alternates = []alt{{"x-default", loc}}
			w += `<xhtml:link rel="alternate" hreflang="x-default" href="` + loc + `"/>`
		}
		for k := range i % 3 {
			img := fmt.Sprintf("https://img.example.com/%d/%d.jpg", i, k)
			r.Images = append(r.Images, img)
			w += "<image:image><image:loc>" + img + "</image:loc></image:image>"
		}
		rows = append(rows, r)
		want = append(want, w+"</url>")
	}
	in := inputtest.WriteParquet(t, "legacy.parquet", rows)
	_, set, dir := runTo(t, Config{Inputs: []string{in}})
	xmltest.ValidateDir(t, dir)
	checkEntries(t, urlEntries(set), want)
}

// TestParquetListEncodeAllocs: encoding a batch with list columns does not
// allocate (pqread's TestParquetListAllocs: nor does reading them).
func TestParquetListEncodeAllocs(t *testing.T) {
	rows, _ := inputtest.ListRows(2000)
	in := inputtest.WriteParquet(t, "lists.parquet", rows, parquet.PageBufferSize(64<<20), parquet.MaxRowsPerRowGroup(1<<20))
	pr2, err := pqread.Open(in, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr2.Close()
	b := new(Batch)
	if err := pr2.Fill(&b.Batch, 1<<20); err != nil {
		t.Fatal(err)
	}
	a := encodeAllocs(t, b, "https://www.example.com/", 10)
	if len(b.Ends) != b.Len() || b.Len() < 1000 {
		t.Fatalf("%d of %d accepted", len(b.Ends), b.Len())
	}
	if a != 0 {
		t.Fatalf("%v allocations per batch of %d rows with list columns, want 0", a, b.Len())
	}
}

// TestParquetListEncodingsCodecs reads the list columns through the page
// decoder under other encodings and codecs than the writer's defaults:
// DELTA_BYTE_ARRAY / DELTA_LENGTH_BYTE_ARRAY strings, DELTA_BINARY_PACKED
// integers, RLE booleans, compressed pages, both data page versions. The
// sitemap must be the same.
func TestParquetListEncodingsCodecs(t *testing.T) {
	rows, want := inputtest.ListRows(120)
	for _, v := range []int{1, 2} {
		for _, c := range []struct {
			name string
			opts []parquet.WriterOption
		}{
			{"delta strings, snappy", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaByteArray), parquet.Compression(&parquet.Snappy)}},
			{"delta length strings, RLE booleans, zstd", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaLengthByteArray), parquet.DefaultEncodingFor(parquet.Boolean, &parquet.RLE), parquet.Compression(&parquet.Zstd)}},
			{"delta integers, gzip", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.Int32, &parquet.DeltaBinaryPacked), parquet.DefaultEncodingFor(parquet.Int64, &parquet.DeltaBinaryPacked), parquet.Compression(&parquet.Gzip)}},
		} {
			t.Run(fmt.Sprintf("v%d %s", v, c.name), func(t *testing.T) {
				in := inputtest.WriteParquet(t, "lists.parquet", rows, append(c.opts, parquet.DataPageVersion(v))...)
				_, set, dir := runTo(t, Config{Inputs: []string{in}})
				xmltest.ValidateDir(t, dir)
				checkEntries(t, urlEntries(set), want)
			})
		}
	}
}
