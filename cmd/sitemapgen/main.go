// Command sitemapgen turns URL lists (CSV or plain text, plain or gzipped)
// into XML sitemaps: gzip shards cut exactly at the protocol limits, nested
// sitemap indexes and robots.txt lines, published atomically.
//
// Usage:
//
//	sitemapgen generate [flags] INPUT...
//	sitemapgen validate [flags] ROOT
//	sitemapgen unlock [flags]
//
// Run "sitemapgen help generate" for the flags; the documentation is in
// README.md and docs/ in the source tree.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	_ "time/tzdata" // --lastmod-tz must work on hosts without a zoneinfo database
)

// version is set at build time with -ldflags "-X main.version=..."; else the module version.
var version = ""

// Exit codes of the contract.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `sitemapgen turns URL lists into XML sitemaps.

Usage:
  sitemapgen generate [flags] INPUT...         write a sitemap set (see: sitemapgen help generate)
  sitemapgen validate [flags] ROOT             check a sitemap set (see: sitemapgen help validate)
  sitemapgen unlock [flags]                    remove the lock a dead run left (see: sitemapgen help unlock)
  sitemapgen help [generate|validate|unlock]   show help
  sitemapgen version                           print the version

Documentation: README.md and docs/ in the source tree:
  docs/inputs.md        CSV, text, Parquet, Arrow, folders, globs, stdin; columns; bad input
  docs/extensions.md    alternates, mobile, images, video, news; list columns
  docs/output.md        files, indexes, publishing, report, dry run, manifest, rejects, exit status
  docs/s3.md            publishing to S3 and S3-compatible stores
  docs/validate.md      sitemapgen validate and generate --verify
  docs/flags.md         every flag of generate and validate
  docs/operations.md    JSON logs, metrics, the container image, schedules, IndexNow
  docs/performance.md   figures and how to reproduce them
  docs/how-it-works.md  architecture, package map, memory bounds, bounded decoders
  docs/testing.md       running the tests, the S3 test server, fuzzing
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "generate":
		return generate(ctx, args[1:], stdin, stdout, stderr)
	case "validate":
		return validate(ctx, args[1:], stdout, stderr)
	case "unlock":
		return unlock(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "generate" {
			return generate(ctx, []string{"--help"}, stdin, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "validate" {
			return validate(ctx, []string{"--help"}, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "unlock" {
			return unlock(ctx, []string{"--help"}, stdout, stdout)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "sitemapgen", versionString())
		return exitOK
	default:
		fmt.Fprintf(stderr, "sitemapgen: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// usageError marks errors that exit with exitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// newFlagSet returns the flag set of a subcommand: errors and usage on
// stderr, the usage being the text usage then every flag (printDefaults).
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		printDefaults(fs)
	}
	return fs
}
