package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
)

// publish commits the transaction of every set with the shards the run
// wrote.
func (r *run) publish(ctx context.Context) error {
	rep := r.rep
	if rep.URLs == 0 {
		return fmt.Errorf("%w: %d rows read, %d rejected", ErrNoURLs, rep.Rows, rep.Rejected.Total)
	}
	if r.main == nil {
		return r.publishGroups(ctx)
	}
	s := r.main
	rep.Shards = len(s.shards)
	if rep.News != nil {
		rep.News.Sitemaps = len(s.newsFiles)
	}
	res, err := s.tx.Commit(ctx, r.publishSet(s, rep.Rows, rep.URLs, rep.Rejected.Total))
	rep.Published, rep.Generation, rep.Indexes, rep.Root = res.Published, res.Generation, res.Indexes, res.Root
	rep.Submit, rep.Files, rep.Deleted = res.Submit, res.Files, res.Deleted
	rep.ShardsNew, rep.ShardsUnchanged, rep.ShardsRemoved, rep.RobotsChanged = res.ShardsNew, res.ShardsUnchanged, res.ShardsRemoved, res.RobotsChanged
	return err
}

// publishSet is what set s publishes.
func (r *run) publishSet(s *set, rows, urls, rejected int64) publish.Set {
	if d := shard.IndexDepth(len(s.shards)+len(s.newsFiles), r.cfg.Fanout); d > protocol.MaxIndexDepth {
		// Allowed (a small --index-fanout nests deep), but crawlers, and
		// validate unless told, follow fewer levels.
		r.log.Warn(fmt.Sprintf("the indexes nest %d levels above the sitemaps, more than the %d crawlers and validate follow: raise --index-fanout, or validate with --max-depth %d",
			d, protocol.MaxIndexDepth, d), "set", s.layout.Stem())
	}
	return publish.Set{
		Shards: s.shards, News: s.newsFiles, Rows: rows, URLs: urls, Rejected: rejected,
		Fanout: r.cfg.Fanout, Base: s.place.PublicURL.String(), SchemaLocation: r.cfg.SchemaLocation,
	}
}

// publishGroups publishes every group's set as one: each is prepared (its
// indexes written, verified), then all switch one after another, and only
// then are the robots lines written and the old files pruned. A failure
// before the last switch puts back the roots already switched: every
// group's previous set stays live.
func (r *run) publishGroups(ctx context.Context) error {
	sets := r.sets()
	for _, s := range sets {
		if s.err != nil {
			return fmt.Errorf("group %q: %w", s.group, s.err)
		}
	}
	if err := r.vanished(ctx, sets); err != nil {
		return err
	}
	defer r.reportGroups(sets)
	var ready []*set
	for _, s := range sets {
		if s.urls > 0 {
			ready = append(ready, s)
		} else if err := r.noURLs(s); err != nil {
			return err
		}
	}
	err := r.eachSet(ctx, ready, func(s *set) error {
		var rejected int64
		for _, n := range s.reasons {
			rejected += n
		}
		var err error
		s.res, err = s.tx.Prepare(ctx, r.publishSet(s, s.rows, s.urls, rejected))
		return err
	})
	if err != nil {
		return err
	}
	// The switch: every manifest, one sync per destination, every root.
	// A folder takes each step as one batch (publish.Destination.Batches):
	// its files are written, made durable in one sync, then renamed.
	err = r.eachStep(ctx, ready, (*publish.Destination).PutManifests, func(s *set) error { return s.tx.PutManifest(ctx) })
	if err != nil {
		return err
	}
	for _, d := range r.openDestinations() {
		if !d.Batches() { // PutManifests synced it
			if err := d.Sync(); err != nil {
				return err
			}
		}
	}
	if err := r.eachStep(ctx, ready, (*publish.Destination).PutRoots, func(s *set) error { return s.tx.PutRoot(ctx) }); err != nil {
		return r.unswitch(ctx, ready, err)
	}
	ctx = context.WithoutCancel(ctx)
	return r.eachStep(ctx, ready, (*publish.Destination).Finish, func(s *set) error { return s.tx.Finish(ctx) })
}

// eachStep takes a step of the switch for every set: in one batch for the
// sets of each destination that takes batches, else set by set (eachSet).
func (r *run) eachStep(ctx context.Context, sets []*set, batch func(*publish.Destination, context.Context, []*publish.Tx) error, each func(*set) error) error {
	var one []*set
	byDest := map[*publish.Destination][]*publish.Tx{}
	var dests []*publish.Destination // in the sets' order: deterministic
	for _, s := range sets {
		d, err := r.destination(ctx, s.place.Sink) // opened at begin
		if err != nil {
			return err
		}
		if !d.Batches() {
			one = append(one, s)
			continue
		}
		if _, ok := byDest[d]; !ok {
			dests = append(dests, d)
		}
		byDest[d] = append(byDest[d], s.tx)
	}
	var errs []error
	for _, d := range dests {
		if err := batch(d, ctx, byDest[d]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Store(), err))
		}
	}
	errs = append(errs, r.eachSet(ctx, one, each))
	return errors.Join(errs...)
}

// eachSet calls do for every set, as many at once as the run uploads,
// and returns the errors, each naming its group. All are called: a step
// that failed for one set is not left half done for the others.
//
// setsAtOnce goroutines take the sets in turn (a goroutine a set would
// grow a fresh stack for each of a thousand groups' steps).
func (r *run) eachSet(ctx context.Context, sets []*set, do func(*set) error) error {
	var mu sync.Mutex
	var errs []error
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(r.cfg.Uploads, setsAtOnce), len(sets)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(sets)); i = next.Add(1) - 1 {
				s := sets[i]
				if err := do(s); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("group %q: %w", s.group, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setsAtOnce bounds the sets whose publish step runs at once: a step reads
// or writes a file or two of a few kilobytes, so on S3 it mostly waits on
// round trips. With 20 ms a request, 995 groups' first run took 12.7 s with
// 8 at once (--uploads, sized for shards of megabytes) and 6.3 s with 32
// (the rest is mostly the small groups' shards, uploaded --uploads at once).
// A folder takes the steps in batches (Destination); its Prepare is CPU
// work, which more goroutines only share out.
const setsAtOnce = 32

// unswitch puts back the previous roots of the sets that switched (a set
// that did not is left alone) when another failed with err, and says what
// is live.
func (r *run) unswitch(ctx context.Context, switched []*set, err error) error {
	var stuck []string
	for _, s := range switched {
		if uerr := s.tx.Unswitch(ctx); uerr != nil {
			r.log.Error("a group's new set stays live", "group", s.group, "err", uerr)
			stuck = append(stuck, s.group)
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%w; the new sets of %s could not be put back and are live", err, strings.Join(stuck, ", "))
	}
	return err
}

// noURLs decides about a group whose every row was rejected: a shrink of
// 100% if it was published before (refused unless forced), else nothing
// to publish. Its previous set, if any, stays as it is.
func (r *run) noURLs(s *set) error {
	if prev := s.tx.Published(); prev != nil && !r.shrinkAllowed() {
		return fmt.Errorf("group %q: %w: no URL accepted (%d rows rejected), the published set has %d: -100%%; nothing published (force to publish the other groups anyway)",
			s.group, publish.ErrShrink, s.rows, prev.URLs)
	}
	r.log.Warn("a group has no URL to publish: its set is left as it was", "group", s.group, "rows", s.rows)
	return nil
}

// shrinkAllowed reports whether a group may lose every URL.
func (r *run) shrinkAllowed() bool { return r.cfg.Force || r.cfg.MaxShrink >= 1 }

// vanished refuses, unless forced, a run whose shared destination holds a
// group's published set (a root and manifest named NAME-GROUP) that the
// input no longer has, or, with a destination per group, one whose group's
// destination holds one (Grouping.Vanished): its URLs would all go.
// Forced, the set is left as it was and reported. In a shared destination
// the files of a set NAME-GROUP never published (no root: a first publish
// that died) whose group the input no longer has are deleted (discard),
// unless the run is refused.
func (r *run) vanished(ctx context.Context, sets []*set) error {
	var gone []string // group names
	switch {
	case r.cfg.Group.Place != nil && !r.sharedFolder():
		if r.cfg.Group.Vanished == nil {
			return nil
		}
		have := make([]string, len(sets))
		for i, s := range sets {
			have[i] = s.group
		}
		var err error
		if gone, err = r.cfg.Group.Vanished(ctx, have); err != nil {
			return fmt.Errorf("groups: looking for published groups gone from the input: %w", err)
		}
	case r.cfg.Sink != nil:
		d, err := r.destination(ctx, r.cfg.Sink) // opened at begin
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, s := range sets {
			have[s.layout.Stem()] = true
		}
		published, unrooted, err := d.Sets(ctx, r.cfg.Name+"-")
		if err != nil {
			return fmt.Errorf("groups: looking for published groups gone from the input: %w", err)
		}
		for _, stem := range published {
			if !have[stem] {
				gone = append(gone, strings.TrimPrefix(stem, r.cfg.Name+"-"))
			}
		}
		if len(gone) == 0 || r.shrinkAllowed() { // not a refused run's
			for _, stem := range unrooted {
				if !have[stem] {
					r.discard(ctx, d, publish.NewLayout(stem))
				}
			}
		}
	}
	for _, group := range gone {
		if !r.shrinkAllowed() {
			return fmt.Errorf("%w: group %q is published but has no row in the input: a shrink of 100%%; nothing published (force to publish the other groups anyway; its set stays as it is)",
				ErrGroupVanished, group)
		}
		r.log.Warn("a published group is not in the input: its set is left as it was", "group", group)
		g := GroupReport{Group: group, Vanished: true, Rejected: Counts{ByReason: map[string]int64{}}}
		if p, err := r.groupPlace(group); err == nil { // where its set is, to find it by
			g.Name, g.PublicURL, g.Destination = p.Name, p.PublicURL.String(), p.Sink.String()
		}
		r.rep.Groups = append(r.rep.Groups, g)
	}
	return nil
}

// discard deletes in d what a group's first publish left that died before
// its switch, the group gone from the input since: nothing lists those
// files, and no later run of this input would touch them. A failure is
// a warning: the files harm nothing, and the next run tries again.
func (r *run) discard(ctx context.Context, d *publish.Destination, l publish.Layout) {
	deleted, err := d.Discard(ctx, l)
	r.rep.Deleted = append(r.rep.Deleted, deleted...)
	switch {
	case err != nil:
		r.log.Warn("could not delete the files of a set never published (the next run tries again)", "set", l.Stem(), "err", err)
	case r.cfg.DryRun:
		r.log.Warn("would delete the files of a set never published (a first publish that died before its switch), not in the input now",
			"set", l.Stem(), "files", len(deleted))
	default:
		r.log.Warn("deleted the files of a set never published (a first publish that died before its switch), not in the input now",
			"set", l.Stem(), "files", len(deleted))
	}
}

// sharedFolder reports whether Grouping.Place puts the groups in
// Config.Sink beside one another.
func (r *run) sharedFolder() bool {
	for _, s := range r.groups.all() {
		if s.place.Sink != r.cfg.Sink {
			return false
		}
	}
	return true
}

// reportGroups writes each set's share of the report, and the run's
// totals from them.
func (r *run) reportGroups(sets []*set) {
	rep := r.rep
	rep.Published = len(sets) > 0
	for _, s := range sets {
		g := GroupReport{Group: s.group, Name: s.layout.Stem(), PublicURL: s.place.PublicURL.String(),
			Destination: s.place.Sink.String(), Rows: s.rows, URLs: s.urls, Rejected: Counts{ByReason: map[string]int64{}},
			Shards: len(s.shards), News: len(s.newsFiles)}
		for reason, n := range s.reasons {
			g.Rejected.add(encode.Reason(reason).String(), n)
		}
		rep.Shards += g.Shards
		if rep.News != nil {
			rep.News.Sitemaps += g.News
		}
		if res := s.res; res != nil {
			g.Indexes, g.ShardsNew, g.ShardsUnchanged, g.ShardsRemoved = res.Indexes, res.ShardsNew, res.ShardsUnchanged, res.ShardsRemoved
			g.Published, g.Generation, g.Root, g.Submit, g.RobotsChanged = res.Published, res.Generation, res.Root, res.Submit, res.RobotsChanged
			g.Files, g.Deleted = res.Files, res.Deleted
			rep.Indexes += res.Indexes
			rep.ShardsNew += res.ShardsNew
			rep.ShardsUnchanged += res.ShardsUnchanged
			rep.ShardsRemoved += res.ShardsRemoved
			rep.RobotsChanged = rep.RobotsChanged || res.RobotsChanged
			rep.Submit = append(rep.Submit, res.Submit...)
			rep.Files = append(rep.Files, res.Files...)
			rep.Deleted = append(rep.Deleted, res.Deleted...)
		}
		rep.Published = rep.Published && (g.Published || s.urls == 0)
		rep.Groups = append(rep.Groups, g)
	}
	slices.SortFunc(rep.Groups, func(a, b GroupReport) int { return strings.Compare(a.Group, b.Group) })
	r.warnIndexesPerHost()
}

// searchConsoleIndexes is how many sitemap index files Search Console
// takes per site.
const searchConsoleIndexes = 500

// warnIndexesPerHost warns of a host whose groups' sets have more index
// files, together, than Search Console takes for one site.
func (r *run) warnIndexesPerHost() {
	perHost := map[string]int{}
	for _, g := range r.rep.Groups {
		if u, err := url.Parse(g.PublicURL); err == nil {
			perHost[u.Host] += g.Indexes
		}
	}
	for _, host := range slices.Sorted(maps.Keys(perHost)) {
		if n := perHost[host]; n > searchConsoleIndexes {
			r.log.Warn("more sitemap index files on one host than Search Console takes per site: submit the robots lines, group more coarsely, or raise --index-fanout",
				"host", host, "indexes", n, "limit", searchConsoleIndexes)
		}
	}
}
