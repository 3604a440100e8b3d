package publish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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
	log   *slog.Logger

	before []string
	info   map[string]sink.Info

	mu     sync.Mutex
	after  []string // the listing after the switch, shared by the prunes
	listed bool
	owned  []func(string) bool // the Owned of every set begun

	synced  sync.Once
	syncErr error
}

// OpenDestination takes the lock of store named after l (the lock of the
// set l names, so that a run publishing that set alone and a run
// publishing groups beside it exclude each other) and lists the store. The
// lock is held until Close.
func OpenDestination(ctx context.Context, store sink.Store, l Layout, opt Options) (_ *Destination, err error) {
	d := &Destination{store: store, name: l.Stem(), log: opt.Log}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if lk, ok := store.(sink.Locker); ok {
		ttl := opt.LockTTL
		if ttl <= 0 {
			ttl = DefaultLockTTL
		}
		if d.lock, err = lk.Lock(ctx, l.Lock(), owner(), ttl); err != nil {
			return nil, err
		}
	}
	t := &Tx{store: store}
	if err := t.list(ctx); err != nil {
		d.Close(ctx)
		return nil, err
	}
	d.before, d.info = t.before, t.info
	return d, nil
}

// Store returns the store.
func (d *Destination) Store() sink.Store { return d.store }

// Stems returns the stems of the sets whose manifest the store held when
// it was opened that start with prefix: for a grouped run, the groups
// published before.
func (d *Destination) Stems(prefix string) []string {
	var stems []string
	for _, n := range d.before {
		if stem, ok := strings.CutSuffix(n, ".manifest.json"); ok && strings.HasPrefix(stem, prefix) && !strings.HasPrefix(n, ".") {
			stems = append(stems, stem)
		}
	}
	return stems
}

// listAfter lists the store once for every prune after the switch: each
// set deletes only its own names, so one listing serves them all.
func (d *Destination) listAfter(ctx context.Context) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listed {
		return d.after, nil
	}
	names, err := d.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.store, err)
	}
	d.after, d.listed = names, true
	return names, nil
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
