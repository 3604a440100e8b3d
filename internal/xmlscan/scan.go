// Package xmlscan is a streaming XML tokenizer for sitemap documents: the
// tokens of encoding/xml's RawToken, read without allocating per token.
//
// A byte-level scanner reads the common shapes of sitemap documents (start
// and end tags with ASCII names and quoted attributes, text with the five
// predefined and numeric character references, CDATA, comments, processing
// instructions and a UTF-8 XML declaration) out of a reused window, without
// allocating per token. Whenever it meets anything else (a DOCTYPE, a
// non-ASCII name, a declared encoding other than UTF-8, a token larger than
// the window) and whenever a token is not well-formed, it stops before that
// token and hands the rest of the stream, from the token's first byte, to an
// encoding/xml Decoder in Strict mode. RawToken keeps no state between
// tokens but a pending self-closing end tag, which the scanner has always
// returned by then, so the decoder reads the rest exactly as it would have
// read it from the start: the scanner only ever accepts what encoding/xml
// accepts, giving the same tokens, and every error (and its message) comes
// from encoding/xml. FuzzTokenizer and TestTokenizerAgrees hold it to that.
package xmlscan

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of a token.
type Kind uint8

// The kinds of tokens, as encoding/xml's Token types.
const (
	tokEOF    Kind = iota
	Start          // a start tag: Name, Attrs
	End            // an end tag: Name
	Text           // character data, CDATA included: Data
	ProcInst       // a processing instruction: Target, Data
	Comment        // a comment: Data
	Directive      // a directive such as DOCTYPE: Data
)

// Tokenizer yields the raw tokens of one document; the current token is in
// its exported fields, valid until the next call of Next.
type Tokenizer struct {
	sc       *scanner // nil once the decoder has taken over
	d        *xml.Decoder
	lineBase int // lines before the decoder's first byte
	charset  func(label string, r io.Reader) (io.Reader, error)
	window   *[]byte       // the scanner's buffer, also read by the decoder after a hand-over
	capped   *cappedReader // the decoder's input, bounding each of its tokens

	Kind   Kind
	Name   xml.Name   // start and end tags
	Attrs  []xml.Attr // start tags
	Data   []byte     // text, comment, directive, PI body
	Target string     // PI target
	// Partial is set on a piece of a text or comment longer than the
	// window: the next token continues it.
	Partial bool
}

// WindowSize is the scanner's buffer; a token larger than it goes to the
// decoder, except a text or comment, which is returned in pieces.
const WindowSize = 256 << 10

// NewTokenizer returns a tokenizer reading r. charset is encoding/xml's
// Decoder.CharsetReader, called for a declared encoding other than UTF-8
// (nil: such a document is an error).
func NewTokenizer(r io.Reader, charset func(label string, r io.Reader) (io.Reader, error)) *Tokenizer {
	w := windows.Get().(*[]byte)
	sc := &scanner{r: r, buf: *w, line: 1, names: map[string]recentName{}}
	return &Tokenizer{sc: sc, window: w, charset: charset}
}

// windows recycles the scanners' windows across the files of a set.
var windows = sync.Pool{New: func() any { b := make([]byte, WindowSize); return &b }}

// Close recycles the tokenizer's window; the tokenizer is not used after.
func (t *Tokenizer) Close() {
	if t.window != nil {
		windows.Put(t.window)
		t.window, t.sc, t.d = nil, nil, nil
	}
}

// Next reads the next token; io.EOF at the end of a well-formed stream. A
// syntax error is an *xml.SyntaxError whose Line counts from the start of
// the document; a token too large for the decoder is ErrTokenTooLarge.
func (t *Tokenizer) Next() error {
	if t.sc != nil {
		switch k := t.sc.next(); k {
		case tokFallback:
			t.fallback()
		case tokError:
			return t.sc.synErr
		default:
			t.Kind = k
			t.Name, t.Attrs, t.Data, t.Target, t.Partial = t.sc.name, t.sc.attrs, t.sc.data, t.sc.target, t.sc.partial
			if k == tokEOF {
				return io.EOF
			}
			return nil
		}
	}
	tok, err := t.d.RawToken()
	if err != nil {
		if se, ok := err.(*xml.SyntaxError); ok && t.lineBase > 0 {
			return &xml.SyntaxError{Msg: se.Msg, Line: t.lineBase + se.Line}
		}
		return err
	}
	t.capped.allow(MaxToken) // the next token may be MaxToken bytes long
	t.Partial = false
	switch x := tok.(type) {
	case xml.StartElement:
		t.Kind, t.Name, t.Attrs = Start, x.Name, x.Attr
	case xml.EndElement:
		t.Kind, t.Name = End, x.Name
	case xml.CharData:
		t.Kind, t.Data = Text, x
	case xml.Comment:
		t.Kind, t.Data = Comment, x
	case xml.ProcInst:
		t.Kind, t.Target, t.Data = ProcInst, x.Target, x.Inst
	case xml.Directive:
		t.Kind, t.Data = Directive, x
	}
	return nil
}

// fallback hands the rest of the stream to encoding/xml.
func (t *Tokenizer) fallback() {
	s := t.sc
	var tail io.Reader = s.r
	switch {
	case s.err != nil:
		tail = errReader{s.err}
	case s.eof:
		tail = eofReader{}
	}
	t.capped = &cappedReader{r: bufio.NewReaderSize(io.MultiReader(bytes.NewReader(s.buf[s.pos:s.end]), tail), 4096)}
	t.capped.allow(MaxToken)
	t.d = xml.NewDecoder(t.capped)
	t.d.Strict = true
	t.d.CharsetReader = t.charset
	t.lineBase = s.line - 1
	t.sc = nil
}

// Line is the line at the end of the current token (encoding/xml's InputPos).
func (t *Tokenizer) Line() int {
	if t.sc != nil {
		return t.sc.line
	}
	l, _ := t.d.InputPos()
	return t.lineBase + l
}

// Buffered returns the unread bytes the scanner holds, reading more first
// while it holds fewer than n and its window has room, so that a caller
// that recognises the next tokens itself (check's fast path for the <url>
// entries generate writes) can read them there and consume them with Skip.
// It returns nil once the scanner has handed over to encoding/xml, and
// while a token is in progress (a pending end tag, a comment in pieces).
// The bytes stay valid until the next call of Next, Buffered or Skip.
func (t *Tokenizer) Buffered(n int) []byte {
	s := t.sc
	if s == nil || s.needClose || s.cont != contNone {
		return nil
	}
	for s.end-s.pos < n && !s.eof && s.err == nil {
		before := s.end - s.pos
		if !s.fill() || s.end-s.pos == before {
			break // the window is full, or the reader gave nothing this time
		}
	}
	return s.buf[s.pos:s.end]
}

// Skip consumes the first n bytes of what Buffered returned, holding lines
// newlines: whole, well-formed tokens the caller has read itself. The next
// token starts after them, and Line counts them.
func (t *Tokenizer) Skip(n, lines int) {
	t.sc.pos += n
	t.sc.line += lines
}

// fast reports whether the scanner is still reading (for tests).
func (t *Tokenizer) fast() bool { return t.sc != nil }

// MaxToken bounds the bytes encoding/xml may read for one token after a
// hand-over: it keeps a whole token (a text, a comment, a start tag with its
// attributes) in memory, so an unbounded one would be a denial of service.
// The scanner itself never holds more than its window: it returns a long
// text or comment in pieces.
const MaxToken = 1 << 20

// ErrTokenTooLarge is returned for a token longer than MaxToken read by the
// encoding/xml decoder after a hand-over.
var ErrTokenTooLarge = errors.New("a single XML token longer than 1 MiB where the reader had handed over to encoding/xml (after a DOCTYPE, a non-ASCII name, a declared encoding other than UTF-8 or a very long start tag)")

// cappedReader feeds the decoder and fails once it has read more than the
// allowance since the last token. It is an io.ByteReader, so encoding/xml
// reads it directly, without a buffer of its own.
type cappedReader struct {
	r        *bufio.Reader
	n, limit int64
}

func (c *cappedReader) allow(n int64) { c.limit = c.n + n }

func (c *cappedReader) ReadByte() (byte, error) {
	if c.n >= c.limit {
		return 0, ErrTokenTooLarge
	}
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, ErrTokenTooLarge
	}
	p = p[:min(int64(len(p)), c.limit-c.n)]
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// scanner results: a Kind, or one of these.
const (
	tokFallback Kind = 100 // hand over to encoding/xml at this token
	tokError    Kind = 101 // a syntax error inside a token read in pieces: synErr
)

// cont is what a piece returned by the scanner continues.
type cont uint8

const (
	contNone    cont = iota
	contComment      // the rest of a comment: up to and including "-->"
)

type status uint8

const (
	stOK status = iota
	stMore
	stFallback
)

type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	err      error
	line     int

	needClose bool
	toClose   xml.Name

	name    xml.Name
	attrs   []xml.Attr
	data    []byte
	target  string
	tmp     []byte
	names   map[string]recentName
	recent  [32]recentName // the names last met, by a hash of their bytes
	partial bool           // the token returned is a piece, continued by the next
	cont    cont           // what the bytes at pos continue
	cut     bool           // text: the end of the bytes given ends the piece
	synErr  error
}

func newScanner(r io.Reader, window int) *scanner {
	return &scanner{r: r, buf: make([]byte, window), line: 1, names: map[string]recentName{}}
}

// next returns the next token's kind (tokFallback: hand over to encoding/xml).
func (s *scanner) next() Kind {
	if s.needClose {
		s.needClose = false
		s.name = s.toClose
		return End
	}
	s.partial = false
	for {
		if s.pos == s.end {
			if s.eof && s.cont == contNone {
				return tokEOF
			}
			if s.cont != contNone && (s.eof || s.err != nil) {
				return s.contEnd()
			}
			if s.err != nil || !s.fill() {
				return tokFallback
			}
			continue
		}
		var k Kind
		var n, lines int
		var st status
		if s.cont == contComment {
			k, n, lines, st = s.commentRest(s.buf[s.pos:s.end])
		} else {
			k, n, lines, st = s.scan(s.buf[s.pos:s.end])
		}
		switch st {
		case stOK:
			s.pos += n
			s.line += lines
			return k
		case stFallback:
			if s.cont != contNone {
				return tokError
			}
			return tokFallback
		}
		if s.cont != contNone && (s.eof || s.err != nil) {
			return s.contEnd()
		}
		if s.eof || s.err != nil {
			return tokFallback
		}
		if !s.fill() {
			// A token larger than the window: a long text or comment is
			// returned in pieces, anything else goes to encoding/xml.
			k, n, lines, st := s.piece(s.buf[s.pos:s.end])
			if st != stOK {
				return tokFallback
			}
			s.pos += n
			s.line += lines
			s.partial = true
			return k
		}
	}
}

// contEnd ends a token read in pieces at the end of the input: the
// decoder's "unexpected EOF", or the read error.
func (s *scanner) contEnd() Kind {
	s.line += bytes.Count(s.buf[s.pos:s.end], nl)
	s.pos = s.end
	if s.err != nil {
		s.synErr = s.err
	} else {
		s.synErr = &xml.SyntaxError{Msg: "unexpected EOF", Line: s.line}
	}
	return tokError
}

// piece returns the first piece of a text or comment that fills the whole
// window b, or the next piece of a comment. A piece ends where the next one
// can start with nothing carried over: before an incomplete character or
// reference, a CR (of a CRLF) and "]]" (of "]]>") in text, before "-" (of
// "--") in a comment.
func (s *scanner) piece(b []byte) (Kind, int, int, status) {
	switch {
	case s.cont == contComment:
		cut := commentCut(b, 0)
		if cut == 0 {
			return 0, 0, 0, stFallback
		}
		s.data = b[:cut]
		return Comment, cut, bytes.Count(b[:cut], nl), stOK
	case b[0] != '<':
		cut := len(b) - 1 // the next piece is not empty: a text token, not a CDATA one
		if amp := bytes.LastIndexByte(b[max(0, cut-64):], '&'); amp >= 0 {
			cut = max(0, cut-64) + amp
		}
		for r := cut - 1; r >= 0 && r >= cut-utf8.UTFMax; r-- {
			if utf8.RuneStart(b[r]) {
				if !utf8.FullRune(b[r:cut]) {
					cut = r
				}
				break
			}
		}
		if cut > 0 && (b[cut-1] == ']' || b[cut-1] == '\r') {
			cut--
		}
		if cut > 0 && b[cut-1] == ']' {
			cut--
		}
		if cut == 0 {
			return 0, 0, 0, stFallback
		}
		s.cut = true
		data, n, lines, st := s.text(b[:cut], 0, 0)
		s.cut = false
		if st != stOK || n != cut {
			return 0, 0, 0, stFallback
		}
		s.data = data
		return Text, n, lines, stOK
	case len(b) >= 4 && string(b[:4]) == "<!--":
		cut := commentCut(b, 4)
		if cut == 4 {
			return 0, 0, 0, stFallback
		}
		s.data = b[4:cut]
		s.cont = contComment
		return Comment, cut, bytes.Count(b[:cut], nl), stOK
	}
	return 0, 0, 0, stFallback
}

// commentCut is where a piece of comment text b[from:], holding no "--"
// followed by a byte, ends.
func commentCut(b []byte, from int) int {
	cut := len(b)
	if k := bytes.Index(b[from:], []byte("--")); k >= 0 {
		cut = from + k
	}
	if cut > from && b[cut-1] == '-' {
		cut--
	}
	return cut
}

// commentRest reads the rest of a comment returned in pieces, up to its "-->".
func (s *scanner) commentRest(b []byte) (Kind, int, int, status) {
	k := bytes.Index(b, []byte("--"))
	if k < 0 || k+2 >= len(b) {
		return 0, 0, 0, stMore
	}
	n := k + 3
	if b[k+2] != '>' {
		s.synErr = &xml.SyntaxError{Msg: `invalid sequence "--" not allowed in comments`, Line: s.line + bytes.Count(b[:n], nl)}
		return 0, 0, 0, stFallback
	}
	s.data = b[:k]
	s.cont = contNone
	return Comment, n, bytes.Count(b[:n], nl), stOK
}

// fill moves the unread bytes to the front and reads more; false when the
// window is full.
func (s *scanner) fill() bool {
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		return false
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err == io.EOF {
		s.eof = true
	} else if err != nil {
		s.err = err
	}
	return true
}

// scan reads one token at the start of b: its kind, length and newlines.
func (s *scanner) scan(b []byte) (Kind, int, int, status) {
	if b[0] != '<' {
		data, n, lines, st := s.text(b, 0, 0)
		if st != stOK {
			return 0, 0, 0, st
		}
		s.data = data
		return Text, n, lines, stOK
	}
	if len(b) < 2 {
		return 0, 0, 0, stMore
	}
	switch b[1] {
	case '/':
		name, i, st := s.nsname(b, 2)
		if st != stOK {
			return 0, 0, 0, st
		}
		i, lines := spaces(b, i)
		if i >= len(b) {
			return 0, 0, 0, stMore
		}
		if b[i] != '>' {
			return 0, 0, 0, stFallback
		}
		s.name = name
		return End, i + 1, lines, stOK
	case '?':
		return s.procInst(b)
	case '!':
		if len(b) < 4 {
			return 0, 0, 0, stMore
		}
		switch {
		case b[2] == '-' && b[3] == '-':
			k := bytes.Index(b[4:], []byte("--"))
			if k < 0 || 4+k+2 >= len(b) {
				return 0, 0, 0, stMore
			}
			if b[4+k+2] != '>' {
				return 0, 0, 0, stFallback
			}
			s.data = b[4 : 4+k]
			n := 4 + k + 3
			return Comment, n, bytes.Count(b[:n], nl), stOK
		case len(b) >= 9 && string(b[2:9]) == "[CDATA[":
			return s.cdata(b)
		case len(b) < 9 && b[2] == '[':
			return 0, 0, 0, stMore
		}
		return 0, 0, 0, stFallback // a directive, or not well-formed
	}
	return s.startTag(b)
}

var nl = []byte{'\n'}

func (s *scanner) startTag(b []byte) (Kind, int, int, status) {
	name, i, st := s.nsname(b, 1)
	if st != stOK {
		return 0, 0, 0, st
	}
	s.attrs = s.attrs[:0]
	lines, empty := 0, false
	for {
		var n int
		i, n = spaces(b, i)
		lines += n
		if i >= len(b) {
			return 0, 0, 0, stMore
		}
		if b[i] == '/' {
			if i+1 >= len(b) {
				return 0, 0, 0, stMore
			}
			if b[i+1] != '>' {
				return 0, 0, 0, stFallback
			}
			empty = true
			i += 2
			break
		}
		if b[i] == '>' {
			i++
			break
		}
		var a xml.Attr
		a.Name, i, st = s.nsname(b, i)
		if st != stOK {
			return 0, 0, 0, st
		}
		i, n = spaces(b, i)
		lines += n
		if i >= len(b) {
			return 0, 0, 0, stMore
		}
		if b[i] != '=' {
			return 0, 0, 0, stFallback
		}
		i, n = spaces(b, i+1)
		lines += n
		if i >= len(b) {
			return 0, 0, 0, stMore
		}
		q := b[i]
		if q != '"' && q != '\'' {
			return 0, 0, 0, stFallback
		}
		val, end, n, st := s.text(b, i+1, q)
		if st != stOK {
			return 0, 0, 0, st
		}
		lines += n
		a.Value = string(val)
		s.attrs = append(s.attrs, a)
		i = end
	}
	s.name = name
	if empty {
		s.needClose, s.toClose = true, name
	}
	return Start, i, lines, stOK
}

func (s *scanner) procInst(b []byte) (Kind, int, int, status) {
	i, st := asciiName(b, 2)
	if st != stOK {
		return 0, 0, 0, st
	}
	target := b[2:i]
	i, _ = spaces(b, i)
	k := bytes.Index(b[i:], []byte("?>"))
	if k < 0 {
		return 0, 0, 0, stMore
	}
	data := b[i : i+k]
	if string(target) == "xml" {
		content := string(data)
		if ver := procInstParam("version", content); ver != "" && ver != "1.0" {
			return 0, 0, 0, stFallback
		}
		if enc := procInstParam("encoding", content); enc != "" && !strings.EqualFold(enc, "utf-8") {
			return 0, 0, 0, stFallback // the decoder calls the charset reader
		}
		s.target = "xml"
	} else {
		s.target = string(target)
	}
	s.data = data
	n := i + k + 2
	return ProcInst, n, bytes.Count(b[:n], nl), stOK
}

// procInstParam is encoding/xml's procInst: the value of param in a PI body.
func procInstParam(param, s string) string {
	param += "="
	lenp := len(param)
	i := 0
	var sep byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, param)
		if k < 0 || lenp+k >= len(sub) {
			return ""
		}
		i += lenp + k + 1
		if c := sub[lenp+k]; c == '\'' || c == '"' {
			sep = c
			break
		}
	}
	if sep == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], sep)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}

func (s *scanner) cdata(b []byte) (Kind, int, int, status) {
	k := bytes.Index(b[9:], []byte("]]>"))
	if k < 0 {
		return 0, 0, 0, stMore
	}
	raw := b[9 : 9+k]
	lines := 0
	copying := false
	s.tmp = s.tmp[:0]
	from := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf, c == '\t':
			i++
		case c == '\n':
			lines++
			if copying && i > 0 && raw[i-1] == '\r' {
				s.tmp = append(s.tmp, raw[from:i]...)
				from = i + 1
			}
			i++
		case c == '\r':
			from, copying = s.cr(raw, from, i), true
			i = from
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:])
			if (r == utf8.RuneError && size == 1) || !isInCharacterRange(r) {
				return 0, 0, 0, stFallback
			}
			i += size
		default:
			return 0, 0, 0, stFallback
		}
	}
	if copying {
		s.data = append(s.tmp, raw[from:]...)
		s.tmp = s.data
	} else {
		s.data = raw
	}
	n := 9 + k + 3
	return Text, n, lines + bytes.Count(b[9+k:n], nl), stOK
}

// byte classes of text: 0 plain, 1 needs a look.
var textClass = func() (t [256]uint8) {
	for c := range 256 {
		if c < 0x20 || c >= utf8.RuneSelf || c == '<' || c == '&' || c == '>' || c == '"' || c == '\'' {
			t[c] = 1
		}
	}
	return t
}()

// cr appends b[from:i] and a LF for the CR at b[i] to s.tmp (XML reads a
// CR, or a CRLF, as a LF) and returns where the bytes to copy go on.
func (s *scanner) cr(b []byte, from, i int) int {
	s.tmp = append(append(s.tmp, b[from:i]...), '\n')
	return i + 1
}

// text reads character data from b[i:]: up to a '<' (quote 0, not
// consumed) or up to the quote byte (consumed). It returns the decoded text,
// the index after it, and the newlines read.
func (s *scanner) text(b []byte, i int, quote byte) ([]byte, int, int, status) {
	start, from := i, i
	copying := false
	lines := 0
	s.tmp = s.tmp[:0]
	for {
		for i < len(b) && textClass[b[i]] == 0 {
			i++
		}
		if i >= len(b) {
			if quote == 0 && (s.eof || s.cut) {
				break
			}
			return nil, 0, 0, stMore
		}
		switch c := b[i]; {
		case c == '<':
			if quote != 0 {
				return nil, 0, 0, stFallback
			}
		case quote != 0 && c == quote:
		case c == '\n':
			lines++
			if copying && i > start && b[i-1] == '\r' {
				s.tmp = append(s.tmp, b[from:i]...)
				from = i + 1
			}
			i++
			continue
		case c == '\t', c == '"', c == '\'':
			i++
			continue
		case c == '>':
			if quote == 0 && i-start >= 2 && b[i-1] == ']' && b[i-2] == ']' {
				return nil, 0, 0, stFallback // ]]> outside CDATA
			}
			i++
			continue
		case c == '\r':
			from, copying = s.cr(b, from, i), true
			i = from
			continue
		case c == '&':
			r, n, st := entityAt(b[i:])
			if st != stOK {
				return nil, 0, 0, st
			}
			s.tmp = append(s.tmp, b[from:i]...)
			s.tmp = utf8.AppendRune(s.tmp, r)
			copying = true
			i += n
			from = i
			continue
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				if !utf8.FullRune(b[i:]) && !s.eof {
					return nil, 0, 0, stMore
				}
				return nil, 0, 0, stFallback
			}
			if !isInCharacterRange(r) {
				return nil, 0, 0, stFallback
			}
			i += size
			continue
		default: // a control character
			return nil, 0, 0, stFallback
		}
		break
	}
	var data []byte
	if copying {
		data = append(s.tmp, b[from:i]...)
		s.tmp = data
	} else {
		data = b[start:i]
	}
	if quote != 0 {
		i++
	}
	return data, i, lines, stOK
}

// entityAt decodes the character reference at the start of b (b[0] == '&')
// as encoding/xml does; anything it would reject is stFallback.
func entityAt(b []byte) (rune, int, status) {
	if len(b) < 2 {
		return 0, 0, stMore
	}
	if b[1] == '#' {
		i, base := 2, 10
		if i < len(b) && b[i] == 'x' {
			i, base = 3, 16
		}
		j := i
		for j < len(b) && ('0' <= b[j] && b[j] <= '9' || base == 16 && ('a' <= b[j] && b[j] <= 'f' || 'A' <= b[j] && b[j] <= 'F')) {
			j++
		}
		if j >= len(b) {
			return 0, 0, stMore
		}
		if b[j] != ';' {
			return 0, 0, stFallback
		}
		n, err := strconv.ParseUint(string(b[i:j]), base, 64)
		if err != nil || n > unicode.MaxRune {
			return 0, 0, stFallback
		}
		r := rune(n)
		if !utf8.ValidRune(r) {
			r = utf8.RuneError // string(rune(n)) of a surrogate
		}
		if !isInCharacterRange(r) {
			return 0, 0, stFallback
		}
		return r, j + 1, stOK
	}
	j := 1
	for j < len(b) && j < 8 && isNameByte(b[j]) {
		j++
	}
	if j >= len(b) {
		return 0, 0, stMore
	}
	if b[j] != ';' {
		return 0, 0, stFallback
	}
	switch string(b[1:j]) {
	case "lt":
		return '<', j + 1, stOK
	case "gt":
		return '>', j + 1, stOK
	case "amp":
		return '&', j + 1, stOK
	case "apos":
		return '\'', j + 1, stOK
	case "quot":
		return '"', j + 1, stOK
	}
	return 0, 0, stFallback
}

// spaces skips XML white space from b[i:], counting newlines.
func spaces(b []byte, i int) (int, int) {
	lines := 0
	for i < len(b) {
		switch b[i] {
		case '\n':
			lines++
		case ' ', '\t', '\r':
		default:
			return i, lines
		}
		i++
	}
	return i, lines
}

// asciiName reads a name of ASCII name bytes starting with a letter, '_' or
// ':' at b[i:]; a non-ASCII byte (checked by encoding/xml against the
// Unicode tables) or an invalid name is stFallback.
func asciiName(b []byte, i int) (int, status) {
	if i >= len(b) {
		return 0, stMore
	}
	if c := b[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == ':') {
		return 0, stFallback
	}
	j := i + 1
	for j < len(b) && isNameByte(b[j]) {
		j++
	}
	if j >= len(b) {
		return 0, stMore
	}
	if b[j] >= utf8.RuneSelf {
		return 0, stFallback
	}
	return j, stOK
}

// recentName is a name as written and as split at its colon.
type recentName struct {
	raw  string
	name xml.Name
}

// maxNames bounds the names interned per file.
const maxNames = 1024

// nsname reads a name at b[i:] and splits it at its colon as encoding/xml
// does, interning it so that a name costs no allocation.
func (s *scanner) nsname(b []byte, i int) (xml.Name, int, status) {
	j, st := asciiName(b, i)
	if st != stOK {
		return xml.Name{}, 0, st
	}
	raw := b[i:j]
	// A sitemap uses a handful of names over and over: a direct-mapped
	// cache in front of the map saves hashing each.
	slot := &s.recent[(len(raw)*5+int(raw[0])*3+int(raw[len(raw)-1]))%len(s.recent)]
	if slot.raw == string(raw) {
		return slot.name, j, stOK
	}
	if e, ok := s.names[string(raw)]; ok {
		*slot = e
		return e.name, j, stOK
	}
	str := string(raw)
	var n xml.Name
	switch c := strings.Count(str, ":"); {
	case c > 1:
		return xml.Name{}, 0, stFallback
	case c == 1:
		space, local, _ := strings.Cut(str, ":")
		if space == "" || local == "" {
			n.Local = str
		} else {
			n.Space, n.Local = space, local
		}
	default:
		n.Local = str
	}
	if len(s.names) < maxNames {
		*slot = recentName{str, n}
		s.names[str] = *slot
	}
	return n, j, stOK
}

func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}

// isInCharacterRange is the Char production of XML 1.0, as encoding/xml has it.
func isInCharacterRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
