package pqpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A minimal reader of Thrift's compact protocol, the encoding of Parquet's
// footer and page headers. It reads from a byte slice and trusts no length
// or count it reads: every one is checked against the bytes left before it
// is used, so what reading costs is bounded by the bytes read, whatever the
// file claims. parquet-go's own decoder allocates what a count or a length
// says before checking the bytes are there (a 6 KiB file could make it
// allocate 4 GiB), which is why the footer is walked here first and the page
// headers are read here instead.

// Compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// maxThriftDepth bounds the nesting of structs and containers; Parquet's
// metadata nests about ten deep.
const maxThriftDepth = 64

var errThrift = errors.New("malformed metadata")

type thriftReader struct {
	b []byte
	p int
}

func (r *thriftReader) byte() (byte, error) {
	if r.p >= len(r.b) {
		return 0, io.ErrUnexpectedEOF
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.p:])
	if n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if n < 0 {
		return 0, errThrift
	}
	r.p += n
	return v, nil
}

func (r *thriftReader) varint() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// i32 reads a zigzag varint that must fit in an int32.
func (r *thriftReader) i32() (int32, error) {
	v, err := r.varint()
	if err == nil && int64(int32(v)) != v {
		err = errThrift
	}
	return int32(v), err
}

// length reads a size that must not exceed the bytes left (each element of
// a container takes at least one byte).
func (r *thriftReader) length() (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.p) {
		return 0, io.ErrUnexpectedEOF
	}
	return int(n), nil
}

// field reads a field header of a struct whose previous field id is *last;
// typ is tStop at the end of the struct.
func (r *thriftReader) field(last *int16) (id int16, typ byte, err error) {
	c, err := r.byte()
	if err != nil || c == tStop {
		return 0, tStop, err
	}
	typ = c & 0xf
	if d := c >> 4; d != 0 {
		id = *last + int16(d)
	} else {
		v, err := r.varint()
		if err != nil {
			return 0, 0, err
		}
		id = int16(v)
	}
	*last = id
	return id, typ, nil
}

// skip steps over a value of type typ.
func (r *thriftReader) skip(typ byte, depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: nested too deep", errThrift)
	}
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		_, err := r.byte()
		return err
	case tI16, tI32, tI64:
		_, err := r.uvarint()
		return err
	case tDouble:
		if len(r.b)-r.p < 8 {
			return io.ErrUnexpectedEOF
		}
		r.p += 8
		return nil
	case tBinary:
		n, err := r.length()
		r.p += n
		return err
	case tList, tSet:
		n, et, err := r.list()
		if err != nil {
			return err
		}
		return r.skipElems(n, et, depth+1)
	case tMap:
		n, err := r.length()
		if err != nil || n == 0 {
			return err
		}
		c, err := r.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipElem(c>>4, depth+1); err != nil {
				return err
			}
			if err := r.skipElem(c&0xf, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		var last int16
		for {
			_, t, err := r.field(&last)
			if err != nil {
				return err
			}
			if t == tStop {
				return nil
			}
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%w: unknown type %d", errThrift, typ)
}

// list reads a list header: its size (which fits in the bytes left) and
// element type.
func (r *thriftReader) list() (n int, et byte, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	n, et = int(c>>4), c&0xf
	if n == 0xf {
		if n, err = r.length(); err != nil {
			return 0, 0, err
		}
	}
	if n > len(r.b)-r.p {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return n, et, nil
}

// skipElems steps over n container elements of type et.
func (r *thriftReader) skipElems(n int, et byte, depth int) error {
	for range n {
		if err := r.skipElem(et, depth); err != nil {
			return err
		}
	}
	return nil
}

// skipElem steps over a container element: booleans take a byte there.
func (r *thriftReader) skipElem(typ byte, depth int) error {
	if typ == tTrue || typ == tFalse {
		_, err := r.byte()
		return err
	}
	return r.skip(typ, depth)
}
