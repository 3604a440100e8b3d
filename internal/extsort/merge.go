package extsort

import (
	"bytes"
	"encoding/binary"
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
	last  []byte // the input's greatest key

	// The merge compares keys from skip, a length all of them share, and
	// first by their next 16 bytes as two numbers: most comparisons end
	// there, not in a byte comparison of a long shared prefix.
	skip   int
	k0, k1 uint64
}

// advance moves to the input's next entry, or returns io.EOF.
func (c *cursor) advance() error {
	if c.mem != nil {
		if c.i == len(c.mem.order) {
			return io.EOF
		}
		c.e = c.mem.entry(&c.mem.recs[c.mem.order[c.i]])
		c.i++
	} else {
		if err := c.r.next(); err != nil {
			return err
		}
		c.e = c.r.cur
	}
	c.prefix()
	return nil
}

// prefix sets k0 and k1 from the 16 key bytes after skip (zeros past the
// end, which orders them as the bytes do: a key shorter than another it
// begins comes first, and a tie is settled by the whole bytes).
func (c *cursor) prefix() {
	var k [16]byte
	copy(k[:], c.e.Key()[c.skip:])
	c.k0, c.k1 = binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint64(k[8:])
}

func (c *cursor) entry() *Entry { return &c.e }

// merger is a k-way merge of cursors: a binary min-heap by (key, the tie
// order, input order).
// The cursor last returned is advanced on the next call, so the entry it
// returned stays valid until then.
type merger struct {
	h       []*cursor
	pending *cursor
	ties    TieOrder
}

func (m *merger) less(a, b *cursor) bool {
	if a.k0 != b.k0 {
		return a.k0 < b.k0
	}
	if a.k1 != b.k1 {
		return a.k1 < b.k1
	}
	if c := bytes.Compare(a.e.Key()[a.skip:], b.e.Key()[b.skip:]); c != 0 {
		return c < 0
	}
	if m.ties == TieContent {
		if c := tie(a.e.LmKey, a.e.Data, b.e.LmKey, b.e.Data); c != 0 {
			return c < 0
		}
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
	// Every key lies between the least first key and the greatest last
	// one, so it begins with their common prefix.
	if len(m.h) > 0 {
		lo, hi := m.h[0].e.Key(), m.h[0].last
		for _, c := range m.h[1:] {
			if bytes.Compare(c.e.Key(), lo) < 0 {
				lo = c.e.Key()
			}
			if bytes.Compare(c.last, hi) > 0 {
				hi = c.last
			}
		}
		skip := 0
		for skip < min(len(lo), len(hi)) && lo[skip] == hi[skip] {
			skip++
		}
		for _, c := range m.h {
			c.skip = skip
			c.prefix()
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
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
