package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/sink"
)

// publishSet commits a set of n shards with the given bytes through a Tx.
func publishSet(t *testing.T, store sink.Store, keep int, shards ...string) (*Result, error) {
	t.Helper()
	ctx := context.Background()
	l := NewLayout("sitemap")
	tx, err := Begin(ctx, store, l, Options{KeepGenerations: keep, MaxShrink: 1})
	if err != nil {
		t.Fatal(err)
	}
	set := putShards(t, tx, l, shards...)
	set.Rows, set.Fanout, set.Base = set.URLs, 2, "https://ex.com/"
	res, err := tx.Commit(ctx, set)
	if err != nil {
		tx.Abort(ctx)
	}
	return res, err
}

// putShards puts shards of the given bytes through tx, numbered from 1, and
// returns the Set listing them, one URL each.
func putShards(t *testing.T, tx *Tx, l Layout, shards ...string) Set {
	t.Helper()
	var set Set
	for i, data := range shards {
		sum := sha256.Sum256([]byte(data))
		f := DescribeSum(l.Shard(i+1, sum), len(data), sum)
		if err := tx.PutShard(context.Background(), f, []byte(data)); err != nil {
			t.Fatal(err)
		}
		set.Shards = append(set.Shards, f)
		set.URLs++
	}
	return set
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range ents {
		ns = append(ns, e.Name())
	}
	return ns
}

// TestCommitPrunesOnlyOwned: after the switch, the files no kept generation
// lists are deleted if the layout owns them; unrelated files, other stems'
// files and stale temporary files of other stems stay.
func TestCommitPrunesOnlyOwned(t *testing.T) {
	dir, store := tempLocal(t)
	for _, f := range []string{"index.html", "other-000001-0123456789.xml.gz", ".sitemapx-000001-0123456789.xml.gz.5.tmp",
		"sitemap-000009-0123456789.xml.gz", ".sitemap-000003-0000000000.xml.gz.123.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Generation 1 (keeps the files found without a manifest for one generation).
	if _, err := publishSet(t, store, 1, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	// Generation 2, keeping none: everything owned that it does not list goes.
	res, err := publishSet(t, store, 0, "a", "d")
	if err != nil {
		t.Fatal(err)
	}
	got := names(t, dir)
	for _, w := range []string{".sitemapx-000001-0123456789.xml.gz.5.tmp", "index.html", "other-000001-0123456789.xml.gz"} {
		if !slices.Contains(got, w) {
			t.Errorf("%s was deleted; left %q", w, got)
		}
	}
	for _, n := range got {
		if n == "sitemap-000009-0123456789.xml.gz" || n == ".sitemap-000003-0000000000.xml.gz.123.tmp" {
			t.Errorf("%s should have been pruned", n)
		}
	}
	if len(res.Deleted) == 0 {
		t.Errorf("nothing reported deleted")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sitemap.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Generation != 2 || len(m.Previous) != 0 {
		t.Fatalf("manifest: %v %+v", err, m)
	}
}

// TestDryRunWritesNothing: a Tx over a DryRun store does the whole publish
// and the store's files stay byte for byte; the decorator lists what would
// have been written and deleted.
func TestDryRunWritesNothing(t *testing.T) {
	dir, store := tempLocal(t)
	if _, err := publishSet(t, store, 0, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)
	dry := sink.NewDryRun(store)
	res, err := publishSet(t, dry, 0, "a", "x")
	if err != nil {
		t.Fatal(err)
	}
	if after := names(t, dir); !slices.Equal(before, after) {
		t.Fatalf("a dry run changed the folder: %q -> %q", before, after)
	}
	puts, dels := dry.Puts(), dry.Deletes()
	// Shard "a" is unchanged (skipped); "x" is new; then manifest, root, robots.
	if len(puts) != 4 || puts[len(puts)-1] != "sitemap-robots.txt" || puts[len(puts)-2] != "sitemap.xml" {
		t.Errorf("puts %q", puts)
	}
	if len(dels) != 4 || !res.Published {
		t.Errorf("deletes %q (want shards b and c and the two intermediate indexes), published %v", dels, res.Published)
	}
}

// refusingStore fails every Put and every Delete, as a read-only folder does.
type refusingStore struct{ *sink.Local }

func (refusingStore) Put(context.Context, string, []byte) error { return errors.New("read-only") }
func (refusingStore) Delete(context.Context, string) error      { return errors.New("read-only") }
func (refusingStore) PutDeferred(context.Context, string, []byte) error {
	return errors.New("read-only")
}
func (refusingStore) PutAll(context.Context, []sink.File) ([]string, error) {
	return nil, errors.New("read-only")
}

// TestAbortCleansOnlyWhatIsThere: a publish whose puts all failed has
// nothing to clean up, and says nothing about files it never wrote.
func TestAbortCleansOnlyWhatIsThere(t *testing.T) {
	local, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx := context.Background()
	l := NewLayout("sitemap")
	tx, err := Begin(ctx, refusingStore{local}, l, Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a"))
	if err := tx.PutShard(ctx, DescribeSum(l.Shard(1, sum), 1, sum), []byte("a")); err == nil {
		t.Fatal("Put to a read-only store succeeded")
	}
	tx.Abort(ctx)
	if strings.Contains(logs.String(), "cleanup") {
		t.Errorf("Abort warned about files it never wrote:\n%s", logs.String())
	}
}

// TestManifestSizeChecked: a manifest larger than MaxManifestSize is
// refused from the listing, before it is read into memory.
func TestManifestSizeChecked(t *testing.T) {
	dir, store := tempLocal(t)
	l := NewLayout("sitemap")
	f, err := os.Create(filepath.Join(dir, l.Manifest()))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxManifestSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	_, err = Begin(context.Background(), store, l, Options{})
	if err == nil || !strings.Contains(err.Error(), "more than a manifest") {
		t.Fatalf("Begin with a manifest of %d bytes: %v", MaxManifestSize+1, err)
	}
}

// TestUnchangedFixedFilesKept: a publish whose root index and robots lines
// are the bytes the store holds does not write them again (only the
// manifest, a new generation); a changed or damaged one is written.
func TestUnchangedFixedFilesKept(t *testing.T) {
	dir, store := tempLocal(t)
	l := NewLayout("sitemap")
	stat := func() map[string]os.FileInfo {
		fis := map[string]os.FileInfo{}
		for _, n := range []string{l.Root(), l.Robots(), l.Manifest()} {
			fi, err := os.Stat(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			fis[n] = fi
		}
		return fis
	}
	publish := func(shards ...string) *Result {
		t.Helper()
		res, err := publishSet(t, store, 2, shards...)
		if err != nil || !res.Published {
			t.Fatalf("publish: %v", err)
		}
		return res
	}
	publish("a", "b")
	root, err := os.ReadFile(filepath.Join(dir, l.Root()))
	if err != nil {
		t.Fatal(err)
	}
	before := stat()
	if res := publish("a", "b"); res.Generation != 2 {
		t.Fatalf("generation %d; want 2", res.Generation)
	}
	after := stat()
	for n, same := range map[string]bool{l.Root(): true, l.Robots(): true, l.Manifest(): false} {
		if os.SameFile(before[n], after[n]) != same {
			t.Errorf("%s: same file %v; want %v", n, !same, same)
		}
	}

	// Damaged at the destination: written again, though the manifest
	// describes the bytes the run would write. The robots lines keep
	// their size (the listing cannot tell them apart: read back).
	robots, err := os.ReadFile(filepath.Join(dir, l.Robots()))
	if err != nil {
		t.Fatal(err)
	}
	for n, data := range map[string][]byte{l.Root(): []byte("damaged"), l.Robots(): bytes.Repeat([]byte("x"), len(robots))} {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	publish("a", "b")
	if got, _ := os.ReadFile(filepath.Join(dir, l.Root())); !bytes.Equal(got, root) {
		t.Errorf("damaged root not rewritten: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, l.Robots())); !bytes.Equal(got, robots) {
		t.Errorf("damaged robots lines not rewritten: %q", got)
	}

	// A changed set: its root is written, its robots lines (the same) not.
	before = stat()
	publish("a", "c")
	after = stat()
	if os.SameFile(before[l.Root()], after[l.Root()]) {
		t.Error("a changed root was not written")
	}
	if !os.SameFile(before[l.Robots()], after[l.Robots()]) {
		t.Error("unchanged robots lines were written")
	}
}

// TestListedAs: what the listing alone tells of a file's bytes.
func TestListedAs(t *testing.T) {
	data := []byte("Sitemap: https://ex.com/sitemap.xml\n")
	md5Tag := `"` + "c7f1b5a0f1f0b3a0b8c4b8a1b2c3d4e5" + `"` // right form, other bytes (SSE-KMS tags look so)
	for _, tc := range []struct {
		name        string
		info        map[string]sink.Info
		same, known bool
	}{
		{"no listing", nil, false, false},
		{"not held", map[string]sink.Info{}, false, true},
		{"other size", map[string]sink.Info{"f": {Size: 3, ETag: `"` + md5Hex(data) + `"`}}, false, true},
		{"its MD5", map[string]sink.Info{"f": {Size: int64(len(data)), ETag: `"` + md5Hex(data) + `"`}}, true, true},
		{"its MD5, unquoted, upper case", map[string]sink.Info{"f": {Size: int64(len(data)), ETag: strings.ToUpper(md5Hex(data))}}, true, true},
		{"another tag", map[string]sink.Info{"f": {Size: int64(len(data)), ETag: md5Tag}}, false, false},
		{"multipart tag", map[string]sink.Info{"f": {Size: int64(len(data)), ETag: `"c7f1b5a0f1f0b3a0b8c4b8a1b2c3d4e5-2"`}}, false, false},
		{"no tag (a folder)", map[string]sink.Info{"f": {Size: int64(len(data))}}, false, false},
	} {
		tx := &Tx{listing: listing{info: tc.info}}
		if same, known := tx.listedAs("f", data); same != tc.same || known != tc.known {
			t.Errorf("%s: same %v known %v; want %v %v", tc.name, same, known, tc.same, tc.known)
		}
	}
	if got, want := md5Hex([]byte("")), "d41d8cd98f00b204e9800998ecf8427e"; got != want {
		t.Errorf("md5Hex(empty) = %s; want %s", got, want)
	}
}

// tempLocal returns a new temporary folder and a store writing to it.
func tempLocal(t *testing.T) (string, *sink.Local) {
	t.Helper()
	dir := t.TempDir()
	store, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, store
}

// recordingPuts is a folder that records the names put through Put and
// through PutDeferred.
type recordingPuts struct {
	*sink.Local
	puts, deferred []string
}

func (r *recordingPuts) Put(ctx context.Context, name string, data []byte) error {
	r.puts = append(r.puts, name)
	return r.Local.Put(ctx, name, data)
}

func (r *recordingPuts) PutDeferred(ctx context.Context, name string, data []byte) error {
	r.deferred = append(r.deferred, name)
	return r.Local.PutDeferred(ctx, name, data)
}

// TestPutListedShardDurably: a shard the published set lists, written again
// because its file is gone or not what the manifest says, may be named by
// an index online: it is put whole and durably (Put), not left to the next
// sync (PutDeferred, which may show a new name before its bytes are all
// there). A new shard is deferred, and an intact one not written.
func TestPutListedShardDurably(t *testing.T) {
	dir, local := tempLocal(t)
	store := &recordingPuts{Local: local}
	if _, err := publishSet(t, store, 1, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	l := NewLayout("sitemap")
	shard := func(i int, data string) string { return l.Shard(i, sha256.Sum256([]byte(data))) }
	if err := os.Remove(filepath.Join(dir, shard(1, "a"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, shard(2, "b")), []byte("not b"), 0o644); err != nil {
		t.Fatal(err)
	}
	store.puts, store.deferred = nil, nil
	if _, err := publishSet(t, store, 1, "a", "b", "c", "d"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{shard(1, "a"), shard(2, "b")} {
		if !slices.Contains(store.puts, name) || slices.Contains(store.deferred, name) {
			t.Errorf("%s, listed by the published set and rewritten: put %v, deferred %v; want Put", name, store.puts, store.deferred)
		}
	}
	if !slices.Equal(store.deferred, []string{shard(4, "d")}) {
		t.Errorf("deferred puts %q; want only the new shard %s", store.deferred, shard(4, "d"))
	}
	if slices.Contains(store.puts, shard(3, "c")) {
		t.Errorf("the intact shard %s was written again", shard(3, "c"))
	}
	for i, data := range []string{"a", "b"} {
		if got, err := os.ReadFile(filepath.Join(dir, shard(i+1, data))); err != nil || string(got) != data {
			t.Errorf("%s: %q, %v; want %q", shard(i+1, data), got, err, data)
		}
	}
}
