package arrowmsg

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errFlatbuffer reports an offset or a length that leads outside the flatbuffer.
var errFlatbuffer = errors.New("metadata flatbuffer points outside itself")

// fbuf is a flatbuffer being checked: every read is bounds-checked, and a
// walk may visit at most budget bytes of tables, vectors and strings, so a
// flatbuffer whose offsets share parts (a field whose children are the same
// field twice, and so on down) cannot make arrow-go, which expands it into
// a tree, build more than a few times its size.
type fbuf struct {
	b      []byte
	budget int
}

func newFB(b []byte) *fbuf { return &fbuf{b: b, budget: 4*len(b) + 1024} }

// inside reports whether b[pos:pos+n] is in the buffer.
func (f *fbuf) inside(pos, n int) bool {
	return pos >= 0 && n >= 0 && pos <= len(f.b) && n <= len(f.b)-pos
}

func (f *fbuf) spend(n int) error {
	f.budget -= n
	if f.budget < 0 {
		return errors.New("metadata flatbuffer refers to its parts more often than it can hold them")
	}
	return nil
}

func (f *fbuf) u32(pos int) (int, error) {
	if !f.inside(pos, 4) {
		return 0, errFlatbuffer
	}
	// Negative where int has 32 bits and u is 2^31 or more: callers check.
	return int(binary.LittleEndian.Uint32(f.b[pos:])), nil
}

func (f *fbuf) i64(pos int) int64 { return int64(binary.LittleEndian.Uint64(f.b[pos:])) }

// ref follows the offset at pos.
func (f *fbuf) ref(pos int) (int, error) {
	u, err := f.u32(pos)
	if err != nil || u < 0 || pos+u >= len(f.b) {
		return 0, errFlatbuffer
	}
	return pos + u, nil
}

// fbTable is a checked table: its vtable and inline data are in the buffer.
type fbTable struct {
	f           *fbuf
	pos, vt     int
	vtLen, size int
}

func (f *fbuf) table(pos int) (fbTable, error) {
	if !f.inside(pos, 4) {
		return fbTable{}, errFlatbuffer
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(f.b[pos:])))
	if !f.inside(vt, 4) {
		return fbTable{}, errFlatbuffer
	}
	vtLen, size := int(binary.LittleEndian.Uint16(f.b[vt:])), int(binary.LittleEndian.Uint16(f.b[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || !f.inside(vt, vtLen) || size < 4 || !f.inside(pos, size) {
		return fbTable{}, errFlatbuffer
	}
	return fbTable{f, pos, vt, vtLen, size}, f.spend(size)
}

func (f *fbuf) root() (fbTable, error) {
	p, err := f.ref(0)
	if err != nil {
		return fbTable{}, err
	}
	return f.table(p)
}

// elem returns table i of the vector of tables starting at start.
func (f *fbuf) elem(start, i int) (fbTable, error) {
	p, err := f.ref(start + 4*i)
	if err != nil {
		return fbTable{}, err
	}
	return f.table(p)
}

// field returns the position of field slot, of n bytes, or -1 when absent.
func (t fbTable) field(slot, n int) (int, error) {
	e := 4 + 2*slot
	if e+2 > t.vtLen {
		return -1, nil
	}
	off := int(binary.LittleEndian.Uint16(t.f.b[t.vt+e:]))
	if off == 0 {
		return -1, nil
	}
	if off < 4 || off+n > t.size {
		return 0, errFlatbuffer
	}
	return t.pos + off, nil
}

// int reads the n-byte integer field slot (a 1-byte one unsigned), 0 when absent.
func (t fbTable) int(slot, n int) (int64, error) {
	p, err := t.field(slot, n)
	if err != nil || p < 0 {
		return 0, err
	}
	b := t.f.b[p:]
	switch n {
	case 1:
		return int64(b[0]), nil
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// sub returns the table field slot refers to; ok is false when absent.
func (t fbTable) sub(slot int) (s fbTable, ok bool, err error) {
	p, err := t.field(slot, 4)
	if err != nil || p < 0 {
		return s, false, err
	}
	if p, err = t.f.ref(p); err != nil {
		return s, false, err
	}
	s, err = t.f.table(p)
	return s, err == nil, err
}

// vector returns where the elements of the vector field slot start and how
// many there are, each of elem bytes; none when absent. They are all in the
// buffer.
func (t fbTable) vector(slot, elem int) (start, n int, err error) {
	p, err := t.field(slot, 4)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	if p, err = t.f.ref(p); err != nil {
		return 0, 0, err
	}
	if n, err = t.f.u32(p); err != nil {
		return 0, 0, err
	}
	start = p + 4
	if n < 0 || n > (len(t.f.b)-start)/elem {
		return 0, 0, fmt.Errorf("metadata flatbuffer claims a vector of %d elements in %d bytes", n, len(t.f.b))
	}
	return start, n, t.f.spend(4 + n*elem)
}
