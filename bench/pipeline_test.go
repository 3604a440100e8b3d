package bench

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/sink"
)

// writeCSV writes rows generated rows to a file in dir.
func writeCSV(tb testing.TB, dir string, rows int) (path string, size int64) {
	path = filepath.Join(dir, "urls.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(CSVHeader)
	g := NewGenerator(1, "https://www.example.com/")
	var buf []byte
	for range rows {
		buf = g.AppendCSV(buf[:0])
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return path, fi.Size()
}

// BenchmarkPipeline runs the whole pipeline, CSV file to gzip shards in a
// local folder, on 200,000 generated rows per iteration.
func BenchmarkPipeline(b *testing.B) {
	const rows = 200_000
	in, size := writeCSV(b, b.TempDir(), rows)
	for _, level := range []int{1, 6} {
		b.Run(map[int]string{1: "gzip1", 6: "gzip6"}[level], func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			benchRun(b, in, level, rows)
		})
	}
}

// benchRun runs the whole pipeline on the file in at the production limits
// once per iteration, into a new folder, checks that it read rows rows, and
// reports URLs per second.
func benchRun(b *testing.B, in string, gzipLevel, rows int) {
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		b.Fatal(err)
	}
	var urls int64
	for b.Loop() {
		out, err := sink.NewLocal(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		rep, err := pipeline.Run(context.Background(), pipeline.Config{
			Inputs: []string{in}, PublicURL: scope, Sink: out, Name: "sitemap",
			MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: gzipLevel,
		})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Rows != int64(rows) {
			b.Fatalf("%d rows, want %d", rep.Rows, rows)
		}
		urls += rep.URLs
	}
	b.ReportMetric(float64(urls)/b.Elapsed().Seconds(), "urls/s")
}
