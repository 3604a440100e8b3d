package csvscan

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// TestCSVScannerManyFields: the count of fields of a first record (a header,
// or the first row of a headerless list) or of a data row costs no memory
// beyond the record's bytes: a header over MaxHeaderFields columns is an
// error naming the file and the count, and a row of millions of fields is
// split into the fields the mapping reads only.
func TestCSVScannerManyFields(t *testing.T) {
	const n = 2 << 20 // fields: 2 MiB of commas
	commas := strings.Repeat(",", n-1)
	cases := []struct {
		name, in string
		rows     []string
		err      string
	}{
		{name: "header", in: "loc" + commas + "\nhttps://a/\n",
			err: "in.csv:1: too many columns: the header has 2097152 columns, more than the 10000 sitemapgen reads (is the first line a header?)"},
		{name: "quoted header", in: `"loc",""""` + commas[1:] + "\nhttps://a/\n",
			err: "in.csv:1: too many columns: the header has 2097152 columns, more than the 10000 sitemapgen reads (is the first line a header?)"},
		{name: "header in quotes with commas", in: `loc,"a,b",` + strings.Repeat(`"x",`, MaxHeaderFields) + "\nhttps://a/\n",
			err: "in.csv:1: too many columns: the header has 10003 columns, more than the 10000 sitemapgen reads (is the first line a header?)"},
		{name: "headerless", in: "https://a/,2024-01-01,daily,0.5" + commas[4:] + "\nhttps://b/\n",
			rows: []string{`1 "https://a/" "2024-01-01" "daily" "0.5"`, `2 "https://b/" nil nil nil`}},
		{name: "quoted headerless", in: `"https://a/",2024-01-01,"daily",0.5` + commas[4:] + "\nhttps://b/\n",
			rows: []string{`1 "https://a/" "2024-01-01" "daily" "0.5"`, `2 "https://b/" nil nil nil`}},
		{name: "data row", in: "loc,lastmod\n" + `"https://a/",x` + commas[1:] + "\n/b\n",
			rows: []string{`2 "https://a/" "x" nil nil`, `3 "/b" nil nil nil`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rows, err := scanAll(t, strings.NewReader(c.in), input.Options{}, 0)
			runtime.ReadMemStats(&after)
			if c.err != "" {
				if !errors.Is(err, ErrTooManyFields) || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
			} else if err != nil || strings.Join(rows, "\n") != strings.Join(c.rows, "\n") {
				t.Fatalf("%v, rows %q", err, rows)
			}
			// The record's bytes, in windows doubled up to its size, and
			// a few spans: before, 16 bytes of spans per field, and their
			// copies as the slice grew, a name and a mapping per column.
			total := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes allocated for %d bytes of input", total, len(c.in))
			if total > uint64(6*len(c.in)+2<<20) {
				t.Errorf("%d bytes allocated for %d bytes of input", total, len(c.in))
			}
		})
	}
}

// TestCSVScannerHeaderFieldLimit: a header of MaxHeaderFields columns is
// read; one more is an error.
func TestCSVScannerHeaderFieldLimit(t *testing.T) {
	names := make([]string, MaxHeaderFields)
	for i := range names {
		names[i] = "c"
	}
	names[MaxHeaderFields-1] = "loc"
	in := strings.Join(names, ",") + "\n" + strings.Repeat(",", MaxHeaderFields-1) + "https://a/\n"
	rows, err := scanAll(t, strings.NewReader(in), input.Options{}, 0)
	if err != nil || len(rows) != 1 || rows[0] != `2 "https://a/" nil nil nil` {
		t.Fatalf("%v, rows %q", err, rows)
	}
	_, err = scanAll(t, strings.NewReader("c,"+in), input.Options{}, 0)
	if !errors.Is(err, ErrTooManyFields) || !strings.Contains(err.Error(), "10001 columns") {
		t.Fatalf("one more column: %v", err)
	}
}

// TestCSVScannerSizesColumns: an empty batch's mapped columns get the room
// of its loc column before its first row, not a slice doubled as rows come
// (each smaller array left behind as garbage); unmapped columns stay empty.
func TestCSVScannerSizesColumns(t *testing.T) {
	var in strings.Builder
	in.WriteString("loc,lastmod,section,other\n")
	for i := range 3000 {
		fmt.Fprintf(&in, "https://www.example.com/p/%d,2024-01-02,s%d,x\n", i, i%7)
	}
	opt := input.Options{}
	opt.Columns[input.Group] = "section"
	sc := NewScanner(strings.NewReader(in.String()), "in.csv", opt)
	b := new(input.Batch)
	b.Grow(input.DefaultChunk)
	if err := sc.Fill(b, input.DefaultChunk); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 3000 {
		t.Fatalf("%d rows, want 3000", b.Len())
	}
	want := cap(b.Fields[input.Loc])
	for _, c := range []input.Column{input.Lastmod, input.Group} {
		if len(b.Fields[c]) != 3000 || cap(b.Fields[c]) != want {
			t.Errorf("column %d: len %d cap %d, want 3000 and the loc column's %d", c, len(b.Fields[c]), cap(b.Fields[c]), want)
		}
	}
	for _, c := range []input.Column{input.Changefreq, input.Priority} {
		if cap(b.Fields[c]) != 0 {
			t.Errorf("unmapped column %d: cap %d, want 0", c, cap(b.Fields[c]))
		}
	}
}
