package check

import (
	"bytes"
	"encoding/xml"
	"fmt"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/hreflang"
)

// The problems of the hreflang reciprocity check across the whole set
// (internal/hreflang, the code generate's report uses): Google ignores an
// alternate its target does not return, and asks every page to list itself.
const (
	CodeHreflangNotReciprocal Code = "hreflang_not_reciprocal" // the target does not link back to the page
	CodeHreflangMissingSelf   Code = "hreflang_missing_self"   // a page with alternates does not list itself
	CodeHreflangTargetMissing Code = "hreflang_target_missing" // an alternate names a URL the set does not list
)

var hreflangCodes = [...]Code{hreflang.NotReciprocal: CodeHreflangNotReciprocal,
	hreflang.MissingSelf: CodeHreflangMissingSelf, hreflang.TargetMissing: CodeHreflangTargetMissing}

// pageLinks collects the loc and the hreflang alternates of the <url>
// being parsed, in one reused buffer, for the reciprocity check.
type pageLinks struct {
	loc    []byte
	hasLoc bool
	buf    []byte // hreflang and href of each link, back to back
	ends   []int  // per link: end of hreflang, end of href in buf
	links  []hreflang.Link
}

func (pl *pageLinks) reset() {
	pl.loc, pl.hasLoc = pl.loc[:0], false
	pl.buf, pl.ends = pl.buf[:0], pl.ends[:0]
}

// link records an <xhtml:link> of the page when it is an hreflang
// alternate: rel="alternate" with an hreflang and an href.
func (pl *pageLinks) link(attrs []xml.Attr) {
	var rel, lang, href string
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "rel":
			rel = a.Value
		case "hreflang":
			lang = a.Value
		case "href":
			href = a.Value
		}
	}
	if lang == "" || href == "" || !bytes.Contains([]byte(" "+rel+" "), []byte(" alternate ")) {
		return
	}
	pl.buf = append(pl.buf, bytes.TrimSpace([]byte(lang))...)
	pl.ends = append(pl.ends, len(pl.buf))
	pl.buf = append(pl.buf, bytes.TrimSpace([]byte(href))...)
	pl.ends = append(pl.ends, len(pl.buf))
}

// add hands the page to the check; ref says where it is.
func (pl *pageLinks) add(c *hreflang.Checker, ref uint64) error {
	if !pl.hasLoc {
		return nil
	}
	pl.links = pl.links[:0]
	at := 0
	for i := 0; i < len(pl.ends); i += 2 {
		pl.links = append(pl.links, hreflang.Link{Hreflang: pl.buf[at:pl.ends[i]], Href: pl.buf[pl.ends[i]:pl.ends[i+1]]})
		at = pl.ends[i+1]
	}
	return c.Add(&hreflang.Page{Loc: pl.loc, Links: pl.links, Ref: ref})
}

// hreflangRef packs a file number and a line into a Page.Ref.
func hreflangRef(file uint32, line int) uint64 { return uint64(file)<<32 | uint64(uint32(line)) }

// reciprocity reports the problems of the hreflang check once every file
// has been read.
func (c *checker) reciprocity() error {
	if c.opt.SkipReciprocity {
		return nil
	}
	names := c.names
	// A target the check has not seen may be listed by another sitemap of
	// the site unless the whole set was walked from its index: a single
	// sitemap, or --no-follow, cannot tell a missing target.
	partial := c.rep.Indexes == 0 || c.opt.NoFollow
	_, err := c.hreflang.Finish(func(p *hreflang.Problem) error {
		if partial && p.Kind == hreflang.TargetMissing {
			return nil
		}
		code := hreflangCodes[p.Kind]
		file, line := names[p.Ref>>32], int(uint32(p.Ref))
		// The pages and targets are the sitemap's loc text: said as URLs,
		// as duplicate_url and generate's --hreflang-report say them.
		page, target := encode.AppendLocText(nil, p.Page), encode.AppendLocText(nil, p.Target)
		var msg string
		switch p.Kind {
		case hreflang.MissingSelf:
			msg = fmt.Sprintf("%s lists hreflang alternates but not itself: Google ignores the set", page)
		default:
			msg = fmt.Sprintf("%s: hreflang %q alternate %s: missing %s", page, p.Hreflang, target, p.Missing())
		}
		c.report(Problem{File: file, Line: line, Code: code, Message: msg, Value: string(target)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("hreflang check: %w", err)
	}
	return nil
}
