package hreflang

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/sitemapgen/sitemapgen/internal/runs"
)

// A sorter is an external sort of fixed-layout records in bounded memory:
// records collect in a buffer of at most runLen; a full buffer is handed
// to a background goroutine that sorts it and appends it as a run to one
// unlinked temporary file (runs.Temp), while the caller fills a second
// buffer (so memory is two buffers). merge then reads every run back (one
// 16 KiB buffer each) with the unspilled rest and yields all records in
// order through a runs.Heap.
type sorter[T any] struct {
	cmp    func(a, b T) int
	put    func(dst []byte, r T) []byte
	get    func(r *bufio.Reader) (T, error) // io.EOF at a clean end, io.ErrUnexpectedEOF inside a record
	dir    string
	name   string // what the records are, for errors
	runLen int

	buf   []T
	spare chan []T // the other buffer, once the spiller is done with it
	work  chan []T // full buffers to spill
	wg    sync.WaitGroup
	two   bool // the second buffer exists

	// Owned by the spiller until stop returns, except err (guarded by mu).
	mu    sync.Mutex
	err   error
	f     *runs.Temp
	out   *runs.Appender
	spill []byte // the spiller's encoding buffer
}

func newSorter[T any](dir, name string, runLen int, cmp func(a, b T) int, put func([]byte, T) []byte,
	get func(*bufio.Reader) (T, error)) *sorter[T] {
	s := &sorter[T]{cmp: cmp, put: put, get: get, dir: dir, name: name, runLen: runLen,
		buf: make([]T, 0, min(runLen, 4096)), spare: make(chan []T, 1), work: make(chan []T, 1)}
	return s
}

// add appends r, spilling a run when the buffer is full. It returns the
// spiller's error, if any, once the buffer has been handed over.
func (s *sorter[T]) add(r T) error {
	if len(s.buf) == cap(s.buf) {
		if err := s.grow(); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, r)
	return nil
}

// grow makes room in a full buffer: a small buffer doubles up to runLen (so
// small sets stay small); a full-size one goes to the spiller.
func (s *sorter[T]) grow() error {
	if cap(s.buf) < s.runLen {
		s.buf = slices.Grow(s.buf, min(2*cap(s.buf), s.runLen)-len(s.buf))
		return nil
	}
	if !s.two {
		s.two = true
		s.wg.Add(1)
		go s.spiller(s.work)
		s.spare <- make([]T, 0, s.runLen)
	}
	s.work <- s.buf
	s.buf = (<-s.spare)[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sorter[T]) spiller(work <-chan []T) {
	defer s.wg.Done()
	for b := range work {
		slices.SortFunc(b, s.cmp)
		err := s.write(b)
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
		s.spare <- b
	}
}

// write appends the sorted records b to the file as one run.
func (s *sorter[T]) write(b []T) error {
	s.mu.Lock()
	failed := s.err != nil
	s.mu.Unlock()
	if failed {
		return nil
	}
	if s.f == nil {
		f, err := runs.CreateTemp(s.dir, "sitemapgen-hreflang-*.run")
		if err != nil {
			return fmt.Errorf("hreflang check: %w", err)
		}
		s.f, s.out = f, runs.NewAppender(f)
	}
	w := s.spill[:0]
	for _, r := range b {
		w = s.put(w, r)
		if len(w) >= 256<<10 {
			if err := s.flush(w); err != nil {
				return err
			}
			w = w[:0]
		}
	}
	if err := s.flush(w); err != nil {
		return err
	}
	s.spill = w[:0]
	s.out.EndRun()
	return nil
}

func (s *sorter[T]) flush(w []byte) error {
	if _, err := s.out.Write(w); err != nil {
		return fmt.Errorf("hreflang check: %w", err)
	}
	return nil
}

// spilled reports the runs written and their bytes.
func (s *sorter[T]) spilled() (n int, size int64) {
	if s.out == nil {
		return 0, 0
	}
	return len(s.out.Runs()), s.out.Size()
}

// stop waits for the spiller and returns its error.
func (s *sorter[T]) stop() error {
	if s.work != nil {
		close(s.work)
		s.work = nil
		s.wg.Wait()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close releases the file and the buffers.
func (s *sorter[T]) close() {
	s.stop()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.buf, s.out, s.spill = nil, nil, nil
}

// cursor reads one sorted run, or the in-memory rest.
type cursor[T any] struct {
	cur   T
	r     *bufio.Reader
	mem   []T
	n     int64 // records read
	done  bool
	label string
}

func (s *sorter[T]) next(c *cursor[T]) error {
	if c.r == nil {
		if len(c.mem) == 0 {
			c.done = true
			return nil
		}
		c.cur, c.mem = c.mem[0], c.mem[1:]
		return nil
	}
	r, err := s.get(c.r)
	switch {
	case err == io.EOF:
		c.done = true
		return nil
	case err != nil:
		return fmt.Errorf("hreflang check: %s %s, record %d: %w", s.name, c.label, c.n, err)
	}
	if c.n > 0 && s.cmp(c.cur, r) > 0 {
		return fmt.Errorf("hreflang check: %s %s, record %d: %w", s.name, c.label, c.n, errOrder)
	}
	c.cur = r
	c.n++
	return nil
}

// errOrder reports a run whose records are not sorted: a corrupt file.
var errOrder = errors.New("run out of order")

// errCorrupt reports a record that cannot be decoded.
var errCorrupt = errors.New("corrupt record")

// merge yields every record added, in order, to fn; it stops at the first
// error, of fn or of reading. The sorter is spent afterwards.
func (s *sorter[T]) merge(fn func(T) error) error {
	if err := s.stop(); err != nil {
		return err
	}
	slices.SortFunc(s.buf, s.cmp)
	cs := []*cursor[T]{{mem: s.buf, label: "memory"}}
	if s.out != nil {
		for i, g := range s.out.Runs() {
			cs = append(cs, &cursor[T]{r: bufio.NewReaderSize(s.out.Open(g), 16<<10), label: fmt.Sprintf("run %d", i+1)})
		}
	}
	live := cs[:0]
	for _, c := range cs {
		if err := s.next(c); err != nil {
			return err
		}
		if !c.done {
			live = append(live, c)
		}
	}
	h := runs.NewHeap(live, func(a, b *cursor[T]) bool { return s.cmp(a.cur, b.cur) < 0 })
	for h.Len() > 0 {
		c := h.Top()
		if err := fn(c.cur); err != nil {
			return err
		}
		if err := s.next(c); err != nil {
			return err
		}
		if c.done {
			h.Pop()
		} else {
			h.Fix()
		}
	}
	return nil
}
