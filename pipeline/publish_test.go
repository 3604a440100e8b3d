package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/sink"
)

// writeRows writes a CSV of n URLs; the rows whose number changed says get
// a different path, so exactly their shards change.
func writeRows(t *testing.T, n int, changed func(i int) bool) string {
	t.Helper()
	return inputtest.WriteRows(t, "in.csv", testBase+"p/", "2024-03", n, changed)
}

func readManifestFile(t *testing.T, dir string) *publish.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "sitemap.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m publish.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// TestSkipUnchangedAndGrace publishes three generations to a folder: a re-run
// on identical input writes no shard, a run with 1% of rows changed writes
// only the shards holding them, and the files of the generation before stay
// until a second newer generation is published (KeepGenerations 1).
func TestSkipUnchangedAndGrace(t *testing.T) {
	dir := t.TempDir()
	local, _ := sink.NewLocal(dir)
	const rows = 5000 // 50 shards of 100
	cfg := Config{Inputs: []string{writeRows(t, rows, nil)}, PublicURL: mustScope(t, testBase), Sink: local,
		Name: "sitemap", MaxURLs: 100, MaxBytes: 1 << 20, Fanout: 1000, GzipLevel: 1, KeepGenerations: 1, MaxShrink: 0.5}
	ctx := context.Background()
	rep1, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m1 := readManifestFile(t, dir)
	if m1.Generation != 1 || m1.URLs != rows || len(m1.Files) != rep1.Shards+2 || rep1.Uploaded.Shards != 50 {
		t.Fatalf("first manifest: generation %d, %d URLs, %d files; report %+v", m1.Generation, m1.URLs, len(m1.Files), rep1.Uploaded)
	}
	for _, f := range m1.Files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		d := publish.Describe(f.Name, data)
		if err != nil || d.Name != f.Name || d.Size != f.Size || d.SHA256 != f.SHA256 {
			t.Fatalf("manifest entry %+v does not match the file (%v)", f, err)
		}
	}
	rootBefore, _ := os.ReadFile(filepath.Join(dir, "sitemap.xml"))

	// Identical input: nothing but the fixed-name files is written.
	rep2, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Uploaded.Shards != 0 || rep2.Uploaded.ShardBytes != 0 || rep2.Skipped.Shards != 50 || rep2.Skipped.ShardBytes != rep1.Uploaded.ShardBytes {
		t.Fatalf("identical re-run: uploaded %+v, skipped %+v", rep2.Uploaded, rep2.Skipped)
	}
	if root, _ := os.ReadFile(filepath.Join(dir, "sitemap.xml")); string(root) != string(rootBefore) {
		t.Fatal("identical re-run changed the root index (lastmod of unchanged shards must stay)")
	}
	if m := readManifestFile(t, dir); m.Generation != 2 || len(m.Previous) != 1 || m.Previous[0].Generation != 1 {
		t.Fatalf("second manifest: generation %d, previous %+v", m.Generation, m.Previous)
	}

	// 1% of rows changed, in 5 shards: only those 5 are written.
	cfg.Inputs = []string{writeRows(t, rows, func(i int) bool { return i%1000 == 7 || i%1000 == 8 || (i > 2000 && i%1000 < 10) })}
	old := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "")
	rep3, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep3.Uploaded.Shards != 5 || rep3.Skipped.Shards != 45 {
		t.Fatalf("1%% changed: uploaded %+v, skipped %+v", rep3.Uploaded, rep3.Skipped)
	}
	// Grace: every file the previous root listed is still there.
	for _, s := range old.Shards {
		if _, err := os.Stat(filepath.Join(dir, s.Name)); err != nil {
			t.Fatalf("previous generation's %s deleted during the grace period: %v", s.Name, err)
		}
	}
	if len(rep3.Deleted) != 0 {
		t.Fatalf("deleted %q during the grace period", rep3.Deleted)
	}
	// Back to the first input but for the last row: generation 2's shards
	// are in the kept history, so only the last shard is written, and
	// generation 3 (now the previous one) is kept whole.
	cfg.Inputs = []string{writeRows(t, rows, func(i int) bool { return i == 4999 })}
	rep4, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep4.Uploaded.Shards != 1 || rep4.Skipped.Shards != 49 || len(rep4.Deleted) != 0 {
		t.Fatalf("fourth run: uploaded %+v, skipped %+v, deleted %q", rep4.Uploaded, rep4.Skipped, rep4.Deleted)
	}
	// The same again: generation 3 is out of the grace period; its 5 changed
	// shards and the last shard as it was go.
	rep5, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep5.Uploaded.Shards != 0 || len(rep5.Deleted) != 6 {
		t.Fatalf("fifth run: uploaded %+v, deleted %q", rep5.Uploaded, rep5.Deleted)
	}
	set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
	// Every file is in the current set or in the kept generation.
	m := readManifestFile(t, dir)
	keep := map[string]bool{"sitemap.manifest.json": true}
	for _, f := range m.Files {
		keep[f.Name] = true
	}
	for _, f := range m.Previous[0].Files {
		keep[f.Name] = true
	}
	for _, n := range set.Files {
		if !keep[n] {
			t.Errorf("%s is in no kept generation", n)
		}
	}
	xmltest.ValidateDir(t, dir)
}

// TestMaxShrink: a truncated input is refused and the set stays; Force
// publishes it; zero URLs are refused even with Force.
func TestMaxShrink(t *testing.T) {
	dir := t.TempDir()
	local, _ := sink.NewLocal(dir)
	cfg := Config{Inputs: []string{writeRows(t, 1000, nil)}, PublicURL: mustScope(t, testBase), Sink: local,
		Name: "sitemap", MaxURLs: 100, MaxBytes: 1 << 20, Fanout: 1000, GzipLevel: 1, KeepGenerations: 1, MaxShrink: 0.5}
	ctx := context.Background()
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	before := xmltest.Snapshot(t, dir)
	c := cfg
	c.Inputs = []string{writeRows(t, 499, nil)}
	if _, err := Run(ctx, c); !errors.Is(err, publish.ErrShrink) {
		t.Fatalf("a 50.1%% shrink: err %v, want publish.ErrShrink", err)
	}
	xmltest.Unchanged(t, dir, before, "a refused run")
	c.Inputs = []string{writeRows(t, 500, nil)} // exactly 50%: allowed
	if _, err := Run(ctx, c); err != nil {
		t.Fatalf("a 50%% shrink: %v", err)
	}
	c.Inputs = []string{writeRows(t, 100, nil)}
	c.Force = true
	if rep, err := Run(ctx, c); err != nil || rep.URLs != 100 {
		t.Fatalf("forced: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.csv")
	os.WriteFile(empty, []byte("loc\nhttps://elsewhere.example/x\n"), 0o644)
	c.Inputs = []string{empty}
	if _, err := Run(ctx, c); !errors.Is(err, ErrNoURLs) {
		t.Fatalf("zero URLs with force: %v, want ErrNoURLs", err)
	}
}

// TestDryRun writes nothing and reports the plan.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	local, _ := sink.NewLocal(dir)
	cfg := Config{Inputs: []string{writeRows(t, 1000, nil)}, PublicURL: mustScope(t, testBase), Sink: local,
		Name: "sitemap", MaxURLs: 100, MaxBytes: 1 << 20, Fanout: 1000, GzipLevel: 1, MaxShrink: 0.5}
	ctx := context.Background()
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	before := xmltest.Snapshot(t, dir)
	c := cfg
	c.DryRun = true
	c.Inputs = []string{writeRows(t, 1000, func(i int) bool { return i < 100 })}
	rep, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	xmltest.Unchanged(t, dir, before, "a dry run")
	p := rep.Plan
	// One shard changed: it, the manifest and the root are written; the
	// robots lines, the same, are not.
	if p == nil || len(p.Skip) != 9+1 || len(p.Upload) != 1+2 || len(p.Delete) != 1 || !slices.Contains(p.Upload, "sitemap.xml") ||
		!slices.Contains(p.Skip, "sitemap-robots.txt") {
		t.Fatalf("plan %+v", p)
	}
	if rep.Uploaded.Shards != 1 || rep.Skipped.Shards != 9 {
		t.Fatalf("dry run counts: uploaded %+v, skipped %+v", rep.Uploaded, rep.Skipped)
	}
}
