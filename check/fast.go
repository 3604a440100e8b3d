package check

import (
	"bytes"
	"context"

	"github.com/sitemapgen/sitemapgen/encode"
)

// The fast path. Nearly every byte of a large sitemap is a <url> entry of
// one shape, the one generate writes (and most generators do):
//
//	<url><loc>LOC</loc>[<lastmod>D</lastmod>][<changefreq>F</changefreq>][<priority>P</priority>]</url>
//
// no attributes, no white space inside, the loc's '&', '\'' and '"' as
// the predefined entities. Between the tokens of the urlset, fastURLs reads
// such entries straight from the tokenizer's window: it matches an entry's
// bytes, and only when every value is one the general path accepts without
// a problem (the loc's length, the encoder's rules for the loc, the
// lastmod's forms, the changefreq, the priority; none of them takes white
// space, a control or a non-ASCII character, so the bytes are what the
// tokenizer would read) does it apply what the general path would (the
// urlset's content model, the counts, the loc's fingerprint) and consume
// the bytes. At the first entry it does not take it consumes nothing of
// it, and the tokenizer and the rules read it and report what is wrong;
// the fast path resumes after it. So a report is the general path's:
// FuzzFastPath and TestFastPathAgrees hold it to that.

// fastRead is the bytes the fast path asks the tokenizer to hold: more than
// the longest entry it takes (a loc of 2,048 characters, each of them
// possibly written as a 6-byte entity, and the other fields).
const fastRead = 16 << 10

// fastEntries reports whether the parser is between the entries of a
// urlset whose unprefixed names are the sitemap namespace's, where an entry
// of the fast path's shape is a <url> the content model takes.
func (p *parser) fastEntries() bool {
	if p.general || p.kind != kindURLSet || len(p.stack) != 1 || p.skip != 0 {
		return false
	}
	f := &p.stack[0]
	if f.e != urlsetElem || f.pi > 1 {
		return false
	}
	ns, _ := p.resolve("")
	return ns == NSSitemap
}

// fastURLs checks the entries of the fast path's shape at the tokenizer's
// position, stopping at the first other byte (or when ctx is done).
func (p *parser) fastURLs(ctx context.Context) {
	b := p.t.Buffered(fastRead)
	line := p.t.Line()
	done, lines := 0, 0
	for k := 1; ; k++ {
		if k&255 == 0 && ctx.Err() != nil {
			break
		}
		i, nl := done, 0
		for i < len(b) && isXMLSpace(b[i]) {
			if b[i] == '\n' {
				nl++
			}
			i++
		}
		n := p.fastURL(b[i:], line+lines+nl)
		if n == 0 {
			break
		}
		done, lines = i+n, lines+nl
	}
	if done > 0 {
		p.t.Skip(done, lines)
	}
}

// fastURL checks the entry at the start of b, on line line, and returns its
// length; 0 when it is not of the fast path's shape (nothing is done).
func (p *parser) fastURL(b []byte, line int) int {
	const open, closeLoc, end = "<url><loc>", "</loc>", "</url>"
	if len(b) < len(open) || string(b[:len(open)]) != open {
		return 0
	}
	loc, i, ok := p.fastLoc(b, len(open))
	if !ok || !hasAt(b, i, closeLoc) {
		return 0
	}
	i += len(closeLoc)
	lastmod, i, hasLastmod := fastField(b, i, "<lastmod>", "</lastmod>")
	changefreq, i, hasChangefreq := fastField(b, i, "<changefreq>", "</changefreq>")
	priority, i, hasPriority := fastField(b, i, "<priority>", "</priority>")
	if !hasAt(b, i, end) {
		return 0
	}
	i += len(end)
	// Only values the general path takes without a word: any other goes
	// to it, which reports it. (The value checks below accept no white
	// space, control or non-ASCII character: the bytes matched are what
	// the tokenizer would have read, and hold no newline.)
	if len(loc) < minLoc || len(loc) > maxLoc { // ASCII, no white space (below): its collapsed length
		return 0
	}
	// A lastmod in a form the encoder writes is also an xsd:date or
	// xsd:dateTime (FuzzLastmodWritten), the general path's first test.
	if hasLastmod && !encode.LastmodWritten(lastmod) {
		return 0
	}
	if hasChangefreq && !validChangefreq(changefreq) {
		return 0
	}
	if hasPriority && !validPriority(priority) {
		return 0
	}
	// checkLoc's tests, without its reports: a loc the encoder accepts
	// and writes back as it is (or with nothing to percent-encode) has
	// only printable ASCII characters, none of '<', '>' or '"'.
	if !hasPrefixFold(loc, "http://") && !hasPrefixFold(loc, "https://") {
		return 0 // a relative loc, which the encoder would resolve
	}
	out, r := p.enc.AppendLoc(p.buf[:0], loc)
	p.buf = out[:0]
	if r != encode.OK || !sameEscaped(out, loc) && encode.UnencodedAt(loc) >= 0 {
		return 0
	}

	// What the general path does for this entry: the <url> taken by the
	// urlset's content model (past its leading wildcard), counted, with
	// no alternates, and its loc checked and fingerprinted.
	f := &p.stack[0]
	if f.pi == 0 {
		f.pi, f.n = 1, 0
	}
	f.n++
	p.urls++
	p.ord++
	p.fast++
	p.urlLoc = true
	p.page.reset()
	p.fingerprint(out, loc, line)
	return i
}

// validChangefreq is changefreqText's verdict, at once for the seven
// values as generate writes them.
func validChangefreq(s []byte) bool {
	switch string(s) {
	case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
		return true
	}
	_, ok := changefreqText(s)
	return ok
}

// validPriority is priorityText's verdict, at once for 0.0 to 1.0 in
// tenths as generate writes them.
func validPriority(s []byte) bool {
	if len(s) == 3 && s[1] == '.' && (s[0] == '0' && '0' <= s[2] && s[2] <= '9' || s[0] == '1' && s[2] == '0') {
		return true
	}
	_, ok := priorityText(s)
	return ok
}

// fastLoc reads the loc's text from b[i:] up to the next '<': the bytes
// themselves, or decoded into p.locBuf when they hold '&amp;', '&apos;' or
// '&quot;'. It returns the text, where it ends, and false at any other
// reference. The characters are left to the loc's rules, which take no
// '>' (so no "]]>", which the tokenizer refuses).
func (p *parser) fastLoc(b []byte, i int) (loc []byte, end int, ok bool) {
	k := bytes.IndexByte(b[i:], '<')
	if k < 0 {
		return nil, 0, false
	}
	raw, end := b[i:i+k], i+k
	amp := bytes.IndexByte(raw, '&')
	if amp < 0 {
		return raw, end, true
	}
	dec := p.locBuf[:0]
	for amp >= 0 {
		dec = append(dec, raw[:amp]...)
		raw = raw[amp:]
		switch {
		case hasAt(raw, 0, "&amp;"):
			dec, raw = append(dec, '&'), raw[len("&amp;"):]
		case hasAt(raw, 0, "&apos;"):
			dec, raw = append(dec, '\''), raw[len("&apos;"):]
		case hasAt(raw, 0, "&quot;"):
			dec, raw = append(dec, '"'), raw[len("&quot;"):]
		default:
			p.locBuf = dec
			return nil, 0, false
		}
		amp = bytes.IndexByte(raw, '&')
	}
	p.locBuf = append(dec, raw...)
	return p.locBuf, end, true
}

// fastField reads <tag>VALUE</tag> at b[i:] when it is there, VALUE up to
// the next '<' with no white space at its ends (its checks take no other);
// else it returns i unchanged and false.
func fastField(b []byte, i int, open, close string) (val []byte, next int, ok bool) {
	if !hasAt(b, i, open) {
		return nil, i, false
	}
	j := i + len(open)
	k := bytes.IndexByte(b[j:], '<')
	if k < 0 || !hasAt(b, j+k, close) {
		return nil, i, false
	}
	val = b[j : j+k]
	if k > 0 && (isXMLSpace(val[0]) || isXMLSpace(val[k-1])) {
		return nil, i, false // priorityText trims it, but it may hold a newline
	}
	return val, j + k + len(close), true
}

// hasAt reports whether b holds s at i.
func hasAt(b []byte, i int, s string) bool {
	return len(b)-i >= len(s) && string(b[i:i+len(s)]) == s
}
