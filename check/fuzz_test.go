package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
)

// noFiles is an empty folder: every file but the one WithFile adds is missing.
type noFiles struct{}

func (noFiles) Open(context.Context, string) (io.ReadCloser, error) { return nil, fs.ErrNotExist }
func (noFiles) List(context.Context) ([]string, error)              { return nil, nil }
func (noFiles) String() string                                      { return "(none)" }

// checkAlone checks data as the root file name, with no other file, and
// fails the test unless the report adds up.
func checkAlone(t *testing.T, name string, data []byte) *Report {
	t.Helper()
	rep, err := Set(context.Background(), WithFile(noFiles{}, name, data), name,
		Options{Limits: Ours, RunRecords: 64, TempDir: t.TempDir(), MaxProblems: 50})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, n := range rep.ByCode {
		sum += n
	}
	if sum != rep.Problems || len(rep.List) > rep.Problems || (rep.Problems == 0) != rep.OK() {
		t.Fatalf("report does not add up: %d problems, by code %v, %d listed", rep.Problems, rep.ByCode, len(rep.List))
	}
	return rep
}

// FuzzSet feeds arbitrary bytes to the validator as a root file: it must
// never panic, and its report must add up.
func FuzzSet(f *testing.F) {
	for _, b := range exampleFiles(f) {
		f.Add(b)
	}
	f.Add([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/</loc></url><url><loc>https://A.example:443/</loc></url></urlset>`))
	f.Add([]byte("\xef\xbb\xbf" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><!-- x --><url><loc>https://a.example/</loc></url></urlset>`))
	f.Add([]byte(`<?xml version="1.0" encoding="latin1"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://a.example/root.xml</loc></sitemap></sitemapindex>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := checkAlone(t, "root.xml", data)
		for _, p := range rep.List {
			if p.Code == "" || p.Message == "" || p.File == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
	})
}

// TestDuplicatesBeforeSyntaxError: a sitemap with a duplicate URL and then
// broken XML gets both problems reported, not an error for the whole check
// (the duplicate check reads the file again and meets the same break; found
// by FuzzSet).
func TestDuplicatesBeforeSyntaxError(t *testing.T) {
	data := []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/x</loc></url>` +
		`<url><loc>https://a.example/x</loc></url><url><loc>https://a.example/y</loc>&broken`)
	rep, err := Set(context.Background(), WithFile(noFiles{}, "root.xml", data), "root.xml",
		Options{Limits: Ours, RunRecords: 64, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByCode[CodeDuplicateURL] != 1 || rep.OK() || rep.Problems < 2 {
		t.Fatalf("problems %v; want the duplicate and the syntax error", rep.ByCode)
	}
}

// FuzzRobots feeds arbitrary bytes to the validator as a robots.txt root:
// no panic, a report that adds up, and a robots.txt without a Sitemap:
// line is always reported.
func FuzzRobots(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow:\nSitemap: https://a.example/sitemap.xml\n"))
	f.Add([]byte("sitemap:https://a.example/s.xml # comment\nSITEMAP : http://b.example/x.xml.gz\r\nSitemap: /relative.xml\n"))
	f.Add([]byte("User-agent: *\n"))
	f.Add([]byte("Sitemap: https://a.example/a/../b.xml\nSitemap: https://a.example/s.xml\nSitemap: https://a.example/s.xml\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := checkAlone(t, "robots.txt", data)
		if !bytes.Contains(bytes.ToLower(data), []byte("sitemap")) && rep.ByCode[CodeNoSitemap] != 1 {
			t.Fatalf("no Sitemap: line, no no_sitemap problem: %v", rep.List)
		}
	})
}

// countingFiles counts the opens of each file.
type countingFiles struct {
	Files
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFiles) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.Files.Open(ctx, name)
}

// TestDuplicatesOneRead: duplicates, also past the first smallSet URLs
// and across files, are each reported once with the URL, and no file is
// read twice to find them.
func TestDuplicatesOneRead(t *testing.T) {
	dir := t.TempDir()
	const n = 3 * smallSet
	for f := range 2 {
		var b strings.Builder
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range n {
			u := f*n + i
			if i%20 == 19 {
				u = i - 5 // a URL of the first file, listed again
			}
			fmt.Fprintf(&b, "<url><loc>https://a.example/p%d</loc></url>\n", u)
		}
		b.WriteString("</urlset>")
		writeFile(t, dir, fmt.Sprintf("s%d.xml", f), gz(t, []byte(b.String())))
	}
	writeFile(t, dir, "index.xml", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
		`<sitemap><loc>https://a.example/s0.xml</loc></sitemap><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>`))
	files := &countingFiles{Files: Dir(dir), opens: map[string]int{}}
	rep, err := Set(context.Background(), files, "index.xml", Options{Limits: Ours, TempDir: t.TempDir(), RunRecords: 1000, SkipOrphans: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * n / 20; rep.ByCode[CodeDuplicateURL] != want || rep.Problems != want {
		t.Fatalf("%d duplicates, want %d: %v", rep.ByCode[CodeDuplicateURL], want, rep.ByCode)
	}
	for _, p := range rep.List {
		if !strings.HasPrefix(p.Value, "https://a.example/p") {
			t.Fatalf("duplicate without its URL: %+v", p)
		}
	}
	for name, k := range files.opens {
		if k != 1 {
			t.Errorf("%s opened %d times", name, k)
		}
	}
}
