package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/metrics/metricstest"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

// wantMetrics checks the gauges of one group (labels "" for a push, the
// textfile's name and destination otherwise) against the report of the run.
func wantMetrics(t *testing.T, what string, v map[string]map[string]float64, l string, rep pipeline.Report, ok bool, lastSuccess, liveGen float64, from, to time.Time) {
	t.Helper()
	with := func(kv string) string {
		ls := slices.DeleteFunc(strings.Split(kv+","+l, ","), func(s string) bool { return s == "" })
		slices.Sort(ls) // as the parser gives them
		return strings.Join(ls, ",")
	}
	get := func(name, kv string) float64 {
		t.Helper()
		x, present := v[name][with(kv)]
		if !present {
			t.Errorf("%s: no %s{%s}", what, name, with(kv))
		}
		return x
	}
	end := get("sitemapgen_last_completion_timestamp_seconds", "")
	if end < float64(from.Unix()) || end > float64(to.Unix()+1) {
		t.Errorf("%s: last completion %v not within the run (%v..%v)", what, end, from.Unix(), to.Unix())
	}
	if got := get("sitemapgen_last_success_timestamp_seconds", ""); (ok && got != end) || (!ok && got != lastSuccess) {
		t.Errorf("%s: last success %v; completion %v, earlier success %v, this run ok %v", what, got, end, lastSuccess, ok)
	}
	if rep.Published {
		liveGen = float64(rep.Generation) // else the one live, from the run that published it
	}
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	for name, want := range map[string]float64{
		"sitemapgen_last_run_succeeded": b(ok), "sitemapgen_published": b(rep.Published),
		"sitemapgen_duration_seconds": rep.Seconds, "sitemapgen_rows": float64(rep.Rows), "sitemapgen_urls": float64(rep.URLs),
		"sitemapgen_uploaded_bytes": float64(rep.Uploaded.Bytes), "sitemapgen_uploaded_files": float64(rep.Uploaded.Files),
		"sitemapgen_robots_changed": b(rep.RobotsChanged), "sitemapgen_generation": liveGen,
	} {
		if got := get(name, ""); got != want {
			t.Errorf("%s: %s = %v, the report says %v", what, name, got, want)
		}
	}
	for change, want := range map[string]int{"new": rep.ShardsNew, "unchanged": rep.ShardsUnchanged, "removed": rep.ShardsRemoved} {
		if got := get("sitemapgen_sitemaps", "change="+change); got != float64(want) {
			t.Errorf("%s: sitemaps{change=%s} = %v, the report says %d", what, change, got, want)
		}
	}
	// Every reason, the run's count or 0: a failed run with fewer reasons
	// must not leave the last run's counts in place.
	for r := encode.OK + 1; r < encode.NumReasons; r++ {
		if got, n := get("sitemapgen_rejected_rows", "reason="+r.String()), rep.Rejected.ByReason[r.String()]; got != float64(n) {
			t.Errorf("%s: rejected{reason=%s} = %v, the report says %d", what, r, got, n)
		}
	}
	for w := range encode.NumWarnings {
		if got, n := get("sitemapgen_warnings", "reason="+encode.WarningName(w)), rep.Warnings.ByReason[encode.WarningName(w)]; got != float64(n) {
			t.Errorf("%s: warnings{reason=%s} = %v, the report says %d", what, encode.WarningName(w), got, n)
		}
	}
	if len(v["sitemapgen_rejected_rows"]) != int(encode.NumReasons)-1 {
		t.Errorf("%s: %d rejection reasons, want every one of encode's", what, len(v["sitemapgen_rejected_rows"]))
	}
	for _, stage := range []string{"read", "encode", "cut", "compress", "write"} {
		if got := get("sitemapgen_stage_seconds", "stage="+stage); got != rep.StageSeconds[stage] {
			t.Errorf("%s: stage %s = %v, the report says %v", what, stage, got, rep.StageSeconds[stage])
		}
	}
}

// TestMetrics (done-when 4): after a successful run and after a failed one,
// the Pushgateway's group (job sitemapgen, name, destination) and the
// textfile hold the run's metrics as its report gives them; the failed run
// leaves the last success as the successful run set it.
func TestMetrics(t *testing.T) {
	gw := metricstest.NewGateway()
	defer gw.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	prom := filepath.Join(dir, "sitemapgen.prom")
	report := filepath.Join(dir, "report.json")
	labels := "destination=" + out + ",name=sitemap"
	args := []string{"generate", "--public-url", base, "--out", out, "--report", report, "--metrics-push", gw.URL, "--metrics-file", prom, "--max-urls", "1000"}

	from := time.Now()
	if code, _, stderr := sitemapgen(t, "", append(args, "../../testdata/sample.csv")...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	to := time.Now()
	rep := readReport(t, report)
	pushed := gw.Values("job", "sitemapgen", "name", "sitemap", "destination", out)
	wantMetrics(t, "success, pushed", pushed, "", rep, true, 0, 0, from, to)
	file, err := metricstest.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	wantMetrics(t, "success, textfile", file, labels, rep, true, 0, 0, from, to)
	success := pushed["sitemapgen_last_success_timestamp_seconds"][""]
	if rep.ShardsNew == 0 || rep.Uploaded.Bytes == 0 || !rep.RobotsChanged || rep.Generation != 1 {
		t.Fatalf("the first run's report is not that of a first publish: %+v", rep)
	}

	broken := filepath.Join(dir, "broken.csv")
	if err := os.WriteFile(broken, []byte("loc\nhttps://www.example.com/a\nftp://x/\n\"https://www.example.com/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	from = time.Now()
	if code, _, stderr := sitemapgen(t, "", append(args, broken)...); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	to = time.Now()
	rep = readReport(t, report)
	wantMetrics(t, "failure, pushed", gw.Values("job", "sitemapgen", "name", "sitemap", "destination", out), "", rep, false, success, 1, from, to)
	if file, err = metricstest.ReadFile(prom); err != nil {
		t.Fatal(err)
	}
	wantMetrics(t, "failure, textfile", file, labels, rep, false, success, 1, from, to)
	if errs := gw.Errors(); len(errs) > 0 {
		t.Errorf("a Pushgateway would refuse the pushes: %q", errs)
	}

	// A dry run publishes nothing and tells the metrics nothing: they still
	// say the failed run, and its report says published false. A usage
	// error leaves the report and the metrics as they were.
	pushes, before := gw.Pushes(), readFile(t, prom)
	if code, _, stderr := sitemapgen(t, "", append(args, "--dry-run", "../../testdata/sample.csv")...); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	if dry := readReport(t, report); !dry.DryRun || dry.Published || dry.Plan == nil || dry.Plan.Delete == nil {
		t.Errorf("dry run report: dry_run %v, published %v, plan %+v", dry.DryRun, dry.Published, dry.Plan)
	}
	lastReport := readFile(t, report)
	for _, bad := range [][]string{{"--gzip-level", "0"}, {"--now", "2001-01-01T00:00:00Z"}} {
		if code, _, stderr := sitemapgen(t, "", append(append(args, bad...), "../../testdata/sample.csv")...); code != 2 {
			t.Fatalf("%q: exit %d, want 2\n%s", bad, code, stderr)
		}
		if got := readFile(t, report); got != lastReport {
			t.Errorf("%q: a usage error rewrote the report:\n%s", bad, got)
		}
	}
	if gw.Pushes() != pushes || readFile(t, prom) != before {
		t.Errorf("a dry run or a usage error changed the metrics: %d pushes, %d before", gw.Pushes(), pushes)
	}

	// A Pushgateway that is down is a warning: the run still succeeds.
	gw.Close()
	code, _, stderr := sitemapgen(t, "", append(args, "../../testdata/sample.csv")...)
	if code != 0 || !strings.Contains(stderr, "metrics not pushed") {
		t.Errorf("with the Pushgateway down: exit %d, want 0 and a warning\n%s", code, stderr)
	}
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--metrics-push", "localhost:9091", "../../testdata/sample.csv"); code != 2 {
		t.Errorf("--metrics-push without a scheme: exit %d, want 2\n%s", code, stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
