package publish

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestLayoutNames(t *testing.T) {
	l := NewLayout("sitemap")
	a := l.Shard(7, sha256.Sum256([]byte("x")))
	b := l.Shard(7, sha256.Sum256([]byte("y")))
	if !strings.HasPrefix(a, "sitemap-000007-") || len(a) != len("sitemap-000007-0123456789.xml.gz") || a == b {
		t.Fatalf("shard names %q %q", a, b)
	}
	if n := NewLayout("s").Index(7); n != "s-index-0007.xml" {
		t.Fatalf("index name: %q", n)
	}
	if n := NewLayout("s").Index(12345); n != "s-index-12345.xml" {
		t.Fatalf("wide number: %q", n)
	}
	if !l.IsShard(a) || l.IsShard(l.Index(1)) || l.IsShard(l.Root()) || l.IsShard(l.News(1)) {
		t.Fatalf("IsShard")
	}
	if n := l.News(3); n != "sitemap-news-0003.xml.gz" || !l.IsNews(n) || l.IsNews(a) || l.IsNews(l.Index(3)) {
		t.Fatalf("news name %q", n)
	}
	if l.Root() != "sitemap.xml" || l.Robots() != "sitemap-robots.txt" || l.Manifest() != "sitemap.manifest.json" {
		t.Fatalf("fixed names %q %q %q", l.Root(), l.Robots(), l.Manifest())
	}
	// Every name the layout makes for content is one it owns, and no fixed one.
	for _, n := range []string{a, l.Index(1), l.News(1)} {
		if !l.Owned(n) {
			t.Errorf("%s is not owned", n)
		}
	}
	for _, n := range []string{l.Root(), l.Robots(), l.Manifest()} {
		if l.Owned(n) {
			t.Errorf("fixed name %s is owned", n)
		}
	}
}

// TestOwned: a run may delete only its own content-named files and the
// temporary files of their puts: never the root, the robots lines, other
// stems' files or unrelated files.
func TestOwned(t *testing.T) {
	l := NewLayout("sitemap")
	for name, want := range map[string]bool{
		"sitemap-000001-0123456789.xml.gz":          true,
		"sitemap-1234567-abcdefabcd.xml.gz":         true,
		"sitemap-index-0001-0123456789.xml":         true, // the content-named indexes of earlier versions
		"sitemap-index-0001.xml":                    true,
		"sitemap-index-001.xml":                     false,
		"sitemap-news-0001.xml.gz":                  true,
		"sitemap-news-12345.xml.gz":                 true,
		"sitemap-news-001.xml.gz":                   false,
		"sitemap-news-0001.xml":                     false,
		"other-news-0001.xml.gz":                    false,
		".sitemap-000003-0000000000.xml.gz.123.tmp": true,
		".sitemap.xml.42.tmp":                       true,
		"sitemap.xml":                               false,
		"sitemap-robots.txt":                        false,
		"sitemap.manifest.json":                     false,
		"index.html":                                false,
		"sitemap-notes.xml":                         false,
		"sitemap-00001-0123456789.xml.gz":           false, // 5 digits
		"sitemap-000001-0123456789.xml":             false,
		"sitemap-000001-ABCDEF0123.xml.gz":          false,
		"other-000001-0123456789.xml.gz":            false,
		".sitemapx-000001-0123456789.xml.gz.5.tmp":  false,
		"sitemapx-000001-0123456789.xml.gz":         false,
	} {
		if got := l.Owned(name); got != want {
			t.Errorf("Owned(%q) = %v, want %v", name, got, want)
		}
	}
	if NewLayout("a.b").Owned("aXb-000001-0123456789.xml.gz") {
		t.Error("the stem is matched literally, not as a pattern")
	}
}
