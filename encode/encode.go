// Package encode turns one input row into one sitemap <url> element.
//
// It validates and normalises the loc (scheme, host, port, dot segments,
// RFC 3986/3987 percent-encoding, XML entity escaping), filters it against a
// Scope, and normalises the optional lastmod, changefreq and priority fields.
// Every function follows the standard library's Append idiom (like
// strconv.AppendInt): the caller owns the buffer, the result is the grown
// slice, and nothing allocates once the buffer has room.
package encode

import (
	"math"
	"time"
)

// NoLastmod is the Result.LastmodKey of an entry without a written lastmod.
const NoLastmod int64 = math.MinInt64

// Fields holds the raw values of one input row, as views into the input.
// An optional field that is nil, empty or only white space is absent (no
// element, no warning); such a Loc is rejected as EmptyLoc.
//
// Ext and ExtVals carry the row's extension values: ExtVals[j] is the value
// of the extension column Ext[j]. Ext describes the input's columns and is
// shared by its rows; callers reuse one ExtVals slice for every row, so
// extensions add no allocation per row.
type Fields struct {
	Loc, Lastmod, Changefreq, Priority []byte

	Ext     []ExtColumn
	ExtVals [][]byte
}

// Result describes what Encoder.AppendURL did with a row.
type Result struct {
	// Reason is OK when the row was written, else why it was rejected
	// (and nothing was appended).
	Reason Reason
	// Warnings has a bit set for each optional field that was dropped.
	Warnings Warning
	// LastmodKey orders lastmods in time: microseconds since
	// 1970-01-01T00:00:00Z of the instant written (a date counts as its
	// midnight UTC), or NoLastmod when no lastmod was written.
	LastmodKey int64
	// LastmodAt is the offset in the returned slice of the written lastmod
	// text and LastmodLen its length; LastmodLen is 0 when none was written.
	LastmodAt  int
	LastmodLen int
	// NewsAt is, for an Encoder with a news window (SetNewsWindow), the
	// offset in the returned slice of the row's separate news entry, which
	// runs to its end; 0 when the row has none.
	NewsAt int
}

// Encoder validates and encodes rows for one scope. It keeps small reusable
// buffers, including a one-entry cache of the last converted IDN or IPv6
// host, so it is not safe for concurrent use: use one Encoder per goroutine.
type Encoder struct {
	scope *Scope
	tz    *time.Location

	// One-entry host cache: hostRaw as found in a loc converts to hostOut,
	// or to hostErr when it is not a valid host.
	hostRaw []byte
	hostOut []byte
	hostErr Reason
	hostSet bool

	zone zoneCache // the last period of tz a zone-less lastmod fell in

	media []byte // escaped media query of media alternates; nil: DefaultMediaQuery

	news *newsWindow // nil: news items are written in the <url> entry
}

// NewEncoder returns an Encoder that accepts only URLs under scope and reads
// zone-less lastmod datetimes in tz. A nil tz means UTC. A nil scope accepts
// every absolute http(s) URL and rejects relative paths (NotHTTP), as there
// is nothing to resolve them against.
func NewEncoder(scope *Scope, tz *time.Location) *Encoder {
	if tz == nil {
		tz = time.UTC
	}
	return &Encoder{scope: scope, tz: tz}
}

// AppendURL validates and normalises one row and appends
// <url><loc>…</loc>[<lastmod>…</lastmod>][<changefreq>…</changefreq>][<priority>…</priority>]
// [extensions]</url> and a newline to dst, returning the extended buffer.
//
// The extensions come in this order: xhtml:link alternates (in column
// order, then the media alternate), image:image, video:video, news:news and
// mobile:mobile; their hrefs and URLs are normalised like a loc but may be
// on any host (no scope), and must be absolute http(s) URLs.
//
// With a news window (SetNewsWindow), the news item goes in a second entry
// of its own instead (see Result.NewsAt).
//
// When the loc is rejected, Result.Reason says why and dst is returned
// unchanged. A bad optional field or extension element is left out and
// flagged in Result.Warnings; the URL is still written.
func (e *Encoder) AppendURL(dst []byte, f Fields) ([]byte, Result) {
	res := Result{LastmodKey: NoLastmod}
	orig := dst
	dst = append(dst, "<url><loc>"...)
	locAt := len(dst)
	dst, res.Reason = e.AppendLoc(dst, f.Loc)
	if res.Reason != OK {
		return orig, res
	}
	locEnd := len(dst)
	dst = append(dst, "</loc>"...)

	if lm := trimWhite(f.Lastmod); len(lm) > 0 {
		mark := len(dst)
		dst = append(dst, "<lastmod>"...)
		at := len(dst)
		var key int64
		var w Warning
		dst, key, w = appendLastmodZone(dst, lm, e.tz, &e.zone)
		if w != 0 {
			dst = dst[:mark]
			res.Warnings |= w
		} else {
			res.LastmodKey, res.LastmodAt, res.LastmodLen = key, at, len(dst)-at
			dst = append(dst, "</lastmod>"...)
		}
	}
	if cf := trimWhite(f.Changefreq); len(cf) > 0 {
		var w Warning
		dst, w = appendElement(dst, "<changefreq>", "</changefreq>", cf, AppendChangefreq)
		res.Warnings |= w
	}
	if p := trimWhite(f.Priority); len(p) > 0 {
		var w Warning
		dst, w = appendElement(dst, "<priority>", "</priority>", p, AppendPriority)
		res.Warnings |= w
	}
	if len(f.Ext) > 0 {
		var w Warning
		dst, w = e.appendExt(dst, &f, locAt, locEnd)
		res.Warnings |= w
	}
	dst = append(dst, "</url>\n"...)
	if e.news != nil && len(f.Ext) > 0 && hasNews(&f) {
		at := len(dst)
		var w Warning
		if dst, w = e.appendNewsEntry(dst, &f, locAt, locEnd); len(dst) > at {
			res.NewsAt = at
		}
		res.Warnings |= w
	}
	return dst, res
}

// appendElement appends the element open, raw as app writes it, close; if
// app warns, it appends nothing and returns the warning: a bad optional
// field is left out, the URL is still written.
func appendElement(dst []byte, open, close string, raw []byte, app func(dst, raw []byte) ([]byte, Warning)) ([]byte, Warning) {
	mark := len(dst)
	dst = append(dst, open...)
	var w Warning
	if dst, w = app(dst, raw); w != 0 {
		return dst[:mark], w
	}
	return append(dst, close...), 0
}

// trimWhite trims ASCII white space (space, \t, \n, \v, \f, \r) from both
// ends of an optional field.
func trimWhite(s []byte) []byte {
	for len(s) > 0 && isWhite(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isWhite(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isWhite(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
