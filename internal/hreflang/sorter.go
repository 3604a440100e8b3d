package hreflang

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sitemapgen/sitemapgen/internal/runs"
)

// A sorter is an external sort of fixed-layout records in bounded memory:
// records collect in a buffer of at most runLen; a full buffer is handed
// to a runs.Spiller, which sorts it and appends it as a run to one unlinked
// temporary file in a goroutine of its own, while the caller fills a second
// buffer (so memory is two buffers). merge then reads every run back (one
// 16 KiB buffer each) with the unspilled rest and yields all records in
// order through a runs.Heap.
type sorter[T any] struct {
	cmp    func(a, b T) int
	get    func(r *bufio.Reader) (T, error) // io.EOF at a clean end, io.ErrUnexpectedEOF inside a record
	name   string                           // what the records are, for errors
	runLen int

	buf []T
	sp  *runs.Spiller[T]
}

func newSorter[T any](dir, name string, runLen int, cmp func(a, b T) int, put func([]byte, T) []byte,
	get func(*bufio.Reader) (T, error)) *sorter[T] {
	return &sorter[T]{cmp: cmp, get: get, name: name, runLen: runLen, buf: make([]T, 0, min(runLen, 4096)),
		sp: runs.NewSpiller("hreflang check", dir, "sitemapgen-hreflang-*.run", func(b []T) { slices.SortFunc(b, cmp) }, put)}
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
	var err error
	s.buf, err = s.sp.Hand(s.buf)
	return err
}

// spilled reports the runs written and their bytes.
func (s *sorter[T]) spilled() (n int, size int64) { return len(s.sp.Runs()), s.sp.Size() }

// stop waits for the spiller and returns its error.
func (s *sorter[T]) stop() error { return s.sp.Stop() }

// close releases the file and the buffers.
func (s *sorter[T]) close() {
	s.sp.Close()
	s.buf = nil
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
	for i, g := range s.sp.Runs() {
		cs = append(cs, &cursor[T]{r: bufio.NewReaderSize(s.sp.Open(g), 16<<10), label: fmt.Sprintf("run %d", i+1)})
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
