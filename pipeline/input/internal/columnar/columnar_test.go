package columnar

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// TestMap: the core columns in field order, then the extension columns in
// the input's order, each to its opener; the first error stops the walk.
func TestMap(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		names   []string
		columns [input.NumColumns]string // Options.Columns
		failOn  string                   // the opener of this call fails
		want    string                   // the calls, then the error
	}{
		{names: []string{"x", "LOC", "alternate:de", "images", "lastmod", "news:title"},
			want: "core loc 1; core lastmod 4; ext 2; list 3; ext 5; <nil>"},
		{names: []string{"loc", "alternate:de"}, failOn: "core loc 0", want: "core loc 0; boom"},
		{names: []string{"loc", "images", "alternate:de"}, failOn: "list 1", want: "core loc 0; list 1; boom"},
		{names: []string{"url", "lastmod"}, want: "no loc column"},
		{names: []string{"loc", "Loc", "loc"}, want: "loc"}, // a duplicate: nothing opened
		// A type error of an earlier field comes before a missing later one.
		{names: []string{"loc"}, columns: [input.NumColumns]string{input.Lastmod: "modified"}, failOn: "core loc 0", want: "core loc 0; boom"},
		{names: []string{"loc"}, columns: [input.NumColumns]string{input.Lastmod: "modified"}, want: "core loc 0; no such column: no lastmod column"},
	} {
		var calls []string
		call := func(s string) error {
			calls = append(calls, s)
			if s == tt.failOn {
				return boom
			}
			return nil
		}
		err := Map(tt.names, input.Options{Columns: tt.columns}, Opener{
			Core: func(c input.Column, i int) error { return call(fmt.Sprintf("core %s %d", input.DefaultNames[c], i)) },
			Ext:  func(x encode.ExtColumn, i int) error { return call(fmt.Sprintf("ext %d", i)) },
			List: func(x encode.ExtColumn, i int) error { return call(fmt.Sprintf("list %d", i)) },
		})
		got := strings.Join(append(calls, fmt.Sprint(err)), "; ")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%q: %s\nwant %s", tt.names, got, tt.want)
		}
		if strings.Count(tt.want, ";") == 0 && len(calls) > 0 {
			t.Errorf("%q: %v opened before the mapping error %v", tt.names, calls, err)
		}
	}
	err := Map([]string{"loc", "loc"}, input.Options{}, Opener{})
	if !errors.Is(err, input.ErrDuplicateColumn) {
		t.Errorf("duplicate: %v", err)
	}
}

// rowsTaker is a format of rows of one string value, taken in groups of
// group rows a call; it panics at row panicAt (> 0).
type rowsTaker struct {
	f       *Filler
	rows    []string
	next    int
	group   int
	panicAt int
}

func (r *rowsTaker) take(buf []byte, max, budget int) ([]byte, int, error) {
	if r.next == len(r.rows) {
		return buf, 0, io.EOF
	}
	n := 0
	for n < min(max, r.group) && r.next < len(r.rows) && (budget < 0 || len(buf)+len(r.rows[r.next]) <= budget) {
		if r.next+1 == r.panicAt {
			panic("damaged")
		}
		start := len(buf)
		buf = append(buf, r.rows[r.next]...)
		r.f.Spans[input.Loc] = append(r.f.Spans[input.Loc], Span{uint32(start), uint32(len(buf))})
		r.next++
		n++
	}
	return buf, n, nil
}

func newRows(n, group, panicAt int) (*Filler, *rowsTaker) {
	f := &Filler{Name: "in.parquet", Where: func() string { return "row group 7" }}
	f.Core[input.Loc] = true
	r := &rowsTaker{f: f, group: group, panicAt: panicAt}
	for i := range n {
		r.rows = append(r.rows, fmt.Sprintf("https://example.com/%d", i))
	}
	f.Take = r.take
	return f, r
}

// TestFiller: batches stop at their budget, rows keep their numbers across
// batches, io.EOF at the end; a panic is ErrCorrupt naming where, and sticks.
func TestFiller(t *testing.T) {
	f, r := newRows(1000, 7, 0)
	var got []string
	var lines []int64
	for {
		var b input.Batch
		err := f.Fill(&b, 100)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Buf) > 100 || b.Source != "in.parquet" {
			t.Fatalf("a batch of %d bytes from %q for a chunk of 100", len(b.Buf), b.Source)
		}
		for i := range b.Len() {
			got = append(got, string(b.Field(input.Loc, i)))
		}
		lines = append(lines, b.Line...)
	}
	if !slices.Equal(got, r.rows) || f.Rows() != 1000 || lines[0] != 1 || lines[999] != 1000 {
		t.Errorf("%d rows (Rows %d), lines %d..%d; want the 1000 rows, numbered 1..1000", len(got), f.Rows(), lines[0], lines[len(lines)-1])
	}

	f, _ = newRows(10, 3, 5)
	var b input.Batch
	err := f.Fill(&b, 0)
	if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), "in.parquet: row group 7: ") || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("panic: %v", err)
	}
	if err2 := f.Fill(&b, 0); err2 != err || b.Len() != 0 {
		t.Errorf("after an error: %v, %d rows; want the same error, no row", err2, b.Len())
	}
}

// TestTextBounds: the text of a typed value, whatever the value, is within
// its type's bound, which a step of a reader counts on.
func TestTextBounds(t *testing.T) {
	check := func(what string, bound int, text []byte) {
		t.Helper()
		if len(text) > bound {
			t.Errorf("%s: %d bytes (%q), bound %d", what, len(text), text, bound)
		}
	}
	for _, days := range []int64{math.MinInt32, math.MaxInt32, DaysFromMillis(math.MinInt64), DaysFromMillis(math.MaxInt64)} {
		check("date", DateText, AppendDate(nil, days))
	}
	for _, v := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, -1} {
		for _, perSec := range []int64{Seconds, Millis, Micros, Nanos} {
			check("timestamp", TimestampText, AppendTimestamp(nil, v, perSec, true))
			check("timestamp", TimestampText, AppendTimestamp(nil, v, perSec, false))
		}
	}
	for _, f := range []float32{-math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32, -math.MaxFloat32, 1.0000001e-38} {
		check("float", FloatText, AppendFloat(nil, float64(f), 32))
	}
	for _, f := range []float64{-math.SmallestNonzeroFloat64, -math.MaxFloat64, -2.2250738585072014e-308, -1.2345678901234567e-300} {
		check("double", DoubleText, AppendFloat(nil, f, 64))
	}
	for _, v := range []int64{math.MinInt64, math.MaxInt64, 1, 0} {
		for _, scale := range []int{-MaxScale, MaxScale, 0, 19, 20} {
			check("decimal", DecimalText, AppendDecimal(nil, v, scale))
		}
		check("int", IntText, strconv.AppendInt(nil, v, 10))
	}
	check("int", IntText, []byte(InvalidNumber))
	check("bool", BoolText, strconv.AppendBool(nil, false))
}

// TestSetViewsSizesColumn: a column's first views go into a slice with the
// room of the batch's loc column, not one doubled view by view.
func TestSetViewsSizesColumn(t *testing.T) {
	b := new(input.Batch)
	b.Grow(input.DefaultChunk)
	b.Buf = append(b.Buf, "abc"...)
	spans := []Span{{0, 1}, NullSpan, {1, 3}}
	SetViews(b, input.Loc, spans)
	SetViews(b, input.Lastmod, spans)
	if got, want := cap(b.Fields[input.Lastmod]), cap(b.Fields[input.Loc]); got != want || want < len(spans) {
		t.Errorf("lastmod column cap %d, want the loc column's %d", got, want)
	}
	if got := b.Fields[input.Lastmod]; string(got[0]) != "a" || got[1] != nil || string(got[2]) != "bc" {
		t.Errorf("views %q", got)
	}
}
