package extsort

import (
	"bytes"
	"io"
)

// cursor reads one sorted input of a merge: a spilled run, or the sorted
// entries still in memory.
type cursor struct {
	order int // input order among the merged inputs: breaks ties between equal keys
	r     *runReader
	mem   *buffer // reads mem.recs in mem.order from i
	i     int
	e     Entry
}

// advance moves to the input's next entry, or returns io.EOF.
func (c *cursor) advance() error {
	if c.mem != nil {
		if c.i == len(c.mem.order) {
			return io.EOF
		}
		c.e = c.mem.entry(&c.mem.recs[c.mem.order[c.i]])
		c.i++
		return nil
	}
	if err := c.r.next(); err != nil {
		return err
	}
	c.e = c.r.cur
	return nil
}

func (c *cursor) entry() *Entry { return &c.e }

// merger is a k-way merge of cursors: a binary min-heap by (key, order).
// The cursor last returned is advanced on the next call, so the entry it
// returned stays valid until then.
type merger struct {
	h       []*cursor
	pending *cursor
}

func less(a, b *cursor) bool {
	if c := bytes.Compare(a.e.Key(), b.e.Key()); c != 0 {
		return c < 0
	}
	return a.order < b.order
}

func (m *merger) init(cs []*cursor) error {
	for _, c := range cs {
		switch err := c.advance(); err {
		case nil:
			m.h = append(m.h, c)
		case io.EOF:
		default:
			return err
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return nil
}

// next returns the cursor holding the smallest entry, or io.EOF.
func (m *merger) next() (*cursor, error) {
	if c := m.pending; c != nil {
		m.pending = nil
		switch err := c.advance(); err {
		case nil:
			m.down(0)
		case io.EOF:
			last := len(m.h) - 1
			m.h[0] = m.h[last]
			m.h = m.h[:last]
			if last > 0 {
				m.down(0)
			}
		default:
			return nil, err
		}
	}
	if len(m.h) == 0 {
		return nil, io.EOF
	}
	m.pending = m.h[0]
	return m.h[0], nil
}

func (m *merger) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
