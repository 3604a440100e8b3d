// Package xmltest validates files against the official sitemap schemas with
// xmllint, for tests. Without xmllint the checks are skipped, unless
// SITEMAPGEN_REQUIRE_XMLLINT is set (CI sets it), in which case they fail.
package xmltest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// RequireEnv names the variable that turns a missing xmllint into a failure.
const RequireEnv = "SITEMAPGEN_REQUIRE_XMLLINT"

func schemaDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "schemas")
}

// Lookup returns the xmllint path, skipping or failing t when it is absent.
func Lookup(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("xmllint not found and %s is set: install libxml2-utils", RequireEnv)
		}
		t.Skip("xmllint not found (install libxml2-utils); skipping schema validation")
	}
	return p
}

// SharedSchemaDir returns the folder of the official schemas with the
// extension schemas (../shared/schemas beside the repository: the Google
// extension XSDs carry no licence, so they are not part of the repository).
// Without it t is skipped, unless RequireEnv is set (CI, which always has
// ../shared beside the clone): then t fails.
func SharedSchemaDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(schemaDir()), "..", "..", "shared", "schemas")
	if _, err := os.Stat(filepath.Join(dir, "sitemap-combined.xsd")); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("extension schemas not found (%v) and %s is set: ../shared/schemas must be beside the repository", err, RequireEnv)
		}
		t.Skipf("extension schemas not found (%v); skipping validation with extensions", err)
	}
	return dir
}

// extensionDecl is in the urlset start tag of a sitemap with extensions.
var extensionDecl = []byte(" xmlns:")

// newsName matches the names of news sitemaps (publish.Layout.News).
var newsName = regexp.MustCompile(`-news-[0-9]{4,}\.xml\.gz$`)

// IsNews reports whether name is a news sitemap's.
func IsNews(name string) bool { return newsName.MatchString(name) }

// EmptyNews reports whether the uncompressed data of the file name is an
// empty news sitemap: a news sitemap's name, a urlset that declares the
// news namespace, and no <url>.
func EmptyNews(name string, data []byte) bool {
	return IsNews(name) && bytes.Contains(data, []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`)) &&
		bytes.Contains(data, []byte(` xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"`)) &&
		!bytes.Contains(data, []byte("<url>")) && bytes.HasSuffix(data, []byte("</urlset>\n"))
}

// Validate checks that data (plain or gzip) is a <urlset> valid against
// sitemap.xsd or a <sitemapindex> valid against siteindex.xsd, as its root says.
// A urlset that declares extension namespaces is validated against
// sitemap-combined.xsd of SharedSchemaDir, which holds every extension
// schema, in one xmllint call. An empty news sitemap (EmptyNews) passes.
func Validate(t testing.TB, name string, data []byte) {
	t.Helper()
	xmllint := Lookup(t)
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: gzip: %v", name, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: gzip: %v", name, err)
		}
	}
	if EmptyNews(name, data) {
		// sitemap.xsd asks for one <url>; Google accepts a news sitemap
		// without one, which a run with no fresh article writes.
		return
	}
	schema := "sitemap.xsd"
	dir := schemaDir()
	var env []string
	head := data[:min(len(data), 1000)]
	if end := bytes.IndexByte(head, '>'); end >= 0 {
		if e := bytes.IndexByte(head[end+1:], '>'); e >= 0 {
			head = head[:end+1+e] // the declaration and the root's start tag
		}
	}
	switch {
	case bytes.Contains(head, []byte("<sitemapindex")):
		schema = "siteindex.xsd"
	case bytes.Contains(head, extensionDecl):
		dir, schema = SharedSchemaDir(t), "sitemap-combined.xsd"
		// xhtml1-strict.xsd imports xml.xsd by URL: the catalog maps it to the local copy.
		env = append(os.Environ(), "XML_CATALOG_FILES="+filepath.Join(dir, "catalog.xml"))
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join(dir, schema), "-")
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s is not valid against %s: %v\n%s", name, schema, err, firstLines(string(out), 5))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
