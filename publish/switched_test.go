package publish

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// TestSwitchedSeesThePreviousGeneration: the Switched hook runs after the
// switch with both manifests, and, even with no generation kept, the
// replaced shards are still in the store when it runs (they are deleted
// after it).
func TestSwitchedSeesThePreviousGeneration(t *testing.T) {
	store, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := NewLayout("sitemap")
	commit := func(shards ...string) (prev, next *Manifest, old map[string]string) {
		tx, err := Begin(ctx, store, l, Options{MaxShrink: 1, Switched: func(ctx context.Context, p, n *Manifest) {
			prev, next, old = p, n, map[string]string{}
			if root, err := store.Get(ctx, l.Root()); err != nil || len(root) == 0 {
				t.Errorf("Switched runs before the root is in place: %v", err)
			}
			if p == nil {
				return
			}
			for _, f := range p.Files {
				if l.IsShard(f.Name) {
					b, err := store.Get(ctx, f.Name)
					if err != nil {
						t.Errorf("previous shard %s: %v", f.Name, err)
					}
					old[f.Name] = string(b)
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		set := putShards(t, tx, l, shards...)
		set.Fanout, set.Base = 10, "https://ex.com/"
		if _, err := tx.Commit(ctx, set); err != nil {
			t.Fatal(err)
		}
		return prev, next, old
	}
	prev, next, _ := commit("a", "b")
	if prev != nil || next == nil || next.Generation != 1 {
		t.Fatalf("first publish: prev %v, next %+v", prev, next)
	}
	prev, next, old := commit("a", "c")
	if prev == nil || prev.Generation != 1 || next.Generation != 2 {
		t.Fatalf("second publish: prev %+v, next %+v", prev, next)
	}
	if len(old) != 2 || old[l.Shard(2, sha256.Sum256([]byte("b")))] != "b" {
		t.Errorf("the hook read %q of the previous generation, want shards a and b", old)
	}
	if _, err := store.Get(ctx, l.Shard(2, sha256.Sum256([]byte("b")))); err == nil {
		t.Errorf("with no generation kept, the replaced shard is still there after the publish")
	}
}
