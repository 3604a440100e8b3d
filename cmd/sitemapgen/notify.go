package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sitemapgen/sitemapgen/indexnow"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

// notifier tells IndexNow what a run changed: the change of each set is
// read in the publish's Switched hook, while the replaced sitemaps are
// still in its destination, and the changes of every set (one, or a
// grouped run's) are posted together once the run is over.
type notifier struct {
	client *indexnow.Client
	all    bool // a first run sends every URL
	max    int  // the most URLs read back and held, over every set
	dryRun bool
	// noReadBack, when set, is why a dry run cannot read the change back
	// (a dry run holds the new sitemaps of one destination only).
	noReadBack string
	log        *slog.Logger

	mu      sync.Mutex
	change  indexnow.Change // every set's, added up
	outside int             // URLs read back outside their set's scope: not sent
	sets    int             // sets whose change was read
	err     error           // reading a change failed: nothing is sent
	skips   []string        // sets that had nothing to compare with
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
	// The protocol accepts only URLs under the key file's folder: every URL
	// the run lists is under the scope, so the scope must be. (With
	// {group} in the URLs, each group's are checked when sent: the client
	// leaves out what the key does not vouch for.)
	if f.indexNowKeyLocation != "" {
		folder, err := indexnow.KeyFolder(f.indexNowKeyLocation)
		if err != nil {
			return nil, usageError{fmt.Errorf("--indexnow-key-location %q: %w", f.indexNowKeyLocation, err)}
		}
		scope := cfg.Scope
		if scope == nil {
			scope = cfg.PublicURL
		}
		if !strings.Contains(f.publicURL+f.scope, groupPlaceholder) && !indexnow.Under(scope.String(), folder) {
			return nil, usageError{fmt.Errorf("--indexnow-key-location %s vouches only for URLs under %s; the scope %s is not under it", f.indexNowKeyLocation, folder, scope)}
		}
	}
	n := &notifier{
		client: &indexnow.Client{Endpoint: f.indexNowEndpoint, Key: key, KeyLocation: f.indexNowKeyLocation, Log: log},
		all:    f.indexNowAll, max: f.indexNowMax, dryRun: cfg.DryRun, log: log,
	}
	if cfg.DryRun && f.groupBy != "" && strings.Contains(f.out, groupPlaceholder) {
		n.noReadBack = "dry run with {group} in --out: the new sitemaps of every group's destination are not held to be read back"
	}
	return n, nil
}

// switched reads the change of the set at p while the previous
// generation's sitemaps are still in its destination
// (pipeline.Config.Switched); a grouped run calls it for several sets at
// once.
func (n *notifier) switched(ctx context.Context, p pipeline.Place, prev, next *publish.Manifest) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return
	}
	if prev == nil && !n.all {
		n.skips = append(n.skips, p.Name)
		return
	}
	if n.noReadBack != "" {
		n.err = errors.New(n.noReadBack)
		return
	}
	change, err := indexnow.Changes(ctx, p.Sink, publish.NewLayout(p.Name).IsShard, prev, next, n.max-len(n.change.URLs))
	switch {
	case errors.Is(err, indexnow.ErrTooMany):
		n.err = fmt.Errorf("the change holds more than --indexnow-max-urls %d URLs (or the replaced sitemaps do): nothing sent; search engines will find it in the sitemaps", n.max)
		return
	case errors.Is(err, sink.ErrNotKept):
		n.err = fmt.Errorf("dry run: the new sitemaps are more than the %d MiB a dry run holds to read them back: %w", dryRunKeep>>20, err)
		return
	case err != nil:
		n.err = fmt.Errorf("%s: %w", p.Name, err)
		return
	}
	// The sitemaps read back are the destination's: only what the set
	// itself could have listed is sent under the site's key.
	scope := p.Scope
	if scope == nil {
		scope = p.PublicURL
	}
	for _, u := range change.URLs {
		if indexnow.Under(u, scope.String()) {
			n.change.URLs = append(n.change.URLs, u)
		} else {
			n.outside++
		}
	}
	n.change.Added += change.Added
	n.change.Changed += change.Changed
	n.change.Removed += change.Removed
	n.change.Read += change.Read
	n.sets++
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
	case n.sets == 0:
		res.Skipped = "first run: no previous generation to compare with (--indexnow-all sends every URL)"
		if len(n.skips) == 0 {
			res.Skipped = "no set was published"
		}
		n.log.Info("indexnow: nothing sent: " + res.Skipped)
		return res
	}
	if len(n.skips) > 0 {
		n.log.Info("indexnow: sets published for the first time are not sent (--indexnow-all sends every URL)", "sets", len(n.skips), "first", n.skips[0])
	}
	ch, urls := &n.change, n.change.URLs
	if n.dryRun {
		reqs, _ := n.client.Plan(urls)
		res.URLs, res.Requests = urls, len(reqs)
		n.log.Info("indexnow: dry run: would post", "urls", len(urls), "requests", len(reqs), "endpoint", n.client.Endpoint)
	} else if len(urls) > 0 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		*res = n.client.Submit(ctx, urls)
	}
	if len(urls) == 0 && n.outside == 0 {
		res.Skipped = "no URL changed"
	}
	if n.outside > 0 {
		res.Fail("outside_scope", n.outside, fmt.Sprintf("%d URLs read back from the destination's sitemaps are not under their set's scope: not sent", n.outside))
	}
	res.Added, res.Changed, res.Removed, res.DryRun = ch.Added, ch.Changed, ch.Removed, n.dryRun
	for _, e := range res.Errors {
		n.log.Warn("indexnow: " + e)
	}
	n.log.Info("indexnow", "added", res.Added, "changed", res.Changed, "removed", res.Removed, "sitemaps_read", ch.Read,
		"sets", n.sets, "requests", res.Requests, "sent", res.Sent, "accepted", res.Accepted, "failed", res.Failed)
	return res
}
