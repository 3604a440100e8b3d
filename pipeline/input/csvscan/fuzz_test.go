package csvscan

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// FuzzCSVScanner checks Scanner against encoding/csv (Comma ',',
// FieldsPerRecord -1, LazyQuotes false) as the oracle: for any input, either
// both fail or both return the same records, at the same line numbers; the
// rows before an error must agree too, and so must the place of a quote error.
// Every input is read with a chunk size and a reader (whole, one byte, or
// short reads) taken from the fuzz arguments.
//
// Intentional differences from encoding/csv, handled here:
//
//   - A UTF-8 BOM at the start of the input is dropped (encoding/csv keeps it
//     in the first field): the oracle is given the input without it.
//
//   - For a quoted field still open at the end of the input, the error points
//     at the field's opening quote (the place to fix), where encoding/csv
//     points at the end of the input: that position is not compared.
//
//   - A data record longer than MaxRecordBytes is a rejected row keeping
//     the first bytes of its loc (encoding/csv has no limit); a header that
//     long is an error. Check 4 lowers the limit to fuzzLimit bytes.
//
//   - A header of more than MaxHeaderFields columns is an error
//     (ErrTooManyFields). Check 4 lowers the limit to fuzzFields.
//
//   - Error kinds: ErrQuote stands for both encoding/csv's ErrBareQuote and
//     ErrQuote.
//
//   - A lone \r (not followed by \n) outside quotes ends a line, as in
//     Python's csv; encoding/csv keeps it as data. The oracle is given the
//     input with those \r turned into \n (loneCR), which keeps every offset.
//
// A lone \r inside quotes, the \r dropped before \n and before the end of the
// input, \r\n read as \n in quoted fields, and skipped empty lines all match
// encoding/csv.
//
// Three checks per input:
//  1. "loc,lastmod,changefreq,priority\n" + data: the header is fixed, so
//     the four columns of each row are fields 0..3 of each oracle record.
//  2. data alone: the first record decides header or headerless list; the
//     expected mapping is derived from the oracle's first record.
//  3. data in Lines mode, against a split on \n.
//  4. checks 2 and 3 with records limited to fuzzLimit bytes and headers
//     to fuzzFields columns.
func FuzzCSVScanner(f *testing.F) {
	for _, s := range []string{
		"https://a/,2024-01-01,daily,0.5\n",
		"https://a/\n/b\r\nhttp://c/,1,2,3,4\n",
		"loc,lastmod\nhttps://a/,2024\n",
		"lastmod,LOC, priority\n1,https://a/,0.3\n,,\n",
		"\"https://a/?x=1,2\",\"20\"\"24\"\n\"a\nb\",c\n",
		"\"a\r\nb\"\r\n\r\n\"\"\r\n",
		"a\rb,c\r\r\n\r",
		"\"a\"\r",
		"\"a\"\rb\n",
		"a\"b\n",
		"\"a\"b\n",
		"\"abc\n\ndef",
		"\n\n\n,\n \n",
		"\xEF\xBB\xBFloc\nhttps://a/\n",
		"\xEF\xBB\xBF\"a\nb\"\n",
		"x,\"\"\"\",\"\n\"\"\"\n",
		"https://a/,\"x\"\n\"y\n",
		"url\nhttps://a/\n",
		"loc,loc\nhttps://a/,https://b/\n",
		"LOC,loc, Loc\nhttps://a/,https://b/\n",
		"loc\nhttps://a/\n\"https://b/" + strings.Repeat("\"\"\r\n", 20) + "\",x\nhttps://c/\n",
		"https://b/" + strings.Repeat("é", 40) + ",1\r\n\n/c",
		"lastmod,loc\n" + strings.Repeat("1", 70) + ",/b\n" + strings.Repeat("2", 70) + "\"\n",
		"    " + strings.Repeat(" ", 60) + "https://a/\n",
		"a,b,c,d,e,f,loc\nhttps://a/,,,,,,,,,\n",
		"a,\"b,c\",d,e,f,loc,\"\"\"\"\n/a\n",
		"https://a/,1,2,3,4,5,6,7,8\n\"/b\",1,\"2\",3,\"4\",5,6,7\n",
	} {
		for _, chunk := range []uint16{0, 1, 3, 17} {
			f.Add([]byte(s), chunk, uint8(chunk%3))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, mode uint8) {
		c := int(chunk%300) + 1
		if chunk >= 60000 {
			c = 1 << 16 // records far from chunk boundaries
		}
		reader := func(b []byte) io.Reader {
			switch mode % 3 {
			case 1:
				return iotest.OneByteReader(bytes.NewReader(b))
			case 2:
				return iotest.HalfReader(bytes.NewReader(b))
			}
			return bytes.NewReader(b)
		}

		// 1. Fixed header.
		const header = "loc,lastmod,changefreq,priority\n"
		in := append([]byte(header), data...)
		recs, lines, oerr := oracle(loneCR(in, false))
		want := make([]string, 0, len(recs))
		for i, rec := range recs[min(1, len(recs)):] {
			want = append(want, oracleRow(lines[i+1], rec, [input.NumColumns]int{0, 1, 2, 3, -1}))
		}
		got, err := scanAll(t, reader(in), input.Options{}, c)
		compare(t, "fixed header", got, err, want, oerr)

		// 2. The input decides: header or not.
		body := bytes.TrimPrefix(data, bom)
		recs, lines, oerr = oracle(loneCR(body, false))
		want = want[:0]
		var wantErr error = oerr
		if len(recs) > 0 {
			cols, isHeader, dup := mapOracle(recs[0])
			if isHeader && len(recs[0]) > MaxHeaderFields {
				recs, wantErr = nil, ErrTooManyFields
			} else if isHeader && cols[input.Loc] < 0 {
				recs, wantErr = nil, input.ErrNoColumn
			} else if dup {
				recs, wantErr = nil, input.ErrDuplicateColumn
			}
			if isHeader {
				recs, lines = recs[min(1, len(recs)):], lines[1:]
			}
			for i, rec := range recs {
				want = append(want, oracleRow(lines[i], rec, cols))
			}
		}
		got, err = scanAll(t, reader(data), input.Options{}, c)
		compare(t, "header detection", got, err, want, wantErr)
		if (wantErr == input.ErrNoColumn || wantErr == input.ErrDuplicateColumn || wantErr == ErrTooManyFields) && !errors.Is(err, wantErr) {
			t.Fatalf("header detection: error %v, want %v", err, wantErr)
		}

		// 3. Lines mode.
		want = want[:0]
		for i, l := range bytes.Split(loneCR(body, true), []byte{'\n'}) {
			l = bytes.TrimSuffix(l, []byte{'\r'})
			if len(l) > 0 {
				want = append(want, fmt.Sprintf("%d %q nil nil nil", i+1, l))
			}
		}
		got, err = scanAll(t, reader(data), input.Options{Lines: true}, c)
		compare(t, "lines", got, err, want, nil)

		// 4. Records over a limit: rejected rows, the rows after them read.
		for _, lines := range []bool{false, true} {
			want, wantErr = limitOracle(body, lines)
			sc := NewScanner(reader(data), "in.csv", input.Options{Lines: lines})
			sc.maxRecord = fuzzLimit
			sc.maxFields = fuzzFields
			got, err = scanScanner(t, sc, c)
			compare(t, fmt.Sprintf("limit, lines %v", lines), got, err, want, wantErr)
			if wantErr != nil && !errors.Is(err, wantErr) && !errors.Is(wantErr, csv.ErrQuote) && !errors.Is(wantErr, csv.ErrBareQuote) {
				t.Fatalf("limit, lines %v: error %v, want %v", lines, err, wantErr)
			}
		}
	})
}

// fuzzLimit is the record limit of check 4; its rows keep the first
// fuzzLimit-cutMark bytes of a long record's loc.
const fuzzLimit = 64

// fuzzFields is the header column limit of check 4.
const fuzzFields = 6

// limitOracle is what check 4 expects for body (without a BOM): the rows of
// check 2 (or 3, in Lines mode), but a record over fuzzLimit bytes, line end
// included, as the scanner's rejected row.
func limitOracle(body []byte, lines bool) (want []string, err error) {
	body = loneCR(body, lines)
	type rec struct {
		fields      []string
		line        int
		start, next int // the record's bytes, line end included
	}
	var recs []rec
	// skip returns the position after the empty lines at p.
	skip := func(p int) int {
		for p < len(body) {
			switch {
			case body[p] == '\n':
				p++
			case body[p] == '\r' && (p+1 == len(body) || body[p+1] == '\n'):
				p++
			default:
				return p
			}
		}
		return p
	}
	if lines {
		p := 0
		for i, l := range bytes.SplitAfter(body, []byte{'\n'}) {
			if t := bytes.TrimSuffix(bytes.TrimSuffix(l, []byte{'\n'}), []byte{'\r'}); len(t) > 0 {
				recs = append(recs, rec{fields: []string{string(t)}, line: i + 1, start: p, next: p + len(l)})
			}
			p += len(l)
		}
	} else {
		r := csv.NewReader(bytes.NewReader(body))
		r.FieldsPerRecord = -1
		for {
			start := skip(int(r.InputOffset()))
			fields, rerr := r.Read()
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				err = rerr
				break
			}
			line, _ := r.FieldPos(0)
			recs = append(recs, rec{fields: fields, line: line, start: start, next: int(r.InputOffset())})
		}
	}
	cols := [input.NumColumns]int{0, -1, -1, -1, -1}
	if !lines && len(recs) > 0 {
		var isHeader, dup bool
		cols, isHeader, dup = mapOracle(recs[0].fields)
		if isHeader {
			switch {
			case recs[0].next-recs[0].start > fuzzLimit:
				return nil, ErrRecordTooLong
			case len(recs[0].fields) > fuzzFields:
				return nil, ErrTooManyFields
			case cols[input.Loc] < 0:
				return nil, input.ErrNoColumn
			case dup:
				return nil, input.ErrDuplicateColumn
			}
			recs = recs[1:]
		}
	}
	keep := fuzzLimit - cutMark
	for _, r := range recs {
		if r.next-r.start <= fuzzLimit {
			want = append(want, oracleRow(r.line, r.fields, cols))
			continue
		}
		var loc string
		if k := cols[input.Loc]; k < len(r.fields) {
			loc = r.fields[k]
		}
		reason := "record_too_long"
		if len(loc) >= locTooLong {
			reason = "loc_too_long"
		}
		if len(loc) > keep {
			v := []byte(loc[:keep])
			loc = fmt.Sprintf("%s…[cut: %d bytes]", v[:runeStart(v)], len(loc))
		}
		want = append(want, fmt.Sprintf("%d %q nil nil nil !%s", r.line, loc, reason))
	}
	return want, err
}

// loneCR returns a copy of in in which every \r that ends a line (outside a
// quoted field, or anywhere in Lines mode, and not followed by \n) is a \n.
// It follows the CSV grammar up to the first quote error, where encoding/csv
// stops reading.
func loneCR(in []byte, lines bool) []byte {
	out := bytes.Clone(in)
	const (
		fieldStart = iota
		bare
		quoted
		quote // a quote inside a quoted field: its end, or the first of ""
	)
	st := fieldStart
	for i, c := range out {
		lone := c == '\r' && (i+1 == len(out) || out[i+1] != '\n')
		switch {
		case lines || st == fieldStart || st == bare:
			switch {
			case lone:
				out[i], st = '\n', fieldStart
			case c == '"' && st == fieldStart && !lines:
				st = quoted
			case c == '"' && !lines:
				return out // a bare quote
			case c == ',' || c == '\n':
				st = fieldStart
			default:
				st = bare
			}
		case st == quoted:
			if c == '"' {
				st = quote
			}
		default: // quote
			switch {
			case c == '"':
				st = quoted
			case lone:
				out[i], st = '\n', fieldStart
			case c == ',' || c == '\n' || c == '\r':
				st = fieldStart
			default:
				return out // an extraneous quote
			}
		}
	}
	return out
}

// oracle reads in with encoding/csv: the records before the first error, the
// line each starts on, and the error.
func oracle(in []byte) (recs [][]string, lines []int, err error) {
	r := csv.NewReader(bytes.NewReader(in))
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return recs, lines, nil
		}
		if err != nil {
			return recs, lines, err
		}
		line, _ := r.FieldPos(0)
		recs = append(recs, rec)
		lines = append(lines, line)
	}
}

// mapOracle is the header rule, written independently of the scanner's:
// a column named exactly (spaces trimmed), else case-insensitively; dup
// reports a name that two columns match by the rule that chose one.
func mapOracle(first []string) (cols [input.NumColumns]int, isHeader, dup bool) {
	f := strings.ToLower(strings.TrimLeft(first[0], " \t"))
	if strings.HasPrefix(f, "/") || strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
		return [input.NumColumns]int{0, 1, 2, 3, -1}, false, false
	}
	for c, name := range []string{"loc", "lastmod", "changefreq", "priority"} {
		var exact, fold []int
		for k, h := range first {
			h = strings.TrimSpace(h)
			if h == name {
				exact = append(exact, k)
			}
			if strings.ToLower(h) == name {
				fold = append(fold, k)
			}
		}
		if len(exact) == 0 {
			exact = fold
		}
		cols[c] = -1
		if len(exact) > 0 {
			cols[c] = exact[0]
		}
		dup = dup || len(exact) > 1
	}
	return cols, true, dup
}

// oracleRow renders an oracle record as fmtRow renders a row.
func oracleRow(line int, rec []string, cols [input.NumColumns]int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%d", line)
	for _, k := range cols[:input.CoreColumns] {
		if k >= 0 && k < len(rec) {
			fmt.Fprintf(&s, " %q", rec[k])
		} else {
			s.WriteString(" nil")
		}
	}
	return s.String()
}

func compare(t *testing.T, check string, got []string, err error, want []string, werr error) {
	t.Helper()
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: error %v, encoding/csv: %v", check, err, werr)
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("%s: rows:\n%s\nencoding/csv:\n%s", check, g, w)
	}
	if err == nil {
		return
	}
	var pe *ParseError
	var ope *csv.ParseError
	if !errors.As(werr, &ope) {
		return // input.ErrNoColumn
	}
	if !errors.As(err, &pe) || !errors.Is(err, ErrQuote) {
		t.Fatalf("%s: error %v, encoding/csv: %v", check, err, werr)
	}
	if errors.Is(err, errUnterminated) {
		return // see the differences above
	}
	if pe.Line != int64(ope.Line) || pe.Column != ope.Column {
		t.Fatalf("%s: error %v, encoding/csv: %v", check, err, werr)
	}
}
