// Package metrics tells Prometheus how a run went, the way Prometheus asks
// batch jobs to: pushed once at the end of the run to a Pushgateway, or
// written as a node_exporter textfile. The key metric is the time of the
// last success, a gauge alerted on with time() - metric; a failed run
// reports its completion and leaves the last success as it was.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

// Job is the job label of every push.
const Job = "sitemapgen"

// LastSuccess is the name of the metric an alert watches.
const LastSuccess = "sitemapgen_last_success_timestamp_seconds"

// Generation is the name of the gauge of the generation live, as the last
// run that published set it.
const Generation = "sitemapgen_generation"

const generationHelp = "The generation the last run that published put in place (the manifest's)."

// Run is what one run reports.
type Run struct {
	Name        string           // --name: a grouping label
	Destination string           // --out: a grouping label
	Report      *pipeline.Report // nil: the run failed before it started
	OK          bool             // the run succeeded (exit status 0)
	End         time.Time        // the clock when the run ended
	// Notified counts the URLs sent to IndexNow by result (sent,
	// accepted, failed); nil when IndexNow is off.
	Notified map[string]int64
	// NotifyFailed splits the failed URLs by status, as
	// indexnow.Result.FailedByStatus does.
	NotifyFailed map[string]int
}

// failedStatuses are the values of sitemapgen_indexnow_failed_urls'
// status label: those the protocol names, 5xx and what is not an answer.
var failedStatuses = []string{"400", "403", "422", "429", "5xx", "other", "network", "outside_key_location", "outside_scope"}

// statusClass maps a status of indexnow.Result.FailedByStatus to a label
// value of failedStatuses, so that the label set stays fixed.
func statusClass(s string) string {
	switch {
	case slices.Contains(failedStatuses, s):
		return s
	case len(s) == 3 && s[0] == '5':
		return "5xx"
	}
	return "other"
}

// gauge adds one gauge, with the labels and values of vals, to reg.
func gauge(reg *prometheus.Registry, name, help string, constLabels prometheus.Labels, label string, vals map[string]float64) {
	if label == "" {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: constLabels})
		g.Set(vals[""])
		reg.MustRegister(g)
		return
	}
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: constLabels}, []string{label})
	for k, v := range vals {
		g.WithLabelValues(k).Set(v)
	}
	reg.MustRegister(g)
}

func one(v float64) map[string]float64 { return map[string]float64{"": v} }

func bit(b bool) map[string]float64 {
	if b {
		return one(1)
	}
	return one(0)
}

// byReason returns m with every one of names, 0 when m lacks it: pushed
// with add semantics, a family replaces the group's whole family, so a
// reason a run did not see must be said to be 0, not left out.
func byReason(m map[string]int64, names ...string) map[string]float64 {
	out := make(map[string]float64, len(m)+len(names))
	for _, n := range names {
		out[n] = 0
	}
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}

var reasons, warnings []string

func init() {
	for r := encode.OK + 1; r < encode.NumReasons; r++ {
		reasons = append(reasons, r.String())
	}
	for w := range encode.NumWarnings {
		warnings = append(warnings, encode.WarningName(w))
	}
	warnings = append(warnings, pipeline.FolderFileSkipped)
}

// stages are those of pipeline.Report.StageSeconds.
var stages = []string{"read", "encode", "cut", "compress", "write"}

func seconds(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(stages))
	for _, s := range stages {
		out[s] = 0
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// registry holds r's metrics, each with constLabels.
func (r Run) registry(constLabels prometheus.Labels) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	end := float64(r.End.UnixNano()) / 1e9
	if r.OK {
		gauge(reg, LastSuccess, "When the last successful run ended (Unix seconds).", constLabels, "", one(end))
	}
	gauge(reg, "sitemapgen_last_completion_timestamp_seconds", "When the last run ended, successful or not (Unix seconds).", constLabels, "", one(end))
	gauge(reg, "sitemapgen_last_run_succeeded", "1 if the last run succeeded, 0 if it failed.", constLabels, "", bit(r.OK))
	rep := r.Report
	if rep == nil {
		rep = pipeline.NewReport(0)
	}
	gauge(reg, "sitemapgen_published", "1 if the last run put a new root index in place.", constLabels, "", bit(rep.Published))
	gauge(reg, "sitemapgen_duration_seconds", "Wall time of the last run.", constLabels, "", one(rep.Seconds))
	gauge(reg, "sitemapgen_stage_seconds", "Busy time of each stage of the last run, summed over its goroutines.", constLabels, "stage", seconds(rep.StageSeconds))
	gauge(reg, "sitemapgen_rows", "Input rows the last run read.", constLabels, "", one(float64(rep.Rows)))
	gauge(reg, "sitemapgen_urls", "URLs the last run wrote to the sitemaps.", constLabels, "", one(float64(rep.URLs)))
	gauge(reg, "sitemapgen_rejected_rows", "Input rows the last run rejected, by reason.", constLabels, "reason", byReason(rep.Rejected.ByReason, reasons...))
	gauge(reg, "sitemapgen_warnings", "Optional fields the last run dropped, by reason (and folder_file_skipped: CSV and text files of an input folder it did not read).", constLabels, "reason", byReason(rep.Warnings.ByReason, warnings...))
	gauge(reg, "sitemapgen_sitemaps", "Sitemaps of the last run against the published set: new, unchanged, removed.", constLabels, "change", map[string]float64{
		"new": float64(rep.ShardsNew), "unchanged": float64(rep.ShardsUnchanged), "removed": float64(rep.ShardsRemoved)})
	gauge(reg, "sitemapgen_uploaded_bytes", "Bytes the last run wrote to the destination.", constLabels, "", one(float64(rep.Uploaded.Bytes)))
	gauge(reg, "sitemapgen_uploaded_files", "Files the last run wrote to the destination.", constLabels, "", one(float64(rep.Uploaded.Files)))
	gauge(reg, "sitemapgen_robots_changed", "1 if the last run changed the Sitemap: lines (robots.txt needs them).", constLabels, "", bit(rep.RobotsChanged))
	if rep.Published {
		// Like the last success, said only by a run that published: a
		// failed run leaves the generation that is live.
		gauge(reg, Generation, generationHelp, constLabels, "", one(float64(rep.Generation)))
	}
	if r.Notified != nil {
		gauge(reg, "sitemapgen_indexnow_urls", "URLs the last run posted to IndexNow, by result: sent, accepted, failed.", constLabels, "result", byReason(r.Notified, "sent", "accepted", "failed"))
		failed := map[string]int64{}
		for s, n := range r.NotifyFailed {
			failed[statusClass(s)] += int64(n)
		}
		gauge(reg, "sitemapgen_indexnow_failed_urls", "URLs of the last run IndexNow did not accept, by HTTP status (5xx together), network, outside_key_location or outside_scope.", constLabels, "status", byReason(failed, failedStatuses...))
	}
	return reg
}

// Push pushes r's metrics to the Pushgateway at url, job Job, grouped by
// name and destination, with add semantics (POST): metrics of the group
// that this push lacks, such as the last success when the run failed, keep
// their value. client is used for the request (nil: a client whose
// requests time out after 30 s).
func Push(ctx context.Context, url string, r Run, client *http.Client) error {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	p := push.New(url, Job).
		Grouping("name", r.Name).Grouping("destination", r.Destination).
		Gatherer(r.registry(nil)).
		Format(expfmt.NewFormat(expfmt.TypeTextPlain)).
		Client(client)
	if err := p.AddContext(ctx); err != nil {
		return fmt.Errorf("metrics push to %s: %w", url, err)
	}
	return nil
}

// WriteFile writes r's metrics to path as a node_exporter textfile,
// labelled with name and destination, atomically: the collector reads the
// old file or the new one, never a part. A failed run carries over the last
// success the file held.
func WriteFile(path string, r Run) error {
	labels := prometheus.Labels{"name": r.Name, "destination": r.Destination}
	reg := r.registry(labels)
	if !r.OK {
		if t, ok := lastValue(path, LastSuccess); ok {
			gauge(reg, LastSuccess, "When the last successful run ended (Unix seconds).", labels, "", one(t))
		}
	}
	if r.Report == nil || !r.Report.Published {
		if g, ok := lastValue(path, Generation); ok {
			gauge(reg, Generation, generationHelp, labels, "", one(g))
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].GetName() < fams[j].GetName() })
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a rename: nothing there
	enc := expfmt.NewEncoder(tmp, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err = enc.Encode(f); err != nil {
			break
		}
	}
	if err == nil {
		err = tmp.Chmod(0o644) // CreateTemp's 0600 would hide it from a node_exporter of another user
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	return nil
}

// lastValue returns the value of the gauge name the textfile at path holds.
func lastValue(path, name string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		return 0, false
	}
	fam, ok := fams[name]
	if !ok || len(fam.GetMetric()) != 1 {
		return 0, false
	}
	return fam.GetMetric()[0].GetGauge().GetValue(), true
}
