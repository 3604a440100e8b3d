package hreflang

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"sync"

	"github.com/sitemapgen/sitemapgen/encode"
)

// Options tune a Checker. The zero value is ready to use.
type Options struct {
	// TempDir holds the sorted runs and the text log ("": os.TempDir()).
	TempDir string
	// RunRecords is the number of join records (32 bytes each) held in
	// memory before a sorted run is spilled; two such buffers exist at
	// once, one filling while the other is sorted and written
	// (0: 1<<19, so 2 × 16 MiB).
	RunRecords int
	// Normalize makes the Checker normalise every loc and href with the
	// encoder's rules (encode.Encoder.AppendLoc, any host) before using
	// it: set it when the URLs are the XML-decoded text read from a file
	// (validate). Leave it off when they are as the encoder wrote them,
	// already normalised and XML-escaped (generate, AddEntry). A URL that
	// does not normalise is skipped (Counts.Skipped); the parser reports
	// it on its own.
	Normalize bool
}

// Link is one hreflang alternate of a page: <xhtml:link rel="alternate"
// hreflang="Hreflang" href="Href"/>.
type Link struct {
	Hreflang, Href []byte
}

// Page is one <url> of the set: its loc and its hreflang alternates (media
// alternates without hreflang are not part of the check). Ref is the
// caller's reference to where the page is (validate: file and line;
// generate: the row), given back in each of its problems.
type Page struct {
	Loc   []byte
	Links []Link
	Ref   uint64
}

// Checker finds, across a whole sitemap set, the hreflang alternates
// Google ignores: links the target does not return (NotReciprocal), pages
// with alternates that do not list themselves (MissingSelf) and links to
// URLs the set does not list (TargetMissing). Every page of the set is
// added, with or without alternates (a target must be a page of the set);
// then Finish reports the problems in the order the pages were added.
// Add and AddEntry are safe for concurrent use; Finish and Close are
// called once, after the last Add.
type Checker struct {
	mu     sync.Mutex
	opt    Options
	seed0  maphash.Seed
	seed1  maphash.Seed
	enc    *encode.Encoder // Normalize
	norm   []byte          // the normalised URLs of the page being added
	normAt []int
	links  []Link // the links parsed from an entry
	nlinks []Link // the links normalised
	join   *sorter[joinRec]
	probs  *sorter[probRec]
	log    *os.File
	logw   *bufio.Writer
	logBuf []byte
	seq    uint64 // pages with links so far
	counts Counts
	err    error
	done   bool
}

// New returns a Checker. Its files are created in opt.TempDir when first
// needed and removed by Finish or Close.
func New(opt Options) *Checker {
	if opt.RunRecords <= 0 {
		opt.RunRecords = 1 << 19
	}
	c := &Checker{opt: opt, seed0: maphash.MakeSeed(), seed1: maphash.MakeSeed()}
	c.join = newSorter(opt.TempDir, "join", opt.RunRecords, cmpJoin, putJoin, getJoin)
	c.probs = newSorter(opt.TempDir, "problems", max(opt.RunRecords/4, 1024), cmpProb, putProb, getProb)
	if opt.Normalize {
		c.enc = encode.NewEncoder(nil, nil)
	}
	return c
}

// fp returns the 128-bit fingerprint of a normalised URL.
func (c *Checker) fp(u []byte) (uint64, uint64) {
	return maphash.Bytes(c.seed0, u), maphash.Bytes(c.seed1, u)
}

// ErrFinished is returned by an Add after Finish or Close.
var ErrFinished = errors.New("hreflang check: already finished")

// Add records one page of the set. The page's slices are not retained.
func (c *Checker) Add(p *Page) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.add(p.Loc, p.Links, p.Ref)
}

// AddEntry records the page of one <url> entry as encode.Encoder.AppendURL
// writes it: its <loc> and its <xhtml:link rel="alternate" hreflang=…
// href=…/> links, as written (the encoder has normalised them; Normalize
// must be off). It does not allocate.
func (c *Checker) AddEntry(entry []byte, ref uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	loc, links, ok := parseEntry(entry, c.links[:0])
	c.links = links[:0]
	if !ok {
		return fmt.Errorf("hreflang check: not an encoded <url> entry: %.80q", entry)
	}
	return c.add(loc, links, ref)
}

// Fingerprint returns the 128-bit fingerprint the Checker gives a URL as
// it uses it: with Normalize, the encoder's normalised form
// (encode.Encoder.AppendLoc, any host). A caller that fingerprints the
// set's URLs anyway (validate's duplicate check) uses it to add the pages
// without alternates later, with AddPageFingerprint.
func (c *Checker) Fingerprint(u []byte) (uint64, uint64) { return c.fp(u) }

// AddPageFingerprint records a page without alternates by the Fingerprint
// of its loc. Such pages matter only as the targets of other pages'
// alternates, so a caller that knows the set has no alternate at all
// need not add them. A page added both ways counts once as a target.
func (c *Checker) AddPageFingerprint(x0, x1 uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return ErrFinished
	}
	if c.err != nil {
		return c.err
	}
	c.counts.Pages++
	if err := c.join.add(mkJoin(kindPage, x0, x1, 0, 0)); err != nil {
		return c.fail(err)
	}
	return nil
}

func (c *Checker) add(loc []byte, links []Link, ref uint64) error {
	if c.done {
		return ErrFinished
	}
	if c.err != nil {
		return c.err
	}
	if c.enc != nil {
		var ok bool
		if loc, links, ok = c.normalize(loc, links); !ok {
			return nil
		}
	}
	if len(loc) == 0 {
		return nil
	}
	c.counts.Pages++
	x0, x1 := c.fp(loc)
	page := mkJoin(kindPage, x0, x1, 0, 0)
	if len(links) > 0 {
		page.y = pageHasLinks
	}
	if err := c.join.add(page); err != nil {
		return c.fail(err)
	}
	if len(links) == 0 {
		return nil
	}
	if c.seq == maxPages {
		return c.fail(errors.New("hreflang check: too many pages with alternates"))
	}
	if len(links) > maxLinks-1 {
		c.counts.Skipped += int64(len(links) - (maxLinks - 1))
		links = links[:maxLinks-1]
	}
	seq := c.seq
	c.seq++
	c.counts.PagesWithLinks++
	c.counts.Links += int64(len(links))
	self := false
	for i, l := range links {
		if bytes.Equal(l.Href, loc) {
			self = true // a self link needs no return: it is its own
			continue
		}
		t0, t1 := c.fp(l.Href)
		if err := c.join.add(mkJoin(kindEdge, x0, x1, t0, 0)); err != nil {
			return c.fail(err)
		}
		if err := c.join.add(mkJoin(kindNeed, t0, t1, x0, seq<<linkBits|uint64(i))); err != nil {
			return c.fail(err)
		}
	}
	if !self {
		c.counts.MissingSelf++
		if err := c.probs.add(probRec{pos: seq<<linkBits | selfLink, kind: byte(MissingSelf)}); err != nil {
			return c.fail(err)
		}
	}
	if c.log == nil {
		f, err := os.CreateTemp(c.opt.TempDir, "sitemapgen-hreflang-*.log")
		if err != nil {
			return c.fail(fmt.Errorf("hreflang check: %w", err))
		}
		os.Remove(f.Name()) // unlinked: the space is freed when f is closed, even after a crash
		c.log, c.logw = f, bufio.NewWriterSize(f, 256<<10)
	}
	c.logBuf = appendLogEntry(c.logBuf[:0], ref, loc, links)
	if _, err := c.logw.Write(c.logBuf); err != nil {
		return c.fail(fmt.Errorf("hreflang check: %w", err))
	}
	return nil
}

// normalize rewrites loc and the hrefs with the encoder's rules into
// c.norm; ok is false when the loc does not normalise (the page is
// skipped). Links whose href does not normalise are dropped.
func (c *Checker) normalize(loc []byte, links []Link) (_ []byte, _ []Link, ok bool) {
	c.norm, c.normAt = c.norm[:0], c.normAt[:0]
	var r encode.Reason
	if c.norm, r = c.enc.AppendLoc(c.norm, loc); r != encode.OK {
		c.counts.Skipped++
		return nil, nil, false
	}
	c.normAt = append(c.normAt, len(c.norm))
	out := c.nlinks[:0]
	for _, l := range links {
		if c.norm, r = c.enc.AppendLoc(c.norm, l.Href); r != encode.OK {
			c.counts.Skipped++
			continue
		}
		c.normAt = append(c.normAt, len(c.norm))
		out = append(out, Link{Hreflang: l.Hreflang})
	}
	for i := range out {
		out[i].Href = c.norm[c.normAt[i]:c.normAt[i+1]]
	}
	c.nlinks = out[:0]
	return c.norm[:c.normAt[0]], out, true
}

func (c *Checker) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	return c.err
}

// Finish finds the problems and calls fn with each, ordered by the page
// (in the order pages were added), then by the link's place in the page
// (a missing self link last); it stops at fn's first error and returns it.
// It returns the counts, complete when the error is nil, and releases the
// Checker's files.
func (c *Checker) Finish(fn func(*Problem) error) (Counts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.counts, ErrFinished
	}
	c.done = true
	defer c.release()
	if c.err != nil {
		return c.counts, c.err
	}
	if err := c.joinLinks(); err != nil {
		return c.counts, err
	}
	if err := c.report(fn); err != nil {
		return c.counts, err
	}
	return c.counts, nil
}

// joinLinks merges the join records and records a problem for every link
// whose target is not a page (TargetMissing) or does not link back
// (NotReciprocal).
func (c *Checker) joinLinks() error {
	var g struct {
		x0, x1          uint64
		page, pageLinks bool
		edge            bool
		edgeY           uint64
	}
	first := true
	return c.join.merge(func(r joinRec) error {
		if first || r.x0 != g.x0 || r.x1 != g.x1 {
			g.x0, g.x1, g.page, g.pageLinks, g.edge = r.x0, r.x1, false, false, false
			first = false
		}
		switch r.kind() {
		case kindPage:
			g.page = true
			g.pageLinks = g.pageLinks || r.y&pageHasLinks != 0
		case kindEdge:
			g.edge, g.edgeY = true, r.y
		case kindNeed:
			var p probRec
			switch {
			case !g.page:
				p = probRec{pos: r.pos(), kind: byte(TargetMissing)}
				c.counts.TargetMissing++
			case !g.edge || g.edgeY != r.y:
				p = probRec{pos: r.pos(), kind: byte(NotReciprocal)}
				if !g.pageLinks {
					p.kind |= probUnlinked
				}
				c.counts.NotReciprocal++
			default:
				return nil
			}
			return c.probs.add(p)
		}
		return nil
	})
}

// report reads the text log in step with the sorted problems and calls fn
// with each.
func (c *Checker) report(fn func(*Problem) error) error {
	if c.log == nil {
		return nil // no page has links: no problem
	}
	if err := c.logw.Flush(); err != nil {
		return fmt.Errorf("hreflang check: %w", err)
	}
	size, err := c.log.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("hreflang check: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(c.log, 0, size), 256<<10)
	var e logEntry
	read := uint64(0) // entries read: e is entry read-1
	var p Problem
	return c.probs.merge(func(pr probRec) error {
		seq, link := pr.pos>>linkBits, pr.pos&maxLinks
		for read <= seq {
			var err error
			if read < seq {
				err = skipLogEntry(r)
			} else {
				err = e.read(r)
			}
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("hreflang check: text log, page %d: %w", read, err)
			}
			read++
		}
		p = Problem{Kind: Kind(pr.kind &^ probUnlinked), TargetUnlinked: pr.kind&probUnlinked != 0, Ref: e.ref, Page: e.loc}
		switch {
		case link == selfLink:
			p.Target = e.loc
		case link < uint64(len(e.links)):
			p.Hreflang, p.Target = e.links[link].Hreflang, e.links[link].Href
		default:
			return fmt.Errorf("hreflang check: text log, page %d has no link %d: %w", seq, link, errLogCorrupt)
		}
		return fn(&p)
	})
}

// Close releases the Checker's files; Finish does so itself. It is safe to
// call more than once and after Finish.
func (c *Checker) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	c.release()
	return nil
}

func (c *Checker) release() {
	c.join.close()
	c.probs.close()
	if c.log != nil {
		c.log.Close()
		c.log, c.logw = nil, nil
	}
}

// parseEntry finds the loc and the hreflang links of an entry the encoder
// wrote, appending the links to links. In the encoder's output '<' and '"'
// occur only in markup (text and attribute values are escaped), so the
// markup can be found by searching.
func parseEntry(entry []byte, links []Link) (loc []byte, _ []Link, ok bool) {
	const linkTag = `<xhtml:link rel="alternate"`
	rest, ok := bytes.CutPrefix(entry, []byte("<url><loc>"))
	if !ok {
		return nil, links, false
	}
	end := bytes.Index(rest, []byte("</loc>"))
	if end < 0 {
		return nil, links, false
	}
	loc, rest = rest[:end], rest[end:]
	for {
		i := bytes.Index(rest, []byte(linkTag))
		if i < 0 {
			return loc, links, true
		}
		rest = rest[i+len(linkTag):]
		end := bytes.Index(rest, []byte("/>"))
		if end < 0 {
			return nil, links, false
		}
		attrs := rest[:end]
		rest = rest[end:]
		lang, href := attr(attrs, ` hreflang="`), attr(attrs, ` href="`)
		if len(lang) > 0 && len(href) > 0 {
			links = append(links, Link{Hreflang: lang, Href: href})
		}
	}
}

// attr returns the value of the attribute that starts with name (` name="`).
func attr(attrs []byte, name string) []byte {
	i := bytes.Index(attrs, []byte(name))
	if i < 0 {
		return nil
	}
	v := attrs[i+len(name):]
	if j := bytes.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return nil
}
