package publish

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// TestShardNameKeepsPublishedBytes: a shard whose bytes a kept generation
// holds keeps that name whatever its place now (a shard added before it
// does not rename, and so re-upload, it); new bytes get their place's
// name; a kept name goes to one shard only, a second shard of the same
// bytes gets a name of its own.
func TestShardNameKeepsPublishedBytes(t *testing.T) {
	store, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publishSet(t, store, 1, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	l := NewLayout("sitemap")
	ctx := context.Background()
	tx, err := Begin(ctx, store, l, Options{MaxShrink: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort(ctx)
	sum := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	for _, tc := range []struct {
		num  int
		data string
		want string
	}{
		{1, "a", l.Shard(1, sum("a"))},
		{2, "new", l.Shard(2, sum("new"))}, // inserted before b and c
		{3, "b", l.Shard(2, sum("b"))},     // b was shard 2: same name
		{4, "c", l.Shard(3, sum("c"))},
		{5, "c", l.Shard(5, sum("c"))}, // the same bytes again: its own name
	} {
		if got := tx.ShardName(tc.num, len(tc.data), sum(tc.data)); got != tc.want {
			t.Errorf("shard %d %q: name %s, want %s", tc.num, tc.data, got, tc.want)
		}
	}
}
