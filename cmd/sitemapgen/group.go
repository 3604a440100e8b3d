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
			g.Vanished = f.vanishedGroups(cfg.Name, log)
		}
		if strings.Contains(f.out, groupPlaceholder) && cfg.Uploads == 0 {
			cfg.Uploads = sink.LocalConnections
			if strings.HasPrefix(f.out, "s3://") {
				cfg.Uploads = sink.S3Connections
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
			var err error
			if store, err = f.newSink(ctx, strings.ReplaceAll(f.out, groupPlaceholder, group)); err != nil {
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
// returns those the run does not have whose destination holds a set named
// name (its manifest). A deleted group's folder is not looked at.
func (f *generateFlags) vanishedGroups(name string, log *slog.Logger) func(ctx context.Context, have []string) ([]string, error) {
	return func(ctx context.Context, have []string) ([]string, error) {
		i := strings.Index(f.out, groupPlaceholder)
		j := strings.LastIndexByte(f.out[:i], '/') + 1
		parent, pre := f.out[:j], f.out[j:i] // pre: the segment's text before {group}
		post, _, _ := strings.Cut(f.out[i+len(groupPlaceholder):], "/")
		folders, err := f.folders(ctx, parent)
		if err != nil {
			return nil, err
		}
		known := map[string]bool{}
		for _, g := range have {
			known[g] = true
		}
		manifest := publish.NewLayout(name).Manifest()
		var gone []string
		for _, folder := range folders {
			g, okPre := strings.CutPrefix(folder, pre)
			g, okPost := strings.CutSuffix(g, post)
			if !okPre || !okPost || g == "" || known[g] {
				continue
			}
			if n, r := pipeline.GroupName(nil, []byte(g)); r != encode.OK || string(n) != g {
				continue // no group is named so: not a group's folder
			}
			dest := strings.ReplaceAll(f.out, groupPlaceholder, g)
			held, err := f.holds(ctx, dest, manifest)
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
				// Someone else's folder beside the groups' (or a file).
				log.Warn("groups: cannot look for a published set", "destination", dest, "err", err)
				continue
			}
			if err != nil {
				return nil, err
			}
			if held {
				gone = append(gone, g)
			}
		}
		slices.Sort(gone)
		return gone, nil
	}
}

// folders returns the names of the folders in the folder or S3 prefix
// out; none if it does not exist.
func (f *generateFlags) folders(ctx context.Context, out string) ([]string, error) {
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
	s, err := f.newSink(ctx, out)
	if err != nil {
		return nil, err
	}
	return s.(*sink.S3).Folders(ctx)
}

// holds reports whether the folder or S3 prefix out holds the file name.
func (f *generateFlags) holds(ctx context.Context, out, name string) (bool, error) {
	if !strings.HasPrefix(out, "s3://") {
		_, err := os.Stat(filepath.Join(out, name))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	s, err := f.newSink(ctx, out)
	if err != nil {
		return false, err
	}
	_, err = s.Get(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
