package s3obj

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
)

// ReaderOptions tune a ReaderAt's prefetch. Zero values take the defaults.
type ReaderOptions struct {
	// Gap: prefetched ranges less than Gap apart are fetched by one
	// request, the bytes between them included (0: 1 MiB; < 0: none).
	Gap int64
	// MaxBlock is the largest request a prefetch sends; larger ranges are
	// cut (0: 8 MiB).
	MaxBlock int64
	// Requests is the most prefetch requests in flight at once (0: 4).
	Requests int
	// MaxBytes bounds the memory of prefetched data, held or in flight
	// (0: 64 MiB; at least MaxBlock). A prefetch beyond it waits until
	// held blocks are read.
	MaxBytes int64
}

// Defaults of ReaderOptions.
const (
	DefaultGap      = 1 << 20
	DefaultMaxBlock = 8 << 20
	DefaultRequests = 4
	DefaultMaxBytes = 64 << 20
)

// ReaderAt reads one object by position with ranged GETs, each pinned to the
// ETag of the listing with If-Match: an object rewritten during the run
// fails with an *Error wrapping ErrChanged, never mixes two versions. It is
// safe for concurrent use.
//
// Prefetch fetches ranges ahead of their reads (a Parquet reader's column
// chunks of the next row group while it decodes the current one); a read
// that falls inside a prefetched block is served from memory, any other is
// a ranged GET of exactly the bytes asked for. Memory: the prefetched
// blocks held or in flight never exceed MaxBytes; a block is released as
// soon as every byte Prefetch asked for in it has been read once (so each
// range is meant to be read once), or by Drop or Close. Reads that are not
// served from a block allocate nothing: they fill the caller's buffer.
type ReaderAt struct {
	s   *Store
	o   Object
	opt ReaderOptions

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	c      Counter

	mu     sync.Mutex
	blocks []*block // sorted by off, disjoint: queued, in flight or ready
	queue  []*block // waiting for a request slot or memory, in Prefetch order
	held   int64    // bytes of the blocks in flight or ready
	active int      // requests in flight
	peak   int64    // most bytes held at once (for tests and the report)
	closed bool
}

type blockState int

const (
	queued blockState = iota
	fetching
	ready
)

// block is a prefetched range of the object.
type block struct {
	Range
	need  int64   // bytes Prefetch asked for in it (the merged gaps not)
	read  []Range // parts read, sorted and disjoint
	state blockState
	data  []byte
	err   error
	drop  bool          // dropped while in flight: forgotten when it lands
	done  chan struct{} // closed when the fetch ends
}

// NewReaderAt returns a ReaderAt of o, whose Size and ETag come from List
// or Stat. ctx bounds every request it makes; Close cancels the prefetch.
func (s *Store) NewReaderAt(ctx context.Context, o Object, opt ReaderOptions) *ReaderAt {
	if opt.Gap == 0 {
		opt.Gap = DefaultGap
	}
	opt.Gap = max(opt.Gap, 0)
	if opt.MaxBlock <= 0 {
		opt.MaxBlock = DefaultMaxBlock
	}
	if opt.Requests <= 0 {
		opt.Requests = DefaultRequests
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	opt.MaxBytes = max(opt.MaxBytes, opt.MaxBlock)
	ctx, cancel := context.WithCancel(ctx)
	return &ReaderAt{s: s, o: o, opt: opt, ctx: ctx, cancel: cancel}
}

// Size returns the object's size, as listed.
func (r *ReaderAt) Size() int64 { return r.o.Size }

// Object returns the object read.
func (r *ReaderAt) Object() Object { return r.o }

// Stats returns the requests made and the bytes received so far, prefetch
// included.
func (r *ReaderAt) Stats() Stats { return r.c.Load() }

// Held returns the prefetched bytes held or in flight now.
func (r *ReaderAt) Held() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// PeakHeld returns the most prefetched bytes held or in flight at once.
func (r *ReaderAt) PeakHeld() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// Prefetch starts fetching ranges that are not held or on their way yet,
// merged when less than Gap apart and cut at MaxBlock, at most Requests at
// once and MaxBytes held; it returns at once. Ranges are clipped to the
// object. A failed prefetch is forgotten: the read of its bytes sends its
// own request, and reports the error if it fails again.
func (r *ReaderAt) Prefetch(ranges []Range) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	have := make([]Range, len(r.blocks))
	for i, b := range r.blocks {
		have[i] = b.Range
	}
	needed := subtract(merge(ranges, r.o.Size), have)
	pieces := split(subtract(coalesce(slices.Clone(needed), r.opt.Gap), have), r.opt.MaxBlock)
	for _, p := range pieces {
		b := &block{Range: p, need: overlap(p, needed), done: make(chan struct{})}
		r.blocks = append(r.blocks, b)
		r.queue = append(r.queue, b)
	}
	sort.Slice(r.blocks, func(i, j int) bool { return r.blocks[i].Off < r.blocks[j].Off })
	r.pump()
}

// pump starts queued fetches while a request slot and the memory allow.
// r.mu is held.
func (r *ReaderAt) pump() {
	for len(r.queue) > 0 && r.active < r.opt.Requests && r.held+r.queue[0].Len <= r.opt.MaxBytes {
		b := r.queue[0]
		r.queue = r.queue[1:]
		b.state = fetching
		r.active++
		r.held += b.Len
		r.peak = max(r.peak, r.held)
		r.wg.Add(1)
		go r.fetch(b)
	}
}

func (r *ReaderAt) fetch(b *block) {
	defer r.wg.Done()
	data := getBlock(b.Len, r.opt.MaxBlock)
	err := r.s.readRange(r.ctx, r.o, b.Off, data, &r.c)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	if err != nil || b.drop {
		b.err = err
		putBlock(data)
		r.remove(b)
	} else {
		b.data, b.state = data, ready
	}
	close(b.done)
	r.pump()
}

// remove forgets b, releasing its memory. r.mu is held.
func (r *ReaderAt) remove(b *block) {
	if i := slices.Index(r.blocks, b); i >= 0 {
		r.blocks = slices.Delete(r.blocks, i, i+1)
	}
	if b.state == queued {
		if i := slices.Index(r.queue, b); i >= 0 {
			r.queue = slices.Delete(r.queue, i, i+1)
		}
		return
	}
	r.held -= b.Len
	if b.data != nil {
		putBlock(b.data)
	}
	b.data = nil
}

// blockPool recycles the buffers of prefetched blocks: a run fetches
// gigabytes through a few MiB of them, and that much garbage would let the
// heap grow to twice the prefetch budget before the GC reclaims it.
var blockPool sync.Pool // of *[]byte

// getBlock returns a buffer of n bytes, with room for a block of maxBlock.
func getBlock(n, maxBlock int64) []byte {
	if p, ok := blockPool.Get().(*[]byte); ok && int64(cap(*p)) >= n {
		return (*p)[:n]
	}
	return make([]byte, n, max(n, maxBlock))
}

func putBlock(b []byte) { blockPool.Put(&b) }

// find returns the block holding off, or nil and the offset of the next
// block (or the size). r.mu is held.
func (r *ReaderAt) find(off int64) (*block, int64) {
	i := sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].End() > off })
	if i == len(r.blocks) {
		return nil, r.o.Size
	}
	if b := r.blocks[i]; b.Off <= off {
		return b, 0
	}
	return nil, r.blocks[i].Off
}

// ReadAt reads len(p) bytes at off, from prefetched blocks where it can and
// with ranged GETs pinned to the ETag for the rest. Errors name the object.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at negative offset %d", r.o, off)
	}
	if off >= r.o.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	var eof error
	if int64(len(p)) > r.o.Size-off {
		p, eof = p[:r.o.Size-off], io.EOF
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		r.mu.Lock()
		b, next := r.find(at)
		if b != nil && b.state == fetching {
			r.mu.Unlock()
			select {
			case <-b.done:
			case <-r.ctx.Done():
				return n, fmt.Errorf("%s: %w", r.o, r.ctx.Err())
			}
			continue
		}
		if b != nil && b.state == ready {
			m := copy(p[n:], b.data[at-b.Off:])
			b.read = addRange(b.read, Range{at, int64(m)})
			if overlap(b.Range, b.read) >= b.need {
				r.remove(b)
				r.pump()
			}
			r.mu.Unlock()
			n += m
			continue
		}
		if b != nil { // queued: memory is short, read what is asked now
			next = b.End()
			r.remove(b)
		}
		r.mu.Unlock()
		m := int(min(int64(len(p)-n), next-at))
		if err := r.s.readRange(r.ctx, r.o, at, p[n:n+m], &r.c); err != nil {
			return n, err
		}
		n += m
	}
	return n, eof
}

// addRange adds x to the sorted, disjoint rs.
func addRange(rs []Range, x Range) []Range {
	rs = append(rs, x)
	return coalesce(rs, 0)
}

// Drop forgets every prefetched block, queued, in flight or held, and
// releases its memory (a block in flight is released when its request
// ends); reads go on with ranged GETs.
func (r *ReaderAt) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range slices.Clone(r.blocks) {
		if b.state == fetching {
			b.drop = true // released by fetch when it lands
			continue
		}
		r.remove(b)
	}
}

// Close cancels the prefetch in flight, waits for it and releases every
// block. Reads after Close fail.
func (r *ReaderAt) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range slices.Clone(r.blocks) {
		r.remove(b)
	}
	return nil
}
