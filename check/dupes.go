package check

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sitemapgen/sitemapgen/internal/runs"
)

// Duplicate URLs are found with an external sort of 128-bit fingerprints.
//
// Every URL, normalised by the encoder (so that HTTP://Ex.com/a and
// http://ex.com/a are the same URL), is hashed to 128 bits and recorded with
// where it is (file, line, ordinal in the file): 28 bytes. Records collect in
// a buffer of Options.RunRecords (default 1<<19, 16 MiB); a full buffer is
// handed to a goroutine that sorts it and writes it to a temporary file as
// a run, while the workers fill a second buffer. At the end the runs are
// merged (one 16 KiB block read at a time per run and per core: the merge
// is split among the cores by fingerprint range) and equal fingerprints are
// duplicates. Memory is two buffers (32 MiB) plus 16 KiB per run and core,
// that is 16 KiB per half a million URLs and core (a billion URLs on two
// cores: 32 MiB + 64 MiB), and disk
// is 28 bytes per URL. With 128 bits a collision is negligible at any set
// size (about 1e-21 for a billion URLs), so the files are not read a second
// time to confirm the duplicates.
//
// A run is sorted by a radix pass on the fingerprint's top bits, which
// leaves buckets of a few hundred records (they fit the cache), each then
// sorted by comparison: the fingerprints are uniform, so the buckets are
// even.
//
// A report names the repeated URL: the texts of the first smallSet URLs
// are kept, and past them an 8 MiB bit set of the fingerprints seen so far
// catches each URL whose fingerprint may have been seen before, whose text
// is then kept too (at most maxDupDetail texts in all). The bit set is
// looked up a batch of URLs at a time, under the lock the batch is filed
// with, so that its cache misses overlap and no atomic is needed.
// Small sets, as generate --verify and the tests check, cost neither the
// bit set nor the run buffers: both grow with the URLs.
//
// The spill and the merge (spill, runs, groups) are one piece apart from
// the fingerprints and texts, the same "sorted runs on disk, then a k-way
// merge" as internal/extsort and internal/hreflang.

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

// batch is the records of one parser not yet handed over, with the text of
// each URL (texts[ends[i-1]:ends[i]]), so that the bit set is looked up for
// all of them at once.
type batch struct {
	recs  []record
	texts []byte
	ends  []int
}

func (b *batch) reset() { b.recs, b.texts, b.ends = b.recs[:0], b.texts[:0], b.ends[:0] }

func (b *batch) add(r record, text []byte) {
	b.recs = append(b.recs, r)
	b.texts = append(b.texts, text...)
	b.ends = append(b.ends, len(b.texts))
}

func (b *batch) text(i int) []byte {
	from := 0
	if i > 0 {
		from = b.ends[i-1]
	}
	return b.texts[from:b.ends[i]]
}

// batchLen is the records a parser collects before handing them over.
const batchLen = 4096

type dupes struct {
	fp func([]byte) (uint64, uint64) // the fingerprint of a normalised URL

	hashed atomic.Int64
	tmu    sync.Mutex
	texts  map[place]string // URLs whose fingerprint may have been seen before

	mu    sync.Mutex
	seen  []uint64 // allocated past smallSet URLs; guarded by mu
	buf   []record
	spill *spill
}

func newDupes(dir string, runRecords, parts int, fp func([]byte) (uint64, uint64)) *dupes {
	return &dupes{fp: fp, spill: newSpill(dir, runRecords, parts), buf: make([]record, 0, min(runRecords, smallSet)),
		texts: map[place]string{}}
}

// hash fingerprints a normalised URL, apart in its domain (0, or newsDomain).
func (d *dupes) hash(b []byte, domain uint64) (uint64, uint64) {
	h, h2 := d.fp(b)
	return h ^ domain, h2 ^ domain
}

// add takes a parser's batch: it keeps the texts of the URLs that may be
// repeats, then files the records.
func (d *dupes) add(b *batch) {
	if len(b.recs) == 0 {
		return
	}
	n := int(d.hashed.Add(int64(len(b.recs))))
	first := max(len(b.recs)-max(n-smallSet, 0), 0) // records among the first smallSet: texts kept
	if first > 0 {
		d.tmu.Lock()
		for i, r := range b.recs[:first] {
			d.texts[place{r.file, r.ord}] = string(b.text(i))
		}
		d.tmu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if first < len(b.recs) {
		if d.seen == nil {
			d.seen = make([]uint64, seenBits/64)
		}
		// Plain test-and-set, no atomics: the batch's lookups are
		// independent, so their cache misses overlap.
		for i := first; i < len(b.recs); i++ {
			bit := b.recs[i].h2 & (seenBits - 1)
			w, mask := &d.seen[bit>>6], uint64(1)<<(bit&63)
			if *w&mask == 0 {
				*w |= mask
				continue
			}
			d.tmu.Lock()
			if len(d.texts) < maxDupDetail {
				d.texts[place{b.recs[i].file, b.recs[i].ord}] = string(b.text(i))
			}
			d.tmu.Unlock()
		}
	}
	d.buf = d.spill.add(d.buf, b.recs)
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

// groups merges the fingerprints and calls fn with each set of records
// sharing one (at most maxGroup of them; extra is the count left out),
// single URLs too when singles is set.
//
// A group cut at maxGroup still holds the earliest record of its URL by
// earlier (nil: any), the place the others are reported against.
func (d *dupes) groups(singles bool, earlier func(a, b record) bool, fn func(g []record, extra int)) error {
	d.mu.Lock()
	buf := d.buf
	d.buf = nil
	d.mu.Unlock()
	return d.spill.groups(buf, singles, earlier, fn)
}

// addTo adds r to g, a group of one fingerprint: past maxGroup records r
// is counted in extra instead. With earlier, g[0] is kept the earliest of
// all the records seen, even past maxGroup: a URL listed 5,000 times is
// reported against its first place, not against one of the first 4,096
// records the merge happened to meet.
func addTo(g []record, r record, extra *int, earlier func(a, b record) bool) []record {
	first := earlier != nil && len(g) > 0 && earlier(r, g[0])
	switch {
	case len(g) < maxGroup && first:
		g = append(g, g[0])
		g[0] = r
	case len(g) < maxGroup:
		g = append(g, r)
	case first:
		*extra++ // the record g[0] held
		g[0] = r
	default:
		*extra++
	}
	return g
}

func (d *dupes) close() {
	d.mu.Lock()
	d.buf, d.seen = nil, nil
	d.mu.Unlock()
	d.spill.close()
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

// sortRecords sorts rs by fingerprint: in-place radix passes (American
// flag sort) of at most 8 bits on the top bits of h, most significant
// first, until the buckets hold about 32 records, then each bucket by
// insertion (by comparison past smallBucket records: a bucket of repeats).
// A pass of 256 buckets keeps its 256 write positions in the cache, where
// one pass of 2^14 buckets missed it on nearly every record. After the
// first pass the buckets are split among parts goroutines.
func sortRecords(rs []record) { sortRecordsParts(rs, 1) }

// smallBucket is the most records of a bucket sorted by insertion.
const smallBucket = 96

func sortRecordsParts(rs []record, parts int) {
	if len(rs) <= 4*32 {
		sortBucket(rs)
		return
	}
	const shift = 64 - 8
	ends := flagPass(rs, shift, 8)
	// Part k sorts the buckets that end in its share of rs.
	var wg sync.WaitGroup
	from := 0
	for k := 1; k <= parts && from < len(ends); k++ {
		to := len(ends) - 1
		if k < parts {
			to = min(max(from, sort.SearchInts(ends[:], len(rs)*k/parts)), to)
		}
		buckets := ends[from : to+1]
		start := 0
		if from > 0 {
			start = ends[from-1]
		}
		wg.Go(func() {
			for _, end := range buckets {
				sortRadix(rs[start:end], shift)
				start = end
			}
		})
		from = to + 1
	}
	wg.Wait()
}

// sortRadix sorts rs, whose fingerprints share their bits above shift.
func sortRadix(rs []record, shift uint) {
	if len(rs) <= 32 || shift == 0 {
		sortBucket(rs)
		return
	}
	bits := uint(1)
	for len(rs)>>bits > 32 && bits < 8 && bits < shift {
		bits++
	}
	shift -= bits
	ends := flagPass(rs, shift, bits)
	start := 0
	for _, end := range ends[:1<<bits] {
		sortRadix(rs[start:end], shift)
		start = end
	}
}

// flagPass moves each record of rs to the bucket of its bits
// h>>shift&(1<<bits-1), in place, and returns the buckets' ends.
func flagPass(rs []record, shift, bits uint) (ends [256]int) {
	mask := uint64(1)<<bits - 1
	var next [256]int
	for i := range rs {
		ends[rs[i].h>>shift&mask]++
	}
	sum := 0
	for b, n := range ends[:1<<bits] {
		next[b] = sum
		sum += n
		ends[b] = sum
	}
	for b := range 1 << bits {
		for next[b] < ends[b] {
			r := rs[next[b]]
			for d := int(r.h >> shift & mask); d != b; d = int(r.h >> shift & mask) {
				rs[next[d]], r = r, rs[next[d]]
				next[d]++
			}
			rs[next[b]] = r
			next[b]++
		}
	}
	return ends
}

// sortBucket sorts a bucket of the radix pass: by insertion when it is
// small, as the uniform fingerprints make nearly all of them.
func sortBucket(rs []record) {
	if len(rs) > smallBucket {
		slices.SortFunc(rs, byHash)
		return
	}
	for i := 1; i < len(rs); i++ {
		r := rs[i]
		j := i
		for ; j > 0 && (rs[j-1].h > r.h || rs[j-1].h == r.h && rs[j-1].h2 > r.h2); j-- {
			rs[j] = rs[j-1]
		}
		rs[j] = r
	}
}

// spill is the spill and merge of the records, on internal/runs: full
// buffers go to a runs.Spiller, which sorts and writes them as runs to one
// unlinked temporary file in a goroutine of its own while the caller fills
// the other buffer; groups merges the runs with the records still in
// memory.
type spill struct {
	limit int // records per buffer
	parts int // sorts of the in-memory rest run at once
	sp    *runs.Spiller[record]
}

func newSpill(dir string, limit, parts int) *spill {
	return &spill{limit: limit, parts: parts, sp: runs.NewSpiller("duplicate check", dir, "sitemapgen-urls-*.run", sortRecords,
		func(dst []byte, r record) []byte {
			var b [recordSize]byte
			putRecord(b[:], r)
			return append(dst, b[:]...)
		})}
}

// add appends rs to buf and returns it; a full buffer goes to the spiller
// and an empty one comes back (waiting, without spinning, while the
// spiller still holds both).
func (s *spill) add(buf, rs []record) []record {
	if len(buf)+len(rs) > cap(buf) && cap(buf) < s.limit {
		// Past a small set, the whole run buffer at once: growing it by
		// doubling would copy it again and again.
		buf = append(make([]record, 0, max(s.limit, len(buf)+len(rs))), buf...)
	}
	for len(rs) > 0 {
		n := min(len(rs), s.limit-len(buf))
		buf = append(buf, rs[:n]...)
		rs = rs[n:]
		if len(buf) >= s.limit {
			buf, _ = s.sp.Hand(buf) // its error is Stop's
		}
	}
	return buf
}

// stop waits for the spiller and returns its error.
func (s *spill) stop() error { return s.sp.Stop() }

func putRecord(b []byte, r record) {
	binary.LittleEndian.PutUint64(b, r.h)
	binary.LittleEndian.PutUint64(b[8:], r.h2)
	binary.LittleEndian.PutUint32(b[16:], r.file)
	binary.LittleEndian.PutUint32(b[20:], r.line)
	binary.LittleEndian.PutUint32(b[24:], r.ord)
}

// cursor reads one sorted run, or the in-memory rest. A run is read a
// block of whole records at a time (one read, no copy per record).
type cursor struct {
	cur  record
	r    io.Reader
	blk  []byte // the block read; blk[off:] not yet decoded
	off  int    // in blk, or in mem for the records in memory
	mem  []record
	done bool
}

// cursorBlock is the bytes a cursor reads at a time: whole records.
const cursorBlock = 16 << 10 / recordSize * recordSize

func (c *cursor) next() error {
	if c.r == nil {
		c.done = c.off == len(c.mem)
		if !c.done {
			c.cur = c.mem[c.off]
			c.off++
		}
		return nil
	}
	if c.off+recordSize > len(c.blk) {
		if c.blk == nil {
			c.blk = make([]byte, cursorBlock)
		}
		n, err := io.ReadFull(c.r, c.blk[:cursorBlock])
		switch {
		case n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF):
			c.done = true
			return nil
		case n%recordSize != 0:
			return fmt.Errorf("a run ends inside a record: %w", io.ErrUnexpectedEOF)
		case err != nil && err != io.ErrUnexpectedEOF:
			return err
		}
		c.blk, c.off = c.blk[:n], 0
	}
	b := c.blk[c.off : c.off+recordSize]
	c.off += recordSize
	c.cur = record{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]),
		binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:]), binary.LittleEndian.Uint32(b[24:])}
	return nil
}

// maxGroup bounds the records of one fingerprint held at once.
const maxGroup = 4096

// groups merges every run with the records still in memory (rest) and
// calls fn with each set of records sharing a fingerprint (at most maxGroup
// of them, the earliest by earlier among them; extra is the count left out),
// in fingerprint order; single URLs only when singles is set. It closes the
// runs.
//
// The merge is split by fingerprint among s.parts goroutines: part k
// merges, from every run, the records whose h falls in its k-th of the
// range (found by a binary search in each run), so that a group is never
// split. Part 0 calls fn as it goes; the other parts hand their groups
// over a short channel and fn takes them, part after part, once part 0 is
// done: the order is the order of one merge, and a part waits, without
// spinning, only when its channel is full (many duplicates, or singles).
func (s *spill) groups(rest []record, singles bool, earlier func(a, b record) bool, fn func(g []record, extra int)) error {
	defer s.close()
	if err := s.stop(); err != nil {
		return err
	}
	// The records still in memory are sorted by all cores, merged below
	// with the runs: this sort is on the critical path at the end.
	sortRecordsParts(rest, s.parts)
	segs := s.sp.Runs()
	if len(segs) == 0 {
		return groupsOf(rest, earlier, fn) // no run spilled: no merge
	}
	parts := max(s.parts, 1)
	// bounds[k] is where part k starts in rest and in each run (in records).
	bounds := make([][]int64, parts+1)
	readers := make([]*io.SectionReader, len(segs))
	for i, seg := range segs {
		readers[i] = s.sp.Open(seg)
	}
	for k := range bounds {
		from := ^uint64(0)/uint64(parts)*uint64(k) + uint64(k) // k/parts of the range
		b := make([]int64, 1+len(segs))
		if k == parts {
			b[0] = int64(len(rest))
		} else {
			b[0] = int64(sort.Search(len(rest), func(i int) bool { return rest[i].h >= from }))
		}
		for i, r := range readers {
			switch k {
			case 0:
			case parts:
				b[1+i] = r.Size() / recordSize
			default:
				n, err := runStart(r, from)
				if err != nil {
					return fmt.Errorf("duplicate check: %w", err)
				}
				b[1+i] = n
			}
		}
		bounds[k] = b
	}
	cursorsOf := func(k int) []*cursor {
		lo, hi := bounds[k], bounds[k+1]
		cs := []*cursor{{mem: rest[lo[0]:hi[0]]}}
		for i, r := range readers {
			cs = append(cs, &cursor{r: io.NewSectionReader(r, lo[1+i]*recordSize, (hi[1+i]-lo[1+i])*recordSize)})
		}
		return cs
	}
	type group struct {
		g     []record
		extra int
	}
	chans := make([]chan group, parts)
	errs := make([]error, parts)
	for k := 1; k < parts; k++ {
		chans[k] = make(chan group, 64)
		go func() {
			defer close(chans[k])
			errs[k] = merge(cursorsOf(k), earlier, func(g []record, extra int) {
				if singles || len(g) > 1 || extra > 0 {
					chans[k] <- group{slices.Clone(g), extra}
				}
			})
		}()
	}
	errs[0] = merge(cursorsOf(0), earlier, fn)
	for k := 1; k < parts; k++ {
		for g := range chans[k] {
			if errs[0] == nil {
				fn(g.g, g.extra)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("duplicate check: %w", err)
	}
	return nil
}

// runStart returns the index of the first record of the sorted run r whose
// h is at least from (the run's length past its end).
func runStart(r *io.SectionReader, from uint64) (int64, error) {
	var b [8]byte
	var err error
	i := sort.Search(int(r.Size()/recordSize), func(i int) bool {
		if _, e := r.ReadAt(b[:], int64(i)*recordSize); e != nil {
			err = e
			return true
		}
		return binary.LittleEndian.Uint64(b[:]) >= from
	})
	return int64(i), err
}

// merge merges the sorted cursors cs and calls fn with each set of records
// sharing a fingerprint, as groups does.
func merge(cs []*cursor, earlier func(a, b record) bool, fn func(g []record, extra int)) error {
	var live []*cursor
	for _, c := range cs {
		if err := c.next(); err != nil {
			return err
		}
		if !c.done {
			live = append(live, c)
		}
	}
	h := runs.NewHeap(live, func(a, b *cursor) bool { return byHash(a.cur, b.cur) < 0 })
	var g []record
	extra := 0
	flush := func() {
		if len(g) > 0 {
			fn(g, extra)
		}
		g, extra = g[:0], 0
	}
	for h.Len() > 0 {
		c := h.Top()
		r := c.cur
		if len(g) > 0 && (g[0].h != r.h || g[0].h2 != r.h2) {
			flush()
		}
		g = addTo(g, r, &extra, earlier)
		if err := c.next(); err != nil {
			return err
		}
		if c.done {
			h.Pop()
		} else {
			h.Fix()
		}
	}
	flush()
	return nil
}

// groupsOf calls fn with each set of records of the sorted rs sharing a
// fingerprint, as groups does.
func groupsOf(rs []record, earlier func(a, b record) bool, fn func(g []record, extra int)) error {
	var g []record
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].h == rs[i].h && rs[j].h2 == rs[i].h2 {
			j++
		}
		if n := j - i; n <= maxGroup {
			fn(rs[i:j:j], 0)
		} else {
			g, extra := g[:0], 0
			for _, r := range rs[i:j] {
				g = addTo(g, r, &extra, earlier)
			}
			fn(g, extra)
		}
		i = j
	}
	return nil
}

// close stops the spiller and releases the file.
func (s *spill) close() { s.sp.Close() }
