package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkSum asserts the report's accounting: rows = urls + rejected + unfinished.
func checkSum(t *testing.T, report string) {
	t.Helper()
	rep := readReport(t, report)
	if rep.Rows != rep.URLs+rep.Rejected.Total+rep.Unfinished {
		t.Errorf("rows=%d urls=%d rejected=%d unfinished=%d: the sum does not hold", rep.Rows, rep.URLs, rep.Rejected.Total, rep.Unfinished)
	}
	if rep.Error == "" {
		t.Errorf("the report of a failed run carries no error")
	}
}

// TestFailedRunReportAddsUp: a run that fails part way (a gzip input
// corrupted half way, after rows of it were accepted and rejected) reports
// every row it read as a URL, a reject or unfinished.
func TestFailedRunReportAddsUp(t *testing.T) {
	dir := t.TempDir()
	var rows strings.Builder
	for i := range 200000 {
		if i%10 == 0 {
			fmt.Fprintf(&rows, "https://other.example/%d\n", i) // out of scope: rejected
		} else {
			fmt.Fprintf(&rows, "%sp/%d\n", base, i)
		}
	}
	data := gz(t, rows.String())
	data[len(data)*3/4] ^= 0xff
	p := filepath.Join(dir, "broken.csv.gz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(dir, "out"), "--report", report, p)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	checkSum(t, report)
	if rep := readReport(t, report); rep.Rejected.Total == 0 || rep.Rows == 0 {
		t.Errorf("rows=%d rejected=%d: the rows before the damage are not counted", rep.Rows, rep.Rejected.Total)
	}
}

// TestConfigFailureWritesReport: --out naming a regular file fails (exit 1)
// and still writes --report with the error; --out ” is a usage error.
func TestConfigFailureWritesReport(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "not-a-folder")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", file, "--report", report, "../../testdata/sample.csv")
	if code != 1 {
		t.Fatalf("--out a file: exit %d, want 1\n%s", code, stderr)
	}
	if rep := readReport(t, report); !strings.Contains(rep.Error, "not-a-folder") {
		t.Errorf("report error %q does not name the output", rep.Error)
	}
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", "", "../../testdata/sample.csv"); code != 2 {
		t.Errorf("--out '': exit %d, want 2\n%s", code, stderr)
	}
}

// TestRejectsSummary: without --rejects, a run that rejects rows names its
// top reasons and points to --rejects.
func TestRejectsSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "../../testdata/sample.csv")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "--rejects FILE") || !strings.Contains(stderr, "out_of_scope") {
		t.Errorf("no rejects summary naming a reason and --rejects:\n%s", stderr)
	}
	code, _, stderr = sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--rejects", filepath.Join(t.TempDir(), "r.csv"), "../../testdata/sample.csv")
	if code != 0 || strings.Contains(stderr, "rerun with --rejects") {
		t.Errorf("with --rejects: exit %d, and the hint should not be there:\n%s", code, stderr)
	}
}
