package check

import (
	"bytes"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
)

// Namespaces of the sitemap protocol and its extensions.
const (
	NSSitemap = "http://www.sitemaps.org/schemas/sitemap/0.9"
	NSImage   = "http://www.google.com/schemas/sitemap-image/1.1"
	NSVideo   = "http://www.google.com/schemas/sitemap-video/1.1"
	NSNews    = "http://www.google.com/schemas/sitemap-news/0.9"
	NSMobile  = "http://www.google.com/schemas/sitemap-mobile/1.0"
	NSXHTML   = "http://www.w3.org/1999/xhtml"
	nsXSI     = "http://www.w3.org/2001/XMLSchema-instance"
	nsXML     = "http://www.w3.org/XML/1998/namespace"
)

// role says what the walker does with an element beyond its schema rules.
type role uint8

const (
	roleNone     role = iota
	roleURL           // <url>: one URL of a sitemap
	roleURLLoc        // <url><loc>
	roleEntry         // <sitemap>: one entry of an index
	roleEntryLoc      // <sitemap><loc>
	roleLastmod       // <lastmod> of either
)

// elem is an element declaration: the content model of one XSD element.
// Element-only content is a sequence of particles; simple content is
// checked by text; an element with neither is empty.
type elem struct {
	ns, local string
	role      role
	seq       []particle
	text      func(s []byte) (Code, bool) // simple content; nil: no text
	attrs     []attrDecl
}

// particle is one item of a sequence: an element, or (e == nil) the
// ##other wildcard with processContents="strict".
type particle struct {
	e        *elem
	min, max int // max < 0: unbounded
}

type attrDecl struct {
	ns, local string
	required  bool
	check     func(s []byte) bool // nil: any string
}

func (p particle) matches(ns, local, target string) bool {
	if p.e == nil {
		return ns != target && ns != ""
	}
	return p.e.ns == ns && p.e.local == local
}

type qname struct{ ns, local string }

// globals are the global element declarations the strict wildcards of
// sitemap.xsd and siteindex.xsd may match: what sitemap-combined.xsd loads.
// Of the XHTML schema only <link> is declared; other XHTML elements are
// reported as unknown extensions.
var globals = map[qname]*elem{}

var (
	urlsetElem, sitemapindexElem *elem
)

func init() {
	loc := &elem{ns: NSSitemap, local: "loc", text: locText}
	lastmod := &elem{ns: NSSitemap, local: "lastmod", role: roleLastmod, text: dateText(CodeLastmodInvalid)}
	url := &elem{ns: NSSitemap, local: "url", role: roleURL, seq: []particle{
		{&elem{ns: NSSitemap, local: "loc", role: roleURLLoc, text: locText}, 1, 1},
		{lastmod, 0, 1},
		{&elem{ns: NSSitemap, local: "changefreq", text: changefreqText}, 0, 1},
		{&elem{ns: NSSitemap, local: "priority", text: priorityText}, 0, 1},
		{nil, 0, -1},
	}}
	urlsetElem = &elem{ns: NSSitemap, local: "urlset", seq: []particle{{nil, 0, -1}, {url, 1, -1}}}
	entry := &elem{ns: NSSitemap, local: "sitemap", role: roleEntry, seq: []particle{
		{&elem{ns: NSSitemap, local: "loc", role: roleEntryLoc, text: loc.text}, 1, 1},
		{lastmod, 0, 1},
		{nil, 0, -1},
	}}
	sitemapindexElem = &elem{ns: NSSitemap, local: "sitemapindex", seq: []particle{{nil, 0, -1}, {entry, 1, -1}}}

	str := func(ns, local string) *elem { return &elem{ns: ns, local: local, text: anyText} }
	maxLen := func(ns, local string, n int) *elem {
		return &elem{ns: ns, local: local, text: func(s []byte) (Code, bool) {
			return CodeInvalidValue, utf8.RuneCount(s) <= n
		}}
	}
	uri := func(ns, local string) *elem { return &elem{ns: ns, local: local, text: anyText} }
	typed := func(ns, local string, ok func([]byte) bool) *elem {
		return &elem{ns: ns, local: local, text: func(s []byte) (Code, bool) { return CodeInvalidValue, ok(s) }}
	}
	date := func(ns, local string) *elem { return &elem{ns: ns, local: local, text: dateText(CodeInvalidValue)} }
	opt := func(e *elem) particle { return particle{e, 0, 1} }
	one := func(e *elem) particle { return particle{e, 1, 1} }

	// sitemap-image.xsd
	add(&elem{ns: NSImage, local: "image", seq: []particle{
		one(uri(NSImage, "loc")), opt(str(NSImage, "caption")), opt(str(NSImage, "geo_location")),
		opt(str(NSImage, "title")), opt(uri(NSImage, "license")),
	}})
	// sitemap-mobile.xsd
	add(&elem{ns: NSMobile, local: "mobile"})
	// sitemap-news.xsd
	add(&elem{ns: NSNews, local: "news", seq: []particle{
		one(&elem{ns: NSNews, local: "publication", seq: []particle{
			one(str(NSNews, "name")),
			one(typed(NSNews, "language", pattern(`zh-cn|zh-tw|([a-z]{2,3})`))),
		}}),
		opt(typed(NSNews, "access", enum("Subscription", "Registration"))),
		opt(typed(NSNews, "genres", pattern(`(PressRelease|Satire|Blog|OpEd|Opinion|UserGenerated)(, *(PressRelease|Satire|Blog|OpEd|Opinion|UserGenerated))*`))),
		one(date(NSNews, "publication_date")),
		one(str(NSNews, "title")),
		opt(str(NSNews, "keywords")),
		opt(typed(NSNews, "stock_tickers", pattern(`(\w+:\w+(, *\w+:\w+){0,4})?`))),
	}})
	// sitemap-video.xsd
	yesNo := enum("yes", "Yes", "YES", "no", "No", "NO")
	rel := []attrDecl{{local: "relationship", required: true, check: enum("allow", "deny")}}
	dur := collapsed(intRange(0, 28800))
	add(&elem{ns: NSVideo, local: "video", seq: []particle{
		one(uri(NSVideo, "thumbnail_loc")),
		one(maxLen(NSVideo, "title", 100)),
		one(maxLen(NSVideo, "description", protocol.MaxVideoDescription)),
		opt(uri(NSVideo, "content_loc")),
		opt(&elem{ns: NSVideo, local: "player_loc", text: anyText, attrs: []attrDecl{
			{local: "allow_embed", check: yesNo}, {local: "autoplay"}}}),
		opt(typed(NSVideo, "duration", dur)),
		opt(date(NSVideo, "expiration_date")),
		opt(typed(NSVideo, "rating", collapsed(decimalRange(0, 5)))),
		{&elem{ns: NSVideo, local: "content_segment_loc", text: anyText, attrs: []attrDecl{{local: "duration", check: dur}}}, 0, -1},
		opt(typed(NSVideo, "view_count", collapsed(intRange(0, -1)))),
		opt(date(NSVideo, "publication_date")),
		{str(NSVideo, "tag"), 0, 32},
		opt(maxLen(NSVideo, "category", 256)),
		opt(typed(NSVideo, "family_friendly", yesNo)),
		opt(&elem{ns: NSVideo, local: "restriction", attrs: rel,
			text: func(s []byte) (Code, bool) { return CodeInvalidValue, pattern(`([A-Z]{2}( +[A-Z]{2})*)?`)(s) }}),
		opt(&elem{ns: NSVideo, local: "gallery_loc", text: anyText, attrs: []attrDecl{{local: "title"}}}),
		{&elem{ns: NSVideo, local: "price", text: anyText, attrs: []attrDecl{
			{local: "currency", check: pattern(`[A-Z]{3}`)},
			{local: "type", check: enum("purchase", "PURCHASE", "rent", "RENT")},
			{local: "resolution", check: enum("sd", "SD", "hd", "HD")},
		}}, 0, -1},
		opt(typed(NSVideo, "requires_subscription", yesNo)),
		opt(&elem{ns: NSVideo, local: "uploader", text: anyText, attrs: []attrDecl{{local: "info"}}}),
		opt(&elem{ns: NSVideo, local: "tvshow", seq: []particle{
			one(str(NSVideo, "show_title")),
			one(typed(NSVideo, "video_type", enum("full", "preview", "clip", "interview", "news", "other"))),
			opt(str(NSVideo, "episode_title")),
			opt(typed(NSVideo, "season_number", collapsed(intRange(1, -1)))),
			opt(typed(NSVideo, "episode_number", collapsed(intRange(1, -1)))),
			opt(date(NSVideo, "premier_date")),
		}}),
		opt(&elem{ns: NSVideo, local: "platform", attrs: rel,
			text: func(s []byte) (Code, bool) {
				return CodeInvalidValue, pattern(`((web|mobile|tv)( (web|mobile|tv))*)?`)(s)
			}}),
		opt(typed(NSVideo, "live", yesNo)),
		{&elem{ns: NSVideo, local: "id", text: anyText, attrs: []attrDecl{{local: "type", required: true,
			check: enum("tms:series", "tms:program", "rovi:series", "rovi:program", "freebase", "url")}}}, 0, -1},
	}})
	// xhtml1-strict.xsd: <link> with the attrs group.
	link := &elem{ns: NSXHTML, local: "link", attrs: []attrDecl{
		{local: "id", check: collapsed(isNCName)}, {local: "class", check: nmtokens}, {local: "style"}, {local: "title"},
		{local: "lang", check: collapsed(isLanguage)}, {ns: nsXML, local: "lang", check: xmlLang},
		{local: "dir", check: collapsed(enum("ltr", "rtl"))},
		{local: "charset"}, {local: "href"}, {local: "hreflang", check: collapsed(isLanguage)}, {local: "type"},
		{local: "rel", check: nmtokens}, {local: "rev", check: nmtokens}, {local: "media", check: pattern(`[^,]+(,\s*[^,]+)*`)},
	}}
	for _, ev := range []string{"onclick", "ondblclick", "onmousedown", "onmouseup", "onmouseover",
		"onmousemove", "onmouseout", "onkeypress", "onkeydown", "onkeyup"} {
		link.attrs = append(link.attrs, attrDecl{local: ev})
	}
	add(link)
}

func add(e *elem) { globals[qname{e.ns, e.local}] = e }

func anyText([]byte) (Code, bool) { return "", true }

// The lengths of tLoc, in characters.
const minLoc, maxLoc = protocol.MinLoc, protocol.MaxLoc

// locText is tLoc: an xsd:anyURI of 12 to 2048 characters after white-space collapse.
func locText(s []byte) (Code, bool) {
	n := collapsedLen(s)
	return CodeLocLength, n >= minLoc && n <= maxLoc
}

// dateText checks xsd:date | xsd:dateTime; the W3C rule is the walker's.
func dateText(code Code) func([]byte) (Code, bool) {
	return func(s []byte) (Code, bool) { return code, xsdDateOrDateTime(trimXML(s)) }
}

// changefreqText is tChangeFreq: an enumeration of xsd:string, matched
// exactly (no white space, lower case). encode.AppendChangefreq accepts any
// case and trims, so the value is valid when it writes it back unchanged.
func changefreqText(s []byte) (Code, bool) {
	var buf [16]byte
	out, w := encode.AppendChangefreq(buf[:0], s)
	return CodeChangefreqInvalid, w == 0 && bytes.Equal(out, s)
}

// priorityText is tPriority: an xsd:decimal from 0.0 to 1.0. Its lexical
// rules are exactly encode.AppendPriority's.
func priorityText(s []byte) (Code, bool) {
	var buf [24]byte
	_, w := encode.AppendPriority(buf[:0], trimXML(s))
	return CodePriorityInvalid, w == 0
}

func enum(vals ...string) func([]byte) bool {
	return func(s []byte) bool {
		for _, v := range vals {
			if string(s) == v {
				return true
			}
		}
		return false
	}
}

// pattern compiles an XSD pattern: anchored, with \w as XSD defines it
// (anything but punctuation, separators and other characters).
func pattern(p string) func([]byte) bool {
	p = regexp.MustCompile(`\\w`).ReplaceAllLiteralString(p, `[^\p{P}\p{Z}\p{C}]`)
	re := regexp.MustCompile(`^(?:` + p + `)$`)
	return re.Match
}

func collapsed(f func([]byte) bool) func([]byte) bool {
	return func(s []byte) bool { return f(trimXML(s)) }
}

// intRange checks an xsd:integer in lo..hi (hi < 0: no upper bound).
func intRange(lo, hi int64) func([]byte) bool {
	return func(s []byte) bool {
		d := s
		neg := false
		if len(d) > 0 && (d[0] == '+' || d[0] == '-') {
			neg, d = d[0] == '-', d[1:]
		}
		if len(d) == 0 || !allDigits(d) {
			return false
		}
		d = bytes.TrimLeft(d, "0")
		if len(d) > 15 {
			return hi < 0 && !neg
		}
		v, _ := strconv.ParseInt("0"+string(d), 10, 64)
		if neg {
			v = -v
		}
		return v >= lo && (hi < 0 || v <= hi)
	}
}

// decimalRange checks an xsd:decimal in lo..hi.
func decimalRange(lo, hi float64) func([]byte) bool {
	return func(s []byte) bool {
		d := s
		if len(d) > 0 && (d[0] == '+' || d[0] == '-') {
			d = d[1:]
		}
		ip, fp, dot := bytes.Cut(d, []byte("."))
		if (len(ip) == 0 && len(fp) == 0) || !allDigits(ip) || !allDigits(fp) || (!dot && len(fp) > 0) {
			return false
		}
		v, err := strconv.ParseFloat(string(s), 64)
		return err == nil && v >= lo && v <= hi
	}
}

func allDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var languageRE = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)

func isLanguage(s []byte) bool { return languageRE.Match(s) }

// xmlLang is xml:lang: a language or the empty string.
func xmlLang(s []byte) bool { s = trimXML(s); return len(s) == 0 || isLanguage(s) }

func nmtokens(s []byte) bool {
	toks := bytes.Fields(s)
	if len(toks) == 0 {
		return false
	}
	for _, t := range toks {
		for _, r := range string(t) {
			if !isNameChar(r) {
				return false
			}
		}
	}
	return true
}

func isNCName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i, r := range string(s) {
		if r == ':' || !isNameChar(r) || (i == 0 && (r == '-' || r == '.' || (r >= '0' && r <= '9'))) {
			return false
		}
	}
	return true
}

func isNameChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
		r == '-', r == '.', r == '_', r == ':', r == 0xB7, r >= 0xC0 && r != 0xD7 && r != 0xF7 && r < 0x37E,
		r > 0x37E && r < 0x2000, r == 0x200C, r == 0x200D, r >= 0x203F && r <= 0x2040,
		r >= 0x2070 && r < 0x2190, r >= 0x2C00 && r < 0x2FF0, r >= 0x3001 && r < 0xD800,
		r >= 0xF900 && r < 0xFDD0, r >= 0xFDF0 && r < 0xFFFE, r >= 0x10000 && r < 0xF0000:
		return true
	}
	return false
}

// trimXML trims XML white space (space, tab, CR, LF).
func trimXML(s []byte) []byte {
	for len(s) > 0 && isXMLSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isXMLSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// collapsedLen is the length in characters of s after XSD white-space
// collapse: trimmed, inner runs of white space counted as one.
func collapsedLen(s []byte) int {
	i := 0
	for i < len(s) && s[i] > ' ' && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return len(s) // the common case: no white space, ASCII
	}
	s = trimXML(s)
	n, space := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		if isXMLSpace(c) {
			space = true
			i++
			continue
		}
		if space {
			n++
			space = false
		}
		if c < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRune(s[i:])
			i += w
		}
		n++
	}
	return n
}

// xsdDateOrDateTime reports whether s (white space already collapsed) is
// an xsd:date or an xsd:dateTime: -?YYYY+-MM-DD[Thh:mm:ss[.s+]][zone], a
// year of four or more digits (not 0000, no leading zero beyond four
// digits), a real date, 24:00:00 allowed, zone Z or ±hh:mm up to 14:00.
func xsdDateOrDateTime(s []byte) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	y := 0
	for y < len(s) && s[y] >= '0' && s[y] <= '9' {
		y++
	}
	if y < 4 || (y > 4 && s[0] == '0') || y > 9 {
		return false
	}
	year := 0
	for _, c := range s[:y] {
		year = year*10 + int(c-'0')
	}
	if year == 0 {
		return false
	}
	s = s[y:]
	if len(s) < 6 || s[0] != '-' || !allDigits(s[1:3]) || s[3] != '-' || !allDigits(s[4:6]) {
		return false
	}
	month, day := atoi2(s[1:3]), atoi2(s[4:6])
	if month < 1 || month > 12 || day < 1 || day > encode.DaysIn(year, month) {
		return false
	}
	s = s[6:]
	if len(s) > 0 && s[0] == 'T' {
		if len(s) < 9 || !allDigits(s[1:3]) || s[3] != ':' || !allDigits(s[4:6]) || s[6] != ':' || !allDigits(s[7:9]) {
			return false
		}
		hh, mm, ss := atoi2(s[1:3]), atoi2(s[4:6]), atoi2(s[7:9])
		s = s[9:]
		frac := false
		if len(s) > 0 && s[0] == '.' {
			i := 1
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if s[i] != '0' {
					frac = true
				}
				i++
			}
			if i == 1 {
				return false
			}
			s = s[i:]
		}
		if mm > 59 || ss > 59 || hh > 24 || (hh == 24 && (mm != 0 || ss != 0 || frac)) {
			return false
		}
	}
	switch {
	case len(s) == 0, len(s) == 1 && s[0] == 'Z':
		return true
	case len(s) == 6 && (s[0] == '+' || s[0] == '-') && allDigits(s[1:3]) && s[3] == ':' && allDigits(s[4:6]):
		zh, zm := atoi2(s[1:3]), atoi2(s[4:6])
		return zm <= 59 && zh*60+zm <= 14*60
	}
	return false
}

func atoi2(s []byte) int { return int(s[0]-'0')*10 + int(s[1]-'0') }
