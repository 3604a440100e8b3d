package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// repoRoot is the module's folder.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// schemaProblems runs the Go rules on one document and returns the
// problems the XSDs also catch.
func schemaProblems(t testing.TB, doc []byte) []Problem {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "doc.xml", doc)
	rep, err := Set(context.Background(), Dir(dir), "doc.xml", Options{Limits: Protocol, SkipOrphans: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []Problem
	for _, p := range rep.List {
		if p.Code.Schema() {
			out = append(out, p)
		}
	}
	return out
}

// xmllintCore validates doc with xmllint against testdata/schemas'
// sitemap.xsd or siteindex.xsd (by its root), as the tests of generate do.
func xmllintCore(t testing.TB, xmllint string, doc []byte) (bool, string) {
	schema := "sitemap.xsd"
	if bytes.Contains(doc, []byte("<sitemapindex")) {
		schema = "siteindex.xsd"
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join(repoRoot(), "testdata", "schemas", schema), "-")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// validateSh runs shared/schemas/validate.sh (sitemap-combined.xsd, with
// the extension schemas) when this workplace has it.
func validateSh(t testing.TB, doc []byte) (ok bool, out string, present bool) {
	script := filepath.Join(repoRoot(), "..", "shared", "schemas", "validate.sh")
	if _, err := os.Stat(script); err != nil {
		return false, "", false
	}
	dir := t.TempDir()
	writeFile(t, dir, "doc.xml", doc)
	b, err := exec.Command("bash", script, filepath.Join(dir, "doc.xml")).CombinedOutput()
	if ee, isExit := err.(*exec.ExitError); isExit && ee.ExitCode() == 2 {
		t.Fatalf("validate.sh: %s", b)
	}
	return err == nil, string(b), true
}

func readExample(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata/examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgreesWithXmllint is the differential test: the Go rules find a schema
// problem exactly when xmllint rejects the document, on the examples and
// on mutated variants of them.
func TestAgreesWithXmllint(t *testing.T) {
	xmllint := xmltest.Lookup(t) // fails under SITEMAPGEN_REQUIRE_XMLLINT, else skips
	var core, all [][]byte
	for _, ex := range examples {
		if strings.HasSuffix(ex.file, ".gz") {
			continue
		}
		doc := readExample(t, ex.file)
		all = append(all, doc)
		if !bytes.Contains(doc, []byte("xmlns:")) {
			core = append(core, doc)
		}
	}
	n := 60 // SITEMAPGEN_DIFF_N raises it for a longer hunt
	if v, err := strconv.Atoi(os.Getenv("SITEMAPGEN_DIFF_N")); err == nil {
		n = v
	}
	if testing.Short() {
		n = 30
	}
	core = append(core, xmltest.Variants(readExample(t, "valid-urlset-minimal.xml"), 1, n)...)
	core = append(core, xmltest.Variants(readExample(t, "valid-sitemapindex.xml"), 2, n/2)...)
	all = append(all, core...)
	all = append(all, xmltest.Variants(readExample(t, "valid-urlset-extensions.xml"), 3, n)...)

	for i, doc := range core {
		ok, out := xmllintCore(t, xmllint, doc)
		ours := schemaProblems(t, doc)
		if ok != (len(ours) == 0) {
			t.Errorf("core doc %d: xmllint valid=%v, Go rules %v\nxmllint: %s\n%s", i, ok, ours, firstLine(out), doc)
		}
	}
	checked := 0
	for i, doc := range all {
		ok, out, present := validateSh(t, doc)
		if !present {
			t.Log("../shared/schemas/validate.sh is absent: the extension part of the differential test is skipped")
			break
		}
		checked++
		ours := schemaProblems(t, doc)
		if ok != (len(ours) == 0) {
			t.Errorf("doc %d: validate.sh valid=%v, Go rules %v\nvalidate.sh: %s\n%s", i, ok, ours, firstLine(out), doc)
		}
	}
	t.Logf("%d documents checked against xmllint with sitemap.xsd/siteindex.xsd, %d against sitemap-combined.xsd", len(core), checked)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return fmt.Sprintf("%.300s", s)
}
