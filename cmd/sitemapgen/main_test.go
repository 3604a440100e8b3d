package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

const base = "https://www.example.com/"

// sitemapgen runs the command in-process and returns its exit code and output.
func sitemapgen(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// readCSV returns the records of the CSV file path (a rejects file).
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// leftNothing fails t if the output folder dir holds any file after what
// (a failed or refused run).
func leftNothing(t *testing.T, dir, what string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		t.Errorf("%s left %d files in the output folder: %q", what, len(ents), names)
	}
}

func readReport(t *testing.T, path string) pipeline.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r pipeline.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	return r
}

// TestGenerateSample runs the README's first command on the bundled sample
// and checks the whole set: schema validity, accounting, rejects, robots lines.
func TestGenerateSample(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	report, rejects := filepath.Join(dir, "report.json"), filepath.Join(dir, "rejects.csv")
	code, stdout, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out,
		"--report", report, "--rejects", rejects, "--max-urls", "1000", "../../testdata/sample.csv")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	xmltest.ValidateDir(t, out)
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "sitemap-robots.txt")
	rep := readReport(t, report)
	// The README's first command must give a set its own validator passes.
	if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, out); code != 0 {
		t.Errorf("validate on the sample's output: exit %d\n%s%s", code, stdout, stderr)
	}

	if rep.Rows != 3000 {
		t.Errorf("rows = %d, want 3000 (the sample's data rows)", rep.Rows)
	}
	if rep.Rows != rep.URLs+rep.Rejected.Total || rep.Rejected.Total == 0 {
		t.Errorf("rows %d != urls %d + rejected %d (the sample has bad rows)", rep.Rows, rep.URLs, rep.Rejected.Total)
	}
	var urls int
	for _, s := range set.Shards {
		urls += len(s.URLs)
	}
	// Stable cuts (the default) fill a shard to between 60% and 98% of the
	// limit: 2,964 URLs at --max-urls 1000 make 4 or 5 shards.
	if int64(urls) != rep.URLs || rep.Shards != len(set.Shards) || rep.Shards < 4 || rep.Shards > 5 {
		t.Errorf("set has %d URLs in %d shards; report says %d in %d; want 4-5 stable shards at --max-urls 1000",
			urls, len(set.Shards), rep.URLs, rep.Shards)
	}
	for _, s := range set.Shards[:len(set.Shards)-1] {
		if n := len(s.URLs); n <= 600 || n > 1000 {
			t.Errorf("%s holds %d URLs: a stable cut lies between 601 and 1000", s.Name, n)
		}
	}
	if rep.GzipLevel != 6 || rep.BytesCompressed == 0 || rep.BytesUncompressed <= rep.BytesCompressed {
		t.Errorf("report sizes/level wrong: %+v", rep)
	}
	want := "Sitemap: " + base + "sitemap.xml"
	if len(set.Robots) != 1 || set.Robots[0] != want || strings.TrimSpace(stdout) != want {
		t.Errorf("robots lines %q, stdout %q; want %q", set.Robots, stdout, want)
	}

	recs := readCSV(t, rejects)
	if strings.Join(recs[0], ",") != "source,row,reason,value" || int64(len(recs)-1) != rep.Rejected.Total {
		t.Fatalf("rejects: header %q, %d rows; report says %d", recs[0], len(recs)-1, rep.Rejected.Total)
	}
	byReason := map[string]int64{}
	for _, r := range recs[1:] {
		byReason[r[2]]++
		if r[0] != "../../testdata/sample.csv" || r[1] == "" {
			t.Errorf("reject without source or row: %q", r)
		}
	}
	for reason, n := range rep.Rejected.ByReason {
		if byReason[reason] != n {
			t.Errorf("reason %s: %d in rejects file, %d in report", reason, byReason[reason], n)
		}
	}
	if rep.Warnings.Total == 0 {
		t.Errorf("the sample has bad optional fields but the report has no warnings")
	}
}

// TestDeterministic: the same input and flags give byte-identical files,
// whatever the number of workers.
func TestDeterministic(t *testing.T) {
	var sets [3]map[string][]byte
	for i, workers := range []string{"1", "2", "7"} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out,
			"--max-bytes", "20000", "--index-fanout", "3", "--workers", workers, "--now", "2026-11-24T02:00:00Z", "../../testdata/sample.csv")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		sets[i] = map[string][]byte{}
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			sets[i][e.Name()], _ = os.ReadFile(filepath.Join(out, e.Name()))
		}
	}
	if len(sets[0]) < 10 {
		t.Fatalf("only %d files; the test wants a nested set", len(sets[0]))
	}
	for i := 1; i < len(sets); i++ {
		if len(sets[i]) != len(sets[0]) {
			t.Fatalf("run %d wrote %d files, run 0 wrote %d", i, len(sets[i]), len(sets[0]))
		}
		for name, data := range sets[0] {
			if name == "sitemap.manifest.json" {
				// It records when the run was and how long it took; the
				// files it lists (names, sizes, SHA-256) must be the same.
				data, sets[i][name] = manifestFiles(t, data), manifestFiles(t, sets[i][name])
			}
			if !bytes.Equal(sets[i][name], data) {
				t.Errorf("run %d: %s differs", i, name)
			}
		}
	}
}

// manifestFiles returns the "files" member of a manifest.
func manifestFiles(t *testing.T, manifest []byte) []byte {
	t.Helper()
	var m struct{ Files json.RawMessage }
	if err := json.Unmarshal(manifest, &m); err != nil || len(m.Files) == 0 {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	return m.Files
}

// TestBadInput: every kind of bad input gets a clear message and the
// contract's exit code; nothing is published on failure.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "loc\n"+base+"a\n")
	tests := []struct {
		name string
		args []string
		code int
		msg  []string // all must appear on stderr
	}{
		{"missing file", []string{filepath.Join(dir, "nope.csv")}, 1, []string{"nope.csv", "no such file"}},
		{"empty file", []string{write("empty.csv", "")}, 1, []string{"empty.csv", "no data rows"}},
		{"header only", []string{write("header.csv", "loc,lastmod\n")}, 1, []string{"header.csv", "no data rows"}},
		{"no loc column", []string{write("noloc.csv", "url,lastmod\n"+base+"a,2024-01-01\n")}, 1, []string{"noloc.csv", "loc", "--loc-column"}},
		{"mapped column missing", []string{"--lastmod-column", "modified", write("nomod.csv", "loc,lastmod\n"+base+"a,2024-01-01\n")}, 1, []string{"nomod.csv:1", `"modified"`}},
		{"broken quote", []string{write("quote.csv", "loc\n"+base+"a\n\""+base+"b\n"+base+"c\n")}, 1, []string{"quote.csv:3"}},
		{"bare quote", []string{write("bare.csv", "loc\n"+base+"a\"b\n")}, 1, []string{"bare.csv:2"}},
		{"all rejected", []string{write("bad.csv", "loc\nhttps://other.example/a\n")}, 1, []string{"no URLs to publish", "out_of_scope 1", "--scope", "--rejects FILE"}},
		{"all outside the public folder", []string{"--public-url", base + "sitemaps/", write("folder.csv", "loc\n"+base+"p/1\nftp://x/\n")}, 1,
			[]string{"no URLs to publish", "out_of_scope 1", "not_http_url 1", "under " + base + "sitemaps/ (the scope defaults to --public-url's folder)"}},
		{"no public url", []string{"--public-url", "", good}, 2, []string{"--public-url"}},
		{"bad public url", []string{"--public-url", "ftp://x/", good}, 2, []string{"--public-url"}},
		{"no input", []string{}, 2, []string{"no INPUT"}},
		{"unknown flag", []string{"--frobnicate", good}, 2, []string{"frobnicate"}},
		{"max urls", []string{"--max-urls", "50001", good}, 2, []string{"50000"}},
		{"max bytes", []string{"--max-bytes", "100", good}, 2, []string{"--max-bytes 100: must be 4096..52428800"}},
		{"fanout", []string{"--index-fanout", "0", good}, 2, []string{"--index-fanout 0"}},
		{"workers", []string{"--workers", "-1", good}, 2, []string{"--workers -1"}},
		{"lock ttl", []string{"--lock-ttl", "500ms", good}, 2, []string{"--lock-ttl 500ms: must be at least 1s"}},
		{"lock wait", []string{"--lock-wait", "-1s", good}, 2, []string{"--lock-wait -1s: must be 0 or more"}},
		{"media query, a control character", []string{"--media-query", "screen\x01", good}, 2, []string{`--media-query "screen\x01": must be`}},
		{"media query, not UTF-8", []string{"--media-query", "screen \xff", good}, 2, []string{`--media-query "screen \xff": must be`}},
		{"keep generations", []string{"--keep-generations", "-1", good}, 2, []string{"--keep-generations -1"}},
		{"max shrink, a fraction", []string{"--max-shrink", "0.7", good}, 2, []string{`--max-shrink: "0.7": write 70% or 0.7%`}},
		{"tz", []string{"--lastmod-tz", "Mars/Olympus", good}, 2, []string{"--lastmod-tz"}},
		{"max news urls 0", []string{"--max-news-urls", "0", good}, 2, []string{"--max-news-urls"}},
		{"max news urls 1001", []string{"--max-news-urls", "1001", good}, 2, []string{"1..1000"}},
		{"news window", []string{"--news-window", "-1h", good}, 2, []string{"--news-window"}},
		{"public url too long", []string{"--public-url", base + strings.Repeat("a", 2020) + "/", good}, 2, []string{"too long"}},
		{"fanout 1, two sitemaps", []string{"--index-fanout", "1", "--max-urls", "1", write("two.csv", "loc\n"+base+"a\n"+base+"b\n")}, 1, []string{"fanout 1"}},
		{"folder input", []string{dir}, 1, []string{"folder"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"generate", "--public-url", base, "--out", out}, tc.args...)
			code, _, stderr := sitemapgen(t, "", args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, m := range tc.msg {
				if !strings.Contains(stderr, m) {
					t.Errorf("stderr lacks %q:\n%s", m, stderr)
				}
			}
			leftNothing(t, out, "the failed run")
		})
	}
}

// TestBadRowsAreRejectedNotLost: rows with invalid UTF-8, control characters
// or other hosts are listed in the rejects with file, row and reason, and the
// rest of the file is published.
func TestBadRowsAreRejectedNotLost(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	content := "loc,lastmod\n" +
		base + "ok-1,2024-01-01\n" +
		base + "bad-\xff-utf8,\n" +
		"\"" + base + "ctl\x01\",\n" +
		"https://other.example/x,\n" +
		base + "ok-2,2024-13-01\n"
	if err := os.WriteFile(in, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	rejects := filepath.Join(dir, "rejects.csv")
	out := filepath.Join(dir, "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--rejects", rejects, in)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	recs := readCSV(t, rejects)
	got := []string{}
	for _, r := range recs[1:] {
		got = append(got, r[1]+" "+r[2])
	}
	want := []string{"3 invalid_utf8", "4 control_character", "5 out_of_scope"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rejects = %q, want %q", got, want)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	if n := len(set.Shards[0].URLs); n != 2 || set.Shards[0].URLs[1].Lastmod != "" {
		t.Errorf("published %+v; want ok-1 and ok-2 (its impossible lastmod dropped)", set.Shards[0].URLs)
	}
}

// TestStdinAndInterspersedFlags: '-' reads CSV from stdin; flags may follow inputs.
func TestStdinAndInterspersedFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, base+"a\n"+base+"b\n", "generate", "-", "--public-url", base, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "sitemap-robots.txt")
	if len(set.Shards) != 1 || len(set.Shards[0].URLs) != 2 {
		t.Fatalf("got %+v", set.Shards)
	}
}

func TestHelpAndVersion(t *testing.T) {
	if code, out, _ := sitemapgen(t, "", "--version"); code != 0 || !strings.HasPrefix(out, "sitemapgen ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, _, errOut := sitemapgen(t, "", "generate", "--help"); code != 0 || !strings.Contains(errOut, "--max-bytes") {
		t.Errorf("generate --help: exit %d, %q", code, errOut)
	}
	if code, _, _ := sitemapgen(t, "", "frob"); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
}

// TestNewsFlags: --max-news-urls and --news-window reach the run, and
// --verify accepts the news sitemaps beside the shards they repeat.
func TestNewsFlags(t *testing.T) {
	var b strings.Builder
	b.WriteString("loc,news:publication_name,news:publication_language,news:publication_date,news:title\n")
	for i := range 25 {
		fmt.Fprintf(&b, "%sa%d,Daily,en,2026-11-%02dT08:00:00Z,T%d\n", base, i, 24-i/10, i) // 10 on the 24th, 10 on the 23rd, 5 on the 22nd
	}
	in := filepath.Join(t.TempDir(), "news.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report, "--verify",
		"--now", "2026-11-24T12:00:00Z", "--news-window", "30h", "--max-news-urls", "7", in)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rep := readReport(t, report)
	if rep.News == nil || rep.News.URLs != 10+10 || rep.News.Sitemaps != 3 || rep.Warnings.ByReason["news_expired"] != 5 || rep.URLs != 25 {
		t.Fatalf("news %+v, warnings %v, urls %d; want 20 items in 3 sitemaps, 5 expired, 25 URLs", rep.News, rep.Warnings.ByReason, rep.URLs)
	}
	for _, n := range []string{"sitemap-news-0001.xml.gz", "sitemap-news-0002.xml.gz", "sitemap-news-0003.xml.gz"} {
		if _, err := os.Stat(filepath.Join(out, n)); err != nil {
			t.Error(err)
		}
	}
}

// TestDeepIndexesWarn: a small --index-fanout may nest the indexes deeper
// than crawlers and validate follow (3 levels): the run publishes and says
// so, with the --max-depth that validates the set.
func TestDeepIndexesWarn(t *testing.T) {
	var in strings.Builder
	in.WriteString("loc\n")
	for i := range 9 {
		fmt.Fprintf(&in, "%sp/%d\n", base, i)
	}
	input := filepath.Join(t.TempDir(), "nine.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--index-fanout", "2", "--max-urls", "1", "--cut", "tight", input)
	if code != 0 || !strings.Contains(stderr, "the indexes nest 4 levels above the sitemaps") || !strings.Contains(stderr, "--max-depth 4") {
		t.Fatalf("exit %d, want 0 and the warning\n%s", code, stderr)
	}
	if code, _, stderr := sitemapgen(t, "", "validate", "--public-url", base, "--index-fanout", "2", "--max-urls", "1", "--max-depth", "4", out); code != 0 {
		t.Errorf("validate --max-depth 4: exit %d\n%s", code, stderr)
	}
}
