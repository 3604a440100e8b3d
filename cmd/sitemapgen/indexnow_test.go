package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/indexnow"
	"github.com/sitemapgen/sitemapgen/indexnow/indexnowtest"
	"github.com/sitemapgen/sitemapgen/internal/metrics/metricstest"
	"github.com/sitemapgen/sitemapgen/publish"
)

const inKey = "a1b2c3d4-e5f6"

// urlsCSV writes a CSV of the pages ids, each with a lastmod.
func urlsCSV(t *testing.T, path string, ids []int, lastmod func(id int) string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("loc,lastmod\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%sp/%d,%s\n", base, id, lastmod(id))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func indexNowReport(t *testing.T, path string) *indexnow.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Published bool
		DryRun    bool `json:"dry_run"`
		IndexNow  *indexnow.Result
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Published == rep.DryRun || rep.IndexNow == nil { // a dry run publishes nothing
		t.Fatalf("report: published %v, indexnow %v\n%s", rep.Published, rep.IndexNow, b)
	}
	return rep.IndexNow
}

// TestIndexNow (done-when 5): on a 20k-URL set, night 2 with 5 URLs added,
// 3 lastmods changed and 2 URLs removed posts exactly those 10 URLs (read
// back before the prune, with no generation kept); a 429 then 200 is
// retried; a 403 is reported and the run exits 0 with the set published;
// 25k URLs go in 3 requests.
func TestIndexNow(t *testing.T) {
	srv := indexnowtest.NewServer(inKey, "")
	defer srv.Close()
	dir := t.TempDir()
	out, in, report, prom := filepath.Join(dir, "out"), filepath.Join(dir, "urls.csv"), filepath.Join(dir, "report.json"), filepath.Join(dir, "m.prom")
	args := []string{"generate", "--public-url", base, "--out", out, "--report", report, "--max-urls", "1000", "--keep-generations", "0",
		"--indexnow-key", inKey, "--indexnow-endpoint", srv.URL + "/indexnow", "--metrics-file", prom, in}
	night := func(what string) *indexnow.Result {
		t.Helper()
		code, _, stderr := sitemapgen(t, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, stderr)
		}
		if errs := srv.Errors(); len(errs) > 0 {
			t.Fatalf("%s: not the protocol: %q", what, errs)
		}
		return indexNowReport(t, report)
	}
	ids := make([]int, 20000)
	for i := range ids {
		ids[i] = i
	}
	day1 := func(int) string { return "2024-01-01" }
	urlsCSV(t, in, ids, day1)
	if res := night("night 1"); len(srv.Requests()) != 0 || !strings.Contains(res.Skipped, "first run") {
		t.Fatalf("night 1 (a first run) sent %d requests; result %+v", len(srv.Requests()), res)
	}

	// Night 2: 2 removed, 5 added (between existing pages and at the end),
	// 3 lastmods changed.
	removed := []int{4321, 15000}
	added := []int{100000, 100001, 100002, 100003, 100004}
	changed := []int{7, 9999, 19998}
	var ids2 []int
	for _, id := range ids {
		if !slices.Contains(removed, id) {
			ids2 = append(ids2, id)
		}
		if id == 12345 {
			ids2 = append(ids2, added[:3]...)
		}
	}
	ids2 = append(ids2, added[3:]...)
	urlsCSV(t, in, ids2, func(id int) string {
		if slices.Contains(changed, id) {
			return "2024-06-01"
		}
		return "2024-01-01"
	})
	// A dry run of night 2 says what it would send, sends nothing and
	// leaves the set as it was.
	root1, err := os.ReadFile(filepath.Join(out, "sitemap.xml"))
	if err != nil {
		t.Fatal(err)
	}
	args = append(args[:len(args)-1], "--dry-run", in)
	dry := night("night 2, dry run")
	args = append(args[:len(args)-2], in)
	root2, _ := os.ReadFile(filepath.Join(out, "sitemap.xml"))
	if !dry.DryRun || len(dry.URLs) != 10 || dry.Requests != 1 || dry.Sent != 0 || len(srv.Requests()) != 0 || string(root1) != string(root2) {
		t.Errorf("dry run of night 2: %+v, %d requests made, root changed %v; want the 10 URLs listed, nothing sent or written",
			dry, len(srv.Requests()), string(root1) != string(root2))
	}
	res := night("night 2")
	var want []string
	for _, id := range slices.Concat(removed, added, changed) {
		want = append(want, fmt.Sprintf("%sp/%d", base, id))
	}
	got := srv.URLs()
	if !slices.Equal(got, dry.URLs) {
		t.Errorf("night 2 sent %q, its dry run said %q", got, dry.URLs)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(srv.Requests()) != 1 {
		t.Errorf("night 2 posted %d requests of %q, want one of %q", len(srv.Requests()), got, want)
	}
	if rqs := srv.Requests(); len(rqs) > 0 && (rqs[0].Host != "www.example.com" || rqs[0].Key != inKey) {
		t.Errorf("request host %q key %q", rqs[0].Host, rqs[0].Key)
	}
	if res.Added != 5 || res.Changed != 3 || res.Removed != 2 || res.Sent != 10 || res.Accepted != 10 || res.Failed != 0 {
		t.Errorf("night 2 result %+v, want 5 added, 3 changed, 2 removed, 10 sent and accepted", res)
	}

	// Night 3: one lastmod changed; a 429 then 200 is retried.
	urlsCSV(t, in, ids2, func(id int) string {
		if id == 3 {
			return "2024-07-01"
		}
		return map[bool]string{true: "2024-06-01", false: "2024-01-01"}[slices.Contains(changed, id)]
	})
	srv.Answer(429)
	res = night("night 3")
	reqs := srv.Requests()[min(1, len(srv.Requests())):]
	if len(reqs) != 2 || !slices.Equal(reqs[0].URLList, reqs[1].URLList) || !slices.Equal(reqs[1].URLList, []string{base + "p/3"}) ||
		res.Requests != 2 || res.Accepted != 1 || res.Failed != 0 {
		t.Errorf("429 then 200: %d requests %v, result %+v; want the same request twice, accepted", len(reqs), reqs, res)
	}

	// Night 4: a 403 is reported with its meaning; the run succeeds and the set is published.
	urlsCSV(t, in, ids2, day1)
	srv.Answer(403)
	res = night("night 4")
	if res.Accepted != 0 || res.FailedByStatus["403"] != 4 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "key is not valid") || res.Requests != 1 {
		t.Errorf("403: result %+v; want 4 URLs failed with 403 and its meaning, not retried", res)
	}
	if v := promValue(t, prom, "sitemapgen_indexnow_urls", "result", "failed"); v != 4 {
		t.Errorf("metrics: indexnow failed = %v, want 4", v)
	}
	if v := promValue(t, prom, "sitemapgen_indexnow_failed_urls", "status", "403"); v != 4 {
		t.Errorf("metrics: indexnow failed with 403 = %v, want 4", v)
	}
	if v := promValue(t, prom, "sitemapgen_indexnow_failed_urls", "status", "429"); v != 0 {
		t.Errorf("metrics: indexnow failed with 429 = %v, want 0 (every status present)", v)
	}
	set, err := os.ReadFile(filepath.Join(out, "sitemap.xml"))
	if err != nil || !strings.Contains(string(set), "<sitemapindex") {
		t.Errorf("after the 403 the root index is not in place: %v", err)
	}

	// Night 5: nothing changed, nothing read back, nothing sent.
	before := len(srv.Requests())
	if res = night("night 5"); len(srv.Requests()) != before || res.Skipped != "no URL changed" || res.Sent != 0 {
		t.Errorf("an unchanged night sent %d requests; result %+v", len(srv.Requests())-before, res)
	}

	// A first run of 25k URLs with --indexnow-all: 3 requests.
	ids25 := make([]int, 25000)
	for i := range ids25 {
		ids25[i] = i
	}
	urlsCSV(t, in, ids25, day1)
	args[4] = filepath.Join(dir, "out25")
	args = append(args[:len(args)-1], "--indexnow-all", in)
	res = night("25k, --indexnow-all")
	var sizes []int
	for _, rq := range srv.Requests()[before:] {
		sizes = append(sizes, len(rq.URLList))
	}
	if !slices.Equal(sizes, []int{10000, 10000, 5000}) || res.Added != 25000 || res.Accepted != 25000 {
		t.Errorf("25k URLs: requests of %v, result %+v; want 10000, 10000, 5000", sizes, res)
	}
}

// promValue reads one gauge of a textfile.
func promValue(t *testing.T, path, name, label, value string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, label+`="`+value+`"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			return v
		}
	}
	t.Fatalf("%s: no %s{%s=%q}", path, name, label, value)
	return 0
}

// TestIndexNowFlags: the key and the key location are checked before
// anything runs (exit 2, nothing written); a key location in a folder must
// cover the scope and is sent; a dry run says what it would do.
func TestIndexNowFlags(t *testing.T) {
	dir := t.TempDir()
	sample := "../../testdata/sample.csv"
	keyFile := filepath.Join(dir, "key.txt")
	if err := os.WriteFile(keyFile, []byte(inKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"short key", []string{"--indexnow-key", "abc"}},
		{"bad character", []string{"--indexnow-key", "abcd_1234"}},
		{"key and key file", []string{"--indexnow-key", inKey, "--indexnow-key-file", keyFile}},
		{"missing key file", []string{"--indexnow-key-file", filepath.Join(dir, "none")}},
		{"all without key", []string{"--indexnow-all"}},
		{"bad endpoint", []string{"--indexnow-key", inKey, "--indexnow-endpoint", "api.indexnow.org"}},
		{"key location not over the scope", []string{"--indexnow-key", inKey, "--indexnow-key-location", base + "keys/" + inKey + ".txt"}},
		{"key location of a folder", []string{"--indexnow-key", inKey, "--indexnow-key-location", base}},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
		code, _, stderr := sitemapgen(t, "", append([]string{"generate", "--public-url", base, "--out", out, sample}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, "indexnow") && !strings.Contains(stderr, "IndexNow") {
			t.Errorf("%s: exit %d, want 2 naming IndexNow\n%s", tc.name, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the usage error left %s written", tc.name, out)
		}
	}

	loc := base + "catalog/" + inKey + ".txt"
	srv := indexnowtest.NewServer(inKey, loc)
	defer srv.Close()
	out, report := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	in := filepath.Join(dir, "in.csv")
	urlsCSV(t, in, []int{1, 2}, func(int) string { return "" })
	args := []string{"generate", "--public-url", base + "catalog/", "--out", out, "--report", report, "--indexnow-key-file", keyFile,
		"--indexnow-key-location", loc, "--indexnow-endpoint", srv.URL + "/indexnow", "--indexnow-all"}
	// The URLs are under base, the scope is base/catalog/: they are rejected,
	// so write them under the catalog.
	if err := os.WriteFile(in, []byte("loc\n"+base+"catalog/a\n"+base+"catalog/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := sitemapgen(t, "", append(args, "--dry-run", in)...); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	} else if res := indexNowReport(t, report); !res.DryRun || !slices.Equal(res.URLs, []string{base + "catalog/a", base + "catalog/b"}) ||
		res.Requests != 1 || res.Sent != 0 || len(srv.Requests()) != 0 {
		t.Errorf("dry run: %+v, %d requests; want the 2 URLs it would send in 1 request, and nothing sent", res, len(srv.Requests()))
	}
	if code, _, stderr := sitemapgen(t, "", append(args, in)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if got := srv.URLs(); !slices.Equal(got, []string{base + "catalog/a", base + "catalog/b"}) || len(srv.Errors()) > 0 {
		t.Errorf("with a key location: sent %q, refused %q", got, srv.Errors())
	}
}

// TestIndexNowS3: with an S3 destination and no generation kept, the
// replaced sitemaps are read back from the bucket before they are deleted;
// the metrics are pushed under the s3:// destination.
func TestIndexNowS3(t *testing.T) {
	e := newS3Env(t)
	srv := indexnowtest.NewServer(inKey, "")
	defer srv.Close()
	gw := metricstest.NewGateway()
	defer gw.Close()
	dir := t.TempDir()
	in, report := filepath.Join(dir, "urls.csv"), filepath.Join(dir, "report.json")
	ids := make([]int, 3000)
	for i := range ids {
		ids[i] = i
	}
	run := func(what string, lastmod func(int) string) *indexnow.Result {
		t.Helper()
		urlsCSV(t, in, ids, lastmod)
		code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "500", "--keep-generations", "0", "--report", report,
			"--indexnow-key", inKey, "--indexnow-endpoint", srv.URL+"/indexnow", "--metrics-push", gw.URL, in)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, stderr)
		}
		return indexNowReport(t, report)
	}
	run("night 1", func(int) string { return "2024-01-01" })
	res := run("night 2", func(id int) string {
		return map[bool]string{true: "2024-05-05", false: "2024-01-01"}[id == 2500]
	})
	if got := srv.URLs(); !slices.Equal(got, []string{base + "p/2500"}) || res.Changed != 1 || res.Accepted != 1 {
		t.Errorf("S3 night 2: sent %q, result %+v; want the one re-dated URL", got, res)
	}
	pushed := gw.Values("job", "sitemapgen", "name", "sitemap", "destination", "s3://"+e.bucket+"/"+e.prefix)
	if pushed["sitemapgen_indexnow_urls"]["result=accepted"] != 1 || pushed["sitemapgen_published"][""] != 1 {
		t.Errorf("pushed metrics of the S3 run: %v", pushed["sitemapgen_indexnow_urls"])
	}
	if errs := append(srv.Errors(), gw.Errors()...); len(errs) > 0 {
		t.Errorf("refused: %q", errs)
	}
}

// TestIndexNowSendsOnlyTheScope: a replaced sitemap read back from the
// destination that lists a URL outside the scope (the destination was
// written by someone else) does not get it sent under the site's key.
func TestIndexNowSendsOnlyTheScope(t *testing.T) {
	srv := indexnowtest.NewServer(inKey, "")
	defer srv.Close()
	dir := t.TempDir()
	out, in, report := filepath.Join(dir, "out"), filepath.Join(dir, "in.csv"), filepath.Join(dir, "report.json")
	args := []string{"generate", "--public-url", base + "catalog/", "--out", out, "--report", report,
		"--indexnow-key", inKey, "--indexnow-endpoint", srv.URL + "/indexnow", in}
	write := func(rows string) {
		if err := os.WriteFile(in, []byte("loc\n"+rows), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := sitemapgen(t, "", args...); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
	}
	write(base + "catalog/a\n" + base + "catalog/b\n")
	shards, _ := filepath.Glob(filepath.Join(out, "sitemap-0*.xml.gz"))
	if len(shards) != 1 {
		t.Fatalf("shards %q", shards)
	}
	forged := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n" +
		"<url><loc>" + base + "catalog/a</loc></url>\n<url><loc>" + base + "private/x</loc></url>\n</urlset>\n"
	if err := os.WriteFile(shards[0], gz(t, forged), 0o644); err != nil {
		t.Fatal(err)
	}
	write(base + "catalog/a\n" + base + "catalog/c\n")
	res := indexNowReport(t, report)
	if got := srv.URLs(); !slices.Equal(got, []string{base + "catalog/c"}) || res.FailedByStatus["outside_scope"] != 1 {
		t.Errorf("sent %q, result %+v; want catalog/c only and the private URL counted outside_scope", got, res)
	}
}

// TestIndexNowGroups: IndexNow with --group-by. By host, each host's set in
// a folder of its own: night 2 posts exactly the URLs that changed, one
// request per host, and a host published for the first time is not sent.
// By section in one folder: a dry run reads every group's change back
// from the sitemaps it would write and posts nothing.
func TestIndexNowGroups(t *testing.T) {
	srv := indexnowtest.NewServer(inKey, "")
	defer srv.Close()
	hosts := []string{"blog.example.com", "shop.example.org", "www.example.de"}
	dir := t.TempDir()
	in, report := filepath.Join(dir, "in.csv"), filepath.Join(dir, "report.json")
	write := func(hosts []string, changed func(h string, i int) bool) {
		var b strings.Builder
		b.WriteString("loc,lastmod\n")
		for _, h := range hosts {
			for i := range 120 {
				day := "2024-05-01"
				if changed(h, i) {
					day = "2024-06-01"
				}
				fmt.Fprintf(&b, "https://%s/pages/%d,%s\n", h, i, day)
			}
		}
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(what string, extra ...string) *indexnow.Result {
		t.Helper()
		args := append([]string{"generate", "--group-by", "host", "--public-url", "https://{group}/sitemaps/",
			"--scope", "https://{group}/pages/", "--out", filepath.Join(dir, "out", "{group}"), "--max-urls", "50",
			"--report", report, "--indexnow-key", inKey, "--indexnow-endpoint", srv.URL + "/indexnow"}, extra...)
		code, _, stderr := sitemapgen(t, "", append(args, in)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, stderr)
		}
		if errs := srv.Errors(); len(errs) > 0 {
			t.Fatalf("%s: not the protocol: %q", what, errs)
		}
		return indexNowReport(t, report)
	}
	write(hosts[:2], func(string, int) bool { return false })
	if res := run("night 1"); len(srv.Requests()) != 0 || !strings.Contains(res.Skipped, "first run") {
		t.Fatalf("night 1 posted %d requests, result %+v; want nothing (first run)", len(srv.Requests()), res)
	}
	// Night 2: 3 pages of blog re-dated, 2 of shop; www.example.de is new.
	write(hosts, func(h string, i int) bool {
		return (h == hosts[0] && i%40 == 7) || (h == hosts[1] && (i == 3 || i == 99))
	})
	res := run("night 2")
	want := map[string][]string{
		hosts[0]: {"https://" + hosts[0] + "/pages/7", "https://" + hosts[0] + "/pages/47", "https://" + hosts[0] + "/pages/87"},
		hosts[1]: {"https://" + hosts[1] + "/pages/3", "https://" + hosts[1] + "/pages/99"},
	}
	got := map[string][]string{}
	for _, rq := range srv.Requests() {
		got[rq.Host] = append(got[rq.Host], rq.URLList...)
	}
	for _, urls := range got {
		slices.Sort(urls)
	}
	for _, urls := range want {
		slices.Sort(urls)
	}
	if len(srv.Requests()) != 2 || len(got) != 2 || !slices.Equal(got[hosts[0]], want[hosts[0]]) || !slices.Equal(got[hosts[1]], want[hosts[1]]) {
		t.Errorf("night 2 posted %d requests: %q; want one per changed host: %q", len(srv.Requests()), got, want)
	}
	if res.Changed != 5 || res.Added != 0 || res.Removed != 0 || res.Sent != 5 {
		t.Errorf("night 2 result %+v; want 5 changed, 5 sent", res)
	}

	// By section, in one folder: a dry run reads the change back from the
	// sitemaps it would write, across groups, and posts nothing.
	requests := len(srv.Requests())
	sections := filepath.Join(dir, "sections.csv")
	sectionsCSV := func(changed int) {
		var b strings.Builder
		b.WriteString("loc,lastmod,section\n")
		for i := range 200 {
			day := "2024-05-01"
			if i == changed {
				day = "2024-06-01"
			}
			fmt.Fprintf(&b, "%s%s/%d,%s,%s\n", base, []string{"shop", "blog"}[i%2], i, day, []string{"shop", "blog"}[i%2])
		}
		if err := os.WriteFile(sections, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "sections")
	args := []string{"generate", "--group-by", "section", "--public-url", base, "--out", out, "--max-urls", "30", "--report", report,
		"--indexnow-key", inKey, "--indexnow-endpoint", srv.URL + "/indexnow"}
	sectionsCSV(-1)
	if code, _, stderr := sitemapgen(t, "", append(args, sections)...); code != 0 {
		t.Fatalf("sections night 1: exit %d\n%s", code, stderr)
	}
	sectionsCSV(71) // a blog page
	code, _, stderr := sitemapgen(t, "", append(args, "--dry-run", sections)...)
	if code != 0 {
		t.Fatalf("sections dry run: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ IndexNow *indexnow.Result }
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.IndexNow; r == nil || !r.DryRun || !slices.Equal(r.URLs, []string{base + "blog/71"}) || r.Changed != 1 || len(srv.Requests()) != requests {
		t.Errorf("dry run: %+v, %d requests posted; want blog/71 planned, nothing posted\n%s", r, len(srv.Requests())-requests, stderr)
	}
}

// TestIndexNowMerged: the sets' changes are added up in the order of
// their destination and name, whatever order their switches came in; a
// total past --indexnow-max-urls, or one set's failure, sends nothing.
func TestIndexNowMerged(t *testing.T) {
	change := func(urls ...string) setChange {
		return setChange{change: &indexnow.Change{URLs: urls, Changed: len(urls)}}
	}
	n := &notifier{max: 4, sets: map[string]setChange{
		"/out/b/sitemap": change("https://b/1", "https://b/2"),
		"/out/a/sitemap": change("https://a/1"),
		"/out/c/sitemap": {first: true},
	}}
	ch, _, read, first, err := n.merged()
	if err != nil || read != 2 || !slices.Equal(first, []string{"/out/c/sitemap"}) ||
		!slices.Equal(ch.URLs, []string{"https://a/1", "https://b/1", "https://b/2"}) || ch.Changed != 3 {
		t.Fatalf("merged: %+v, read %d, first %q, %v", ch, read, first, err)
	}
	n.sets["/out/d/sitemap"] = change("https://d/1", "https://d/2")
	if _, _, _, _, err := n.merged(); err == nil || !strings.Contains(err.Error(), "--indexnow-max-urls 4") {
		t.Fatalf("5 URLs against a bound of 4: %v", err)
	}
	n.max = 10
	n.sets["/out/e/sitemap"] = setChange{err: errors.New("e: unreadable")}
	if _, _, _, _, err := n.merged(); err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("a set's failure: %v", err)
	}
}

// TestDryRunKept: a dry run holds the shards IndexNow reads back, of the
// set or of every group's set (group names with dashes, a group named
// news), and neither their news sitemaps nor any other file.
func TestDryRunKept(t *testing.T) {
	sum := [32]byte{1, 2, 3}
	shard := func(stem string) string { return publish.NewLayout(stem).Shard(7, sum) }
	news := func(stem string) string { return publish.NewLayout(stem).News(1) }
	for _, tc := range []struct {
		grouped bool
		file    string
		want    bool
	}{
		{false, shard("sitemap"), true},
		{false, news("sitemap"), false},
		{false, shard("sitemap-products"), false},
		{false, "sitemap.xml", false},
		{true, shard("sitemap-products"), true},
		{true, shard("sitemap-a-b-c"), true},
		{true, shard("sitemap-news"), true},
		{true, news("sitemap-news"), false},
		{true, news("sitemap-products"), false},
		{true, "sitemap-products.xml", false},
		{true, publish.NewLayout("sitemap-products").Index(1), false},
		{true, "sitemap-products-robots.txt", false},
		{true, shard("other-products"), false},
		{true, shard("sitemap"), true}, // a group in a folder of its own keeps the plain name
	} {
		if got := dryRunKept("sitemap", tc.grouped)(tc.file); got != tc.want {
			t.Errorf("grouped %v, %s: kept %v, want %v", tc.grouped, tc.file, got, tc.want)
		}
	}
}
