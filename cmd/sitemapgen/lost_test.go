package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// publishedLocs runs generate on one CSV file and returns the published
// locs (relative to base) and the report; the run must exit 0 and its
// report add up.
func publishedLocs(t *testing.T, csv string, flags ...string) ([]string, reportView) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	args := append([]string{"generate", "--public-url", base, "--out", out, "--report", report}, flags...)
	code, _, stderr := sitemapgen(t, "", append(args, in)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := readReport(t, report)
	if r.Rows != r.URLs+r.Rejected.Total+r.Unfinished {
		t.Fatalf("rows %d != urls %d + rejected %d + unfinished %d", r.Rows, r.URLs, r.Rejected.Total, r.Unfinished)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	var locs []string
	for _, s := range set.Shards {
		for _, u := range s.URLs {
			locs = append(locs, strings.TrimPrefix(u.Loc, base)+"|"+u.Lastmod+"|"+u.Priority)
		}
	}
	return locs, reportView{rows: r.Rows, urls: r.URLs, rejected: r.Rejected.Total, warnings: r.Warnings.Total}
}

type reportView struct{ rows, urls, rejected, warnings int64 }

// TestLoneCRIsALineEnd: a lone CR (old Mac exports, some warehouse unloads)
// ends a row. It used to hide the next row in the previous row's last field,
// with only a priority warning: rows=2, urls=2, the row lost.
func TestLoneCRIsALineEnd(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"one lone CR", base + "a,2024-01-01,daily,0.5\r" + base + "b,2024-01-02,daily,0.6\n" + base + "c,2024-01-03,daily,0.7\n",
			[]string{"a|2024-01-01|0.5", "b|2024-01-02|0.6", "c|2024-01-03|0.7"}},
		{"CR line ends only, with a header", "loc,lastmod,priority\r/a,2024-01-01,0.5\r\r/b,,\r\"/c\",2024-01-03,\r",
			[]string{"a|2024-01-01|0.5", "b||", "c|2024-01-03|"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, r := publishedLocs(t, tt.in)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("published:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if want := (reportView{rows: int64(len(tt.want)), urls: int64(len(tt.want))}); r != want {
				t.Errorf("report %+v, want %+v", r, want)
			}
		})
	}
}

// TestDedupDropsTheNewsOfARejectedRow: the same news row twice with --dedup
// is one URL and one news item; the repeat's news item went to the news
// sitemap before (rejected=1, yet listed twice), and validate failed the set.
func TestDedupDropsTheNewsOfARejectedRow(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "news.csv")
	row := base + "a,2026-11-24,The Daily,en,2026-11-24T10:00:00Z,Title\n"
	csv := "loc,lastmod,news:publication_name,news:publication_language,news:publication_date,news:title\n" + row + row + base + "b,,,,,\n"
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report,
		"--dedup", "--now", "2026-11-24T12:00:00Z", in)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := readReport(t, report)
	if r.Rows != 3 || r.URLs != 2 || r.Rejected.Total != 1 || r.Rejected.ByReason["duplicate"] != 1 {
		t.Errorf("report rows %d urls %d rejected %+v; want 3, 2, 1 duplicate", r.Rows, r.URLs, r.Rejected)
	}
	if r.News == nil || r.News.URLs != 1 {
		t.Errorf("report news %+v, want 1 news URL", r.News)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	var news []string
	for _, s := range set.News {
		for _, u := range s.URLs {
			news = append(news, u.Loc)
		}
	}
	if len(news) != 1 || news[0] != base+"a" {
		t.Errorf("news sitemaps list %q, want [%sa]", news, base)
	}
	if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, out); code != 0 {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestOrderFreeDuplicates: with --sort and with --dedup the set is a
// function of the rows, not of their order, also when a loc appears twice
// with different fields (a warehouse join that emits a page twice with two
// lastmods, or with and without a news item). It used to depend on which
// came first. --dedup keeps the newest lastmod, then the smallest entry;
// --ties input keeps the first row, as before.
func TestOrderFreeDuplicates(t *testing.T) {
	const header = "loc,lastmod,changefreq,priority,news:publication_name,news:publication_language,news:publication_date,news:title\n"
	var rows []string
	for i := range 300 {
		rows = append(rows, fmt.Sprintf("%sp/%03d,2026-01-%02d,daily,0.5,,,,\n", base, i, 1+i%28))
		switch i % 10 {
		case 0: // the same page, newer
			rows = append(rows, fmt.Sprintf("%sp/%03d,2026-02-%02d,daily,0.5,,,,\n", base, i, 1+i%28))
		case 1: // the same lastmod, other fields
			rows = append(rows, fmt.Sprintf("%sp/%03d,2026-01-%02d,weekly,0.7,,,,\n", base, i, 1+i%28))
		case 2: // no lastmod: older than any
			rows = append(rows, fmt.Sprintf("%sp/%03d,,,,,,,\n", base, i))
		case 3: // with a news item
			rows = append(rows, fmt.Sprintf("%sp/%03d,2026-01-%02d,daily,0.5,The Daily,en,2026-11-24T10:00:00Z,T%d\n", base, i, 1+i%28, i))
		case 4: // identical
			rows = append(rows, rows[len(rows)-1])
		}
	}
	run := func(t *testing.T, rows []string, flags ...string) (map[string][]byte, []string) {
		t.Helper()
		dir := t.TempDir()
		in := filepath.Join(dir, "in.csv")
		if err := os.WriteFile(in, []byte(header+strings.Join(rows, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		args := append([]string{"generate", "--public-url", base, "--out", out, "--max-urls", "40", "--now", "2026-11-24T12:00:00Z"}, flags...)
		if code, _, stderr := sitemapgen(t, "", append(args, in)...); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		files := map[string][]byte{}
		ents, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range ents {
			name := de.Name()
			if strings.HasSuffix(name, ".manifest.json") {
				continue // it names the run's inputs
			}
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
		var locs []string
		for _, s := range xmltest.ReadSet(t, out, base, "sitemap.xml", "").Shards {
			for _, u := range s.URLs {
				locs = append(locs, strings.TrimPrefix(u.Loc, base)+"|"+u.Lastmod+"|"+u.Changefreq+"|"+u.Priority)
			}
		}
		return files, locs
	}
	shuffled := slices.Clone(rows)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	for _, flags := range [][]string{{"--sort"}, {"--dedup"}, {"--dedup", "--cut", "tight"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			a, locs := run(t, rows, flags...)
			for name, order := range map[string][]string{"shuffled": shuffled, "reversed": reversed} {
				b, _ := run(t, order, flags...)
				if len(a) != len(b) {
					t.Fatalf("%s: %d files, in order %d", name, len(b), len(a))
				}
				for f, data := range a {
					if !bytes.Equal(data, b[f]) {
						t.Errorf("%s: %s differs from the run in input order", name, f)
					}
				}
			}
			if flags[0] != "--dedup" {
				return
			}
			// Which row --dedup kept: the newest lastmod, then the
			// smallest entry.
			want := map[string]string{
				"p/000": "p/000|2026-02-01|daily|0.5", // the newer
				"p/001": "p/001|2026-01-02|daily|0.5", // same lastmod: "daily" < "weekly"
				"p/002": "p/002|2026-01-03|daily|0.5", // a lastmod beats none
				"p/004": "p/004|2026-01-05|daily|0.5", // identical
				"p/010": "p/010|2026-02-11|daily|0.5", // the newer
				"p/011": "p/011|2026-01-12|daily|0.5",
			}
			for _, l := range locs {
				if w, ok := want[l[:5]]; ok && l != w {
					t.Errorf("--dedup kept %s, want %s", l, w)
				}
			}
			if len(locs) != 300 {
				t.Errorf("%d URLs, want 300", len(locs))
			}
		})
	}
	// --ties input: the first row of each loc, as before.
	_, locs := run(t, reversed, "--dedup", "--ties", "input")
	for _, l := range locs {
		if strings.HasPrefix(l, "p/000|") && l != "p/000|2026-02-01|daily|0.5" || strings.HasPrefix(l, "p/002|") && l != "p/002|||" {
			t.Errorf("--ties input kept %s, want the first row in input order", l)
		}
	}
}

// TestLastmodInADaylightSavingGap: a zone-less lastmod that --lastmod-tz
// skips names no instant: dropped with lastmod_nonexistent, the URL kept.
// It was written (as the instant an hour later) without a warning.
func TestLastmodInADaylightSavingGap(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	csv := "loc,lastmod\n" + base + "gap,2026-03-08 02:30\n" + base + "before,2026-03-08 01:59\n" + base + "after,2026-03-08 03:00\n"
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report, "--lastmod-tz", "America/New_York", in); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := readReport(t, report)
	if r.URLs != 3 || r.Warnings.Total != 1 || r.Warnings.ByReason["lastmod_nonexistent"] != 1 {
		t.Errorf("urls %d, warnings %+v; want 3 URLs, one lastmod_nonexistent", r.URLs, r.Warnings)
	}
	var got []string
	for _, u := range xmltest.ReadSet(t, out, base, "sitemap.xml", "").Shards[0].URLs {
		got = append(got, strings.TrimPrefix(u.Loc, base)+"|"+u.Lastmod)
	}
	want := []string{"gap|", "before|2026-03-08T01:59:00-05:00", "after|2026-03-08T03:00:00-04:00"}
	if !slices.Equal(got, want) {
		t.Errorf("published %q, want %q", got, want)
	}
}

// TestSmallPromises: the smaller items of "nothing lost, round two", each
// through the CLI.
func TestSmallPromises(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("loc\n"+base+"a?x=1&y='2'\n"+base+"b\n"+base+"a?x=1&y='2'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, want, not string
		args            []string
	}{
		{"--public-url names itself", `--public-url "ftp://x/": is not an absolute http or https URL`, `: scope "`, []string{"--public-url", "ftp://x/"}},
		{"--scope names itself", `--scope "https://www.example.com/?q": has a query`, `: scope "`, []string{"--public-url", base, "--scope", "https://www.example.com/?q"}},
		{"--now zero is refused", "--now 0001-01-01T00:00:00Z: the zero time", "", []string{"--public-url", base, "--now", "0001-01-01T00:00:00Z"}},
		{"--tmp missing is found first", "--tmp: stat " + filepath.Join(dir, "nope"), "", []string{"--public-url", base, "--sort", "--tmp", filepath.Join(dir, "nope")}},
		{"--tmp a file", "is not a folder", "", []string{"--public-url", base, "--sort", "--tmp", in}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := sitemapgen(t, "", append(append([]string{"generate", "--out", out}, tt.args...), in)...)
			if code != 2 || !strings.Contains(stderr, tt.want) || tt.not != "" && strings.Contains(stderr, tt.not) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", code, tt.want, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a usage error wrote %s", out)
			}
		})
	}

	// A duplicate's rejected value is the URL, as other reasons give it,
	// not the XML-escaped loc (&amp;, &apos;); the report's deleted is [].
	out, report, rejects := filepath.Join(dir, "out"), filepath.Join(dir, "report.json"), filepath.Join(dir, "rejects.csv")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report, "--rejects", rejects, "--dedup", in); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(rejects)
	if err != nil {
		t.Fatal(err)
	}
	if want := base + "a?x=1&y='2'"; !strings.Contains(string(b), ",duplicate,"+want+"\n") {
		t.Errorf("rejects:\n%s\nwant the duplicate's value %s", b, want)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"deleted": []`) {
		t.Errorf("report: want \"deleted\": [] on a first run:\n%s", raw)
	}
}
