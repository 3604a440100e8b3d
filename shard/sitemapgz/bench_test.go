package sitemapgz

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// benchShard is the measured unit: one full shard, 50,000 entries of the
// bench generator (seed 1), or the decompressed shard named by
// $SITEMAPGZ_SHARD (a file sitemapgen generate wrote, gunzipped).
var benchShard = sync.OnceValues(func() ([]byte, error) {
	if name := os.Getenv("SITEMAPGZ_SHARD"); name != "" {
		return os.ReadFile(name)
	}
	return sitemap(1, 50_000), nil
})

// BenchmarkCompress compares this encoder with klauspost gzip level 6, one
// stream, on the same shard: run with -count and compare with benchstat.
// zbytes is the compressed size; cpu-ns/op the CPU time of the benchmark's
// thread alone (getrusage RUSAGE_THREAD), which a busy machine disturbs far
// less than the wall time.
func BenchmarkCompress(b *testing.B) {
	src, err := benchShard()
	if err != nil {
		b.Fatal(err)
	}
	benchAll(b, src)
	// The same compressor over the variable bytes alone: what is left
	// for a match finder once the skeleton is free.
	b.Run("klauspost6-fields", func(b *testing.B) { benchKlauspost(b, fields(src)) })
}

// BenchmarkCompressRepeated is BenchmarkCompress on a shard whose fields
// repeat, the best case for known distances: the bench generator's locs,
// one lastmod per run of 1,000 entries, changefreq weekly and priority 0.5
// in every entry.
func BenchmarkCompressRepeated(b *testing.B) {
	benchAll(b, repeatedFields(50_000))
}

// benchAll runs every variant and klauspost gzip-6 over src.
func benchAll(b *testing.B, src []byte) {
	for _, v := range variants {
		b.Run("sitemapgz-"+v.name, func(b *testing.B) {
			e := v.new()
			var z []byte
			b.SetBytes(int64(len(src)))
			defer cpuTime(b)()
			for b.Loop() {
				z = e.Append(z[:0], src)
			}
			b.ReportMetric(float64(len(z)), "zbytes")
		})
	}
	b.Run("klauspost6", func(b *testing.B) { benchKlauspost(b, src) })
}

func benchKlauspost(b *testing.B, src []byte) {
	var out bytes.Buffer
	w, _ := kgzip.NewWriterLevel(&out, 6)
	b.SetBytes(int64(len(src)))
	defer cpuTime(b)()
	for b.Loop() {
		out.Reset()
		w.Reset(&out)
		w.Write(src)
		w.Close()
	}
	b.ReportMetric(float64(out.Len()), "zbytes")
}

// fields returns the variable bytes of a sitemap's entries: each field's
// value (the loc without its origin), one per line, tags dropped.
func fields(src []byte) []byte {
	var out []byte
	for line := range bytes.Lines(src) {
		rest, ok := bytes.CutPrefix(line, []byte("<url><loc>https://www.example.com/"))
		if !ok {
			continue
		}
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '<')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, rest[:i]...)
				out = append(out, '\n')
			}
			j := bytes.IndexByte(rest[i:], '>')
			if j < 0 {
				break
			}
			rest = rest[i+j+1:]
		}
	}
	return out
}

// cpuTime locks the goroutine to its thread and returns a function that
// reports the thread's CPU time per op since the call.
func cpuTime(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU(b)
	return func() {
		b.ReportMetric(float64(threadCPU(b)-start)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // 1: RUSAGE_THREAD
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
