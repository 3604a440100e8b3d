package pqread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// deltaRow exercises the encodings and codecs parquet-go writes on request:
// DELTA_BYTE_ARRAY strings, DELTA_BINARY_PACKED timestamps, PLAIN and
// dictionary values, nulls, zstd, gzip, brotli, lz4 and no compression.
type deltaRow struct {
	Loc        string    `parquet:"loc,delta,zstd"`
	Lastmod    time.Time `parquet:"lastmod,delta,timestamp(millisecond),gzip"`
	Changefreq *string   `parquet:"changefreq,optional,plain,uncompressed"`
	Priority   *float64  `parquet:"priority,optional,brotli"`
}

type dictRow struct {
	Loc        string  `parquet:"loc,dict,lz4"`
	Lastmod    *string `parquet:"lastmod,optional,dict,snappy"`
	Changefreq string  `parquet:"changefreq,plain,snappy"`
	Priority   float32 `parquet:"priority,lz4"`
}

// TestParquetEncodings reads every encoding and codec back, over many pages.
func TestParquetEncodings(t *testing.T) {
	const n = 5000
	freqs := []string{"daily", "weekly", "monthly"}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var want [][input.NumColumns]string
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[deltaRow](&buf, parquet.PageBufferSize(2048), parquet.MaxRowsPerRowGroup(1700))
	for i := range n {
		r := deltaRow{
			Loc:     fmt.Sprintf("https://www.example.com/catalog/item-%06d?ref=%d", i*7, i%13),
			Lastmod: base.Add(time.Duration(i*i) * time.Millisecond * 997),
		}
		exp := [input.NumColumns]string{r.Loc, r.Lastmod.Format("2006-01-02T15:04:05.999Z07:00"), "", ""}
		if i%3 != 0 {
			f := freqs[i%len(freqs)]
			r.Changefreq, exp[input.Changefreq] = &f, f
		}
		if i%5 != 0 {
			p := float64(i%11) / 10
			r.Priority, exp[input.Priority] = &p, strconv.FormatFloat(p, 'f', -1, 64)
		}
		if _, err := w.Write([]deltaRow{r}); err != nil {
			t.Fatal(err)
		}
		want = append(want, exp)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, buf.Bytes(), want,
		[]string{"[DELTA_BYTE_ARRAY]", "[DELTA_BINARY_PACKED]", "[PLAIN RLE]", "[PLAIN RLE]"},
		[]string{"ZSTD", "GZIP", "UNCOMPRESSED", "BROTLI"})

	want = want[:0]
	buf.Reset()
	w2 := parquet.NewGenericWriter[dictRow](&buf, parquet.PageBufferSize(1024), parquet.MaxRowsPerRowGroup(2500))
	for i := range n {
		r := dictRow{
			Loc:        fmt.Sprintf("https://www.example.com/p/%d", i%700),
			Changefreq: freqs[i%2],
			Priority:   float32(i%4) / 4,
		}
		exp := [input.NumColumns]string{r.Loc, "", r.Changefreq, strconv.FormatFloat(float64(r.Priority), 'f', -1, 32)}
		if i%4 != 1 {
			s := fmt.Sprintf("2024-01-%02d", 1+i%28)
			r.Lastmod, exp[input.Lastmod] = &s, s
		}
		if _, err := w2.Write([]dictRow{r}); err != nil {
			t.Fatal(err)
		}
		want = append(want, exp)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, buf.Bytes(), want,
		[]string{"[PLAIN RLE_DICTIONARY]", "[PLAIN RLE RLE_DICTIONARY]", "[PLAIN]", "[PLAIN]"},
		[]string{"LZ4_RAW", "SNAPPY", "SNAPPY", "LZ4_RAW"})
}

// checkRows reads data back and checks every row against want, after
// checking that the first row group's columns were written with the
// encodings and codecs named (a writer that stops emitting one would leave
// its decoder untested).
func checkRows(t *testing.T, data []byte, want [][input.NumColumns]string, encs, codecs []string) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var gotEncs, gotCodecs []string
	for _, c := range pf.Metadata().RowGroups[0].Columns {
		gotEncs = append(gotEncs, fmt.Sprint(c.MetaData.Encoding))
		gotCodecs = append(gotCodecs, c.MetaData.Codec.String())
	}
	if len(pf.Metadata().RowGroups) < 2 {
		t.Errorf("%d row groups, want several", len(pf.Metadata().RowGroups))
	}
	if fmt.Sprint(gotEncs) != fmt.Sprint(encs) || fmt.Sprint(gotCodecs) != fmt.Sprint(codecs) {
		t.Fatalf("encodings %v, codecs %v; want %v, %v", gotEncs, gotCodecs, encs, codecs)
	}
	pr, err := NewReader(bytes.NewReader(data), int64(len(data)), "enc.parquet", input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	row := 0
	next := int64(1)
	for {
		var b input.Batch
		err := pr.Fill(&b, 3000)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		next = inputtest.CheckBatch(t, &b, next)
		for i := range b.Len() {
			for c := range input.CoreColumns {
				if got := string(b.Fields[c][i]); got != want[row][c] {
					t.Fatalf("row %d column %d: %q, want %q", row+1, c, got, want[row][c])
				}
				if (b.Fields[c][i] == nil) != (want[row][c] == "") {
					t.Fatalf("row %d column %d: null %v", row+1, c, b.Fields[c][i] == nil)
				}
			}
			row++
		}
	}
	if row != len(want) {
		t.Fatalf("%d rows, want %d", row, len(want))
	}
}
