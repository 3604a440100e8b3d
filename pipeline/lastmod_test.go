package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// indexLastmods returns each <loc>'s <lastmod> in an index file.
func indexLastmods(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range regexp.MustCompile(`<loc>[^<]*/([^/<]+)</loc><lastmod>([^<]+)</lastmod>`).FindAllStringSubmatch(string(b), -1) {
		m[e[1]] = e[2]
	}
	return m
}

// TestIndexLastmodIsWhenTheFileChanged: an index's <lastmod> for a file is
// when that file's content last changed (the protocol's definition), not the
// newest URL lastmod in it: an unchanged shard keeps it across runs, a new
// or changed one gets the run's time; intermediate indexes follow the same
// rule; the same input, manifest and Now give the same bytes; the report
// says which shards are new, unchanged and removed.
func TestIndexLastmodIsWhenTheFileChanged(t *testing.T) {
	dir := t.TempDir()
	snk, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 5000
	night1 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	cfg := Config{Inputs: []string{writeRows(t, rows, nil)}, PublicURL: mustScope(t, testBase), Sink: snk, Name: "sitemap",
		MaxURLs: 100, MaxBytes: 10485760, Fanout: 10, GzipLevel: 1, Now: night1, KeepGenerations: 1}
	ctx := context.Background()
	rep1, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep1.ShardsNew != 50 || rep1.ShardsUnchanged != 0 || !rep1.RobotsChanged {
		t.Fatalf("first night: new %d unchanged %d robots changed %v", rep1.ShardsNew, rep1.ShardsUnchanged, rep1.RobotsChanged)
	}
	first := indexLastmods(t, filepath.Join(dir, "sitemap-index-0001.xml"))
	if len(first) != 10 || first["sitemap-index-0001.xml"] != "" {
		t.Fatalf("index 1 lists %d files: %v", len(first), first)
	}
	for n, lm := range first {
		if lm != "2026-11-01T02:00:00Z" {
			t.Errorf("night 1: %s lastmod %s, want the run's time", n, lm)
		}
	}
	robots1, _ := os.ReadFile(filepath.Join(dir, "sitemap-robots.txt"))
	set1 := xmltest.Snapshot(t, dir)

	// Night 2: row 7 changed, so shard 1 and its index change; the rest keep
	// their night-1 lastmod, in the intermediate indexes and in the root.
	night2 := night1.Add(24 * time.Hour)
	cfg.Inputs, cfg.Now = []string{writeRows(t, rows, func(i int) bool { return i == 7 })}, night2
	rep2, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.ShardsNew != 1 || rep2.ShardsUnchanged != 49 || rep2.ShardsRemoved != 1 || rep2.RobotsChanged {
		t.Errorf("night 2: new %d unchanged %d removed %d robots changed %v", rep2.ShardsNew, rep2.ShardsUnchanged, rep2.ShardsRemoved, rep2.RobotsChanged)
	}
	second := indexLastmods(t, filepath.Join(dir, "sitemap-index-0001.xml"))
	changed := 0
	for n, lm := range second {
		switch {
		case lm == "2026-11-02T02:00:00Z":
			changed++
		case lm != first[n]:
			t.Errorf("night 2: unchanged %s has lastmod %s, want %s", n, lm, first[n])
		}
	}
	if changed != 1 {
		t.Errorf("night 2: %d files of index 1 dated night 2, want 1 (the changed shard)", changed)
	}
	root := indexLastmods(t, filepath.Join(dir, "sitemap.xml"))
	if root["sitemap-index-0001.xml"] != "2026-11-02T02:00:00Z" || root["sitemap-index-0002.xml"] != "2026-11-01T02:00:00Z" {
		t.Errorf("root lastmods: %v", root)
	}
	if robots2, _ := os.ReadFile(filepath.Join(dir, "sitemap-robots.txt")); string(robots2) != string(robots1) {
		t.Errorf("robots lines changed:\n%s\n%s", robots1, robots2)
	}

	// The same input, manifest and Now again: the same bytes. Start from a
	// copy of night 1's folder, twice.
	for range 2 {
		again := t.TempDir()
		for n, b := range set1 {
			if err := os.WriteFile(filepath.Join(again, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s2, _ := sink.NewLocal(again)
		c := cfg
		c.Sink = s2
		if _, err := Run(ctx, c); err != nil {
			t.Fatal(err)
		}
		got := xmltest.Snapshot(t, again)
		want := xmltest.Snapshot(t, dir)
		for n, b := range want {
			if string(got[n]) != string(b) {
				t.Errorf("rerun of night 2 from night 1: %s differs", n)
			}
		}
	}
}
