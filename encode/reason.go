package encode

// Reason says why a row was rejected. The zero value means accepted.
type Reason uint8

// Rejection reasons. Their String forms are stable: reports and rejects files use them.
const (
	OK              Reason = iota
	EmptyLoc               // loc is empty
	InvalidUTF8            // loc is not valid UTF-8
	ControlChar            // loc holds U+0000–U+001F or U+007F
	NotHTTP                // loc is neither an absolute http(s) URL nor a path starting with '/'
	BadHost                // missing or malformed host, or an IDN host that does not convert to punycode
	BadPort                // port is not a number in 1..65535
	UserInfo               // loc carries user:password@
	OutOfScope             // scheme, host, port or path prefix differ from the scope
	TooLong                // loc is 2,048 characters or more after encoding
	EntryTooLarge          // the encoded entry cannot fit even an empty shard
	Duplicate              // --dedup: the same normalised loc came earlier in the input
	RecordTooLong          // the input record is over the reader's size limit, its loc is not: another field makes it long
	GroupEmpty             // --group-by: the row's group value is empty (a column) or its loc has no host (a path), and there is no --default-group
	GroupUnnameable        // --group-by: the row's group value cannot be part of a file name (see pipeline.GroupName)
	NumReasons
)

var reasonNames = [NumReasons]string{
	OK:              "ok",
	EmptyLoc:        "empty_loc",
	InvalidUTF8:     "invalid_utf8",
	ControlChar:     "control_character",
	NotHTTP:         "not_http_url",
	BadHost:         "bad_host",
	BadPort:         "bad_port",
	UserInfo:        "userinfo",
	OutOfScope:      "out_of_scope",
	TooLong:         "loc_too_long",
	EntryTooLarge:   "entry_too_large",
	Duplicate:       "duplicate",
	RecordTooLong:   "record_too_long",
	GroupEmpty:      "group_empty",
	GroupUnnameable: "group_unnameable",
}

// String returns the reason's stable snake_case name.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Warning is a set of problems with optional fields and extension elements;
// each one drops the field or element, not the row.
type Warning uint32

// Warnings, one bit each. Bit positions and names are stable: reports use
// the names, and new warnings are only ever added at the end.
const (
	LastmodInvalid    Warning = 1 << iota // not a date or datetime we can write, or an impossible one
	LastmodImprecise                      // YYYY or YYYY-MM: writing it would invent a day
	ChangefreqInvalid                     // not one of always hourly daily weekly monthly yearly never
	PriorityInvalid                       // not a decimal from 0.0 to 1.0

	HreflangInvalid        // an alternate's hreflang is not BCP 47 language[-script][-region] or x-default: link dropped
	AlternateInvalid       // an alternate's href is not an absolute http(s) URL: link dropped
	AlternateDuplicate     // a second alternate with the same hreflang in one row: dropped
	AlternateNotReciprocal // the row's alternates do not link to its own loc (Google ignores such a set): kept
	MediaAlternateInvalid  // the media alternate's href is not an absolute http(s) URL: link dropped
	MobileInvalid          // mobile is not true/false, 1/0 or yes/no: no marker
	ImageInvalid           // an image URL is not an absolute http(s) URL: image dropped
	ImageLimit             // more than 1,000 images: the rest dropped
	VideoInvalid           // a video lacks a valid thumbnail_loc, title or description, or both content_loc and player_loc: video dropped
	VideoDescriptionLong   // a video description over 2,048 characters: video dropped
	VideoFieldInvalid      // an optional video element is bad (duration outside 1..28,800 s, date, rating, ...): that element dropped
	VideoTagLimit          // more than 32 video tags: the rest dropped
	NewsInvalid            // news lacks a valid publication name, language, publication date (W3C Datetime) or title: news dropped
	NewsExpired            // news published before the news window (Encoder.SetNewsWindow): news dropped, URL kept
	NewsFuture             // news published after the news window's end plus NewsSkew: news dropped, URL kept
	LastmodNonexistent     // a zone-less wall time the zone skips (a daylight-saving gap): it names no instant, dropped

	NumWarnings = 20
)

var warningNames = [NumWarnings]string{
	"lastmod_invalid",
	"lastmod_imprecise",
	"changefreq_invalid",
	"priority_invalid",
	"hreflang_invalid",
	"alternate_invalid",
	"alternate_duplicate",
	"alternate_not_reciprocal",
	"media_alternate_invalid",
	"mobile_invalid",
	"image_invalid",
	"image_limit",
	"video_invalid",
	"video_description_too_long",
	"video_field_invalid",
	"video_tag_limit",
	"news_invalid",
	"news_expired",
	"news_future",
	"lastmod_nonexistent",
}

// WarningName returns the stable name of warning bit i (0 <= i < NumWarnings).
func WarningName(i int) string { return warningNames[i] }
