package csvscan

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// benchCSV returns a realistic URL export: a header, then rows of about 100
// bytes (loc, lastmod, changefreq, priority); one row in ten has a quoted loc
// holding a comma and a doubled quote.
func benchCSV(rows int) []byte {
	var b bytes.Buffer
	b.WriteString("loc,lastmod,changefreq,priority\n")
	freqs := []string{"daily", "weekly", "monthly"}
	for i := range rows {
		if i%10 == 0 {
			fmt.Fprintf(&b, "\"https://www.example.com/search?q=red,blue&tag=\"\"sale\"\"&page=%d\",2024-%02d-%02dT10:%02d:00Z,%s,0.%d\n",
				i, i%12+1, i%28+1, i%60, freqs[i%3], i%10)
		} else {
			fmt.Fprintf(&b, "https://www.example.com/catalog/category-%d/product-%d.html?ref=feed,2024-%02d-%02d,%s,0.%d\n",
				i%500, i, i%12+1, i%28+1, freqs[i%3], i%10)
		}
	}
	return b.Bytes()
}

func benchLines(rows int) []byte {
	var b bytes.Buffer
	for i := range rows {
		fmt.Fprintf(&b, "https://www.example.com/catalog/category-%d/product-%d.html?ref=feed&session=none\n", i%500, i)
	}
	return b.Bytes()
}

// BenchmarkCSVScanner reads the whole input per iteration into two recycled
// batches, as the reader stage does.
func BenchmarkCSVScanner(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
		opt  input.Options
	}{
		{"csv", benchCSV(100_000), input.Options{}},
		{"lines", benchLines(100_000), input.Options{Lines: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var batches [2]input.Batch
			rd := bytes.NewReader(bc.data)
			rows := int64(0)
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(bc.data)
				sc := NewScanner(rd, "bench.csv", bc.opt)
				for k := 0; ; k++ {
					batch := &batches[k%2]
					batch.Reset()
					err := sc.Fill(batch, input.DefaultChunk)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rows += sc.Rows()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// BenchmarkEncodingCSV is the comparison: encoding/csv with ReuseRecord.
func BenchmarkEncodingCSV(b *testing.B) {
	data := benchCSV(100_000)
	rd := bytes.NewReader(data)
	rows := int64(0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(data)
		r := csv.NewReader(rd)
		r.ReuseRecord = true
		r.FieldsPerRecord = -1
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			_ = rec
			rows++
		}
		rows-- // the header
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
