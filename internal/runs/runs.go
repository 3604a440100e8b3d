// Package runs holds the two halves of an external sort that every sorter
// of sitemapgen shares: sorted runs written to temporary files that vanish
// with the process, and the k-way merge that reads them back in order. It
// serves --sort and --dedup (internal/extsort, which keeps its own record
// format on top), the hreflang check (internal/hreflang) and validate's
// duplicate check (check); a fix here reaches all three.
package runs

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Temp is a temporary file for sorted runs. It is unlinked as soon as it is
// created where the system allows it, so its space is freed when it is
// closed, even after a crash; where an open file cannot be removed
// (Windows), Close removes it.
type Temp struct {
	*os.File
	name string // set when the file could not be unlinked while open
}

// CreateTemp creates a Temp in dir (os.TempDir() when "") named after
// pattern, as os.CreateTemp does.
func CreateTemp(dir, pattern string) (*Temp, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	t := &Temp{File: f}
	if os.Remove(f.Name()) != nil {
		t.name = f.Name()
	}
	return t, nil
}

// Close closes the file and removes it if it was not unlinked.
func (t *Temp) Close() error {
	err := t.File.Close()
	if t.name != "" {
		os.Remove(t.name)
		t.name = ""
	}
	return err
}

// Segment is one run of a Temp that holds several back to back: its bytes
// [Off, Off+N).
type Segment struct{ Off, N int64 }

// Appender writes runs back to back into one Temp.
type Appender struct {
	t     *Temp
	size  int64
	start int64
	runs  []Segment
}

// NewAppender returns an Appender writing to t from its start.
func NewAppender(t *Temp) *Appender { return &Appender{t: t} }

// Write appends b to the run being written.
func (a *Appender) Write(b []byte) (int, error) {
	n, err := a.t.WriteAt(b, a.size)
	a.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("runs: %w", err)
	}
	return n, nil
}

// EndRun ends the run being written, and returns it.
func (a *Appender) EndRun() Segment {
	s := Segment{a.start, a.size - a.start}
	a.runs = append(a.runs, s)
	a.start = a.size
	return s
}

// Runs returns the runs ended so far, in order.
func (a *Appender) Runs() []Segment { return a.runs }

// Size returns the bytes written.
func (a *Appender) Size() int64 { return a.size }

// Open returns a reader of run s.
func (a *Appender) Open(s Segment) *io.SectionReader { return io.NewSectionReader(a.t, s.Off, s.N) }

// Heap is the k-way merge's binary min-heap of cursors, ordered by less on
// their current records. A merge takes Top, advances that cursor, then calls
// Fix (it has another record) or Pop (it is done).
type Heap[C any] struct {
	h    []C
	less func(a, b C) bool
}

// NewHeap returns a heap of cs (taken over, not copied) ordered by less.
func NewHeap[C any](cs []C, less func(a, b C) bool) *Heap[C] {
	h := &Heap[C]{h: cs, less: less}
	for i := len(cs)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

// Len returns the cursors in the heap.
func (h *Heap[C]) Len() int { return len(h.h) }

// Top returns the cursor with the least record. The heap must not be empty.
func (h *Heap[C]) Top() C { return h.h[0] }

// Fix restores the order after the top cursor moved to its next record.
func (h *Heap[C]) Fix() { h.down(0) }

// Pop removes the top cursor.
func (h *Heap[C]) Pop() {
	last := len(h.h) - 1
	h.h[0] = h.h[last]
	var zero C
	h.h[last] = zero
	h.h = h.h[:last]
	if last > 0 {
		h.down(0)
	}
}

func (h *Heap[C]) down(i int) {
	s := h.h
	for {
		l := 2*i + 1
		if l >= len(s) {
			return
		}
		j := l
		if r := l + 1; r < len(s) && h.less(s[r], s[l]) {
			j = r
		}
		if !h.less(s[j], s[i]) {
			return
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
}

// Spiller sorts full buffers of records and writes each as a run to one
// Temp, in a goroutine of its own, while the caller fills another buffer:
// memory is two buffers, and the caller never waits on a spill unless the
// spiller still holds both.
type Spiller[T any] struct {
	name, dir, pattern string
	sort               func([]T)
	put                func(dst []byte, r T) []byte

	spare, work chan []T
	wg          sync.WaitGroup

	// Owned by the spiller goroutine until Stop returns, except err
	// (guarded by mu).
	mu  sync.Mutex
	err error
	f   *Temp
	out *Appender
	enc []byte
}

// NewSpiller returns a Spiller whose runs go to a Temp in dir named after
// pattern, records sorted by sort and encoded by put; its errors start with
// name (what the records are for).
func NewSpiller[T any](name, dir, pattern string, sort func([]T), put func(dst []byte, r T) []byte) *Spiller[T] {
	return &Spiller[T]{name: name, dir: dir, pattern: pattern, sort: sort, put: put}
}

// Hand gives the full buffer to the spiller and returns an empty one of the
// same capacity, waiting (without spinning) while the spiller holds both,
// and the spiller's first error, if any.
func (s *Spiller[T]) Hand(full []T) ([]T, error) {
	if s.work == nil {
		s.work, s.spare = make(chan []T, 1), make(chan []T, 1)
		s.wg.Add(1)
		go s.spill(s.work) // Stop sets s.work to nil: the goroutine keeps its own
		s.spare <- make([]T, 0, cap(full))
	}
	s.work <- full
	empty := (<-s.spare)[:0]
	return empty, s.Err()
}

// Err returns the spiller's first error.
func (s *Spiller[T]) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Spiller[T]) spill(work <-chan []T) {
	defer s.wg.Done()
	for b := range work {
		if s.Err() == nil {
			s.sort(b)
			if err := s.write(b); err != nil {
				s.mu.Lock()
				s.err = fmt.Errorf("%s: %w", s.name, err)
				s.mu.Unlock()
			}
		}
		s.spare <- b
	}
}

// write appends the sorted records b to the file as one run.
func (s *Spiller[T]) write(b []T) error {
	if s.f == nil {
		f, err := CreateTemp(s.dir, s.pattern)
		if err != nil {
			return err
		}
		s.f, s.out = f, NewAppender(f)
	}
	w := s.enc[:0]
	for _, r := range b {
		if w = s.put(w, r); len(w) >= 256<<10 {
			if _, err := s.out.Write(w); err != nil {
				return err
			}
			w = w[:0]
		}
	}
	if _, err := s.out.Write(w); err != nil {
		return err
	}
	s.enc = w[:0]
	s.out.EndRun()
	return nil
}

// AppendRun writes b, records already encoded, as one run, as the spiller
// would: tests of readers build damaged runs with it. It must not be called
// while the spiller runs.
func (s *Spiller[T]) AppendRun(b []byte) error {
	if s.f == nil {
		f, err := CreateTemp(s.dir, s.pattern)
		if err != nil {
			return err
		}
		s.f, s.out = f, NewAppender(f)
	}
	if _, err := s.out.Write(b); err != nil {
		return err
	}
	s.out.EndRun()
	return nil
}

// Stop waits for the spiller to write what it was handed, and returns its
// first error. Runs, Open and File may be called after it.
func (s *Spiller[T]) Stop() error {
	if s.work != nil {
		close(s.work)
		s.work = nil
		s.wg.Wait()
	}
	return s.Err()
}

// Runs returns the runs written, in order (after Stop).
func (s *Spiller[T]) Runs() []Segment {
	if s.out == nil {
		return nil
	}
	return s.out.Runs()
}

// Size returns the bytes written (after Stop).
func (s *Spiller[T]) Size() int64 {
	if s.out == nil {
		return 0
	}
	return s.out.Size()
}

// Open returns a reader of run seg.
func (s *Spiller[T]) Open(seg Segment) *io.SectionReader { return s.out.Open(seg) }

// File returns the file the runs are in (nil before the first), for tests
// that damage it.
func (s *Spiller[T]) File() *Temp { return s.f }

// Close stops the spiller and releases the file.
func (s *Spiller[T]) Close() {
	s.Stop()
	if s.f != nil {
		s.f.Close()
		s.f, s.out = nil, nil
	}
}
