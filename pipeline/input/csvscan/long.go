package csvscan

import (
	"strconv"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

const (
	// maxKeep is the most bytes of a long record's loc its row keeps. With
	// the "…[cut: N bytes]" mark (at most cutMark bytes) it stays within
	// the 4 KiB of a value that the rejects file keeps whole.
	maxKeep = 4000
	cutMark = len("…[cut: 9223372036854775807 bytes]")
	// locTooLong is where encode rejects a loc as encode.TooLong.
	locTooLong = protocol.MaxLoc
	// longRead is the size of each read through the rest of a long record:
	// what is read past the record's end is carried to the next Fill.
	longRead = 64 << 10
)

// States of longRecord, as scanQuoted moves through a record.
const (
	stFieldStart = iota // before a field's first byte
	stBare              // in a non-quoted field
	stQuoted            // in a quoted field
	stQuote             // just after a quote in a quoted field: closes it, or "" for "
	stQuoteCR           // after a closing quote and a \r: the line has ended (\r\n or a lone \r)
)

// longRecord follows a record too long to buffer through the pieces of it
// it is fed, as scanQuoted would check it whole (without a limit on its
// length): it finds the record's end and its first error, counts its
// newlines, and keeps the first bytes of one field's content, unquoted
// (doubled quotes as one, \r\n in quotes as \n), and that field's length.
type longRecord struct {
	lines bool // one URL per line: no CSV syntax
	state int
	cr    bool // a \r not yet known to be part of a \r\n

	field int // index of the current field
	keep  int // the field kept: its first bytes in kept, its length in size
	kept  []byte
	max   int   // cap on len(kept)
	size  int64 // content bytes of the kept field

	head  [8]byte // the first bytes of field 0 after blanks: enough for looksLikeURL
	nhead int

	nl   int64 // newlines so far
	col  int   // bytes since the last newline (or the record's start)
	open [2]int64
	at   [2]int64 // a quote error: line offset (newlines), 1-based column
	err  error
}

// reset starts a record whose field keep is kept, up to max bytes.
func (l *longRecord) reset(lines bool, keep, max int) {
	kept := l.kept[:0]
	if kept == nil {
		kept = make([]byte, 0, maxKeep+cutMark)
	}
	*l = longRecord{lines: lines, keep: keep, kept: kept, max: max}
}

// emit adds content byte c to the current field.
func (l *longRecord) emit(c byte) {
	if l.field == 0 && l.nhead < len(l.head) && (l.nhead > 0 || c != ' ' && c != '\t') {
		l.head[l.nhead] = c
		l.nhead++
	}
	if l.field != l.keep {
		return
	}
	l.size++
	if len(l.kept) < l.max {
		l.kept = append(l.kept, c)
	}
}

// flushCR emits a pending \r that turned out not to start a \r\n.
func (l *longRecord) flushCR() {
	if l.cr {
		l.cr = false
		l.emit('\r')
	}
}

// fail records err at the byte back bytes before the current one.
func (l *longRecord) fail(err error, back int) {
	l.err, l.at = err, [2]int64{l.nl, int64(l.col - back + 1)}
}

// feed follows the record through p. It returns the index in p after the
// record's line end and done = true when the record ends in p, or done =
// true and l.err set at a quote error.
func (l *longRecord) feed(p []byte) (n int, done bool) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\n' && (l.lines || l.state != stQuoted) {
			l.nl++
			return i + 1, true // a pending \r before it is the line end's
		}
		if l.cr && (l.lines || l.state != stQuoted) || l.state == stQuoteCR {
			// The \r before c was a lone \r: it ended the line.
			l.cr = false
			l.nl++
			return i, true
		}
		switch {
		case l.lines:
			l.flushCR()
			if c == '\r' {
				l.cr = true
			} else {
				l.emit(c)
			}
		case l.state == stFieldStart && c == '"':
			l.state, l.open = stQuoted, [2]int64{l.nl, int64(l.col + 1)}
		case l.state == stFieldStart || l.state == stBare:
			l.state = stBare
			l.flushCR()
			switch c {
			case ',':
				l.field++
				l.state = stFieldStart
			case '"':
				l.fail(errBareQuote, 0)
				return i, true
			case '\r':
				l.cr = true
			default:
				l.emit(c)
			}
		case l.state == stQuoted:
			switch c {
			case '\n':
				l.nl++
				l.col = -1
				l.cr = false // \r\n in quotes is \n
				l.emit('\n')
			case '"':
				l.flushCR()
				l.state = stQuote
			case '\r':
				l.flushCR()
				l.cr = true
			default:
				l.flushCR()
				l.emit(c)
			}
		case l.state == stQuote:
			switch c {
			case '"':
				l.emit('"')
				l.state = stQuoted
			case ',':
				l.field++
				l.state = stFieldStart
			case '\r':
				l.state = stQuoteCR
			default:
				l.fail(errExtraQuote, 1)
				return i, true
			}
		}
		l.col++
	}
	return len(p), false
}

// end ends the record at the end of the input: a quoted field still open
// is an error at its opening quote.
func (l *longRecord) end() {
	if !l.lines && l.state == stQuoted {
		l.err, l.at = errUnterminated, l.open
	}
	// A \r at the end of the input ends the line: dropped.
}

// readLong reads the record at b.Buf[pos:], longer than s.maxRecord, on to
// its end, keeping only its loc's first bytes, and adds it to b as a row
// that b.Rejected lists. What was read past its end is carried to the next
// Fill.
func (s *Scanner) readLong(b *input.Batch, pos int) error {
	// There are at least s.maxRecord bytes of room at pos: the window held
	// that much of the record.
	room := cap(b.Buf) - pos
	keep := 0 // unmapped: the first field decides header or not
	if s.mapped {
		keep = s.col[input.Loc]
	}
	l := &s.long
	l.reset(s.lines, keep, max(0, min(maxKeep, s.maxRecord-cutMark)))
	p := b.Buf[pos:]
	for {
		n, done := l.feed(p)
		if done {
			if l.err != nil {
				return s.longError(l)
			}
			s.carry = append(s.carry[:0], p[n:]...)
			break
		}
		if s.eof {
			if l.end(); l.err != nil {
				return s.longError(l)
			}
			s.carry = s.carry[:0]
			break
		}
		b.Buf = b.Buf[:pos]
		if err := s.read(b, len(b.Buf), pos+min(room, longRead)); err != nil {
			return err
		}
		p = b.Buf[pos:]
	}

	if !s.mapped {
		if !looksLikeURL(l.head[:l.nhead]) {
			return &ParseError{Source: s.source, Line: s.line, Err: ErrRecordTooLong}
		}
		s.mapHeadless()
	}
	// The row: the loc's first bytes, marked when cut.
	v := l.kept
	if l.size > int64(len(v)) {
		v = v[:runeStart(v)]
		v = append(v, "…[cut: "...)
		v = strconv.AppendInt(v, l.size, 10)
		v = append(v, " bytes]"...)
	}
	b.Buf = append(b.Buf[:pos], v...)
	reason := encode.RecordTooLong
	if l.size >= locTooLong {
		reason = encode.TooLong
	}
	b.Rejected = append(b.Rejected, input.RowReject{Row: len(b.Line), Reason: reason})
	for c := range input.NumColumns {
		if s.col[c] < 0 {
			continue // unmapped: as in a short row
		}
		var f []byte
		if c == input.Loc {
			f = b.Buf[pos:len(b.Buf):len(b.Buf)]
		}
		b.Fields[c] = append(b.Fields[c], f)
	}
	if len(s.ext) > 0 {
		if len(b.Ext) != len(s.ext) {
			b.SetExt(s.ext)
		}
		for x := range s.extField {
			b.ExtFields[x] = append(b.ExtFields[x], nil)
		}
	}
	b.Line = append(b.Line, s.line)
	s.rows++
	s.line += l.nl
	return nil
}

// longError is a quote error longRecord found, as a *ParseError.
func (s *Scanner) longError(l *longRecord) error {
	return &ParseError{Source: s.source, Line: s.line + l.at[0], Column: int(l.at[1]), Err: l.err}
}

// runeStart returns the length of v without a last rune cut short.
func runeStart(v []byte) int {
	for k := 1; k <= utf8.UTFMax && k <= len(v); k++ {
		if utf8.RuneStart(v[len(v)-k]) {
			if !utf8.FullRune(v[len(v)-k:]) {
				return len(v) - k
			}
			break
		}
	}
	return len(v)
}
