package metrics

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/metrics/metricstest"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

func report(rows int64, published bool) *pipeline.Report {
	rep := pipeline.NewReport(6)
	rep.Rows, rep.URLs, rep.Published, rep.Seconds = rows, rows-1, published, 1.5
	rep.Rejected.ByReason["not_http"] = 1
	rep.StageSeconds = map[string]float64{"read": 0.25}
	return rep
}

// TestPushAddSemantics: a failed run's push leaves the last success of the
// group as it was and replaces the rest; another destination is another
// group.
func TestPushAddSemantics(t *testing.T) {
	gw := metricstest.NewGateway()
	defer gw.Close()
	ctx := context.Background()
	t1, t2 := time.Unix(1000, 0), time.Unix(2000, 500e6)
	dest := "s3://bucket/sitemaps/en"
	if err := Push(ctx, gw.URL, Run{Name: "sitemap", Destination: dest, Report: report(10, true), OK: true, End: t1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, gw.URL, Run{Name: "sitemap", Destination: dest, Report: report(4, false), OK: false, End: t2}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, gw.URL, Run{Name: "sitemap", Destination: "other", Report: report(7, true), OK: true, End: t2}, nil); err != nil {
		t.Fatal(err)
	}
	if errs := gw.Errors(); len(errs) > 0 {
		t.Fatalf("the gateway refused: %q", errs)
	}
	v := gw.Values("job", Job, "name", "sitemap", "destination", dest)
	for name, want := range map[string]float64{
		LastSuccess: 1000, "sitemapgen_last_completion_timestamp_seconds": 2000.5,
		"sitemapgen_last_run_succeeded": 0, "sitemapgen_published": 0, "sitemapgen_rows": 4, "sitemapgen_urls": 3,
		"sitemapgen_duration_seconds": 1.5,
	} {
		if got, ok := v[name][""]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got := v["sitemapgen_rejected_rows"]["reason=not_http"]; got != 1 {
		t.Errorf("rejected not_http = %v, want 1", got)
	}
	if got := v["sitemapgen_stage_seconds"]["stage=read"]; got != 0.25 {
		t.Errorf("stage read = %v, want 0.25", got)
	}
	if got := gw.Values("job", Job, "name", "sitemap", "destination", "other")[LastSuccess][""]; got != 2000.5 {
		t.Errorf("other destination's last success = %v, want 2000.5", got)
	}
}

// TestWriteFileKeepsLastSuccess: the textfile is replaced whole, so a
// failed run carries the last success over; without a file before, a
// failed run writes none.
func TestWriteFileKeepsLastSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sitemapgen.prom")
	labels := "destination=out,name=sitemap"
	if err := WriteFile(path, Run{Name: "sitemap", Destination: "out", Report: report(4, false), End: time.Unix(500, 0)}); err != nil {
		t.Fatal(err)
	}
	v, err := metricstest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v[LastSuccess]; ok {
		t.Errorf("a failed first run wrote a last success")
	}
	if err := WriteFile(path, Run{Name: "sitemap", Destination: "out", Report: report(10, true), OK: true, End: time.Unix(1000, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, Run{Name: "sitemap", Destination: "out", Report: report(4, false), End: time.Unix(2000, 0)}); err != nil {
		t.Fatal(err)
	}
	if v, err = metricstest.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if got := v[LastSuccess][labels]; got != 1000 {
		t.Errorf("last success = %v, want 1000 carried over", got)
	}
	if got := v["sitemapgen_last_completion_timestamp_seconds"][labels]; got != 2000 {
		t.Errorf("last completion = %v, want 2000", got)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode %v, %v: want 0644 for the node_exporter", st.Mode(), err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp")); len(m) > 0 {
		t.Errorf("temporary files left: %q", m)
	}
}

// TestPushFailure: a Pushgateway that is down is an error for the caller
// to log, after a bounded wait.
func TestPushFailure(t *testing.T) {
	gw := metricstest.NewGateway()
	url := gw.URL
	gw.Close()
	if err := Push(context.Background(), url, Run{Name: "sitemap", Destination: "out", OK: true, End: time.Now()}, nil); err == nil {
		t.Fatal("a push to a closed server succeeded")
	}
}
