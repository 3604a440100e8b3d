package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/check"
)

// TestHreflangReciprocityCLI: the fixture with reciprocal pairs, one
// missing back-link, one missing self link and one link outside the set:
// generate's report and --hreflang-report CSV, and validate, report
// exactly those three.
func TestHreflangReciprocityCLI(t *testing.T) {
	dir := t.TempDir()
	out, csvPath, repPath := filepath.Join(dir, "out"), filepath.Join(dir, "hreflang.csv"), filepath.Join(dir, "report.json")
	fixture := filepath.Join("..", "..", "testdata", "hreflang-reciprocity.csv")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", "https://www.example.com/", "--out", out,
		"--hreflang-report", csvPath, "--report", repPath, fixture); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	rep := readReport(t, repPath)
	if h := rep.Hreflang; h == nil || h.NotReciprocal != 1 || h.MissingSelf != 1 || h.TargetMissing != 1 || h.Links != 12 || h.Pages != 8 {
		t.Fatalf("report hreflang %+v", rep.Hreflang)
	}
	csv, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	want := `page,hreflang,target,problem,missing
https://www.example.com/en/b,de,https://www.example.com/de/b,not_reciprocal,a link from the target back to the page
https://www.example.com/en/c,,https://www.example.com/en/c,missing_self,a link from the page to itself
https://www.example.com/en/d,fr,https://www.example.com/fr/d,target_missing,the target as a page of the set
`
	if string(csv) != want {
		t.Fatalf("CSV\n%s\nwant\n%s", csv, want)
	}

	vrep := filepath.Join(dir, "validate.json")
	code, _, stderr := sitemapgen(t, "", "validate", "--report", vrep, out)
	if code != 1 {
		t.Fatalf("validate: exit %d; want 1\n%s", code, stderr)
	}
	var got check.Report
	b, _ := os.ReadFile(vrep)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, p := range got.List {
		seen = append(seen, string(p.Code)+" "+p.Value)
	}
	wantSeen := []string{
		"hreflang_missing_self https://www.example.com/en/c",
		"hreflang_not_reciprocal https://www.example.com/de/b",
		"hreflang_target_missing https://www.example.com/fr/d",
	}
	slices.Sort(seen)
	if strings.Join(seen, "\n") != strings.Join(wantSeen, "\n") {
		t.Fatalf("validate problems:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(wantSeen, "\n"))
	}
	for _, p := range got.List {
		if p.Line == 0 || !strings.HasPrefix(p.File, "sitemap-") {
			t.Fatalf("problem without its place: %+v", p)
		}
	}
}
