package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
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
	var want [][NumColumns]string
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[deltaRow](&buf, parquet.PageBufferSize(2048), parquet.MaxRowsPerRowGroup(1700))
	for i := range n {
		r := deltaRow{
			Loc:     fmt.Sprintf("https://www.example.com/catalog/item-%06d?ref=%d", i*7, i%13),
			Lastmod: base.Add(time.Duration(i*i) * time.Millisecond * 997),
		}
		exp := [NumColumns]string{r.Loc, r.Lastmod.Format("2006-01-02T15:04:05.999Z07:00"), "", ""}
		if i%3 != 0 {
			f := freqs[i%len(freqs)]
			r.Changefreq, exp[Changefreq] = &f, f
		}
		if i%5 != 0 {
			p := float64(i%11) / 10
			r.Priority, exp[Priority] = &p, strconv.FormatFloat(p, 'f', -1, 64)
		}
		if _, err := w.Write([]deltaRow{r}); err != nil {
			t.Fatal(err)
		}
		want = append(want, exp)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, buf.Bytes(), want)

	want = want[:0]
	buf.Reset()
	w2 := parquet.NewGenericWriter[dictRow](&buf, parquet.PageBufferSize(1024), parquet.MaxRowsPerRowGroup(2500))
	for i := range n {
		r := dictRow{
			Loc:        fmt.Sprintf("https://www.example.com/p/%d", i%700),
			Changefreq: freqs[i%2],
			Priority:   float32(i%4) / 4,
		}
		exp := [NumColumns]string{r.Loc, "", r.Changefreq, strconv.FormatFloat(float64(r.Priority), 'f', -1, 32)}
		if i%4 != 1 {
			s := fmt.Sprintf("2024-01-%02d", 1+i%28)
			r.Lastmod, exp[Lastmod] = &s, s
		}
		if _, err := w2.Write([]dictRow{r}); err != nil {
			t.Fatal(err)
		}
		want = append(want, exp)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, buf.Bytes(), want)
}

func checkRows(t *testing.T, data []byte, want [][NumColumns]string) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var encs, codecs []string
	for _, g := range pf.Metadata().RowGroups[:1] {
		for _, c := range g.Columns {
			encs = append(encs, fmt.Sprint(c.MetaData.Encoding))
			codecs = append(codecs, c.MetaData.Codec.String())
		}
	}
	t.Logf("%d row groups; encodings %v; codecs %v", len(pf.Metadata().RowGroups), encs, codecs)
	pr, err := NewParquetReader(bytes.NewReader(data), int64(len(data)), "enc.parquet", ColumnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	row := 0
	next := int64(1)
	for {
		var b Batch
		err := pr.Fill(&b, 3000)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		next = checkBatch(t, &b, next)
		for i := range b.Len() {
			for c := range NumColumns {
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
