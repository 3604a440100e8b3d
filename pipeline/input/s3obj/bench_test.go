package s3obj_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// BenchmarkParquetColumns reads two columns of a Parquet export with a
// wide unused column: from a local file, and over ranged GETs with the
// next row group prefetched. Compare rows/s.
func BenchmarkParquetColumns(b *testing.B) {
	e := newEnv(b)
	path, s, o := e.putLocal(b, "export/part-0.parquet", exportParquet(b, 400_000, 100_000))
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			_, rows := readColumns(b, f, o.Size, nil, "loc", "lastmod")
			f.Close()
			b.ReportMetric(float64(rows), "rows/op")
		}
	})
	b.Run("s3", func(b *testing.B) {
		var fetched int64
		for b.Loop() {
			r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
			_, rows := readColumns(b, r, o.Size, r.Prefetch, "loc", "lastmod")
			fetched += r.Stats().Bytes
			r.Close()
			b.ReportMetric(float64(rows), "rows/op")
		}
		b.ReportMetric(float64(fetched)/float64(b.N)/float64(o.Size), "fetched/size")
	})
}

// BenchmarkStream reads a 64 MiB object with one GET, against reading the
// same bytes from a local file.
func BenchmarkStream(b *testing.B) {
	e := newEnv(b)
	path, s, o := e.putLocal(b, "in/urls.csv", randomBytes(64<<20, 20))
	buf := make([]byte, 64<<10)
	b.Run("local", func(b *testing.B) {
		b.SetBytes(o.Size)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, onlyReader{f}, buf); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("s3", func(b *testing.B) {
		b.SetBytes(o.Size)
		for b.Loop() {
			r := s.NewStream(context.Background(), o)
			if _, err := io.CopyBuffer(io.Discard, r, buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("s3-readerat-prefetch", func(b *testing.B) {
		b.SetBytes(o.Size)
		for b.Loop() {
			r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
			r.Prefetch([]s3obj.Range{{Off: 0, Len: o.Size}})
			if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(r, 0, o.Size), buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}

// onlyReader hides a file's WriterTo, so both sides copy through buf.
type onlyReader struct{ io.Reader }
