package check

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/gunzip"
	"github.com/sitemapgen/sitemapgen/internal/hreflang"
	"github.com/sitemapgen/sitemapgen/publish"
)

// checker is the state of one Set call.
type checker struct {
	opt    Options
	files  Files
	ctx    context.Context
	cancel context.CancelFunc
	dupes  *dupes
	// hreflang checks that alternates are reciprocal across the set.
	hreflang *hreflang.Checker
	hasLinks atomic.Bool // a page with hreflang alternates was seen
	rep      *Report

	mu       sync.Mutex
	problems []Problem
	names    []string        // file number -> name
	scopes   []*encode.Scope // file number -> scope of its URLs (nil: none)
	news     []bool          // file number -> a news sitemap (its fingerprints are apart)
	corrupt  []bool          // file number -> a damaged gzip stream (its URLs are not checked for repeats)
	listed   map[string]bool
	base     string // public folder URL, normalised; "" until known
	web      *HTTP  // names are absolute URLs

	// the work queue of referenced files
	qmu    sync.Mutex
	qcond  *sync.Cond
	queue  []task
	active int
}

// task is a file to check: name, index depth, and who listed it where.
type task struct {
	name   string
	depth  int
	parent string
	line   int
	loc    string
	robots bool // named by a robots.txt: its URLs may be anywhere on its host
}

// Set checks the sitemap set whose root file is root in files and returns
// the report. The error is for the check itself failing (the duplicate
// check's temporary files); problems with the set are in the report.
func Set(ctx context.Context, files Files, root string, opt Options) (*Report, error) {
	start := time.Now()
	opt.defaults()
	c := &checker{opt: opt, files: files, listed: map[string]bool{root: true}}
	c.ctx, c.cancel = context.WithCancel(ctx)
	defer c.cancel()
	c.qcond = sync.NewCond(&c.qmu)
	c.hreflang = hreflang.New(hreflang.Options{TempDir: opt.TempDir, Normalize: true})
	c.dupes = newDupes(opt.TempDir, opt.RunRecords, opt.Workers, c.hreflang.Fingerprint)
	defer c.hreflang.Close()
	c.rep = &Report{Root: root, ByCode: map[Code]int{}, Limits: map[string]int{
		"max_urls": opt.MaxURLs, "max_bytes": opt.MaxBytes, "max_entries": opt.MaxEntries, "max_depth": opt.MaxDepth}}
	if opt.PublicURL != nil {
		c.base = opt.PublicURL.String()
	}

	c.web, _ = files.(*HTTP)
	c.queue = []task{{name: root}}
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Go(c.work)
	}
	wg.Wait()

	var err error
	c.dupes.spill.stop() // no more records: the spiller has written its last run
	if c.ctx.Err() == nil {
		if !opt.SkipOrphans && !opt.NoFollow && c.web == nil && !isRobots(root) {
			c.orphans(root)
		}
		err = c.duplicates()
		if herr := c.reciprocity(); err == nil {
			err = herr
		}
	} else {
		c.dupes.close()
	}
	if ctx.Err() != nil && err == nil {
		err = ctx.Err()
	}
	rep := c.rep
	slices.SortStableFunc(c.problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	rep.List = c.problems
	if rep.List == nil {
		rep.List = []Problem{}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, err
}

// report records a problem, and stops the check at MaxProblems.
func (c *checker) report(p Problem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rep.Stopped {
		return
	}
	c.rep.Problems++
	c.rep.ByCode[p.Code]++
	c.problems = append(c.problems, p)
	if c.opt.MaxProblems > 0 && c.rep.Problems >= c.opt.MaxProblems {
		c.rep.Stopped = true
		c.cancel()
	}
}

// count counts n problems of code not listed one by one.
func (c *checker) count(code Code, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rep.Stopped {
		return
	}
	c.rep.Problems += n
	c.rep.ByCode[code] += n
	if c.opt.MaxProblems > 0 && c.rep.Problems >= c.opt.MaxProblems {
		c.rep.Stopped = true
		c.cancel()
	}
}

func (c *checker) scopeOf(file uint32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.scopes[file]; s != nil {
		return s.String()
	}
	return "the scope"
}

// work checks queued files until none is left and none is being checked.
func (c *checker) work() {
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && c.active > 0 && c.ctx.Err() == nil {
			c.qcond.Wait()
		}
		if len(c.queue) == 0 || c.ctx.Err() != nil {
			c.qcond.Broadcast()
			c.qmu.Unlock()
			return
		}
		t := c.queue[0]
		c.queue = c.queue[1:]
		c.active++
		c.qmu.Unlock()

		children := c.checkFile(t)

		c.qmu.Lock()
		c.queue = append(c.queue, children...)
		c.active--
		c.qcond.Broadcast()
		c.qmu.Unlock()
	}
}

// folderScope is the scope of the URLs of a file whose URL is fileURL:
// its folder, or its whole host when a robots.txt names it (the
// protocol's cross-submission).
func (c *checker) folderScope(fileURL string, robots bool) *encode.Scope {
	if c.opt.Scope != nil {
		return c.opt.Scope
	}
	if fileURL == "" {
		return nil
	}
	folder := fileURL[:strings.LastIndexByte(fileURL, '/')+1]
	if robots {
		if u, err := url.Parse(fileURL); err == nil {
			folder = u.Scheme + "://" + u.Host + "/"
		}
	}
	s, err := encode.ParseScope(folder)
	if err != nil {
		return nil
	}
	return s
}

// hostWideKey marks, in the context of an Open, a file a robots.txt vouches
// for: over HTTP its redirects may leave its folder, not its host.
type hostWideKey struct{}

// isRobots reports whether a root name is a robots.txt (ours is NAME-robots.txt).
func isRobots(name string) bool { return strings.HasSuffix(name, "robots.txt") }

// opened is what an HTTP body tells beyond its bytes.
type opened interface {
	URL() string             // where the file was read after redirects
	ContentEncoding() string // "gzip" when the body is gzip-encoded in transit
}

// checkFile checks one file and returns the files it references.
func (c *checker) checkFile(t task) []task {
	c.mu.Lock()
	num := uint32(len(c.names))
	c.names = append(c.names, t.name)
	c.scopes = append(c.scopes, nil)
	c.news = append(c.news, false)
	c.corrupt = append(c.corrupt, false)
	c.mu.Unlock()

	ctx := c.ctx
	if t.robots {
		ctx = context.WithValue(ctx, hostWideKey{}, true)
	}
	rc, err := c.files.Open(ctx, t.name)
	if err != nil {
		c.openError(t, err)
		return nil
	}
	defer rc.Close()
	if t.depth == 0 && t.parent == "" && isRobots(t.name) {
		var r io.Reader = rc
		if o, ok := rc.(opened); ok && o.ContentEncoding() == "gzip" {
			// Sent compressed in transit, as the sitemaps may be: robots
			// reads at most maxRobots of what it decodes.
			zr, err := gunzip.NewReader(bufio.NewReader(rc))
			if err != nil {
				c.report(Problem{File: t.name, Code: CodeGzip, Message: fmt.Sprintf("robots.txt: Content-Encoding gzip: %v", err)})
				return nil
			}
			defer zr.Close()
			r = zr
		}
		return c.robots(t, r)
	}
	fileURL, encoding := "", ""
	switch {
	case c.web != nil:
		fileURL = t.name
		if o, ok := rc.(opened); ok {
			fileURL, encoding = o.URL(), o.ContentEncoding()
		}
	default:
		c.mu.Lock()
		if c.base != "" {
			fileURL = c.base + t.name
		}
		c.mu.Unlock()
	}
	sc := c.folderScope(fileURL, t.robots)
	c.mu.Lock()
	c.scopes[num] = sc
	c.mu.Unlock()

	p := &parser{c: c, name: t.name, file: num, enc: encode.NewEncoder(sc, nil), rawEnc: encode.NewEncoder(nil, nil),
		encoding: encoding, general: c.opt.general}
	size := p.parse(c.ctx, rc)
	c.dupes.add(&p.batch)

	c.mu.Lock()
	c.news[num] = p.news
	c.corrupt[num] = p.corrupt
	c.rep.BytesUncompressed += size
	switch p.kind {
	case kindURLSet:
		c.rep.Sitemaps++
		c.rep.URLs += p.urls
	case kindIndex:
		c.rep.Indexes++
	}
	c.mu.Unlock()

	lim := c.opt.Limits
	if p.corrupt {
		lim = Limits{} // its counts may be the damage's: the one problem is bad_gzip
	}
	// --max-bytes is generate's per-sitemap bound; an index file is held to
	// the protocol's (past it reading stopped: too_large).
	if p.kind != kindIndex && lim.MaxBytes > 0 && size > int64(lim.MaxBytes) && !p.tooLarge {
		c.report(Problem{File: t.name, Code: CodeTooManyBytes,
			Message: fmt.Sprintf("%d bytes uncompressed, more than the limit of %d", size, lim.MaxBytes)})
	}
	if p.kind == kindURLSet && lim.MaxURLs > 0 && p.urls > int64(lim.MaxURLs) {
		c.report(Problem{File: t.name, Code: CodeTooManyURLs,
			Message: fmt.Sprintf("%d URLs, more than the limit of %d", p.urls, lim.MaxURLs)})
	}
	if p.kind == kindURLSet && p.newsN > MaxNewsURLs {
		c.report(Problem{File: t.name, Code: CodeTooManyNews,
			Message: fmt.Sprintf("%d <news:news> items, more than the %d Google reads in a news sitemap", p.newsN, MaxNewsURLs)})
	}
	if p.kind != kindIndex {
		return nil
	}
	if lim.MaxEntries > 0 && p.nentries > lim.MaxEntries {
		c.report(Problem{File: t.name, Code: CodeTooManyEntries,
			Message: fmt.Sprintf("%d entries, more than the limit of %d", p.nentries, lim.MaxEntries)})
	}
	if c.opt.NoFollow {
		return nil
	}
	if lim.MaxDepth > 0 && t.depth >= lim.MaxDepth {
		c.report(Problem{File: t.name, Code: CodeTooDeep,
			Message: fmt.Sprintf("index at nesting depth %d: its sitemaps would be %d index levels down, more than the limit of %d; not followed", t.depth, t.depth+1, lim.MaxDepth)})
		return nil
	}
	var children []task
	for _, e := range p.entries {
		// An index named by a robots.txt passes on its host-wide scope:
		// robots.txt vouches for its host, whatever index it names (our
		// robots lines name roots and intermediate indexes).
		if ch, ok := c.mapEntry(t, e, fileURL, false); ok {
			ch.robots = t.robots
			children = append(children, ch)
		}
	}
	return children
}

// openError reports a file that could not be opened: where it is listed
// when it is listed, else as the root.
func (c *checker) openError(t task, err error) {
	p := Problem{File: t.name, Code: CodeUnreadable, Message: err.Error()}
	if t.parent != "" {
		p.File, p.Line, p.Value = t.parent, t.line, t.loc
	}
	var redirect *RedirectError
	var notXML *NotXMLError
	switch {
	case c.ctx.Err() != nil:
		return
	case errors.As(err, &redirect):
		p.Code = CodeRedirect
	case errors.As(err, &notXML):
		p.Code = CodeNotXML
	case errors.Is(err, ErrNotRegular):
		p.Code = CodeNotRegular
	case errors.Is(err, fs.ErrNotExist):
		p.Code = CodeMissingFile
		switch {
		case t.parent == "":
			p.Message = "the root file does not exist"
		default:
			p.Message = "listed file " + t.name + " does not exist"
		}
		var st *StatusError
		if errors.As(err, &st) {
			p.Message += ": " + st.Error()
		}
	}
	c.report(p)
}

// maxRobots is the most of a robots.txt read (Google reads 500 KiB).
const maxRobots = 500 << 10

// robots reads the Sitemap: lines of a robots.txt; each is a root.
func (c *checker) robots(t task, r io.Reader) []task {
	lr := &io.LimitedReader{R: r, N: maxRobots}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), maxRobots)
	var children []task
	line, lines := 0, 0 // lines: Sitemap: lines
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a UTF-8 byte order mark, as Google reads it
		}
		key, val, ok := strings.Cut(text, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "sitemap") {
			continue
		}
		lines++
		loc := strings.TrimSpace(val)
		if i := strings.IndexByte(loc, '#'); i >= 0 && strings.Contains(loc[:i], " ") {
			loc = strings.TrimSpace(loc[:i]) // a trailing comment
		}
		e := entry{loc: loc, line: line}
		if !hasPrefixFold([]byte(loc), "http://") && !hasPrefixFold([]byte(loc), "https://") {
			c.report(Problem{File: t.name, Line: line, Code: reasonCode(encode.NotHTTP),
				Message: "a Sitemap: line must hold an absolute http or https URL", Value: loc})
			continue
		}
		if ch, ok := c.mapEntry(t, e, "", true); ok {
			children = append(children, ch)
		}
	}
	if err := sc.Err(); err != nil && c.ctx.Err() == nil {
		c.report(Problem{File: t.name, Code: CodeUnreadable, Message: fmt.Sprintf("robots.txt: %v", err)})
	}
	if lines == 0 {
		msg := "robots.txt has no Sitemap: line"
		if lr.N == 0 {
			msg += fmt.Sprintf(" in its first %d KiB (Google reads no further)", maxRobots>>10)
		}
		c.report(Problem{File: t.name, Code: CodeNoSitemap, Message: msg})
	}
	for i := range children {
		children[i].depth = 0
	}
	return children
}

// mapEntry turns an index entry (or a robots.txt line) into the task of
// checking the file it names. Over HTTP the name is the URL itself, on the
// host of the index that lists it; else it is the path under the public
// folder URL.
func (c *checker) mapEntry(t task, e entry, indexURL string, fromRobots bool) (task, bool) {
	norm, _ := encode.NewEncoder(nil, nil).AppendLoc(nil, []byte(e.loc))
	loc := strings.NewReplacer("&amp;", "&", "&apos;", "'").Replace(string(norm))
	if c.web != nil {
		u, err := url.Parse(loc)
		ok := err == nil && u.Fragment == "" && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
		if ok && !fromRobots {
			iu, err := url.Parse(indexURL)
			ok = err == nil && sameHost(iu, u)
		}
		if !ok {
			c.report(Problem{File: t.name, Line: e.line, Code: CodeNotMapped,
				Message: "loc is not a sitemap URL on the index's own host", Value: e.loc})
			return task{}, false
		}
		return task{name: loc, depth: t.depth + 1, parent: t.name, line: e.line, loc: e.loc, robots: fromRobots},
			c.claim(t, e, loc)
	}
	c.mu.Lock()
	if c.base == "" {
		c.base = loc[:strings.LastIndexByte(loc, '/')+1] // the first entry's folder
	}
	base := c.base
	c.mu.Unlock()

	rel, ok := strings.CutPrefix(loc, base)
	if ok {
		var err error
		rel, err = url.PathUnescape(rel)
		ok = err == nil && rel != "" && !strings.ContainsAny(rel, "?#\\") && path.Clean(rel) == rel &&
			!strings.HasPrefix(rel, "../") && rel != ".." && !strings.HasPrefix(rel, "/")
	}
	if !ok {
		c.report(Problem{File: t.name, Line: e.line, Code: CodeNotMapped,
			Message: "loc is not a file under the public URL " + base, Value: e.loc})
		return task{}, false
	}
	return task{name: rel, depth: t.depth + 1, parent: t.name, line: e.line, loc: e.loc, robots: fromRobots}, c.claim(t, e, rel)
}

// claim marks rel as listed, reporting a second listing.
func (c *checker) claim(t task, e entry, rel string) bool {
	c.mu.Lock()
	seen := c.listed[rel]
	c.listed[rel] = true
	c.mu.Unlock()
	if seen {
		c.report(Problem{File: t.name, Line: e.line, Code: CodeListedTwice,
			Message: rel + " is listed more than once in the set", Value: e.loc})
		return false
	}
	return true
}

// maxManifest bounds the bytes read of a manifest.
const maxManifest = 64 << 20

// orphans reports the files of this set's own stem (the root's name without
// .xml) in the folder that nothing lists and no kept generation of the
// manifest uses: exactly the names generate's publish.Layout gives the set's
// shards, intermediate indexes and news sitemaps, so other stems' sets (a
// root sitemap-2024.xml beside sitemap.xml) and unrelated files are not this
// set's. An unlisted shard is a leftover of a failed run, which the next run
// removes: Report.Leftovers, not a problem.
func (c *checker) orphans(root string) {
	stem, ok := strings.CutSuffix(root, ".xml")
	if !ok || strings.Contains(root, "/") || publish.ValidStem(stem) != nil {
		return // not a root of ours: no files of ours to look for
	}
	layout := publish.NewLayout(stem)
	names, err := c.files.List(c.ctx)
	if err != nil {
		c.report(Problem{File: c.rep.Root, Code: CodeUnreadable, Message: err.Error()})
		return
	}
	kept := map[string]bool{}
	if rc, err := c.files.Open(c.ctx, stem+".manifest.json"); err == nil {
		var m publish.Manifest
		err := json.NewDecoder(io.LimitReader(rc, maxManifest)).Decode(&m)
		rc.Close()
		if err != nil {
			c.report(Problem{File: stem + ".manifest.json", Code: CodeUnreadable, Message: fmt.Sprintf("manifest: %v", err)})
		}
		for _, f := range m.Files {
			kept[f.Name] = true
		}
		for _, g := range m.Previous {
			for _, f := range g.Files {
				kept[f.Name] = true
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		kind := layout.Kind(n)
		if kind != publish.ShardFile && kind != publish.IndexFile && kind != publish.NewsFile || kept[n] {
			continue
		}
		c.mu.Lock()
		listed := c.listed[n]
		if !listed && kind == publish.ShardFile {
			c.rep.Leftovers = append(c.rep.Leftovers, n)
		}
		c.mu.Unlock()
		if !listed && kind != publish.ShardFile {
			c.report(Problem{File: n, Code: CodeOrphan, Message: "a file of set " + stem + " that no index of the set lists and no kept generation of " + stem + ".manifest.json uses"})
		}
	}
}

// maxDupDetail bounds the duplicates listed one by one (the rest are counted).
const maxDupDetail = 100000

// duplicates merges the fingerprints and reports each URL listed again
// after its first place.
func (c *checker) duplicates() error {
	names := c.names
	listed := 0
	// The pages without alternates were not given to the hreflang check,
	// which needs them only as the targets of alternates: when the set has
	// any, every URL is handed over here, by its fingerprint.
	pages := c.hasLinks.Load()
	var herr error
	// A URL's places in order: file name, then position in the file.
	order := func(a, b record) int {
		return cmp.Or(cmp.Compare(names[a.file], names[b.file]), cmp.Compare(a.ord, b.ord))
	}
	earlier := func(a, b record) bool { return order(a, b) < 0 }
	err := c.dupes.groups(pages, earlier, func(g []record, extra int) {
		if pages && herr == nil {
			h, h2 := g[0].h, g[0].h2
			if c.news[g[0].file] {
				h, h2 = h^newsDomain, h2^newsDomain
			}
			herr = c.hreflang.AddPageFingerprint(h, h2)
		}
		// A damaged gzip stream's URLs may be the damage's (copies of
		// earlier ones, often): its one problem is bad_gzip.
		if g = slices.DeleteFunc(g, func(r record) bool { return c.corrupt[r.file] }); len(g) < 2 {
			return
		}
		slices.SortFunc(g, order)
		for _, r := range g[1:] {
			if listed >= maxDupDetail || c.ctx.Err() != nil {
				extra++
				continue
			}
			listed++
			c.report(Problem{File: names[r.file], Line: int(r.line), Code: CodeDuplicateURL,
				Message: fmt.Sprintf("URL already listed at %s:%d", names[g[0].file], g[0].line), Value: c.dupes.text(r, g[0])})
		}
		if extra > 0 {
			c.mu.Lock()
			c.rep.Problems += extra
			c.rep.ByCode[CodeDuplicateURL] += extra
			c.mu.Unlock()
		}
	})
	if err == nil && herr != nil {
		err = fmt.Errorf("hreflang check: %w", herr)
	}
	return err
}

// sameHost reports whether two URLs are on one host: same scheme, host
// (case-insensitive) and port, default ports normalised.
func sameHost(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
