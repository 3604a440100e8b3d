package arrowread

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// TestArrowDuplicateColumn: a schema naming a mapped column twice is
// refused, naming the file and both columns, in the file and the stream
// format; an unmapped column may repeat.
func TestArrowDuplicateColumn(t *testing.T) {
	str := arrow.BinaryTypes.String
	for _, stream := range []bool{false, true} {
		for names, want := range map[[3]string]string{
			{"loc", "x", "loc"}:           `duplicate column: columns 1 ("loc") and 3 ("loc") both match the loc column name "loc"`,
			{"loc", "lastmod", "lastmod"}: `duplicate column: columns 2 ("lastmod") and 3 ("lastmod") both match the lastmod column name "lastmod"`,
			{"loc", "x", "x"}:             "",
		} {
			schema := arrow.NewSchema([]arrow.Field{{Name: names[0], Type: str}, {Name: names[1], Type: str}, {Name: names[2], Type: str}}, nil)
			rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
			for i := range 3 {
				rb.Field(i).(*array.StringBuilder).Append("https://www.example.com/")
			}
			in := inputtest.WriteArrow(t, "x.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, stream)
			r, err := Open(in, input.Options{})
			if want == "" {
				if err != nil {
					t.Fatalf("%q: %v", names, err)
				}
				if n, err := inputtest.ReadAll(r); err != nil || n != 1 {
					t.Fatalf("%q: %d rows, %v", names, n, err)
				}
				r.Close()
				continue
			}
			if !errors.Is(err, input.ErrDuplicateColumn) || !strings.HasPrefix(err.Error(), in+": "+want) {
				t.Errorf("stream %v %q: %v\nwant %s: %s…", stream, names, err, in, want)
			}
		}
	}
}
