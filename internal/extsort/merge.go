package extsort

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/sitemapgen/sitemapgen/internal/runs"
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

// merger is a k-way merge of cursors, a runs.Heap by (key, the tie order,
// input order). The cursor last returned is advanced on the next call, so
// the entry it returned stays valid until then.
type merger struct {
	h       *runs.Heap[*cursor]
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
	var live []*cursor
	for _, c := range cs {
		switch err := c.advance(); err {
		case nil:
			live = append(live, c)
		case io.EOF:
		default:
			return err
		}
	}
	// Every key lies between the least first key and the greatest last
	// one, so it begins with their common prefix.
	if len(live) > 0 {
		lo, hi := live[0].e.Key(), live[0].last
		for _, c := range live[1:] {
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
		for _, c := range live {
			c.skip = skip
			c.prefix()
		}
	}
	m.h = runs.NewHeap(live, m.less)
	return nil
}

// next returns the cursor holding the smallest entry, or io.EOF.
func (m *merger) next() (*cursor, error) {
	if c := m.pending; c != nil {
		m.pending = nil
		switch err := c.advance(); err {
		case nil:
			m.h.Fix()
		case io.EOF:
			m.h.Pop()
		default:
			return nil, err
		}
	}
	if m.h.Len() == 0 {
		return nil, io.EOF
	}
	m.pending = m.h.Top()
	return m.pending, nil
}
