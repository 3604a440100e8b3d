package shard

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestCompressorID: the ID names everything that changes the bytes (the
// level, the implementation, the module versions) and nothing that does
// not (pgzip's goroutines).
func TestCompressorID(t *testing.T) {
	data := bytes.Repeat([]byte("<url><loc>https://example.com/a</loc></url>\n"), 100_000)
	id := func(level, procs int) (string, []byte) {
		c, err := NewCompressor(level, procs)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := c.Compress(data)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID(), bytes.Clone(gz)
	}
	p2, gz2 := id(6, 2)
	p4, gz4 := id(6, 4)
	if p2 != p4 || !bytes.Equal(gz2, gz4) {
		t.Errorf("pgzip on 2 and 4 goroutines: IDs %q, %q, same bytes %v: want the same ID and bytes", p2, p4, bytes.Equal(gz2, gz4))
	}
	// 0 (GOMAXPROCS) is pgzip on any machine, one core too: the bytes
	// do not depend on the cores of the machine that wrote them.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p0, gz0 := id(6, 0)
	if p0 != p2 || !bytes.Equal(gz0, gz2) {
		t.Errorf("procs 0 on one core: ID %q, same bytes %v; want pgzip's %q and its bytes", p0, bytes.Equal(gz0, gz2), p2)
	}
	single, gzs := id(6, 1)
	l9, _ := id(9, 2)
	if single == p2 || l9 == p2 || bytes.Equal(gzs, gz2) {
		t.Errorf("IDs %q (single), %q (pgzip), %q (level 9): want all different", single, p2, l9)
	}
	// A test binary carries no module versions; a built sitemapgen does.
	for _, s := range []string{p2, single} {
		if !strings.Contains(s, "level 6") || !strings.Contains(s, moduleVersion("github.com/klauspost/compress")) {
			t.Errorf("ID %q: want the module versions and the level", s)
		}
	}
}

// TestCompressSmallAsPgzip: a file shorter than one pgzip block, which the
// Compressor deflates on the calling goroutine, gets the bytes pgzip gives
// it, whatever its size, content and level: the ID, and so a published
// file's reuse, hold across the two paths. And the output is gzip that
// reads back.
func TestCompressSmallAsPgzip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, pgzipBlock)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	var sitemap []byte
	for i := 0; len(sitemap) < pgzipBlock; i++ {
		sitemap = fmt.Appendf(sitemap, "<url><loc>https://www.example.com/p/%d</loc><lastmod>2024-05-%02d</lastmod></url>\n", i*7919%100003, 1+i%28)
	}
	contents := map[string][]byte{"noise": noise, "sitemap": sitemap, "zeros": make([]byte, pgzipBlock)}
	for _, level := range []int{1, 6, 9} {
		c, err := NewCompressor(level, 2)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range contents {
			for _, n := range []int{0, 1, 57, 4096, 65535, 65536, 65537, 300_001, pgzipBlock - 1} {
				data := content[:n]
				small, err := c.Compress(data)
				if err != nil {
					t.Fatal(err)
				}
				small = bytes.Clone(small)
				want, err := c.compressBlocks([][]byte{data}, len(data))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(small, want) {
					t.Fatalf("level %d, %d bytes of %s: %d bytes on the calling goroutine, pgzip gives %d", level, n, name, len(small), len(want))
				}
				zr, err := gzip.NewReader(bytes.NewReader(small))
				if err != nil {
					t.Fatal(err)
				}
				if back, err := io.ReadAll(zr); err != nil || !bytes.Equal(back, data) {
					t.Fatalf("level %d, %d bytes of %s: read back %d bytes, %v", level, n, name, len(back), err)
				}
			}
		}
	}
}

// BenchmarkCompressSmall compresses a small group's sitemap (50 entries):
// on the calling goroutine (Compress), or through pgzip's goroutines.
func BenchmarkCompressSmall(b *testing.B) {
	data := []byte(URLSetHeader(0))
	for i := range 50 {
		data = fmt.Appendf(data, "<url><loc>https://www.example.com/brand-%d/x/y/item-%d.html</loc><lastmod>2024-05-01</lastmod></url>\n", i*7, i*31)
	}
	data = append(data, Footer...)
	c, err := NewCompressor(6, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("calling-goroutine", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c.Compress(data)
		}
	})
	b.Run("pgzip", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c.compressBlocks([][]byte{data}, len(data))
		}
	})
}
