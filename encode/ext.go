package encode

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/internal/protocol"
)

// ExtKind says what an extension column of the input holds: which
// extension element (or part of one) its values become.
type ExtKind uint8

// Extension kinds. The video kinds are in the order their elements appear
// in a <video:video>, as sitemap-video.xsd requires.
const (
	ExtNone           ExtKind = iota
	ExtAlternate              // href of <xhtml:link rel="alternate" hreflang="Key">
	ExtMediaAlternate         // href of <xhtml:link rel="alternate" media="..."> (the encoder's media query)
	ExtMobile                 // true/false, 1/0, yes/no: <mobile:mobile/>
	ExtImage                  // loc of one <image:image>
	ExtImageList              // several image locs, packed with AppendPacked (Parquet LIST<STRING>)
	ExtAlternateList          // several alternates, a packed list of records (AltHreflang, AltHref, AltMedia fields; see AppendField)
	ExtVideoList              // several videos, a packed list of records whose fields are tagged with their video ExtKind

	ExtNewsName     // <news:publication><news:name>
	ExtNewsLanguage // <news:publication><news:language>
	ExtNewsDate     // <news:publication_date>
	ExtNewsTitle    // <news:title>

	ExtVideoThumbnail            // <video:thumbnail_loc>, required
	ExtVideoTitle                // <video:title>, required, at most 100 characters
	ExtVideoDescription          // <video:description>, required, at most 2,048 characters
	ExtVideoContentLoc           // <video:content_loc>; it or player_loc is required
	ExtVideoPlayerLoc            // <video:player_loc>
	ExtVideoDuration             // <video:duration>, seconds, 1..28,800
	ExtVideoExpirationDate       // <video:expiration_date>, W3C Datetime
	ExtVideoRating               // <video:rating>, 0.0..5.0
	ExtVideoViewCount            // <video:view_count>, a non-negative integer
	ExtVideoPublicationDate      // <video:publication_date>, W3C Datetime
	ExtVideoTag                  // one <video:tag>, at most 32 per video
	ExtVideoCategory             // <video:category>, at most 256 characters
	ExtVideoFamilyFriendly       // <video:family_friendly>, yes/no
	ExtVideoRequiresSubscription // <video:requires_subscription>, yes/no
	ExtVideoLive                 // <video:live>, yes/no
	numExtKinds
)

// ExtColumn describes one extension column of an input: its kind and, for
// ExtAlternate, the hreflang (Key) its column name carries. Readers find
// them once per input from the header or schema (see ParseExtColumn); rows
// then carry only the values.
type ExtColumn struct {
	Kind ExtKind
	Key  string
}

// extNames maps column names (lower case) to kinds; alternate:<hreflang>,
// image:<n> and video:tag:<n> are matched apart.
var extNames = map[string]ExtKind{
	"media-alternate":             ExtMediaAlternate,
	"mobile":                      ExtMobile,
	"image":                       ExtImage,
	"images":                      ExtImageList,
	"alternates":                  ExtAlternateList,
	"videos":                      ExtVideoList,
	"news:publication_name":       ExtNewsName,
	"news:publication_language":   ExtNewsLanguage,
	"news:publication_date":       ExtNewsDate,
	"news:title":                  ExtNewsTitle,
	"video:thumbnail_loc":         ExtVideoThumbnail,
	"video:title":                 ExtVideoTitle,
	"video:description":           ExtVideoDescription,
	"video:content_loc":           ExtVideoContentLoc,
	"video:player_loc":            ExtVideoPlayerLoc,
	"video:duration":              ExtVideoDuration,
	"video:expiration_date":       ExtVideoExpirationDate,
	"video:rating":                ExtVideoRating,
	"video:view_count":            ExtVideoViewCount,
	"video:publication_date":      ExtVideoPublicationDate,
	"video:tag":                   ExtVideoTag,
	"video:category":              ExtVideoCategory,
	"video:family_friendly":       ExtVideoFamilyFriendly,
	"video:requires_subscription": ExtVideoRequiresSubscription,
	"video:live":                  ExtVideoLive,
}

// ParseExtColumn reports whether the column name (case-insensitive, white
// space trimmed) is an extension column, and which: alternate:<hreflang>,
// media-alternate, mobile, image, image:<n>, images, alternates, videos,
// news:publication_name,
// news:publication_language, news:publication_date, news:title, and
// video:<element> for thumbnail_loc, title, description, content_loc,
// player_loc, duration, expiration_date, rating, view_count,
// publication_date, tag (also tag:<n>), category, family_friendly,
// requires_subscription and live. The hreflang of an alternate column is
// kept as written; it is checked per row (HreflangInvalid).
func ParseExtColumn(name string) (ExtColumn, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if k, ok := extNames[n]; ok {
		return ExtColumn{Kind: k}, true
	}
	if rest, ok := strings.CutPrefix(n, "alternate:"); ok && rest != "" {
		return ExtColumn{Kind: ExtAlternate, Key: strings.TrimSpace(name)[len("alternate:"):]}, true
	}
	if rest, ok := strings.CutPrefix(n, "image:"); ok && isNumber(rest) {
		return ExtColumn{Kind: ExtImage}, true
	}
	if rest, ok := strings.CutPrefix(n, "video:tag:"); ok && isNumber(rest) {
		return ExtColumn{Kind: ExtVideoTag}, true
	}
	return ExtColumn{}, false
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// Namespaces is a set of extension namespaces a sitemap declares.
type Namespaces uint8

// The extension namespaces, with their standard prefixes.
const (
	NSXhtml Namespaces = 1 << iota
	NSMobile
	NSImage
	NSVideo
	NSNews
)

var namespaceDecls = [...]string{
	` xmlns:xhtml="http://www.w3.org/1999/xhtml"`,
	` xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0"`,
	` xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"`,
	` xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"`,
	` xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"`,
}

// namespaceSchemas pairs each namespace of namespaceDecls, in the same
// order, with the official location of its schema, as xsi:schemaLocation
// lists them. xhtml has no sitemap schema of its own: the location is W3C's
// XHTML 1.0 Strict schema, which declares the global link element.
var namespaceSchemas = [...]string{
	"http://www.w3.org/1999/xhtml http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd",
	"http://www.google.com/schemas/sitemap-mobile/1.0 http://www.google.com/schemas/sitemap-mobile/1.0/sitemap-mobile.xsd",
	"http://www.google.com/schemas/sitemap-image/1.1 http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd",
	"http://www.google.com/schemas/sitemap-video/1.1 http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd",
	"http://www.google.com/schemas/sitemap-news/0.9 http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd",
}

// Namespace returns the namespace of the elements of kind k (0 for ExtNone).
func (k ExtKind) Namespace() Namespaces {
	switch {
	case k == ExtAlternate || k == ExtMediaAlternate || k == ExtAlternateList:
		return NSXhtml
	case k == ExtMobile:
		return NSMobile
	case k == ExtImage || k == ExtImageList:
		return NSImage
	case k >= ExtNewsName && k <= ExtNewsTitle:
		return NSNews
	case k >= ExtVideoThumbnail && k < numExtKinds || k == ExtVideoList:
		return NSVideo
	}
	return 0
}

// NamespacesOf returns the namespaces the columns' elements need.
func NamespacesOf(cols []ExtColumn) Namespaces {
	var ns Namespaces
	for _, c := range cols {
		ns |= c.Kind.Namespace()
	}
	return ns
}

// AppendDecls appends the xmlns attributes of ns, each preceded by a space,
// in a fixed order: xhtml, mobile, image, video, news.
func (ns Namespaces) AppendDecls(dst []byte) []byte {
	for i, d := range namespaceDecls {
		if ns&(1<<i) != 0 {
			dst = append(dst, d...)
		}
	}
	return dst
}

// AppendSchemaLocations appends, for each namespace of ns in the order of
// AppendDecls, a space, the namespace URI, a space and the official
// location of its schema: the pairs an xsi:schemaLocation attribute lists
// after the sitemap namespace's own.
func (ns Namespaces) AppendSchemaLocations(dst []byte) []byte {
	for i, l := range namespaceSchemas {
		if ns&(1<<i) != 0 {
			dst = append(dst, ' ')
			dst = append(dst, l...)
		}
	}
	return dst
}

// DefaultMediaQuery is the media attribute of a media-alternate link unless
// the Encoder is given another with SetMediaQuery.
const DefaultMediaQuery = "only screen and (max-width: 640px)"

// ValidMediaQuery reports whether q can be a media attribute: 1 to 1,024
// characters of valid UTF-8 that XML can hold (see SetMediaQuery).
func ValidMediaQuery(q string) bool { return validText([]byte(q), 1, 1024) }

// SetMediaQuery sets the media attribute of media-alternate links (see
// DefaultMediaQuery). It is written XML-escaped; the caller checks it with
// ValidMediaQuery first.
func (e *Encoder) SetMediaQuery(q string) {
	e.media = appendEscaped(e.media[:0], q)
}

// appendHref appends an extension URL (an alternate's or media alternate's
// href, an image or video URL): like a loc, percent-encoded and
// XML-escaped, but absolute http(s) only and on any host (no scope).
func (e *Encoder) appendHref(dst, raw []byte) ([]byte, Reason) {
	return e.appendLocGeneral(dst, raw, nil)
}

// appendExt appends the extension elements of f after the core elements
// of a <url> whose loc text is dst[locAt:locEnd].
func (e *Encoder) appendExt(dst []byte, f *Fields, locAt, locEnd int) ([]byte, Warning) {
	var w Warning
	var has [numExtKinds]bool
	for j, c := range f.Ext {
		if j < len(f.ExtVals) && len(trimWhite(f.ExtVals[j])) > 0 {
			has[c.Kind] = true
		}
	}
	val := func(j int) []byte {
		if j < len(f.ExtVals) {
			return trimWhite(f.ExtVals[j])
		}
		return nil
	}

	// xhtml:link alternates, in column order, then the media alternate.
	if has[ExtAlternate] || has[ExtAlternateList] {
		links, self := 0, false
		for j, c := range f.Ext {
			if c.Kind == ExtAlternateList {
				dst, links, self, w = e.appendAltList(dst, f, j, locAt, locEnd, links, self, w)
				continue
			}
			v := val(j)
			if c.Kind != ExtAlternate || len(v) == 0 {
				continue
			}
			if !validHreflang(c.Key) {
				w |= HreflangInvalid
				continue
			}
			if dupHreflang(f, c.Key, j, -1) {
				w |= AlternateDuplicate
				continue
			}
			mark := len(dst)
			dst = append(dst, `<xhtml:link rel="alternate" hreflang="`...)
			dst = append(dst, c.Key...)
			dst = append(dst, `" href="`...)
			at := len(dst)
			var r Reason
			if dst, r = e.appendHref(dst, v); r != OK {
				dst = dst[:mark]
				w |= AlternateInvalid
				continue
			}
			if bytes.Equal(dst[at:], dst[locAt:locEnd]) {
				self = true
			}
			dst = append(dst, `"/>`...)
			links++
		}
		if links > 0 && !self {
			w |= AlternateNotReciprocal
		}
	}
	if has[ExtMediaAlternate] {
		for j, c := range f.Ext {
			if v := val(j); c.Kind == ExtMediaAlternate && len(v) > 0 {
				mark := len(dst)
				dst = append(dst, `<xhtml:link rel="alternate" media="`...)
				if e.media == nil {
					dst = append(dst, DefaultMediaQuery...)
				} else {
					dst = append(dst, e.media...)
				}
				dst = append(dst, `" href="`...)
				var r Reason
				if dst, r = e.appendHref(dst, v); r != OK {
					dst = dst[:mark]
					w |= MediaAlternateInvalid
					continue
				}
				dst = append(dst, `"/>`...)
			}
		}
	}

	if has[ExtImage] || has[ExtImageList] {
		images := 0
		image := func(v []byte) {
			if len(v) == 0 {
				return
			}
			if images == protocol.MaxImages {
				w |= ImageLimit
				return
			}
			mark := len(dst)
			dst = append(dst, "<image:image><image:loc>"...)
			var r Reason
			if dst, r = e.appendHref(dst, v); r != OK {
				dst = dst[:mark]
				w |= ImageInvalid
				return
			}
			dst = append(dst, "</image:loc></image:image>"...)
			images++
		}
		for j, c := range f.Ext {
			switch c.Kind {
			case ExtImage:
				image(val(j))
			case ExtImageList:
				var rest []byte // packed: not trimmed, a length byte may look like white space
				if j < len(f.ExtVals) {
					rest = f.ExtVals[j]
				}
				for len(rest) > 0 {
					var v []byte
					var ok bool
					if v, rest, ok = NextPacked(rest); !ok {
						w |= ImageInvalid
						break
					}
					image(trimWhite(v))
				}
			}
		}
	}

	if hasAny(&has, ExtVideoThumbnail, numExtKinds) {
		dst, w = e.appendVideo(dst, videoSrc{f: f}, w)
	}
	if has[ExtVideoList] {
		for j, c := range f.Ext {
			if c.Kind == ExtVideoList && j < len(f.ExtVals) {
				dst, w = e.appendVideoList(dst, f.ExtVals[j], w)
			}
		}
	}
	if e.news == nil && hasAny(&has, ExtNewsName, ExtNewsTitle+1) {
		dst, w = e.appendNews(dst, f, w)
	}

	if has[ExtMobile] {
		for j, c := range f.Ext {
			if v := val(j); c.Kind == ExtMobile && len(v) > 0 {
				yes, ok := parseBool(v)
				if !ok {
					w |= MobileInvalid
					continue
				}
				if yes {
					dst = append(dst, "<mobile:mobile/>"...)
				}
				break
			}
		}
	}
	return dst, w
}

func hasAny(has *[numExtKinds]bool, from, to ExtKind) bool {
	for k := from; k < to; k++ {
		if has[k] {
			return true
		}
	}
	return false
}

// first returns the first non-empty value of kind k in f, trimmed.
func first(f *Fields, k ExtKind) []byte {
	for j, c := range f.Ext {
		if c.Kind == k && j < len(f.ExtVals) {
			if v := trimWhite(f.ExtVals[j]); len(v) > 0 {
				return v
			}
		}
	}
	return nil
}

// appendVideo appends the row's <video:video>, or nothing with VideoInvalid
// or VideoDescriptionLong when a required part is missing or bad.
func (e *Encoder) appendVideo(dst []byte, s videoSrc, w Warning) ([]byte, Warning) {
	mark := len(dst)
	fail := func(bad Warning) ([]byte, Warning) { return dst[:mark], w | bad }
	thumb, title, desc := s.first(ExtVideoThumbnail), s.first(ExtVideoTitle), s.first(ExtVideoDescription)
	content, player := s.first(ExtVideoContentLoc), s.first(ExtVideoPlayerLoc)
	if len(thumb) == 0 || len(content) == 0 && len(player) == 0 ||
		!validText(title, 1, protocol.MaxVideoTitle) || !validText(desc, 1, -1) {
		return fail(VideoInvalid)
	}
	if !validText(desc, 1, protocol.MaxVideoDescription) {
		return fail(VideoDescriptionLong)
	}
	var r Reason
	dst = append(dst, "<video:video><video:thumbnail_loc>"...)
	if dst, r = e.appendHref(dst, thumb); r != OK {
		return fail(VideoInvalid)
	}
	dst = append(dst, "</video:thumbnail_loc><video:title>"...)
	dst = appendEscaped(dst, title)
	dst = append(dst, "</video:title><video:description>"...)
	dst = appendEscaped(dst, desc)
	dst = append(dst, "</video:description>"...)
	locs := 0
	for _, u := range [...]struct {
		v   []byte
		tag string
	}{{content, "content_loc"}, {player, "player_loc"}} {
		if len(u.v) == 0 {
			continue
		}
		m := len(dst)
		dst = append(dst, "<video:"...)
		dst = append(dst, u.tag...)
		dst = append(dst, '>')
		if dst, r = e.appendHref(dst, u.v); r != OK {
			// A bad one of the two is dropped when the other is good.
			dst = dst[:m]
			if len(content) == 0 || len(player) == 0 {
				return fail(VideoInvalid)
			}
			w |= VideoFieldInvalid
			continue
		}
		dst = append(dst, "</video:"...)
		dst = append(dst, u.tag...)
		dst = append(dst, '>')
		locs++
	}
	if locs == 0 {
		return fail(VideoInvalid)
	}

	// The optional elements, in schema order.
	for k := ExtVideoDuration; k < numExtKinds; k++ {
		if k == ExtVideoTag {
			tags := 0
			for v, pos, ok := s.nextTag(0); ok; v, pos, ok = s.nextTag(pos) {
				v = trimWhite(v)
				if len(v) == 0 {
					continue
				}
				if tags == protocol.MaxVideoTags {
					w |= VideoTagLimit
					break
				}
				if !validText(v, 1, -1) {
					w |= VideoFieldInvalid
					continue
				}
				dst = append(dst, "<video:tag>"...)
				dst = appendEscaped(dst, v)
				dst = append(dst, "</video:tag>"...)
				tags++
			}
			continue
		}
		v := s.first(k)
		if len(v) == 0 {
			continue
		}
		m := len(dst)
		name := videoElems[k-ExtVideoDuration]
		dst = append(dst, "<video:"...)
		dst = append(dst, name...)
		dst = append(dst, '>')
		ok := true
		switch k {
		case ExtVideoDuration:
			n, okn := parseUint(v)
			ok = okn && n >= 1 && n <= protocol.MaxVideoDuration
			dst = strconv.AppendUint(dst, n, 10)
		case ExtVideoViewCount:
			var n uint64
			n, ok = parseUint(v)
			dst = strconv.AppendUint(dst, n, 10)
		case ExtVideoExpirationDate, ExtVideoPublicationDate:
			var lw Warning
			dst, _, lw = appendLastmodZone(dst, v, e.tz, &e.zone)
			ok = lw == 0
		case ExtVideoRating:
			ok = validRating(v)
			dst = append(dst, v...)
		case ExtVideoCategory:
			ok = validText(v, 1, protocol.MaxVideoCategory)
			dst = appendEscaped(dst, v)
		case ExtVideoFamilyFriendly, ExtVideoRequiresSubscription, ExtVideoLive:
			var yes bool
			yes, ok = parseBool(v)
			if yes {
				dst = append(dst, "yes"...)
			} else {
				dst = append(dst, "no"...)
			}
		}
		if !ok {
			dst = dst[:m]
			w |= VideoFieldInvalid
			continue
		}
		dst = append(dst, "</video:"...)
		dst = append(dst, name...)
		dst = append(dst, '>')
	}
	return append(dst, "</video:video>"...), w
}

// videoElems names the optional video elements from ExtVideoDuration on.
var videoElems = [numExtKinds - ExtVideoDuration]string{
	"duration", "expiration_date", "rating", "view_count", "publication_date",
	"tag", "category", "family_friendly", "requires_subscription", "live",
}

// NewsSkew is how far in the future of a news window's end (see
// Encoder.SetNewsWindow) a publication date may lie: clocks and exports
// disagree by seconds or minutes, not by hours.
const NewsSkew = 15 * time.Minute

// newsWindow holds the publication dates, in LastmodKey units, a news item
// must fall between to be written.
type newsWindow struct{ oldest, newest int64 }

// SetNewsWindow makes AppendURL write a row's news item apart from its
// <url> entry: after the entry (which then carries no <news:news>) it
// appends a second one, <url><loc>…</loc><news:news>…</news:news></url>,
// for the row's news sitemap, and Result.NewsAt says where it starts. An
// item published before oldest is left out (NewsExpired), as is one
// published after newest plus NewsSkew (NewsFuture): Google wants only the
// articles of the last two days in a news sitemap.
func (e *Encoder) SetNewsWindow(oldest, newest time.Time) {
	e.news = &newsWindow{oldest: oldest.UnixMicro(), newest: newest.Add(NewsSkew).UnixMicro()}
}

// appendNewsEntry appends the row's separate news entry for the loc at
// dst[locAt:locEnd], or nothing when the row has no valid news item in the
// window.
func (e *Encoder) appendNewsEntry(dst []byte, f *Fields, locAt, locEnd int) ([]byte, Warning) {
	mark := len(dst)
	dst = append(dst, "<url><loc>"...)
	dst = append(dst, dst[locAt:locEnd]...)
	dst = append(dst, "</loc>"...)
	at := len(dst)
	dst, w := e.appendNews(dst, f, 0)
	if len(dst) == at {
		return dst[:mark], w
	}
	return append(dst, "</url>\n"...), w
}

// hasNews reports whether f carries a value in a news column.
func hasNews(f *Fields) bool {
	for j, c := range f.Ext {
		if c.Kind >= ExtNewsName && c.Kind <= ExtNewsTitle && j < len(f.ExtVals) && len(trimWhite(f.ExtVals[j])) > 0 {
			return true
		}
	}
	return false
}

// appendNews appends the row's <news:news>, or nothing with NewsInvalid
// when a required part is missing or bad (or NewsExpired, NewsFuture when
// its publication date is outside the Encoder's news window).
func (e *Encoder) appendNews(dst []byte, f *Fields, w Warning) ([]byte, Warning) {
	mark := len(dst)
	name, lang, date, title := first(f, ExtNewsName), first(f, ExtNewsLanguage), first(f, ExtNewsDate), first(f, ExtNewsTitle)
	if !validText(name, 1, -1) || !validText(title, 1, -1) || !validNewsLanguage(lang) || len(date) == 0 {
		return dst, w | NewsInvalid
	}
	dst = append(dst, "<news:news><news:publication><news:name>"...)
	dst = appendEscaped(dst, name)
	dst = append(dst, "</news:name><news:language>"...)
	for _, c := range lang {
		dst = append(dst, lower(c))
	}
	dst = append(dst, "</news:language></news:publication><news:publication_date>"...)
	var lw Warning
	var key int64
	if dst, key, lw = appendLastmodZone(dst, date, e.tz, &e.zone); lw != 0 {
		return dst[:mark], w | NewsInvalid
	}
	if n := e.news; n != nil {
		switch {
		case key < n.oldest:
			return dst[:mark], w | NewsExpired
		case key > n.newest:
			return dst[:mark], w | NewsFuture
		}
	}
	dst = append(dst, "</news:publication_date><news:title>"...)
	dst = appendEscaped(dst, title)
	return append(dst, "</news:title></news:news>"...), w
}

// validHreflang reports whether s is x-default or a BCP 47 tag of the form
// language[-script][-region]: a 2- or 3-letter language, a 4-letter
// script, a 2-letter or 3-digit region (case-insensitive).
func validHreflang(s string) bool {
	if strings.EqualFold(s, "x-default") {
		return true
	}
	part, rest, _ := strings.Cut(s, "-")
	if !alpha(part, 2, 3) {
		return false
	}
	if rest == "" {
		return s[len(s)-1] != '-'
	}
	part, rest, more := strings.Cut(rest, "-")
	if alpha(part, 4, 4) {
		if !more {
			return true
		}
		part, _, more = strings.Cut(rest, "-")
	}
	return !more && (alpha(part, 2, 2) || len(part) == 3 && digits(part))
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func alpha(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// validNewsLanguage reports whether s is an ISO 639 language code as
// sitemap-news.xsd allows it (2 or 3 letters, or zh-cn, zh-tw), in any case.
func validNewsLanguage(s []byte) bool {
	if len(s) == 5 {
		return equalFold(s, "zh-cn") || equalFold(s, "zh-tw")
	}
	return alpha(string(s), 2, 3)
}

// validText reports whether s is valid UTF-8 of at least lo and at most hi
// characters (hi < 0: no limit) that XML 1.0 can hold: no control
// characters other than tab, line feed and carriage return, no U+FFFE or
// U+FFFF.
func validText(s []byte, lo, hi int) bool {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size <= 1 || r == 0xFFFE || r == 0xFFFF || r >= 0x80 && r < 0xA0 {
			return false
		}
		i += size
		n++
	}
	return n >= lo && (hi < 0 || n <= hi)
}

// parseBool reads true/false, 1/0, yes/no, case-insensitively.
func parseBool(v []byte) (yes, ok bool) {
	for _, t := range [...]string{"true", "1", "yes"} {
		if equalFold(v, t) {
			return true, true
		}
	}
	for _, f := range [...]string{"false", "0", "no"} {
		if equalFold(v, f) {
			return false, true
		}
	}
	return false, false
}

// equalFold reports whether b equals the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(s) {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

// parseUint reads a decimal integer of at most 18 digits.
func parseUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// validRating reports whether v is a decimal from 0 to 5 ("4", "4.2", "5.0").
func validRating(v []byte) bool {
	i := 0
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	ip, frac := v[:i], v[i:]
	if len(ip) == 0 || len(ip) > 1 {
		return false
	}
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) == 1 {
			return false
		}
		for _, c := range frac[1:] {
			if !isDigit(c) {
				return false
			}
			if ip[0] == '5' && c != '0' {
				return false
			}
		}
	}
	return ip[0] <= '5'
}

// AppendPacked appends v to a packed list: its length as a uvarint, then
// its bytes. Readers pack list columns (Parquet LIST<STRING> images) into
// one field this way; NextPacked reads them back.
func AppendPacked(dst, v []byte) []byte {
	n := uint64(len(v))
	for n >= 0x80 {
		dst = append(dst, byte(n)|0x80)
		n >>= 7
	}
	dst = append(dst, byte(n))
	return append(dst, v...)
}

// NextPacked splits the first value off a packed list; ok is false when
// the list is malformed.
func NextPacked(list []byte) (v, rest []byte, ok bool) {
	var n uint64
	for i := 0; i < len(list) && i < 10; i++ {
		c := list[i]
		n |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			list = list[i+1:]
			if n > uint64(len(list)) {
				return nil, nil, false
			}
			return list[:n], list[n:], true
		}
	}
	return nil, nil, false
}
