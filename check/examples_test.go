package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

// The examples in testdata/examples are copies of shared/schemas/examples:
// valid-* must pass and invalid-* must fail, here with the reason named.
var examples = []struct {
	file string
	want Code // "" for valid
}{
	{"valid-urlset-minimal.xml", ""},
	{"valid-urlset-extensions.xml", ""},
	{"valid-urlset-extensions.xml.gz", ""},
	{"valid-sitemapindex.xml", ""},
	{"valid-sitemapindex.xml.gz", ""},
	{"invalid-changefreq.xml", CodeChangefreqInvalid},
	{"invalid-element-order.xml", CodeUnexpectedElement},
	{"invalid-image-missing-loc.xml", CodeMissingElement},
	{"invalid-lastmod-format.xml", CodeLastmodInvalid},
	{"invalid-no-namespace.xml", CodeWrongRoot},
	{"invalid-not-well-formed.xml", CodeNotWellFormed},
	{"invalid-priority-out-of-range.xml", CodePriorityInvalid},
	{"invalid-priority-out-of-range.xml.gz", CodePriorityInvalid},
	{"invalid-sitemapindex-missing-loc.xml", CodeMissingElement},
	{"invalid-unknown-extension-namespace.xml", CodeUnknownExtension},
	{"invalid-url-missing-loc.xml", CodeMissingElement},
}

func TestExamplesCovered(t *testing.T) {
	ents, err := os.ReadDir("testdata/examples")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, e := range examples {
		listed[e.file] = true
	}
	for _, e := range ents {
		if !listed[e.Name()] {
			t.Errorf("testdata/examples/%s has no expectation in the table", e.Name())
		}
	}
}

// exampleFiles returns the bytes of every file in testdata/examples.
func exampleFiles(tb testing.TB) [][]byte {
	ents, err := os.ReadDir("testdata/examples")
	if err != nil {
		tb.Fatal(err)
	}
	var files [][]byte
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/examples", e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, b)
	}
	return files
}

func gz(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustScope(t testing.TB, s string) *encode.Scope {
	sc, err := encode.ParseScope(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// exampleSet puts one example file in a folder of its own, with the
// sitemaps the index examples list, and returns the options to check it.
func exampleSet(t *testing.T, file string) (string, Options) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata/examples", file))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, file, data)
	opt := Options{Limits: Ours}
	if strings.Contains(file, "sitemapindex") && strings.HasPrefix(file, "valid-") {
		opt.PublicURL = mustScope(t, "https://www.example.com/sitemaps/")
		opt.Scope = mustScope(t, "https://www.example.com/")
		for i := 1; i <= 3; i++ {
			doc := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
				`<urlset xmlns="%s"><url><loc>https://www.example.com/page-%d</loc></url></urlset>`+"\n", NSSitemap, i)
			writeFile(t, dir, fmt.Sprintf("sitemap-%05d.xml.gz", i), gz(t, []byte(doc)))
		}
	}
	return dir, opt
}

func TestExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			dir, opt := exampleSet(t, ex.file)
			rep, err := Set(context.Background(), Dir(dir), ex.file, opt)
			if err != nil {
				t.Fatal(err)
			}
			if ex.want == "" {
				if !rep.OK() {
					t.Fatalf("valid example has problems: %v", rep.List)
				}
				if rep.URLs == 0 {
					t.Errorf("no URLs counted: %+v", rep)
				}
				return
			}
			if rep.ByCode[ex.want] == 0 {
				t.Fatalf("want a %s problem, got %v", ex.want, rep.List)
			}
			for _, p := range rep.List {
				if p.Line == 0 && p.Code.Schema() {
					t.Errorf("schema problem without a line: %v", p)
				}
			}
		})
	}
}
