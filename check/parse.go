package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/gunzip"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/internal/xmlscan"
)

// kind is what a file turned out to be.
type kind uint8

const (
	kindUnknown kind = iota
	kindURLSet
	kindIndex
)

// entry is a <sitemap> of an index: the file it names, for the walker.
type entry struct {
	loc  string // the <loc> text, trimmed
	line int
}

// maxText bounds the text kept of one simple-content element: a loc is at
// most 2,048 characters, so anything longer is wrong whatever the rest says.
const maxText = 64 << 10

// parser checks one file, token by token, in constant memory (the
// tokenizer's window, the element stack and one text buffer).
type parser struct {
	c       *checker
	name    string
	file    uint32
	enc     *encode.Encoder // scope of the file's URLs
	rawEnc  *encode.Encoder // no scope: index locs are mapped by the walker
	t       *xmlscan.Tokenizer
	ns      []binding
	stack   []frame
	skip    int // depth of the frame whose subtree is being skipped, 0: none
	text    []byte
	textLen int // length of the whole text, also past maxText
	buf     []byte
	rootEnd bool
	tokens  int

	kind    kind
	urls    int64
	ord     uint32
	entries []entry
	batch   batch     // URL fingerprints for the duplicate check
	news    bool      // a urlset declaring the news namespace: a news sitemap
	newsN   int       // <news:news> elements
	urlLoc  bool      // the current <url> has a <loc>
	page    pageLinks // the current <url>'s loc and hreflang alternates

	nentries int    // index entries, also past maxEntries
	encoding string // HTTP Content-Encoding of the body: "gzip" or ""

	tooLarge bool // reading stopped at MaxFileBytes
	reported int  // problems reported of this file
	corrupt  bool // a damaged gzip stream: what it decoded is not the file's
	hold     bool // a gzip file: problems wait in held until it is read whole
	held     []Problem
	heldMore map[Code]int // past maxHeld, counted

	general bool   // no fast path (Options.general)
	locBuf  []byte // the fast path's decoded loc
	fast    int64  // entries the fast path took
}

type binding struct{ prefix, uri string }

type frame struct {
	raw     xml.Name // as written, to match the end tag
	nsCount int      // bindings before this element's
	e       *elem    // nil: not checked (skipped or unknown)
	pi, n   int      // sequence position and occurrences of that particle
	line    int
	text    bool // non-white text seen in element-only content
}

// MaxFileBytes is the most bytes read of one file, uncompressed and as
// stored: the protocol's 50 MiB. Past it a file is reported too_large and
// reading stops, so a gzip bomb or an endless body costs nothing more.
const MaxFileBytes = protocol.MaxFileBytes

// maxNesting bounds the elements open at once (xmllint's default is 256;
// a sitemap needs 5): the parser keeps a frame per open element.
const maxNesting = 256

// maxAttrs bounds the attributes of one element checked one by one, and
// maxBindings the namespace declarations in scope: a sitemap element has at
// most a few of either, and hostile tags with tens of thousands made the
// checks quadratic (seconds of CPU a tag).
const (
	maxAttrs    = 64
	maxBindings = 1024
)

// maxEntries bounds the index entries kept for the walker; more are counted.
const maxEntries = protocol.MaxIndexEntries

var errTooLarge = fmt.Errorf("more than %d bytes", MaxFileBytes)

// countingReader counts the bytes read through it (the uncompressed size),
// stops past limit, and stops at once when the check is cancelled.
type countingReader struct {
	ctx   context.Context
	r     io.Reader
	n     int64
	limit int64
	err   error // the first error of r other than io.EOF
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.n > c.limit {
		return 0, errTooLarge
	}
	p = p[:min(int64(len(p)), c.limit+1-c.n)]
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

var bom = []byte("\xef\xbb\xbf")

// parse checks one file read from r and returns what it is and its size.
func (p *parser) parse(ctx context.Context, r io.Reader) (size int64) {
	size = p.read(ctx, r)
	p.settle()
	return size
}

// maxHeld bounds the problems of a gzip file held back until its stream
// proves whole; the rest are counted.
const maxHeld = 1024

// settle reports the problems held back while a gzip file was read: its
// stream is whole (a damaged one's were dropped, see readError).
func (p *parser) settle() {
	held, more := p.held, p.heldMore
	p.hold, p.held, p.heldMore = false, nil, nil
	for _, pr := range held {
		p.c.report(pr)
	}
	for code, n := range more {
		p.c.count(code, n)
	}
}

// read checks the file read from r and returns its size.
func (p *parser) read(ctx context.Context, r io.Reader) (size int64) {
	raw := &countingReader{ctx: ctx, r: r, limit: MaxFileBytes}
	br := bufio.NewReaderSize(raw, 64<<10)
	if p.encoding == "gzip" {
		// Decoded in transit; a .gz file served so is gzip inside again
		// (or, when the server compressed it on the fly, plain XML).
		zr, err := gunzip.NewReader(br)
		if err != nil {
			p.problem(0, CodeGzip, fmt.Sprintf("Content-Encoding: gzip, but a corrupt gzip stream: %v", err), "")
			return 0
		}
		defer zr.Close()
		br = bufio.NewReaderSize(&countingReader{ctx: ctx, r: zr, limit: MaxFileBytes}, 64<<10)
	}
	var src io.Reader = br
	magic, _ := br.Peek(2)
	gz := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	// A damaged deflate stream decodes to garbage before its checksum (at
	// the end) says so: the problems found in it wait for the end.
	p.hold = gz
	if gz {
		zr, err := gunzip.NewReader(br)
		if err != nil {
			p.problem(0, CodeGzip, fmt.Sprintf("corrupt gzip stream: %v", err), "")
			return 0
		}
		defer zr.Close()
		src = zr
	} else if strings.HasSuffix(p.name, ".gz") && p.encoding == "" {
		p.problem(0, CodeGzip, "name ends in .gz but the content is not gzip-compressed", "")
	}
	cr := &countingReader{ctx: ctx, r: src, limit: MaxFileBytes}
	// A UTF-8 byte order mark may precede the XML declaration (XML 1.0 F.1);
	// encoding/xml would read it as text.
	bb := bufio.NewReaderSize(cr, 4096)
	if b, _ := bb.Peek(3); bytes.Equal(b, bom) {
		bb.Discard(3)
	} else if len(b) >= 2 && (b[0] == 0xfe && b[1] == 0xff || b[0] == 0xff && b[1] == 0xfe) {
		// UTF-16's byte order mark: a file in an encoding the protocol
		// does not allow, said as such rather than as invalid UTF-8.
		p.problem(1, CodeNotUTF8, "the file is UTF-16 (its byte order mark); the protocol asks for UTF-8", "")
		return cr.n
	}
	p.t = xmlscan.NewTokenizer(bb, p.charset)
	t := p.t
	defer t.Close()
	for {
		if p.fastEntries() {
			if p.fastURLs(ctx); ctx.Err() != nil {
				return cr.n
			}
		}
		if p.tokens++; p.tokens&4095 == 0 && ctx.Err() != nil {
			return cr.n
		}
		err := t.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() == nil {
				if raw.err != nil && errors.Is(err, raw.err) {
					gz = false // the source failed (over HTTP, its deadline): not the gzip stream
				}
				if gz && xmlError(err) {
					if derr := gzipDamage(ctx, cr); derr != nil {
						err = derr
					}
				}
				p.readError(err, gz)
			}
			return min(cr.n, MaxFileBytes)
		}
		var ok bool
		switch t.Kind {
		case xmlscan.Start:
			ok = p.start(xml.StartElement{Name: t.Name, Attr: t.Attrs})
		case xmlscan.End:
			ok = p.end(xml.EndElement{Name: t.Name})
		case xmlscan.Text:
			ok = p.chardata(t.Data)
		case xmlscan.ProcInst:
			ok = p.procInst(xml.ProcInst{Target: t.Target, Inst: t.Data})
		case xmlscan.Directive:
			ok = p.directive(t.Data)
		case xmlscan.Comment:
			ok = true
		}
		if !ok {
			if gz && ctx.Err() == nil {
				if derr := gzipDamage(ctx, cr); derr != nil {
					p.readError(derr, true)
				}
			}
			return min(cr.n, MaxFileBytes)
		}
	}
	switch {
	case len(p.stack) > 0:
		p.notWellFormed("unexpected end of file: <" + p.stack[len(p.stack)-1].raw.Local + "> is not closed")
	case !p.rootEnd:
		p.notWellFormed("no root element")
	}
	return cr.n
}

// xmlError reports whether err is the XML's, not the stream's under it.
func xmlError(err error) bool {
	var se *xml.SyntaxError
	return errors.As(err, &se) || errors.Is(err, xmlscan.ErrTokenTooLarge) || strings.HasPrefix(err.Error(), "xml: ")
}

// gzipDamage reads the rest of a gzip file whose XML stopped the check,
// and returns the gzip stream's error, if it has one: a flipped bit turns
// what follows into garbage, and the garbage, not the damage, is what the
// XML reader sees first; the checksum at the end says what happened. The
// read is bounded by the file's MaxFileBytes.
func gzipDamage(ctx context.Context, rest io.Reader) error {
	_, err := io.Copy(io.Discard, rest)
	if err == nil || errors.Is(err, errTooLarge) || ctx.Err() != nil {
		return nil
	}
	return err
}

// charset reads the single-byte encodings xmllint also reads, reporting
// that the protocol asks for UTF-8; any other encoding stops the file.
func (p *parser) charset(label string, r io.Reader) (io.Reader, error) {
	p.problem(1, CodeNotUTF8, "the protocol asks for UTF-8", label)
	return readLatin1(label, r)
}

// readLatin1 is a CharsetReader for the single-byte encodings xmllint reads.
func readLatin1(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "latin1", "iso_8859-1", "l1", "us-ascii", "ascii":
		return &latin1Reader{r: bufio.NewReader(r)}, nil
	}
	return nil, fmt.Errorf("%w: %s", errEncoding, label)
}

var errEncoding = errors.New("unsupported encoding")

// latin1Reader turns ISO-8859-1 into UTF-8.
type latin1Reader struct {
	r    *bufio.Reader
	rest []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n+1 < len(p) {
		if len(l.rest) > 0 {
			p[n] = l.rest[0]
			l.rest = l.rest[1:]
			n++
			continue
		}
		c, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if c < utf8.RuneSelf {
			p[n] = c
			n++
			continue
		}
		var b [2]byte
		utf8.EncodeRune(b[:], rune(c))
		p[n], l.rest = b[0], append(l.rest[:0], b[1])
		n++
	}
	return n, nil
}

func (p *parser) line() int { return p.t.Line() }

func (p *parser) problem(line int, code Code, msg, value string) {
	if len(value) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(value[cut]) {
			cut--
		}
		value = value[:cut] + "…"
	}
	p.reported++
	pr := Problem{File: p.name, Line: line, Code: code, Message: msg, Value: value}
	switch {
	case !p.hold:
		p.c.report(pr)
	case len(p.held) < maxHeld:
		p.held = append(p.held, pr)
	default:
		if p.heldMore == nil {
			p.heldMore = map[Code]int{}
		}
		p.heldMore[code]++
	}
}

func (p *parser) notWellFormed(msg string) bool {
	p.problem(p.line(), CodeNotWellFormed, msg, "")
	return false
}

func (p *parser) readError(err error, gz bool) {
	var se *xml.SyntaxError
	switch {
	case errors.Is(err, errTooLarge):
		p.tooLarge = true
		p.problem(0, CodeTooLarge, fmt.Sprintf("more than %d bytes (uncompressed or as stored): reading stopped", MaxFileBytes), "")
	case errors.Is(err, xmlscan.ErrTokenTooLarge):
		p.problem(p.line(), CodeTooLarge, xmlscan.ErrTokenTooLarge.Error()+": reading stopped", "")
	case errors.Is(err, errEncoding):
		// reported by charset
	case errors.As(err, &se):
		p.problem(se.Line, CodeNotWellFormed, se.Msg, "")
	case gz:
		// A damaged deflate stream decodes to garbage before its error
		// (the checksum comes last): what was found in it would only
		// hide the cause.
		p.corrupt = true
		msg := fmt.Sprintf("corrupt gzip stream: %v", err)
		if n := p.reported; n > 0 {
			msg += fmt.Sprintf(" (the %d problems found in what it decoded before are not listed: they may be the damage's)", n)
		}
		p.hold, p.held, p.heldMore = false, nil, nil
		p.problem(p.line(), CodeGzip, msg, "")
	case strings.HasPrefix(err.Error(), "xml: "):
		p.problem(p.line(), CodeNotWellFormed, strings.TrimPrefix(err.Error(), "xml: "), "")
	default:
		p.problem(p.line(), CodeUnreadable, err.Error(), "")
	}
}

func (p *parser) procInst(t xml.ProcInst) bool {
	if strings.EqualFold(t.Target, "xml") && (t.Target != "xml" || p.tokens > 1) {
		return p.notWellFormed("XML declaration not at the start of the file")
	}
	return true
}

func (p *parser) directive(t xml.Directive) bool {
	if len(p.stack) > 0 || p.rootEnd || !bytes.HasPrefix(t, []byte("DOCTYPE")) {
		return p.notWellFormed("<!" + string(t[:min(len(t), 20)]) + " not allowed here")
	}
	return true
}

func (p *parser) resolve(prefix string) (string, bool) {
	switch prefix {
	case "xml":
		return nsXML, true
	case "xmlns":
		return "", false
	}
	for i := len(p.ns) - 1; i >= 0; i-- {
		if p.ns[i].prefix == prefix {
			return p.ns[i].uri, true
		}
	}
	return "", prefix == ""
}

func (p *parser) start(t xml.StartElement) bool {
	if p.rootEnd {
		return p.notWellFormed("element <" + t.Name.Local + "> after the root element")
	}
	line := p.line()
	nsCount := len(p.ns)
	var seen map[xml.Name]bool // for many attributes: pairs would be quadratic
	if len(t.Attr) > maxAttrs {
		seen = make(map[xml.Name]bool, len(t.Attr))
	}
	for i, a := range t.Attr {
		twice := seen[a.Name]
		if seen != nil {
			seen[a.Name] = true
		} else {
			for _, b := range t.Attr[:i] {
				twice = twice || a.Name == b.Name
			}
		}
		if twice {
			return p.notWellFormed("attribute " + a.Name.Local + " given twice")
		}
		switch {
		case a.Name.Space == "xmlns":
			if a.Value == "" {
				return p.notWellFormed("namespace prefix " + a.Name.Local + " bound to an empty URI")
			}
			p.ns = append(p.ns, binding{a.Name.Local, a.Value})
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			p.ns = append(p.ns, binding{"", a.Value})
		}
	}
	if len(p.ns) > maxBindings {
		p.problem(line, CodeTooLarge, fmt.Sprintf("more than %d namespace declarations in scope: reading stopped", maxBindings), "")
		return false
	}
	ns, ok := p.resolve(t.Name.Space)
	if !ok {
		return p.notWellFormed("undeclared namespace prefix " + t.Name.Space + ":")
	}
	f := frame{raw: t.Name, nsCount: nsCount, line: line}
	depth := len(p.stack)
	if depth >= maxNesting {
		p.problem(line, CodeTooNested, fmt.Sprintf("elements nested more than %d deep: reading stopped", maxNesting), "")
		return false
	}
	switch {
	case p.skip > 0:
	case depth == 0:
		switch {
		case ns == NSSitemap && t.Name.Local == "urlset":
			p.kind, f.e = kindURLSet, urlsetElem
			for _, b := range p.ns {
				p.news = p.news || b.uri == NSNews
			}
		case ns == NSSitemap && t.Name.Local == "sitemapindex":
			p.kind, f.e = kindIndex, sitemapindexElem
		default:
			msg := fmt.Sprintf("root element <%s> in namespace %q; want urlset or sitemapindex in %s", t.Name.Local, ns, NSSitemap)
			p.problem(line, CodeWrongRoot, msg, "")
		}
	default:
		f.e = p.child(&p.stack[depth-1], ns, t.Name.Local, line)
		if ns == NSNews && t.Name.Local == "news" {
			p.newsN++
		}
	}
	if f.e == nil && p.skip == 0 {
		p.skip = depth + 1
	}
	if f.e != nil {
		p.checkAttrs(f.e, t.Attr, line)
		if f.e.text != nil {
			p.text, p.textLen = p.text[:0], 0
		}
		switch f.e.role {
		case roleURL:
			p.urls++
			p.ord++
			p.urlLoc = false
			p.page.reset()
		}
		if f.e.ns == NSXHTML && f.e.local == "link" {
			p.page.link(t.Attr)
			for _, a := range t.Attr {
				if a.Name.Space == "" && a.Name.Local == "href" && isRelative(trimXML([]byte(a.Value))) {
					// The XSD takes any URI; Google reads only fully-qualified alternates.
					p.problem(line, reasonCode(encode.NotHTTP), "xhtml:link href is a relative URL: Google asks for a fully-qualified URL", a.Value)
				}
			}
		}
	}
	p.stack = append(p.stack, f)
	return true
}

// child matches a child element against the parent's content model and
// returns its declaration, or nil (after reporting) when it is not allowed.
func (p *parser) child(pf *frame, ns, local string, line int) *elem {
	pe := pf.e
	if pe == nil {
		return nil
	}
	if pe.seq == nil {
		p.problem(line, CodeUnexpectedElement, fmt.Sprintf("element <%s> not allowed inside <%s>, which holds no elements", local, pe.local), "")
		return nil
	}
	target := pe.ns
	pi, n := pf.pi, pf.n
	var missing *elem
	for ; pi < len(pe.seq); pi, n = pi+1, 0 {
		pt := pe.seq[pi]
		if pt.matches(ns, local, target) && (pt.max < 0 || n < pt.max) {
			pf.pi, pf.n = pi, n+1
			if missing != nil {
				p.problem(line, CodeMissingElement, fmt.Sprintf("<%s> lacks the required <%s> before <%s>", pe.local, missing.local, local), "")
			}
			if pt.e != nil {
				return pt.e
			}
			if e := globals[qname{ns, local}]; e != nil {
				return e
			}
			p.problem(line, CodeUnknownExtension, fmt.Sprintf("element <%s> of namespace %q: no sitemap extension schema declares it", local, ns), "")
			return nil
		}
		if n < pt.min && missing == nil && pt.e != nil {
			missing = pt.e
		}
	}
	p.problem(line, CodeUnexpectedElement, fmt.Sprintf("element <%s> not expected here in <%s>%s", local, pe.local, expected(pe, pf)), "")
	return nil
}

// expected names what the content model allows at the parent's position.
func expected(pe *elem, pf *frame) string {
	var names []string
	for i := pf.pi; i < len(pe.seq); i++ {
		pt := pe.seq[i]
		if i == pf.pi && pt.max >= 0 && pf.n >= pt.max {
			continue
		}
		if pt.e == nil {
			names = append(names, "an extension element")
		} else {
			names = append(names, "<"+pt.e.local+">")
		}
		if pt.min > 0 && !(i == pf.pi && pf.n >= pt.min) {
			break
		}
	}
	if len(names) == 0 {
		return " (expected nothing more)"
	}
	return " (expected " + strings.Join(names, " or ") + ")"
}

func (p *parser) checkAttrs(e *elem, attrs []xml.Attr, line int) {
	if len(attrs) > maxAttrs {
		p.problem(line, CodeBadAttribute, fmt.Sprintf("<%s> has %d attributes, more than %d: not checked one by one", e.local, len(attrs), maxAttrs), "")
		return
	}
	for _, a := range attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		ns := ""
		if a.Name.Space != "" {
			var ok bool
			if ns, ok = p.resolve(a.Name.Space); !ok {
				p.problem(line, CodeNotWellFormed, "undeclared namespace prefix "+a.Name.Space+":", "")
				continue
			}
		}
		if ns == nsXSI {
			continue
		}
		var d *attrDecl
		for i := range e.attrs {
			if e.attrs[i].ns == ns && e.attrs[i].local == a.Name.Local {
				d = &e.attrs[i]
			}
		}
		switch {
		case d == nil:
			p.problem(line, CodeBadAttribute, fmt.Sprintf("attribute %s not allowed on <%s>", a.Name.Local, e.local), a.Value)
		case d.check != nil && !d.check([]byte(a.Value)):
			p.problem(line, CodeBadAttribute, fmt.Sprintf("attribute %s of <%s> has an invalid value", a.Name.Local, e.local), a.Value)
		}
	}
	for _, d := range e.attrs {
		if !d.required {
			continue
		}
		found := false
		for _, a := range attrs {
			found = found || (a.Name.Local == d.local && a.Name.Space == "")
		}
		if !found {
			p.problem(line, CodeBadAttribute, fmt.Sprintf("<%s> lacks the required attribute %s", e.local, d.local), "")
		}
	}
}

func (p *parser) chardata(t xml.CharData) bool {
	if len(p.stack) == 0 {
		if len(trimXML(t)) > 0 {
			return p.notWellFormed("text outside the root element")
		}
		return true
	}
	f := &p.stack[len(p.stack)-1]
	switch {
	case f.e == nil:
	case f.e.text != nil:
		p.textLen += len(t)
		if room := maxText - len(p.text); room > 0 {
			p.text = append(p.text, t[:min(len(t), room)]...)
		}
	case !f.text && len(trimXML(t)) > 0:
		f.text = true
		p.problem(p.line(), CodeUnexpectedText, fmt.Sprintf("text inside <%s>, which holds only elements", f.e.local), string(trimXML(t)))
	}
	return true
}

func (p *parser) end(t xml.EndElement) bool {
	if len(p.stack) == 0 {
		return p.notWellFormed("end tag </" + t.Name.Local + "> without a start tag")
	}
	f := p.stack[len(p.stack)-1]
	if f.raw != t.Name {
		return p.notWellFormed(fmt.Sprintf("end tag </%s> does not match <%s>", qualified(t.Name), qualified(f.raw)))
	}
	if e := f.e; e != nil {
		p.finish(&f, e)
		if e.role == roleURL && len(p.page.ends) > 0 {
			p.c.hasLinks.Store(true)
			if err := p.page.add(p.c.hreflang, hreflangRef(p.file, f.line)); err != nil {
				p.problem(f.line, CodeUnreadable, err.Error(), "")
			}
		}
	}
	p.stack = p.stack[:len(p.stack)-1]
	p.ns = p.ns[:f.nsCount]
	if p.skip > len(p.stack) {
		p.skip = 0
	}
	if len(p.stack) == 0 {
		p.rootEnd = true
	}
	return true
}

func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// finish checks an element at its end tag: required children, its value,
// and what its role asks of the walker.
func (p *parser) finish(f *frame, e *elem) {
	for i := f.pi; i < len(e.seq); i++ {
		pt := e.seq[i]
		n := 0
		if i == f.pi {
			n = f.n
		}
		if n < pt.min && pt.e != nil {
			if e == urlsetElem && p.news && p.urls == 0 {
				break // an empty news sitemap: Google accepts it (no fresh article)
			}
			p.problem(f.line, CodeMissingElement, fmt.Sprintf("<%s> lacks the required <%s>", e.local, pt.e.local), "")
			break
		}
	}
	if e.text == nil {
		return
	}
	text := p.text
	if code, ok := e.text(text); !ok || p.textLen > maxText {
		if code == "" {
			code = CodeInvalidValue
		}
		msg := fmt.Sprintf("<%s> has an invalid value", e.local)
		short := false
		if code == CodeLocLength {
			n := p.textLen
			if n <= maxText {
				n = collapsedLen(text)
			}
			short = n < minLoc
			msg = fmt.Sprintf("<loc> is %d characters long; sitemap.xsd asks for %d to %d", n, minLoc, maxLoc)
		}
		p.problem(f.line, code, msg, string(text))
		if s := trimXML(text); short && isRelative(s) {
			// A relative loc is not_http_url, short (here) or not (checkLoc).
			p.problem(f.line, reasonCode(encode.NotHTTP), relativeLoc, string(s))
		}
		if e.role == roleURLLoc {
			p.urlLoc = true // a loc, though a bad one: no missing-loc report
		}
		return
	}
	switch e.role {
	case roleURLLoc:
		p.urlLoc = true
		if p.checkLoc(p.enc, trimXML(text), f.line, true) {
			p.page.loc, p.page.hasLoc = append(p.page.loc[:0], trimXML(text)...), true
		}
	case roleEntryLoc:
		s := trimXML(text)
		if p.checkLoc(p.rawEnc, s, f.line, false) {
			if p.nentries++; len(p.entries) < maxEntries {
				p.entries = append(p.entries, entry{loc: string(s), line: f.line})
			}
		}
	case roleLastmod:
		if s := trimXML(text); !encode.LastmodWritten(s) {
			p.problem(f.line, CodeLastmodNotW3C, "lastmod is valid for sitemap.xsd but not a W3C Datetime: write YYYY-MM-DD or YYYY-MM-DDThh:mm:ss[.f] with Z or ±hh:mm", string(s))
		}
	}
}

// checkLoc applies the encoder's rules to a loc: an absolute http(s) URL,
// valid host and port, no user info, under the scope, shorter than 2,048
// bytes, every character that needs it percent-encoded. A sitemap's URL is
// also fingerprinted for the duplicate check.
func (p *parser) checkLoc(enc *encode.Encoder, s []byte, line int, fingerprint bool) bool {
	if !hasPrefixFold(s, "http://") && !hasPrefixFold(s, "https://") {
		msg := "loc is not an absolute http or https URL"
		if isRelative(s) {
			msg = relativeLoc
		}
		p.problem(line, reasonCode(encode.NotHTTP), msg, string(s))
		return false
	}
	out, r := enc.AppendLoc(p.buf[:0], s)
	p.buf = out[:0]
	if r != encode.OK {
		msg := "loc rejected"
		if r == encode.OutOfScope {
			msg = "URL is not under " + p.c.scopeOf(p.file)
		}
		p.problem(line, reasonCode(r), msg, string(s))
		return false
	}
	// The loc as the encoder wrote it back, XML escaping aside, had nothing
	// to percent-encode: the common case needs no second look.
	if !sameEscaped(out, s) {
		if i := encode.UnencodedAt(s); i >= 0 {
			_, w := utf8.DecodeRune(s[i:])
			p.problem(line, CodeUnencoded, fmt.Sprintf("character %q at byte %d must be percent-encoded", s[i:i+max(w, 1)], i), string(s))
		}
	}
	if fingerprint {
		p.fingerprint(out, s, line)
	}
	return true
}

// fingerprint files the URL s of this line, out as the encoder wrote it,
// for the duplicate check.
func (p *parser) fingerprint(out, s []byte, line int) {
	var domain uint64
	if p.news {
		// A news sitemap repeats articles the regular sitemaps list:
		// its URLs are duplicates only of each other.
		domain = newsDomain
	}
	h, h2 := p.c.dupes.hash(out, domain)
	p.batch.add(record{h: h, h2: h2, file: p.file, line: uint32(line), ord: p.ord}, s)
	if len(p.batch.recs) == batchLen {
		p.c.dupes.add(&p.batch)
		p.batch.reset()
	}
}

// relativeLoc is the message of a relative loc, whatever its length.
const relativeLoc = "loc is a relative URL: the protocol asks for an absolute http or https URL"

// isRelative reports whether a URL is a relative reference: not empty, and
// no scheme (letters, digits, '+', '-', '.' and a ':') before its first
// '/', '?' or '#'.
func isRelative(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i, c := range s {
		switch {
		case c == ':':
			return i == 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return true
		}
	}
	return true
}

// sameEscaped reports whether out is s XML-escaped as the encoder escapes
// a loc ('&' and '\” as entities; the other markup characters are
// percent-encoded): then the encoder changed nothing else in s.
func sameEscaped(out, s []byte) bool {
	if len(out) == len(s) {
		return string(out) == string(s)
	}
	if bytes.IndexByte(s, '\'') >= 0 {
		return false // rare: left to the full check
	}
	for {
		k := bytes.IndexByte(s, '&')
		if k < 0 {
			return string(out) == string(s)
		}
		if len(out) < k+len("&amp;") || string(out[:k]) != string(s[:k]) || string(out[k:k+len("&amp;")]) != "&amp;" {
			return false
		}
		out, s = out[k+len("&amp;"):], s[k+1:]
	}
}

// newsDomain sets the fingerprints of news sitemaps' URLs apart from the
// others'.
const newsDomain = 0x9e3779b97f4a7c15

func hasPrefixFold(s []byte, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if c := s[i]; c != lower[i] && c+'a'-'A' != lower[i] {
			return false
		}
	}
	return true
}
