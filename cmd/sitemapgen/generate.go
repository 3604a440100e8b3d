package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/sink"
)

const generateUsage = `Usage: sitemapgen generate [flags] INPUT...

Reads every INPUT in order and writes a sitemap set: gzip shards, index files,
the root index NAME.xml and NAME-robots.txt.

INPUT is a .csv file (header row naming loc, lastmod, changefreq, priority in
any order; or no header when the first row is a URL), a .txt file (one URL per
line), either of them gzipped, or '-' for CSV on standard input.

Exit status: 0 done; 1 failed (nothing new published); 2 usage error.

Flags:
`

// generateFlags are the parsed flags of generate.
type generateFlags struct {
	publicURL, scope, out, name string
	report, rejects, lastmodTZ  string
	maxURLs, maxBytes, fanout   int
	workers, gzipLevel          int
	verify                      bool
	columns                     [pipeline.NumColumns]string
}

func newGenerateFlags(stderr io.Writer) (*flag.FlagSet, *generateFlags) {
	f := &generateFlags{}
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), generateUsage)
		printDefaults(fs)
	}
	fs.StringVar(&f.publicURL, "public-url", "", "folder URL the files will be served from; index <loc>s are built from it (required)")
	fs.StringVar(&f.scope, "scope", "", "URL prefix every listed page must fall under (default: --public-url)")
	fs.StringVar(&f.out, "out", "sitemaps", "output folder")
	fs.IntVar(&f.maxURLs, "max-urls", 50000, "URLs per sitemap file, 1..50000")
	fs.IntVar(&f.maxBytes, "max-bytes", 10485760, "uncompressed bytes per sitemap file, whole file, 4096..52428800")
	fs.IntVar(&f.fanout, "index-fanout", 1000, "sitemaps per index file, 1..50000")
	fs.StringVar(&f.name, "name", "sitemap", "file name stem")
	fs.StringVar(&f.report, "report", "", "write a JSON run report to this file")
	fs.StringVar(&f.rejects, "rejects", "", "write every rejected row (source,row,reason,value) to this CSV file")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "encoding goroutines")
	fs.IntVar(&f.gzipLevel, "gzip-level", 6, "gzip compression level, 1 (fastest) ..9 (smallest)")
	fs.StringVar(&f.lastmodTZ, "lastmod-tz", "UTC", "time zone (IANA name) of lastmod datetimes that carry none")
	fs.BoolVar(&f.verify, "verify", false, "validate the written set (as 'sitemapgen validate' does) before publishing the root index; fail on any problem")
	names := [pipeline.NumColumns]string{"loc", "lastmod", "changefreq", "priority"}
	for c, n := range names {
		fs.StringVar(&f.columns[c], n+"-column", n, "CSV header name of the "+n+" column")
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
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg, closeOut, err := f.config(inputs, stdin, log)
	if err != nil {
		fmt.Fprintf(stderr, "sitemapgen generate: %v\n", err)
		if isUsage(err) {
			fmt.Fprintln(stderr, "Run 'sitemapgen help generate' for usage.")
			return exitUsage
		}
		return exitFail
	}

	var stopProgress func()
	if fd, ok := stderr.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(fd.Fd())) {
		cfg.Progress = new(pipeline.Progress)
		stopProgress = showProgress(stderr, cfg.Progress)
	}
	rep, runErr := pipeline.Run(ctx, cfg)
	if stopProgress != nil {
		stopProgress()
	}
	if err := closeOut(); err != nil && runErr == nil {
		runErr = err
		rep.Error = err.Error()
	}
	if f.report != "" {
		if err := writeReport(f.report, rep); err != nil {
			log.Error("report", "err", err)
			if runErr == nil {
				runErr = err
			}
		}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "sitemapgen generate: interrupted; the previous sitemap set is unchanged")
		} else {
			fmt.Fprintf(stderr, "sitemapgen generate: %v\n", runErr)
		}
		return exitFail
	}
	log.Info("done", "rows", rep.Rows, "urls", rep.URLs, "rejected", rep.Rejected.Total,
		"warnings", rep.Warnings.Total, "shards", rep.Shards, "indexes", rep.Indexes,
		"seconds", fmt.Sprintf("%.2f", rep.Seconds), "root", rep.Root)
	for _, u := range rep.Submit {
		fmt.Fprintf(stdout, "Sitemap: %s\n", u)
	}
	return exitOK
}

// config turns flags into a pipeline.Config. closeOut flushes and closes the
// rejects file.
func (f *generateFlags) config(inputs []string, stdin io.Reader, log *slog.Logger) (cfg pipeline.Config, closeOut func() error, err error) {
	closeOut = func() error { return nil }
	if len(inputs) == 0 {
		return cfg, closeOut, usageError{errors.New("no INPUT given")}
	}
	if f.publicURL == "" {
		return cfg, closeOut, usageError{errors.New("--public-url is required")}
	}
	pub, err := encode.ParseScope(f.publicURL)
	if err != nil {
		return cfg, closeOut, usageError{fmt.Errorf("--public-url: %w", err)}
	}
	scope := pub
	if f.scope != "" {
		if scope, err = encode.ParseScope(f.scope); err != nil {
			return cfg, closeOut, usageError{fmt.Errorf("--scope: %w", err)}
		}
	}
	tz, err := time.LoadLocation(f.lastmodTZ)
	if err != nil {
		return cfg, closeOut, usageError{fmt.Errorf("--lastmod-tz: %w", err)}
	}
	if strings.HasPrefix(f.out, "s3://") {
		return cfg, closeOut, usageError{errors.New("--out s3://... is not supported yet; give a local folder")}
	}
	cfg = pipeline.Config{
		Inputs: inputs, Stdin: stdin, PublicURL: pub, Scope: scope, Name: f.name,
		MaxURLs: f.maxURLs, MaxBytes: f.maxBytes, Fanout: f.fanout,
		Workers: f.workers, GzipLevel: f.gzipLevel, LastmodTZ: tz, Columns: f.columns, Log: log,
	}
	if f.workers < 1 {
		return cfg, closeOut, usageError{fmt.Errorf("--workers %d: must be at least 1", f.workers)}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, closeOut, usageError{err}
	}
	if cfg.Sink, err = sink.NewLocal(f.out); err != nil {
		return cfg, closeOut, err
	}
	if f.verify {
		cfg.Verify = verifier(check.Dir(f.out), &cfg, log)
	}
	if f.rejects != "" {
		rf, err := os.Create(f.rejects)
		if err != nil {
			return cfg, closeOut, fmt.Errorf("--rejects: %w", err)
		}
		bw := bufio.NewWriterSize(rf, 64<<10)
		cfg.Rejects = bw
		closeOut = func() error {
			err := bw.Flush()
			if cerr := rf.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("--rejects: %w", err)
			}
			return nil
		}
	}
	return cfg, closeOut, nil
}

func writeReport(path string, rep *pipeline.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

// showProgress redraws one status line on a terminal every second until the
// returned function is called.
func showProgress(w io.Writer, p *pipeline.Progress) (stop func()) {
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
				fmt.Fprintf(w, "\r\033[Krows %d  urls %d  rejected %d  shards %d  %.0f rows/s",
					rows, p.URLs.Load(), p.Rejected.Load(), p.Shards.Load(), rate)
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
