package encode

import (
	"bytes"
	"net/netip"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"golang.org/x/net/idna"
)

const (
	// maxLoc bounds a loc: it must be shorter than 2,048 bytes once
	// percent-encoded (before XML escaping), as the protocol asks.
	maxLoc = protocol.MaxLoc
	// maxRawLoc bounds the trimmed input: anything longer is TooLong at once.
	// Only dot segments can make a loc shorter than its input by more than a
	// few bytes, and no real URL spends 14 KiB on them; the bound keeps a
	// garbage multi-megabyte field from being encoded into the caller's buffer.
	maxRawLoc = 8 * maxLoc
	// Limits of a DNS name, checked on every host after conversion.
	maxHostLen  = 253
	maxLabelLen = 63
)

const upperHex = "0123456789ABCDEF"

// byteFlags classifies input bytes for the validation scan.
const (
	flagCtl  = 1 // U+0000–U+001F, U+007F
	flagHigh = 2 // not ASCII
)

var byteFlags = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = flagCtl
	}
	t[0x7f] = flagCtl
	for c := 0x80; c < 0x100; c++ {
		t[c] = flagHigh
	}
	return t
}()

// pathClass sorts the bytes of a path, query and fragment. Unreserved,
// sub-delims, ':' '@' '/' '?' are copied as they are; of those, '?' (which
// may end the path), '&' and the apostrophe (which need XML escaping) are
// marked so the encoder notices them on its one pass. '%' and '#' are handled
// apart; every other byte is percent-encoded.
var pathClass = func() (t [256]uint8) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" +
		"-._~" + "!$()*+,;=" + ":@/") {
		t[c] = pathCopy
	}
	for _, c := range []byte("?&'") {
		t[c] = pathMark
	}
	return t
}()

const (
	pathEncode = iota // percent-encode, unless '%' starts an escape or '#' the fragment
	pathCopy          // copy
	pathMark          // copy and take note
)

// hostSafe holds the bytes of a lower-cased ASCII host name.
var hostSafe = makeSet("abcdefghijklmnopqrstuvwxyz0123456789-_.")

var hexVal = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range upperHex {
		t[c] = int8(i)
		t[c|0x20] = int8(i)
	}
	return t
}()

func makeSet(s string) (t [256]bool) {
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return t
}

// AppendLoc validates and normalises the raw loc and appends its text, as it
// goes between <loc> and </loc>, to dst: percent-encoded per RFC 3986/3987
// and then XML-escaped. On rejection it returns dst unchanged and the reason.
//
// The rules: leading and trailing spaces are trimmed; the value must be valid
// UTF-8 without control characters; it must be an absolute http or https URL
// (scheme and host are lower-cased, an IDN host is converted to punycode, an
// empty or default port is dropped), a path starting with "/" (resolved
// against the scope's origin) or "//host/…" (taking the scope's scheme).
// Dot segments are removed, the result must be under the scope and shorter
// than 2,048 bytes.
func (e *Encoder) AppendLoc(dst, raw []byte) ([]byte, Reason) {
	if out, ok := e.appendLocFast(dst, raw); ok {
		return out, OK
	}
	return e.appendLocGeneral(dst, raw, e.scope)
}

// appendLocGeneral is AppendLoc for every input, under scope sc (nil: any
// absolute http(s) URL): it defines the result that appendLocFast takes a
// short cut to.
func (e *Encoder) appendLocGeneral(dst, raw []byte, sc *Scope) ([]byte, Reason) {
	start := len(dst)
	out, xml, r := e.appendURI(dst, raw, sc)
	if r != OK {
		return dst, r
	}
	if xml {
		out = escapeInPlace(out, start)
	}
	return out, OK
}

// appendLocFast is AppendLoc for the common case, in one pass: a /path or
// a URL that starts with the scope's origin exactly as the scope writes it,
// with no control character, no dot segment and a loc under 2,048 bytes. It
// XML-escapes as it goes. On anything else it reports false and leaves the
// result (and the reason of a rejection) to the general path, which defines
// them: FuzzAppendLocFast checks that both agree wherever this one answers.
func (e *Encoder) appendLocFast(dst, raw []byte) ([]byte, bool) {
	sc := e.scope
	if sc == nil || !sc.plain {
		return dst, false
	}
	s := trimSpace(raw)
	if len(s) == 0 || len(s) > maxRawLoc {
		return dst, false
	}
	var rest []byte
	switch o := sc.origin; {
	case s[0] == '/' && (len(s) == 1 || s[1] != '/'):
		rest = s
	case len(s) >= len(o) && string(s[:len(o)]) == string(o) &&
		(len(s) == len(o) || s[len(o)] == '/' || s[len(o)] == '?' || s[len(o)] == '#'):
		rest = s[len(o):]
	default:
		return dst, false
	}
	start := len(dst)
	dst = append(dst, sc.origin...)
	pathStart := len(dst)
	if len(rest) == 0 || rest[0] != '/' {
		dst = append(dst, '/') // an empty http path is "/"
	}
	out, extra, ok := appendPathFast(dst, rest)
	if !ok || len(out)-start-extra >= maxLoc || !bytes.HasPrefix(out[pathStart:], sc.path) {
		return dst[:start], false
	}
	return out, true
}

// fastCopy holds the bytes appendPathFast copies in runs: those of class
// pathCopy except '.', which may start a dot segment.
var fastCopy = func() (t [256]uint8) {
	for c := range t {
		if pathClass[c] == pathCopy && c != '.' {
			t[c] = 1
		}
	}
	return t
}()

// appendPathFast appends the path, query and fragment s (which starts with
// '/' or follows one dst ends with) like appendPercent does, XML-escaped, and
// returns the bytes the escaping added. It reports false on a control
// character, invalid UTF-8 or a segment that starts with '.' or "%2E".
func appendPathFast(dst, s []byte) (_ []byte, extra int, ok bool) {
	inPath, fragment := true, false
	var high byte
	for i := 0; i < len(s); {
		j := i
		for ; j+8 <= len(s); j += 8 {
			w := s[j : j+8 : j+8] // one bounds check for eight bytes
			if fastCopy[w[0]]&fastCopy[w[1]]&fastCopy[w[2]]&fastCopy[w[3]]&
				fastCopy[w[4]]&fastCopy[w[5]]&fastCopy[w[6]]&fastCopy[w[7]] == 0 {
				break
			}
		}
		for j < len(s) && fastCopy[s[j]] != 0 {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		switch c := s[j]; {
		case c == '.':
			if inPath && dst[len(dst)-1] == '/' {
				return dst, 0, false
			}
			dst = append(dst, '.')
		case c == '&':
			dst = append(dst, "&amp;"...)
			extra += len("&amp;") - 1
		case c == '\'':
			dst = append(dst, "&apos;"...)
			extra += len("&apos;") - 1
		case c == '?':
			inPath = false
			dst = append(dst, '?')
		case c == '%' && j+2 < len(s) && hexVal[s[j+1]] >= 0 && hexVal[s[j+2]] >= 0:
			h1, h2 := upper(s[j+1]), upper(s[j+2])
			if inPath && h1 == '2' && h2 == 'E' && dst[len(dst)-1] == '/' {
				return dst, 0, false
			}
			dst = append(dst, '%', h1, h2)
			j += 2
		case c == '#' && !fragment:
			inPath, fragment = false, true
			dst = append(dst, '#')
		case byteFlags[c] == flagCtl:
			return dst, 0, false
		default:
			high |= c & 0x80
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
		i = j + 1
	}
	if high != 0 && !utf8.Valid(s) {
		return dst, 0, false
	}
	return dst, extra, true
}

// appendURI appends the normalised, percent-encoded URL (not XML-escaped)
// and reports whether it may hold '&' or an apostrophe, which XML must escape. On
// rejection the returned slice holds garbage past the original length.
func (e *Encoder) appendURI(dst, raw []byte, sc *Scope) (_ []byte, xml bool, _ Reason) {
	s := trimSpace(raw)
	if len(s) == 0 {
		return dst, false, EmptyLoc
	}
	var flags uint8
	for _, c := range s {
		flags |= byteFlags[c]
	}
	if flags&flagHigh != 0 && !utf8.Valid(s) {
		return dst, false, InvalidUTF8
	}
	if flags&flagCtl != 0 {
		return dst, false, ControlChar
	}
	if len(s) > maxRawLoc {
		return dst, false, TooLong
	}

	start := len(dst)
	var rest []byte // path, query and fragment
	if s[0] == '/' && (len(s) == 1 || s[1] != '/') {
		if sc == nil {
			return dst, false, NotHTTP
		}
		dst = append(dst, sc.origin...)
		rest = s
	} else {
		var https bool
		switch {
		case len(s) >= 2 && s[0] == '/' && s[1] == '/':
			if sc == nil {
				return dst, false, NotHTTP
			}
			https, s = sc.https, s[2:]
		case hasPrefixFold(s, "http://"):
			s = s[len("http://"):]
		case hasPrefixFold(s, "https://"):
			https, s = true, s[len("https://"):]
		default:
			return dst, false, NotHTTP
		}
		end := 0
		for end < len(s) && s[end] != '/' && s[end] != '?' && s[end] != '#' {
			end++
		}
		var r Reason
		if dst, r = e.appendOrigin(dst, https, s[:end], sc); r != OK {
			return dst, false, r
		}
		if sc != nil && !bytes.Equal(dst[start:], sc.origin) {
			return dst, false, OutOfScope
		}
		rest = s[end:]
	}

	pathStart := len(dst)
	if len(rest) == 0 || rest[0] != '/' {
		dst = append(dst, '/') // an empty http path is "/"
	}
	var pathEnd int
	dst, pathEnd, xml = appendPercent(dst, rest)

	// Remove dot segments, else "/catalog/../admin" would pass the prefix check.
	if p := dst[pathStart:pathEnd]; mayHaveDotSegment(p) {
		n := removeDotSegments(p)
		tail := copy(dst[pathStart+n:], dst[pathEnd:])
		dst = dst[:pathStart+n+tail]
	}

	if sc != nil && !bytes.HasPrefix(dst[pathStart:], sc.path) {
		return dst, xml, OutOfScope
	}
	if len(dst)-start >= maxLoc {
		return dst, xml, TooLong
	}
	return dst, xml, OK
}

// appendOrigin appends scheme://host[:port] for the authority auth.
func (e *Encoder) appendOrigin(dst []byte, https bool, auth []byte, sc *Scope) ([]byte, Reason) {
	if bytes.IndexByte(auth, '@') >= 0 {
		return dst, UserInfo
	}
	// Fast path: most URLs carry exactly the scope's host and port.
	if sc != nil && https == sc.https && bytes.Equal(auth, sc.auth) {
		return append(dst, sc.origin...), OK
	}
	if https {
		dst = append(dst, "https://"...)
	} else {
		dst = append(dst, "http://"...)
	}

	host, port := auth, []byte(nil)
	if len(auth) > 0 && auth[0] == '[' {
		i := bytes.IndexByte(auth, ']')
		if i < 0 {
			return dst, BadHost
		}
		host = auth[:i+1]
		if tail := auth[i+1:]; len(tail) > 0 {
			if tail[0] != ':' {
				return dst, BadHost
			}
			port = tail[1:]
		}
	} else if i := bytes.IndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
	}
	if len(host) == 0 {
		return dst, BadHost
	}
	var r Reason
	if dst, r = e.appendHost(dst, host); r != OK {
		return dst, r
	}
	if len(port) > 0 { // "host:" has an empty port, dropped
		n, ok := parsePort(port)
		if !ok {
			return dst, BadPort
		}
		if (https && n != 443) || (!https && n != 80) {
			dst = append(dst, ':')
			dst = strconv.AppendUint(dst, uint64(n), 10)
		}
	}
	return dst, OK
}

// appendHost appends the normalised form of a non-empty host: a lower-cased
// ASCII name, the punycode form of an IDN, or a canonical IPv6 literal.
func (e *Encoder) appendHost(dst, host []byte) ([]byte, Reason) {
	if host[0] != '[' {
		ascii := true
		for _, c := range host {
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		if ascii {
			mark := len(dst)
			for _, c := range host {
				dst = append(dst, lower(c))
			}
			if !validHostName(dst[mark:]) {
				return dst, BadHost
			}
			return dst, OK
		}
	}
	// IDN or IPv6: the conversion allocates, so remember the last one.
	if !e.hostSet || !bytes.Equal(e.hostRaw, host) {
		e.hostRaw = append(e.hostRaw[:0], host...)
		e.hostOut, e.hostErr = convertHost(e.hostOut[:0], host)
		e.hostSet = true
	}
	if e.hostErr != OK {
		return dst, e.hostErr
	}
	return append(dst, e.hostOut...), OK
}

// convertHost appends the normalised form of an IPv6 literal or IDN host.
func convertHost(dst, host []byte) ([]byte, Reason) {
	if host[0] == '[' {
		a, err := netip.ParseAddr(string(host[1 : len(host)-1]))
		if err != nil || !a.Is6() || a.Zone() != "" {
			return dst, BadHost
		}
		dst = append(dst, '[')
		dst = a.AppendTo(dst)
		return append(dst, ']'), OK
	}
	a, err := idna.Lookup.ToASCII(string(host))
	if err != nil {
		return dst, BadHost
	}
	mark := len(dst)
	for i := 0; i < len(a); i++ {
		dst = append(dst, lower(a[i]))
	}
	if !validHostName(dst[mark:]) {
		return dst[:mark], BadHost
	}
	return dst, OK
}

// validHostName reports whether h is a lower-case ASCII host name made of
// letters, digits, '-' and '_', with non-empty labels of at most 63 bytes
// and at most 253 bytes in all. A single trailing dot (a fully qualified
// name) is kept as it is.
func validHostName(h []byte) bool {
	if len(h) > 0 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	if len(h) == 0 || len(h) > maxHostLen {
		return false
	}
	label := 0
	for _, c := range h {
		if !hostSafe[c] {
			return false
		}
		if c == '.' {
			if label == 0 {
				return false
			}
			label = 0
			continue
		}
		if label++; label > maxLabelLen {
			return false
		}
	}
	return label > 0
}

// parsePort parses a decimal port in 1..65535; leading zeros are allowed.
func parsePort(p []byte) (int, bool) {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return 0, false
		}
	}
	return n, n > 0
}

// appendPercent appends the path, query and fragment s, percent-encoded:
// bytes of class pathCopy or pathMark are copied (in runs), a valid %XX
// escape is kept with its hex digits upper-cased, the first '#' starts the
// fragment, and every other byte (non-ASCII UTF-8, space, "<>\^`{|}[], a
// second '#', a stray '%') becomes %XX. It also returns where in dst the path
// ends (at the first '?' or '#', else len(dst)) and whether the text holds
// '&' or an apostrophe, which XML must escape.
func appendPercent(dst, s []byte) (_ []byte, pathEnd int, xml bool) {
	pathEnd = -1
	fragment := false
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && pathClass[s[j]] == pathCopy {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		switch c := s[j]; {
		case pathClass[c] == pathMark:
			if c != '?' {
				xml = true
			} else if pathEnd < 0 {
				pathEnd = len(dst)
			}
			dst = append(dst, c)
		case c == '%' && j+2 < len(s) && hexVal[s[j+1]] >= 0 && hexVal[s[j+2]] >= 0:
			dst = append(dst, '%', upper(s[j+1]), upper(s[j+2]))
			j += 2
		case c == '#' && !fragment:
			fragment = true
			if pathEnd < 0 {
				pathEnd = len(dst)
			}
			dst = append(dst, '#')
		default:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
		i = j + 1
	}
	if pathEnd < 0 {
		pathEnd = len(dst)
	}
	return dst, pathEnd, xml
}

// removeDotSegments applies RFC 3986 remove_dot_segments to the
// percent-encoded path p (which starts with '/') in place and returns the
// new length. "%2E" counts as '.', as it does for servers that decode it.
func removeDotSegments(p []byte) int {
	w := 0
	for r := 0; r < len(p); {
		e := r + 1
		for e < len(p) && p[e] != '/' {
			e++
		}
		last := e == len(p)
		switch dotSegment(p[r+1 : e]) {
		case 0:
			w += copy(p[w:], p[r:e])
		case 2:
			if i := bytes.LastIndexByte(p[:w], '/'); i >= 0 {
				w = i
			}
			fallthrough
		case 1:
			if last {
				p[w] = '/'
				w++
			}
		}
		r = e
	}
	if w == 0 {
		p[0] = '/'
		w = 1
	}
	return w
}

// dotSegment returns 1 for a "." segment, 2 for "..", else 0.
func dotSegment(seg []byte) int {
	switch string(seg) {
	case ".", "%2E":
		return 1
	case "..", ".%2E", "%2E.", "%2E%2E":
		return 2
	}
	return 0
}

// escapeInPlace XML-escapes dst[start:], the only specials a percent-encoded
// URL can hold being & and '.
func escapeInPlace(dst []byte, start int) []byte {
	amp := bytes.Count(dst[start:], []byte("&"))
	apos := bytes.Count(dst[start:], []byte("'"))
	if amp+apos == 0 {
		return dst
	}
	n := len(dst)
	m := n + amp*(len("&amp;")-1) + apos*(len("&apos;")-1)
	dst = slices.Grow(dst, m-n)[:m]
	w := m
	for r := n - 1; r >= start; r-- {
		switch c := dst[r]; c {
		case '&':
			w -= len("&amp;")
			copy(dst[w:], "&amp;")
		case '\'':
			w -= len("&apos;")
			copy(dst[w:], "&apos;")
		default:
			w--
			dst[w] = c
		}
	}
	return dst
}

// trimSpace trims ASCII spaces (0x20) only: other white space in a loc is a
// control character and rejects it.
func trimSpace(s []byte) []byte {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func hasPrefixFold(s []byte, lowerPrefix string) bool {
	if len(s) < len(lowerPrefix) {
		return false
	}
	for i := 0; i < len(lowerPrefix); i++ {
		if lower(s[i]) != lowerPrefix[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// mayHaveDotSegment reports whether the percent-encoded path p has a '/'
// followed by '.' or "%2E" (appendPercent upper-cases hex): one pass over its
// slashes instead of two substring searches, as most paths have none.
func mayHaveDotSegment(p []byte) bool {
	for {
		i := bytes.IndexByte(p, '/')
		if i < 0 || i+1 >= len(p) {
			return false
		}
		p = p[i+1:]
		if p[0] == '.' || len(p) >= 3 && p[0] == '%' && p[1] == '2' && p[2] == 'E' {
			return true
		}
	}
}

// AppendLocText appends the URL that the <loc> content loc (as AppendLoc
// writes it) holds: its XML escapes, &amp; and &apos; (the only ones a
// normalised loc has: other markup characters are percent-encoded), undone.
func AppendLocText(dst, loc []byte) []byte {
	for {
		i := bytes.IndexByte(loc, '&')
		if i < 0 {
			return append(dst, loc...)
		}
		dst = append(dst, loc[:i]...)
		switch rest := loc[i:]; {
		case bytes.HasPrefix(rest, []byte("&amp;")):
			dst = append(dst, '&')
			loc = rest[len("&amp;"):]
		case bytes.HasPrefix(rest, []byte("&apos;")):
			dst = append(dst, '\'')
			loc = rest[len("&apos;"):]
		default:
			dst = append(dst, '&')
			loc = rest[1:]
		}
	}
}
