package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

const validateUsage = `Usage: sitemapgen validate [flags] ROOT...

Checks a published sitemap set: ROOT is a sitemap or index file (plain or
gzip), a folder holding NAME.xml, s3://bucket/prefix/ (holding NAME.xml) or
s3://bucket/prefix/FILE.xml, or the http:// or https:// URL of a sitemap, an
index or a robots.txt (each of its Sitemap: lines is a root). It walks ROOT
and every file it references and reports each problem on one line
(FILE:LINE: CODE: what: "value"), then a summary on stderr: XML
well-formedness, the rules of sitemap.xsd, siteindex.xsd and the image,
video, news, mobile and xhtml:link extension schemas, the limits, escaping,
scope, missing and orphan files, duplicate URLs across the set, and over
HTTP the status, redirects, encodings and soft 404s. No xmllint is needed.
Orphans are looked for only when ROOT is a folder or a set's root index
(NAME.xml beside NAME.manifest.json), among the file names of set NAME.
Several ROOTs (each host's folder of a --group-by host run: validate out/*/)
are checked one after the other, a summary each; --report then writes a JSON
array, one report per set. See docs/validate.md.

Exit status: 0 no problem in any set; 1 problems found (or a ROOT could not
be read); 2 usage error.

Flags:
`

type validateFlags struct {
	publicURL, scope, name, report, tmp string
	s3Endpoint                          string
	s3PathStyle                         bool
	maxURLs, maxBytes, maxEntries       int
	maxDepth, maxProblems, workers      int
	protocolMax, noFollow               bool
	httpConcurrency, httpRetries        int
	httpTimeout, httpDeadline           time.Duration
}

// httpBackoff is the first wait before an HTTP retry (tests shorten it).
var httpBackoff = time.Second

func newValidateFlags(stderr io.Writer) (*flag.FlagSet, *validateFlags) {
	f := &validateFlags{}
	fs := newFlagSet("validate", validateUsage, stderr)
	fs.StringVar(&f.publicURL, "public-url", "", "folder URL the set is served from; maps index <loc>s to files (default: the folder of the root index's first <loc>)")
	fs.StringVar(&f.scope, "scope", "", "URL prefix every listed page must fall under (default: each sitemap's own folder)")
	fs.StringVar(&f.name, "name", "sitemap", "root file name stem when ROOT is a folder: ROOT/NAME.xml")
	fs.StringVar(&f.report, "report", "", "write a JSON report to this file")
	fs.IntVar(&f.maxURLs, "max-urls", check.Ours.MaxURLs, "URLs per sitemap file")
	fs.IntVar(&f.maxBytes, "max-bytes", check.Ours.MaxBytes, "uncompressed bytes per sitemap file (index files: the protocol's 52428800)")
	fs.IntVar(&f.maxEntries, "index-fanout", check.Ours.MaxEntries, "entries per index file")
	fs.IntVar(&f.maxDepth, "max-depth", check.Ours.MaxDepth, "index levels above a sitemap")
	fs.BoolVar(&f.protocolMax, "protocol-max", false, fmt.Sprintf("use the protocol's limits (%d URLs, %d bytes, %d index entries) instead of ours", protocol.MaxURLs, protocol.MaxFileBytes, protocol.MaxIndexEntries))
	fs.IntVar(&f.maxProblems, "max-problems", 1000, "stop after this many problems (0: no limit)")
	fs.IntVar(&f.workers, "workers", 0, "files checked at once (default: all cores)")
	fs.StringVar(&f.tmp, "tmp", "", "folder for the duplicate check's temporary runs (default: the system's)")
	fs.BoolVar(&f.noFollow, "no-follow", false, "check ROOT alone: do not walk the files an index lists")
	fs.IntVar(&f.httpConcurrency, "http-concurrency", 4, "HTTP requests at once per host")
	fs.DurationVar(&f.httpTimeout, "http-timeout", 30*time.Second, "HTTP: the longest wait for a response or for each read of its body")
	fs.DurationVar(&f.httpDeadline, "http-deadline", 5*time.Minute, "HTTP: the longest time to read one file, retries included (a server that drips bytes never trips --http-timeout)")
	fs.IntVar(&f.httpRetries, "http-retries", 3, "HTTP: retries after a 5xx or 429 status, a network error or a timeout (backoff from 1s, Retry-After honoured up to 60s)")
	fs.StringVar(&f.s3Endpoint, "s3-endpoint", "", "endpoint URL of an S3-compatible store (default: AWS_ENDPOINT_URL or AWS)")
	fs.BoolVar(&f.s3PathStyle, "s3-path-style", false, "path-style S3 addressing (bucket in the path)")
	return fs, f
}

func validate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newValidateFlags(stderr)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "sitemapgen validate: give a ROOT")
		fmt.Fprintln(stderr, "Run 'sitemapgen help validate' for usage.")
		return exitUsage
	}
	// Every ROOT's flags and form are checked before any set is: a typo
	// in the third ROOT is a usage error, not a failure after two checks.
	roots := make([]validateRoot, len(pos))
	for i, arg := range pos {
		files, root, opt, err := f.options(ctx, arg)
		if isUsage(err) {
			fmt.Fprintf(stderr, "sitemapgen validate: %v\n", err)
			fmt.Fprintln(stderr, "Run 'sitemapgen help validate' for usage.")
			return exitUsage
		}
		roots[i] = validateRoot{arg: arg, files: files, root: root, opt: opt, err: err}
	}
	var reps []*check.Report
	ok, many := true, len(roots) > 1
	for _, r := range roots {
		if r.err != nil {
			// A ROOT that cannot be read fails the run; the others are
			// still checked (a nightly check of every host's set). The
			// report says so too: it is what fails the run.
			fmt.Fprintf(stderr, "sitemapgen validate: %v\n", r.err)
			ok = false
			p := check.Problem{File: r.arg, Code: check.CodeUnreadable, Message: r.err.Error()}
			reps = append(reps, &check.Report{Root: r.arg, Location: r.arg, Problems: 1,
				ByCode: map[check.Code]int{p.Code: 1}, List: []check.Problem{p}})
			continue
		}
		// A folder (or prefix) without NAME.xml that holds the sets of a
		// grouped run (NAME-GROUP.xml beside NAME-GROUP.manifest.json):
		// each is checked, its orphans among its own names only.
		sets := []string{r.root}
		if g := groupRoots(ctx, r.files, r.root, r.arg); len(g) > 0 {
			sets, many = g, true
			r.opt.SkipOrphans = false // every one is a set's root, beside its manifest
		}
		for _, root := range sets {
			rep, code := checkSet(ctx, r.files, root, r.opt, stdout, stderr)
			if ctx.Err() != nil {
				return exitFail // interrupted: checkSet said how far it got
			}
			if code != exitOK {
				ok = false
				continue
			}
			reps = append(reps, rep)
			ok = ok && rep.OK()
		}
	}
	if f.report != "" {
		var v any = reps // one report per set
		if !many && len(reps) == 1 {
			v = reps[0]
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err == nil {
			err = os.WriteFile(f.report, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "sitemapgen validate: --report: %v\n", err)
			return exitFail
		}
	}
	if !ok {
		return exitFail
	}
	return exitOK
}

// validateRoot is one ROOT of validate: where its files are, its root
// file, its options, or why it cannot be read.
type validateRoot struct {
	arg   string
	files check.Files
	root  string
	opt   check.Options
	err   error
}

// checkSet checks the set of root and prints its problems and summary; a
// check that could not run returns exitFail.
func checkSet(ctx context.Context, files check.Files, root string, opt check.Options, stdout, stderr io.Writer) (*check.Report, int) {
	rep, err := check.Set(ctx, files, root, opt)
	if rep != nil {
		rep.Location = location(files.String(), rep.Root) // several sets share their root's name
	}
	if err != nil && ctx.Err() != nil {
		// A signal: say how far the check got, not "context canceled".
		for _, p := range rep.List {
			fmt.Fprintln(stdout, p)
		}
		fmt.Fprintf(stderr, "sitemapgen validate: interrupted after %.2fs, the check is incomplete: of %s, %d sitemaps, %d indexes, %d URLs, %d bytes uncompressed read to their end, %d problems so far\n",
			rep.Seconds, rep.Location, rep.Sitemaps, rep.Indexes, rep.URLs, rep.BytesUncompressed, rep.Problems)
		return rep, exitFail
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitemapgen validate: %v\n", err)
		return rep, exitFail
	}
	for _, p := range rep.List {
		fmt.Fprintln(stdout, p)
	}
	summarize(stderr, files.String(), rep)
	if n := len(rep.Leftovers); n > 0 {
		names := strings.Join(rep.Leftovers[:min(n, 5)], ", ")
		if n > 5 {
			names += ", …"
		}
		fmt.Fprintf(stderr, "warning: %d file(s) named as this set's sitemaps that nothing lists (a failed run's uploads; the next generate run deletes them): %s\n", n, names)
	}
	return rep, exitOK
}

// groupRoots returns the roots of the sets NAME-GROUP in files when ROOT
// is a folder or prefix that holds no NAME.xml (root) but such sets; nil
// otherwise.
func groupRoots(ctx context.Context, files check.Files, root, rootArg string) []string {
	if strings.HasPrefix(rootArg, "http://") || strings.HasPrefix(rootArg, "https://") || strings.HasSuffix(rootArg, ".xml") || strings.HasSuffix(rootArg, ".xml.gz") {
		return nil
	}
	if rc, err := files.Open(ctx, root); err == nil {
		rc.Close()
		return nil
	}
	names, err := files.List(ctx)
	if err != nil {
		return nil
	}
	stem := strings.TrimSuffix(root, ".xml")
	var roots []string
	for _, n := range names {
		set, ok := strings.CutSuffix(n, ".manifest.json")
		if ok && strings.HasPrefix(set, stem+"-") && slices.Contains(names, set+".xml") {
			roots = append(roots, set+".xml")
		}
	}
	slices.Sort(roots)
	return roots
}

// summarize prints the one-paragraph summary of a check.
func summarize(w io.Writer, where string, rep *check.Report) {
	verdict := "OK"
	if !rep.OK() {
		verdict = "FAIL"
	}
	root := location(where, rep.Root)
	fmt.Fprintf(w, "%s %s: %d sitemaps, %d indexes, %d URLs, %d bytes uncompressed, %d problems",
		verdict, root, rep.Sitemaps, rep.Indexes, rep.URLs, rep.BytesUncompressed, rep.Problems)
	if len(rep.ByCode) > 0 {
		codes := make([]string, 0, len(rep.ByCode))
		for c, n := range rep.ByCode {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(codes)
		fmt.Fprintf(w, " (%s)", strings.Join(codes, ", "))
	}
	if rep.Stopped {
		fmt.Fprintf(w, "; stopped at --max-problems, the check is incomplete")
	}
	fmt.Fprintf(w, "; %.2fs\n", rep.Seconds)
}

// location names the root file in where it lives: a folder, or a URL
// prefix such as s3://bucket/prefix/ (which filepath.Join would clean to
// "s3:/bucket...").
func location(where, root string) string {
	switch {
	case where == "":
		return root
	case strings.Contains(where, "://"):
		return strings.TrimSuffix(where, "/") + "/" + root
	}
	return filepath.Join(where, root)
}

// options turns the flags and ROOT into what check.Set needs.
func (f *validateFlags) options(ctx context.Context, rootArg string) (check.Files, string, check.Options, error) {
	var opt check.Options
	opt.Limits = check.Limits{MaxURLs: f.maxURLs, MaxBytes: f.maxBytes, MaxEntries: f.maxEntries, MaxDepth: f.maxDepth}
	if f.protocolMax {
		opt.Limits = check.Protocol
		opt.MaxDepth = f.maxDepth
	}
	if opt.MaxURLs < 1 || opt.MaxBytes < 1 || opt.MaxEntries < 1 || opt.MaxDepth < 1 || f.maxProblems < 0 {
		return nil, "", opt, usageError{errors.New("limits must be positive")}
	}
	opt.MaxProblems, opt.Workers, opt.TempDir, opt.NoFollow = f.maxProblems, f.workers, f.tmp, f.noFollow
	if err := publish.ValidStem(f.name); err != nil {
		return nil, "", opt, usageError{fmt.Errorf("--name: %w", err)}
	}
	var err error
	if f.publicURL != "" {
		if opt.PublicURL, err = urlFlag("public-url", f.publicURL); err != nil {
			return nil, "", opt, err
		}
	}
	if f.scope != "" {
		if opt.Scope, err = urlFlag("scope", f.scope); err != nil {
			return nil, "", opt, err
		}
	}
	if strings.HasPrefix(rootArg, "http://") || strings.HasPrefix(rootArg, "https://") {
		if f.httpConcurrency < 1 || f.httpTimeout <= 0 || f.httpDeadline <= 0 || f.httpRetries < 0 {
			return nil, "", opt, usageError{errors.New("--http-concurrency, --http-timeout and --http-deadline must be positive, --http-retries 0 or more")}
		}
		if u, err := url.Parse(rootArg); err != nil || u.Host == "" {
			return nil, "", opt, usageError{fmt.Errorf("ROOT %q: not a URL", rootArg)}
		}
		retries := f.httpRetries
		if retries == 0 {
			retries = -1 // check.HTTP's zero is its default
		}
		opt.SkipOrphans = true // a web server lists no folder
		return &check.HTTP{
			UserAgent:   "sitemapgen/" + versionString() + " (+https://github.com/sitemapgen/sitemapgen)",
			Concurrency: f.httpConcurrency, Timeout: f.httpTimeout, Deadline: f.httpDeadline, Retries: retries, Backoff: httpBackoff,
		}, rootArg, opt, nil
	}
	if strings.HasPrefix(rootArg, "s3://") {
		// s3://bucket/prefix/ holds NAME.xml; s3://bucket/prefix/file.xml is the root itself.
		root := f.name + ".xml"
		if dir, file, ok := cutLast(rootArg); ok && (strings.HasSuffix(file, ".xml") || strings.HasSuffix(file, ".xml.gz")) {
			rootArg, root = dir, file
		}
		bucket, prefix, err := sink.ParseS3URL(rootArg)
		if err != nil {
			return nil, "", opt, usageError{fmt.Errorf("ROOT: %w", err)}
		}
		s, err := sink.NewS3(ctx, sink.S3Options{Bucket: bucket, Prefix: prefix, Endpoint: f.s3Endpoint, PathStyle: f.s3PathStyle})
		if err != nil {
			return nil, "", opt, err
		}
		files := check.SinkFiles{Sink: s}
		opt.SkipOrphans = !setRoot(ctx, files, root)
		return files, root, opt, nil
	}
	// A link given as ROOT is what the user names: check what it points at.
	if target, err := filepath.EvalSymlinks(rootArg); err == nil {
		rootArg = target
	}
	fi, err := os.Stat(rootArg)
	if err != nil {
		return nil, "", opt, fmt.Errorf("ROOT: %w", err)
	}
	if fi.IsDir() {
		return check.Dir(rootArg), f.name + ".xml", opt, nil
	}
	files, root := check.Dir(filepath.Dir(rootArg)), filepath.Base(rootArg)
	opt.SkipOrphans = !setRoot(ctx, files, root)
	return files, root, opt, nil
}

// setRoot reports whether a file given as ROOT is the root index of a set
// of ours, NAME.xml beside NAME.manifest.json: then its folder is checked
// for orphans of set NAME. Any other single file is a check of that file
// and of what it references, not of its folder.
func setRoot(ctx context.Context, files check.Files, root string) bool {
	stem, ok := strings.CutSuffix(root, ".xml")
	if !ok {
		return false
	}
	rc, err := files.Open(ctx, stem+".manifest.json")
	if err != nil {
		return false
	}
	rc.Close()
	return true
}

// errVerify reports a written set that validate finds problems in.
var errVerify = errors.New("the written set has problems; the root index was not published")

// verifier returns the pipeline's Verify hook for generate --verify: it
// checks the set in files as it will be once the root is published, with
// the run's limits. Duplicate URLs are logged, not fatal: generate keeps
// every accepted row, so duplicates come from the input. Old files about to
// be pruned are not orphans. hreflang reciprocity is not checked again:
// generate checked it over the whole export (warnings, as documented),
// while the check here reads one set, and not all of it.
//
// The files trusted says a --verify run checked, reused unchanged since
// (and checked at the destination), are not read again: the indexes that
// list them are, and every other file. Duplicates across the set are then
// looked for among the files read.
func verifier(files check.Files, cfg *pipeline.Config, log *slog.Logger) func(context.Context, string, map[string][]byte, func(string) bool) error {
	return func(ctx context.Context, root string, pending map[string][]byte, trusted func(string) bool) error {
		scope := cfg.Scope
		if scope == nil {
			scope = cfg.PublicURL
		}
		if trusted == nil {
			trusted = func(string) bool { return false }
		}
		tf := trustedFiles{check.WithFiles(files, pending), trusted}
		rep, err := check.Set(ctx, tf, root, check.Options{
			Limits:    check.Limits{MaxURLs: cfg.MaxURLs, MaxBytes: cfg.MaxBytes, MaxEntries: cfg.Fanout},
			PublicURL: cfg.PublicURL, Scope: scope, SkipOrphans: true, SkipReciprocity: true,
		})
		if err != nil {
			return err
		}
		var bad []string
		unread := 0
		for _, p := range rep.List {
			switch {
			case p.Code == check.CodeUnreadable && strings.HasSuffix(p.Message, errTrusted.Error()):
				unread++
			case p.Code != check.CodeDuplicateURL:
				bad = append(bad, p.String())
			}
		}
		if dups := rep.ByCode[check.CodeDuplicateURL]; dups > 0 {
			log.Warn("verify: the input holds duplicate URLs", "duplicates", dups)
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w:\n%s", errVerify, strings.Join(bad, "\n"))
		}
		log.Info("verify: the set is valid", "sitemaps", rep.Sitemaps, "indexes", rep.Indexes, "urls", rep.URLs,
			"verified_before", unread, "seconds", fmt.Sprintf("%.2f", rep.Seconds))
		return nil
	}
}

// errTrusted is what opening a trusted file gives the check: it is
// reported as unreadable with this message, which verifier sets aside.
var errTrusted = errors.New("verified by an earlier run and reused unchanged: not read again")

// trustedFiles are the files of a set in which those trusted reports are
// not read.
type trustedFiles struct {
	check.Files
	trusted func(name string) bool
}

func (f trustedFiles) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if f.trusted(name) {
		return nil, errTrusted
	}
	return f.Files.Open(ctx, name)
}

// cutLast splits an s3:// URL at its last '/': the prefix and the last element.
func cutLast(u string) (dir, file string, ok bool) {
	i := strings.LastIndexByte(u, '/')
	if i < len("s3://") {
		return "", "", false
	}
	return u[:i], u[i+1:], true
}
