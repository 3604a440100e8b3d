package check

import (
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
)

// checker is the state of one Set call.
type checker struct {
	opt    Options
	files  Files
	ctx    context.Context
	cancel context.CancelFunc
	dupes  *dupes
	rep    *Report

	mu       sync.Mutex
	problems []Problem
	names    []string        // file number -> name
	scopes   []*encode.Scope // file number -> scope of its URLs (nil: none)
	listed   map[string]bool
	base     string // public folder URL, normalised; "" until known

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
	c.dupes = newDupes(opt.TempDir, opt.RunRecords, opt.Workers)
	c.rep = &Report{Root: root, ByCode: map[Code]int{}, Limits: map[string]int{
		"max_urls": opt.MaxURLs, "max_bytes": opt.MaxBytes, "max_entries": opt.MaxEntries, "max_depth": opt.MaxDepth}}
	if opt.PublicURL != nil {
		c.base = opt.PublicURL.String()
	}

	c.queue = []task{{name: root}}
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Go(c.work)
	}
	wg.Wait()

	var err error
	if c.ctx.Err() == nil {
		if !opt.SkipOrphans {
			c.orphans()
		}
		err = c.duplicates()
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

// folderScope is the scope of the URLs of a file whose URL is fileURL.
func (c *checker) folderScope(fileURL string) *encode.Scope {
	if c.opt.Scope != nil {
		return c.opt.Scope
	}
	if fileURL == "" {
		return nil
	}
	s, err := encode.ParseScope(fileURL[:strings.LastIndexByte(fileURL, '/')+1])
	if err != nil {
		return nil
	}
	return s
}

// checkFile checks one file and returns the files it references.
func (c *checker) checkFile(t task) []task {
	c.mu.Lock()
	num := uint32(len(c.names))
	c.names = append(c.names, t.name)
	fileURL := ""
	if c.base != "" {
		fileURL = c.base + t.name
	}
	sc := c.folderScope(fileURL)
	c.scopes = append(c.scopes, sc)
	c.mu.Unlock()

	rc, err := c.files.Open(c.ctx, t.name)
	if err != nil {
		switch {
		case t.parent == "" && errors.Is(err, fs.ErrNotExist):
			c.report(Problem{File: t.name, Code: CodeMissingFile, Message: "the root file does not exist"})
		case errors.Is(err, fs.ErrNotExist):
			c.report(Problem{File: t.parent, Line: t.line, Code: CodeMissingFile, Message: "listed file " + t.name + " does not exist", Value: t.loc})
		case c.ctx.Err() == nil:
			c.report(Problem{File: t.name, Code: CodeUnreadable, Message: err.Error()})
		}
		return nil
	}
	defer rc.Close()
	p := &parser{c: c, name: t.name, file: num, enc: encode.NewEncoder(sc, nil), rawEnc: encode.NewEncoder(nil, nil),
		recs: make([]record, 0, 4096)}
	size := p.parse(c.ctx, rc)
	if len(p.recs) > 0 {
		c.dupes.add(p.recs)
	}

	c.mu.Lock()
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
	if lim.MaxBytes > 0 && size > int64(lim.MaxBytes) {
		c.report(Problem{File: t.name, Code: CodeTooManyBytes,
			Message: fmt.Sprintf("%d bytes uncompressed, more than the limit of %d", size, lim.MaxBytes)})
	}
	if p.kind == kindURLSet && lim.MaxURLs > 0 && p.urls > int64(lim.MaxURLs) {
		c.report(Problem{File: t.name, Code: CodeTooManyURLs,
			Message: fmt.Sprintf("%d URLs, more than the limit of %d", p.urls, lim.MaxURLs)})
	}
	if p.kind != kindIndex {
		return nil
	}
	if lim.MaxEntries > 0 && len(p.entries) > lim.MaxEntries {
		c.report(Problem{File: t.name, Code: CodeTooManyEntries,
			Message: fmt.Sprintf("%d entries, more than the limit of %d", len(p.entries), lim.MaxEntries)})
	}
	if lim.MaxDepth > 0 && t.depth >= lim.MaxDepth {
		c.report(Problem{File: t.name, Code: CodeTooDeep,
			Message: fmt.Sprintf("index at nesting depth %d: its sitemaps would be %d index levels down, more than the limit of %d; not followed", t.depth, t.depth+1, lim.MaxDepth)})
		return nil
	}
	var children []task
	for _, e := range p.entries {
		if ch, ok := c.mapEntry(t, e); ok {
			children = append(children, ch)
		}
	}
	return children
}

// mapEntry turns an index entry into the task of checking the file it names.
func (c *checker) mapEntry(t task, e entry) (task, bool) {
	norm, _ := encode.NewEncoder(nil, nil).AppendLoc(nil, []byte(e.loc))
	loc := strings.NewReplacer("&amp;", "&", "&apos;", "'").Replace(string(norm))
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
	return task{name: rel, depth: t.depth + 1, parent: t.name, line: e.line, loc: e.loc}, c.claim(t, e, rel)
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

// orphans reports sitemap files in the folder that nothing references.
func (c *checker) orphans() {
	names, err := c.files.List(c.ctx)
	if err != nil {
		c.report(Problem{File: c.rep.Root, Code: CodeUnreadable, Message: err.Error()})
		return
	}
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".xml") || strings.HasSuffix(n, ".xml.gz")) {
			continue
		}
		c.mu.Lock()
		listed := c.listed[n]
		c.mu.Unlock()
		if !listed {
			c.report(Problem{File: n, Code: CodeOrphan, Message: "sitemap file in the folder that no index of the set lists"})
		}
	}
}

// dup is a duplicate found by fingerprint, to confirm by reading the URLs.
type dup struct{ first, again record }

// maxDupDetail bounds the duplicates confirmed and listed one by one.
const maxDupDetail = 100000

// duplicates merges the fingerprints, reads back the URLs of the
// candidates, and reports each URL listed again after its first place.
func (c *checker) duplicates() error {
	var cands []dup
	names := c.names
	err := c.dupes.groups(func(g []record, extra int) {
		slices.SortFunc(g, func(a, b record) int {
			return cmp.Or(cmp.Compare(names[a.file], names[b.file]), cmp.Compare(a.ord, b.ord))
		})
		for _, r := range g[1:] {
			if len(cands) < maxDupDetail {
				cands = append(cands, dup{g[0], r})
			}
		}
		if extra > 0 {
			c.mu.Lock()
			c.rep.Problems += extra
			c.rep.ByCode[CodeDuplicateURL] += extra
			c.mu.Unlock()
		}
	})
	if err != nil || len(cands) == 0 {
		return err
	}
	want := map[uint32]map[uint32]string{}
	for _, d := range cands {
		for _, r := range []record{d.first, d.again} {
			if want[r.file] == nil {
				want[r.file] = map[uint32]string{}
			}
			want[r.file][r.ord] = ""
		}
	}
	for f, ords := range want {
		if err := c.readLocs(names[f], ords); err != nil {
			return err
		}
	}
	enc := encode.NewEncoder(nil, nil)
	for _, d := range cands {
		a, b := want[d.first.file][d.first.ord], want[d.again.file][d.again.ord]
		na, _ := enc.AppendLoc(nil, []byte(a))
		nb, _ := enc.AppendLoc(nil, []byte(b))
		if a == "" || string(na) != string(nb) {
			continue // a fingerprint collision
		}
		c.report(Problem{File: names[d.again.file], Line: int(d.again.line), Code: CodeDuplicateURL,
			Message: fmt.Sprintf("URL already listed at %s:%d", names[d.first.file], d.first.line), Value: b})
		if c.ctx.Err() != nil {
			break
		}
	}
	return nil
}

// readLocs reads back the <loc>s of the given URL ordinals of a sitemap.
func (c *checker) readLocs(name string, ords map[uint32]string) error {
	rc, err := c.files.Open(c.ctx, name)
	if err != nil {
		return fmt.Errorf("duplicate check: %w", err)
	}
	defer rc.Close()
	r, err := decompressed(rc)
	if err != nil {
		return fmt.Errorf("duplicate check: %s: %w", name, err)
	}
	t := newTokenizer(r, readLatin1)
	defer t.close()
	var ord uint32
	depth, inLoc := 0, false
	var text []byte
	for {
		err := t.next()
		if err == io.EOF {
			return nil
		}
		var syntax *xml.SyntaxError
		if errors.As(err, &syntax) {
			return nil // reported by the first pass, which read no URL past it either
		}
		if err != nil {
			return fmt.Errorf("duplicate check: %s: %w", name, err)
		}
		switch t.kind {
		case tokStart:
			depth++
			if depth == 2 && t.name.Local == "url" {
				ord++
			}
			inLoc = depth == 3 && t.name.Local == "loc"
			text = text[:0]
		case tokText:
			if inLoc && len(text) < maxText {
				text = append(text, t.data...)
			}
		case tokEnd:
			if inLoc {
				if _, ok := ords[ord]; ok {
					ords[ord] = string(trimXML(text))
				}
				inLoc = false
			}
			depth--
		}
	}
}
