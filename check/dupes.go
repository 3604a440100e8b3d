package check

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// Duplicate URLs are found with an external sort of 128-bit fingerprints.
//
// Every URL, normalised by the encoder (so that HTTP://Ex.com/a and
// http://ex.com/a are the same URL), is hashed to 128 bits and recorded with
// where it is (file, line, ordinal in the file): 28 bytes. Records collect in
// memory up to Options.RunRecords (default 1<<20, 32 MiB); then they are
// sorted and written to a temporary file as a run. At the end the runs are
// merged (one 16 KiB read buffer per run) and equal fingerprints are
// duplicates. Memory is RunRecords*32 bytes plus 16 KiB per run, that is
// 32 MiB + 16 KiB per million URLs (a billion URLs: 32 MiB + 16 MiB), and
// disk is 28 bytes per URL. With 128 bits a collision is negligible at any
// set size (about 1e-21 for a billion URLs), so the files are not read a
// second time to confirm the duplicates.
//
// A report names the repeated URL: the texts of the first smallSet URLs
// are kept, and past them an 8 MiB bit set of the fingerprints seen so far
// catches each URL whose fingerprint may have been seen before, whose text
// is then kept too (at most maxDupDetail texts in all). Small sets, as
// generate --verify and the tests check, cost neither the bit set nor the
// run buffer: both grow with the URLs.

// record is one URL's fingerprint and place.
type record struct {
	h, h2           uint64
	file, line, ord uint32
}

const recordSize = 28

// seenBits is the size of the bit set of fingerprints seen (8 MiB).
const seenBits = 1 << 26

// smallSet is the number of URLs whose texts are all kept.
const smallSet = 4096

// place is a URL's file and ordinal: the key of a kept URL text.
type place struct{ file, ord uint32 }

type dupes struct {
	seed, seed2 maphash.Seed
	dir         string
	parts       int // sorts of the in-memory records run at once
	limit       int // records held before a run is spilled

	hashed   atomic.Int64
	seenOnce sync.Once
	seen     []atomic.Uint64 // allocated past smallSet URLs
	tmu      sync.Mutex
	texts    map[place]string // URLs whose fingerprint may have been seen before

	mu   sync.Mutex
	buf  []record
	runs []*os.File
	err  error
}

func newDupes(dir string, runRecords, parts int) *dupes {
	return &dupes{seed: maphash.MakeSeed(), seed2: maphash.MakeSeed(), dir: dir, parts: parts, limit: runRecords,
		buf: make([]record, 0, min(runRecords, smallSet)), texts: map[place]string{}}
}

// hash fingerprints a normalised URL, and keeps its text when the
// fingerprint may have been seen before: it may be a duplicate.
func (d *dupes) hash(b []byte, file, ord uint32, text []byte, domain uint64) (uint64, uint64) {
	h, h2 := maphash.Bytes(d.seed, b)^domain, maphash.Bytes(d.seed2, b)^domain
	if d.hashed.Add(1) <= smallSet {
		d.tmu.Lock()
		d.texts[place{file, ord}] = string(text)
		d.tmu.Unlock()
		return h, h2
	}
	d.seenOnce.Do(func() { d.seen = make([]atomic.Uint64, seenBits/64) })
	bit := h2 & (seenBits - 1)
	mask := uint64(1) << (bit & 63)
	if w := &d.seen[bit>>6]; w.Load()&mask != 0 || w.Or(mask)&mask != 0 {
		d.tmu.Lock()
		if len(d.texts) < maxDupDetail {
			d.texts[place{file, ord}] = string(text)
		}
		d.tmu.Unlock()
	}
	return h, h2
}

// text returns the kept text of a URL of the group, or "".
func (d *dupes) text(rs ...record) string {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	for _, r := range rs {
		if s, ok := d.texts[place{r.file, r.ord}]; ok {
			return s
		}
	}
	return ""
}

// add takes a batch of records, spilling a sorted run when memory is full.
func (d *dupes) add(rs []record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.buf)+len(rs) > cap(d.buf) && cap(d.buf) < d.limit {
		// Past a small set, the whole run buffer at once: growing it by
		// doubling would copy it again and again.
		d.buf = append(make([]record, 0, max(d.limit, len(d.buf)+len(rs))), d.buf...)
	}
	for len(rs) > 0 {
		n := min(len(rs), d.limit-len(d.buf))
		d.buf = append(d.buf, rs[:n]...)
		rs = rs[n:]
		if len(d.buf) >= d.limit && d.err == nil {
			d.err = d.spill()
		}
	}
}

// byHash orders records by fingerprint. (cmp.Or would compute both halves'
// comparisons every time: this is the sort's inner loop.)
func byHash(a, b record) int {
	switch {
	case a.h < b.h:
		return -1
	case a.h > b.h:
		return 1
	case a.h2 < b.h2:
		return -1
	case a.h2 > b.h2:
		return 1
	}
	return 0
}

func (d *dupes) spill() error {
	slices.SortFunc(d.buf, byHash)
	f, err := os.CreateTemp(d.dir, "sitemapgen-urls-*.run")
	if err != nil {
		return fmt.Errorf("duplicate check: %w", err)
	}
	os.Remove(f.Name()) // unlinked: the space is freed when f is closed, even after a crash
	d.runs = append(d.runs, f)
	w := bufio.NewWriterSize(f, 256<<10)
	var b [recordSize]byte
	for _, r := range d.buf {
		putRecord(b[:], r)
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("duplicate check: %w", err)
	}
	d.buf = d.buf[:0]
	return nil
}

func putRecord(b []byte, r record) {
	binary.LittleEndian.PutUint64(b, r.h)
	binary.LittleEndian.PutUint64(b[8:], r.h2)
	binary.LittleEndian.PutUint32(b[16:], r.file)
	binary.LittleEndian.PutUint32(b[20:], r.line)
	binary.LittleEndian.PutUint32(b[24:], r.ord)
}

// cursor reads one sorted run, or the in-memory rest.
type cursor struct {
	cur  record
	r    *bufio.Reader
	mem  []record
	done bool
}

func (c *cursor) next() error {
	if c.r == nil {
		if len(c.mem) == 0 {
			c.done = true
			return nil
		}
		c.cur, c.mem = c.mem[0], c.mem[1:]
		return nil
	}
	var b [recordSize]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			c.done = true
			return nil
		}
		return err
	}
	c.cur = record{binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:]),
		binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:]), binary.LittleEndian.Uint32(b[24:])}
	return nil
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return byHash(h[i].cur, h[j].cur) < 0 }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// maxGroup bounds the records of one fingerprint held at once.
const maxGroup = 4096

// groups merges every run and calls fn with each set of two or more
// records sharing a fingerprint (at most maxGroup of them; extra is the
// count left out). It closes the runs.
func (d *dupes) groups(fn func(g []record, extra int)) error {
	defer d.close()
	if d.err != nil {
		return d.err
	}
	// Sort the records still in memory in parallel parts, merged below
	// with the runs: this sort is on the critical path at the end.
	var cs []*cursor
	var wg sync.WaitGroup
	part := max(len(d.buf)/d.parts+1, 4096)
	for i := 0; i < len(d.buf); i += part {
		m := d.buf[i:min(i+part, len(d.buf))]
		cs = append(cs, &cursor{mem: m})
		wg.Go(func() { slices.SortFunc(m, byHash) })
	}
	wg.Wait()
	h := cursorHeap{}
	for _, f := range d.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
		cs = append(cs, &cursor{r: bufio.NewReaderSize(f, 16<<10)})
	}
	for _, c := range cs {
		if err := c.next(); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
		if !c.done {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var g []record
	extra := 0
	flush := func() {
		if len(g) > 1 {
			fn(g, extra)
		}
		g, extra = g[:0], 0
	}
	for len(h) > 0 {
		c := h[0]
		r := c.cur
		if len(g) > 0 && (g[0].h != r.h || g[0].h2 != r.h2) {
			flush()
		}
		if len(g) < maxGroup {
			g = append(g, r)
		} else {
			extra++
		}
		if err := c.next(); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
		if c.done {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	flush()
	return nil
}

func (d *dupes) close() {
	for _, f := range d.runs {
		f.Close()
	}
	d.runs = nil
	d.buf = nil
	d.seen = nil
}
