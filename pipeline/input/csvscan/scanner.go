// Package csvscan reads CSV and one-URL-per-line inputs into batches, as
// views into each batch's buffer, without allocating per row.
package csvscan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// MaxRecordBytes caps one input record (a CSV record or a line, line end
// included): the scanner buffers a record whole, up to this size. A longer
// record is read on to its end without being kept and handed out as a
// rejected row (see Fill); a longer header is an error.
const MaxRecordBytes = 16 << 20

// MaxHeaderFields caps the columns of a header row: far more than any export
// has (a thousand image:N columns, alternates for every language and the
// warehouse's own columns fit many times over), and few enough that naming
// and mapping them costs little. A longer header is ErrTooManyFields. The
// first row of a headerless list and the data rows are split only into the
// fields the mapping reads, whatever their count.
const MaxHeaderFields = 10000

// Errors of the CSV scanner. They reach the caller wrapped in a *ParseError,
// as do input.ErrNoColumn and input.ErrColumnType; test them with errors.Is.
var (
	// ErrQuote: a bare " in a non-quoted field, an extraneous or missing "
	// in a quoted field, or a quoted field still open at the end of the input.
	ErrQuote = errors.New("bad CSV quoting")
	// ErrRecordTooLong: a header record longer than MaxRecordBytes (a
	// longer data record is a rejected row, not an error).
	ErrRecordTooLong = fmt.Errorf("record longer than %d MiB", MaxRecordBytes>>20)
	// ErrTooManyFields: a header row of more than MaxHeaderFields columns.
	ErrTooManyFields = errors.New("too many columns")

	// errLong: parse found a record longer than s.maxRecord at pos.
	errLong = errors.New("long record")

	errImageList     = fmt.Errorf("%w: an %q column is a list, which CSV cannot hold: name the image columns image:1, image:2, …", input.ErrColumnType, "images")
	errAlternateList = fmt.Errorf("%w: an %q column is a list, which CSV cannot hold: name the alternate columns alternate:<hreflang> (and media-alternate)", input.ErrColumnType, "alternates")
	errVideoList     = fmt.Errorf("%w: a %q column is a list, which CSV cannot hold: give one video per row in video:thumbnail_loc, video:title, … columns", input.ErrColumnType, "videos")
	errBareQuote     = fmt.Errorf(`%w: bare " in a non-quoted field (enclose the field in double quotes and double the quote: "a""b")`, ErrQuote)
	errExtraQuote    = fmt.Errorf(`%w: extraneous or missing " in a quoted field`, ErrQuote)
	errUnterminated  = fmt.Errorf(`%w: quoted field opened here is not closed before the end of the input`, ErrQuote)
)

// ParseError is an error at a place in an input, like encoding/csv.ParseError.
type ParseError struct {
	Source string // input name
	Line   int64  // 1-based line number
	Column int    // 1-based byte column in the line; 0 when the error is about the whole record
	Err    error
}

// Error returns "source:line[:column]: message".
func (e *ParseError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.Source, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Source, e.Line, e.Err)
}

// Unwrap returns the error at the place.
func (e *ParseError) Unwrap() error { return e.Err }

var bom = []byte{0xEF, 0xBB, 0xBF}

// Scanner reads the rows of a CSV (or one-URL-per-line) input into
// Batches, as views into each Batch's Buf, without allocating per row.
//
// Records follow RFC 4180 as encoding/csv reads them (Comma ',', LazyQuotes
// false, FieldsPerRecord -1): \n or \r\n ends a record, empty lines are
// skipped, a trailing \r at the end of the input is dropped, quoted fields may
// hold commas, newlines (\r\n read as \n) and doubled quotes. In addition a
// UTF-8 byte order mark at the start of the input is dropped, and a lone \r
// (not followed by \n) outside quotes ends a line, as in Python's csv and
// spreadsheet tools: encoding/csv keeps it in the field, where it hid the next
// row (old Mac exports and some warehouse unloads end lines with \r).
//
// The first record is a header, unless its first field looks like a URL
// (http://, https:// or /): then the input is a headerless list whose fields
// are, by position, loc, lastmod, changefreq, priority.
type Scanner struct {
	r      io.Reader
	source string
	lines  bool
	opt    input.Options

	carry     []byte // the partial record at the end of the last batch
	spans     []int  // field bounds of the current record: start0, end0, start1, end1, ...
	line      int64  // line number of the next unconsumed input byte
	rows      int64
	eof       bool // r has reported io.EOF
	err       error
	started   bool                  // the BOM check is done
	mapped    bool                  // the columns are known (header read, or headerless)
	col       [input.NumColumns]int // field index of each column; -1: absent
	nfield    int                   // fields a data row is split into: max(col)+1
	maxRecord int                   // MaxRecordBytes; lowered by tests
	maxFields int                   // MaxHeaderFields; lowered by tests
	cut       [2]int                // after record: the rest of a record split into fewer fields than it has, from the comma after the last span; {0, 0}: none
	header    []string              // the header's names (nil: headerless)
	ext       []encode.ExtColumn
	extField  []int // field index of each extension column

	long longRecord // reads a record longer than maxRecord
}

// NewScanner returns a scanner that reads r, an input named source.
func NewScanner(r io.Reader, source string, opt input.Options) *Scanner {
	s := &Scanner{r: r, source: source, opt: opt, lines: opt.Lines, line: 1, maxRecord: MaxRecordBytes, maxFields: MaxHeaderFields}
	if opt.Lines {
		s.mapped = true
		s.col = [input.NumColumns]int{input.Loc: 0, input.Lastmod: -1, input.Changefreq: -1, input.Priority: -1, input.Group: -1}
		s.nfield = 1
		s.err = s.listGroupError()
	}
	return s
}

// Close does nothing: the scanner does not own its reader. It makes a
// Scanner an input.Source.
func (s *Scanner) Close() error { return nil }

// Rows reports the data rows handed out so far (header excluded).
func (s *Scanner) Rows() int64 { return s.rows }

// Extensions returns the extension columns the header names (see
// encode.ParseExtColumn), known once the header has been read: after the
// first Fill.
func (s *Scanner) Extensions() []encode.ExtColumn { return s.ext }

// Header returns the names in the input's header row, or nil when the input
// has no header (a headerless list, Lines mode, or the header not read yet).
func (s *Scanner) Header() []string { return s.header }

// Fill appends rows to b (b.Buf, b.Fields, b.Line; b.Source = source) until
// about chunk bytes of input are in b.Buf (chunk <= 0: input.DefaultChunk). b holds
// whole records only: the partial record at the end is kept for the next
// Fill. A record longer than chunk makes b.Buf grow, up to MaxRecordBytes.
// Every view in b.Fields points into b.Buf and stays
// valid while b is not reset; b.Buf is reallocated only while b holds no rows.
// b.Fields[c][i] is nil when row i has no field for column c.
//
// A data record longer than MaxRecordBytes is read on to its end (quoted
// newlines included) in small reads, keeping only the first bytes of its loc,
// and ends b as a row listed in b.Rejected: encode.TooLong when its loc is
// 2,048 bytes or more, else encode.RecordTooLong. Its loc view holds at most
// maxKeep bytes of the loc and, when cut, "…[cut: N bytes]" with the loc's
// length. A header that long is ErrRecordTooLong.
//
// Fill returns io.EOF when the input is exhausted and it added no rows to b;
// otherwise nil or an error: a *ParseError for bad input (b then holds the
// rows before the bad record), or a read error from r prefixed with the
// source name. Errors are sticky.
func (s *Scanner) Fill(b *input.Batch, chunk int) error {
	if s.err != nil {
		return s.err
	}
	if chunk <= 0 {
		chunk = input.DefaultChunk
	}
	b.Source = s.source
	start := len(b.Buf)
	rows0 := len(b.Line)
	limit := start + max(chunk, len(s.carry))
	if limit > cap(b.Buf) {
		if rows0 > 0 {
			// Growing would move the bytes b's rows point at.
			limit = cap(b.Buf)
			if limit-start < len(s.carry) {
				return nil // b is full
			}
		} else {
			b.Buf = grow(b.Buf, limit)
		}
	}
	b.Buf = append(b.Buf, s.carry...)
	s.carry = s.carry[:0]
	pos := start
	for {
		if err := s.read(b, pos, limit); err != nil {
			b.Buf = b.Buf[:pos]
			return s.fail(err)
		}
		var more bool
		var err error
		pos, more, err = s.parse(b, pos)
		if err == errLong {
			if err := s.readLong(b, pos); err != nil {
				b.Buf = b.Buf[:pos]
				return s.fail(err)
			}
			return nil
		}
		if err != nil {
			b.Buf = b.Buf[:pos]
			return s.fail(err)
		}
		if !more { // the input is exhausted and all of it parsed
			if len(b.Line) == rows0 {
				return io.EOF
			}
			return nil
		}
		// The record at pos needs input beyond the window, which is full.
		if len(b.Line) > rows0 {
			s.carry = append(s.carry, b.Buf[pos:]...)
			b.Buf = b.Buf[:pos]
			return nil
		}
		if pos > start { // a header or blank lines went: make room
			n := copy(b.Buf[start:], b.Buf[pos:])
			b.Buf = b.Buf[:start+n]
			pos = start
			continue
		}
		// One record is larger than the window: widen it, up to one byte
		// past the limit (a record of exactly maxRecord bytes at the end of
		// the input fits: only that byte, or io.EOF, tells).
		w := limit - start
		if w > s.maxRecord { // parse reports this first; kept as a guard
			return s.fail(&ParseError{Source: s.source, Line: s.line, Err: ErrRecordTooLong})
		}
		w = max(2*w, 64)
		if w >= s.maxRecord {
			w = s.maxRecord + 1
		}
		limit = start + w
		if limit > cap(b.Buf) {
			if rows0 > 0 {
				s.carry = append(s.carry, b.Buf[pos:]...)
				b.Buf = b.Buf[:pos]
				return nil
			}
			b.Buf = grow(b.Buf, limit)
		}
	}
}

func grow(buf []byte, n int) []byte {
	nb := make([]byte, len(buf), n)
	copy(nb, buf)
	return nb
}

func (s *Scanner) fail(err error) error {
	s.err = err
	return err
}

// read fills b.Buf up to limit bytes, or until r is exhausted. Its errors
// name the line the input had reached: that of b.Buf[from], the first byte
// not parsed, plus the line ends after it.
func (s *Scanner) read(b *input.Batch, from, limit int) error {
	empty := 0
	for !s.eof && len(b.Buf) < limit {
		n, err := s.r.Read(b.Buf[len(b.Buf):limit])
		if n < 0 || n > limit-len(b.Buf) {
			return fmt.Errorf("%s: read: invalid count %d", s.source, n)
		}
		b.Buf = b.Buf[:len(b.Buf)+n]
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			return &ParseError{Source: s.source, Line: s.line + int64(bytes.Count(b.Buf[from:], []byte{'\n'})), Err: err}
		case n == 0:
			if empty++; empty >= 100 {
				return fmt.Errorf("%s: %w", s.source, io.ErrNoProgress)
			}
		}
	}
	return nil
}

// parse adds the rows of the complete records in b.Buf[pos:] to b. It
// returns the position after the last record consumed, and more = true when
// the record there needs input beyond b.Buf.
func (s *Scanner) parse(b *input.Batch, pos int) (int, bool, error) {
	buf := b.Buf
	end := len(buf)
	if !s.started {
		if end-pos < len(bom) && !s.eof && bytes.HasPrefix(bom, buf[pos:end]) {
			return pos, true, nil
		}
		if bytes.HasPrefix(buf[pos:end], bom) {
			pos += len(bom)
		}
		s.started = true
	}
	q := -1   // position of the next quote at or after pos, or end; -1: unknown
	nlp := -1 // position of the next \n at or after pos, or end; -1: unknown
	for {
		// Skip empty lines.
		for pos < end {
			if c := buf[pos]; c == '\n' {
				pos++
				s.line++
				continue
			} else if c != '\r' {
				break
			}
			if pos+1 == end {
				if !s.eof {
					return pos, true, nil
				}
				pos++ // a \r at the end of the input ends the line
				continue
			}
			if buf[pos+1] == '\n' {
				pos++ // \r\n
			}
			pos++ // a lone \r ends an (empty) line too
			s.line++
		}
		if pos == end {
			return pos, !s.eof, nil
		}
		// A record may span at most maxRecord bytes.
		rend, final := end, s.eof
		if end-pos > s.maxRecord {
			rend, final = pos+s.maxRecord, false
		}
		maxf := s.nfield
		if !s.mapped {
			// The first record: a header's names, one past the limit to
			// tell a header over it (a headerless list's first row is cut
			// to its fields once its first field is seen: see record).
			maxf = s.maxFields + 1
		}
		if nlp < pos {
			// The next \n: one scan serves the records up to it (a file
			// with lone \r line ends has none, and is scanned once).
			if nlp = bytes.IndexByte(buf[pos:end], '\n'); nlp < 0 {
				nlp = end
			} else {
				nlp += pos
			}
		}
		if q < pos && !s.lines {
			// The next quote: one scan serves the records up to it.
			if q = bytes.IndexByte(buf[pos:end], '"'); q < 0 {
				q = end
			} else {
				q += pos
			}
		}
		n, nl, more, err := s.record(buf, pos, rend, final, maxf, q, min(nlp, rend))
		if err != nil {
			return pos, false, err
		}
		if more {
			if end-pos > s.maxRecord {
				return pos, false, errLong
			}
			return pos, true, nil
		}
		if !s.mapped {
			header, err := s.mapHeader(buf)
			if err != nil {
				return pos, false, err
			}
			if header {
				s.line += int64(nl)
				pos = n
				continue
			}
		}
		nsp := len(s.spans) / 2
		if len(b.Line) == 0 {
			for c := range input.NumColumns {
				if s.col[c] >= 0 {
					b.SizeColumn(c)
				}
			}
		}
		for c := range input.NumColumns {
			k := s.col[c]
			if k < 0 {
				continue // unmapped: the column stays empty, Field reads nil
			}
			var v []byte
			if k < nsp {
				i, j := s.spans[2*k], s.spans[2*k+1]
				v = buf[i:j:j]
			}
			b.Fields[c] = append(b.Fields[c], v)
		}
		if len(s.ext) > 0 {
			if len(b.Ext) != len(s.ext) {
				b.SetExt(s.ext)
			}
			for x, k := range s.extField {
				var v []byte
				if k < nsp {
					i, j := s.spans[2*k], s.spans[2*k+1]
					v = buf[i:j:j]
				}
				b.ExtFields[x] = append(b.ExtFields[x], v)
			}
		}
		b.Line = append(b.Line, s.line)
		s.rows++
		s.line += int64(nl)
		pos = n
	}
}

// record parses the record at buf[p:end], which is not an empty line; final
// reports that the input ends at end; q is the position of the first quote at
// or after p (end or more: none), lf that of the first \n (end: none). It sets
// s.spans to the bounds of the record's fields, of at most maxf fields (of
// headlessFields when the columns are not mapped yet and its first field
// makes the input a headerless list), and s.cut to the rest of the record
// when it has more; it returns the position after the record's line end and
// the number of line ends in it; more = true when the record does not end
// before end.
func (s *Scanner) record(buf []byte, p, end int, final bool, maxf, q, lf int) (next, nl int, more bool, err error) {
	s.spans = s.spans[:0]
	s.cut = [2]int{}
	e := lf // end of the line: \n, \r\n, a lone \r, or the end of the input
	// buf may hold bytes past end (a record's window): they tell a lone \r
	// at the window's edge from the first byte of a \r\n.
	if k := bytes.IndexByte(buf[p:e], '\r'); k >= 0 && p+k+1 < len(buf) && buf[p+k+1] != '\n' {
		e = p + k // a lone \r: old Mac exports and some unloads end lines so
		next, nl = e+1, 1
	} else if e < end {
		next, nl = e+1, 1
		if e > p && buf[e-1] == '\r' {
			e--
		}
	} else if !final {
		return 0, 0, true, nil // the line, or its \r\n, goes on past end
	} else {
		next = end
		if e > p && buf[e-1] == '\r' {
			e--
		}
	}
	if s.lines {
		s.spans = append(s.spans, p, e)
		return next, nl, false, nil
	}
	if q < e {
		return s.quoted(buf, p, end, final, maxf)
	}
	// Fast path: one line, no quotes.
	for f := p; ; {
		j := bytes.IndexByte(buf[f:e], ',')
		if j < 0 {
			s.spans = append(s.spans, f, e)
			return next, nl, false, nil
		}
		s.spans = append(s.spans, f, f+j)
		if maxf = s.firstField(buf, maxf); len(s.spans) == 2*maxf {
			s.cut = [2]int{f + j, e}
			return next, nl, false, nil
		}
		f += j + 1
	}
}

// firstField returns the most fields to split a record into, maxf, but
// headlessFields once the record's first field, in s.spans, makes an input
// whose columns are not mapped yet a headerless list: no other field of its
// first row is read.
func (s *Scanner) firstField(buf []byte, maxf int) int {
	if !s.mapped && len(s.spans) == 2 && looksLikeURL(buf[s.spans[0]:s.spans[1]]) {
		return headlessFields
	}
	return maxf
}

// quoted parses a record holding a quote: it checks the record (and finds
// its end) without changing buf, then unquotes its first maxf fields in
// place (see record).
func (s *Scanner) quoted(buf []byte, p, end int, final bool, maxf int) (next, nl int, more bool, err error) {
	next, more, bad, berr := scanQuoted(buf, p, end, final)
	if berr != nil {
		return 0, 0, false, s.errAt(buf, p, bad, berr)
	}
	if more {
		return 0, 0, true, nil
	}
	nl = bytes.Count(buf[p:next], []byte{'\n'})
	if buf[next-1] == '\r' {
		nl++ // a lone \r ended the record
	}
	// The record's content ends before its line end: \n, \r\n, or a lone
	// \r. A valid record has that \r outside quotes.
	ce := next
	if buf[ce-1] == '\n' {
		ce--
	}
	if ce > p && buf[ce-1] == '\r' {
		ce--
	}
	w, i := p, p
	for {
		fs := w
		if i < ce && buf[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(buf[i:ce], '"') // there is one: the record is valid
				w = copyCRLF(buf, w, i, i+j)
				i += j + 1
				if i < ce && buf[i] == '"' {
					buf[w] = '"'
					w++
					i++
					continue
				}
				break
			}
		} else {
			stop := ce
			if j := bytes.IndexByte(buf[i:ce], ','); j >= 0 {
				stop = i + j
			}
			w += copy(buf[w:], buf[i:stop])
			i = stop
		}
		s.spans = append(s.spans, fs, w)
		if i >= ce {
			return next, nl, false, nil
		}
		if maxf = s.firstField(buf, maxf); len(s.spans) == 2*maxf {
			s.cut = [2]int{i, ce} // buf[i:ce] is as read: only bytes before i were rewritten
			return next, nl, false, nil
		}
		i++ // the comma
	}
}

// copyCRLF copies buf[i:e] to buf[w:], turning \r\n into \n, and returns the
// new w. w <= i.
func copyCRLF(buf []byte, w, i, e int) int {
	for {
		k := bytes.IndexByte(buf[i:e], '\r')
		if k < 0 || i+k+1 >= e {
			return w + copy(buf[w:], buf[i:e])
		}
		k += i
		if buf[k+1] == '\n' {
			w += copy(buf[w:], buf[i:k])
		} else {
			w += copy(buf[w:], buf[i:k+1])
		}
		i = k + 1
	}
}

// scanQuoted checks the record at buf[p:end] as encoding/csv would read it,
// without changing buf. It returns the position after the record's line
// end, or more = true when the record goes on past end, or the position of
// the offending quote and the error.
func scanQuoted(buf []byte, p, end int, final bool) (next int, more bool, bad int, err error) {
	i := p
	for {
		if i < end && buf[i] == '"' {
			open := i
			i++
			for {
				j := bytes.IndexByte(buf[i:end], '"')
				if j < 0 {
					if final {
						return 0, false, open, errUnterminated
					}
					return 0, true, 0, nil
				}
				i += j + 1
				if i == end {
					if final {
						return end, false, 0, nil
					}
					return 0, true, 0, nil
				}
				switch buf[i] {
				case '"':
					i++
					continue
				case ',':
					i++
				case '\n':
					return i + 1, false, 0, nil
				case '\r':
					if i+1 < end {
						if buf[i+1] == '\n' {
							return i + 2, false, 0, nil
						}
						return i + 1, false, 0, nil // a lone \r ends the line
					}
					if i+1 < len(buf) && buf[i+1] != '\n' {
						return i + 1, false, 0, nil // a lone \r at the window's edge
					}
					if final {
						return end, false, 0, nil
					}
					return 0, true, 0, nil
				default:
					return 0, false, i - 1, errExtraQuote
				}
				break
			}
			continue
		}
		// A non-quoted field: up to ',' or the line end.
		stop := i
		for stop < end && buf[stop] != ',' && buf[stop] != '\n' && buf[stop] != '\r' {
			stop++
		}
		if k := bytes.IndexByte(buf[i:stop], '"'); k >= 0 {
			return 0, false, i + k, errBareQuote
		}
		if stop == end {
			if final {
				return end, false, 0, nil
			}
			return 0, true, 0, nil
		}
		switch {
		case buf[stop] == '\n':
			return stop + 1, false, 0, nil
		case buf[stop] == '\r' && stop+1 < end && buf[stop+1] == '\n':
			return stop + 2, false, 0, nil
		case buf[stop] == '\r' && stop+1 < len(buf) && buf[stop+1] != '\n':
			return stop + 1, false, 0, nil // a lone \r ends the line (buf may go on past end)
		case buf[stop] == '\r' && final:
			return end, false, 0, nil
		case buf[stop] == '\r':
			return 0, true, 0, nil // \r or \r\n: the next byte tells
		}
		i = stop + 1
	}
}

// errAt returns err as a ParseError at buf[at], in the record starting at
// buf[p] on line s.line.
func (s *Scanner) errAt(buf []byte, p, at int, err error) error {
	rec := buf[p:at]
	ls := p
	if k := bytes.LastIndexByte(rec, '\n'); k >= 0 {
		ls = p + k + 1
	}
	return &ParseError{
		Source: s.source,
		Line:   s.line + int64(bytes.Count(rec, []byte{'\n'})),
		Column: at - ls + 1,
		Err:    err,
	}
}

// mapHeader decides from the first record, in s.spans, whether the input has
// a header, and maps the columns. It reports whether the record is a header.
func (s *Scanner) mapHeader(buf []byte) (bool, error) {
	s.mapped = true
	if looksLikeURL(buf[s.spans[0]:s.spans[1]]) {
		s.mapHeadless()
		return false, s.listGroupError()
	}
	if nsp := len(s.spans) / 2; nsp > s.maxFields {
		return true, &ParseError{Source: s.source, Line: s.line,
			Err: fmt.Errorf("%w: the header has %d columns, more than the %d sitemapgen reads (is the first line a header?)",
				ErrTooManyFields, nsp+s.fieldsAfter(buf), s.maxFields)}
	}
	s.header = make([]string, len(s.spans)/2)
	for k := range s.header {
		s.header[k] = string(buf[s.spans[2*k]:s.spans[2*k+1]])
	}
	m, merr := s.opt.Map(s.header)
	if merr != nil && m.Index[input.Loc] < 0 {
		return true, &ParseError{Source: s.source, Line: s.line,
			Err: fmt.Errorf("%w (a file without a header must start with a URL: http://, https:// or /)", merr)}
	}
	s.col = m.Index
	s.nfield = 0
	for _, k := range s.col {
		s.nfield = max(s.nfield, k+1)
	}
	// The extension columns: every other column whose name is one.
	for k, h := range s.header {
		if m.Mapped(k) {
			continue
		}
		if x, ok := encode.ParseExtColumn(h); ok {
			if err := listError(x.Kind); err != nil {
				return true, &ParseError{Source: s.source, Line: s.line, Err: err}
			}
			s.ext = append(s.ext, x)
			s.extField = append(s.extField, k)
			s.nfield = max(s.nfield, k+1)
		}
	}
	if merr != nil {
		return true, &ParseError{Source: s.source, Line: s.line, Err: merr}
	}
	return true, nil
}

// fieldsAfter returns the number of fields of the record last parsed that
// s.spans does not hold: the commas outside quotes in s.cut (the record has
// been checked, so a quote opens or closes a quoted field or is one of a
// doubled pair, which toggles twice).
func (s *Scanner) fieldsAfter(buf []byte) int {
	n, quoted := 0, false
	for _, c := range buf[s.cut[0]:s.cut[1]] {
		switch {
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			n++
		}
	}
	return n
}

// listGroupError is the error of a list of URLs (headerless, or Lines)
// read for a group column, or nil: a list has no column names, so none can
// say the group, unless its rows go to the default group.
func (s *Scanner) listGroupError() error {
	g := s.opt.Columns[input.Group]
	if g == "" || s.opt.ListsInDefaultGroup {
		return nil
	}
	return &ParseError{Source: s.source, Line: s.line, Err: &input.ColumnError{Field: input.Group, Name: g}}
}

// mapHeadless maps the columns of a headerless list: by position.
func (s *Scanner) mapHeadless() {
	s.mapped = true
	s.col = [input.NumColumns]int{input.Loc: 0, input.Lastmod: 1, input.Changefreq: 2, input.Priority: 3, input.Group: -1}
	s.nfield = headlessFields
}

// headlessFields is the number of fields read from a row of a headerless
// list: loc, lastmod, changefreq, priority.
const headlessFields = int(input.Group)

// listError is the error for a list column in a CSV header, or nil.
func listError(k encode.ExtKind) error {
	switch k {
	case encode.ExtImageList:
		return errImageList
	case encode.ExtAlternateList:
		return errAlternateList
	case encode.ExtVideoList:
		return errVideoList
	}
	return nil
}

// looksLikeURL reports whether a first field makes the input headerless.
func looksLikeURL(f []byte) bool {
	f = bytes.TrimLeft(f, " \t")
	return len(f) > 0 && f[0] == '/' || hasPrefixFold(f, "http://") || hasPrefixFold(f, "https://")
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}
