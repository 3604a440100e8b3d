package pipeline

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

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// newsInput writes a CSV of fresh articles a<first>..a<first+fresh-1>,
// published 30 seconds apart back from now (newest first, as exports list
// them), then old articles o0..o<old-1> published three days before now.
func newsInput(t *testing.T, now time.Time, first, fresh, old int) string {
	var b strings.Builder
	b.WriteString("loc,lastmod,news:publication_name,news:publication_language,news:publication_date,news:title\n")
	for i := first; i < first+fresh; i++ {
		pub := now.Add(-time.Duration(i) * 30 * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&b, "%sa%d,2026-01-01,The Daily & Co,en,%s,Article %d <b>\n", testBase, i, pub, i)
	}
	for i := range old {
		fmt.Fprintf(&b, "%so%d,2026-01-01,The Daily & Co,en,%s,Old %d\n", testBase, i, now.Add(-72*time.Hour).Format(time.RFC3339), i)
	}
	return writeText(t, fmt.Sprintf("news-%d-%d.csv", first, fresh), b.String())
}

// TestNewsSitemaps: rows with a news item go, with it, to news sitemaps of
// at most 1,000 URLs under fixed names, and without it to the regular
// sitemaps, which list every URL; articles older than the window keep their
// URL and lose the news item, counted. The next night's run rewrites the
// news sitemaps in place under the same names, and a run that fails at any
// write leaves the previous ones as they were.
func TestNewsSitemaps(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	local, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Inputs: []string{newsInput(t, now, 0, 3000, 50)}, PublicURL: mustScope(t, testBase), Sink: local, Name: "sitemap",
		MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Now: now}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	xmltest.ValidateDir(t, dir)
	set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
	var names []string
	for i, n := range set.News {
		names = append(names, n.Name)
		if want := fmt.Sprintf("sitemap-news-%04d.xml.gz", i+1); n.Name != want || len(n.URLs) != 1000 {
			t.Errorf("news sitemap %d: %s with %d URLs; want %s with 1000", i, n.Name, len(n.URLs), want)
		}
		if c := bytes.Count(n.Raw, []byte("<news:news>")); c != 1000 {
			t.Errorf("%s: %d news items", n.Name, c)
		}
	}
	if len(set.News) != 3 || rep.News == nil || rep.News.Sitemaps != 3 || rep.News.URLs != 3000 {
		t.Fatalf("%d news sitemaps, report %+v; want 3 of 3,000 URLs", len(set.News), rep.News)
	}
	if got := rep.Warnings.ByReason[encode.WarningName(17)]; got != 50 || encode.WarningName(17) != "news_expired" {
		t.Errorf("news_expired %d, want 50: %v", got, rep.Warnings.ByReason)
	}
	urls := 0
	for _, s := range set.Shards {
		urls += len(s.URLs)
		if bytes.Contains(s.Raw, []byte("news")) {
			t.Errorf("%s: a regular shard with a news item or namespace", s.Name)
		}
	}
	if urls != 3050 || rep.URLs != 3050 {
		t.Errorf("regular shards list %d URLs, report %d; want all 3,050", urls, rep.URLs)
	}
	if strings.Join(set.Robots, "\n") != "Sitemap: "+testBase+"sitemap.xml" {
		t.Errorf("robots lines %q", set.Robots)
	}
	before := xmltest.Snapshot(t, dir)

	// The next night: ten new articles, and the window has moved past the
	// ten oldest fresh ones (published 24h55m..24h59m30s before now).
	next := now.Add(23*time.Hour + 5*time.Minute + 15*time.Second)
	second := cfg
	second.Inputs, second.Now = []string{newsInput(t, now, -10, 3010, 50)}, next

	// Fail at every write before the switch: the published set, news
	// sitemaps included, stays byte for byte.
	counter := &failingSink{Store: local, n: 1 << 30}
	scratchDir := t.TempDir()
	scratch, _ := sink.NewLocal(scratchDir)
	for name, data := range before {
		if err := os.WriteFile(filepath.Join(scratchDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	counter.Store = scratch
	c := second
	c.Sink = counter
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	writes := 1<<30 - counter.n // shards, news sitemaps, manifest, root, robots
	for at := 1; at < writes; at++ {
		for _, cancel := range []bool{false, true} {
			ctx, stop := context.WithCancel(context.Background())
			fs := &failingSink{Store: local, n: at}
			if cancel {
				fs.cancel = stop
			}
			c := second
			c.Sink = fs
			_, err := Run(ctx, c)
			stop()
			if err == nil || !errors.Is(err, errInjected) && !errors.Is(err, context.Canceled) {
				t.Fatalf("write %d (cancel %v): err %v", at, cancel, err)
			}
			xmltest.Unchanged(t, dir, before, fmt.Sprintf("a run failed at write %d (cancel %v)", at, cancel))
		}
	}

	rep2, err := Run(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	set2 := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
	var names2 []string
	for _, n := range set2.News {
		names2 = append(names2, n.Name)
	}
	if !slices.Equal(names, names2) || rep2.News.URLs != 3000 {
		t.Fatalf("second night: news sitemaps %v with %d URLs; want %v with 3,000", names2, rep2.News.URLs, names)
	}
	after := xmltest.Snapshot(t, dir)
	for _, n := range names {
		if bytes.Equal(before[n], after[n]) {
			t.Errorf("%s not rewritten", n)
		}
	}
	if !bytes.Contains(set2.News[0].Raw, []byte("<loc>"+testBase+"a-10</loc>")) || bytes.Contains(set2.News[2].Raw, []byte("<loc>"+testBase+"a2999</loc>")) {
		t.Error("the news sitemaps do not list the new articles first, or still list those out of the window")
	}
	if !bytes.Equal(before["sitemap-robots.txt"], after["sitemap-robots.txt"]) || rep2.RobotsChanged {
		t.Error("robots lines changed")
	}
	if rep2.Warnings.ByReason["news_expired"] != 60 {
		t.Errorf("news_expired %d, want 60", rep2.Warnings.ByReason["news_expired"])
	}
	xmltest.ValidateDir(t, dir)
}

// TestNewsSitemapsWithinMaxURLs: --max-urls bounds every sitemap of the
// set, the news sitemaps too (validate and --verify check it so).
func TestNewsSitemapsWithinMaxURLs(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	local, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Inputs: []string{newsInput(t, now, 0, 250, 0)}, PublicURL: mustScope(t, testBase), Sink: local, Name: "sitemap",
		MaxURLs: 100, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Now: now}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
	var sizes []int
	for _, n := range set.News {
		sizes = append(sizes, len(n.URLs))
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) || rep.News == nil || rep.News.URLs != 250 {
		t.Errorf("news sitemaps of %v URLs, report %+v; want 100, 100, 50", sizes, rep.News)
	}
}
