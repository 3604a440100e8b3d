// Package pqpage decodes Parquet's bytes below the schema: the pages of a
// column chunk (page headers, levels, dictionary indexes, PLAIN, RLE and
// DELTA values, every codec) and the Thrift compact protocol of page
// headers and the footer, trusting nothing a file claims before checking it
// against the bytes that are really there.
//
// parquet-go allocates what a page header or a run-length header says (an
// RLE run of 2^31 levels costs it 2 GiB, a few bytes of input each), which
// made a fuzzed 6 KiB file take gigabytes and minutes. Here every page must
// lie inside its column chunk, every count is bounded by the rows of the row
// group, decompressed pages grow with the output really produced, levels and
// dictionary indexes are decoded a block at a time into small buffers, and
// every loop consumes input or delivers a row. It also reads faster: the
// dictionary of a chunk is decoded once, and values go from the page
// straight into the caller's buffer.
package pqpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/parquet-go/parquet-go/format"
)

// maxPageSize bounds a page's uncompressed size (a whole row group's
// dictionary fits: 1M URLs of 200 bytes).
const maxPageSize = 256 << 20

// maxPageHeader bounds a page header (statistics included).
const maxPageHeader = 1 << 20

// LevelBlock is how many levels or indexes are decoded at a time.
const LevelBlock = 1024

// Parquet encodings and page types (format's numbers).
const (
	encPlain     = 0
	encPlainDict = 2
	encRLE       = 3
	encBitPacked = 4
	encDeltaBP   = 5
	encDeltaLBA  = 6 // DELTA_LENGTH_BYTE_ARRAY
	encDeltaBA   = 7
	encRLEDict   = 8

	pageData   = 0
	pageIndex  = 1
	pageDict   = 2
	pageDataV2 = 3
)

// Page is one decoded data page, read a block at a time: the caller takes
// its rows through Block and Reader.Value (or Reader.DictValue), or
// AppendStrings on the hot path of required strings. Its cursor is its own:
// every method checks what it reads against the page.
type Page struct {
	n, r   int // values (rows; level entries of a list leaf) in the page, taken
	levels hybrid
	reps   hybrid // repetition levels (list leaves)
	hasDef bool
	dict   bool
	idx    hybrid
	enc    int32  // encoding of the values
	vals   []byte // plain values; the bytes of DELTA_(LENGTH_)BYTE_ARRAY
	vp     int    // next of vals
	lens   delta  // DELTA_LENGTH_BYTE_ARRAY lengths, DELTA_BYTE_ARRAY suffix lengths
	prefix delta  // DELTA_BYTE_ARRAY prefix lengths
	ints   delta  // DELTA_BINARY_PACKED values
	num    [8]byte
	bools  hybrid // RLE-encoded BOOLEAN values
	bit    [1]uint32
	str    bool // required BYTE_ARRAY values, PLAIN or DELTA_LENGTH_BYTE_ARRAY

	held    int64 // a DELTA_LENGTH_BYTE_ARRAY length read before its value was left for later (AppendStrings)
	hasHeld bool
}

// Left returns the entries of the page not taken yet.
func (pg *Page) Left() int { return pg.n - pg.r }

// HasDef reports whether the page's entries have definition levels (the
// column is optional): Block decodes them.
func (pg *Page) HasDef() bool { return pg.hasDef }

// Dict reports whether the page's values are dictionary indexes: Block
// decodes them, Reader.DictValue looks them up.
func (pg *Page) Dict() bool { return pg.dict }

// Block takes the next len(defs) entries of the page, at most Left(): it
// decodes their repetition levels into reps when reps is not nil (a list
// leaf), their definition levels into defs when HasDef, and the dictionary
// indexes of the non-null ones (those at level maxDef) into idx when Dict.
// It returns how many are not null; their values follow with Reader.Value
// or Reader.DictValue.
func (pg *Page) Block(reps, defs, idx []uint32, maxDef byte) (nonNull int, err error) {
	k := len(defs)
	if k > pg.n-pg.r || reps != nil && len(reps) != k {
		return 0, fmt.Errorf("a block of %d entries in a page with %d left", k, pg.n-pg.r)
	}
	if reps != nil {
		if err := pg.reps.Read(reps); err != nil {
			return 0, err
		}
	}
	nonNull = k
	if pg.hasDef {
		if err := pg.levels.Read(defs); err != nil {
			return 0, err
		}
		nonNull = 0
		for _, l := range defs {
			if l == uint32(maxDef) {
				nonNull++
			}
		}
	}
	if pg.dict {
		if nonNull > len(idx) {
			return 0, fmt.Errorf("%d dictionary indexes for %d values", len(idx), nonNull)
		}
		if err := pg.idx.Read(idx[:nonNull]); err != nil {
			return 0, err
		}
	}
	pg.r += k
	return nonNull, nil
}

// Strings reports whether AppendStrings can take the page's values:
// required BYTE_ARRAY values, PLAIN or DELTA_LENGTH_BYTE_ARRAY.
func (pg *Page) Strings() bool { return pg.str }

// AppendStrings appends the next values of a page of Strings to buf, at
// most k of them (and Left()), and appends to ends the length of buf after
// each. It stops before a value that would take buf past budget bytes
// (budget < 0: no limit), a value over max bytes counted as max, and
// after a value over max, which it does not copy but returns as long (a
// view of the page, valid until its next page): the caller takes that row
// itself. What it took stays taken when it fails on a value the page
// cannot hold.
func (pg *Page) AppendStrings(buf []byte, ends []uint32, k, budget, max int) (_ []byte, _ []uint32, long []byte, err error) {
	k = min(k, pg.n-pg.r)
	vals := pg.vals
	at := pg.vp
	if pg.enc == encPlain {
		for range k {
			if len(vals)-at < 4 {
				err = errors.New("page has fewer values than rows")
				break
			}
			l := binary.LittleEndian.Uint32(vals[at:])
			if uint64(l) > uint64(len(vals)-at-4) {
				err = errors.New("value longer than its page")
				break
			}
			if budget >= 0 && len(buf)+min(int(l), max) > budget {
				break
			}
			v := vals[at+4 : at+4+int(l)]
			at += 4 + int(l)
			pg.r++
			if int(l) > max {
				long = v
				break
			}
			buf = append(buf, v...)
			ends = append(ends, uint32(len(buf)))
		}
	} else {
		for range k {
			var l int64
			if pg.hasHeld {
				l, pg.hasHeld = pg.held, false
			} else if l, err = pg.lens.Next(); err != nil {
				break
			}
			if uint64(l) > uint64(len(vals)-at) {
				err = errors.New("value longer than its page")
				break
			}
			if budget >= 0 && len(buf)+min(int(l), max) > budget {
				pg.held, pg.hasHeld = l, true
				break
			}
			v := vals[at : at+int(l)]
			at += int(l)
			pg.r++
			if int(l) > max {
				long = v
				break
			}
			buf = append(buf, v...)
			ends = append(ends, uint32(len(buf)))
		}
	}
	pg.vp = at
	return buf, ends, long, err
}

// Next reads the next data page into pg, of a column of the given maximum
// definition and repetition levels; it reads the dictionary page first when
// there is one. io.EOF when the chunk has no more pages. What it returned
// before is not valid after: its page goes back to the reading goroutine.
func (p *Reader) Next(pg *Page, maxDef, maxRep byte) error {
	for {
		if p.err != nil {
			return p.err
		}
		if p.cur != nil {
			p.release(p.cur)
			if p.stop != nil {
				p.free <- p.cur
			}
		}
		p.cur = nil
		f := p.nextPage()
		if f.panicked != nil {
			panic(f.panicked)
		}
		if f.err != nil {
			p.err = f.err
			return f.err
		}
		p.cur = f.pg
		if pg := f.pg; pg.ahead > 0 {
			// Read ahead, now needed: the file holds it as it would had
			// it been read now.
			if err := p.Budget.Hold(pg.ahead, nil); err != nil {
				p.err = fmt.Errorf("%s: %w", pageKind(pg), err)
				return p.err
			}
			p.Budget.ReleaseAhead(pg.ahead)
			pg.held, pg.ahead = pg.ahead, 0
		}
		switch f.pg.h.typ {
		case pageDict:
			// The dictionary holds the page's memory until the chunk ends.
			p.dictHeld, f.pg.held = f.pg.held, 0
			if err := p.readDict(f.pg); err != nil {
				p.err = fmt.Errorf("dictionary page: %w", err)
				return p.err
			}
		default:
			if err := p.setPage(f.pg, pg, maxDef, maxRep); err != nil {
				p.err = fmt.Errorf("data page: %w", err)
				return p.err
			}
			if pg.n > 0 {
				return nil
			}
		}
	}
}

// pageKind names a page's kind in an error, as read does.
func pageKind(pg *page) string {
	if pg.h.typ == pageDict {
		return "dictionary page"
	}
	return "data page"
}

// setPage sets pg up to decode the data page read into rd.
func (p *Reader) setPage(rd *page, pg *Page, maxDef, maxRep byte) error {
	h := &rd.h
	*pg = Page{n: int(h.numValues), hasDef: maxDef > 0}
	body := rd.body
	var levels, reps []byte
	if h.typ == pageDataV2 {
		reps = rd.levels[:h.repLen]
		levels = rd.levels[h.repLen : h.repLen+h.defLen]
	} else {
		// Repetition levels, then definition levels, each an RLE/bit-packed
		// hybrid after its 4-byte length.
		var err error
		if maxRep > 0 {
			if h.repEncoding != encRLE {
				return fmt.Errorf("repetition level encoding %s not supported", format.Encoding(h.repEncoding))
			}
			if reps, body, err = levelBytes(body, "repetition levels"); err != nil {
				return err
			}
		}
		if maxDef > 0 {
			if h.defEncoding != encRLE {
				return fmt.Errorf("definition level encoding %s not supported", format.Encoding(h.defEncoding))
			}
			if levels, body, err = levelBytes(body, "definition levels"); err != nil {
				return err
			}
		}
	}
	if maxDef > 0 {
		pg.levels.reset(levels, bits.Len8(maxDef))
	}
	if maxRep > 0 {
		pg.reps.reset(reps, bits.Len8(maxRep))
	}
	switch h.encoding {
	case encPlain:
		pg.vals = body
	case encRLE:
		// BOOLEAN values only: a 4-byte length, then the hybrid of width 1.
		if p.Type != format.Boolean {
			return fmt.Errorf("encoding %s for %s values", format.Encoding(h.encoding), p.typeName())
		}
		bools, _, err := levelBytes(body, "BOOLEAN values")
		if err != nil {
			return err
		}
		pg.bools.reset(bools, 1)
	case encPlainDict, encRLEDict:
		if !p.hasDict {
			return errors.New("dictionary-encoded page without a dictionary")
		}
		if len(body) < 1 || body[0] > 32 {
			return errors.New("bad dictionary index bit width")
		}
		pg.dict = true
		pg.idx.reset(body[1:], int(body[0]))
	case encDeltaBP:
		if p.Type != format.Int32 && p.Type != format.Int64 {
			return fmt.Errorf("encoding %s for %s values", format.Encoding(h.encoding), p.typeName())
		}
		if _, err := pg.ints.reset(body); err != nil {
			return err
		}
	case encDeltaLBA, encDeltaBA:
		if p.Size > 0 {
			return fmt.Errorf("encoding %s for fixed-size values", format.Encoding(h.encoding))
		}
		rest := body
		if h.encoding == encDeltaBA {
			if _, err := pg.prefix.reset(rest); err != nil {
				return err
			}
			var err error
			if rest, err = skipDelta(rest); err != nil {
				return err
			}
		}
		if _, err := pg.lens.reset(rest); err != nil {
			return err
		}
		var err error
		if pg.vals, err = skipDelta(rest); err != nil {
			return err
		}
		p.prev = p.prev[:0]
	default:
		return fmt.Errorf("encoding %s not supported", format.Encoding(h.encoding))
	}
	pg.enc = h.encoding
	pg.str = p.Type == format.ByteArray && !pg.hasDef && (pg.enc == encPlain || pg.enc == encDeltaLBA)
	return nil
}

// levelBytes splits the levels (or RLE values) at the start of a V1 page
// body off the rest: a 4-byte length, then that many bytes, which must be in
// the page.
func levelBytes(body []byte, what string) (levels, rest []byte, err error) {
	if len(body) < 4 {
		return nil, nil, io.ErrUnexpectedEOF
	}
	l := binary.LittleEndian.Uint32(body)
	if int64(l) > int64(len(body)-4) {
		return nil, nil, fmt.Errorf("%s of %d bytes in a page of %d", what, l, len(body))
	}
	return body[4 : 4+l], body[4+l:], nil
}

// typeName names the column's values in an error.
func (p *Reader) typeName() string {
	switch p.Type {
	case format.Boolean:
		return "BOOLEAN"
	case format.ByteArray, format.FixedLenByteArray:
		return "BYTE_ARRAY"
	case format.Float, format.Double:
		return "floating-point"
	}
	return p.Type.String()
}
