package csvscan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// fmtRow renders row i of b as `LINE loc lastmod changefreq priority`, each
// field quoted, or nil when the row has no such field.
func fmtRow(b *input.Batch, i int) string {
	var s strings.Builder
	s.WriteString(strconv.FormatInt(b.Line[i], 10))
	for c := range input.CoreColumns {
		s.WriteByte(' ')
		if v := b.Field(c, i); v == nil {
			s.WriteString("nil")
		} else {
			s.WriteString(strconv.Quote(string(v)))
		}
	}
	return s.String()
}

// scanAll reads in with Fill(chunk) into fresh batches, all kept alive to the
// end, and renders the rows only then: so every view must have stayed valid
// while later batches were filled. It checks the batches' invariants too.
func scanAll(t testing.TB, r io.Reader, opt input.Options, chunk int) ([]string, error) {
	t.Helper()
	return scanScanner(t, NewScanner(r, "in.csv", opt), chunk)
}

// scanScanner is scanAll with a scanner of the caller's. A row the scanner
// rejected itself is rendered with " !reason" at the end.
func scanScanner(t testing.TB, sc *Scanner, chunk int) ([]string, error) {
	t.Helper()
	var batches []*input.Batch
	var err error
	for {
		b := new(input.Batch)
		err = sc.Fill(b, chunk)
		if err == io.EOF {
			if b.Len() != 0 {
				t.Fatalf("io.EOF with %d rows in the batch", b.Len())
			}
			err = nil
			break
		}
		if b.Source != "in.csv" {
			t.Fatalf("Source = %q", b.Source)
		}
		batches = append(batches, b)
		if err != nil {
			break
		}
		if b.Len() == 0 {
			t.Fatalf("Fill returned nil with no rows")
		}
		if len(batches) > 1<<16 {
			t.Fatal("no end")
		}
	}
	var rows []string
	n := int64(0)
	for _, b := range batches {
		for c := range input.CoreColumns {
			// A column has a value (maybe nil) per row, or none when unmapped.
			if n := len(b.Fields[c]); n != len(b.Line) && (n != 0 || c == input.Loc) {
				t.Fatalf("len(Fields[%d]) = %d, len(Line) = %d", c, len(b.Fields[c]), len(b.Line))
			}
		}
		checkViewsInBuf(t, b)
		rejected := b.Rejected
		for k, rj := range rejected {
			if rj.Row < 0 || rj.Row >= b.Len() || k > 0 && rj.Row <= rejected[k-1].Row {
				t.Fatalf("b.Rejected = %v with %d rows: not rows in order", rejected, b.Len())
			}
		}
		for i := range b.Line {
			row := fmtRow(b, i)
			if len(rejected) > 0 && rejected[0].Row == i {
				row += " !" + rejected[0].Reason.String()
				rejected = rejected[1:]
			}
			rows = append(rows, row)
		}
		n += int64(b.Len())
	}
	if err == nil && sc.Rows() != n {
		t.Fatalf("Rows() = %d, handed out %d", sc.Rows(), n)
	}
	return rows, err
}

// checkViewsInBuf checks that every view of b points into b.Buf[:len(b.Buf)]:
// it overwrites Buf and expects every view to read back the new bytes.
func checkViewsInBuf(t testing.TB, b *input.Batch) {
	t.Helper()
	saved := bytes.Clone(b.Buf)
	for i := range b.Buf {
		b.Buf[i] = 0xFF
	}
	for c := range input.CoreColumns {
		for i, v := range b.Fields[c] {
			if len(v) != cap(v) {
				t.Fatalf("row %d column %d: cap %d > len %d: appending to a view would overwrite the next field", i, c, cap(v), len(v))
			}
			for _, x := range v {
				if x != 0xFF {
					t.Fatalf("row %d column %d: view outside b.Buf", i, c)
				}
			}
		}
	}
	copy(b.Buf, saved)
}

type csvCase struct {
	name string
	in   string
	opt  input.Options
	want []string
	err  error  // errors.Is target
	pos  string // "line:column" of the ParseError ("line" when Column is 0)
}

var csvCases = []csvCase{
	{name: "header", in: "loc,lastmod,changefreq,priority\nhttps://a/,2024-01-02,daily,0.5\n",
		want: []string{`2 "https://a/" "2024-01-02" "daily" "0.5"`}},
	{name: "header any order", in: "priority,loc,changefreq,lastmod\n0.5,https://a/,daily,2024\n0.1,https://b/,weekly,2023\n",
		want: []string{`2 "https://a/" "2024" "daily" "0.5"`, `3 "https://b/" "2023" "weekly" "0.1"`}},
	{name: "header case and spaces", in: " LOC , LastMod\nhttps://a/,2024\n",
		want: []string{`2 "https://a/" "2024" nil nil`}},
	{name: "extra columns ignored", in: "id,title,loc,views,lastmod,x\n7,Home,https://a/,99,2024,y\n",
		want: []string{`2 "https://a/" "2024" nil nil`}},
	{name: "only loc column", in: "loc\nhttps://a/\n/b\n",
		want: []string{`2 "https://a/" nil nil nil`, `3 "/b" nil nil nil`}},
	{name: "mapped names", in: "URL,Modified,lastmod,Prio\nhttps://a/,2024,XX,1.0\n",
		opt:  input.Options{Columns: [input.NumColumns]string{input.Loc: "url", input.Lastmod: " modified ", input.Priority: "prio"}},
		want: []string{`2 "https://a/" "2024" nil "1.0"`}},
	{name: "mapped loc only, defaults for the rest", in: "address,lastmod\nhttps://a/,2024\n",
		opt:  input.Options{Columns: [input.NumColumns]string{input.Loc: "Address"}},
		want: []string{`2 "https://a/" "2024" nil nil`}},
	{name: "one column mapped to two fields refused", in: "loc,d\nhttps://a/,2024\n",
		opt: input.Options{Columns: [input.NumColumns]string{input.Lastmod: "d", input.Changefreq: "d"}},
		err: input.ErrSharedColumn, pos: "1"},
	{name: "one column mapped to two fields, case-insensitively", in: "loc,lastmod\nhttps://a/,2024\n",
		opt: input.Options{Columns: [input.NumColumns]string{input.Lastmod: "LOC"}},
		err: input.ErrSharedColumn, pos: "1"},
	{name: "duplicate header names refused", in: "loc,lastmod,loc,lastmod\nhttps://a/,1,https://b/,2\n",
		err: input.ErrDuplicateColumn, pos: "1"},
	{name: "duplicate unmapped names", in: "x,loc,x\n1,https://a/,2\n", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "headerless", in: "https://a/\nhttp://b/,2024\n/c,2024,daily,0.3,extra\n",
		want: []string{`1 "https://a/" nil nil nil`, `2 "http://b/" "2024" nil nil`, `3 "/c" "2024" "daily" "0.3"`}},
	{name: "headerless upper case scheme", in: "HTTPS://A/,2024\n", want: []string{`1 "HTTPS://A/" "2024" nil nil`}},
	{name: "headerless ignores mapping", in: "https://a/,2024\n", opt: input.Options{Columns: [input.NumColumns]string{input.Loc: "url"}},
		want: []string{`1 "https://a/" "2024" nil nil`}},
	{name: "headerless quoted first field", in: "\"https://a/?x=1,2\",2024\n", want: []string{`1 "https://a/?x=1,2" "2024" nil nil`}},
	{name: "header that is almost a URL", in: "http,loc\nx,https://a/\n", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "quoted fields", in: "loc,lastmod\n\"https://a/?q=1,2\",\"2024\"\n\"https://b/\"\"x\"\"\",\n\"\",\"\"\n",
		want: []string{`2 "https://a/?q=1,2" "2024" nil nil`, `3 "https://b/\"x\"" "" nil nil`, `4 "" "" nil nil`}},
	{name: "quoted header", in: "\"loc\",\"last,mod\"\nhttps://a/,2024\n",
		opt:  input.Options{Columns: [input.NumColumns]string{input.Lastmod: "last,mod"}},
		want: []string{`2 "https://a/" "2024" nil nil`}},
	{name: "quoted newlines and line numbers", in: "loc,lastmod\n\"https://a/\nb\",x\n\"https://c/\",\"1\n\n2\"\nhttps://d/\n",
		want: []string{`2 "https://a/\nb" "x" nil nil`, `4 "https://c/" "1\n\n2" nil nil`, `7 "https://d/" nil nil nil`}},
	{name: "quoted CRLF becomes LF", in: "loc,lastmod\r\n\"a\r\nb\",\"c\rd\"\r\n",
		want: []string{`2 "a\nb" "c\rd" nil nil`}},
	{name: "quoted then unquoted field", in: "loc,lastmod\n\"https://a/\",2024\r\n",
		want: []string{`2 "https://a/" "2024" nil nil`}},
	{name: "CRLF", in: "loc,lastmod\r\nhttps://a/,2024\r\n\r\nhttps://b/,\r\n",
		want: []string{`2 "https://a/" "2024" nil nil`, `4 "https://b/" "" nil nil`}},
	{name: "lone CR ends a line", in: "loc,lastmod\nhttps://a/\rx,1\r\r\n",
		want: []string{`2 "https://a/" nil nil nil`, `3 "x" "1" nil nil`}},
	{name: "lone CR ends a row, not a field", in: "https://a/,2024-01-01,daily,0.5\rhttps://b/,2024-01-02,daily,0.5\nhttps://c/,2024-01-03,daily,0.5\n",
		want: []string{`1 "https://a/" "2024-01-01" "daily" "0.5"`, `2 "https://b/" "2024-01-02" "daily" "0.5"`, `3 "https://c/" "2024-01-03" "daily" "0.5"`}},
	{name: "CR line ends only", in: "loc,priority\r/a,0.1\r\r\"/b\",0.2\r/c\r",
		want: []string{`2 "/a" nil nil "0.1"`, `4 "/b" nil nil "0.2"`, `5 "/c" nil nil nil`}},
	{name: "lone CR in quotes is data", in: "loc,lastmod\n\"https://a/\rx\",\"1\r\"\r\n",
		want: []string{`2 "https://a/\rx" "1\r" nil nil`}},
	{name: "BOM", in: "\xEF\xBB\xBFloc,lastmod\nhttps://a/,1\n", want: []string{`2 "https://a/" "1" nil nil`}},
	{name: "BOM headerless", in: "\xEF\xBB\xBFhttps://a/\n", want: []string{`1 "https://a/" nil nil nil`}},
	{name: "BOM only once", in: "loc\n\xEF\xBB\xBFhttps://a/\n", want: []string{`2 "\ufeffhttps://a/" nil nil nil`}},
	{name: "blank lines", in: "\n\r\nloc\n\n\nhttps://a/\n\r\n\nhttps://b/\n\n",
		want: []string{`6 "https://a/" nil nil nil`, `9 "https://b/" nil nil nil`}},
	{name: "spaces are not blank", in: "loc\n \nhttps://a/\n", want: []string{`2 " " nil nil nil`, `3 "https://a/" nil nil nil`}},
	{name: "no final newline", in: "loc,lastmod\nhttps://a/,1\nhttps://b/,2", want: []string{`2 "https://a/" "1" nil nil`, `3 "https://b/" "2" nil nil`}},
	{name: "no final newline, CR dropped", in: "loc\nhttps://a/\r", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "no final newline, quoted", in: "loc\n\"https://a/\"", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "no final newline, quoted, CR dropped", in: "loc\n\"https://a/\"\r", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "final CR alone", in: "loc\nhttps://a/\n\r", want: []string{`2 "https://a/" nil nil nil`}},
	{name: "short rows", in: "loc,lastmod,changefreq,priority\nhttps://a/\nhttps://b/,1\nhttps://c/,1,daily\n",
		want: []string{`2 "https://a/" nil nil nil`, `3 "https://b/" "1" nil nil`, `4 "https://c/" "1" "daily" nil`}},
	{name: "loc column missing in a short row", in: "lastmod,loc\n2024\n", want: []string{`2 nil "2024" nil nil`}},
	{name: "empty fields are present", in: "loc,lastmod,priority\n,,\n", want: []string{`2 "" "" nil ""`}},
	{name: "trailing comma", in: "loc,lastmod\nhttps://a/,\n", want: []string{`2 "https://a/" "" nil nil`}},
	{name: "header only", in: "loc,lastmod\n"},
	{name: "empty input", in: ""},
	{name: "blank input", in: "\n\r\n\n"},
	{name: "BOM only", in: "\xEF\xBB\xBF"},
	{name: "quote in an ignored column is still checked", in: "loc,x\nhttps://a/,b\"c\n", err: ErrQuote, pos: "2:13"},

	{name: "lines", in: "https://a/,b\n\"q\"\r\n\n  x\r\r\nlast", opt: input.Options{Lines: true},
		want: []string{`1 "https://a/,b" nil nil nil`, `2 "\"q\"" nil nil nil`, `4 "  x" nil nil nil`, `6 "last" nil nil nil`}},
	{name: "lines no header detection", in: "loc\nhttps://a/\n", opt: input.Options{Lines: true},
		want: []string{`1 "loc" nil nil nil`, `2 "https://a/" nil nil nil`}},
	{name: "lines BOM and final CR", in: "\xEF\xBB\xBFhttps://a/\r\n\r\nhttps://b/\r", opt: input.Options{Lines: true},
		want: []string{`1 "https://a/" nil nil nil`, `3 "https://b/" nil nil nil`}},

	{name: "bare quote", in: "loc\nhttps://a/\nhttps://b/\"x\nhttps://c/\n", want: []string{`2 "https://a/" nil nil nil`}, err: ErrQuote, pos: "3:11"},
	{name: "bare quote in header", in: "lo\"c\nhttps://a/\n", err: ErrQuote, pos: "1:3"},
	{name: "bare quote after BOM", in: "\xEF\xBB\xBFa\"\n", err: ErrQuote, pos: "1:2"},
	{name: "quote after space", in: "loc\n \"https://a/\"\n", err: ErrQuote, pos: "2:2"},
	{name: "extraneous quote", in: "loc,lastmod\nhttps://a/,\"20\"24\"\n", err: ErrQuote, pos: "2:15"},
	{name: "lone CR after a quoted field", in: "loc\n\"https://a/\"\rx\n", want: []string{`2 "https://a/" nil nil nil`, `3 "x" nil nil nil`}},
	{name: "extraneous quote on a later line", in: "loc,lastmod\n\"https://a/\nb\nc\"x,1\n", err: ErrQuote, pos: "4:2"},
	{name: "unterminated quote", in: "loc\nhttps://a/\n\"https://b/\nhttps://c/\n", want: []string{`2 "https://a/" nil nil nil`}, err: ErrQuote, pos: "3:1"},
	{name: "unterminated quote mid record", in: "loc,lastmod\n\n\nhttps://b/,\"x\ny", err: ErrQuote, pos: "4:12"},
	{name: "no loc column", in: "url,lastmod\nhttps://a/,1\n", err: input.ErrNoColumn, pos: "1"},
	{name: "no loc column after blank lines", in: "\n\nlastmod\n", err: input.ErrNoColumn, pos: "3"},
	{name: "mapped loc column missing", in: "loc\nhttps://a/\n", opt: input.Options{Columns: [input.NumColumns]string{input.Loc: "url"}}, err: input.ErrNoColumn, pos: "1"},
}

// chunks are the chunk sizes every case runs with: records straddle chunk
// boundaries, and records longer than the chunk make the buffer grow.
func chunks() []int {
	var c []int
	for n := 1; n <= 64; n++ {
		c = append(c, n)
	}
	return append(c, 100, 1000, 4096, 0)
}

func TestCSVScanner(t *testing.T) {
	for _, tc := range csvCases {
		t.Run(tc.name, func(t *testing.T) {
			readers := map[string]func() io.Reader{
				"plain":   func() io.Reader { return strings.NewReader(tc.in) },
				"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(tc.in)) },
				"dataerr": func() io.Reader { return iotest.DataErrReader(strings.NewReader(tc.in)) },
			}
			for rname, mk := range readers {
				for _, chunk := range chunks() {
					got, err := scanAll(t, mk(), tc.opt, chunk)
					where := fmt.Sprintf("%s reader, chunk %d", rname, chunk)
					checkErr(t, where, err, tc.err, tc.pos)
					if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
						t.Fatalf("%s: rows:\n%s\nwant:\n%s", where, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
					}
				}
			}
		})
	}
}

func checkErr(t *testing.T, where string, err, want error, pos string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", where, err, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %T is not a *ParseError", where, err)
	}
	got := strconv.FormatInt(pe.Line, 10)
	if pe.Column != 0 {
		got += ":" + strconv.Itoa(pe.Column)
	}
	if got != pos || pe.Source != "in.csv" {
		t.Fatalf("%s: error at %s:%s, want in.csv:%s (%v)", where, pe.Source, got, pos, err)
	}
	if !strings.HasPrefix(err.Error(), "in.csv:"+pos+": ") {
		t.Fatalf("%s: message %q does not start with the position", where, err)
	}
}

func TestCSVScannerErrorMessages(t *testing.T) {
	_, err := scanAll(t, strings.NewReader("URL,Last Modified\nhttps://a/,1\n"), input.Options{}, 0)
	for _, s := range []string{"in.csv:1: ", `"loc"`, `"URL", "Last Modified"`, "--loc-column"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	_, err = scanAll(t, strings.NewReader("loc\na\"b\n"), input.Options{}, 0)
	if err == nil || err.Error() != `in.csv:2:2: bad CSV quoting: bare " in a non-quoted field (enclose the field in double quotes and double the quote: "a""b")` {
		t.Errorf("bare quote: %v", err)
	}
	// A very wide header is listed in part.
	wide := strings.Repeat("col,", 100) + "x\n"
	_, err = scanAll(t, strings.NewReader(wide), input.Options{}, 0)
	if err == nil || !strings.Contains(err.Error(), "(81 more)") || len(err.Error()) > 600 {
		t.Errorf("wide header: %v", err)
	}
}

func TestCSVScannerErrorsAreSticky(t *testing.T) {
	sc := NewScanner(strings.NewReader("loc\n\"a\"b\nhttps://c/\n"), "in.csv", input.Options{})
	var b input.Batch
	err1 := sc.Fill(&b, 0)
	err2 := sc.Fill(new(input.Batch), 0)
	if !errors.Is(err1, ErrQuote) || err2 != err1 {
		t.Fatalf("errors %v, %v", err1, err2)
	}
}

func TestCSVScannerReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("loc\nhttps://a/\n"), iotest.ErrReader(boom))
	_, err := scanAll(t, r, input.Options{}, 0)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "in.csv:3: ") { // the line the input had reached
		t.Fatalf("err = %v", err)
	}
	// A reader that never returns anything.
	_, err = scanAll(t, zeroReader{}, input.Options{}, 0)
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestCSVScannerEOFStays(t *testing.T) {
	sc := NewScanner(strings.NewReader("loc\nhttps://a/\n"), "in.csv", input.Options{})
	var b input.Batch
	if err := sc.Fill(&b, 0); err != nil || b.Len() != 1 {
		t.Fatalf("Fill: %v, %d rows", err, b.Len())
	}
	for range 3 {
		if err := sc.Fill(new(input.Batch), 0); err != io.EOF {
			t.Fatalf("Fill after the end: %v", err)
		}
	}
	if sc.Rows() != 1 {
		t.Fatalf("Rows() = %d", sc.Rows())
	}
	if h := sc.Header(); len(h) != 1 || h[0] != "loc" {
		t.Fatalf("Header() = %q", h)
	}
}

func TestCSVScannerBatchSize(t *testing.T) {
	var in strings.Builder
	in.WriteString("loc,lastmod\n")
	for i := range 10000 {
		fmt.Fprintf(&in, "https://example.com/p/%d,2024-01-01\n", i)
	}
	sc := NewScanner(strings.NewReader(in.String()), "in.csv", input.Options{})
	const chunk = 4096
	var b input.Batch
	total, batches := 0, 0
	for {
		b.Reset()
		err := sc.Fill(&b, chunk)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Buf) > chunk || len(b.Buf) < chunk-100 && total+b.Len() < 10000 {
			t.Fatalf("batch of %d bytes for chunk %d", len(b.Buf), chunk)
		}
		if cap(b.Buf) > chunk {
			t.Fatalf("buffer grew to %d for chunk %d", cap(b.Buf), chunk)
		}
		total += b.Len()
		batches++
	}
	if total != 10000 || sc.Rows() != 10000 {
		t.Fatalf("%d rows, Rows() = %d", total, sc.Rows())
	}
	if batches < in.Len()/chunk {
		t.Fatalf("%d batches", batches)
	}
}

// TestCSVScannerViewsStayValid fills one batch, then others (through the
// carry buffer), and checks the first batch's views did not change.
func TestCSVScannerViewsStayValid(t *testing.T) {
	var in strings.Builder
	in.WriteString("loc,lastmod\n")
	for i := range 1000 {
		if i%3 == 0 {
			fmt.Fprintf(&in, "\"https://example.com/q?a=%d,\"\"b\"\"\",2024-01-%02d\n", i, i%28+1)
		} else {
			fmt.Fprintf(&in, "https://example.com/p/%d,2024-01-%02d\n", i, i%28+1)
		}
	}
	sc := NewScanner(strings.NewReader(in.String()), "in.csv", input.Options{})
	var first input.Batch
	if err := sc.Fill(&first, 500); err != nil {
		t.Fatal(err)
	}
	before := make([]string, first.Len())
	for i := range before {
		before[i] = fmtRow(&first, i)
	}
	// Recycle two other batches over the rest of the input.
	var other [2]input.Batch
	for k := 0; ; k++ {
		b := &other[k%2]
		b.Reset()
		if err := sc.Fill(b, 500); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for i := range before {
		if got := fmtRow(&first, i); got != before[i] {
			t.Fatalf("row %d changed: %s, was %s", i, got, before[i])
		}
	}
	checkViewsInBuf(t, &first)
}

// TestCSVScannerAppend: Fill on a batch that already holds rows appends
// after them and never moves their bytes.
func TestCSVScannerAppend(t *testing.T) {
	sc := NewScanner(strings.NewReader("loc\nhttps://a/\nhttps://b/\nhttps://c/with/a/much/longer/path/than/fits\nhttps://d/\n"), "in.csv", input.Options{})
	b := input.Batch{Buf: make([]byte, 0, 64)}
	if err := sc.Fill(&b, 25); err != nil || b.Len() != 1 {
		t.Fatalf("Fill: %v, %d rows", err, b.Len())
	}
	first := b.Fields[input.Loc][0]
	buf := &b.Buf[:1][0]
	// Room for the next record in b.Buf's capacity: appended in place.
	if err := sc.Fill(&b, 11); err != nil {
		t.Fatal(err)
	}
	// The long record does not fit b.Buf's capacity: b is full.
	if err := sc.Fill(&b, 100); err != nil {
		t.Fatal(err)
	}
	if &b.Buf[:1][0] != buf || string(first) != "https://a/" {
		t.Fatal("b.Buf moved")
	}
	got := []string{fmtRow(&b, 0), fmtRow(&b, 1)}
	if b.Len() != 2 || got[1] != `3 "https://b/" nil nil nil` {
		t.Fatalf("rows %q", got)
	}
	var c input.Batch
	if err := sc.Fill(&c, 0); err != nil || c.Len() != 2 || fmtRow(&c, 0) != `4 "https://c/with/a/much/longer/path/than/fits" nil nil nil` {
		t.Fatalf("next batch: %v, %d rows", err, c.Len())
	}
}

func TestCSVScannerRecordCap16MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 50 MiB")
	}
	long := strings.Repeat("a", MaxRecordBytes)
	// Exactly MaxRecordBytes, line end included: fits (and grows the buffer).
	sc := NewScanner(strings.NewReader("loc\n/\n"+long[1:]+"\n/"), "in.csv", input.Options{})
	n := 0
	for {
		var b input.Batch
		err := sc.Fill(&b, 1<<10)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Rejected) != 0 {
			t.Fatalf("rejected %v", b.Rejected)
		}
		n += b.Len()
	}
	if n != 3 {
		t.Fatalf("%d rows", n)
	}
	// One more byte: a rejected row, also when the chunk would hold it.
	for _, chunk := range []int{1 << 10, 32 << 20} {
		sc = NewScanner(strings.NewReader("loc\n/\n"+long+"\n/\n"), "in.csv", input.Options{})
		rows, err := scanScanner(t, sc, chunk)
		want := []string{`2 "/" nil nil nil`, `3 "` + long[:maxKeep] + `…[cut: 16777216 bytes]" nil nil nil !loc_too_long`, `4 "/" nil nil nil`}
		if err != nil || strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Fatalf("chunk %d: %v, %d rows", chunk, err, len(rows))
		}
	}
}

// loopReader reads data over and over, without allocating.
type loopReader struct {
	data []byte
	off  int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.data)
	}
	return n, nil
}

func TestCSVScannerAllocs(t *testing.T) {
	inputs := map[string]string{
		"plain":  "https://example.com/a/b/c?x=1,2024-01-01,daily,0.5\n/d/e,2024-01-02\n",
		"quoted": "\"https://example.com/a,b\",\"2024-01-01\",\"da\"\"ily\",0.5\r\n\"https://example.com/\r\nc\",x\n",
		"lines":  "https://example.com/a/b/c?x=1\r\n",
	}
	for name, in := range inputs {
		sc := NewScanner(&loopReader{data: []byte(in)}, "in.csv", input.Options{Lines: name == "lines"})
		var b input.Batch
		fill := func() {
			b.Reset()
			if err := sc.Fill(&b, 64<<10); err != nil || b.Len() < 100 {
				t.Fatalf("Fill: %v, %d rows", err, b.Len())
			}
		}
		for range 10 { // grow the batch and the scanner's buffers
			fill()
		}
		if a := testing.AllocsPerRun(100, fill); a != 0 {
			t.Errorf("%s: %v allocations per Fill", name, a)
		}
	}
}

func TestParseError(t *testing.T) {
	e := &ParseError{Source: "a.csv", Line: 3, Column: 7, Err: ErrQuote}
	if e.Error() != "a.csv:3:7: bad CSV quoting" || !errors.Is(e, ErrQuote) {
		t.Fatal(e)
	}
	e = &ParseError{Source: "a.csv", Line: 3, Err: ErrRecordTooLong}
	if e.Error() != "a.csv:3: record longer than 16 MiB" || !errors.Is(e, ErrRecordTooLong) {
		t.Fatal(e)
	}
}

// TestCSVScannerDuplicateColumn: a header naming a mapped column twice is
// refused, naming the file, the line and both columns; an unmapped column
// may repeat.
func TestCSVScannerDuplicateColumn(t *testing.T) {
	for in, want := range map[string]string{
		"loc,loc\nhttps://a/,https://b/\n":      `in.csv:1: duplicate column: columns 1 ("loc") and 2 ("loc") both match the loc column name "loc"`,
		"\n\nLoc,lastmod,LOC\nhttps://a/,,\n":   `in.csv:3: duplicate column: columns 1 ("Loc") and 3 ("LOC") both match the loc column name "loc"`,
		"loc,lastmod,lastmod\nhttps://a/,1,2\n": `in.csv:1: duplicate column: columns 2 ("lastmod") and 3 ("lastmod") both match the lastmod column name "lastmod"`,
	} {
		_, err := scanAll(t, strings.NewReader(in), input.Options{}, 0)
		var pe *ParseError
		if !errors.Is(err, input.ErrDuplicateColumn) || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v\nwant %s…", in, err, want)
		}
	}
	rows, err := scanAll(t, strings.NewReader("x,loc,x\n1,https://a/,2\n"), input.Options{}, 0)
	if err != nil || len(rows) != 1 {
		t.Fatalf("unmapped duplicate: %v, %q", err, rows)
	}
}
