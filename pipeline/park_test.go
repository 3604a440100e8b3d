package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/sitemapgen/sitemapgen/shard"
)

// entriesOf returns entries of the given lengths, each filled with its
// number.
func entriesOf(lens ...int) shard.Entries {
	var e shard.Entries
	for i, n := range lens {
		e.Data = append(e.Data, bytes.Repeat([]byte{byte('a' + i%26)}, n)...)
		e.Ends = append(e.Ends, uint32(len(e.Data)))
	}
	return e
}

// flatten returns the entries of chunks back to back, each as a string.
func flatten(chunks ...shard.Entries) []string {
	var out []string
	for _, ch := range chunks {
		from := uint32(0)
		for _, end := range ch.Ends {
			out = append(out, string(ch.Data[from:end]))
			from = end
		}
	}
	return out
}

// TestParkedChunks: a parked group's entries, added a few at a time from
// any entry of a batch on, come back in order; a chunk, once made, never
// moves; and held counts the memory the chunks hold.
func TestParkedChunks(t *testing.T) {
	var pk parked
	var want []string
	var first *byte
	for batch := range 300 {
		lens := []int{30 + batch%50, 200, 1 + batch%7, 5000 * (batch % 40 / 39)} // now and then one larger than a chunk
		ents := entriesOf(lens...)
		k := batch % 3
		pk.add(&ents, k, nil)
		want = append(want, flatten(shard.Entries{Data: ents.Data, Ends: ents.Ends})[k:]...)
		if first == nil {
			first = &pk.chunks[0].Data[0]
		} else if &pk.chunks[0].Data[0] != first {
			t.Fatalf("batch %d: the first chunk moved", batch)
		}
	}
	got := flatten(pk.chunks...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d entries back; want %d, in order", len(got), len(want))
	}
	var bytes int
	var held int64
	for _, ch := range pk.chunks {
		bytes += len(ch.Data)
		held += int64(cap(ch.Data) + 4*cap(ch.Ends))
		if cap(ch.Data) > maxChunk && len(ch.Ends) > 0 && int(ch.Ends[0]) < cap(ch.Data)/2 {
			t.Errorf("a chunk of %d bytes past the largest size, its first entry %d bytes", cap(ch.Data), ch.Ends[0])
		}
	}
	if bytes != pk.bytes || held != pk.held {
		t.Errorf("bytes %d, held %d; the chunks hold %d bytes in %d", pk.bytes, pk.held, bytes, held)
	}
	if pk.held > 3*int64(pk.bytes) {
		t.Errorf("%d bytes held for %d bytes of entries", pk.held, pk.bytes)
	}
}

// TestSpillChunks: a parked group spilled from several chunks is read back
// as the same entries, in order.
func TestSpillChunks(t *testing.T) {
	s := &set{}
	var want []string
	for batch := range 40 {
		ents := entriesOf(100+batch, 3000, 7)
		s.pending.add(&ents, batch%2, nil)
		want = append(want, flatten(ents)[batch%2:]...)
	}
	if len(s.pending.chunks) < 3 {
		t.Fatalf("%d chunks; the test wants several", len(s.pending.chunks))
	}
	c := &cutStage{sets: []*set{s}, park: parking{dir: t.TempDir(), held: s.pending.held}}
	defer c.park.close()
	if err := c.spillLargest(); err != nil {
		t.Fatal(err)
	}
	if len(s.spills) != 1 || s.pending.bytes != 0 || c.park.held != 0 {
		t.Fatalf("%d spills, %d bytes still parked, %d held", len(s.spills), s.pending.bytes, c.park.held)
	}
	ents, err := c.park.read(s.spills[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := flatten(ents); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d entries read back; want %d, in order", len(got), len(want))
	}
}

// TestParkedBlocks: parked entries fill blocks of the pool once a chunk
// would be a block's size, and go back to it when the set is let go
// (spilled here): the next set's parked entries take the same blocks.
func TestParkedBlocks(t *testing.T) {
	blocks := shard.NewBlocks(16 << 10)
	c := &cutStage{park: parking{dir: t.TempDir(), blocks: blocks}}
	defer c.park.close()
	for round := range 3 {
		s := &set{}
		c.sets = []*set{s}
		var want []string
		for batch := range 60 {
			ents := entriesOf(100+batch, 3000, 7, 20000*(batch%30/29)) // now and then one larger than a block
			s.pending.add(&ents, batch%2, blocks)
			want = append(want, flatten(ents)[batch%2:]...)
		}
		pooled := 0
		for _, ch := range s.pending.chunks {
			if cap(ch.Data) == blocks.Size() {
				pooled++
			} else if cap(ch.Data) > blocks.Size() && len(ch.Data) <= blocks.Size() {
				t.Fatalf("round %d: a chunk of %d bytes from the heap holds %d: a block would", round, cap(ch.Data), len(ch.Data))
			}
		}
		if pooled < 5 {
			t.Fatalf("round %d: %d of %d chunks are blocks; the test wants several", round, pooled, len(s.pending.chunks))
		}
		made := blocks.Made()
		if round > 0 && made != pooled {
			t.Fatalf("round %d: the pool made %d blocks for %d chunks: the blocks of the set spilled before did not come back", round, made, pooled)
		}
		c.park.held = s.pending.held
		if err := c.spillLargest(); err != nil {
			t.Fatal(err)
		}
		ents, err := c.park.read(s.spills[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := flatten(ents); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: %d entries read back; want %d, in order", round, len(got), len(want))
		}
	}
}

// TestFlushGroupRoom: a group's flush takes one token of room for each
// sitemap it sends on: two for a shard and a news sitemap, none for
// nothing. (One for two let the sitemaps in flight grow by one a group.)
func TestFlushGroupRoom(t *testing.T) {
	for _, tc := range []struct {
		name         string
		shard, news  bool
		sent, tokens int
	}{
		{"shard and news", true, true, 2, 1},
		{"shard", true, false, 1, 2},
		{"nothing", false, false, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{shardRoom: make(chan struct{}, 3)}
			for range cap(r.shardRoom) {
				r.shardRoom <- struct{}{}
			}
			out := make(chan cutShard, 4)
			c := &cutStage{r: r, ctx: context.Background(), out: out}
			newCutter := func() *shard.Cutter {
				cu, err := shard.NewCutter(shard.CutterOptions{MaxURLs: 10, MaxBytes: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				return cu
			}
			s := &set{cutter: newCutter(), news: newCutter(), newsSitemaps: 1}
			if tc.shard {
				s.cutter.Add([]byte("<url><loc>https://example.com/a</loc></url>"))
			}
			if tc.news {
				s.news.Add([]byte("<url><loc>https://example.com/n</loc></url>"))
			}
			if err := c.flushGroup(s); err != nil {
				t.Fatal(err)
			}
			if len(out) != tc.sent || len(r.shardRoom) != tc.tokens {
				t.Errorf("%d sitemaps sent, %d tokens of room left; want %d and %d", len(out), len(r.shardRoom), tc.sent, tc.tokens)
			}
		})
	}
}
