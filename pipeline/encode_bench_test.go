package pipeline

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
	"github.com/sitemapgen/sitemapgen/sink"
)

// BenchmarkEncodeBatch measures the encode stage alone (one worker) on
// generated rows like the end-to-end benchmark's: the encoder, the
// field views and the per-row bookkeeping of encodeBatch.
func BenchmarkEncodeBatch(b *testing.B) {
	batches := benchBatches(b, nil, input.Options{})
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

// BenchmarkEncodeGrouped is BenchmarkEncodeBatch on the grouped benchmark's
// rows (bench.DefaultSections) with --group-by section: ungrouped, the
// same rows; grouped, each row's group found first (the grouper).
func BenchmarkEncodeGrouped(b *testing.B) {
	cols := [input.NumColumns]string{input.Group: "section"}
	batches := benchBatches(b, &bench.DefaultSections, input.Options{Columns: cols})
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		b.Fatal(err)
	}
	snk, err := sink.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Inputs: []string{"bench.csv"}, PublicURL: scope, Sink: snk, Name: "sm", MaxURLs: 50000,
		MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Columns: cols, Group: &Grouping{}}
	r := &run{cfg: cfg.withDefaults(time.Now()), rep: NewReport(1)}
	if err := r.begin(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer r.closeDestinations(context.Background())
	enc := r.newEncoder(scope)
	for _, grouped := range []bool{false, true} {
		var gr *grouper
		if grouped {
			gr = r.newGrouper(enc)
		}
		run := func() {
			for _, batch := range batches {
				encodeAgain(b, enc, gr, batch)
			}
		}
		run()
		r.begins.Wait()
		b.Run(map[bool]string{false: "ungrouped", true: "grouped"}[grouped], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(100_000*b.N), "ns/row")
		})
	}
}

// encodeAgain encodes the rows of batch again, its earlier entries and
// rejects dropped.
func encodeAgain(b *testing.B, enc *encode.Encoder, gr *grouper, batch *Batch) {
	batch.Out, batch.Ends, batch.EntryGroup = batch.Out[:0], batch.Ends[:0], batch.EntryGroup[:0]
	batch.EntryLine, batch.EntryLastmod, batch.EntryNews = batch.EntryLine[:0], batch.EntryLastmod[:0], batch.EntryNews[:0]
	batch.Rejects, batch.RejectBuf = batch.Rejects[:0], batch.RejectBuf[:0]
	if err := encodeRows(enc, gr, batch, 1<<20, 1<<20); err != nil {
		b.Fatal(err)
	}
}

// benchBatches returns 100,000 rows of the bench generator (with sections,
// when given) read into batches as a run reads them.
func benchBatches(b *testing.B, sections *bench.Sections, opt input.Options) []*Batch {
	return benchBatchesN(b, 100_000, sections, opt)
}

// benchBatchesN is benchBatches with n rows.
func benchBatchesN(b *testing.B, n int, sections *bench.Sections, opt input.Options) []*Batch {
	var csv bytes.Buffer
	g := bench.NewGenerator(1, "https://www.example.com/")
	g.Sections = sections
	csv.WriteString(g.Header())
	var row []byte
	for range n {
		row = g.AppendCSV(row[:0])
		csv.Write(row)
	}
	sc := csvscan.NewScanner(bytes.NewReader(csv.Bytes()), "bench.csv", opt)
	var batches []*Batch
	for {
		batch := newBatch(input.DefaultChunk)
		err := sc.Fill(&batch.Batch, input.DefaultChunk)
		if err == io.EOF {
			return batches
		}
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, batch)
	}
}
