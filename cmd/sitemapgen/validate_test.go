package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// uniqueInput writes a CSV of n distinct URLs.
func uniqueInput(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("loc,lastmod,changefreq,priority\n")
	for i := range n {
		fmt.Fprintf(&b, "%sitems/%d?a=1&b=%d,2024-01-%02dT10:00:00+02:00,daily,0.5\n", base, i, i, 1+i%28)
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100",
		"--cut", "tight", "--index-fanout", "3", uniqueInput(t, 1000)); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}

	// A clean set: exit 0, nothing on stdout, a summary, a report.
	report := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, "--index-fanout", "3", "--report", report, out)
	if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "OK ") || !strings.Contains(stderr, "10 sitemaps, 7 indexes, 1000 URLs") {
		t.Fatalf("clean set: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var rep check.Report
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &rep); err != nil || rep.URLs != 1000 || rep.Problems != 0 || rep.List == nil {
		t.Fatalf("report: %v\n%s", err, b)
	}

	// The root file named directly, --public-url inferred; our fanout (1000) is fine too.
	if code, _, stderr := sitemapgen(t, "", "validate", filepath.Join(out, "sitemap.xml")); code != 0 {
		t.Fatalf("root file: exit %d\n%s", code, stderr)
	}

	// Problems: exit 1, one line each, FILE:LINE: CODE: ...
	code, stdout, stderr = sitemapgen(t, "", "validate", "--max-urls", "99", "--index-fanout", "2", out)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 1 || len(lines) != 10+4 /* 10 shards of 100; the indexes of 3 and 4 entries */ || !strings.HasPrefix(stderr, "FAIL ") {
		t.Fatalf("limits: exit %d, %d lines\n%s\n%s", code, len(lines), stdout, stderr)
	}
	lineRE := regexp.MustCompile(`^sitemap[-.0-9a-z]*xml(\.gz)?(:\d+)?: (too_many_urls|too_many_entries): `)
	for _, l := range lines {
		if !lineRE.MatchString(l) {
			t.Errorf("problem line %q", l)
		}
	}

	// --max-problems stops early and says so.
	code, stdout, stderr = sitemapgen(t, "", "validate", "--max-urls", "99", "--max-problems", "2", out)
	if code != 1 || strings.Count(stdout, "\n") != 2 || !strings.Contains(stderr, "incomplete") {
		t.Errorf("--max-problems 2: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// --protocol-max.
	code, _, _ = sitemapgen(t, "", "validate", "--protocol-max", "--report", report, out)
	b, _ = os.ReadFile(report)
	json.Unmarshal(b, &rep)
	if code != 0 || rep.Limits["max_bytes"] != 52428800 || rep.Limits["max_entries"] != 50000 {
		t.Errorf("--protocol-max: exit %d, limits %v", code, rep.Limits)
	}
}

func TestValidateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"validate"},
		{"validate", ".", "s3:///no-bucket/"}, // a bad second ROOT: nothing is checked
		{"validate", "--nope", "x"},
		{"validate", "--public-url", "ftp://x/", "."},
		{"validate", "s3:///no-bucket/"},
	} {
		code, _, stderr := sitemapgen(t, "", args...)
		if code != 2 || strings.Contains(stderr, "OK ") || strings.Contains(stderr, "FAIL ") {
			t.Errorf("%q: exit %d, want 2 and no check\n%s", args, code, stderr)
		}
		if strings.HasPrefix(args[len(args)-1], "s3://") && !strings.Contains(stderr, "no bucket") {
			t.Errorf("s3: %s", stderr)
		}
	}
	if code, stdout, _ := sitemapgen(t, "", "help", "validate"); code != 0 || !strings.Contains(stdout, "--protocol-max") {
		t.Errorf("help validate: exit %d\n%s", code, stdout)
	}
	if code, _, _ := sitemapgen(t, "", "validate", filepath.Join(t.TempDir(), "missing")); code != 1 {
		t.Errorf("missing ROOT: exit %d, want 1", code)
	}
	// A --name generate would refuse names no root: a usage error.
	if code, _, stderr := sitemapgen(t, "", "validate", "--name", "../x", t.TempDir()); code != 2 || !strings.Contains(stderr, "--name") {
		t.Errorf("validate --name ../x: exit %d, want 2\n%s", code, stderr)
	}
}

// TestValidateSeveralRoots: each host's folder of a --group-by host run
// in one call: a summary each, one report per set, and a failed or
// missing set fails the call without hiding the others' results.
func TestValidateSeveralRoots(t *testing.T) {
	dir := t.TempDir()
	hosts := []string{"a.example.com", "b.example.com", "c.example.com"}
	var in strings.Builder
	in.WriteString("loc\n")
	for i := range 90 {
		fmt.Fprintf(&in, "https://%s/p/%d\n", hosts[i%3], i)
	}
	input := inputtest.WriteFile(t, "in.csv", []byte(in.String()))
	out := filepath.Join(dir, "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "host", "--public-url", "https://{group}/",
		"--out", filepath.Join(out, "{group}"), "--max-urls", "10", "--cut", "tight", input); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	roots := make([]string, len(hosts))
	for i, h := range hosts {
		roots[i] = filepath.Join(out, h)
	}

	report := filepath.Join(dir, "report.json")
	code, stdout, stderr := sitemapgen(t, "", append([]string{"validate", "--report", report}, roots...)...)
	if code != 0 || stdout != "" || strings.Count(stderr, "OK ") != 3 || !strings.Contains(stderr, "3 sitemaps, 1 indexes, 30 URLs") {
		t.Fatalf("three clean sets: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var reps []check.Report
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 3 {
		t.Fatalf("report: %v, %d reports\n%s", err, len(reps), b)
	}
	for i, r := range reps {
		// Every set's root is sitemap.xml: the location tells them apart.
		if r.URLs != 30 || r.Problems != 0 || r.Location != filepath.Join(roots[i], "sitemap.xml") {
			t.Errorf("report %d: %d URLs, %d problems, location %q", i, r.URLs, r.Problems, r.Location)
		}
	}

	// One host's shard gone and a fourth ROOT that does not exist: both
	// fail the call, the other two sets are still checked and pass.
	shards, _ := filepath.Glob(filepath.Join(roots[1], "sitemap-0*.xml.gz"))
	if len(shards) != 3 {
		t.Fatalf("%d shards in %s", len(shards), roots[1])
	}
	if err := os.Remove(shards[0]); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"validate", "--report", report}, roots...)
	code, stdout, stderr = sitemapgen(t, "", append(args, filepath.Join(out, "d.example.com"))...)
	if code != 1 || strings.Count(stderr, "OK ") != 2 || strings.Count(stderr, "FAIL ") != 1 ||
		!strings.Contains(stderr, "FAIL "+filepath.Join(roots[1], "sitemap.xml")) || !strings.Contains(stderr, "d.example.com") ||
		strings.Count(stdout, "missing_file") != 1 {
		t.Fatalf("a broken set and a missing ROOT: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	b, _ = os.ReadFile(report)
	// The missing ROOT has its entry too: it is what fails the call.
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 4 || reps[1].OK() || !reps[0].OK() || !reps[2].OK() ||
		reps[3].ByCode[check.CodeUnreadable] != 1 || reps[3].Location != filepath.Join(out, "d.example.com") {
		t.Fatalf("report: %v, %d reports\n%s", err, len(reps), b)
	}
}

// TestGenerateVerify: --verify passes a good run (duplicate input URLs only
// warn), and a failing Verify hook publishes nothing.
func TestGenerateVerify(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--verify", "--public-url", base, "--out", out,
		"--max-urls", "500", "../../testdata/sample.csv")
	if code != 0 || !strings.Contains(stderr, "verify: the set is valid") || strings.Contains(stderr, "duplicate URLs") {
		t.Fatalf("sample: exit %d\n%s", code, stderr)
	}
	dup := filepath.Join(t.TempDir(), "dup.csv")
	os.WriteFile(dup, []byte("loc\n"+base+"a\n"+base+"b\n"+base+"a\n"), 0o644)
	code, _, stderr = sitemapgen(t, "", "generate", "--verify", "--public-url", base, "--out", filepath.Join(t.TempDir(), "out"), dup)
	if code != 0 || !strings.Contains(stderr, "verify: the set is valid") || !strings.Contains(stderr, "duplicate URLs") {
		t.Fatalf("duplicate input URLs must warn, not fail: exit %d\n%s", code, stderr)
	}

	dir := filepath.Join(t.TempDir(), "out")
	pub, _ := encode.ParseScope(base)
	s, _ := sink.NewLocal(dir)
	called := false
	_, err := pipeline.Run(context.Background(), pipeline.Config{
		Inputs: []string{uniqueInput(t, 300)}, PublicURL: pub, Sink: s, Name: "sitemap",
		MaxURLs: 100, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1,
		Verify: func(ctx context.Context, root string, pending map[string][]byte, _ func(string) bool) error {
			called = true
			if data := pending[root]; root != "sitemap.xml" || !strings.Contains(string(data), "<sitemapindex") {
				t.Errorf("Verify got %s: %.100s", root, data)
			}
			if _, err := os.Stat(filepath.Join(dir, root)); err == nil {
				t.Errorf("the root is published before Verify")
			}
			return errors.New("injected")
		},
	})
	if !called || err == nil || !strings.Contains(err.Error(), "verify: injected") {
		t.Fatalf("Run: %v (Verify called: %v)", err, called)
	}
	leftNothing(t, dir, "a failed verify")
}

// TestValidateExamplesAlone: each file of shared/schemas/examples given on
// its own, beside the 15 others, is a check of that file: every valid-*
// passes, every invalid-* fails with its code, and the neighbours are not
// orphans. --no-follow checks an index alone; without it the index's
// three absent sitemaps are missing_file.
func TestValidateExamplesAlone(t *testing.T) {
	dir := "../../check/testdata/examples"
	want := map[string]string{
		"invalid-changefreq.xml": "changefreq_invalid", "invalid-element-order.xml": "unexpected_element",
		"invalid-image-missing-loc.xml": "missing_element", "invalid-lastmod-format.xml": "lastmod_invalid",
		"invalid-no-namespace.xml": "wrong_root", "invalid-not-well-formed.xml": "not_well_formed",
		"invalid-priority-out-of-range.xml": "priority_invalid", "invalid-priority-out-of-range.xml.gz": "priority_invalid",
		"invalid-sitemapindex-missing-loc.xml": "missing_element", "invalid-unknown-extension-namespace.xml": "unknown_extension",
		"invalid-url-missing-loc.xml": "missing_element",
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) < 16 {
		t.Fatalf("%d examples: %v", len(ents), err)
	}
	for _, e := range ents {
		name := e.Name()
		code, stdout, stderr := sitemapgen(t, "", "validate", "--no-follow", filepath.Join(dir, name))
		switch {
		case strings.HasPrefix(name, "valid-"):
			if code != 0 {
				t.Errorf("%s: exit %d\n%s%s", name, code, stdout, stderr)
			}
		case want[name] == "":
			t.Errorf("%s: no expectation", name)
		case code != 1 || !strings.Contains(stdout, ": "+want[name]+": ") || strings.Contains(stdout, "orphan_file"):
			t.Errorf("%s: exit %d, want %s\n%s", name, code, want[name], stdout)
		}
	}
	for _, name := range []string{"valid-sitemapindex.xml", "valid-sitemapindex.xml.gz"} {
		code, stdout, _ := sitemapgen(t, "", "validate", filepath.Join(dir, name))
		if code != 1 || strings.Count(stdout, ": missing_file: ") != 3 || strings.Count(stdout, "\n") != 3 {
			t.Errorf("%s followed: exit %d, want 3 missing_file\n%s", name, code, stdout)
		}
	}
	for _, name := range []string{"valid-urlset-minimal.xml", "valid-urlset-extensions.xml.gz"} {
		if code, stdout, _ := sitemapgen(t, "", "validate", filepath.Join(dir, name)); code != 0 {
			t.Errorf("%s followed: exit %d\n%s", name, code, stdout)
		}
	}
}

// TestValidateAfterTwoGenerates: generate twice into one folder (the first
// generation's shards are kept for crawlers), with an unrelated file and
// another stem's set beside it: validate on the folder and on its root
// passes; an unlisted file named as one of the set's shards is a failed
// run's leftover (a warning: the next run deletes it), an unlisted index of
// the set's naming an orphan.
func TestValidateAfterTwoGenerates(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	// The second run changes every shard: the first run's are kept (--keep-generations 1).
	for i, in := range []string{"../../testdata/sample.csv", uniqueInput(t, 2500)} {
		if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100", in); code != 0 {
			t.Fatalf("generate %d: exit %d\n%s", i, code, stderr)
		}
	}
	if shards, _ := filepath.Glob(filepath.Join(out, "sitemap-0*.xml.gz")); len(shards) <= 25 {
		t.Fatalf("no kept generation: %v", shards)
	}
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--name", "other", uniqueInput(t, 50)); code != 0 {
		t.Fatalf("generate other: exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(out, "feed.xml"), []byte("<rss/>"), 0o644)
	os.WriteFile(filepath.Join(out, "browserconfig.xml"), []byte("<browserconfig/>"), 0o644)
	for _, root := range []string{out, filepath.Join(out, "sitemap.xml")} {
		if code, stdout, stderr := sitemapgen(t, "", "validate", root); code != 0 {
			t.Errorf("%s: exit %d\n%s%s", root, code, stdout, stderr)
		}
	}
	leftover := "sitemap-000077-0123456789.xml.gz"
	b, _ := os.ReadFile(filepath.Join(out, "feed.xml"))
	os.WriteFile(filepath.Join(out, leftover), b, 0o644)
	for _, root := range []string{out, filepath.Join(out, "sitemap.xml")} {
		code, stdout, stderr := sitemapgen(t, "", "validate", root)
		if code != 0 || stdout != "" || !strings.Contains(stderr, "warning: 1 file(s) named as this set's sitemaps that nothing lists") || !strings.Contains(stderr, leftover) {
			t.Errorf("%s, leftover: exit %d\n%s%s", root, code, stdout, stderr)
		}
	}
	stray := "sitemap-index-0077.xml"
	os.WriteFile(filepath.Join(out, stray), b, 0o644)
	for _, root := range []string{out, filepath.Join(out, "sitemap.xml")} {
		code, stdout, _ := sitemapgen(t, "", "validate", root)
		if code != 1 || stdout != stray+": orphan_file: a file of set sitemap that no index of the set lists and no kept generation of sitemap.manifest.json uses\n" {
			t.Errorf("%s: exit %d\n%s", root, code, stdout)
		}
	}
}

// TestValidateBOM: a UTF-8 byte order mark before the XML declaration is
// allowed (XML 1.0, appendix F).
func TestValidateBOM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bom.xml")
	os.WriteFile(path, []byte("\xef\xbb\xbf"+`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://www.example.com/a</loc></url></urlset>`+"\n"), 0o644)
	if code, stdout, stderr := sitemapgen(t, "", "validate", path); code != 0 {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSummaryLocation: the summary names the root where it lives, with the
// two slashes of an s3:// prefix kept (filepath.Join made it "s3:/").
func TestSummaryLocation(t *testing.T) {
	for _, tc := range []struct{ where, want string }{
		{"s3://bucket/site/", "OK s3://bucket/site/sitemap.xml: "},
		{"s3://bucket/", "OK s3://bucket/sitemap.xml: "},
		{"s3://bucket/site", "OK s3://bucket/site/sitemap.xml: "},
		{"out/sitemaps", "OK " + filepath.Join("out", "sitemaps", "sitemap.xml") + ": "},
		{"", "OK sitemap.xml: "},
	} {
		var b strings.Builder
		summarize(&b, tc.where, &check.Report{Root: "sitemap.xml"})
		if !strings.HasPrefix(b.String(), tc.want) {
			t.Errorf("%q: summary %q, want it to start with %q", tc.where, b.String(), tc.want)
		}
	}
}

// TestVerifyMaxBytesPerSitemap: --max-bytes bounds each sitemap; an index
// file larger than it (600 sitemaps listed in 75 KB) is within the protocol,
// as generate writes it, for --verify and validate alike.
func TestVerifyMaxBytesPerSitemap(t *testing.T) {
	var b strings.Builder
	b.WriteString("loc\n")
	for i := range 60 {
		fmt.Fprintf(&b, "%sp/%d\n", base, i)
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(in, []byte(b.String()), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--verify", "--public-url", base, "--out", out, "--max-bytes", "4096", "--max-urls", "1", in)
	if code != 0 {
		t.Fatalf("--verify --max-bytes 4096: exit %d\n%s", code, stderr)
	}
	if st, err := os.Stat(filepath.Join(out, "sitemap.xml")); err != nil || st.Size() <= 4096 {
		t.Fatalf("the root index: %v, want it over 4096 bytes", err)
	}
	if code, stdout, stderr := sitemapgen(t, "", "validate", "--max-bytes", "4096", "--max-urls", "1", out); code != 0 {
		t.Errorf("validate --max-bytes 4096: exit %d\n%s%s", code, stdout, stderr)
	}
}
