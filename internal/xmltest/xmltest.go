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

// Validate checks that data (plain or gzip) is a <urlset> valid against
// sitemap.xsd or a <sitemapindex> valid against siteindex.xsd, as its root says.
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
	schema := "sitemap.xsd"
	if bytes.Contains(data[:min(len(data), 200)], []byte("<sitemapindex")) {
		schema = "siteindex.xsd"
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join(schemaDir(), schema), "-")
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
