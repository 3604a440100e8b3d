// Package extsort sorts encoded sitemap entries by key in bounded memory:
// it holds entries up to a memory budget, spills each full buffer as a
// sorted, s2-compressed run to a temporary folder, and merges the runs into
// one stream in key order, equal keys in input order, optionally keeping
// only the first entry of each key (--sort, --dedup).
//
// Memory is about Options.Memory while entries are added, and FanIn run
// readers of about 100 KiB each while they are merged. Disk is the s2 size
// of the encoded entries (about a third of their size for generated URLs),
// up to twice that during an intermediate merge pass, which only runs with
// more than FanIn runs (FanIn x Memory of entries: 4 GiB by default).
// Temporary files are unlinked as soon as they are created where the
// system allows it, so nothing is left behind even by a crash; Close
// removes any that remain.
//
// Cost: sorting in memory dominates (its key comparisons miss the cache;
// each entry caches the 8 key bytes after the common prefix to avoid most
// of them). Not done yet: sorting and spilling a full buffer in a
// goroutine while the next fills, and sorting parts in parallel as
// check's duplicate finder does.
package extsort

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	Source uint32 // the caller's number for the input the row came from
	Line   int64  // the row's place in Source, for rejects
}

// Key returns e's sort key.
func (e Entry) Key() []byte { return e.Data[e.KeyAt : e.KeyAt+e.KeyLen] }

// Options configure a Sorter. The zero value is usable.
type Options struct {
	// Memory bounds the entries held in memory before a run is spilled,
	// counting their bytes and 56 bytes of bookkeeping each. Default 64 MiB.
	Memory int
	// Dir is where runs are spilled (--tmp). Default os.TempDir().
	Dir string
	// FanIn is the most runs merged at once; more runs are first merged
	// in passes. Default 64.
	FanIn int
	// Dedup keeps the first entry (in input order) of each key; Next
	// still returns the others, with Duplicate reporting true.
	Dedup bool
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
	pfx           uint64 // the 8 key bytes after the keys' common prefix, big-endian, zero-padded
	off, n        uint32
	keyAt, keyLen uint32
	lmAt, source  uint32
	lmLen         uint16
	lmKey, line   int64
}

const recSize = 56

// run is a spilled run: an open, usually unlinked, file.
type run struct {
	f     *os.File
	name  string // set when f could not be unlinked while open
	count int64
	most  int
	size  int64
}

// Sorter sorts entries: Add them all, call Sort, then read them back in
// order with Next and Entry. Close releases its files in every case.
// A Sorter is not safe for concurrent use.
type Sorter struct {
	opt    Options
	arena  arena
	recs   []rec
	runs   []*run
	disk   int64
	stats  Stats
	sorted bool
	err    error

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
		o.FanIn = 64
	}
	return &Sorter{opt: o}
}

// ErrSorted reports an Add after Sort.
var ErrSorted = errors.New("extsort: Add after Sort")

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
	if len(s.recs) > 0 && s.arena.used+len(e.Data)+(len(s.recs)+1)*recSize > s.opt.Memory {
		if s.err = s.spill(); s.err != nil {
			return s.err
		}
	}
	if s.arena.used+len(e.Data)+2*chunkSize > 1<<32-1 {
		return fmt.Errorf("extsort: %d bytes in memory: the budget must be under 4 GiB", s.arena.used+len(e.Data))
	}
	if s.recs == nil {
		// Room for the entries of a full budget of 200-byte entries, so
		// the first run does not grow the slice by doubling copies.
		s.recs = make([]rec, 0, min(s.opt.Memory/(200+recSize), 1<<20))
	}
	off := s.arena.add(e.Data)
	s.recs = append(s.recs, rec{off: uint32(off), n: uint32(len(e.Data)), keyAt: e.KeyAt, keyLen: e.KeyLen,
		lmAt: e.LmAt, lmLen: e.LmLen, source: e.Source, lmKey: e.LmKey, line: e.Line})
	s.stats.Entries++
	s.stats.DataBytes += int64(len(e.Data))
	return nil
}

func (s *Sorter) key(r *rec) []byte {
	return s.arena.bytes(r.off, r.n)[r.keyAt : r.keyAt+r.keyLen]
}

// sortMemory sorts the entries in memory by key, then input order (the
// arena offset grows with it), so equal keys keep their order.
//
// Keys share a long prefix (scheme, host, folder), and reading a key is a
// cache miss in an arena of tens of MiB, so each entry first gets the 8 key
// bytes after the common prefix as a number: most comparisons end there,
// without touching the arena.
func (s *Sorter) sortMemory() {
	if len(s.recs) == 0 {
		return
	}
	first := s.key(&s.recs[0])
	common := len(first)
	for i := 1; i < len(s.recs) && common > 0; i++ {
		k := s.key(&s.recs[i])
		n := min(common, len(k))
		j := 0
		for j < n && k[j] == first[j] {
			j++
		}
		common = j
	}
	for i := range s.recs {
		r := &s.recs[i]
		var b [8]byte
		copy(b[:], s.key(r)[common:])
		r.pfx = binary.BigEndian.Uint64(b[:])
	}
	slices.SortFunc(s.recs, func(a, b rec) int {
		if a.pfx != b.pfx {
			return cmp.Compare(a.pfx, b.pfx)
		}
		if c := bytes.Compare(s.key(&a), s.key(&b)); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
}

func (s *Sorter) entry(r *rec) Entry {
	return Entry{Data: s.arena.bytes(r.off, r.n), KeyAt: r.keyAt, KeyLen: r.keyLen, LmKey: r.lmKey,
		LmAt: r.lmAt, LmLen: r.lmLen, Source: r.source, Line: r.line}
}

// spill writes the entries in memory as a sorted run and empties memory.
func (s *Sorter) spill() error {
	s.sortMemory()
	r, err := s.writeRun(func(w *runWriter) error {
		for i := range s.recs {
			e := s.entry(&s.recs[i])
			if err := w.write(&e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, r)
	s.arena.reset()
	s.recs = s.recs[:0]
	return nil
}

// writeRun creates a temporary file and fills it with fill's records.
func (s *Sorter) writeRun(fill func(*runWriter) error) (*run, error) {
	f, err := os.CreateTemp(s.opt.Dir, "sitemapgen-sort-*.run")
	if err != nil {
		return nil, fmt.Errorf("extsort: %w", err)
	}
	// Unlinked now, the space is freed when f is closed, even after a
	// crash. Where an open file cannot be removed (Windows), Close
	// removes it.
	removed := os.Remove(f.Name()) == nil
	r := &run{f: f}
	cw := &countWriter{w: f}
	w := newRunWriter(cw)
	if err = fill(w); err == nil {
		err = w.close()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
		return nil, fmt.Errorf("extsort: spilling a run: %w", err)
	}
	if !removed {
		r.name = f.Name()
	}
	r.count, r.most, r.size = w.count, w.most, cw.n
	s.stats.Runs++
	s.stats.SpillBytes += cw.n
	s.disk += cw.n
	s.stats.PeakDisk = max(s.stats.PeakDisk, s.disk)
	return r, nil
}

func (s *Sorter) closeRun(r *run) {
	r.f.Close()
	if r.name != "" {
		os.Remove(r.name)
	}
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
// holds); the entries still in memory are sorted there and merged without
// being spilled.
func (s *Sorter) Sort() error {
	if s.err != nil {
		return s.err
	}
	if s.sorted {
		return nil
	}
	s.sorted = true
	s.sortMemory()
	// The in-memory entries count as one input of the final merge.
	for len(s.runs)+1 > s.opt.FanIn {
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
		cs = append(cs, &cursor{order: i, r: newRunReader(r.f, r.count, r.most)})
	}
	cs = append(cs, &cursor{order: len(s.runs), mem: s})
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
		cs = append(cs, &cursor{order: i, r: newRunReader(r.f, r.count, r.most)})
	}
	var m merger
	if err := m.init(cs); err != nil {
		return nil, err
	}
	r, err := s.writeRun(func(w *runWriter) error {
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
	for _, g := range group {
		s.closeRun(g)
	}
	return r, err
}

// start begins the final merge.
func (s *Sorter) start(cs []*cursor) error {
	var m merger
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
	for _, r := range s.runs {
		s.closeRun(r)
	}
	s.runs, s.final = nil, nil
	s.arena, s.recs = arena{}, nil
	s.sorted = true // no more Add
	return nil
}
