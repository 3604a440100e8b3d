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
