package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/sink"
	"golang.org/x/sync/errgroup"
)

// countingGets is a folder that counts its Gets.
type countingGets struct {
	*sink.Local
	gets atomic.Int64
}

func (c *countingGets) Get(ctx context.Context, name string) ([]byte, error) {
	c.gets.Add(1)
	return c.Local.Get(ctx, name)
}

// TestDestinationSets: the sets of a Destination read only the manifests
// its listing holds (a new set asks the store for nothing), and each set's
// prune sees the names of its own stem, temporary files included, and not
// those of a set whose stem starts like its own.
func TestDestinationSets(t *testing.T) {
	dir, local := tempLocal(t)
	store := &countingGets{Local: local}
	ctx := context.Background()
	names := []string{"sm-a-000001-0011223344.xml.gz", "sm-a.xml", ".sm-a-000002-0011223344.xml.gz.123.tmp",
		"sm-ab-000001-0011223344.xml.gz", "sm-b.xml", ".sm-b.xml.9.tmp", "other.txt"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDestination(ctx, store, NewLayout("sm"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	for _, stem := range []string{"sm-a", "sm-new"} {
		if _, err := Begin(ctx, store, NewLayout(stem), Options{Destination: d}); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.gets.Load(); n != 0 {
		t.Errorf("%d Gets for sets with no manifest listed; want 0", n)
	}
	for stem, want := range map[string][]string{
		"sm-a":  {"sm-a-000001-0011223344.xml.gz", "sm-a.xml", "sm-ab-000001-0011223344.xml.gz", ".sm-a-000002-0011223344.xml.gz.123.tmp"},
		"sm-b":  {"sm-b.xml", ".sm-b.xml.9.tmp"},
		"sm-ab": {"sm-ab-000001-0011223344.xml.gz"},
		"sm-c":  nil,
	} {
		got, err := d.listAfter(ctx, stem)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("listAfter(%q) = %q; want %q", stem, got, want)
		}
	}
}

// prepareNight opens a destination of sets sm-g0, sm-g1, … in store and
// prepares n sets there (prepareSets). It returns the destination, the
// sets' transactions and their shards' names.
func prepareNight(t *testing.T, store sink.Store, night, n int) (*Destination, []*Tx, []string) {
	t.Helper()
	d, err := OpenDestination(context.Background(), store, NewLayout("sm"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	stems := make([]string, n)
	for i := range stems {
		stems[i] = fmt.Sprintf("sm-g%d", i)
	}
	txs, shards := prepareSets(t, d, stems, Options{MaxShrink: 1}, night, 2)
	return d, txs, shards
}

// prepareSets begins a set of each stem in d with opt and prepares it with
// one shard whose bytes name the night (each night replaces every set's
// shard), indexes of fanout. It returns the transactions and the shards'
// names.
func prepareSets(t *testing.T, d *Destination, stems []string, opt Options, night, fanout int) ([]*Tx, []string) {
	t.Helper()
	ctx := context.Background()
	opt.Destination = d
	var txs []*Tx
	var shards []string
	for _, stem := range stems {
		l := NewLayout(stem)
		tx, err := Begin(ctx, d.Store(), l, opt)
		if err != nil {
			t.Fatal(err)
		}
		set := putShards(t, tx, l, fmt.Sprintf("night %d set %s", night, stem))
		shards = append(shards, set.Shards[0].Name)
		set.Rows, set.Fanout, set.Base = set.URLs, fanout, "https://ex.com/"
		if _, err := tx.Prepare(ctx, set); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	return txs, shards
}

// countingRenews is a folder whose locks count their renewals and can be
// made to fail them.
type countingRenews struct {
	*sink.Local
	renews atomic.Int64
	lost   atomic.Bool
}

type countedLock struct {
	sink.Lock
	c *countingRenews
}

func (c *countingRenews) Lock(ctx context.Context, name string, who sink.Holder, ttl time.Duration) (sink.Lock, error) {
	l, err := c.Local.Lock(ctx, name, who, ttl)
	if err != nil {
		return nil, err
	}
	return countedLock{l, c}, nil
}

func (l countedLock) Renew(ctx context.Context) error {
	l.c.renews.Add(1)
	if l.c.lost.Load() {
		return errors.New("taken over")
	}
	return l.Lock.Renew(ctx)
}

// TestDestinationConfirmsOnce: the sets of a destination, which share its
// lock, confirm it before their switch with one renewal for them all (a
// thousand groups on S3 made a thousand conditional writes), again once
// confirmEvery has passed, and every set learns of a lost lock.
func TestDestinationConfirmsOnce(t *testing.T) {
	local, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &countingRenews{Local: local}
	ctx := context.Background()
	d, err := OpenDestination(ctx, store, NewLayout("sm"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	var txs []*Tx
	for i := range 50 {
		tx, err := Begin(ctx, store, NewLayout(fmt.Sprintf("sm-g%d", i)), Options{Destination: d})
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	var g errgroup.Group
	for _, tx := range txs {
		g.Go(func() error { return tx.confirm(ctx) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := store.renews.Load(); n != 1 {
		t.Fatalf("%d renewals for 50 sets confirming at once; want 1", n)
	}
	d.renewMu.Lock()
	d.renewed = d.renewed.Add(-confirmEvery) // as if a second had passed
	d.renewMu.Unlock()
	store.lost.Store(true)
	for _, tx := range txs {
		// The message names the lock the sets share, not one of their own.
		if err := tx.confirm(ctx); err == nil || !strings.Contains(err.Error(), "lock .sm.lock was lost") {
			t.Fatalf("confirm after the lock was taken over: %v", err)
		}
	}
	if n := store.renews.Load(); n != 2 {
		t.Errorf("%d renewals; want 2 (the lost one told every set)", n)
	}
}

// checkedLock counts the looks at a lock (Err) and can be made lost.
type checkedLock struct {
	sink.Lock
	looks *atomic.Int64
	lost  *atomic.Bool
}

func (l checkedLock) Err() error {
	l.looks.Add(1)
	if l.lost.Load() {
		return errors.New("removed")
	}
	return l.Lock.Err()
}

type checkedLocks struct {
	*sink.Local
	looks atomic.Int64
	lost  atomic.Bool
}

func (c *checkedLocks) Lock(ctx context.Context, name string, who sink.Holder, ttl time.Duration) (sink.Lock, error) {
	l, err := c.Local.Lock(ctx, name, who, ttl)
	if err != nil {
		return nil, err
	}
	return checkedLock{l, &c.looks, &c.lost}, nil
}

// TestDestinationBatchLooksOnce: the batch steps of a destination's sets
// (manifests, roots, robots lines and prunes) look at the lock they share
// once a step, not once a set; a lock lost before the roots stops the
// switch of every set, and one lost before the prunes keeps every old file.
func TestDestinationBatchLooksOnce(t *testing.T) {
	for _, lose := range []string{"", "roots", "prunes"} {
		name := "lock kept"
		if lose != "" {
			name = "lost before " + lose
		}
		t.Run(name, func(t *testing.T) {
			dir, local := tempLocal(t)
			store := &checkedLocks{Local: local}
			ctx := context.Background()
			// Night 1 publishes each set, night 2 replaces its shard: the
			// prune of night 2 deletes night 1's shard (KeepGenerations 1).
			var olds []string
			for night := 1; night <= 2; night++ {
				d, txs, shards := prepareNight(t, store, night, 30)
				if night == 1 {
					olds = shards
				}
				if err := d.Sync(); err != nil {
					t.Fatal(err)
				}
				before := store.looks.Load()
				if err := d.PutManifests(ctx, txs); err != nil {
					t.Fatal(err)
				}
				if night == 2 && lose == "roots" {
					store.lost.Store(true)
				}
				err := d.PutRoots(ctx, txs)
				if night == 2 && lose == "roots" {
					if err == nil || !strings.Contains(err.Error(), "lock .sm.lock was lost") {
						t.Fatalf("PutRoots with the lock lost: %v", err)
					}
					if err := txs[0].PutRoot(ctx); err == nil || !strings.Contains(err.Error(), "lock .sm.lock was lost") {
						t.Fatalf("a set's PutRoot with the lock lost: %v", err)
					}
					for _, tx := range txs {
						tx.Abort(ctx)
					}
					d.Close(ctx)
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if night == 2 && lose == "prunes" {
					store.lost.Store(true)
				}
				if err := d.Finish(ctx, txs); err != nil {
					t.Fatal(err)
				}
				if n := store.looks.Load() - before; n > 3 {
					t.Errorf("night %d: %d looks at the lock for the batch steps of %d sets; want at most 3", night, n, len(txs))
				}
				d.Close(ctx)
			}
			for _, old := range olds {
				_, err := os.Stat(filepath.Join(dir, old))
				if kept := err == nil; kept != (lose != "") {
					t.Errorf("%s kept %v after night 2 (lock lost before %q)", old, kept, lose)
				}
			}
			if lose == "roots" {
				for i := range 30 {
					root, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("sm-g%d.xml", i)))
					if err != nil || !strings.Contains(string(root), olds[i]) {
						t.Fatalf("set %d: the root no longer lists night 1's shard after a switch refused: %v", i, err)
					}
				}
			}
		})
	}
}

// TestDestinationUnrooted: a set with a manifest and root is published; one
// with files but no root (a first publish that died before its switch) is
// unrooted, and Discard deletes its files, manifest included, and nothing
// of another set's; a published set is not discarded.
func TestDestinationUnrooted(t *testing.T) {
	dir := t.TempDir()
	var sum [32]byte
	a, b, c, ab, cd := NewLayout("s-a"), NewLayout("s-b"), NewLayout("s-c"), NewLayout("s-a-b"), NewLayout("s-c-d")
	files := []string{a.Root(), a.Manifest(), a.Shard(1, sum), a.Index(1),
		b.Manifest(), b.Shard(1, sum), b.Shard(2, sum), b.News(1), "." + b.Shard(3, sum) + ".42.tmp", b.Lock(),
		c.Shard(1, sum), c.Index(1), ab.Shard(1, sum), "s-notes.txt", "s.xml",
		cd.Root(), cd.Manifest(), cd.Shard(1, sum), cd.Index(1), cd.News(1), "." + cd.Shard(2, sum) + ".7.tmp"}
	for _, n := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for n, m := range map[string]string{
		"s-b.manifest.json": `{"version":1,"generation":1}`, // a first publish's
		"s-e.manifest.json": `{"version":1,"generation":3}`,
		"s-f.manifest.json": `{"version":`,
	} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := OpenDestination(ctx, store, NewLayout("s"), Options{Groups: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	published, unrooted, err := d.Sets(ctx, "s-")
	if err != nil {
		t.Fatal(err)
	}
	// s-e lost its root after three nights: published, not a dead first
	// publish; s-f's manifest cannot be read: not to delete either.
	if !slices.Equal(published, []string{"s-a", "s-c-d", "s-e", "s-f"}) || !slices.Equal(unrooted, []string{"s-a-b", "s-b", "s-c"}) {
		t.Errorf("Sets: published %q, unrooted %q; want [s-a s-c-d s-e s-f], [s-a-b s-b s-c]", published, unrooted)
	}
	if _, err := d.Discard(ctx, a); err == nil {
		t.Error("Discard of a published set: no error")
	}
	// A run of s-b alone that lives (holds its lock): nothing of it goes.
	live, err := store.Lock(ctx, b.Lock(), sink.Holder{Owner: "a run of s-b alone"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if deleted, err := d.Discard(ctx, b); !errors.Is(err, sink.ErrLocked) || len(deleted) > 0 {
		t.Fatalf("Discard under a live lock: deleted %q, %v; want nothing, ErrLocked", deleted, err)
	}
	if err := live.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A root that came since the listing: published, not discarded.
	if err := os.WriteFile(filepath.Join(dir, c.Root()), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if deleted, err := d.Discard(ctx, c); err == nil || len(deleted) > 0 {
		t.Fatalf("Discard of a set whose root came since: deleted %q, %v; want an error", deleted, err)
	}
	if err := os.Remove(filepath.Join(dir, c.Root())); err != nil {
		t.Fatal(err)
	}
	deleted, err := d.Discard(ctx, b) // and the dead run's lock file, taken over and released
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(deleted)
	want := []string{"." + b.Shard(3, sum) + ".42.tmp", b.Shard(1, sum), b.Shard(2, sum), b.News(1), b.Manifest()}
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %q; want %q", deleted, want)
	}
	// s-c beside the published s-c-d: only its own files go.
	deleted, err = d.Discard(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(deleted)
	if wantC := []string{c.Shard(1, sum), c.Index(1)}; !slices.Equal(deleted, wantC) {
		t.Errorf("deleted %q; want %q", deleted, wantC)
	}
	want = append(want, c.Shard(1, sum), c.Index(1), b.Lock())
	for _, n := range files {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone := errors.Is(err, os.ErrNotExist); gone != slices.Contains(want, n) {
			t.Errorf("%s: gone %v", n, gone)
		}
	}
}

// TestBeginInAWideDestination: a set begun in a Destination takes the
// memory its own files need, whatever else the shared listing holds. A
// thousand groups' second night built a set of the whole listing for each
// (4,000 names, 995 times: 0.3 s of CPU at 1M rows; docs/performance.md,
// round 17). Over a store whose listing gives sizes (its map is the
// Destination's) and one that gives names only (the Destination makes a set
// of them once).
func TestBeginInAWideDestination(t *testing.T) {
	for _, namesOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "a listing with sizes", true: "names only"}[namesOnly], func(t *testing.T) {
			testBeginInAWideDestination(t, namesOnly)
		})
	}
}

// namesStore is a store that lists names only (no sink.Stater).
type namesStore struct{ sink.Store }

func testBeginInAWideDestination(t *testing.T, namesOnly bool) {
	ctx := context.Background()
	perBegin := func(others int) uint64 {
		dir, local := tempLocal(t)
		var store sink.Store = local
		if namesOnly {
			store = namesStore{local}
		}
		if res, err := publishSet(t, store, 1, "a", "b"); err != nil || !res.Published {
			t.Fatalf("publish: %v", err)
		}
		for i := range others {
			n := fmt.Sprintf("sitemap-g%05d-000001-0011223344.xml.gz", i)
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := OpenDestination(ctx, store, NewLayout("sitemap"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close(ctx)
		const begins = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range begins {
			tx, err := Begin(ctx, store, NewLayout("sitemap"), Options{Destination: d, KeepGenerations: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(tx.known) != 2 {
				t.Fatalf("%d files known; want the 2 shards", len(tx.known))
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / begins
	}
	narrow, wide := perBegin(10), perBegin(1000)
	if wide > narrow+16<<10 {
		t.Errorf("Begin allocated %d bytes beside 1,000 other files, %d beside 10; want about the same", wide, narrow)
	}
	t.Logf("Begin allocated %d bytes beside 10 other files, %d beside 1,000", narrow, wide)
}

// countingLists is a folder that counts its listings.
type countingLists struct {
	*sink.Local
	lists atomic.Int64
}

func (c *countingLists) List(ctx context.Context) ([]string, error) {
	c.lists.Add(1)
	return c.Local.List(ctx)
}

func (c *countingLists) ListInfo(ctx context.Context) ([]sink.Info, error) {
	c.lists.Add(1)
	return c.Local.ListInfo(ctx)
}

// TestDestinationPrunesWhatWasListed: the prunes of a destination's sets
// take what they delete from the listing made when it was opened, so the
// store is not listed again after the switch, and a file of a set's name
// put there during the run (not by it) is left alone; the previous
// generation's files are deleted as before.
func TestDestinationPrunesWhatWasListed(t *testing.T) {
	dir, local := tempLocal(t)
	store := &countingLists{Local: local}
	ctx := context.Background()
	const sets = 3
	var olds []string
	stray := "sm-g0-000007-0123456789.xml.gz"
	for night := 1; night <= 2; night++ {
		d, txs, shards := prepareNight(t, store, night, sets)
		if night == 1 {
			olds = shards
		}
		if night == 2 {
			if err := os.WriteFile(filepath.Join(dir, stray), []byte("not this run's"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := d.PutManifests(ctx, txs); err != nil {
			t.Fatal(err)
		}
		if err := d.PutRoots(ctx, txs); err != nil {
			t.Fatal(err)
		}
		lists := store.lists.Load()
		if err := d.Finish(ctx, txs); err != nil {
			t.Fatal(err)
		}
		if n := store.lists.Load() - lists; n != 0 {
			t.Errorf("night %d: the prunes of %d sets listed the store %d times; want 0 (the listing of OpenDestination)", night, sets, n)
		}
		d.Close(ctx)
	}
	for _, old := range olds {
		if _, err := os.Stat(filepath.Join(dir, old)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("night 1's %s: %v after night 2; want it deleted", old, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, stray)); err != nil {
		t.Errorf("%s, put there during night 2, was deleted by its prune: %v", stray, err)
	}
}
