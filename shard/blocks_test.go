package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestBlocksSameShards: a Cutter holding its sitemaps in Blocks, of any
// block size, cuts the same files as one with a buffer each, with Add and
// with AddEntries, tight and stable, its shards recycled or kept.
func TestBlocksSameShards(t *testing.T) {
	for seed := range 200 {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		maxURLs := 1 + rng.IntN(80)
		maxEntry := 24 + rng.IntN(300)
		maxBytes := len(Header) + len(Footer) + maxEntry + rng.IntN(4000)
		var entries [][]byte
		for range 1 + rng.IntN(800) {
			entries = append(entries, locEntry(rng, 24+rng.IntN(maxEntry-23)))
		}
		bs := batches(rng, entries)
		size := []int{1, 7, 64, 1000, 1 << 16}[seed%5]
		mode := CutMode(seed % 2)
		for _, cut := range []func(*Cutter, []Entries) []cutShard{cutAdd, cutEntries} {
			o := CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes, Mode: mode}
			want := cut(mustCutter(o), bs)
			o.Blocks = NewBlocks(size)
			got := cut(mustCutter(o), bs)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d, mode %d, blocks of %d: the shards differ from a buffer each's", seed, mode, size)
			}
		}
	}
}

// TestBlocksGoRound: recycled sitemaps give their blocks back, so the pool
// holds no more than the sitemaps open or held at once need; and two
// Cutters sharing one pool hand their blocks to each other.
func TestBlocksGoRound(t *testing.T) {
	const size, maxBytes = 1 << 10, 64 << 10
	b := NewBlocks(size)
	free := make(chan *Sitemap, 4)
	cs := []*Cutter{
		mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: maxBytes, Blocks: b, Free: free}),
		mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: maxBytes, Blocks: b, Free: free, Mode: CutStable}),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var held []*Sitemap
	for i := range 20000 {
		c := cs[i%2]
		if s := c.Add(locEntry(rng, 24+rng.IntN(400))); s != nil {
			held = append(held, s)
			if len(held) > 1 { // one closed sitemap waits while the next fills
				c.Recycle(held[0])
				held = held[1:]
			}
		}
	}
	// Two open sitemaps and one held: three files, each a partly empty
	// block beyond its full ones.
	if most := 3 * (maxBytes/size + 1); b.Made() > most {
		t.Fatalf("the pool made %d blocks; three sitemaps of at most %d bytes need %d", b.Made(), maxBytes, most)
	}
}

// TestBlocksAllocs: with Blocks, placing entries allocates nothing,
// cutting included, once recycled sitemaps and blocks are at hand.
func TestBlocksAllocs(t *testing.T) {
	c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 64 << 10, Blocks: NewBlocks(4 << 10), Mode: CutStable})
	rng := rand.New(rand.NewPCG(3, 4))
	var e Entries
	for range 100 {
		e.Data = append(e.Data, locEntry(rng, 100+rng.IntN(200))...)
		e.Ends = append(e.Ends, uint32(len(e.Data)))
	}
	place := func() {
		for k := 0; k < len(e.Ends); {
			var s *Sitemap
			if k, s = c.AddEntries(&e, k); s != nil {
				c.Recycle(s)
			}
		}
	}
	for range 100 { // warm up: fill and recycle a few sitemaps
		place()
	}
	if allocs := testing.AllocsPerRun(1000, place); allocs != 0 {
		t.Fatalf("AddEntries with Blocks: %v allocations per batch, want 0", allocs)
	}
}

// TestCompressParts: the gzip of a file is the same whatever pieces it
// comes in, small files (compressed on the calling goroutine) and large
// (through pgzip) alike.
func TestCompressParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var data []byte
	for len(data) < 3*pgzipBlock {
		data = append(data, locEntry(rng, 60+rng.IntN(200))...)
	}
	c, err := NewCompressor(6, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 5000, pgzipBlock - 1, pgzipBlock, 2*pgzipBlock + 12345} {
		want, err := c.Compress(data[:n])
		if err != nil {
			t.Fatal(err)
		}
		want = bytes.Clone(want)
		for _, size := range []int{1, 999, 256 << 10} {
			if size == 1 && n > 5000 {
				continue // a million Writes of a byte prove nothing more
			}
			var parts [][]byte
			for rest := data[:n]; len(rest) > 0; rest = rest[min(size, len(rest)):] {
				parts = append(parts, rest[:min(size, len(rest))])
			}
			got, err := c.Compress(parts...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes in pieces of %d: %d bytes of gzip, in one piece %d", n, size, len(got), len(want))
			}
		}
	}
}
