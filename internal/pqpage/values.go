package pqpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"
)

// readDict decodes the PLAIN dictionary page pg into p.dict and p.doffs.
// The page's encoding was checked when it was read.
func (p *Reader) readDict(pg *page) error {
	n := int(pg.h.numValues)
	size := max(p.Size, 4)
	if n > len(pg.body)/size {
		return fmt.Errorf("%d values in %d bytes", n, len(pg.body))
	}
	// The page's memory becomes the dictionary's, which gives its own
	// back to the page: no copy.
	p.dict, pg.body = pg.body, p.dict[:0]
	p.doffs = p.doffs[:0]
	at := 0
	for range n {
		p.doffs = append(p.doffs, uint32(at))
		l := p.Size
		if l == 0 {
			if len(p.dict)-at < 4 {
				return io.ErrUnexpectedEOF
			}
			l = 4 + int(binary.LittleEndian.Uint32(p.dict[at:]))
		}
		if l < 0 || l > len(p.dict)-at {
			return io.ErrUnexpectedEOF
		}
		at += l
	}
	p.doffs = append(p.doffs, uint32(at))
	p.hasDict = true
	return nil
}

// Value returns the next non-null value of pg, in its PLAIN form (a
// BYTE_ARRAY without its length).
func (p *Reader) Value(pg *Page) ([]byte, error) {
	if p.Type == format.Boolean {
		return p.boolValue(pg)
	}
	switch pg.enc {
	case encDeltaBP:
		v, err := pg.ints.Next()
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(pg.num[:], uint64(v))
		return pg.num[:p.Size], nil
	case encDeltaLBA:
		var l int64
		if pg.hasHeld { // AppendStrings read it
			l, pg.hasHeld = pg.held, false
		} else {
			var err error
			if l, err = pg.lens.Next(); err != nil {
				return nil, err
			}
		}
		if l < 0 || l > int64(len(pg.vals)-pg.vp) {
			return nil, errors.New("value longer than its page")
		}
		v := pg.vals[pg.vp : pg.vp+int(l)]
		pg.vp += int(l)
		return v, nil
	case encDeltaBA:
		pre, err := pg.prefix.Next()
		if err != nil {
			return nil, err
		}
		l, err := pg.lens.Next()
		if err != nil {
			return nil, err
		}
		if pre < 0 || pre > int64(len(p.prev)) || l < 0 || l > int64(len(pg.vals)-pg.vp) {
			return nil, errors.New("bad DELTA_BYTE_ARRAY value")
		}
		p.prev = append(p.prev[:pre], pg.vals[pg.vp:pg.vp+int(l)]...)
		pg.vp += int(l)
		return p.prev, nil
	}
	return p.plainValue(pg)
}

// boolValue returns the next BOOLEAN value of pg as one byte, 0 or 1:
// PLAIN values are bit-packed, RLE ones a hybrid of width 1.
func (p *Reader) boolValue(pg *Page) ([]byte, error) {
	if pg.enc == encRLE {
		if err := pg.bools.Read(pg.bit[:]); err != nil {
			return nil, err
		}
		pg.num[0] = byte(pg.bit[0] & 1)
		return pg.num[:1], nil
	}
	at := pg.vp >> 3
	if at >= len(pg.vals) {
		return nil, errors.New("page has fewer values than non-null rows")
	}
	pg.num[0] = pg.vals[at] >> (pg.vp & 7) & 1
	pg.vp++
	return pg.num[:1], nil
}

// plainValue returns the next plain value of pg (a BYTE_ARRAY without its length).
func (p *Reader) plainValue(pg *Page) ([]byte, error) {
	v := pg.vals[pg.vp:]
	if p.Size > 0 {
		if len(v) < p.Size {
			return nil, errors.New("page has fewer values than non-null rows")
		}
		pg.vp += p.Size
		return v[:p.Size], nil
	}
	if len(v) < 4 {
		return nil, errors.New("page has fewer values than non-null rows")
	}
	l := binary.LittleEndian.Uint32(v)
	if uint64(l) > uint64(len(v)-4) {
		return nil, errors.New("value longer than its page")
	}
	pg.vp += 4 + int(l)
	return v[4 : 4+l], nil
}

// DictValue returns dictionary value i.
func (p *Reader) DictValue(i uint32) ([]byte, error) {
	if int(i) >= len(p.doffs)-1 {
		return nil, fmt.Errorf("dictionary index %d out of range (%d values)", i, len(p.doffs)-1)
	}
	v := p.dict[p.doffs[i]:p.doffs[i+1]]
	if p.Size == 0 {
		v = v[4:]
	}
	return v, nil
}
