package xmltest

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Namespace is the sitemap protocol's XML namespace.
const Namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"

// URL is a <url> as read back.
type URL struct {
	Loc        string `xml:"loc"`
	Lastmod    string `xml:"lastmod"`
	Changefreq string `xml:"changefreq"`
	Priority   string `xml:"priority"`
}

// Entry is a <sitemap> of an index as read back.
type Entry struct {
	Loc     string `xml:"loc"`
	Lastmod string `xml:"lastmod"`
}

// Shard is one sitemap file of a set.
type Shard struct {
	Name string
	Raw  []byte // uncompressed
	URLs []URL
}

// Index is one index file of a set.
type Index struct {
	Name    string
	Depth   int // 0 for the root
	Entries []Entry
}

// Set is a published sitemap set, walked from its root index.
type Set struct {
	Shards  []Shard // in the order the indexes list them, news sitemaps apart
	News    []Shard // the news sitemaps (IsNews), in order
	Indexes []Index // root first, then depth first
	Robots  []string
	Files   []string // every file in the folder
}

// ReadSet walks the set under dir from root, following <loc>s under base.
// It fails t on any file that is missing, malformed or listed twice.
func ReadSet(t testing.TB, dir, base, root, robots string) *Set {
	t.Helper()
	s := &Set{}
	seen := map[string]bool{}
	var walk func(name string, depth int)
	walk = func(name string, depth int) {
		if seen[name] {
			t.Fatalf("%s is listed more than once", name)
		}
		seen[name] = true
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("listed file: %v", err)
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var doc struct {
				XMLName xml.Name
				URLs    []URL `xml:"url"`
			}
			unmarshal(t, name, raw, &doc, &doc.XMLName, "urlset")
			if IsNews(name) {
				s.News = append(s.News, Shard{Name: name, Raw: raw, URLs: doc.URLs})
			} else {
				s.Shards = append(s.Shards, Shard{Name: name, Raw: raw, URLs: doc.URLs})
			}
			return
		}
		var doc struct {
			XMLName xml.Name
			Entries []Entry `xml:"sitemap"`
		}
		unmarshal(t, name, data, &doc, &doc.XMLName, "sitemapindex")
		s.Indexes = append(s.Indexes, Index{Name: name, Depth: depth, Entries: doc.Entries})
		for _, e := range doc.Entries {
			child, ok := strings.CutPrefix(e.Loc, base)
			if !ok || strings.Contains(child, "/") {
				t.Fatalf("%s lists %s, not a file under %s", name, e.Loc, base)
			}
			walk(child, depth+1)
		}
	}
	walk(root, 0)
	if robots != "" {
		data, err := os.ReadFile(filepath.Join(dir, robots))
		if err != nil {
			t.Fatalf("robots lines: %v", err)
		}
		s.Robots = strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		s.Files = append(s.Files, e.Name())
	}
	return s
}

// unmarshal decodes the file name's data into doc and fails t unless the
// root element, which doc keeps in root, is want in the sitemap namespace.
func unmarshal(t testing.TB, name string, data []byte, doc any, root *xml.Name, want string) {
	t.Helper()
	if err := xml.Unmarshal(data, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if *root != (xml.Name{Space: Namespace, Local: want}) {
		t.Fatalf("%s: root element %v, want %s in %s", name, *root, want, Namespace)
	}
}

// Snapshot returns every file in dir by name, to compare a folder before and after.
func Snapshot(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if m[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// Unchanged fails t unless dir holds the files of before, byte for byte,
// and no others; what names what ran since before was taken ("a refused
// run").
func Unchanged(t testing.TB, dir string, before map[string][]byte, what string) {
	t.Helper()
	after := Snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after %s", len(before), len(after), what)
	}
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("%s changed by %s", name, what)
		}
	}
}

// ValidateDir validates every .xml and .xml.gz file in dir with xmllint.
func ValidateDir(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".xml") || strings.HasSuffix(n, ".xml.gz") {
			data, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			Validate(t, n, data)
		}
	}
}
