package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sitemapgen/sitemapgen/sink"
)

// Destination is one store that several sets are published to as one (the
// groups of a run): it takes the store's lock once and lists the store once
// for every set's Tx (Options.Destination), so that a thousand sets cost
// one lock and one listing, not a thousand. The sets are then prepared one
// by one, switched one after another (Tx.Switch; on a failure the ones
// already switched are put back with Tx.Unswitch), and finished.
type Destination struct {
	store sink.Store
	name  string // the lock's set, for messages
	lock  sink.Lock
	ttl   time.Duration // of the locks taken (Discard)
	log   *slog.Logger

	listing          // when it was opened, shared by its sets' Txs
	sorted  []string // listing.before, sorted: shared by the prunes

	mu     sync.Mutex
	after  []string // the listing after a failed switch, shared by the aborts
	listed bool
	owned  []func(string) bool // the Owned of every set begun

	synced  sync.Once
	syncErr error

	renewMu  sync.Mutex
	renewed  time.Time // when confirm last renewed the lock
	renewErr error
}

// confirmEvery is how long one renewal of a destination's lock confirms
// it for every set switched there: a thousand groups' switches ask in
// turn, and one conditional write each would be a thousand round trips
// (on S3) for what one answers.
const confirmEvery = time.Second

// holding is Tx.holding for all the sets of d: they share its lock. A
// batch step looks once (two system calls for a folder's lock), not once
// for each of a thousand groups.
func (d *Destination) holding() error {
	if d.lock == nil {
		return nil
	}
	if err := d.lock.Err(); err != nil {
		return fmt.Errorf("the destination's lock %s was lost (%w); nothing published", NewLayout(d.name).Lock(), err)
	}
	return nil
}

// confirmHeld is Tx.confirm for all the sets of d.
func (d *Destination) confirmHeld(ctx context.Context) error {
	if err := d.holding(); err != nil || d.lock == nil {
		return err
	}
	return d.confirm(ctx)
}

// confirm is Tx.confirm for the sets of d: it renews the lock unless it
// was renewed within confirmEvery.
func (d *Destination) confirm(ctx context.Context) error {
	d.renewMu.Lock()
	defer d.renewMu.Unlock()
	if d.renewErr != nil {
		return d.renewErr
	}
	if !d.renewed.IsZero() && time.Since(d.renewed) < confirmEvery {
		return nil
	}
	if err := d.lock.Renew(ctx); err != nil {
		d.renewErr = fmt.Errorf("the destination's lock %s was lost (%w); nothing published", NewLayout(d.name).Lock(), err)
		return d.renewErr
	}
	d.renewed = time.Now()
	return nil
}

// OpenDestination takes the lock of store named after l (the lock of the
// set l names, so that a run publishing that set alone and a run
// publishing groups beside it exclude each other) and lists the store.
// With opt.Groups (the groups' sets are l's name and the group's, side by
// side) a live lock of any set NAME-… there refuses the run: a run of a
// group's set alone. The lock is held until Close.
func OpenDestination(ctx context.Context, store sink.Store, l Layout, opt Options) (_ *Destination, err error) {
	d := &Destination{store: store, name: l.Stem(), log: opt.Log, ttl: opt.LockTTL}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.ttl <= 0 {
		d.ttl = DefaultLockTTL
	}
	if lk, ok := store.(sink.Locker); ok {
		if d.lock, err = lockWaiting(ctx, lk, l.Lock(), sink.Holder{Owner: owner(), Groups: opt.Groups}, d.ttl, opt.LockWait, d.log); err != nil {
			return nil, err
		}
	}
	if d.listing, err = list(ctx, store); err != nil {
		d.Close(ctx)
		return nil, err
	}
	d.sorted = slices.Sorted(slices.Values(d.before))
	if lk, ok := store.(sink.Locker); ok && opt.Groups {
		if err := d.setsHeld(ctx, lk); err != nil {
			d.Close(ctx)
			return nil, err
		}
	}
	return d, nil
}

// Store returns the store.
func (d *Destination) Store() sink.Store { return d.store }

// Sets returns the stems, starting with prefix, of the sets in the store
// when it was opened that are Published and those Unrooted (StateOf).
func (d *Destination) Sets(ctx context.Context, prefix string) (published, unrooted []string, err error) {
	for _, stem := range d.stems(prefix) {
		st, err := StateOf(ctx, d.store, NewLayout(stem), d.had, true)
		if err != nil {
			return nil, nil, err
		}
		switch st {
		case Published:
			published = append(published, stem)
		case Unrooted:
			unrooted = append(unrooted, stem)
		}
	}
	return published, unrooted, nil
}

// stems returns the stems, starting with prefix, of every set with a file
// in the store when it was opened, sorted.
func (d *Destination) stems(prefix string) []string {
	seen := map[string]bool{}
	for _, n := range d.before {
		if stem, ok := StemOf(n); ok && strings.HasPrefix(stem, prefix) {
			seen[stem] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Discard deletes the files of the set l names that the store held when
// it was opened, its manifest included, but not its lock: the leftovers
// of a first publish that died before its switch (Sets). A set whose
// root is there is published, and is refused. It returns the names
// deleted.
//
// A set of another name than d's is deleted under its own lock too, taken
// over if expired (an error wrapping sink.ErrLocked if live): a run of
// that set alone may be paused, not dead, past its lock's expiry (a
// frozen container), and must find its lock lost, and publish nothing,
// rather than switch to a root whose sitemaps are gone. Its root is
// looked for again once the lock is held.
func (d *Destination) Discard(ctx context.Context, l Layout) ([]string, error) {
	if d.had(l.Root()) {
		return nil, fmt.Errorf("%s: the set %s is published (%s): not discarded", d.store, l.Stem(), l.Root())
	}
	if err := d.confirmHeld(ctx); err != nil {
		return nil, err
	}
	if lk, ok := d.store.(sink.Locker); ok && l.Stem() != d.name {
		lock, err := lockWaiting(ctx, lk, l.Lock(), sink.Holder{Owner: owner()}, d.ttl, 0, d.log)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
				d.log.Warn("release a discarded set's lock", "lock", l.Lock(), "err", err)
			}
		}()
		switch _, err := d.store.Get(ctx, l.Root()); {
		case err == nil:
			return nil, fmt.Errorf("%s: the set %s was published since the listing (%s): not discarded", d.store, l.Stem(), l.Root())
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	var plan []string
	for _, n := range d.before {
		if k := l.Kind(n); k != Foreign && k != LockFile {
			plan = append(plan, n)
		}
	}
	return deleteAll(ctx, d.store, plan)
}

// listedBefore returns the names of the listing taken when d was opened
// that may be of the set whose names start with stem, for its prune after
// the switch. What a prune may delete was there before the run: the files
// the run wrote are the new generation's, kept (a temporary file of its own
// it failed to remove is the next run's to prune). So no set lists the store
// again, which took a run of a thousand groups 5 ms at its end for a
// folder of 4,000 files (a request per thousand names on S3), and a file
// another process put there meanwhile is never deleted. One sorted copy
// serves every set, each looking only at its own range of it.
func (d *Destination) listedBefore(stem string) []string {
	return slices.Concat(withPrefix(d.sorted, stem), withPrefix(d.sorted, "."+stem))
}

// listAfter lists the store once for every abort after a failed switch,
// and returns the names that may be of the set whose names start with
// stem, as listedBefore does.
func (d *Destination) listAfter(ctx context.Context, stem string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.listed {
		names, err := d.store.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", d.store, err)
		}
		slices.Sort(names)
		d.after, d.listed = names, true
	}
	// A set's names start with its stem, or with a dot and its stem (its
	// temporary files): see Layout.Kind.
	return append(slices.Clip(withPrefix(d.after, stem)), withPrefix(d.after, "."+stem)...), nil
}

// withPrefix returns the names of sorted that start with prefix.
func withPrefix(sorted []string, prefix string) []string {
	i, _ := slices.BinarySearch(sorted, prefix)
	j := i
	for j < len(sorted) && strings.HasPrefix(sorted[j], prefix) {
		j++
	}
	return sorted[i:j]
}

// Sync makes the store's names durable, where the store can (sink.Syncer).
func (d *Destination) Sync() error {
	if s, ok := d.store.(sink.Syncer); ok {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", d.store, err)
		}
	}
	return nil
}

// syncOnce is Sync, once: for the shards of every set.
func (d *Destination) syncOnce() error {
	d.synced.Do(func() { d.syncErr = d.Sync() })
	return d.syncErr
}

func (d *Destination) begun(l Layout) {
	d.mu.Lock()
	d.owned = append(d.owned, l.Owned)
	d.mu.Unlock()
}

// Close aborts the incomplete uploads of every set begun in d and gives up
// the lock.
func (d *Destination) Close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	d.mu.Lock()
	owned := d.owned
	d.mu.Unlock()
	if a, ok := d.store.(sink.Aborter); ok && len(owned) > 0 {
		if _, err := a.AbortIncomplete(ctx, func(name string) bool {
			for _, o := range owned {
				if o(name) {
					return true
				}
			}
			return false
		}); err != nil {
			d.log.Warn("abort incomplete uploads", "err", err)
		}
	}
	if d.lock == nil {
		return
	}
	if err := d.lock.Release(ctx); err != nil && !errors.Is(err, context.Canceled) {
		d.log.Warn("release the destination's lock", "lock", "."+d.name+".lock", "err", err)
	}
	d.lock = nil
}

// Batches reports whether the store puts many files as one
// (sink.Batcher): then PutManifests, PutRoots and Finish switch the sets of
// d in three batches instead of a sync per file.
func (d *Destination) Batches() bool {
	_, ok := d.store.(sink.Batcher)
	return ok
}

// PutManifests is Tx.PutManifest for every tx, sets of d that Prepare
// made ready, in one batch, durable when it returns (the sync between the
// manifests and the roots of Tx.Switch).
func (d *Destination) PutManifests(ctx context.Context, txs []*Tx) error {
	// The sets share d's lock: one look and one renewal answer for all.
	if err := d.confirmHeld(ctx); err != nil {
		return err
	}
	files := make([]sink.File, len(txs))
	for i, t := range txs {
		var err error
		if files[i], err = t.preparedManifest(); err != nil {
			return err
		}
	}
	err := d.putAll(ctx, txs, files, func(t *Tx) {
		t.mu.Lock()
		t.manifest = true
		t.mu.Unlock()
	})
	return err
}

// PutRoots is Tx.PutRoot for every tx in one batch: the switch of them
// all. On error, the sets whose root is in place are switched (Tx.Unswitch
// puts them back), the others are not.
func (d *Destination) PutRoots(ctx context.Context, txs []*Tx) error {
	if err := d.holding(); err != nil {
		return err
	}
	var put []*Tx
	var files []sink.File
	for _, t := range txs {
		if p := t.ready; p.rootSame {
			t.skipFixed(p.root, p.rootData)
			t.rootPut()
		} else {
			put = append(put, t)
			files = append(files, sink.File{Name: p.root, Data: p.rootData})
		}
	}
	if len(files) == 0 {
		return nil
	}
	// Not canceled half way, as Tx.putRoot: the switch is one step.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	return d.putAll(ctx, put, files, (*Tx).rootPut)
}

// Finish is Tx.Finish for every tx, switched, with their robots lines
// written in one batch.
func (d *Destination) Finish(ctx context.Context, txs []*Tx) error {
	ctx = context.WithoutCancel(ctx)
	var put []int // the txs whose robots lines are written
	var files []sink.File
	for i, t := range txs {
		if p := t.ready; p.robotsSame {
			t.skipFixed(p.robotsName, p.robots)
		} else {
			put = append(put, i)
			files = append(files, t.robotsFile())
		}
	}
	var placed []string
	var err error
	if len(files) > 0 {
		placed, err = d.store.(sink.Batcher).PutAll(ctx, files)
	}
	errs := make([]error, len(txs)+1)
	if len(placed) == len(files) {
		errs[len(txs)] = err // else told for each set below
	}
	lost := d.holding() // for every set's prune
	for k, i := range put {
		if k < len(placed) {
			txs[i].counted(files[k])
		} else {
			errs[i] = fmt.Errorf("write %s: %w", files[k].Name, err)
		}
	}
	// The prunes of a few sets at once, as Tx.Finish's would be: a few
	// goroutines take the sets in turn.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(finishesAtOnce, len(txs)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(txs)); i = next.Add(1) - 1 {
				errs[i] = txs[i].finish(ctx, errs[i], lost)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// finishesAtOnce bounds the sets Destination.Finish finishes at once.
const finishesAtOnce = 4

// putAll puts files, one of each tx, in one batch, and calls done for the
// txs whose file is in place.
func (d *Destination) putAll(ctx context.Context, txs []*Tx, files []sink.File, done func(*Tx)) error {
	placed, err := d.store.(sink.Batcher).PutAll(ctx, files)
	for i := range placed {
		txs[i].counted(files[i])
		done(txs[i])
	}
	if err != nil && len(placed) < len(files) {
		return fmt.Errorf("write %s: %w", files[len(placed)].Name, err)
	}
	return err
}

// setsHeld returns a *sink.LockedError, wrapped, when a live run holds the
// lock of a set NAME-… in the listing: a run of one of the groups' sets
// alone. Locks are in the listing only while taken (a released one is
// removed), so a run usually looks at none.
func (d *Destination) setsHeld(ctx context.Context, lk sink.Locker) error {
	for _, n := range d.before {
		rest, ok := strings.CutPrefix(n, "."+d.name+"-")
		group, isLock := strings.CutSuffix(rest, ".lock")
		stem := d.name + "-" + group
		if !ok || !isLock || ValidStem(stem) != nil {
			continue
		}
		if err := lk.Held(ctx, n); err != nil {
			return fmt.Errorf("a run of set %s alone may publish a group of this grouped run: %w", stem, err)
		}
	}
	return nil
}
