package hreflang

import (
	"encoding/csv"
	"io"
	"strconv"
)

// Kind is a kind of hreflang problem.
type Kind uint8

// The problems a Checker finds. Their String forms are stable: reports and
// the CSV use them (validate prefixes them with "hreflang_").
const (
	// NotReciprocal: the page links to the target, a page of the set, and
	// the target does not link back to the page (under any hreflang).
	NotReciprocal Kind = 1 + iota
	// MissingSelf: the page lists hreflang alternates but not itself.
	MissingSelf
	// TargetMissing: the page links to a URL that is not a page of the set.
	TargetMissing
)

var kindNames = [...]string{NotReciprocal: "not_reciprocal", MissingSelf: "missing_self", TargetMissing: "target_missing"}

// String returns the problem's stable name: not_reciprocal, missing_self
// or target_missing.
func (k Kind) String() string {
	if k >= NotReciprocal && k <= TargetMissing {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Problem is one link Google would ignore, or one missing self link.
// The byte slices are valid only during the callback that receives it.
type Problem struct {
	Kind Kind
	// Ref is the Page.Ref (or AddEntry ref) of the page.
	Ref uint64
	// Page is the loc of the page that makes the link.
	Page []byte
	// Hreflang and Target are the link's hreflang and href. For
	// MissingSelf, Hreflang is empty and Target is the page itself.
	Hreflang, Target []byte
	// TargetUnlinked is set on NotReciprocal when the target lists no
	// hreflang alternates at all.
	TargetUnlinked bool
}

// Missing says what is missing, for people: the link back, the self link,
// or the target page.
func (p *Problem) Missing() string {
	switch p.Kind {
	case NotReciprocal:
		if p.TargetUnlinked {
			return "a link from the target back to the page (the target lists no alternates)"
		}
		return "a link from the target back to the page"
	case MissingSelf:
		return "a link from the page to itself"
	case TargetMissing:
		return "the target as a page of the set"
	}
	return ""
}

// Counts sums up a check.
type Counts struct {
	Pages          int64 // pages added
	PagesWithLinks int64 // pages that list at least one hreflang alternate
	Links          int64 // hreflang alternates checked, self links included
	NotReciprocal  int64 // links the target does not return
	MissingSelf    int64 // pages with alternates that do not list themselves
	TargetMissing  int64 // links to URLs the set does not list
	// Skipped counts URLs left out of the check: with Options.Normalize, a
	// loc (its page, then) or href that is not a valid absolute http(s)
	// URL; and links beyond 16,777,215 on one page.
	Skipped int64
}

// Problems returns the number of problems found.
func (c Counts) Problems() int64 { return c.NotReciprocal + c.MissingSelf + c.TargetMissing }

// CSVHeader is the header row of the CSV a CSVWriter writes.
var CSVHeader = []string{"page", "hreflang", "target", "problem", "missing"}

// CSVWriter writes problems as CSV (generate's --hreflang-report): one row
// per problem, with the columns of CSVHeader. URLs are written with XML
// entities decoded (as a browser would request them).
type CSVWriter struct {
	w   *csv.Writer
	row [5]string
}

// NewCSVWriter returns a CSVWriter on w that has written the header row.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) {
	c := &CSVWriter{w: csv.NewWriter(w)}
	return c, c.w.Write(CSVHeader)
}

// Write writes one problem.
func (c *CSVWriter) Write(p *Problem) error {
	c.row = [5]string{unescape(p.Page), string(p.Hreflang), unescape(p.Target), p.Kind.String(), p.Missing()}
	return c.w.Write(c.row[:])
}

// Flush writes any buffered rows and returns the first error of the writer.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// unescape decodes the five XML entities the encoder writes in URLs.
func unescape(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '&' {
			if n, c := entity(b[i:]); n > 0 {
				out = append(out, c)
				i += n - 1
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

var entities = [...]struct {
	s string
	c byte
}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&#39;", '\''}, {"&#34;", '"'}}

func entity(b []byte) (int, byte) {
	for _, e := range entities {
		if len(b) >= len(e.s) && string(b[:len(e.s)]) == e.s {
			return len(e.s), e.c
		}
	}
	return 0, 0
}
