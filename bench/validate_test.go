package bench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/sink"
)

const benchBase = "https://www.example.com/"

// writeUniqueCSV writes rows generated rows whose URLs are all distinct
// (the generator repeats short paths; a clean set has no duplicate URL).
func writeUniqueCSV(tb testing.TB, dir string, rows int) string {
	path := filepath.Join(dir, "unique.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(CSVHeader)
	g := NewGenerator(1, benchBase)
	var buf, row []byte
	for i := range rows {
		buf = g.AppendCSV(buf[:0])
		at := bytes.Index(buf, []byte(benchBase)) + len(benchBase)
		row = append(append(row[:0], buf[:at]...), 'p')
		row = strconv.AppendInt(row, int64(i), 10)
		row = append(append(row, '/'), buf[at:]...)
		w.Write(row)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// generateSet runs the pipeline on in and returns the output folder.
func generateSet(tb testing.TB, in, out string) *pipeline.Report {
	scope, err := encode.ParseScope(benchBase)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := sink.NewLocal(out)
	if err != nil {
		tb.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), pipeline.Config{
		Inputs: []string{in}, PublicURL: scope, Sink: s, Name: "sitemap",
		MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 6,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// BenchmarkGenerateVsValidate writes a 1M-URL set with the pipeline and
// validates it, reporting both rates and the rate of inflating the set's
// files alone (the same-run limit of validate): issue 23 asks validate for
// 1.5x generate's rate. Set BENCH_ROWS to change the size. bench/cmd/e2e
// -validate gives the same ratios as medians of interleaved runs.
func BenchmarkGenerateVsValidate(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	dir := b.TempDir()
	in := writeUniqueCSV(b, dir, rows)
	b.Run("generate", func(b *testing.B) {
		var urls int64
		for b.Loop() {
			out := filepath.Join(b.TempDir(), "out")
			urls += generateSet(b, in, out).URLs
		}
		b.ReportMetric(float64(urls)/b.Elapsed().Seconds(), "urls/s")
	})
	out := filepath.Join(dir, "set")
	generateSet(b, in, out)
	b.Run("validate", func(b *testing.B) {
		var urls int64
		for b.Loop() {
			rep, err := check.Set(context.Background(), check.Dir(out), "sitemap.xml", check.Options{Limits: check.Ours})
			if err != nil {
				b.Fatal(err)
			}
			if !rep.OK() {
				b.Fatalf("the generated set has problems: %v", rep.List[:min(5, len(rep.List))])
			}
			urls += rep.URLs
		}
		b.ReportMetric(float64(urls)/b.Elapsed().Seconds(), "urls/s")
	})
	// The same-run limit: inflating the set's files alone, a file per core.
	b.Run("inflate", func(b *testing.B) {
		names, err := check.Dir(out).List(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, _, err := InflateLimit(out, names); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	})
}
