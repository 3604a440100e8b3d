package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

const unlockUsage = `Usage: sitemapgen unlock [flags]

Removes the lock of the set NAME in DEST (.NAME.lock) that a run left behind.
By default only a stale lock is removed: on S3 one past its expiry (a run
killed, or cut off from S3, before it could release it), in a folder one that
no process holds. A live lock is left and its holder named; --force removes
it anyway: use it only when you know that run is dead (a killed container, a
lost host), since a run that still lives would publish beside the next one.

With {group} in --out, as given to a grouped generate, the lock of every
group's destination is removed (a grouped run killed on S3 leaves one in
each): the folder or S3 prefix above {group} is listed for them.

Exit status: 0 removed, or no lock; 1 a live lock left (without --force), or
an error; 2 usage error. See "Overlapping runs" in docs/output.md.

Flags:
`

type unlockFlags struct {
	out, name, s3Endpoint string
	force, s3PathStyle    bool
}

func newUnlockFlags(stderr io.Writer) (*flag.FlagSet, *unlockFlags) {
	f := &unlockFlags{}
	fs := newFlagSet("unlock", unlockUsage, stderr)
	fs.StringVar(&f.out, "out", "sitemaps", "the destination: a local folder or s3://bucket/prefix (as given to generate)")
	fs.StringVar(&f.name, "name", "sitemap", "file name stem of the set (as given to generate)")
	fs.BoolVar(&f.force, "force", false, "remove the lock even if it is live: only when you know its holder is dead")
	fs.StringVar(&f.s3Endpoint, "s3-endpoint", "", "endpoint URL of an S3-compatible store (default: AWS_ENDPOINT_URL or AWS)")
	fs.BoolVar(&f.s3PathStyle, "s3-path-style", false, "path-style S3 addressing (bucket in the path), as most S3-compatible stores want")
	return fs, f
}

func unlock(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, f := newUnlockFlags(stderr)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "sitemapgen unlock: unexpected argument %q (the destination is --out)\nRun 'sitemapgen help unlock' for usage.\n", flags.Arg(0))
		return exitUsage
	}
	if err := publish.ValidStem(f.name); err != nil {
		fmt.Fprintf(stderr, "sitemapgen unlock: --name: %v\nRun 'sitemapgen help unlock' for usage.\n", err)
		return exitUsage
	}
	if strings.Contains(f.out, groupPlaceholder) {
		return f.unlockGroups(ctx, stdout, stderr)
	}
	store, err := f.locker(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "sitemapgen unlock: %v\n", err)
		if isUsage(err) {
			return exitUsage
		}
		return exitFail
	}
	h, err := store.Unlock(ctx, publish.NewLayout(f.name).Lock(), f.force)
	var locked *sink.LockedError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stdout, "no lock: %v\n", err)
		return exitOK
	case errors.As(err, &locked) && locked.Note == "":
		fmt.Fprintf(stderr, "sitemapgen unlock: %v\n", err)
		fmt.Fprintln(stderr, "Left in place. "+f.hint(locked))
		return exitFail
	case err != nil:
		fmt.Fprintf(stderr, "sitemapgen unlock: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "removed the lock %s%s of %v\n", dest(store), publish.NewLayout(f.name).Lock(), h)
	return exitOK
}

// unlockGroups is unlock for --out holding {group}, as generate was given
// it: a grouped run holds a lock in every group's destination, and one
// killed leaves them all. It unlocks each destination of a group that the
// folder (or S3 prefix) above {group} holds, and says what it did in each.
func (f *unlockFlags) unlockGroups(ctx context.Context, stdout, stderr io.Writer) int {
	open := func(ctx context.Context, out string) (sink.Store, error) {
		u := *f
		u.out = out
		l, err := u.locker(ctx)
		if err != nil {
			return nil, err
		}
		s, ok := l.(sink.Store)
		if !ok {
			return nil, fmt.Errorf("%v: not a store", l)
		}
		return s, nil
	}
	if strings.HasPrefix(f.out, "s3://"+groupPlaceholder) {
		fmt.Fprintf(stderr, "sitemapgen unlock: --out %s: a bucket per group is not listed: unlock each group's with its bucket in --out\nRun 'sitemapgen help unlock' for usage.\n", f.out)
		return exitUsage
	}
	dests, err := groupDests(ctx, f.out, open)
	if err != nil {
		fmt.Fprintf(stderr, "sitemapgen unlock: --out %s: %v\n", f.out, err)
		if isUsage(err) {
			return exitUsage
		}
		return exitFail
	}
	lock := publish.NewLayout(f.name).Lock()
	var removed, held, failed int
	for _, gd := range dests {
		u := *f
		u.out = gd.out
		if !strings.HasPrefix(gd.out, "s3://") {
			if fi, err := os.Stat(gd.out); errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
				continue // the pattern's folder is not there (sites/x without sitemaps/): no group's
			}
		}
		store, err := u.locker(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "sitemapgen unlock: group %q: %v\n", gd.group, err)
			failed++
			continue
		}
		h, err := store.Unlock(ctx, lock, f.force)
		var locked *sink.LockedError
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case errors.As(err, &locked) && locked.Note == "":
			fmt.Fprintf(stderr, "sitemapgen unlock: group %q: %v\n", gd.group, err)
			held++
		case err != nil:
			fmt.Fprintf(stderr, "sitemapgen unlock: group %q: %v\n", gd.group, err)
			failed++
		default:
			fmt.Fprintf(stdout, "removed the lock %s%s of %v\n", dest(store), lock, h)
			removed++
		}
	}
	if removed+held+failed == 0 {
		fmt.Fprintf(stdout, "no lock: none in the %d group destinations of %s\n", len(dests), f.out)
		return exitOK
	}
	fmt.Fprintf(stdout, "%d of %d group destinations: %d locks removed, %d live locks left, %d errors\n", removed+held+failed, len(dests), removed, held, failed)
	if held > 0 {
		fmt.Fprintln(stderr, "Live locks were left in place. If you know the run holding them is dead: "+f.command(true))
	}
	if held+failed > 0 {
		return exitFail
	}
	return exitOK
}

// locker opens the destination without creating it.
func (f *unlockFlags) locker(ctx context.Context) (sink.Locker, error) {
	if strings.HasPrefix(f.out, "s3://") {
		bucket, prefix, err := sink.ParseS3URL(f.out)
		if err != nil {
			return nil, usageError{fmt.Errorf("--out: %w", err)}
		}
		return sink.NewS3(ctx, sink.S3Options{Bucket: bucket, Prefix: prefix, Endpoint: f.s3Endpoint, PathStyle: f.s3PathStyle})
	}
	if st, err := os.Stat(f.out); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--out %s: not a folder", f.out)
	}
	return sink.NewLocal(f.out)
}

// dest is the destination as the start of a lock's location.
func dest(l sink.Locker) string {
	s := fmt.Sprint(l)
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

// command is the unlock command line for this destination.
func (f *unlockFlags) command(force bool) string {
	args := []string{"sitemapgen", "unlock"}
	if force {
		args = append(args, "--force")
	}
	args = append(args, "--out", shellQuote(f.out))
	if f.name != "sitemap" {
		args = append(args, "--name", shellQuote(f.name))
	}
	if f.s3Endpoint != "" {
		args = append(args, "--s3-endpoint", shellQuote(f.s3Endpoint))
	}
	if f.s3PathStyle {
		args = append(args, "--s3-path-style")
	}
	return strings.Join(args, " ")
}

// lockedHint tells the operator of a run refused by a lock what to do. The
// lock held need not be the run's own: a grouped run and a run of one
// group's set shut each other out, and with {group} in --out it is one
// group's folder. So the command names the lock e found: its folder (or
// S3 prefix) and the set whose name it carries (.NAME.lock).
//
// With {group} in an S3 --out, a group's own lock (.NAME.lock in its
// prefix) is one of as many as the run has groups, all left by a run that
// died (a folder's locks die with it), so the command names --out as
// given: unlock clears every group's at once.
func lockedHint(e *sink.LockedError, g *generateFlags) string {
	u := unlockFlags{out: g.out, name: g.name, s3Endpoint: g.s3Endpoint, s3PathStyle: g.s3PathStyle}
	if e.Expiry && strings.Contains(g.out, groupPlaceholder) && !strings.HasPrefix(g.out, "s3://"+groupPlaceholder) &&
		strings.HasSuffix(e.Lock, "/"+publish.NewLayout(g.name).Lock()) {
		return u.hint(e) + " (every group's destination has a lock of its own: this command clears them all, live ones too; without --force it clears the expired ones and names the live)"
	}
	if i := strings.LastIndexByte(e.Lock, '/'); i >= 0 {
		if name, ok := strings.CutSuffix(e.Lock[i+1:], ".lock"); ok && len(name) > 1 && name[0] == '.' {
			u.out, u.name = e.Lock[:i], name[1:]
			if strings.HasPrefix(e.Lock, "s3://") {
				u.out += "/"
			}
		}
	}
	return u.hint(e)
}

// hint says how to clear the lock e reports.
func (f *unlockFlags) hint(e *sink.LockedError) string {
	if !e.Expiry {
		return "A folder's lock ends when the process holding it exits: stop that process. If it hangs on another host that mounts the folder: " + f.command(true)
	}
	return "If you know that run is dead (killed, or cut off from S3 before it could release the lock): " + f.command(true) +
		"; else the lock expires --lock-ttl after its last renewal"
}

// shellQuote quotes s for a POSIX shell if it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+=@%,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
