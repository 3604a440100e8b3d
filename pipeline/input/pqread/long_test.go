package pqread

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// longFile writes inputtest.LongValues as rows of T (made by row) and
// returns its path.
func longFile[T any](t *testing.T, row func(loc, lastmod string) T, opts ...parquet.WriterOption) string {
	var rows []T
	for _, r := range inputtest.LongValues() {
		rows = append(rows, row(r[0], r[1]))
	}
	return inputtest.WriteParquet(t, "long.parquet", rows, opts...)
}

// TestParquetLongValues: a value over 64 KiB is not copied into its batch,
// whatever its column and encoding: its row is rejected, loc_too_long with
// the loc's first bytes and its length, or record_too_long, as a CSV
// record over its limit.
func TestParquetLongValues(t *testing.T) {
	type plain struct {
		Loc     string  `parquet:"loc,plain"`
		Lastmod *string `parquet:"lastmod,optional,plain"`
	}
	type deltaLength struct { // parquet-go's default for strings
		Loc     string  `parquet:"loc"`
		Lastmod *string `parquet:"lastmod,optional"`
	}
	type dict struct {
		Loc     string  `parquet:"loc,dict"`
		Lastmod *string `parquet:"lastmod,optional,dict"`
	}
	type deltaBytes struct {
		Loc     string  `parquet:"loc,delta"`
		Lastmod *string `parquet:"lastmod,optional"`
	}
	type optionalLoc struct { // and a required lastmod: the other way round
		Loc     *string `parquet:"loc,optional"`
		Lastmod string  `parquet:"lastmod"`
	}
	files := map[string]string{
		"plain":            longFile(t, func(l, m string) plain { return plain{l, optString(m)} }),
		"delta length":     longFile(t, func(l, m string) deltaLength { return deltaLength{l, optString(m)} }),
		"dictionary":       longFile(t, func(l, m string) dict { return dict{l, optString(m)} }),
		"delta byte array": longFile(t, func(l, m string) deltaBytes { return deltaBytes{l, optString(m)} }),
		"optional loc":     longFile(t, func(l, m string) optionalLoc { return optionalLoc{&l, m} }),
		"pages of a row":   longFile(t, func(l, m string) plain { return plain{l, optString(m)} }, parquet.PageBufferSize(1)),
	}
	for name, in := range files {
		for _, chunk := range []int{512, 1 << 20} {
			r, err := Open(in, input.Options{})
			if err != nil {
				t.Fatal(err)
			}
			inputtest.ReadLongValues(t, fmt.Sprintf("%s, chunk %d", name, chunk), r, chunk)
			r.Close()
		}
	}
}

// TestParquetLongRepeated: a dictionary value is copied for every row
// that holds it, so a long one repeated by a few bytes of RLE indexes
// must not be: over 64 KiB, each row keeps 4 KB of its loc; under, the
// batches stop at their budget whichever column holds it, and every row
// has its value.
func TestParquetLongRepeated(t *testing.T) {
	type row struct {
		Loc     string `parquet:"loc,dict"`
		Lastmod string `parquet:"lastmod,dict"`
	}
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
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{tc.loc, tc.lastmod}
		}
		in := inputtest.WriteParquet(t, "rep.parquet", rows)
		r, err := Open(in, input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputtest.ReadRepeated(t, name, r, n, chunk, tc.loc, tc.lastmod, tc.reason)
		r.Close()
	}
}
