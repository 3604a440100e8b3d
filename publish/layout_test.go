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

// TestStemsShareAFolder: sets whose stems are prefixes of each other live in
// one folder; no name one set writes is a name another set reads back as its
// own (Kind), so no set prunes, validates or cleans up another's files. The
// root of set "a-index-0001" was index 1 of set "a", which a's cleanup
// deleted; ".sitemap-products…tmp" matched sitemap's temporary files.
func TestStemsShareAFolder(t *testing.T) {
	stems := []string{"a", "a-b", "a-000001", "a-000001-0123456789", "a-index", "a-news", "a-news-0001", "a.b", "a-robots",
		"sitemap", "sitemap-products", "sitemap-2024", "sitemap-index", "sitemap-index-x", "sitemap.manifest", "sitemap-1"}
	for _, s := range stems {
		if err := ValidStem(s); err != nil {
			t.Fatalf("ValidStem(%q): %v", s, err)
		}
	}
	sum := sha256.Sum256([]byte("x"))
	names := func(l Layout) map[string]Kind {
		m := map[string]Kind{
			l.Root(): RootFile, l.Robots(): RobotsFile, l.Manifest(): ManifestFile, l.Lock(): LockFile,
			l.Shard(1, sum): ShardFile, l.Shard(1234567, sum): ShardFile, l.Index(1): IndexFile, l.Index(12345): IndexFile,
			l.Stem() + "-index-0002-0123456789.xml": IndexFile, l.News(1): NewsFile, l.News(12345): NewsFile,
		}
		for n, k := range m {
			if k != LockFile {
				m["."+n+".1234567.tmp"] = TempFile
			}
		}
		return m
	}
	for _, s := range stems {
		l := NewLayout(s)
		for n, k := range names(l) {
			if got := l.Kind(n); got != k {
				t.Errorf("stem %q: Kind(%q) = %d, want %d", s, n, got, k)
			}
			for _, other := range stems {
				if other == s {
					continue
				}
				if got := NewLayout(other).Kind(n); got != Foreign {
					t.Errorf("%q, a file of set %q, is of kind %d to set %q", n, s, got, other)
				}
			}
		}
	}
	for _, bad := range []string{"a-index-0001", "sitemap-index-12345", "a-index-0001-0123456789", "", ".a", "a/b", "a b"} {
		if err := ValidStem(bad); err == nil {
			t.Errorf("ValidStem(%q) = nil, want an error", bad)
		}
	}
	if err := ValidStem("a-index-0001"); err == nil || !strings.Contains(err.Error(), `index file 0001 of set "a"`) {
		t.Errorf("ValidStem: %v", err)
	}
}

// TestStemOf: every name a set writes but its lock and temporary files
// reads back to its stem, prefixes and look-alikes included; no other name
// does.
func TestStemOf(t *testing.T) {
	var sum [32]byte
	for _, stem := range []string{"sitemap", "sitemap-a", "sitemap-a-b", "sitemap-000001", "s.x", "sitemap-news"} {
		l := NewLayout(stem)
		for _, name := range []string{l.Root(), l.Robots(), l.Manifest(), l.Shard(1, sum), l.Shard(1234567, sum), l.Index(2), l.News(3),
			stem + "-index-0001-0123456789.xml"} {
			if got, ok := StemOf(name); !ok || got != stem {
				t.Errorf("StemOf(%q) = %q, %v; want %q", name, got, ok, stem)
			}
		}
		for _, name := range []string{l.Lock(), "." + l.Root() + ".123.tmp"} {
			if got, ok := StemOf(name); ok {
				t.Errorf("StemOf(%q) = %q; want none", name, got)
			}
		}
	}
	for name, want := range map[string]string{
		"": "", ".xml": "", "robots.txt": "", "-robots.txt": "", "a b.xml": "", ".hidden.xml": "",
		"x-index-0001.xml.manifest.json": "x-index-0001.xml", "sitemap-00001-0123456789.xml.gz": "",
		"sitemap-000001-0123456789.xml.gz.txt": "", "notes.md": "", "a.manifest.json.bak": "",
		"sitemap-000001-012345678.xml.gz": "", "sitemap-news-01.xml.gz": "", "sitemap-a-index-1.xml": "sitemap-a-index-1",
	} {
		if got, ok := StemOf(name); got != want || ok != (want != "") {
			t.Errorf("StemOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := StemOf("sitemap-index-0001.xml"); !ok || got != "sitemap" {
		t.Errorf("an intermediate index is its set's, not a root: StemOf = %q, %v", got, ok)
	}
}
