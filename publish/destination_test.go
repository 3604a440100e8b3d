package publish

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
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
	dir := t.TempDir()
	local, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
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
