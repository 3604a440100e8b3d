package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
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

	mu   sync.Mutex
	sets map[string]setChange // by destination and set name; merged in that order when sent
}

// setChange is what one set's switch changed (notifier.switched).
type setChange struct {
	first   bool             // nothing to compare with: nothing sent for it
	change  *indexnow.Change // the URLs under the set's scope
	outside int              // URLs read back outside the set's scope: not sent
	err     error            // reading the change failed: nothing is sent
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
// (pipeline.Config.Switched). A grouped run calls it for several sets at
// once, in no set order: each set's change is kept apart, read with the
// whole --indexnow-max-urls, and send adds them up in name order.
func (n *notifier) switched(ctx context.Context, p pipeline.Place, prev, next *publish.Manifest) {
	var c setChange
	switch {
	case prev == nil && !n.all:
		c.first = true
	case n.noReadBack != "":
		c.err = errors.New(n.noReadBack)
	default:
		c.change, c.err = indexnow.Changes(ctx, p.Sink, publish.NewLayout(p.Name).IsShard, prev, next, n.max)
	}
	switch {
	case errors.Is(c.err, indexnow.ErrTooMany):
		c.err = n.tooMany()
	case errors.Is(c.err, sink.ErrNotKept):
		c.err = fmt.Errorf("dry run: the new sitemaps are more than the %d MiB a dry run holds to read them back: %w", dryRunKeep>>20, c.err)
	case c.err != nil:
		c.err = fmt.Errorf("%s: %w", p.Name, c.err)
	}
	if c.change != nil {
		// The sitemaps read back are the destination's: only what the
		// set itself could have listed is sent under the site's key.
		scope := p.Scope
		if scope == nil {
			scope = p.PublicURL
		}
		kept := c.change.URLs[:0]
		for _, u := range c.change.URLs {
			if indexnow.Under(u, scope.String()) {
				kept = append(kept, u)
			} else {
				c.outside++
			}
		}
		c.change.URLs = kept
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sets == nil {
		n.sets = map[string]setChange{}
	}
	n.sets[p.Sink.String()+"/"+p.Name] = c // a set per group folder: the names alone repeat
}

func (n *notifier) tooMany() error {
	return fmt.Errorf("the change holds more than --indexnow-max-urls %d URLs (or the replaced sitemaps do): nothing sent; search engines will find it in the sitemaps", n.max)
}

// merged adds up the sets' changes in name order: the change to send, the
// URLs left out of their set's scope, and the sets read and new. An error
// (a set's, or a total past --indexnow-max-urls) means nothing is sent.
func (n *notifier) merged() (ch indexnow.Change, outside, read int, first []string, err error) {
	names := slices.Sorted(maps.Keys(n.sets))
	for _, name := range names {
		c := n.sets[name]
		switch {
		case c.err != nil:
			return ch, 0, 0, nil, c.err
		case c.first:
			first = append(first, name)
			continue
		}
		ch.URLs = append(ch.URLs, c.change.URLs...)
		ch.Added += c.change.Added
		ch.Changed += c.change.Changed
		ch.Removed += c.change.Removed
		ch.Read += c.change.Read
		outside += c.outside
		read++
	}
	if len(ch.URLs) > n.max {
		return ch, 0, 0, nil, n.tooMany()
	}
	return ch, outside, read, first, nil
}

// send posts the change and returns what became of it. Its failures are
// the Result's and the log's, never the run's.
func (n *notifier) send(ctx context.Context) *indexnow.Result {
	res := &indexnow.Result{}
	ch, outside, read, first, err := n.merged()
	switch {
	case err != nil:
		res.Skipped = err.Error()
		n.log.Warn("indexnow: nothing sent", "err", err)
		return res
	case read == 0:
		res.Skipped = "first run: no previous generation to compare with (--indexnow-all sends every URL)"
		if len(first) == 0 {
			res.Skipped = "no set was published"
		}
		n.log.Info("indexnow: nothing sent: " + res.Skipped)
		return res
	}
	if len(first) > 0 {
		n.log.Info("indexnow: sets published for the first time are not sent (--indexnow-all sends every URL)", "sets", len(first), "first", first[0])
	}
	urls := ch.URLs
	if n.dryRun {
		reqs, left := n.client.Plan(urls)
		res.Requests = len(reqs)
		for _, rq := range reqs { // what would be sent: those the key vouches for
			res.URLs = append(res.URLs, rq.URLList...)
		}
		if len(left) > 0 {
			res.Fail("outside_key_location", len(left), fmt.Sprintf("%d URLs not under the key location's folder (%s), would not be sent, e.g. %s", len(left), n.client.KeyLocation, left[0]))
		}
		n.log.Info("indexnow: dry run: would post", "urls", len(res.URLs), "requests", len(reqs), "endpoint", n.client.Endpoint)
	} else if len(urls) > 0 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		*res = n.client.Submit(ctx, urls)
	}
	if len(urls) == 0 && outside == 0 {
		res.Skipped = "no URL changed"
	}
	if outside > 0 {
		res.Fail("outside_scope", outside, fmt.Sprintf("%d URLs read back from the destination's sitemaps are not under their set's scope: not sent", outside))
	}
	res.Added, res.Changed, res.Removed, res.DryRun = ch.Added, ch.Changed, ch.Removed, n.dryRun
	for _, e := range res.Errors {
		n.log.Warn("indexnow: " + e)
	}
	n.log.Info("indexnow", "added", res.Added, "changed", res.Changed, "removed", res.Removed, "sitemaps_read", ch.Read,
		"sets", read, "requests", res.Requests, "sent", res.Sent, "accepted", res.Accepted, "failed", res.Failed)
	return res
}
