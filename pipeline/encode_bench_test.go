package pipeline

import (
	"bytes"
	"io"
	"testing"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
)

// BenchmarkEncodeBatch measures the encode stage alone (one worker) on
// generated rows like the end-to-end benchmark's: the encoder, the
// field views and the per-row bookkeeping of encodeBatch.
func BenchmarkEncodeBatch(b *testing.B) {
	var csv bytes.Buffer
	csv.WriteString(bench.CSVHeader)
	g := bench.NewGenerator(1, "https://www.example.com/")
	var row []byte
	for range 100_000 {
		row = g.AppendCSV(row[:0])
		csv.Write(row)
	}
	sc := csvscan.NewScanner(bytes.NewReader(csv.Bytes()), "bench.csv", input.Options{})
	var batches []*Batch
	for {
		batch := newBatch(input.DefaultChunk)
		err := sc.Fill(&batch.Batch, input.DefaultChunk)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, batch)
	}
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		b.Fatal(err)
	}
	enc := encode.NewEncoder(scope, nil)
	rows, out := 0, 0
	for _, batch := range batches {
		encodeBatch(enc, batch, 1<<20, 1<<20)
		rows += batch.Len()
		out += len(batch.Out)
	}
	b.SetBytes(int64(out))
	b.ReportAllocs()
	for b.Loop() {
		for _, batch := range batches {
			batch.Out, batch.Ends, batch.Rejects = batch.Out[:0], batch.Ends[:0], batch.Rejects[:0]
			batch.RejectBuf = batch.RejectBuf[:0]
			encodeBatch(enc, batch, 1<<20, 1<<20)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows*b.N), "ns/row")
}
