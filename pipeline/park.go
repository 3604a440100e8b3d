package pipeline

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sitemapgen/sitemapgen/internal/runs"
	"github.com/sitemapgen/sitemapgen/shard"
)

// parking bounds the memory of a grouped run whatever its groups. A group
// starts parked: its entries wait in memory, in input order, without a
// cutter. Once it holds promoteBytes it goes live (a cutter, cutting as
// rows come) if fewer than maxLive are; the live ones are the few large
// groups, whose open shards (up to --max-bytes each) are all a grouped run
// holds beyond an ungrouped one's. When the parked entries in memory pass
// maxHeld, the largest parked group's are spilled to a temporary file, and
// that group stays parked. Once the input ends, the live groups are flushed
// and the parked ones cut one after another, their spills read back in
// order: each group's cutter sees its entries in input order either way,
// so its shards are those of a run over its rows alone.
type parking struct {
	live, maxLive int
	held, maxHeld int64 // bytes the parked entries hold in memory
	promoteBytes  int
	dir           string
	tmp           *runs.Temp // nil until the first spill
	app           *runs.Appender
	buf           []byte   // a spill's bytes
	ends          []uint32 // a spill's entry ends, read back
	spilled       int64    // bytes written to spills (the report's)
	// blocks gives the parked sets their chunks of its size and takes them
	// back once the sets go live or are spilled: the live sets' sitemaps
	// then fill the same memory (nil: the heap's).
	blocks *shard.Blocks
}

// parkLimits bound a grouped run's memory: the live groups' open shards
// may take live bytes, the parked entries in memory held bytes. (A
// variable: the tests make them small.)
var parkLimits = struct{ live, held int }{live: 128 << 20, held: 64 << 20}

func newParking(cfg Config, blocks *shard.Blocks) parking {
	return parking{maxLive: max(2, parkLimits.live/cfg.MaxBytes), maxHeld: int64(parkLimits.held),
		promoteBytes: cfg.MaxBytes / 8, dir: cfg.TmpDir, blocks: blocks}
}

func (p *parking) close() {
	if p.tmp != nil {
		p.tmp.Close()
	}
}

// route places the entries of b in the sets of their groups, each set's
// in input order. The workers encode a batch's rows group by group, a
// window of rows at a time (encodeRows), so each group's share of a window
// is one run of entries, placed in one go.
func (c *cutStage) route(b *Batch) error {
	ents := shard.Entries{Data: b.Out}
	for from := 0; from < len(b.EntryGroup); {
		g, to := b.EntryGroup[from], runEnd(b.EntryGroup, from)
		ents.Ends = b.Ends[:to]
		if err := c.placeIn(c.sets[g], &ents, from); err != nil {
			return err
		}
		from = to
	}
	if c.r.maxNews == 0 {
		return nil
	}
	news := shard.Entries{Data: b.NewsOut, Ends: b.NewsEnds}
	for k, n := range b.EntryNews {
		if n >= 0 {
			news.Ends = b.NewsEnds[:n+1]
			if err := c.packNews(c.sets[b.EntryGroup[k]], &news, int(n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// runEnd returns the end of the run of entries of one group that starts at
// entry from: a window's entries of a group are one run (encodeGrouped).
func runEnd(entryGroup []int32, from int) int {
	to := from + 1
	for to < len(entryGroup) && entryGroup[to] == entryGroup[from] {
		to++
	}
	return to
}

// placeIn places the entries of ents from entry k on in set: cut if it is
// live, else parked.
func (c *cutStage) placeIn(set *set, ents *shard.Entries, k int) error {
	if set.cutter != nil {
		return c.pack(set, ents, k, false)
	}
	p := &c.park
	was := set.pending.held
	set.pending.add(ents, k, p.blocks)
	p.held += set.pending.held - was
	if len(set.spills) == 0 && set.pending.bytes >= p.promoteBytes && p.live < p.maxLive {
		p.live++
		return c.cutParked(set, true)
	}
	for p.held > p.maxHeld {
		if err := c.spillLargest(); err != nil {
			return err
		}
	}
	return nil
}

// cutParked gives set a cutter and cuts its parked entries, from disk
// and memory, in input order: live, the set goes on cutting as rows come.
func (c *cutStage) cutParked(set *set, live bool) error {
	set.cutter = c.r.newCutter(live)
	p := &c.park
	for _, sp := range set.spills {
		ents, err := p.read(sp)
		if err != nil {
			return err
		}
		if err := c.pack(set, &ents, 0, false); err != nil {
			return err
		}
	}
	set.spills = nil
	pend := set.pending
	set.pending = parked{} // let go: the memory of a long tail
	p.held -= pend.held
	for i := range pend.chunks {
		if err := c.pack(set, &pend.chunks[i], 0, false); err != nil {
			return err
		}
	}
	pend.release(p.blocks)
	return nil
}

// parked is a parked set's entries in memory, in chunks that never move:
// an entry is copied once on its way in. (One slice grown by doubling
// copied a group's entries again at every step, cleared the new room
// first, and left the old arrays to the collector.)
type parked struct {
	chunks []shard.Entries // each chunk's Ends are offsets in its own Data
	bytes  int             // the entries' bytes, in all the chunks
	held   int64           // the memory the chunks hold: their capacity
}

// Chunk sizes: a chunk is twice the size of the one before, from the
// first to the largest, or as large as the entries that start it. With
// blocks, a chunk that would be as large as a block or larger is a block,
// unless the entries that start it need more.
const (
	firstChunk = 4 << 10
	maxChunk   = 1 << 20
)

// add appends the entries of ents from entry k on, in chunks from blocks
// where they are a block's size (see release).
func (pk *parked) add(ents *shard.Entries, k int, blocks *shard.Blocks) {
	start := 0
	if k > 0 {
		start = int(ents.Ends[k-1])
	}
	end := int(ents.Ends[len(ents.Ends)-1])
	n := end - start
	var ch *shard.Entries
	if len(pk.chunks) > 0 {
		ch = &pk.chunks[len(pk.chunks)-1]
	}
	if ch == nil || cap(ch.Data)-len(ch.Data) < n {
		size := firstChunk
		if ch != nil {
			size = min(2*cap(ch.Data), maxChunk)
		}
		size = max(size, n)
		var data []byte
		if blocks != nil && size >= blocks.Size() && n <= blocks.Size() {
			data = blocks.Get()
			size = cap(data)
		} else {
			data = make([]byte, 0, size)
		}
		ends := max(size/128, len(ents.Ends)-k) // entries are rarely under 128 bytes
		pk.chunks = append(pk.chunks, shard.Entries{Data: data, Ends: make([]uint32, 0, ends)})
		pk.held += int64(size + 4*ends)
		ch = &pk.chunks[len(pk.chunks)-1]
	}
	base := len(ch.Data) - start
	ch.Data = append(ch.Data, ents.Data[start:end]...)
	was := cap(ch.Ends)
	for _, e := range ents.Ends[k:] {
		ch.Ends = append(ch.Ends, uint32(int(e)+base))
	}
	pk.held += 4 * int64(cap(ch.Ends)-was)
	pk.bytes += n
}

// release gives the chunks that are blocks back to blocks (nil: none
// are): only they have a block's capacity, since add takes a block for
// every chunk of that size.
func (pk *parked) release(blocks *shard.Blocks) {
	if blocks == nil {
		return
	}
	for _, ch := range pk.chunks {
		if cap(ch.Data) == blocks.Size() {
			blocks.Put(ch.Data)
		}
	}
}

// spillLargest writes the entries of the parked set holding the most to
// the temporary file.
func (c *cutStage) spillLargest() error {
	var big *set
	for _, s := range c.sets {
		if s.cutter == nil && (big == nil || s.pending.held > big.pending.held) {
			big = s
		}
	}
	p := &c.park
	if big == nil || big.pending.bytes == 0 {
		p.held = 0 // nothing parked left to spill: the account is settled
		return nil
	}
	if p.tmp == nil {
		t, err := runs.CreateTemp(p.dir, "sitemapgen-groups-*")
		if err != nil {
			return fmt.Errorf("groups: spill: %w", err)
		}
		p.tmp, p.app = t, runs.NewAppender(t)
	}
	// The ends, as offsets in all the chunks' bytes, then those bytes.
	p.buf = p.buf[:0]
	base, n := uint32(0), 0
	for _, ch := range big.pending.chunks {
		for _, e := range ch.Ends {
			p.buf = binary.LittleEndian.AppendUint32(p.buf, e+base)
		}
		base += uint32(len(ch.Data))
		n += len(ch.Ends)
	}
	if _, err := p.app.Write(p.buf); err != nil {
		return fmt.Errorf("groups: spill: %w", err)
	}
	for _, ch := range big.pending.chunks {
		if _, err := p.app.Write(ch.Data); err != nil {
			return fmt.Errorf("groups: spill: %w", err)
		}
	}
	big.spills = append(big.spills, spill{seg: p.app.EndRun(), n: n})
	p.held -= big.pending.held
	p.spilled += int64(len(p.buf) + big.pending.bytes)
	big.pending.release(p.blocks)
	big.pending = parked{}
	return nil
}

// read reads a spill back; its entries are valid until the next read.
func (p *parking) read(sp spill) (shard.Entries, error) {
	if cap(p.buf) < int(sp.seg.N) {
		p.buf = make([]byte, sp.seg.N)
	}
	p.buf = p.buf[:sp.seg.N]
	if _, err := io.ReadFull(p.app.Open(sp.seg), p.buf); err != nil {
		return shard.Entries{}, fmt.Errorf("groups: read a spill back: %w", err)
	}
	p.ends = p.ends[:0]
	for k := range sp.n {
		p.ends = append(p.ends, binary.LittleEndian.Uint32(p.buf[4*k:]))
	}
	return shard.Entries{Data: p.buf[4*sp.n:], Ends: p.ends}, nil
}

// finishGroups flushes the live sets, then cuts and flushes the parked
// ones, one after another, in name order.
func (c *cutStage) finishGroups() error {
	sets := c.r.groups.all()
	c.sets = c.r.groups.snapshot(c.sets)
	for _, s := range sets {
		if s.cutter == nil {
			continue
		}
		if err := c.flushGroup(s); err != nil {
			return err
		}
	}
	for _, s := range sets {
		if s.cutter != nil {
			continue
		}
		if err := c.cutParked(s, false); err != nil {
			return err
		}
		if err := c.flushGroup(s); err != nil {
			return err
		}
	}
	return nil
}

// flushGroup flushes set and takes room for each sitemap that sent on (a
// shard, a news sitemap, both or neither): one token for each sitemap in
// flight, as pack takes. A set that sent nothing (no open shard: no URL
// accepted, or its last entry ended its last shard) used no room: taking
// some would leave a token no compressed sitemap gives back, and a few
// such groups would leave the cutter waiting for room forever; one token
// for two sitemaps would let the sitemaps in flight grow by one a group.
func (c *cutStage) flushGroup(set *set) error {
	sent, err := c.flush(set)
	for range sent {
		if err != nil {
			break
		}
		err = c.room()
	}
	return err
}

// snapshot returns the sets by index into buf, for the cut stage to read
// without the lock while the workers add groups.
func (gs *groups) snapshot(buf []*set) []*set {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return append(buf[:0], gs.sets...)
}
