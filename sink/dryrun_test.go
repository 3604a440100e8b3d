package sink

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestDryRunKeep: the files Keep matches are held up to the limit and read
// back; others are neither written nor held; a delete takes a put back.
func TestDryRunKeep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	local, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Put(ctx, "old.xml", []byte("old")); err != nil {
		t.Fatal(err)
	}
	d := NewDryRun(local)
	d.Keep(func(n string) bool { return strings.HasSuffix(n, ".gz") }, 10)
	buf := []byte("123456")
	for _, p := range []struct {
		name string
		data []byte
	}{{"a.gz", buf}, {"b.gz", []byte("7890123")}, {"c.xml", []byte("x")}} { // in order: a fits, b does not
		if err := d.Put(ctx, p.name, p.data); err != nil {
			t.Fatal(err)
		}
	}
	buf[0] = 'X' // the caller reuses its buffer
	if got, err := d.Get(ctx, "a.gz"); err != nil || string(got) != "123456" {
		t.Errorf("a.gz: %q, %v; want it held", got, err)
	}
	if _, err := d.Get(ctx, "b.gz"); !errors.Is(err, ErrNotKept) {
		t.Errorf("b.gz over the limit: %v, want ErrNotKept", err)
	}
	if _, err := d.Get(ctx, "c.xml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("c.xml not kept: %v, want the store's not-exist", err)
	}
	if got, err := d.Get(ctx, "old.xml"); err != nil || string(got) != "old" {
		t.Errorf("old.xml: %q, %v; want the store's", got, err)
	}
	if err := d.Delete(ctx, "a.gz"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, "a.gz"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a.gz after its delete: %v, want not there", err)
	}
	if err := d.Put(ctx, "d.gz", []byte("1234567890")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, "d.gz"); err != nil {
		t.Errorf("d.gz fits the room the delete gave back: %v", err)
	}
	if names, _ := local.List(ctx); len(names) != 1 {
		t.Errorf("the dry run wrote: %q", names)
	}
}
