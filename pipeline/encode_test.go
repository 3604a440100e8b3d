package pipeline

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
)

// TestEncodeBatchAllocs: the worker's per-row path allocates nothing once a
// recycled batch's buffers have grown, accepted and rejected rows alike.
func TestEncodeBatchAllocs(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("loc,lastmod,changefreq,priority\n")
	for i := range 2000 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&in, "https://example.com/site/über/%d?a=1&b='x',2024-01-02T10:00+02:00,Daily,0.5\n", i)
		case 1:
			fmt.Fprintf(&in, "https://elsewhere.example/%d,,,\n", i)
		default:
			fmt.Fprintf(&in, "https://example.com/site/p/%d,2024-01-02,weekly,1\n", i)
		}
	}
	sc := csvscan.NewScanner(bytes.NewReader(in.Bytes()), "t.csv", input.Options{})
	b := new(Batch)
	if err := sc.Fill(&b.Batch, 1<<20); err != nil {
		t.Fatal(err)
	}
	allocs := encodeAllocs(t, b, testBase, 20)
	if len(b.Ends) != 1600 || len(b.Rejects) != 400 {
		t.Fatalf("%d accepted, %d rejected; want 1600, 400", len(b.Ends), len(b.Rejects))
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per batch of %d rows, want 0", allocs, b.Len())
	}
}
