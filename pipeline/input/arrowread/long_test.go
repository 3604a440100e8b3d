package arrowread

import (
	"errors"
	"fmt"
	"io"
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

// appendString appends s to the string, binary or dictionary builder b,
// "" as a null when null.
func appendString(t *testing.T, b array.Builder, s string, null bool) {
	if null && s == "" {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BinaryDictionaryBuilder:
		if err := b.AppendString(s); err != nil {
			t.Fatal(err)
		}
	case interface{ AppendString(string) }:
		b.AppendString(s)
	default:
		t.Fatalf("builder %T", b)
	}
}

// writeRows writes rows (loc, lastmod) as an Arrow file whose two columns
// are of type typ, in record batches of per rows (in several, a stream:
// each has a dictionary of its own), and returns its path.
func writeRows(t *testing.T, typ arrow.DataType, rows [][2]string, per int) string {
	stream := per < len(rows)
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: typ}, {Name: "lastmod", Type: typ, Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	for len(rows) > 0 {
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		for _, r := range rows[:min(per, len(rows))] {
			appendString(t, rb.Field(0), r[0], false)
			appendString(t, rb.Field(1), r[1], true)
		}
		recs = append(recs, rb.NewRecordBatch())
		rows = rows[min(per, len(rows)):]
	}
	return inputtest.WriteArrow(t, "long.arrow", recs, stream)
}

var stringTypes = map[string]arrow.DataType{
	"string":       arrow.BinaryTypes.String,
	"large_string": arrow.BinaryTypes.LargeString,
	"string_view":  arrow.BinaryTypes.StringView,
	"binary":       arrow.BinaryTypes.Binary,
	"dictionary":   &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
}

// TestArrowLongValues: a value over 64 KiB is not copied into its batch,
// whatever its column and type: its row is rejected, loc_too_long with
// the loc's first bytes and its length, or record_too_long, as a CSV
// record over its limit.
func TestArrowLongValues(t *testing.T) {
	for name, typ := range stringTypes {
		for _, per := range []int{1, 5} {
			in := writeRows(t, typ, inputtest.LongValues(), per)
			for _, chunk := range []int{512, 1 << 20} {
				r, err := Open(in, input.Options{})
				if err != nil {
					t.Fatal(err)
				}
				inputtest.ReadLongValues(t, fmt.Sprintf("%s, %d rows a record batch, chunk %d", name, per, chunk), r, chunk)
				r.Close()
			}
		}
	}
}

// TestArrowLongRepeated: a dictionary value is copied for every row that
// holds it, so a long one repeated by a few bytes of indexes must not be:
// over 64 KiB, each row keeps 4 KB of its loc; under, the batches stop at
// their budget whichever column holds it, and every row has its value.
func TestArrowLongRepeated(t *testing.T) {
	const n = 300
	const chunk = 512 << 10
	for name, tc := range map[string]struct {
		loc, lastmod string
		reason       encode.Reason
	}{
		"long loc":       {inputtest.FixtureBase + strings.Repeat("x", 100<<10), "2024-01-01", encode.TooLong},
		"long lastmod":   {"/a", "2024-01-01" + strings.Repeat(" ", 100<<10), encode.RecordTooLong},
		"60 KiB loc":     {"/" + strings.Repeat("x", 60<<10), "2024-01-01", 0},
		"60 KiB lastmod": {"/a", "2024-01-01" + strings.Repeat(" ", 60<<10), 0},
	} {
		rows := make([][2]string, n)
		for i := range rows {
			rows[i] = [2]string{tc.loc, tc.lastmod}
		}
		in := writeRows(t, stringTypes["dictionary"], rows, n)
		r, err := Open(in, input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputtest.ReadRepeated(t, name, r, n, chunk, tc.loc, tc.lastmod, tc.reason)
		r.Close()
	}
}

// TestArrowLongLists: a list's elements count toward the batch's budget
// too: a long dictionary value in every row's images stays within it;
// a row's list over 4 MiB is refused before its element is copied.
func TestArrowLongLists(t *testing.T) {
	for name, tc := range map[string]struct {
		image string
		err   bool
	}{
		"60 KiB image": {inputtest.FixtureBase + strings.Repeat("i", 60<<10), false},
		"5 MiB image":  {inputtest.FixtureBase + strings.Repeat("i", 5<<20), true},
	} {
		const n = 300
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, {Name: "images", Type: arrow.ListOf(dt)}}, nil)
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		images := rb.Field(1).(*array.ListBuilder)
		for range n {
			rb.Field(0).(*array.StringBuilder).Append("/a")
			images.Append(true)
			if err := images.ValueBuilder().(*array.BinaryDictionaryBuilder).AppendString(tc.image); err != nil {
				t.Fatal(err)
			}
		}
		in := inputtest.WriteArrow(t, "images.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, false)
		r, err := Open(in, input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		const chunk = 512 << 10
		var b input.Batch
		rows, maxBuf := 0, 0
		for {
			b.Reset()
			err = r.Fill(&b, chunk)
			if err != nil {
				break
			}
			rows += b.Len()
			maxBuf = max(maxBuf, len(b.Buf))
			for i := range b.Len() {
				if v := b.ExtField(0, i); len(v) < len(tc.image) {
					t.Fatalf("%s: row %d: a list of %d bytes", name, b.Line[i], len(v))
				}
			}
		}
		r.Close()
		if tc.err {
			if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), "longer than 4194304 bytes") || cap(b.Buf) > 1<<20 {
				t.Errorf("%s: %v, a batch of %d bytes; want a list over 4 MiB refused before it is copied", name, err, cap(b.Buf))
			}
			continue
		}
		if err != io.EOF || rows != n {
			t.Fatalf("%s: %d rows, %v", name, rows, err)
		}
		if limit := chunk + columnar.StepBytes + 2*len(tc.image); maxBuf > limit {
			t.Errorf("%s: a batch of %d bytes; want at most %d", name, maxBuf, limit)
		}
	}
}
