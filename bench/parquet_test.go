package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
	"github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)

// benchRows is the size of the Parquet-vs-CSV inputs: 10M rows, as the
// issue asks; SITEMAPGEN_BENCH_ROWS overrides it for quick runs.
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("SITEMAPGEN_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 10_000_000
}

var (
	inputsOnce sync.Once
	inputsErr  error
	inputDir   string
)

// benchInputs writes (once per process, kept in the temporary folder across
// runs) the same generated rows as CSV and as Parquet with 1M-row row groups.
func benchInputs(tb testing.TB) (csvPath, parquetPath string, rows int) {
	rows = benchRows()
	inputsOnce.Do(func() {
		inputDir = filepath.Join(os.TempDir(), fmt.Sprintf("sitemapgen-bench-%d", rows))
		inputsErr = os.MkdirAll(inputDir, 0o755)
		for _, format := range []string{"csv", "parquet"} {
			p := filepath.Join(inputDir, "urls."+format)
			if inputsErr != nil {
				return
			}
			if _, err := os.Stat(p); err == nil {
				continue
			}
			inputsErr = writeInput(p+".tmp", format, rows)
			if inputsErr == nil {
				inputsErr = os.Rename(p+".tmp", p)
			}
		}
	})
	if inputsErr != nil {
		tb.Fatal(inputsErr)
	}
	return filepath.Join(inputDir, "urls.csv"), filepath.Join(inputDir, "urls.parquet"), rows
}

func writeInput(path, format string, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := NewGenerator(1, "https://www.example.com/")
	if format == "parquet" {
		err = WriteParquet(w, g, rows, 1_000_000)
	} else {
		w.WriteString(CSVHeader)
		var buf []byte
		for range rows {
			buf = g.AppendCSV(buf[:0])
			w.Write(buf)
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type source interface {
	Fill(b *input.Batch, chunk int) error
	Rows() int64
}

// BenchmarkInputStage measures the input stage alone, on one goroutine:
// the whole file read into two recycled batches of 1 MiB, as the pipeline
// reads it. Reports rows/s and allocations per row.
func BenchmarkInputStage(b *testing.B) {
	csvPath, pqPath, rows := benchInputs(b)
	for _, bc := range []struct {
		name string
		open func() (source, func() error, error)
	}{
		{"parquet", func() (source, func() error, error) {
			pr, err := pqread.Open(pqPath, input.Options{})
			if err != nil {
				return nil, nil, err
			}
			return pr, pr.Close, nil
		}},
		{"csv", func() (source, func() error, error) {
			f, err := os.Open(csvPath)
			if err != nil {
				return nil, nil, err
			}
			return csvscan.NewScanner(f, csvPath, input.Options{}), f.Close, nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var batches [2]input.Batch
			b.ReportAllocs()
			var total int64
			cpu0 := cpuTime()
			for b.Loop() {
				src, closeSrc, err := bc.open()
				if err != nil {
					b.Fatal(err)
				}
				for k := 0; ; k++ {
					batch := &batches[k%2]
					batch.Reset()
					err := src.Fill(batch, 1<<20)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if src.Rows() != int64(rows) {
					b.Fatalf("%d rows, want %d", src.Rows(), rows)
				}
				total += src.Rows()
				closeSrc()
			}
			// rows per CPU second: what one core delivers, whatever else
			// the (shared) machine is running.
			b.ReportMetric(float64(total)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEndToEndInput runs the whole pipeline (gzip level 6, all cores)
// on the same rows from Parquet and from CSV.
func BenchmarkEndToEndInput(b *testing.B) {
	csvPath, pqPath, rows := benchInputs(b)
	for _, bc := range []struct{ name, path string }{{"parquet", pqPath}, {"csv", csvPath}} {
		b.Run(bc.name, func(b *testing.B) { benchRun(b, bc.path, 6, rows) })
	}
}
