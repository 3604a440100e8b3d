package xmlscan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// tokenSeeds are documents that exercise every path of the scanner and
// every point where it hands over to encoding/xml.
var tokenSeeds = []string{
	`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/?a=1&amp;b=&apos;2&apos;</loc></url></urlset>`,
	`<?xml version='1.0' encoding='utf-8' standalone="yes"?><a/>`,
	`<?xml version="1.1"?><a/>`,
	`<?xml version="1.0" encoding="ISO-8859-1"?><a>` + "\xe9" + `</a>`,
	`<?xml version="1.0" encoding="koi8-r"?><a/>`,
	"<a>\r\n x\ry\r\r\n</a>",
	"<a b='x\r\ny' c=\"&lt;&gt;&amp;&quot;&apos;\"/>",
	`<a b="1"c="2" d = "3" />`,
	`<a b="<"/>`, `<a b=1/>`, `<a b/>`, `<a b="1" b="2"/>`, `<a b="]]>"/>`, `<a b="x`,
	`<a>&#65;&#x42;&#x1F600;&#0;&#xD800;&#xFFFE;&#;&#x;&#65&#99999999999;</a>`,
	`<a>&#65;</a>`, `<a>&#xd7ff;&#x10FFFF;&#x110000;</a>`, `<a>&#xD800;</a>`,
	`<a>&foo;</a>`, `<a>&amp</a>`, `<a>& b</a>`, `<a>&;</a>`, `<a>&ampere;</a>`,
	`<a>x]]>y</a>`, `<a>]]</a>`, `<a>] ]></a>`, `<a>]]&gt;</a>`, `<a>&amp;]]></a>`,
	`<a><![CDATA[x<y&z]]]></a>`, "<a><![CDATA[a\r\nb\rc]]></a>", `<a><![CDATA[x`, `<a><![CDAT[x]]></a>`, "<a><![CDATA[\x01]]></a>",
	`<a><!-- c --></a>`, `<a><!-- a -- b --></a>`, `<a><!----></a>`, `<a><!---></a>`, `<a><!- x --></a>`, `<!-- x`,
	`<!DOCTYPE urlset [<!ENTITY e "x">]><urlset>&e;</urlset>`, `<a><!DOCTYPE x></a>`,
	`<?pi some data?><a/><?pi2?>`, `<?pi`, `<?1pi?><a/>`, `<? pi?><a/>`, `<?xml-stylesheet href="a"?><a/>`,
	`<a:b:c/>`, `<:a/>`, `<a:/>`, `<x:a xmlns:x="urn:x"></x:a>`, `<é/>`, `<aé/>`, `<a é="1"/>`, `<1a/>`, `< a/>`,
	`<a></a >`, `<a></a x>`, `</a>`, `<a></b>`, `<a>`, `<a`, `<`, `<a/`, `<a /x>`, ``, `   `, "\ufeff<a/>",
	"<a>\x00</a>", "<a>\x7f</a>", "<a>\xff</a>", "<a>\xe2\x82</a>", "<a>\xe2\x82", "<a>\xef\xbf\xbe</a>", "<a>\xef\xbf\xbd</a>",
	"<a>ü€😀</a>", "<a b='ü'/>", "<a>\t\n</a>\n", `<a>text`, "<a/>\n<b/>",
	// Longer than the small windows of the tests: read in pieces.
	"<a>" + strings.Repeat("long text ]] ]]]\r\n &amp; &#x1F600; ü ", 20) + "</a>",
	"<a>" + strings.Repeat("x", 100) + "]]>" + strings.Repeat("y", 100) + "</a>",
	"<a><!--" + strings.Repeat("comment - -\n", 30) + "--></a>",
	"<a><!--" + strings.Repeat("comment - -\n", 30) + "-- x --></a>",
	"<a><!--" + strings.Repeat("comment - -\n", 30),
	"<a>" + strings.Repeat("text\r", 60),
}

// rawTokens lists the tokens of data read by encoding/xml alone (fast
// false) or by the tokenizer (reading chunk bytes at a time through a
// window of the given size), each with the line after it, then the error.
func rawTokens(data []byte, fast bool, chunk, window int) (toks []string, fellBack bool) {
	charset := func(label string, r io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "iso-8859-1") {
			return r, nil
		}
		return nil, errors.New("no " + label)
	}
	var r io.Reader = bytes.NewReader(data)
	if chunk > 0 {
		r = xmltest.Chunks(data, chunk)
	}
	if !fast {
		d := xml.NewDecoder(r)
		d.Strict, d.CharsetReader = true, charset
		for {
			tok, err := d.RawToken()
			if err != nil {
				return append(toks, errString(err, 0)), false
			}
			line, _ := d.InputPos()
			toks = append(toks, fmt.Sprintf("%d %s", line, tokString(tok)))
		}
	}
	t := &Tokenizer{sc: newScanner(r, window), charset: charset}
	var pending []byte // the pieces of a text or comment returned in pieces
	for {
		err := t.Next()
		if err != nil {
			return append(toks, errString(err, 0)), !t.fast()
		}
		if t.Partial || pending != nil {
			// Pieces of one long text or comment: encoding/xml returns them as one token.
			pending = append(pending, t.Data...)
			if t.Partial {
				continue
			}
			t.Data, pending = pending, nil
		}
		var tok xml.Token
		switch t.Kind {
		case Start:
			tok = xml.StartElement{Name: t.Name, Attr: t.Attrs}
		case End:
			tok = xml.EndElement{Name: t.Name}
		case Text:
			tok = xml.CharData(t.Data)
		case Comment:
			tok = xml.Comment(t.Data)
		case ProcInst:
			tok = xml.ProcInst{Target: t.Target, Inst: t.Data}
		case Directive:
			tok = xml.Directive(t.Data)
		}
		toks = append(toks, fmt.Sprintf("%d %s", t.Line(), tokString(tok)))
	}
}

func tokString(tok xml.Token) string {
	switch x := tok.(type) {
	case xml.StartElement:
		return fmt.Sprintf("start %q:%q %q", x.Name.Space, x.Name.Local, x.Attr)
	case xml.EndElement:
		return fmt.Sprintf("end %q:%q", x.Name.Space, x.Name.Local)
	case xml.CharData:
		return fmt.Sprintf("text %q", []byte(x))
	case xml.Comment:
		return fmt.Sprintf("comment %q", []byte(x))
	case xml.ProcInst:
		return fmt.Sprintf("pi %q %q", x.Target, x.Inst)
	case xml.Directive:
		return fmt.Sprintf("directive %q", []byte(x))
	}
	return fmt.Sprintf("? %T", tok)
}

func errString(err error, lineBase int) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at line %d: %s", lineBase+se.Line, se.Msg)
	}
	return "error: " + err.Error()
}

// agree checks that the tokenizer gives exactly encoding/xml's tokens,
// lines and error on data.
func agree(t *testing.T, data []byte, chunk, window int) {
	t.Helper()
	want, _ := rawTokens(data, false, 0, 0)
	got, _ := rawTokens(data, true, chunk, window)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tokenizer (chunk %d, window %d) and encoding/xml differ on %q\n got: %q\nwant: %q", chunk, window, data, got, want)
	}
}

// TestTokenizerAgrees is the differential test of the scanner against
// encoding/xml on the seeds, the examples and the mutated variants the
// xmllint test uses, whole and read in small pieces through small windows.
func TestTokenizerAgrees(t *testing.T) {
	docs := [][]byte{}
	for _, s := range tokenSeeds {
		docs = append(docs, []byte(s))
	}
	ents, err := os.ReadDir(xmltest.ExamplesDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".gz") {
			docs = append(docs, xmltest.Example(t, e.Name()))
		}
	}
	docs = append(docs, xmltest.Variants(xmltest.Example(t, "valid-urlset-minimal.xml"), 1, 200)...)
	docs = append(docs, xmltest.Variants(xmltest.Example(t, "valid-urlset-extensions.xml"), 3, 200)...)
	docs = append(docs, xmltest.Variants(xmltest.Example(t, "valid-sitemapindex.xml"), 2, 100)...)
	for _, doc := range docs {
		agree(t, doc, 0, WindowSize)
		for _, w := range []int{16, 64} {
			for _, chunk := range []int{1, 3, 17} {
				agree(t, doc, chunk, w)
			}
		}
	}
}

// TestTokenizerFastPath checks that the documents generate writes, and the
// valid examples, are read by the scanner to the end, without handing over.
func TestTokenizerFastPath(t *testing.T) {
	docs := map[string][]byte{"generated": sitemapDoc(200)}
	for _, name := range []string{"valid-urlset-minimal.xml", "valid-urlset-extensions.xml", "valid-sitemapindex.xml"} {
		docs[name] = xmltest.Example(t, name)
	}
	for name, doc := range docs {
		if toks, fellBack := rawTokens(doc, true, 0, WindowSize); fellBack {
			t.Errorf("%s: the scanner handed over to encoding/xml (%d tokens)", name, len(toks))
		}
	}
}

// sitemapDoc is a sitemap of n URLs as generate writes it.
func sitemapDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://www.example.com/p%d/a?x=1&amp;y=%%C3%%BC</loc><lastmod>2024-01-02T03:04:05Z</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n", i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// TestTokenizerAllocs checks that reading a sitemap allocates per file,
// not per token.
func TestTokenizerAllocs(t *testing.T) {
	doc := sitemapDoc(1000)
	allocs := testing.AllocsPerRun(5, func() {
		tk := NewTokenizer(bytes.NewReader(doc), nil)
		for tk.Next() == nil {
		}
	})
	if allocs > 40 { // the window, the name table and its names: ~13,000 tokens
		t.Errorf("%.0f allocations to read a 1,000-URL sitemap", allocs)
	}
}

// FuzzTokenizer is the differential fuzzer of the scanner against
// encoding/xml: same tokens, same lines, same error.
func FuzzTokenizer(f *testing.F) {
	for _, s := range tokenSeeds {
		f.Add([]byte(s), uint8(0), uint8(0))
	}
	ents, _ := os.ReadDir(xmltest.ExamplesDir())
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(xmltest.ExamplesDir(), e.Name())); err == nil && !strings.HasSuffix(e.Name(), ".gz") {
			f.Add(b, uint8(5), uint8(40))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk, window uint8) {
		w := WindowSize
		if window > 0 {
			w = int(window)
		}
		agree(t, data, int(chunk), w)
	})
}

// TestTokenizerPieces: a text or comment longer than the window is read by
// the scanner in pieces, never handed to encoding/xml (which would hold it
// whole), and the pieces make the same token.
func TestTokenizerPieces(t *testing.T) {
	for _, doc := range []string{
		"<a>" + strings.Repeat("long text ]] ]]]\r\n &amp; &#x1F600; ü ", 200) + "</a>",
		"<a><!--" + strings.Repeat("comment - -\n", 300) + "--></a>",
		"<a>" + strings.Repeat("x", 5000) + "</a><!--" + strings.Repeat("-x", 5000) + "--><b/>",
	} {
		for _, w := range []int{64, 256} {
			agree(t, []byte(doc), 7, w)
			if toks, fellBack := rawTokens([]byte(doc), true, 7, w); fellBack {
				t.Errorf("window %d: handed over to encoding/xml: %.200q", w, toks)
			}
		}
	}
}
