package arrowread

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// TestArrowListAllocs: packing a record batch's list columns into a batch
// does not allocate per row.
func TestArrowListAllocs(t *testing.T) {
	rows, _ := inputtest.ListRows(1000)
	rec := inputtest.ArrowListRecords(rows, len(rows))[0]
	ar := &Reader{}
	for i, f := range inputtest.ArrowListSchema.Fields()[1:] {
		x, _ := encode.ParseExtColumn(f.Name)
		if err := ar.addList(x, i+1, f); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 0, 4<<20)
	spans := make([]columnar.Span, 0, len(rows))
	for x, fi := range ar.extCols {
		l := ar.list(x)
		var err error
		if a := testing.AllocsPerRun(20, func() {
			if buf, spans, err = l.take(buf[:0], spans[:0], rec.Column(fi), 0, len(rows)); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per batch of %d rows; want 0", fmt.Sprint(ar.fill.Ext[x]), a, len(rows))
		}
		if len(spans) != len(rows) {
			t.Fatalf("%d spans", len(spans))
		}
	}
}

func TestArrowListTypeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		field arrow.Field
		want  string
	}{
		"flat images":           {arrow.Field{Name: "images", Type: arrow.BinaryTypes.String}, "not a list"},
		"int images":            {arrow.Field{Name: "images", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}, "list<item: int64"},
		"no known field":        {arrow.Field{Name: "videos", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String}))}, "no field sitemapgen knows (name)"},
		"bad field":             {arrow.Field{Name: "videos", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "duration", Type: arrow.PrimitiveTypes.Float64}))}, `field "duration"`},
		"alternates of strings": {arrow.Field{Name: "alternates", Type: arrow.ListOf(arrow.BinaryTypes.String)}, "hreflang, href, media"},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, tc.field}, nil)
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		rec := rb.NewRecordBatch()
		in := inputtest.WriteArrow(t, "x.arrow", []arrow.RecordBatch{rec}, false)
		_, err := Open(in, input.Options{})
		if !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want input.ErrColumnType mentioning %q", name, err, tc.want)
		}
	}
}
