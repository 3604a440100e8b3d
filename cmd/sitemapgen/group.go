package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

// groupPlaceholder stands for the group's name in --public-url, --scope
// and --out.
const groupPlaceholder = "{group}"

// sampleGroup returns s with a group name in place of the placeholder: a
// URL holding it is checked as one group's would be.
func sampleGroup(s string) string { return strings.ReplaceAll(s, groupPlaceholder, "group") }

// grouping sets cfg.Group from --group-by and the placeholders.
func (f *generateFlags) grouping(ctx context.Context, cfg *pipeline.Config, log *slog.Logger) error {
	placed := false
	for _, v := range []string{f.publicURL, f.scope, f.out} {
		placed = placed || strings.Contains(v, groupPlaceholder)
	}
	if f.groupBy == "" {
		switch {
		case placed:
			return usageError{errors.New("{group} in --public-url, --scope or --out needs --group-by")}
		case f.defaultGroup != "" || f.maxGroups != pipeline.DefaultMaxGroups:
			return usageError{errors.New("--default-group and --max-groups need --group-by")}
		}
		return nil
	}
	scope := f.scope
	if scope == "" {
		scope = f.publicURL
	}
	switch {
	case f.maxGroups < 1:
		return usageError{fmt.Errorf("--max-groups %d: must be 1 or more", f.maxGroups)}
	case f.groupBy == "host" && !strings.Contains(scope, groupPlaceholder):
		// A scope is one host's: every other host's rows would be
		// rejected as out of scope, and the run would still succeed.
		return usageError{fmt.Errorf("--group-by host: the scope %q holds no {group}, so every host but its own would be out of scope: give --public-url 'https://{group}/…' (or --scope 'https://{group}/…' to list other hosts' URLs from one host's folder)", scope)}
	case strings.Contains(f.out, groupPlaceholder) && !strings.Contains(f.publicURL, groupPlaceholder):
		// Each group's folder holds the plain names: one public URL would
		// be every group's root, and the sets could not all be served.
		return usageError{fmt.Errorf("--out %q holds {group} but --public-url %q does not: every group's files would have the same URLs; give each group's folder its own, e.g. --public-url 'https://www.example.com/sitemaps/{group}/'", f.out, f.publicURL)}
	}
	g := &pipeline.Grouping{ByHost: f.groupBy == "host", Default: f.defaultGroup, Max: f.maxGroups}
	if !g.ByHost {
		cfg.Columns[input.Group] = f.groupBy
	}
	if placed {
		g.Place = f.placeGroup(ctx, cfg, log)
		if strings.Contains(f.out, groupPlaceholder) {
			g.Vanished = f.vanishedGroups(cfg, log)
		}
		if strings.Contains(f.out, groupPlaceholder) && cfg.Uploads == 0 {
			cfg.Uploads = sink.LocalConnections
			if strings.HasPrefix(f.out, "s3://") {
				cfg.Uploads, cfg.SmallUploads = sink.S3Connections, sink.S3SmallConnections
			}
		}
	}
	cfg.Group = g
	if err := cfg.Validate(); err != nil {
		return usageError{fmt.Errorf("--group-by: %w", err)}
	}
	return nil
}

// placeGroup returns the pipeline.Grouping.Place of the placeholders: each
// group's URLs, and its destination when --out holds {group}.
func (f *generateFlags) placeGroup(ctx context.Context, cfg *pipeline.Config, log *slog.Logger) func(string) (pipeline.Place, error) {
	return func(group string) (pipeline.Place, error) {
		var p pipeline.Place
		gcfg := *cfg // what --verify checks the group's set against
		url := func(flag, v string, dst **encode.Scope) error {
			if !strings.Contains(v, groupPlaceholder) {
				return nil
			}
			s, err := encode.ParseScope(strings.ReplaceAll(v, groupPlaceholder, group))
			if err != nil {
				return fmt.Errorf("--%s: %w", flag, err)
			}
			*dst = s
			return nil
		}
		if err := url("public-url", f.publicURL, &p.PublicURL); err != nil {
			return p, err
		}
		if err := url("scope", f.scope, &p.Scope); err != nil {
			return p, err
		}
		if p.PublicURL != nil && p.Scope == nil && f.scope != "" {
			p.Scope = cfg.Scope // a scope without the placeholder holds for every group
		}
		if p.PublicURL == nil && p.Scope != nil {
			p.PublicURL = cfg.PublicURL
		}
		if p.PublicURL != nil {
			gcfg.PublicURL, gcfg.Scope = p.PublicURL, p.Scope
		}
		store := cfg.Sink
		if strings.Contains(f.out, groupPlaceholder) {
			out := strings.ReplaceAll(f.out, groupPlaceholder, group)
			f.made.note(out)
			var err error
			if store, err = f.newSink(ctx, out); err != nil {
				return p, err
			}
			p.Name, p.Sink = cfg.Name, store // a folder of its own: the plain name
		}
		if f.verify {
			p.Verify = verifier(check.SinkFiles{Sink: store}, &gcfg, log)
		}
		return p, nil
	}
}

// vanishedGroups is pipeline.Grouping.Vanished for {group} in --out: it
// lists the folder that holds the groups' folders (s3://bucket/a/{group}/b
// lists s3://bucket/a/), takes from each name the group it would be, and
// returns those the run does not have whose destination holds a published
// set named name (its root and manifest). A group's destination that holds
// files of such a set but not its root is what a first publish left that
// died before its switch: nothing lists those files, and no run of this
// input would ever touch them, so they are deleted (and the folder, when
// that leaves it empty), under the destination's lock, unless dry or
// unless a vanished group refuses the run (cfg: Force, MaxShrink).
func (f *generateFlags) vanishedGroups(cfg *pipeline.Config, log *slog.Logger) func(ctx context.Context, have []string) ([]string, error) {
	name := cfg.Name
	return func(ctx context.Context, have []string) ([]string, error) {
		dests, err := groupDests(ctx, f.out, f.newSink)
		if err != nil {
			return nil, err
		}
		known := map[string]bool{}
		for _, g := range have {
			known[g] = true
		}
		// A link beside the groups' folders to one of the run's is that
		// group's, under another name: not a group gone.
		var real map[string]bool
		if slices.ContainsFunc(dests, func(gd groupDest) bool { return gd.linked && !known[gd.group] }) {
			real = map[string]bool{}
			for _, gd := range dests {
				if known[gd.group] {
					if p, err := filepath.EvalSymlinks(gd.out); err == nil {
						real[p] = true
					}
				}
			}
		}
		l := publish.NewLayout(name)
		var gone []string
		var dead []groupDest // a first publish's leftovers
		for _, gd := range dests {
			if known[gd.group] {
				continue
			}
			if gd.linked {
				if p, err := filepath.EvalSymlinks(gd.out); err == nil && real[p] {
					continue
				}
			}
			names, err := f.list(ctx, gd.out)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
				// Someone else's folder beside the groups' (or a file).
				log.Warn("groups: cannot look for a published set", "destination", gd.out, "err", err)
				continue
			}
			if err != nil {
				return nil, err
			}
			held := map[string]bool{}
			ours := false
			for _, n := range names {
				held[n] = true
				ours = ours || l.Kind(n) != publish.Foreign
			}
			st, err := publish.StateOf(ctx, getter{f, gd.out}, l, func(n string) bool { return held[n] }, ours)
			if err != nil {
				return nil, err
			}
			switch {
			case st == publish.Published:
				gone = append(gone, gd.group)
			case st == publish.Unrooted && gd.linked:
				// Linked from elsewhere: perhaps not a first publish's at all.
				log.Warn("groups: files of a set never published are left: the group's folder is a link, to something this run did not make",
					"group", gd.group, "destination", gd.out)
			case st == publish.Unrooted:
				dead = append(dead, gd)
			}
		}
		if len(gone) == 0 || cfg.Force || cfg.MaxShrink >= 1 { // not a refused run's
			for _, gd := range dead {
				f.discard(ctx, gd, l, log)
			}
		}
		slices.Sort(gone)
		return gone, nil
	}
}

// getter reads a file of the destination out, opened only when read
// (sink.NewLocal would make a folder that is not there).
type getter struct {
	f   *generateFlags
	out string
}

func (g getter) Get(ctx context.Context, name string) ([]byte, error) {
	s, err := g.f.newSink(ctx, g.out)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, name)
}

// groupDest is a group's destination: --out with the group's name.
type groupDest struct {
	group, out string
	linked     bool // the folder named after the group is a symbolic link
}

// groupDests returns the destinations, in the folder that holds the
// groups' folders of out (a pattern holding {group}), of the names that
// are groups' (a folder's name the pattern's segment matches, with a name
// GroupName gives), sorted by group. open opens an S3 prefix.
func groupDests(ctx context.Context, out string, open func(context.Context, string) (sink.Store, error)) ([]groupDest, error) {
	i := strings.Index(out, groupPlaceholder)
	j := strings.LastIndexByte(out[:i], '/') + 1
	parent, pre := out[:j], out[j:i] // pre: the segment's text before {group}
	post, _, _ := strings.Cut(out[i+len(groupPlaceholder):], "/")
	folders, err := folders(ctx, parent, open)
	if err != nil {
		return nil, err
	}
	var dests []groupDest
	for _, folder := range folders {
		g, okPre := strings.CutPrefix(folder, pre)
		g, okPost := strings.CutSuffix(g, post)
		if !okPre || !okPost || g == "" {
			continue
		}
		if n, r := pipeline.GroupName(nil, []byte(g)); r != encode.OK || string(n) != g {
			continue // no group is named so: not a group's folder
		}
		gd := groupDest{group: g, out: strings.ReplaceAll(out, groupPlaceholder, g)}
		if !strings.HasPrefix(parent, "s3://") {
			fi, err := os.Lstat(filepath.Join(parent, folder))
			gd.linked = err == nil && fi.Mode()&fs.ModeSymlink != 0
		}
		dests = append(dests, gd)
	}
	slices.SortFunc(dests, func(a, b groupDest) int { return strings.Compare(a.group, b.group) })
	return dests, nil
}

// discard deletes, under its lock, the files of the set l names in the
// group's destination gd, which held no root of it (see vanishedGroups),
// and a folder that this leaves empty. A failure is a warning: the files
// harm nothing, and the next run tries again.
func (f *generateFlags) discard(ctx context.Context, gd groupDest, l publish.Layout, log *slog.Logger) {
	if f.dryRun {
		log.Warn("groups: would delete the files of a set never published (a first publish that died before its switch)", "group", gd.group, "destination", gd.out)
		return
	}
	fail := func(err error) {
		log.Warn("groups: could not delete the files of a set never published (the next run tries again)", "group", gd.group, "destination", gd.out, "err", err)
	}
	store, err := f.newSink(ctx, gd.out)
	if err != nil {
		fail(err)
		return
	}
	d, err := publish.OpenDestination(ctx, store, l, publish.Options{LockTTL: f.lockTTL, Log: log})
	if err != nil {
		fail(err) // another run holds it, perhaps publishing the group: its files are left
		return
	}
	deleted, err := d.Discard(ctx, l) // refused if the root came since the listing
	d.Close(ctx)
	if err != nil {
		fail(err)
		return
	}
	log.Warn("groups: deleted the files of a set never published (a first publish that died before its switch), not in the input now",
		"group", gd.group, "destination", gd.out, "files", len(deleted))
	if !f.isS3() {
		rmdir(gd.out)
	}
}

// rmdir removes the folder dir if it is empty, and not if it is a link to
// one (a group's folder may be).
func rmdir(dir string) {
	syscall.Rmdir(dir) // ENOTEMPTY, ENOTDIR: left, as it should be
}

// madeFolders are the groups' folders a run made (sink.NewLocal makes
// them as a group's first row is read), and the folders above them it
// made: a run that stops leaves a group's new folder empty, where
// "sitemapgen validate out/*/" would fail on it every night after, so
// they are removed when empty (remove).
type madeFolders struct {
	mu   sync.Mutex
	dirs []string // deepest last, for each folder noted
}

// note records the folders of dir that do not exist yet, if dir is a
// folder's path (not s3://).
func (m *madeFolders) note(dir string) {
	if strings.HasPrefix(dir, "s3://") {
		return
	}
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	m.mu.Lock()
	for i := len(missing) - 1; i >= 0; i-- {
		m.dirs = append(m.dirs, missing[i])
	}
	m.mu.Unlock()
}

// remove removes the folders noted that are empty, deepest first.
func (m *madeFolders) remove() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.dirs) - 1; i >= 0; i-- {
		rmdir(m.dirs[i])
	}
	m.dirs = nil
}

// isS3 reports whether --out is on S3.
func (f *generateFlags) isS3() bool { return strings.HasPrefix(f.out, "s3://") }

// list returns the names the folder or S3 prefix out holds (an error
// wrapping fs.ErrNotExist for a folder that does not exist).
func (f *generateFlags) list(ctx context.Context, out string) ([]string, error) {
	if !strings.HasPrefix(out, "s3://") {
		ents, err := os.ReadDir(out)
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		return names, err
	}
	s, err := f.newSink(ctx, out)
	if err != nil {
		return nil, err
	}
	return s.List(ctx)
}

// folders returns the names of the folders in the folder or S3 prefix
// out (opened by open); none if it does not exist.
func folders(ctx context.Context, out string, open func(context.Context, string) (sink.Store, error)) ([]string, error) {
	if out == "s3://" {
		return nil, nil // a bucket per group: the buckets are not listed
	}
	if !strings.HasPrefix(out, "s3://") {
		if out == "" {
			out = "."
		}
		ents, err := os.ReadDir(out)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		var names []string
		for _, e := range ents {
			dir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 { // a group's folder may be a link to it
				fi, err := os.Stat(filepath.Join(out, e.Name()))
				dir = err == nil && fi.IsDir()
			}
			if dir {
				names = append(names, e.Name())
			}
		}
		return names, err
	}
	s, err := open(ctx, out)
	if err != nil {
		return nil, err
	}
	return s.(*sink.S3).Folders(ctx)
}
