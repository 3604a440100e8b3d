package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/sink"
)

// TestDiedBetweenManifestAndRoot: a run that dies after putting its
// manifest and before its root leaves the manifest a generation ahead of
// the live root. The next run must still keep, for the grace period, the
// generation that was live (and the one whose intermediate indexes were
// rewritten in place before the death): with one generation kept, the
// shards of both are still there after its switch, and go only a run
// later. With none kept there is no grace to give: both go at once. Sets
// whose root lists the sitemaps, and sets with intermediate indexes. The
// change said after the switch (Options.Switched: IndexNow) is against
// the generation that was live.
func TestDiedBetweenManifestAndRoot(t *testing.T) {
	for _, tc := range []struct{ keep, fanout int }{{1, 10}, {1, 2}, {0, 10}, {2, 10}} {
		name := fmt.Sprintf("keep %d fanout %d", tc.keep, tc.fanout)
		dir, store := tempLocal(t)
		ctx := context.Background()
		l := NewLayout("sitemap")
		var sawPrev int64 // the generation Switched was told was live before
		night := func(n int, die bool, shards ...string) {
			t.Helper()
			now := time.Date(2026, 1, n, 2, 0, 0, 0, time.UTC)
			switched := func(_ context.Context, prev, _ *Manifest) {
				if prev != nil {
					sawPrev = prev.Generation
				}
			}
			tx, err := Begin(ctx, store, l, Options{KeepGenerations: tc.keep, MaxShrink: 1, Now: now, Switched: switched})
			if err != nil {
				t.Fatal(err)
			}
			set := putShards(t, tx, l, shards...)
			set.Rows, set.Fanout, set.Base = set.URLs, tc.fanout, "https://ex.com/"
			if !die {
				if res, err := tx.Commit(ctx, set); err != nil || !res.Published {
					t.Fatalf("%s: night %d: %v", name, n, err)
				}
				return
			}
			if _, err := tx.Prepare(ctx, set); err != nil {
				t.Fatal(err)
			}
			if err := tx.PutManifest(ctx); err != nil {
				t.Fatal(err)
			}
			tx.release() // the process is gone, and its lock with it
		}
		shardsOf := func(gen int64) []string {
			t.Helper()
			m, _, err := ReadManifest(ctx, store, l)
			if err != nil || m == nil {
				t.Fatalf("%s: manifest %v, %v", name, m, err)
			}
			for _, g := range m.Generations() {
				if g.Generation == gen {
					var ns []string
					for _, f := range g.Files {
						if l.IsShard(f.Name) {
							ns = append(ns, f.Name)
						}
					}
					return ns
				}
			}
			t.Fatalf("%s: the manifest has no generation %d", name, gen)
			return nil
		}
		kept := func(when string, files []string, want bool) {
			t.Helper()
			have := names(t, dir)
			for _, n := range files {
				if slices.Contains(have, n) != want {
					t.Errorf("%s: %s: %s kept %v; want %v", name, when, n, !want, want)
				}
			}
		}

		night(1, false, "a1", "b1", "c1")
		gen1 := shardsOf(1)
		root1, err := os.ReadFile(filepath.Join(dir, l.Root()))
		if err != nil {
			t.Fatal(err)
		}
		night(2, true, "a2", "b2", "c2")
		if got, _ := os.ReadFile(filepath.Join(dir, l.Root())); string(got) != string(root1) {
			t.Fatalf("%s: the root changed without a switch", name)
		}
		gen2 := shardsOf(2)
		kept("after the death", append(slices.Clone(gen1), gen2...), true)

		// Night 3: night 1's root was live until its switch.
		night(3, false, "a3", "b3", "c3")
		kept("night 3", append(slices.Clone(gen1), gen2...), tc.keep > 0)
		// What changed for crawlers (IndexNow) is against what they saw.
		want := int64(1)
		if tc.keep == 0 {
			want = 2 // the manifest describes no generation but its own
		}
		if sawPrev != want {
			t.Errorf("%s: night 3 was switched from generation %d; want %d", name, sawPrev, want)
		}

		// Night 4: night 3's set was live; the older ones go as usual
		// (generation 2 stays with two kept).
		night(4, false, "a3", "b3", "c3")
		kept("night 4", gen1, false)
		kept("night 4", gen2, tc.keep > 1)
	}
}

// TestDestinationDiedBetweenManifestsAndRoots: the same for the sets of a
// destination (a grouped run), killed after all their manifests and
// before any root, so that the second set's root was not even read: the
// next night keeps every set's live generation.
func TestDestinationDiedBetweenManifestsAndRoots(t *testing.T) {
	dir, store := tempLocal(t)
	ctx := context.Background()
	stems := []string{"sm-a", "sm-b", "sm-c"}
	night := func(n int, die bool) (shards []string) {
		t.Helper()
		now := time.Date(2026, 1, n, 2, 0, 0, 0, time.UTC)
		d, err := OpenDestination(ctx, store, NewLayout("sm"), Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close(ctx) // a dead process's lock is gone too
		txs, shards := prepareSets(t, d, stems, Options{KeepGenerations: 1, MaxShrink: 1, Now: now}, n, 10)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := d.PutManifests(ctx, txs); err != nil {
			t.Fatal(err)
		}
		if die {
			return shards
		}
		if err := d.PutRoots(ctx, txs); err != nil {
			t.Fatal(err)
		}
		if err := d.Finish(ctx, txs); err != nil {
			t.Fatal(err)
		}
		return shards
	}
	gen1 := night(1, false)
	gen2 := night(2, true)
	night(3, false)
	have := names(t, dir)
	for _, n := range append(slices.Clone(gen1), gen2...) {
		if !slices.Contains(have, n) {
			t.Errorf("night 3 deleted %s, of a generation live until its switch", n)
		}
	}
	night(4, false)
	have = names(t, dir)
	for _, n := range append(slices.Clone(gen1), gen2...) {
		if slices.Contains(have, n) {
			t.Errorf("night 4 kept %s, two generations back", n)
		}
	}
}

// TestDiedBetweenRootAndRobots: a run killed after its switch, before its
// robots lines are written, leaves the manifest recording lines the
// destination does not hold. The next run, with the same lines, writes the
// file, and says robots_changed: the operator deploys from it.
func TestDiedBetweenRootAndRobots(t *testing.T) {
	dir, store := tempLocal(t)
	ctx := context.Background()
	l := NewLayout("sitemap")
	night := func(n int, die bool, shards ...string) *Result {
		t.Helper()
		tx, err := Begin(ctx, store, l, Options{MaxShrink: 1, Now: time.Date(2026, 1, n, 2, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		set := putShards(t, tx, l, shards...)
		set.Rows, set.Fanout, set.Base = set.URLs, 2, "https://ex.com/"
		if !die {
			res, err := tx.Commit(ctx, set)
			if err != nil || !res.Published {
				t.Fatalf("night %d: %v", n, err)
			}
			return res
		}
		res, err := tx.Prepare(ctx, set)
		if err == nil {
			err = tx.Switch(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		tx.release() // killed before Finish
		return res
	}
	robots := func() int {
		b, err := os.ReadFile(filepath.Join(dir, "sitemap-robots.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "Sitemap: ")
	}
	if res := night(1, false, "a", "b", "c"); !res.RobotsChanged || robots() != 2 {
		t.Fatalf("night 1: robots_changed %v, %d lines", res.RobotsChanged, robots())
	}
	night(2, true, "a", "b", "c", "d", "e")
	if robots() != 2 {
		t.Fatalf("the killed night wrote its robots lines")
	}
	if res := night(3, false, "a", "b", "c", "d", "e"); !res.RobotsChanged || robots() != 3 {
		t.Errorf("night 3: robots_changed %v, %d lines; want true, 3", res.RobotsChanged, robots())
	}
	if res := night(4, false, "a", "b", "c", "d", "e"); res.RobotsChanged {
		t.Errorf("night 4, nothing changed: robots_changed true")
	}
}

// failPut is a folder whose Put of one name fails, as a run killed while
// it writes that file.
type failPut struct {
	*sink.Local
	name string
}

func (f *failPut) Put(ctx context.Context, name string, data []byte) error {
	if name == f.name {
		return errors.New("killed")
	}
	return f.Local.Put(ctx, name, data)
}

// TestDiedRewritingIndexes: a run killed while it rewrites the intermediate
// indexes in place (their names are fixed: the robots lines name them)
// leaves the live root listing indexes of two runs, the first rewritten one
// naming sitemaps no manifest records. The next run keeps those sitemaps
// through its prune (crawlers read that index until its switch), and the
// run after it deletes them.
func TestDiedRewritingIndexes(t *testing.T) {
	dir, store := tempLocal(t)
	ctx := context.Background()
	l := NewLayout("sitemap")
	begin := func(n int, s sink.Store) (*Tx, time.Time) {
		now := time.Date(2026, 1, n, 2, 0, 0, 0, time.UTC)
		tx, err := Begin(ctx, s, l, Options{MaxShrink: 1, KeepGenerations: 0, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return tx, now
	}
	commit := func(n int, shards ...string) {
		t.Helper()
		tx, _ := begin(n, store)
		set := putShards(t, tx, l, shards...)
		set.Rows, set.Fanout, set.Base = set.URLs, 2, "https://ex.com/"
		if res, err := tx.Commit(ctx, set); err != nil || !res.Published {
			t.Fatalf("night %d: %v", n, err)
		}
	}
	commit(1, "a", "b", "c", "d")
	// Night 2 dies writing its second index: the first lists night 2's
	// sitemaps, under night 1's root.
	tx, _ := begin(2, &failPut{Local: store, name: l.Index(2)})
	set := putShards(t, tx, l, "e", "f", "g", "h")
	set.Rows, set.Fanout, set.Base = set.URLs, 2, "https://ex.com/"
	if _, err := tx.Prepare(ctx, set); err == nil {
		t.Fatal("night 2: the failing put did not fail")
	}
	tx.release() // killed: no Abort puts index 1 back
	first, err := os.ReadFile(filepath.Join(dir, l.Index(1)))
	if err != nil {
		t.Fatal(err)
	}
	live := listedFiles(first, "https://ex.com/")
	if len(live) != 2 || !slices.Contains(names(t, dir), live[0]) {
		t.Fatalf("index 1 after the kill lists %v", live)
	}
	commit(3, "i", "j", "k", "l")
	for _, n := range live {
		if !slices.Contains(names(t, dir), n) {
			t.Errorf("night 3 deleted %s, which the live index 1 listed until its switch", n)
		}
	}
	commit(4, "i", "j", "k", "l")
	for _, n := range live {
		if slices.Contains(names(t, dir), n) {
			t.Errorf("night 4 kept %s, which nothing lists any more", n)
		}
	}
}

// TestVerifyBeforeIndexes: Verify checks the new intermediate indexes from
// pending, before they are rewritten in place: while it reads the set
// (minutes on a large one), the online indexes are still last night's.
func TestVerifyBeforeIndexes(t *testing.T) {
	dir, store := tempLocal(t)
	ctx := context.Background()
	l := NewLayout("sitemap")
	night := func(n int, verify func(context.Context, string, map[string][]byte, func(string) bool) error, shards ...string) {
		t.Helper()
		tx, err := Begin(ctx, store, l, Options{MaxShrink: 1, Now: time.Date(2026, 1, n, 2, 0, 0, 0, time.UTC), Verify: verify})
		if err != nil {
			t.Fatal(err)
		}
		set := putShards(t, tx, l, shards...)
		set.Rows, set.Fanout, set.Base = set.URLs, 2, "https://ex.com/"
		if res, err := tx.Commit(ctx, set); err != nil || !res.Published {
			t.Fatalf("night %d: %v", n, err)
		}
	}
	night(1, nil, "a", "b", "c", "d")
	before, err := os.ReadFile(filepath.Join(dir, l.Index(1)))
	if err != nil {
		t.Fatal(err)
	}
	called := false
	night(2, func(_ context.Context, root string, pending map[string][]byte, _ func(string) bool) error {
		called = true
		online, err := os.ReadFile(filepath.Join(dir, l.Index(1)))
		if err != nil || !bytes.Equal(online, before) {
			t.Errorf("while Verify runs, %s is not last night's: %v", l.Index(1), err)
		}
		if len(pending) != 3 || pending[root] == nil || bytes.Equal(pending[l.Index(1)], before) {
			t.Errorf("pending: %d files; want the root and the two new intermediate indexes", len(pending))
		}
		return nil
	}, "e", "f", "g", "h")
	if !called {
		t.Fatal("Verify was not called")
	}
}
