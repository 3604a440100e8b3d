package bench

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/sitemapgen/sitemapgen/shard"
)

// CompressionLimit is the same-run limit the end-to-end figures are a ratio
// to: it decompresses the shards (.xml.gz) among files in dir (untimed) and
// times compressing them again the way the pipeline does (level, procs as
// pipeline.Config.GzipLevel and GzipProcs), with nothing else to do. It
// measures at most about maxBytes of uncompressed XML and returns the
// seconds and the bytes measured; scale by the run's bytes for the limit of
// the whole run.
func CompressionLimit(dir string, files []string, level, procs int, maxBytes int64) (float64, int64, error) {
	var shards [][]byte
	var total int64
	for _, name := range files {
		if !strings.HasSuffix(name, ".xml.gz") || total >= maxBytes {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, 0, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return 0, 0, err
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return 0, 0, err
		}
		shards = append(shards, raw)
		total += int64(len(raw))
	}
	workers := 1
	if procs == 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	var comps []*shard.Compressor
	for range workers {
		c, err := shard.NewCompressor(level, procs)
		if err != nil {
			return 0, 0, err
		}
		comps = append(comps, c)
	}
	work := make(chan []byte)
	var wg sync.WaitGroup
	start := time.Now()
	for _, c := range comps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				c.Compress(s)
			}
		}()
	}
	for _, s := range shards {
		work <- s
	}
	close(work)
	wg.Wait()
	secs := time.Since(start).Seconds()
	shards = nil
	runtime.GC()
	debug.FreeOSMemory()
	return secs, total, nil
}

// InflateLimit is the same-run limit validate's figures are a ratio to:
// it reads the gzip files among files in dir (untimed), then times
// inflating them all with the decompressor validate uses
// (klauspost/compress/gzip), a file per core at once, with nothing else to
// do. It returns the seconds and the uncompressed bytes.
func InflateLimit(dir string, files []string) (float64, int64, error) {
	var gz [][]byte
	for _, name := range files {
		if !strings.HasSuffix(name, ".gz") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, 0, err
		}
		gz = append(gz, data)
	}
	work := make(chan []byte)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int64
	var firstErr error
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var zr kgzip.Reader
			for data := range work {
				err := zr.Reset(bytes.NewReader(data))
				var n int64
				if err == nil {
					n, err = io.Copy(io.Discard, &zr)
				}
				mu.Lock()
				total += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, data := range gz {
		work <- data
	}
	close(work)
	wg.Wait()
	return time.Since(start).Seconds(), total, firstErr
}
