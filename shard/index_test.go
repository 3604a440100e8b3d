package shard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// indexName names intermediate indexes by number and dates them by content,
// as a publisher would.
func indexName(num int, data []byte) Listed {
	return Listed{Name: fmt.Sprintf("s-index-%04d.xml", num), Lastmod: fmt.Sprintf("2024-01-%02dT00:00:00Z", 1+sha256.Sum256(data)[0]%28)}
}

func listed(n int) []Listed {
	ls := make([]Listed, n)
	for i := range ls {
		ls[i] = Listed{Name: fmt.Sprintf("s-%06d-0000000000.xml.gz", i+1)}
	}
	return ls
}

// TestIndexesNesting: the root lists shards directly up to fanout; beyond that,
// levels of at most fanout entries each, every shard listed once, in order.
func TestIndexesNesting(t *testing.T) {
	for _, tc := range []struct{ shards, fanout, indexes, direct int }{
		{1, 1, 1, 1},
		{1, 1000, 1, 1},
		{1000, 1000, 1, 1},
		{1001, 1000, 3, 2}, // 2 intermediate + root
		{25, 5, 6, 5},      // 5 + root
		{26, 5, 9, 6},      // 6, then 2, then root
		{50000, 50000, 1, 1},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.shards, tc.fanout), func(t *testing.T) {
			shards := listed(tc.shards)
			ixs, err := Indexes(shards, IndexOptions{Fanout: tc.fanout, Base: "https://ex.com/", Describe: indexName, Root: "s.xml"})
			if err != nil {
				t.Fatal(err)
			}
			direct := 0
			var order []string
			for _, ix := range ixs {
				if ix.Count > tc.fanout || ix.Count == 0 {
					t.Fatalf("%s lists %d, fanout %d", ix.Name, ix.Count, tc.fanout)
				}
				var doc struct {
					Locs []string `xml:"sitemap>loc"`
				}
				if err := xml.Unmarshal(ix.Data, &doc); err != nil {
					t.Fatal(err)
				}
				if ix.Direct {
					direct++
					order = append(order, doc.Locs...)
				}
			}
			if len(ixs) != tc.indexes || direct != tc.direct {
				t.Fatalf("%d indexes (%d direct), want %d (%d)", len(ixs), direct, tc.indexes, tc.direct)
			}
			if root := ixs[len(ixs)-1]; root.Name != "s.xml" {
				t.Fatalf("last index is %s, want the root", root.Name)
			}
			if len(order) != tc.shards {
				t.Fatalf("direct indexes list %d shards, want %d", len(order), tc.shards)
			}
			for i, loc := range order {
				if want := "https://ex.com/" + shards[i].Name; loc != want {
					t.Fatalf("entry %d is %s, want %s", i, loc, want)
				}
			}
		})
	}
	if _, err := Indexes(listed(2), IndexOptions{Fanout: 1, Base: "https://ex.com/", Describe: indexName, Root: "s.xml"}); !errors.Is(err, ErrFanout) {
		t.Fatalf("fanout 1 with 2 shards: %v", err)
	}
}

// TestIndexesLastmod: each entry carries the lastmod its file was given,
// none is invented; intermediate indexes carry what describe gave them.
func TestIndexesLastmod(t *testing.T) {
	ls := listed(4)
	ls[0].Lastmod = "2024-01-10"
	ls[1].Lastmod = "2024-01-30T10:00:00+02:00"
	ixs, err := Indexes(ls, IndexOptions{Fanout: 2, Base: "https://ex.com/a&b/", Describe: indexName, Root: "s.xml"})
	if err != nil {
		t.Fatal(err)
	}
	first, second, root := string(ixs[0].Data), string(ixs[1].Data), string(ixs[2].Data)
	if !strings.Contains(first, "<lastmod>2024-01-10</lastmod>") || !strings.Contains(first, "<lastmod>2024-01-30T10:00:00+02:00</lastmod>") {
		t.Errorf("first index:\n%s", first)
	}
	if strings.Contains(second, "<lastmod>") {
		t.Errorf("an invented lastmod:\n%s", second)
	}
	for _, ix := range ixs[:2] {
		if want := "<loc>https://ex.com/a&amp;b/" + ix.Name + "</loc><lastmod>" + indexName(0, ix.Data).Lastmod + "</lastmod>"; !strings.Contains(root, want) {
			t.Errorf("root lacks %s:\n%s", want, root)
		}
	}
	if !strings.Contains(first, "https://ex.com/a&amp;b/s-000001") {
		t.Errorf("index locs not escaped:\n%s", first)
	}
	again, _ := Indexes(ls, IndexOptions{Fanout: 2, Base: "https://ex.com/a&b/", Describe: indexName, Root: "s.xml"})
	for i := range ixs {
		if ixs[i].Name != again[i].Name || !bytes.Equal(ixs[i].Data, again[i].Data) {
			t.Fatalf("Indexes is not deterministic")
		}
	}
}

// TestCompressorRoundTrip: output is gzip of the input, and equal input gives equal output.
func TestCompressorRoundTrip(t *testing.T) {
	for _, procs := range []int{0, 1, 2} {
		t.Run(fmt.Sprint("procs", procs), func(t *testing.T) { testCompressor(t, procs) })
	}
}

func testCompressor(t *testing.T, procs int) {
	c, err := NewCompressor(6, procs)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("<url><loc>https://example.com/a</loc></url>\n"), 100000)
	gz1, err := c.Compress(data)
	if err != nil {
		t.Fatal(err)
	}
	gz1 = append([]byte(nil), gz1...)
	gz2, _ := c.Compress(data)
	if !bytes.Equal(gz1, gz2) {
		t.Fatal("same input, different gzip bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz1))
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := NewCompressor(11, procs); err == nil {
		t.Fatal("level 11 accepted")
	}
}

// BenchmarkCompress compares the two ways to use both cores on realistic
// sitemap XML: pgzip spreading one shard over all cores, and one
// single-stream gzip per core each taking whole shards.
func BenchmarkCompress(b *testing.B) {
	var data []byte
	data = append(data, Header...)
	for i := 0; len(data) < 10<<20-200; i++ {
		data = fmt.Appendf(data, "<url><loc>https://www.example.com/catalog/item-%d/%s</loc><lastmod>2024-%02d-%02dT10:00:00Z</lastmod><changefreq>weekly</changefreq><priority>0.%d</priority></url>\n",
			i*7919%100000, []string{"shoes", "red-shoes", "men/running", "kids?id=42&sort=asc"}[i%4], 1+i%12, 1+i%28, i%10)
	}
	data = append(data, Footer...)
	for _, level := range []int{1, 6} {
		b.Run(fmt.Sprintf("pgzip/level%d", level), func(b *testing.B) {
			c, err := NewCompressor(level, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				c.Compress(data)
			}
		})
		b.Run(fmt.Sprintf("stream-per-core/level%d", level), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.SetParallelism(1) // RunParallel starts GOMAXPROCS goroutines: one stream per core
			b.RunParallel(func(pb *testing.PB) {
				c, err := NewCompressor(level, 1)
				if err != nil {
					b.Error(err)
					return
				}
				for pb.Next() {
					c.Compress(data)
				}
			})
		})
	}
}

// TestIndexDepth: IndexDepth is the number of index levels Indexes builds
// above the sitemaps, followed from the root down to a direct index.
func TestIndexDepth(t *testing.T) {
	for fanout := 2; fanout <= 5; fanout++ {
		for n := 1; n <= 130; n++ {
			ixs, err := Indexes(listed(n), IndexOptions{Fanout: fanout, Base: "https://ex.com/", Describe: indexName, Root: "s.xml"})
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]Index{}
			for _, ix := range ixs {
				byName[ix.Name] = ix
			}
			depth, ix := 1, ixs[len(ixs)-1] // the root
			for !ix.Direct {
				first := string(ix.Data[strings.Index(string(ix.Data), "https://ex.com/")+len("https://ex.com/"):])
				ix = byName[first[:strings.Index(first, "<")]]
				depth++
			}
			if got := IndexDepth(n, fanout); got != depth {
				t.Fatalf("IndexDepth(%d, %d) = %d; Indexes built %d levels", n, fanout, got, depth)
			}
		}
	}
}
