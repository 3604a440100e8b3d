package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sitemapgen/sitemapgen/indexnow"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

// notifier tells IndexNow what a run changed: the change is read in the
// publish's Switched hook, while the replaced sitemaps are still in the
// destination, and posted once the run is over.
type notifier struct {
	client  *indexnow.Client
	all     bool // a first run sends every URL
	max     int  // the most URLs read back and held
	dryRun  bool
	getter  indexnow.Getter
	isShard func(string) bool
	scope   string // every URL sent lies under it
	log     *slog.Logger

	change *indexnow.Change
	err    error  // reading the change failed
	skip   string // why nothing is sent
}

// dryRunKeep is how many bytes of new sitemaps a dry run holds to read
// them back.
const dryRunKeep = 64 << 20

// newNotifier checks the IndexNow flags; nil when IndexNow is off. Every
// mistake is a usage error, found before anything runs.
func (f *generateFlags) newNotifier(cfg *pipeline.Config, log *slog.Logger) (*notifier, error) {
	if f.indexNowKey == "" && f.indexNowKeyFile == "" {
		if f.indexNowAll || f.indexNowKeyLocation != "" {
			return nil, usageError{errors.New("--indexnow-all and --indexnow-key-location need --indexnow-key or --indexnow-key-file")}
		}
		return nil, nil
	}
	key := f.indexNowKey
	if f.indexNowKeyFile != "" {
		if key != "" {
			return nil, usageError{errors.New("--indexnow-key and --indexnow-key-file: give one")}
		}
		b, err := os.ReadFile(f.indexNowKeyFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--indexnow-key-file: %w", err)}
		}
		key = strings.TrimSpace(string(b))
	}
	if err := indexnow.CheckKey(key); err != nil {
		return nil, usageError{fmt.Errorf("IndexNow %w", err)}
	}
	if u, err := url.Parse(f.indexNowEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Errorf("--indexnow-endpoint %q: want an http(s) URL", f.indexNowEndpoint)}
	}
	if f.indexNowMax < 1 {
		return nil, usageError{fmt.Errorf("--indexnow-max-urls %d: must be at least 1", f.indexNowMax)}
	}
	if f.indexNowKeyLocation != "" {
		folder, err := indexnow.KeyFolder(f.indexNowKeyLocation)
		if err != nil {
			return nil, usageError{fmt.Errorf("--indexnow-key-location %q: %w", f.indexNowKeyLocation, err)}
		}
		// The protocol accepts only URLs under the key file's folder: every
		// URL the run lists is under the scope, so the scope must be.
		scope := cfg.Scope
		if scope == nil {
			scope = cfg.PublicURL
		}
		if !indexnow.Under(scope.String(), folder) {
			return nil, usageError{fmt.Errorf("--indexnow-key-location %s vouches only for URLs under %s; the scope %s is not under it", f.indexNowKeyLocation, folder, scope)}
		}
	}
	layout := publish.NewLayout(cfg.Name)
	scope := cfg.Scope
	if scope == nil {
		scope = cfg.PublicURL
	}
	return &notifier{scope: scope.String(),
		client: &indexnow.Client{Endpoint: f.indexNowEndpoint, Key: key, KeyLocation: f.indexNowKeyLocation, Log: log},
		all:    f.indexNowAll, max: f.indexNowMax, dryRun: cfg.DryRun,
		isShard: layout.IsShard, log: log,
	}, nil
}

// switched reads the change while the previous generation's sitemaps are
// still in the destination (publish.Options.Switched).
func (n *notifier) switched(ctx context.Context, prev, next *publish.Manifest) {
	if prev == nil && !n.all {
		n.skip = "first run: no previous generation to compare with (--indexnow-all sends every URL)"
		return
	}
	n.change, n.err = indexnow.Changes(ctx, n.getter, n.isShard, prev, next, n.max)
	switch {
	case errors.Is(n.err, indexnow.ErrTooMany):
		n.err = fmt.Errorf("the change holds more than --indexnow-max-urls %d URLs (or the replaced sitemaps do): nothing sent; search engines will find it in the sitemaps", n.max)
	case errors.Is(n.err, sink.ErrNotKept):
		n.err = fmt.Errorf("dry run: the new sitemaps are more than the %d MiB a dry run holds to read them back: %w", dryRunKeep>>20, n.err)
	}
}

// send posts the change and returns what became of it. Its failures are
// the Result's and the log's, never the run's.
func (n *notifier) send(ctx context.Context) *indexnow.Result {
	res := &indexnow.Result{}
	switch {
	case n.err != nil:
		res.Skipped = n.err.Error()
		n.log.Warn("indexnow: nothing sent", "err", n.err)
		return res
	case n.change == nil:
		res.Skipped = n.skip
		n.log.Info("indexnow: nothing sent: " + n.skip)
		return res
	}
	ch := n.change
	// The sitemaps read back are the destination's: only what the run
	// itself could have listed is sent under the site's key.
	urls, outside := make([]string, 0, len(ch.URLs)), 0
	for _, u := range ch.URLs {
		if indexnow.Under(u, n.scope) {
			urls = append(urls, u)
		} else {
			outside++
		}
	}
	if n.dryRun {
		reqs, _ := n.client.Plan(urls)
		res.URLs, res.Requests = urls, len(reqs)
		n.log.Info("indexnow: dry run: would post", "urls", len(urls), "requests", len(reqs), "endpoint", n.client.Endpoint)
	} else if len(urls) > 0 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		*res = n.client.Submit(ctx, urls)
	}
	if len(urls) == 0 && outside == 0 {
		res.Skipped = "no URL changed"
	}
	if outside > 0 {
		res.Fail("outside_scope", outside, fmt.Sprintf("%d URLs read back from the destination's sitemaps are not under the scope %s: not sent", outside, n.scope))
	}
	res.Added, res.Changed, res.Removed, res.DryRun = ch.Added, ch.Changed, ch.Removed, n.dryRun
	for _, e := range res.Errors {
		n.log.Warn("indexnow: " + e)
	}
	n.log.Info("indexnow", "added", res.Added, "changed", res.Changed, "removed", res.Removed, "sitemaps_read", ch.Read,
		"requests", res.Requests, "sent", res.Sent, "accepted", res.Accepted, "failed", res.Failed)
	return res
}
