package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/indexnow"
	"github.com/sitemapgen/sitemapgen/internal/metrics"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/internal/runlog"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

const generateUsage = `Usage: sitemapgen generate [flags] INPUT...

Reads every INPUT in order and writes a sitemap set: gzip shards, index files,
the root index NAME.xml, NAME-robots.txt and NAME.manifest.json, to a local
folder or to s3://bucket/prefix. Unchanged shards are not written again; files
of the previous --keep-generations generations stay for crawlers.

INPUT is a .csv file (header row naming loc, lastmod, changefreq, priority in
any order; or no header when the first row is a URL), a .txt file (one URL per
line), either of them gzipped, a .parquet file, an Arrow IPC file (.arrow,
.feather) or stream (.arrows), a folder of Parquet/Arrow part files (Hive
key=value/ sub-folders included), a quoted glob ('exports/part-*.parquet'),
s3://bucket/key, s3://bucket/prefix/ or an s3:// glob (read with ranged GETs,
--s3-endpoint and --s3-path-style as for --out), or '-' for CSV on standard
input. Folders and globs are read in lexical path
order. See docs/inputs.md and, for extension columns, docs/extensions.md.

Exit status: 0 done; 1 failed (nothing new published); 2 usage error.
Output, report and rejects: docs/output.md; S3: docs/s3.md; every flag:
docs/flags.md (in the source tree).

Flags:
`

// generateFlags are the parsed flags of generate.
type generateFlags struct {
	publicURL, scope, out, name string
	report, rejects, lastmodTZ  string
	hreflangReport              string
	mediaQuery                  string
	maxURLs, maxBytes, fanout   int
	workers, gzipLevel          int
	verify                      bool
	columns                     [input.NumColumns]string

	s3Endpoint, cacheControl, maxShrink string
	lockTTL, lockWait                   time.Duration
	now, cut, tmp, ties                 string
	sort, dedup, schemaLocation         bool
	s3PathStyle, force, dryRun, reuse   bool
	requireSuccess                      bool
	s3PartSize, uploads, keepGens       int
	maxNewsURLs                         int
	newsWindow                          time.Duration
	logFormat                           string
	metricsPush, metricsFile            string

	indexNowKey, indexNowKeyFile          string
	indexNowEndpoint, indexNowKeyLocation string
	indexNowAll                           bool
	indexNowMax                           int
	notify                                *notifier // nil: IndexNow is off

	groupBy, defaultGroup string
	maxGroups             int
	made                  madeFolders // {group} in --out: the folders made
}

func newGenerateFlags(stderr io.Writer) (*flag.FlagSet, *generateFlags) {
	f := &generateFlags{}
	fs := newFlagSet("generate", generateUsage, stderr)
	fs.StringVar(&f.publicURL, "public-url", "", "folder URL the files will be served from; index <loc>s are built from it (required)")
	fs.StringVar(&f.scope, "scope", "", "URL prefix every listed page must fall under (default: --public-url)")
	fs.StringVar(&f.out, "out", "sitemaps", "output: a local folder or s3://bucket/prefix")
	fs.IntVar(&f.maxURLs, "max-urls", protocol.MaxURLs, fmt.Sprintf("URLs per sitemap file, 1..%d", protocol.MaxURLs))
	fs.IntVar(&f.maxBytes, "max-bytes", protocol.DefaultMaxBytes, fmt.Sprintf("uncompressed bytes per sitemap file, whole file, %d..%d", protocol.MinMaxBytes, protocol.MaxFileBytes))
	fs.IntVar(&f.fanout, "index-fanout", protocol.DefaultFanout, fmt.Sprintf("sitemaps per index file, 1..%d", protocol.MaxIndexEntries))
	fs.IntVar(&f.maxNewsURLs, "max-news-urls", pipeline.MaxNewsURLs, "URLs per news sitemap, 1..1000 (rows with news columns also go, without the news item, to the regular sitemaps)")
	fs.DurationVar(&f.newsWindow, "news-window", pipeline.DefaultNewsWindow, "news items published longer ago than this (against --now or the clock) are left out of the news sitemaps; the URL stays")
	fs.StringVar(&f.name, "name", "sitemap", "file name stem")
	fs.StringVar(&f.report, "report", "", "write a JSON run report to this file")
	fs.StringVar(&f.rejects, "rejects", "", "write every rejected row (source,row,reason,value) to this CSV file")
	fs.StringVar(&f.hreflangReport, "hreflang-report", "", "write every hreflang alternate Google would ignore across the set (page,hreflang,target,problem,missing) to this CSV file")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "encoding goroutines (0: one per core)")
	fs.IntVar(&f.gzipLevel, "gzip-level", 6, "gzip compression level, 1 (fastest) ..9 (smallest)")
	fs.StringVar(&f.lastmodTZ, "lastmod-tz", "UTC", "time zone (IANA name) of lastmod datetimes that carry none")
	fs.StringVar(&f.mediaQuery, "media-query", encode.DefaultMediaQuery, "media attribute of the xhtml:link written for a media-alternate column")
	fs.StringVar(&f.s3Endpoint, "s3-endpoint", "", "endpoint URL of an S3-compatible store (default: AWS_ENDPOINT_URL or AWS)")
	fs.BoolVar(&f.s3PathStyle, "s3-path-style", false, "path-style S3 addressing (bucket in the path), as most S3-compatible stores want")
	fs.BoolVar(&f.requireSuccess, "require-success", false, "refuse an input folder or s3:// prefix without a _SUCCESS marker (Spark and Hadoop write it last)")
	fs.IntVar(&f.s3PartSize, "s3-part-size", sink.DefaultPartSize>>20, "MiB: objects larger than this are uploaded in parts of this size (min 5)")
	fs.StringVar(&f.cacheControl, "cache-control", "public, max-age=3600", "Cache-Control header of every S3 object (empty: none)")
	fs.IntVar(&f.uploads, "uploads", 0, fmt.Sprintf("concurrent uploads, overlapping with generation (0: %d to S3, and up to %d more of sitemaps of at most %d KiB compressed; %d to a folder); a value given bounds small and large alike", sink.S3Connections, sink.S3SmallConnections, sink.SmallFile>>10, sink.LocalConnections))
	fs.IntVar(&f.keepGens, "keep-generations", 1, "earlier generations whose files stay after the switch (grace period for crawlers)")
	fs.StringVar(&f.maxShrink, "max-shrink", "50%", "refuse to publish when the URL count falls by more than this against the manifest")
	fs.BoolVar(&f.force, "force", false, "publish even when --max-shrink would refuse, or when --now (or the clock) is before the published manifest's time")
	fs.StringVar(&f.cut, "cut", "stable", "where shards end: stable (content-defined: the same URLs give the same shards night after night) or tight (packed to the limits)")
	fs.BoolVar(&f.sort, "sort", false, "order the URLs by their normalised loc before cutting (external sort in bounded memory), so an export in no stable order gives stable shards")
	fs.BoolVar(&f.dedup, "dedup", false, "keep one row of each normalised loc (the first in --ties order), reject the others as duplicate (implies --sort)")
	fs.StringVar(&f.ties, "ties", "content", "order of rows with equal locs under --sort, and so the row --dedup keeps: content (the newest lastmod, then the smallest entry: the output depends on the rows, not on their order) or input (input order: the first row)")
	fs.StringVar(&f.tmp, "tmp", "", "folder for --sort's sorted runs (default: the system's temporary folder)")
	fs.StringVar(&f.now, "now", "", "the run's time, RFC 3339 (default: the clock): the <lastmod> of changed files in the indexes; fix it for reproducible runs")
	fs.DurationVar(&f.lockWait, "lock-wait", 0, "when another run holds the destination's lock, wait this long for it to be released or to expire (0: fail at once); a retry after a killed run on S3 needs more than --lock-ttl")
	fs.DurationVar(&f.lockTTL, "lock-ttl", publish.DefaultLockTTL, "S3: how long the destination's lock outlives a run that died without releasing it (a live run renews it)")
	fs.BoolVar(&f.reuse, "reuse", true, "reuse a published sitemap whose XML and compressor are unchanged without compressing it again (false: compress every sitemap; the same bytes)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "do everything but write; the report's plan lists uploads, skips and deletions")
	fs.BoolVar(&f.schemaLocation, "schema-location", false, "declare xmlns:xsi and xsi:schemaLocation (sitemap.xsd, siteindex.xsd, each extension's schema) in every file; the bytes count in --max-bytes")
	fs.BoolVar(&f.verify, "verify", false, "validate the written set (as 'sitemapgen validate' does) before publishing the root index; fail on any problem")
	fs.StringVar(&f.logFormat, "log-format", "text", "log records on stderr as text (key=value) or json (one object per line); each carries run_id and generation")
	fs.StringVar(&f.metricsPush, "metrics-push", "", "at the end of the run push its metrics to this Prometheus Pushgateway URL (job sitemapgen, grouped by --name and --out; a failed run keeps the last success)")
	fs.StringVar(&f.metricsFile, "metrics-file", "", "at the end of the run write its metrics to this node_exporter textfile (.prom), atomically")
	fs.StringVar(&f.indexNowKey, "indexnow-key", "", "after a successful publish, post the URLs added, changed or removed since the previous generation to IndexNow with this key (8-128 of a-zA-Z0-9-)")
	fs.StringVar(&f.indexNowKeyFile, "indexnow-key-file", "", "read the IndexNow key from this file (instead of --indexnow-key)")
	fs.StringVar(&f.indexNowEndpoint, "indexnow-endpoint", indexnow.DefaultEndpoint, "IndexNow endpoint (the shared one passes submissions to every participating search engine)")
	fs.StringVar(&f.indexNowKeyLocation, "indexnow-key-location", "", "URL of the key file when it is not KEY.txt at the host's root; the scope must lie under its folder")
	fs.BoolVar(&f.indexNowAll, "indexnow-all", false, "on a first run (no previous generation), post every URL")
	fs.IntVar(&f.indexNowMax, "indexnow-max-urls", 200000, "the most URLs IndexNow reads back from the changed sitemaps and sends; a larger change is not sent")
	fs.StringVar(&f.groupBy, "group-by", "", "split the rows into sitemap sets, one per group: COLUMN (a CSV, Parquet or Arrow column) or host (the host of the loc; the scope must then hold {group}); group G's files are named NAME-G, or NAME in a folder of its own when --out holds {group} (see docs/groups.md)")
	fs.StringVar(&f.defaultGroup, "default-group", "", "--group-by: the group of rows whose group value is empty (default: they are rejected, group_empty)")
	fs.IntVar(&f.maxGroups, "max-groups", pipeline.DefaultMaxGroups, "--group-by: the most groups; more fail the run, nothing published")
	names := [input.CoreColumns]string{"loc", "lastmod", "changefreq", "priority"}
	for c, n := range names {
		fs.StringVar(&f.columns[c], n+"-column", n, "column name of the "+n+" field (CSV header, Parquet or Arrow column; a column holds one field)")
	}
	return fs, f
}

// parseInterspersed parses flags and positional arguments in any order, as
// users type them ("generate in.csv --public-url ..."); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func generate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, f := newGenerateFlags(stderr)
	inputs, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage // flag has printed the error and the usage
	}
	if slices.Contains(inputs, "-") {
		stdin = cancelable(ctx, stdin)
	}
	format, err := runlog.ParseFormat(f.logFormat)
	if err != nil {
		fmt.Fprintf(stderr, "sitemapgen generate: --log-format: %v\nRun 'sitemapgen help generate' for usage.\n", err)
		return exitUsage
	}
	runID := runlog.NewRun()
	log := runID.Logger(stderr, format)
	if format == runlog.JSON {
		defer runlog.CaptureStdLog(log)()
	}
	// fail says why the run stopped: the line people read, or, with
	// --log-format json, a record like every other line on stderr.
	fail := func(msg string, usage bool, hint ...string) {
		if format == runlog.JSON {
			args := []any{"usage", usage}
			if len(hint) > 0 {
				args = append(args, "hint", strings.Join(hint, " "))
			}
			log.Error(msg, args...)
			return
		}
		fmt.Fprintf(stderr, "sitemapgen generate: %s\n", msg)
		for _, h := range hint {
			fmt.Fprintln(stderr, h)
		}
		if usage && len(hint) == 0 {
			fmt.Fprintln(stderr, "Run 'sitemapgen help generate' for usage.")
		}
	}
	var reportFile *report
	if f.report != "" {
		// Open it first: a report path that cannot be written must fail the
		// run before anything is published, and every later failure, even
		// of the configuration, is reported in it. A usage error leaves it
		// as it was: a mistyped flag must not wipe last night's report.
		if reportFile, err = openReport(f.report); err != nil {
			fail(fmt.Sprintf("--report: %v", err), false)
			return exitFail
		}
	}
	cfg, closeOut, err := f.config(ctx, inputs, stdin, log)
	if err != nil {
		fail(err.Error(), isUsage(err))
		if isUsage(err) {
			reportFile.leave()
			return exitUsage
		}
		// A failed run leaves a rejects file that is a CSV, its header
		// and no row, as the pipeline does on every path of a run: not
		// the rows of the run before.
		if werr := f.rejectsHeader(); werr != nil && !isRejectsError(err, f.rejects) {
			log.Error("rejects", "err", werr)
		}
		rep := &runReport{Report: pipeline.NewReport(f.gzipLevel), RunID: runID.ID}
		rep.Error = err.Error()
		if werr := reportFile.write(rep); werr != nil {
			log.Error("report", "err", werr)
		}
		f.tellMetrics(ctx, log, rep, false)
		return exitFail
	}
	// The records of the run carry the generation it publishes. A manifest
	// that cannot be read fails the run in the pipeline, which says why.
	if cfg.Group != nil {
		// Each group has a generation of its own: the report says them.
	} else if m, _, err := publish.ReadManifest(ctx, cfg.Sink, publish.NewLayout(cfg.Name)); err == nil {
		var prev int64
		if m != nil {
			prev = m.Generation
		}
		runID.SetGeneration(prev + 1)
	}

	var stopProgress func()
	if fd, ok := stderr.(interface{ Fd() uintptr }); ok && format == runlog.Text && term.IsTerminal(int(fd.Fd())) {
		cfg.Progress = new(pipeline.Progress)
		stopProgress = showProgress(stderr, cfg.Progress, cfg.Remote)
	}
	prep, runErr := pipeline.Run(ctx, cfg)
	f.made.remove()
	if stopProgress != nil {
		stopProgress()
	}
	rep := &runReport{Report: prep, RunID: runID.ID}
	if runErr != nil && ctx.Err() != nil && !rep.Published {
		rep.Error = interrupted // as said on stderr, not "context canceled"
	}
	if rep.Generation != 0 {
		runID.SetGeneration(rep.Generation) // what was published, should another run have come between
	}
	if err := closeOut(); err != nil && runErr == nil {
		runErr = err
		rep.Error = err.Error()
	}
	// Telling IndexNow comes after the switch; its failure is not the run's.
	if f.notify != nil && runErr == nil && (rep.Published || rep.DryRun) {
		rep.IndexNow = f.notify.send(ctx)
	}
	// Usage errors found by the run (its time before the last run's, an
	// input given twice) leave the report and the metrics as they were.
	usage := errors.Is(runErr, publish.ErrNowBeforeLast) || errors.Is(runErr, input.ErrRepeatedInput) ||
		errors.Is(runErr, input.ErrSharedColumn)
	// Said last, whatever happens: metrics describe the run as it ended. A
	// dry run publishes nothing, so it tells them nothing either: it must
	// not stand for the last run, nor its time for the last success.
	if !usage && !rep.DryRun {
		defer func() { f.tellMetrics(ctx, log, rep, runErr == nil) }()
	}
	if usage {
		reportFile.leave()
	} else if err := reportFile.write(rep); err != nil {
		log.Error("report", "err", err)
		if runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		var hint []string
		if locked := (*sink.LockedError)(nil); errors.As(runErr, &locked) && locked.Note == "" {
			hint = append(hint, lockedHint(locked, f))
		}
		if errors.Is(runErr, pipeline.ErrNoURLs) && rep.Rejected.Total > 0 {
			hint = append(hint, noURLsHint(rep.Rejected.ByReason, f))
		}
		switch {
		case errors.Is(runErr, publish.ErrNowBeforeLast):
			if format == runlog.JSON {
				fail(runErr.Error(), true)
			} else { // its message says what to do: no usage line
				fmt.Fprintf(stderr, "sitemapgen generate: %v\n", runErr)
			}
			return exitUsage
		case errors.Is(runErr, input.ErrRepeatedInput), errors.Is(runErr, input.ErrSharedColumn):
			// Found only once the arguments are expanded or the columns
			// named (--lastmod-column LOC reads the column loc), but still a
			// usage error.
			fail(runErr.Error(), true)
			return exitUsage
		case rep.Published:
			fail(runErr.Error(), false, hint...)
		case ctx.Err() != nil:
			fail(interrupted, false, hint...)
		default:
			fail(runErr.Error()+"; the previous sitemap set is unchanged", false, hint...)
		}
		return exitFail
	}
	msg := "done"
	if rep.DryRun {
		msg = "dry run: nothing written"
		log.Info("plan", "upload", len(rep.Plan.Upload), "skip", len(rep.Plan.Skip), "delete", len(rep.Plan.Delete))
	}
	// A grouped run has a root a group: the report lists them.
	where := slog.String("root", rep.Root)
	if cfg.Group != nil {
		where = slog.Int("groups", len(rep.Groups))
	}
	log.Info(msg, "rows", rep.Rows, "urls", rep.URLs, "rejected", rep.Rejected.Total,
		"warnings", rep.Warnings.Total, "shards", rep.Shards, "indexes", rep.Indexes,
		"uploaded_shards", rep.Uploaded.Shards, "skipped_shards", rep.Skipped.Shards,
		"uploaded_bytes", rep.Uploaded.Bytes, "deleted", len(rep.Deleted),
		"seconds", math.Round(rep.Seconds*100)/100, where)
	if rep.Rejected.Total > 0 && f.rejects == "" {
		log.Warn("rows rejected: "+topReasons(rep.Rejected.ByReason, 3)+"; rerun with --rejects FILE to list each row with its reason",
			"rejected", rep.Rejected.Total)
	}
	// One write for all the lines: a grouped run has a line per group.
	var lines []byte
	for _, u := range rep.Submit {
		lines = append(append(append(lines, "Sitemap: "...), u...), '\n')
	}
	if _, err := stdout.Write(lines); err != nil && len(lines) > 0 {
		// The set is published: say so, but the exit stays 0.
		log.Warn("the robots lines were not written to standard output", "error", err)
	}
	return exitOK
}

// interrupted is what a run stopped by a signal before its switch says.
const interrupted = "interrupted; the previous sitemap set is unchanged"

// noURLsHint says why a run that accepted no row did so: its reject
// reasons, and for rows out of scope what the scope was and how to widen it
// (a --public-url in a folder scopes the pages to that folder).
func noURLsHint(rejected map[string]int64, f *generateFlags) string {
	hint := "rows rejected: " + topReasons(rejected, 3)
	if rejected[encode.OutOfScope.String()] > 0 {
		scope, from := f.scope, "--scope"
		if scope == "" {
			scope, from = f.publicURL, "the scope defaults to --public-url's folder"
		}
		hint += fmt.Sprintf("; every page must be under %s (%s): to list pages elsewhere on the host, give --scope with its root (e.g. https://HOST/), valid once robots.txt names the sitemaps", scope, from)
	}
	if f.rejects == "" {
		hint += "; rerun with --rejects FILE to list each row with its reason"
	}
	return hint
}

// topReasons says the n most frequent reasons with their counts, e.g.
// "out_of_scope 30, not_http 6".
func topReasons(by map[string]int64, n int) string {
	reasons := make([]string, 0, len(by))
	for r := range by {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if c := cmp.Compare(by[b], by[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, r := range reasons[:min(n, len(reasons))] {
		parts = append(parts, fmt.Sprintf("%s %d", r, by[r]))
	}
	if len(reasons) > n {
		parts = append(parts, "…")
	}
	return strings.Join(parts, ", ")
}

// config turns flags into a pipeline.Config. closeOut flushes and closes the
// rejects file.
func (f *generateFlags) config(ctx context.Context, inputs []string, stdin io.Reader, log *slog.Logger) (cfg pipeline.Config, closeOut func() error, err error) {
	closeOut = func() error { return nil }
	if len(inputs) == 0 {
		return cfg, closeOut, usageError{errors.New("no INPUT given")}
	}
	if f.publicURL == "" {
		return cfg, closeOut, usageError{errors.New("--public-url is required")}
	}
	pub, err := urlFlag("public-url", sampleGroup(f.publicURL))
	if err != nil {
		return cfg, closeOut, err
	}
	scope := pub
	if f.scope != "" {
		if scope, err = urlFlag("scope", sampleGroup(f.scope)); err != nil {
			return cfg, closeOut, err
		}
	}
	tz, err := time.LoadLocation(f.lastmodTZ)
	if err != nil {
		return cfg, closeOut, usageError{fmt.Errorf("--lastmod-tz: %w", err)}
	}
	shrink, err := parsePercent(f.maxShrink)
	if err != nil {
		return cfg, closeOut, usageError{fmt.Errorf("--max-shrink: %w", err)}
	}
	if err := checkColumnFlags(f.columns); err != nil {
		return cfg, closeOut, err
	}
	cfg = pipeline.Config{
		Inputs: inputs, Stdin: stdin, PublicURL: pub, Scope: scope, Name: f.name,
		MaxURLs: f.maxURLs, MaxBytes: f.maxBytes, Fanout: f.fanout,
		MaxNewsURLs: f.maxNewsURLs, NewsWindow: f.newsWindow,
		Workers: f.workers, GzipLevel: f.gzipLevel, LastmodTZ: tz, Columns: f.columns, Log: log,
		MediaQuery: f.mediaQuery, SchemaLocation: f.schemaLocation,
		KeepGenerations: f.keepGens, MaxShrink: shrink, Force: f.force, DryRun: f.dryRun, Uploads: f.uploads,
		CompressAll: !f.reuse, LockTTL: f.lockTTL, LockWait: f.lockWait, Sort: f.sort || f.dedup, Dedup: f.dedup, TmpDir: f.tmp,
		Remote: &input.Remote{
			S3:             s3obj.Options{Endpoint: f.s3Endpoint, PathStyle: f.s3PathStyle},
			RequireSuccess: f.requireSuccess,
			Log:            log,
		},
	}
	if cfg.Cut, err = shard.ParseCutMode(f.cut); err != nil {
		return cfg, closeOut, usageError{fmt.Errorf("--cut: %w", err)}
	}
	switch f.ties {
	case "content":
		cfg.Ties = pipeline.TieContent
	case "input":
		cfg.Ties = pipeline.TieInput
	default:
		return cfg, closeOut, usageError{fmt.Errorf("--ties %q: use content or input", f.ties)}
	}
	if f.now != "" {
		if cfg.Now, err = time.Parse(time.RFC3339, f.now); err != nil {
			return cfg, closeOut, usageError{fmt.Errorf("--now: %w", err)}
		}
		if cfg.Now.IsZero() {
			// The run would read it as "not set" and take the clock.
			return cfg, closeOut, usageError{fmt.Errorf("--now %s: the zero time is not a run's time; leave --now out to use the clock", f.now)}
		}
	}
	if f.tmp != "" {
		// Found now, not at the first spill a few hundred thousand rows in.
		if err := writableDir(f.tmp); err != nil {
			return cfg, closeOut, usageError{fmt.Errorf("--tmp: %w", err)}
		}
	}
	// pipeline.Config's zero means its default; these flags' zero is a
	// value, and not one they take. The ranges are Config.Validate's.
	switch {
	case f.maxNewsURLs == 0:
		return cfg, closeOut, usageError{fmt.Errorf("--max-news-urls 0: must be 1..%d", pipeline.MaxNewsURLs)}
	case f.newsWindow == 0:
		return cfg, closeOut, usageError{errors.New("--news-window 0s: must be positive")}
	case f.lockTTL == 0:
		return cfg, closeOut, usageError{errors.New("--lock-ttl 0s: must be at least 1s")}
	case f.s3PartSize < 5:
		return cfg, closeOut, usageError{fmt.Errorf("--s3-part-size %d: must be at least 5 (MiB)", f.s3PartSize)}
	}
	if err := cfg.Validate(); err != nil {
		var ce *pipeline.ConfigError
		if errors.As(err, &ce) && configFlags[ce.Field] != "" {
			err = fmt.Errorf("--%s %v: %s", configFlags[ce.Field], ce.Value, ce.Rule)
		}
		return cfg, closeOut, usageError{err}
	}
	if f.out == "" {
		return cfg, closeOut, usageError{errors.New("--out is empty: name a folder or s3://bucket/prefix")}
	}
	if f.metricsPush != "" {
		if u, err := url.Parse(f.metricsPush); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, closeOut, usageError{fmt.Errorf("--metrics-push %q: want the Pushgateway's http(s) URL", f.metricsPush)}
		}
	}
	if f.notify, err = f.newNotifier(&cfg, log); err != nil {
		return cfg, closeOut, err
	}
	// The grouping flags are checked before the destination is made: a
	// usage error leaves no folder behind.
	if err := f.grouping(ctx, &cfg, log); err != nil {
		return cfg, closeOut, err
	}
	if !strings.Contains(f.out, groupPlaceholder) {
		if cfg.Sink, err = f.newSink(ctx, f.out); err != nil {
			return cfg, closeOut, err
		}
		if f.verify {
			cfg.Verify = verifier(check.SinkFiles{Sink: cfg.Sink}, &cfg, log)
		}
	}
	if f.notify != nil {
		if cfg.DryRun && cfg.Sink != nil {
			// The change is read back from the sitemaps the dry run would
			// write: it holds them (the pipeline uses this decorator, and
			// hands it to Switched as the set's store).
			d := sink.NewDryRun(cfg.Sink)
			d.Keep(dryRunKept(cfg.Name, f.groupBy != ""), dryRunKeep)
			cfg.Sink = d
		}
		cfg.Switched = f.notify.switched
	}
	if f.rejects != "" {
		rf, err := os.Create(f.rejects)
		if err != nil {
			return cfg, closeOut, fmt.Errorf("--rejects: %w", err)
		}
		cfg.Rejects = rf // the pipeline buffers and flushes it before publishing
		closeOut = func() error {
			if err := rf.Close(); err != nil {
				return fmt.Errorf("--rejects: %w", err)
			}
			return nil
		}
	}
	if f.hreflangReport != "" {
		hf, err := os.Create(f.hreflangReport)
		if err != nil {
			closeOut()
			return cfg, func() error { return nil }, fmt.Errorf("--hreflang-report: %w", err)
		}
		cfg.HreflangReport = hf // written and flushed before publishing
		closeRejects := closeOut
		closeOut = func() error {
			err := closeRejects()
			if cerr := hf.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("--hreflang-report: %w", cerr)
			}
			return err
		}
	}
	return cfg, closeOut, nil
}

// rejectsHeader writes the --rejects file of a run that failed before it
// started: the header alone.
func (f *generateFlags) rejectsHeader() error {
	if f.rejects == "" {
		return nil
	}
	err := os.WriteFile(f.rejects, []byte(pipeline.RejectsHeader(f.groupBy != "")), 0o666)
	if err != nil {
		return fmt.Errorf("--rejects: %w", err)
	}
	return nil
}

// isRejectsError reports whether err is the failure to create the rejects
// file path, said already.
func isRejectsError(err error, path string) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == path
}

// newSink returns the destination out names: a folder or s3://bucket/prefix.
func (f *generateFlags) newSink(ctx context.Context, out string) (sink.Store, error) {
	if !strings.HasPrefix(out, "s3://") {
		return sink.NewLocal(out)
	}
	bucket, prefix, err := sink.ParseS3URL(out)
	if err != nil {
		return nil, usageError{fmt.Errorf("--out: %w", err)}
	}
	return sink.NewS3(ctx, sink.S3Options{
		Bucket: bucket, Prefix: prefix, Endpoint: f.s3Endpoint, PathStyle: f.s3PathStyle,
		CacheControl: f.cacheControl, PartSize: int64(f.s3PartSize) << 20,
	})
}

// checkColumnFlags refuses two of --loc-column, --lastmod-column,
// --changefreq-column and --priority-column naming one column (a flag's
// name, or the default of one not given: --lastmod-column loc): one field
// would be read from the column that holds the other, and its own column
// ignored. Names that differ in case only are found in the input, where a
// column may match both (input.SharedColumnError).
func checkColumnFlags(cols [input.NumColumns]string) error {
	name := func(c input.Column) string {
		if n := strings.TrimSpace(cols[c]); n != "" {
			return n
		}
		return input.DefaultNames[c]
	}
	for c := range input.CoreColumns {
		for d := c + 1; d < input.CoreColumns; d++ {
			if name(c) == name(d) {
				return usageError{fmt.Errorf("--%s-column and --%s-column both name the column %q; a column holds one field: map each to a column of its own (the defaults are loc, lastmod, changefreq and priority)",
					input.FieldName(c), input.FieldName(d), name(c))}
			}
		}
	}
	return nil
}

// parsePercent reads "50%" or "50" as 0.5.
func parsePercent(s string) (float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || v > 100 {
		return 0, fmt.Errorf("%q: want a percentage from 0%% to 100%%", s)
	}
	if !pct && v > 0 && v < 1 {
		// A fraction (0.7 for 70%) or a small percentage? Say which.
		return 0, fmt.Errorf("%q: write %g%% or %s%%", s, v*100, num)
	}
	return v / 100, nil
}

// runReport is the --report JSON: the pipeline's report and what the
// command adds to it.
type runReport struct {
	*pipeline.Report
	RunID    string           `json:"run_id"`             // as the run's log records carry it
	IndexNow *indexnow.Result `json:"indexnow,omitempty"` // --indexnow-key: what was sent
}

// tellMetrics pushes and writes the run's metrics, if asked. Their failure
// is logged, never the run's: the set is published or not already.
func (f *generateFlags) tellMetrics(ctx context.Context, log *slog.Logger, rep *runReport, ok bool) {
	if f.metricsPush == "" && f.metricsFile == "" {
		return
	}
	m := metrics.Run{Name: f.name, Destination: f.out, Report: rep.Report, OK: ok, End: time.Now()}
	if f.notify != nil {
		m.Notified = map[string]int64{}
		if r := rep.IndexNow; r != nil {
			m.Notified = map[string]int64{"sent": int64(r.Sent), "accepted": int64(r.Accepted), "failed": int64(r.Failed)}
			m.NotifyFailed = r.FailedByStatus
		}
	}
	if f.metricsPush != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := metrics.Push(ctx, f.metricsPush, m, nil); err != nil {
			log.Warn("metrics not pushed", "err", err)
		}
	}
	if f.metricsFile != "" {
		if err := metrics.WriteFile(f.metricsFile, m); err != nil {
			log.Warn("metrics not written", "err", err)
		}
	}
}

// report is the --report file, opened before the run (nil: none asked for).
type report struct {
	f       *os.File
	created bool // it did not exist: leave removes it
}

// openReport opens the report file for writing without truncating it.
func openReport(path string) (*report, error) {
	_, err := os.Stat(path)
	created := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &report{f: f, created: created}, nil
}

// write replaces the file's content with rep.
func (r *report) write(rep *runReport) error {
	if r == nil {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = r.f.Truncate(0)
	}
	if err == nil {
		_, err = r.f.WriteAt(append(b, '\n'), 0)
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

// leave closes the file as it was, and removes it if the run made it.
func (r *report) leave() {
	if r == nil {
		return
	}
	r.f.Close()
	if r.created {
		os.Remove(r.f.Name())
	}
}

// showProgress redraws one status line on a terminal every second until the
// returned function is called.
func showProgress(w io.Writer, p *pipeline.Progress, remote *input.Remote) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				rows := p.Rows.Load()
				rate := float64(rows) / time.Since(start).Seconds()
				fetched := ""
				if st := remote.Fetched(); st.Requests > 0 {
					fetched = fmt.Sprintf("  fetched %.1f MiB", float64(st.Bytes)/(1<<20))
				}
				fmt.Fprintf(w, "\r\033[Krows %d  urls %d  rejected %d  shards %d  %.0f rows/s%s",
					rows, p.URLs.Load(), p.Rejected.Load(), p.Shards.Load(), rate, fetched)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// printDefaults lists the flags the way the contract spells them: --name.
func printDefaults(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		line += "\n    \t" + usage
		if f.DefValue != "" && f.DefValue != "0" {
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintln(fs.Output(), line)
	})
}

// cancelable returns a reader of r whose Read returns as soon as ctx is done.
// A read from a terminal or a pipe can block for ever; without this an
// interrupted run waiting for standard input would never stop.
func cancelable(ctx context.Context, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	return pr
}

// urlFlag parses the value of the URL flag --name as a folder URL (a scope),
// or returns a usage error naming the flag, not "scope".
func urlFlag(name, value string) (*encode.Scope, error) {
	s, err := encode.ParseScope(value)
	var se *encode.ScopeError
	if errors.As(err, &se) {
		return nil, usageError{fmt.Errorf("--%s %q: %s", name, se.URL, se.Why)}
	}
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s: %w", name, err)}
	}
	return s, nil
}

// writableDir checks that dir is a folder a file can be created in.
func writableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	f, err := os.CreateTemp(dir, ".sitemapgen-probe-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create files in it: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// configFlags names the flag of each pipeline.Config field it sets.
var configFlags = map[string]string{
	"MaxURLs": "max-urls", "MaxBytes": "max-bytes", "Fanout": "index-fanout", "MaxNewsURLs": "max-news-urls",
	"NewsWindow": "news-window", "GzipLevel": "gzip-level", "KeepGenerations": "keep-generations",
	"MaxShrink": "max-shrink", "Uploads": "uploads", "Workers": "workers", "LockTTL": "lock-ttl", "LockWait": "lock-wait",
	"MediaQuery": "media-query",
}

// dryRunKept returns which files a dry run holds for IndexNow to read the
// changed URLs back: the shards of set name, or with groups those of every
// group's set (NAME-GROUP). News sitemaps are not held: their URLs are in
// the shards too.
func dryRunKept(name string, grouped bool) func(string) bool {
	if !grouped {
		return publish.NewLayout(name).IsShard
	}
	return func(file string) bool {
		if !strings.HasPrefix(file, name+"-") {
			return false
		}
		// A shard is STEM-NUMBER-SUM.xml.gz: its stem is what comes before
		// the last two dashes (a group's name may hold dashes).
		i := strings.LastIndexByte(file, '-')
		if i < 0 {
			return false
		}
		j := strings.LastIndexByte(file[:i], '-')
		return j >= 0 && publish.NewLayout(file[:j]).IsShard(file)
	}
}
