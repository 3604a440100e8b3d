// Package check validates a published sitemap set, ours or anyone's: it
// walks a root sitemap or index file and every file it references, streaming
// each one through a byte-level tokenizer (encoding/xml's RawToken with an
// allocation-free fast path, see internal/xmlscan) in constant memory, and reports
// every problem with its file, line and value. The <url> entries of the shape
// generate writes are read straight from the tokenizer's window by a fast
// path that takes only entries the rules accept and leaves every other byte
// to them (see fast.go).
//
// It checks well-formedness; the rules of sitemap.xsd, siteindex.xsd and
// the image, video, news, mobile and xhtml:link extension schemas, written
// in Go (element order, required elements, attributes, enumerations, ranges,
// patterns, lastmod forms, loc length); the limits (URLs and uncompressed
// bytes per sitemap, entries per index, nesting depth); escaping and
// percent-encoding of locs; scope; missing and orphan files; and duplicate
// URLs across the whole set (see dupes.go for the memory-bounded method).
// The rules it shares with the encoder (loc normalisation, lastmod forms,
// changefreq, priority, scope) come from package encode.
package check

import (
	"fmt"
	"runtime"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
)

// Code names a kind of problem. The names are stable: reports use them.
type Code string

// Problems the sitemap schemas catch: a file with one of these fails
// xmllint against sitemap-combined.xsd or siteindex.xsd.
const (
	CodeNotWellFormed     Code = "not_well_formed"    // not XML, or not namespace-well-formed
	CodeWrongRoot         Code = "wrong_root"         // root is not urlset or sitemapindex in the sitemap namespace
	CodeUnexpectedElement Code = "unexpected_element" // element not allowed here (order, repetition, unknown)
	CodeMissingElement    Code = "missing_element"    // a required element is absent
	CodeUnknownExtension  Code = "unknown_extension"  // element of a namespace no loaded schema declares
	CodeUnexpectedText    Code = "unexpected_text"    // text where only elements may be
	CodeBadAttribute      Code = "bad_attribute"      // attribute not declared, missing or with a bad value
	CodeLocLength         Code = "loc_length"         // loc shorter than 12 or longer than 2048 characters
	CodeLastmodInvalid    Code = "lastmod_invalid"    // neither xsd:date nor xsd:dateTime
	CodeChangefreqInvalid Code = "changefreq_invalid" // not always hourly daily weekly monthly yearly never
	CodePriorityInvalid   Code = "priority_invalid"   // not a decimal from 0.0 to 1.0
	CodeInvalidValue      Code = "invalid_value"      // an extension element's value breaks its type
)

// Problems of the protocol and of the set that the schemas do not catch.
const (
	CodeLastmodNotW3C  Code = "lastmod_not_w3c"     // valid for the XSD but not W3C Datetime as written (no zone, no seconds...)
	CodeUnencoded      Code = "unencoded_character" // a loc byte that must be percent-encoded
	CodeNotUTF8        Code = "not_utf8"            // the file declares an encoding other than UTF-8
	CodeTooManyURLs    Code = "too_many_urls"       // more URLs in a sitemap than the limit
	CodeTooManyBytes   Code = "too_many_bytes"      // sitemap larger than the limit, uncompressed
	CodeTooManyEntries Code = "too_many_entries"    // more entries in an index than the limit
	CodeTooManyNews    Code = "too_many_news"       // more than MaxNewsURLs news items in a sitemap
	CodeTooDeep        Code = "too_deep"            // indexes nested deeper than the limit
	CodeMissingFile    Code = "missing_file"        // a referenced file does not exist
	CodeListedTwice    Code = "listed_twice"        // a file referenced more than once (or a cycle)
	CodeNotMapped      Code = "loc_not_mapped"      // an index loc is not a file under the public URL
	CodeOrphan         Code = "orphan_file"         // a sitemap file in the folder that nothing references
	CodeGzip           Code = "bad_gzip"            // a .gz name holding no gzip, or a corrupt stream
	CodeUnreadable     Code = "unreadable"          // an I/O error other than a missing file
	CodeDuplicateURL   Code = "duplicate_url"       // the same URL listed twice in the set
	CodeTooLarge       Code = "too_large"           // past MaxFileBytes (or one XML token past 1 MiB): reading stopped
	CodeTooNested      Code = "too_nested"          // elements nested deeper than 256: reading stopped
	CodeNotRegular     Code = "not_regular_file"    // a FIFO, device, folder or symlink leaving the folder: not read
	CodeRedirect       Code = "bad_redirect"        // HTTP: a redirect loop, too many, or to another host or folder
	CodeNotXML         Code = "not_xml"             // HTTP: an HTML page (a soft 404) or other non-XML body
	CodeNoSitemap      Code = "no_sitemap"          // a robots.txt with no Sitemap: line
)

// MaxNewsURLs is the most news items Google reads in one news sitemap.
const MaxNewsURLs = protocol.MaxNewsURLs

// Codes of loc problems are the encoder's rejection reasons:
// "not_http_url", "bad_host", "bad_port", "userinfo", "out_of_scope",
// "loc_too_long", "invalid_utf8", "control_character", "empty_loc".
func reasonCode(r encode.Reason) Code { return Code(r.String()) }

// Schema reports whether the problem is one the XSDs catch, that is, one
// xmllint reports too.
func (c Code) Schema() bool {
	switch c {
	case CodeNotWellFormed, CodeWrongRoot, CodeUnexpectedElement, CodeMissingElement, CodeUnknownExtension,
		CodeUnexpectedText, CodeBadAttribute, CodeLocLength, CodeLastmodInvalid, CodeChangefreqInvalid,
		CodePriorityInvalid, CodeInvalidValue:
		return true
	}
	return false
}

// Problem is one thing wrong with the set.
type Problem struct {
	File    string `json:"file"`            // name relative to the set's folder
	Line    int    `json:"line,omitempty"`  // 1-based; 0 when it concerns the whole file
	Code    Code   `json:"code"`            // what kind of problem
	Message string `json:"message"`         // what is wrong, for people
	Value   string `json:"value,omitempty"` // the offending value, cut to 200 bytes
}

// String formats the problem as one line: FILE:LINE: CODE: MESSAGE: "VALUE".
func (p Problem) String() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
	}
	s += ": " + string(p.Code) + ": " + p.Message
	if p.Value != "" {
		s += fmt.Sprintf(": %q", p.Value)
	}
	return s
}

// Limits are the thresholds of the protocol checks.
type Limits struct {
	MaxURLs    int // URLs per sitemap
	MaxBytes   int // uncompressed bytes per sitemap, whole file
	MaxEntries int // entries per index
	MaxDepth   int // index levels above a sitemap (1: the root index lists sitemaps)
}

// Our limits (what generate writes by default) and the protocol's.
var (
	Ours = Limits{MaxURLs: protocol.MaxURLs, MaxBytes: protocol.DefaultMaxBytes, MaxEntries: protocol.DefaultFanout,
		MaxDepth: protocol.MaxIndexDepth}
	Protocol = Limits{MaxURLs: protocol.MaxURLs, MaxBytes: protocol.MaxFileBytes, MaxEntries: protocol.MaxIndexEntries,
		MaxDepth: protocol.MaxIndexDepth}
)

// Options configure a check.
type Options struct {
	Limits
	// PublicURL is the folder URL the set is served from: index <loc>s under
	// it name files relative to the folder. When nil it is the folder of the
	// first <loc> the root index lists.
	PublicURL *encode.Scope
	// Scope is the URL prefix every listed URL must fall under. When nil it
	// is each sitemap's own folder (the protocol's rule); a root sitemap
	// with neither PublicURL nor Scope has no known folder and no scope check.
	Scope *encode.Scope
	// SkipOrphans leaves out the orphan check: generate --verify runs before
	// the files of the previous set are pruned, and a single file given on
	// its own is a check of that file, not of its folder. Orphans are only
	// looked for in a listable folder whose root is NAME.xml, among the
	// names generate gives NAME's files (see orphans in walk.go).
	SkipOrphans bool
	// NoFollow checks the root alone: an index's entries are not walked.
	NoFollow bool
	// SkipReciprocity leaves out the hreflang checks across pages (an
	// alternate's target listed, reciprocal, listing itself): generate
	// --verify reads only part of a set (files verified before are not read
	// again), and generate checks them itself over the whole export, across
	// groups and hosts. Each alternate's own form is still checked.
	SkipReciprocity bool
	// MaxProblems stops the check once that many problems are found (0: no limit).
	MaxProblems int
	// Workers is the number of files checked at once (0: GOMAXPROCS).
	Workers int
	// TempDir holds the sorted runs of URL fingerprints ("": os.TempDir()).
	TempDir string
	// RunRecords is the number of URL fingerprints a buffer holds before
	// it is sorted and spilled to TempDir as a run, while a second buffer
	// fills (0: 1<<19, two buffers of 16 MiB).
	RunRecords int

	general bool // tests: every entry through the tokenizer and the rules (no fast path)
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.RunRecords <= 0 {
		o.RunRecords = 1 << 19
	}
}

// Report is the outcome of a check.
type Report struct {
	Root string `json:"root"`
	// Location is where the root was read: its folder, S3 prefix or URL
	// with it (set by the caller: Set knows only the name in Files).
	Location          string       `json:"location,omitempty"`
	Sitemaps          int          `json:"sitemaps"`
	Indexes           int          `json:"indexes"`
	URLs              int64        `json:"urls"`
	BytesUncompressed int64        `json:"bytes_uncompressed"`
	Problems          int          `json:"problems"`
	ByCode            map[Code]int `json:"by_code"`
	Stopped           bool         `json:"stopped"` // MaxProblems reached: the check is incomplete
	List              []Problem    `json:"list"`
	// Leftovers are files named as this set's shards that nothing lists:
	// the uploads of a run that failed before its switch. The next
	// generate run deletes them; they are not problems of the live set.
	Leftovers []string       `json:"leftovers,omitempty"`
	Seconds   float64        `json:"seconds"`
	Limits    map[string]int `json:"limits"`
}

// OK reports whether the set has no problem.
func (r *Report) OK() bool { return r.Problems == 0 }
