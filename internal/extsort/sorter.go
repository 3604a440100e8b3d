// Package extsort sorts encoded sitemap entries by key in bounded memory:
// it holds entries up to a memory budget, spills each full buffer as a
// sorted, s2-compressed run to a temporary folder, and merges the runs into
// one stream in key order, optionally keeping only the first entry of each
// key (--sort, --dedup). Entries with equal keys come in an order that
// depends on them alone (TieContent: the newest lastmod first, then the
// smallest entry), so the output is a function of the entries, not of
// their input order; TieInput keeps input order instead.
//
// Memory is about Options.Memory while entries are added (three buffers of
// a third of the budget: one fills while the others are sorted and spilled,
// in parallel), and at most FanIn run readers of about 150 KiB each while
// they are merged (the buffers are released first). Disk is the s2 size of
// the encoded entries (about a third of their size for generated URLs), up
// to twice that during an intermediate merge pass, which only runs with
// more than FanIn runs (FanIn x Memory/3 of entries: 2.7 GiB by default).
// Temporary files are unlinked as soon as they are created where the
// system allows it, so nothing is left behind even by a crash; Close
// removes any that remain.
//
// Cost: a full buffer is sorted and spilled in a goroutine while Add fills
// another, its two halves sorted in parallel and merged, then gathered in
// key order while the previous block is compressed. The sort moves compact
// 24-byte items (the 16 key bytes after the keys' common prefix and the
// entry's index), so most comparisons and every swap stay in a small array
// instead of reading keys all over the arena (cache misses); only equal
// 16-byte prefixes compare the keys.
package extsort

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/sitemapgen/sitemapgen/internal/runs"
)

// Entry is one record: an encoded entry and what the cutter and the
// rejects need to know about it. Its byte slices are views: Add copies
// them, and an Entry returned by Sorter.Entry is valid until the next call
// to Next.
type Entry struct {
	Data   []byte // the encoded <url> entry
	KeyAt  uint32 // the sort key is Data[KeyAt:KeyAt+KeyLen]: the normalised loc
	KeyLen uint32
	LmKey  int64  // the entry's newest-lastmod key (shard.NoLastmod for none)
	LmAt   uint32 // its lastmod text is Data[LmAt:LmAt+LmLen]
	LmLen  uint16
	// Split, when not 0, ends the entry proper: Data[Split:] is a second
	// record carried with it (the row's news entry), sorted and kept or
	// dropped as one with it.
	Split  uint32
	Source uint32 // the caller's number for the input the row came from
	Line   int64  // the row's place in Source, for rejects
}

// Key returns e's sort key.
func (e Entry) Key() []byte { return e.Data[e.KeyAt : e.KeyAt+e.KeyLen] }

// Options configure a Sorter. The zero value is usable.
type Options struct {
	// Memory bounds the entries held in memory, counting their bytes and
	// recSize bytes of bookkeeping each: two buffers of half of it, one
	// filling while the other is spilled. Default 64 MiB.
	Memory int
	// Dir is where runs are spilled (--tmp). Default os.TempDir().
	Dir string
	// FanIn is the most runs merged at once; more runs are first merged
	// in passes. Default 128.
	FanIn int
	// Dedup keeps the first entry of each key in the order Ties sets;
	// Next still returns the others, with Duplicate reporting true.
	Dedup bool
	// Ties orders entries with equal keys (and so chooses the one Dedup
	// keeps). The zero value, TieContent, depends on the entries alone.
	Ties TieOrder
}

// TieOrder is how entries with equal keys are ordered.
type TieOrder uint8

const (
	// TieContent: the newest lastmod first (LmKey, descending; none is
	// oldest), then the smallest Data (bytes.Compare), so two inputs holding
	// the same entries in any order give the same output; Dedup keeps the
	// newest version of a page, whatever the export's order.
	TieContent TieOrder = iota
	// TieInput: input order (the order of Add), as before TieContent.
	TieInput
)

// tie orders two entries with equal keys by content: the newest lastmod
// first, then the smallest bytes.
func tie(lmA int64, a []byte, lmB int64, b []byte) int {
	if lmA != lmB {
		return cmp.Compare(lmB, lmA)
	}
	return bytes.Compare(a, b)
}

// Stats describe what a Sorter did.
type Stats struct {
	Entries    int64 // added
	Runs       int   // spilled, the intermediate passes' runs included
	Passes     int   // intermediate merge passes (0 when the runs fit FanIn)
	DataBytes  int64 // bytes of Data added
	SpillBytes int64 // compressed bytes written to Dir, every pass included
	PeakDisk   int64 // most compressed bytes in Dir at once
	Duplicates int64 // entries Next reported as duplicates
}

// rec is an entry held in memory: its Data is at arena offset off.
type rec struct {
	off, n        uint32
	keyAt, keyLen uint32
	lmAt, source  uint32
	lmLen         uint16
	split         uint32
	lmKey, line   int64
}

// item is what the in-memory sort moves: the 16 key bytes after the
// buffer's common key prefix (big-endian, zero-padded) and the index of
// the rec, which is also its input order.
type item struct {
	k0, k1 uint64
	i      uint32
}

// recSize is the bookkeeping an entry costs in memory: its rec (48
// bytes), its item (24) and its place in the sorted order (4).
const recSize = 80

// buffer is one of the two sets of entries in memory: filled by Add,
// then sorted and spilled (or, the last, merged from memory).
type buffer struct {
	arena  arena
	recs   []rec
	items  []item
	order  []uint32 // rec indexes in key order, once sorted
	common int      // length of the keys' common prefix, once sorted
}

// spilled is what a background spill returns.
type spilled struct {
	r   *run
	err error
	buf *buffer    // emptied, for the next entries
	w   *runWriter // for the next run
}

// buffers is how many buffers share Options.Memory: one fills while the
// others are sorted and spilled, in parallel. With two, one spill at a time
// (sort, then gather and compress) was the add phase's critical path: the
// cut waited 5.4 of 8.1 s at 10M rows.
const buffers = 3

// run is a spilled run: an open, unlinked file.
type run struct {
	f     *runs.Temp
	count int64
	most  int
	size  int64
	last  []byte // its greatest key
}

// Sorter sorts entries: Add them all, call Sort, then read them back in
// order with Next and Entry. Close releases its files in every case.
// A Sorter is not safe for concurrent use.
type Sorter struct {
	opt     Options
	buf     *buffer        // filling
	free    []*buffer      // empty
	pending []chan spilled // the spills in flight, oldest first
	writers []*runWriter   // idle, reused by the runs to come
	runs    []*run
	disk    int64
	stats   Stats
	sorted  bool
	err     error

	// Reading back.
	final    *merger
	cur      Entry
	dup      bool
	prev     []byte // key of the last entry returned that was not a duplicate
	havePrev bool
}

// New returns a Sorter with the options o (zero fields take defaults).
func New(o Options) *Sorter {
	if o.Memory <= 0 {
		o.Memory = 64 << 20
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.FanIn < 2 {
		o.FanIn = 128
	}
	return &Sorter{opt: o, buf: &buffer{}, free: newBuffers()}
}

// ErrSorted reports an Add after Sort.
var ErrSorted = errors.New("extsort: Add after Sort")

// newBuffers returns the empty buffers besides the one filling.
func newBuffers() []*buffer {
	free := make([]*buffer, buffers-1)
	for i := range free {
		free[i] = &buffer{}
	}
	return free
}

// Add copies e into the sorter, spilling a sorted run first when the
// memory budget is full. Its key must lie within Data.
func (s *Sorter) Add(e Entry) error {
	if s.err != nil {
		return s.err
	}
	if s.sorted {
		return ErrSorted
	}
	if uint64(e.KeyAt)+uint64(e.KeyLen) > uint64(len(e.Data)) || int(e.LmAt)+int(e.LmLen) > len(e.Data) {
		return fmt.Errorf("extsort: entry of %d bytes with key at %d+%d, lastmod at %d+%d", len(e.Data), e.KeyAt, e.KeyLen, e.LmAt, e.LmLen)
	}
	b := s.buf
	if len(b.recs) > 0 && b.arena.used+len(e.Data)+(len(b.recs)+1)*recSize > s.opt.Memory/buffers {
		if s.err = s.spill(); s.err != nil {
			return s.err
		}
		b = s.buf
	}
	if b.arena.used+len(e.Data)+2*chunkSize > 1<<32-1 {
		return fmt.Errorf("extsort: %d bytes in memory: the budget must be under 8 GiB", b.arena.used+len(e.Data))
	}
	if b.recs == nil {
		// Room for the entries of a full buffer of 200-byte entries, so
		// the first run does not grow the slice by doubling copies.
		b.recs = make([]rec, 0, min(s.opt.Memory/buffers/(200+recSize), 1<<20))
	}
	off := b.arena.add(e.Data)
	b.recs = append(b.recs, rec{off: uint32(off), n: uint32(len(e.Data)), keyAt: e.KeyAt, keyLen: e.KeyLen,
		lmAt: e.LmAt, lmLen: e.LmLen, split: e.Split, source: e.Source, lmKey: e.LmKey, line: e.Line})
	s.stats.Entries++
	s.stats.DataBytes += int64(len(e.Data))
	return nil
}

func (b *buffer) key(r *rec) []byte {
	return b.arena.bytes(r.off, r.n)[r.keyAt : r.keyAt+r.keyLen]
}

// sort orders the buffer's entries by key, then as ties says (TieInput:
// input order, the rec index), into b.order.
//
// Keys share a long prefix (scheme, host, folder), and reading a key is a
// cache miss in an arena of tens of MiB, so each entry first gets the 16
// key bytes after the common prefix as two numbers, and the sort moves
// those compact items: most comparisons end there, without touching the
// arena. Two halves are sorted in parallel, then merged.
func (b *buffer) sort(ties TieOrder) {
	n := len(b.recs)
	b.order = b.order[:0]
	if n == 0 {
		return
	}
	first := b.key(&b.recs[0])
	common := len(first)
	for i := 1; i < n && common > 0; i++ {
		k := b.key(&b.recs[i])
		m := min(common, len(k))
		j := 0
		for j < m && k[j] == first[j] {
			j++
		}
		common = j
	}
	b.common = common
	b.items = slices.Grow(b.items[:0], n)[:n]
	for i := range b.recs {
		var k [16]byte
		copy(k[:], b.key(&b.recs[i])[common:])
		b.items[i] = item{k0: binary.BigEndian.Uint64(k[:8]), k1: binary.BigEndian.Uint64(k[8:]), i: uint32(i)}
	}
	cmpItem := func(x, y item) int {
		if x.k0 != y.k0 {
			return cmp.Compare(x.k0, y.k0)
		}
		if x.k1 != y.k1 {
			return cmp.Compare(x.k1, y.k1)
		}
		rx, ry := &b.recs[x.i], &b.recs[y.i]
		if c := bytes.Compare(b.key(rx)[common:], b.key(ry)[common:]); c != 0 {
			return c
		}
		if ties == TieContent {
			if c := tie(rx.lmKey, b.arena.bytes(rx.off, rx.n), ry.lmKey, b.arena.bytes(ry.off, ry.n)); c != 0 {
				return c
			}
		}
		return cmp.Compare(x.i, y.i)
	}
	b.order = slices.Grow(b.order, n)
	if n < 1<<12 {
		slices.SortFunc(b.items, cmpItem)
		for _, it := range b.items {
			b.order = append(b.order, it.i)
		}
		return
	}
	lo, hi := b.items[:n/2], b.items[n/2:]
	done := make(chan struct{})
	go func() {
		slices.SortFunc(hi, cmpItem)
		close(done)
	}()
	slices.SortFunc(lo, cmpItem)
	<-done
	for len(lo) > 0 && len(hi) > 0 {
		if cmpItem(hi[0], lo[0]) < 0 {
			b.order = append(b.order, hi[0].i)
			hi = hi[1:]
		} else {
			b.order = append(b.order, lo[0].i)
			lo = lo[1:]
		}
	}
	for _, it := range lo {
		b.order = append(b.order, it.i)
	}
	for _, it := range hi {
		b.order = append(b.order, it.i)
	}
}

// lastKey is the greatest key of the sorted buffer (nil when empty).
func (b *buffer) lastKey() []byte {
	if len(b.order) == 0 {
		return nil
	}
	return b.key(&b.recs[b.order[len(b.order)-1]])
}

func (b *buffer) entry(r *rec) Entry {
	return Entry{Data: b.arena.bytes(r.off, r.n), KeyAt: r.keyAt, KeyLen: r.keyLen, LmKey: r.lmKey,
		LmAt: r.lmAt, LmLen: r.lmLen, Split: r.split, Source: r.source, Line: r.line}
}

// reset empties the buffer, keeping its memory.
func (b *buffer) reset() {
	b.arena.reset()
	b.recs, b.order = b.recs[:0], b.order[:0]
}

// spill hands the full buffer to a goroutine that sorts it and writes it
// as a run, and goes on with an empty buffer, once the oldest spill is done
// if every other buffer is being spilled: memory stays the buffers'.
func (s *Sorter) spill() error {
	if len(s.free) == 0 {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	full := s.buf
	s.buf, s.free = s.free[len(s.free)-1], s.free[:len(s.free)-1]
	var w *runWriter
	if n := len(s.writers); n > 0 {
		w, s.writers = s.writers[n-1], s.writers[:n-1]
	}
	done := make(chan spilled, 1)
	s.pending = append(s.pending, done)
	go func() {
		full.sort(s.opt.Ties)
		r, w, err := s.writeRun(w, func(w *runWriter) error {
			for _, i := range full.order {
				e := full.entry(&full.recs[i])
				if err := w.write(&e); err != nil {
					return err
				}
			}
			return nil
		})
		full.reset()
		done <- spilled{r, err, full, w}
	}()
	return nil
}

// waitOldest waits for the oldest spill in flight and records its run:
// runs are recorded in input order, which the merge keeps among equal
// keys.
func (s *Sorter) waitOldest() error {
	sp := <-s.pending[0]
	s.pending = s.pending[1:]
	s.free = append(s.free, sp.buf)
	if sp.w != nil {
		s.writers = append(s.writers, sp.w)
	}
	if sp.err != nil {
		return sp.err
	}
	s.addRun(sp.r)
	return nil
}

// wait waits for every spill in flight.
func (s *Sorter) wait() error {
	for len(s.pending) > 0 {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// addRun adds a spilled run to s's.
func (s *Sorter) addRun(r *run) {
	s.runs = append(s.runs, r)
	s.count(r)
}

// count counts a new run in the stats.
func (s *Sorter) count(r *run) {
	s.stats.Runs++
	s.stats.SpillBytes += r.size
	s.disk += r.size
	s.stats.PeakDisk = max(s.stats.PeakDisk, s.disk)
}

// writeRun creates a temporary file in s's folder and fills it with fill's
// records through w (a new writer if nil), which it returns for reuse.
func (s *Sorter) writeRun(w *runWriter, fill func(*runWriter) error) (*run, *runWriter, error) {
	f, err := runs.CreateTemp(s.opt.Dir, "sitemapgen-sort-*.run")
	if err != nil {
		return nil, w, fmt.Errorf("extsort: %w", err)
	}
	r := &run{f: f}
	cw := &countWriter{w: f}
	if w == nil {
		w = newRunWriter(cw)
	} else {
		w.reset(cw)
	}
	err = fill(w)
	if cerr := w.close(); cerr != nil {
		err = cerr // the cause, where fill saw errBlock
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, w, fmt.Errorf("extsort: spilling a run: %w", err)
	}
	r.count, r.most, r.size = w.count, w.most, cw.n
	r.last = bytes.Clone(w.last)
	return r, w, nil
}

func (s *Sorter) closeRun(r *run) {
	r.f.Close()
	s.disk -= r.size
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// Sort ends the input and prepares the merge: runs beyond FanIn are merged
// in passes (consecutive runs together, so input order among equal keys
// holds). Entries that never filled a buffer are sorted in memory and not
// spilled; once a run was spilled, the last entries are spilled too and the
// buffers released, so the merge holds only its readers.
func (s *Sorter) Sort() error {
	if s.err != nil {
		return s.err
	}
	if s.sorted {
		return nil
	}
	s.sorted = true
	if err := s.wait(); err != nil {
		s.err = err
		return err
	}
	inMemory := len(s.runs) == 0
	if !inMemory {
		// Spill the last entries too and let both buffers go: the merge
		// then holds only its run readers, so memory does not grow with
		// the number of runs on top of the buffers' budget, and the
		// stages after the sort (the cut, the compressors) reuse it.
		if len(s.buf.recs) > 0 {
			if err := s.spill(); err != nil {
				s.err = err
				return err
			}
			if err := s.wait(); err != nil {
				s.err = err
				return err
			}
		}
		s.buf, s.free = &buffer{}, nil
		// A collection now makes the buffers' memory free for the merge's
		// readers and whatever follows: otherwise they are allocated
		// beside it until the next collection, whose goal the buffers
		// set, and the peak grows with the number of runs.
		runtime.GC()
	} else {
		s.buf.sort(s.opt.Ties)
	}
	// The in-memory entries, if any, count as one input of the final merge.
	extra := 0
	if inMemory {
		extra = 1
	}
	for len(s.runs)+extra > s.opt.FanIn {
		s.stats.Passes++
		var next []*run
		for i := 0; i < len(s.runs); i += s.opt.FanIn {
			group := s.runs[i:min(i+s.opt.FanIn, len(s.runs))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			r, err := s.mergeRuns(group)
			if err != nil {
				s.err = err
				return err
			}
			next = append(next, r)
		}
		s.runs = next
	}
	var cs []*cursor
	for i, r := range s.runs {
		if _, err := r.f.Seek(0, io.SeekStart); err != nil {
			s.err = fmt.Errorf("extsort: %w", err)
			return s.err
		}
		cs = append(cs, &cursor{order: i, r: newRunReader(r.f, r.count, r.most), last: r.last})
	}
	if inMemory {
		cs = append(cs, &cursor{order: len(s.runs), mem: s.buf, last: s.buf.lastKey()})
	}
	if err := s.start(cs); err != nil {
		s.err = err
		return err
	}
	return nil
}

// mergeRuns merges group into one new run and closes group's files.
func (s *Sorter) mergeRuns(group []*run) (*run, error) {
	var cs []*cursor
	for i, r := range group {
		if _, err := r.f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("extsort: %w", err)
		}
		cs = append(cs, &cursor{order: i, r: newRunReader(r.f, r.count, r.most), last: r.last})
	}
	m := merger{ties: s.opt.Ties}
	if err := m.init(cs); err != nil {
		return nil, err
	}
	var w *runWriter
	if n := len(s.writers); n > 0 {
		w, s.writers = s.writers[n-1], s.writers[:n-1]
	}
	r, w, err := s.writeRun(w, func(w *runWriter) error {
		for {
			c, err := m.next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := w.write(c.entry()); err != nil {
				return err
			}
		}
	})
	s.writers = append(s.writers, w)
	if err == nil {
		s.count(r) // before the group is closed: both are on disk at the peak
	}
	for _, g := range group {
		s.closeRun(g)
	}
	return r, err
}

// start begins the final merge.
func (s *Sorter) start(cs []*cursor) error {
	m := merger{ties: s.opt.Ties}
	if err := m.init(cs); err != nil {
		return err
	}
	s.final = &m
	return nil
}

// Next advances to the next entry in order and reports whether there is
// one; at the end or on an error it returns false (see Err).
func (s *Sorter) Next() bool {
	if s.err != nil || s.final == nil {
		return false
	}
	c, err := s.final.next()
	if err != nil {
		if err != io.EOF {
			s.err = err
		}
		s.final = nil
		return false
	}
	s.cur = *c.entry()
	key := s.cur.Key()
	s.dup = s.opt.Dedup && s.havePrev && bytes.Equal(key, s.prev)
	if s.dup {
		s.stats.Duplicates++
	} else if s.opt.Dedup {
		s.prev, s.havePrev = append(s.prev[:0], key...), true
	}
	return true
}

// Entry returns the current entry; its Data is valid until the next call
// to Next.
func (s *Sorter) Entry() Entry { return s.cur }

// Duplicate reports whether the current entry repeats the key of an entry
// earlier in the input (only with Options.Dedup): the caller rejects it.
func (s *Sorter) Duplicate() bool { return s.dup }

// Err returns the first error met, if any.
func (s *Sorter) Err() error { return s.err }

// Stats reports what s has done so far.
func (s *Sorter) Stats() Stats { return s.stats }

// Close releases s's temporary files and memory. It is safe to call more
// than once, and at any point.
func (s *Sorter) Close() error {
	for _, p := range s.pending {
		if sp := <-p; sp.r != nil {
			s.runs = append(s.runs, sp.r)
		}
	}
	s.pending = nil
	for _, r := range s.runs {
		s.closeRun(r)
	}
	s.runs, s.final, s.writers = nil, nil, nil
	s.buf, s.free = &buffer{}, nil
	s.sorted = true // no more Add
	return nil
}
