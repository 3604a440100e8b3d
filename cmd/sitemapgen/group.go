package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
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
	switch {
	case f.maxGroups < 1:
		return usageError{fmt.Errorf("--max-groups %d: must be 1 or more", f.maxGroups)}
	}
	g := &pipeline.Grouping{ByHost: f.groupBy == "host", Default: f.defaultGroup, Max: f.maxGroups}
	if !g.ByHost {
		cfg.Columns[input.Group] = f.groupBy
	}
	if placed {
		g.Place = f.placeGroup(ctx, cfg, log)
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
