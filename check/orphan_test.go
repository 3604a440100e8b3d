package check_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sitemapgen/sitemapgen/check"
)

// TestOrphansAreExactlyTheSetsOwn: the orphan rule matches exactly the
// names generate's Layout gives the set, so the files of sets whose stems
// begin with this one's (sitemap-2024, sitemap-index, sitemap-000001) are
// not orphans of it; they were. A file named as one of the set's shards
// that nothing lists is a failed run's leftover, which the next run
// deletes: reported in Leftovers, not as a problem (it failed the live set).
func TestOrphansAreExactlyTheSetsOwn(t *testing.T) {
	dir, shards := goodSet(t)
	b, err := os.ReadFile(filepath.Join(dir, shards[0]))
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.ReadFile(filepath.Join(dir, "sitemap.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"sitemap-2024.xml": root, "sitemap-index.xml": root, "sitemap-000001.xml": root, // other sets' roots
		"sitemap-2024-000001-0123456789.xml.gz": b, "sitemap-products-news-0001.xml.gz": b, // their sitemaps
		"sitemap-000077-0123456789.xml.gz": b, // a leftover of this set
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := validate(t, dir, check.Ours)
	if !rep.OK() {
		t.Errorf("problems: %v", rep.List)
	}
	if !slices.Equal(rep.Leftovers, []string{"sitemap-000077-0123456789.xml.gz"}) {
		t.Errorf("leftovers %q, want the one unlisted shard", rep.Leftovers)
	}
}
