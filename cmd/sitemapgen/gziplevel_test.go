package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGzipLevelKeepsLastmods: issue 22's done-when 5. A --gzip-level
// change rewrites every sitemap (other bytes, other names) but their XML
// did not change, so neither does their index <lastmod>.
func TestGzipLevelKeepsLastmods(t *testing.T) {
	in := repairInput(t)
	out, report := t.TempDir(), filepath.Join(t.TempDir(), "report.json")
	gen := func(level, now string) string {
		t.Helper()
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100",
			"--cut", "tight", "--gzip-level", level, "--now", now, "--report", report, in)
		if code != 0 {
			t.Fatalf("--gzip-level %s: exit %d\n%s", level, code, stderr)
		}
		root, err := os.ReadFile(filepath.Join(out, "sitemap.xml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(root)
	}
	before := gen("6", "2026-11-24T12:00:00Z")
	after := gen("9", "2026-11-25T12:00:00Z")
	rep := readReport(t, report)
	if rep.Uploaded.Shards != rep.Shards || rep.Reused != 0 || before == after {
		t.Fatalf("level 6 -> 9: uploaded %d of %d shards, reused %d; root changed %v: want every sitemap rewritten",
			rep.Uploaded.Shards, rep.Shards, rep.Reused, before != after)
	}
	dates := lastmodRE.FindAllStringSubmatch(after, -1)
	if len(dates) != rep.Shards+1 { // and the news sitemap
		t.Fatalf("%d lastmods in the root, want %d", len(dates), rep.Shards+1)
	}
	for _, d := range dates {
		if d[1] != "2026-11-24T12:00:00Z" {
			t.Errorf("<lastmod>%s</lastmod> after a --gzip-level change, want the first night's", d[1])
		}
	}
	if strings.Count(after, "2026-11-24T12:00:00Z") != len(dates) {
		t.Error("the root dates a sitemap with the second night")
	}
}
