package pipeline

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// Helpers shared by the tests of the package.

// The fixtures in testdata/columnar are written by testdata/gen (parquet-go
// and Arrow's Parquet writer) from one list of rows; rows_datetime.csv and
// rows_date.csv hold the same rows as CSV.
const (
	fixtures    = "../testdata/columnar/"
	fixtureBase = "https://www.example.com/"
)

// testNow is the --now of the tests that compare runs' bytes.
var testNow = time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)

// runTo runs cfg into a fresh folder and returns the report and the set.
func runTo(t *testing.T, cfg Config) (*Report, *xmltest.Set, string) {
	t.Helper()
	dir := t.TempDir()
	snk, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sink = snk
	if cfg.PublicURL == nil {
		cfg.PublicURL = mustScope(t, "https://www.example.com/")
	}
	if cfg.Name == "" {
		cfg.Name = "sm"
	}
	if cfg.MaxURLs == 0 {
		cfg.MaxURLs = 50000
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 10485760
	}
	if cfg.Fanout == 0 {
		cfg.Fanout = 1000
	}
	if cfg.GzipLevel == 0 {
		cfg.GzipLevel = 1
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep, xmltest.ReadSet(t, dir, cfg.PublicURL.String(), cfg.Name+".xml", cfg.Name+"-robots.txt"), dir
}

func writeText(t *testing.T, name, data string) string {
	t.Helper()
	return inputtest.WriteFile(t, name, []byte(data))
}

// runInputs runs the pipeline on inputs and returns the published set.
func runInputs(t *testing.T, cfg Config, inputs ...string) (*xmltest.Set, *Report, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = mustScope(t, fixtureBase)
	}
	cfg.Inputs, cfg.Sink, cfg.Name = inputs, out, "sitemap"
	cfg.MaxURLs, cfg.MaxBytes, cfg.Fanout, cfg.GzipLevel = 50000, 10485760, 1000, 1
	var rejects bytes.Buffer
	cfg.Rejects = &rejects
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v: %v", inputs, err)
	}
	xmltest.ValidateDir(t, dir)
	return xmltest.ReadSet(t, dir, cfg.PublicURL.String(), "sitemap.xml", ""), rep, rejects.String()
}

func shardBytes(s *xmltest.Set) []byte {
	var b []byte
	for _, sh := range s.Shards {
		b = append(b, sh.Raw...)
	}
	return b
}

func entryList(s *xmltest.Set) []string {
	var got []string
	for _, sh := range s.Shards {
		for _, u := range sh.URLs {
			got = append(got, strings.TrimPrefix(u.Loc, fixtureBase)+"|"+u.Lastmod+"|"+u.Changefreq+"|"+u.Priority)
		}
	}
	return got
}

func ptr[T any](v T) *T { return &v }

// failRun runs the pipeline on path and checks that it fails with an error
// holding every want, publishing nothing.
func failRun(t *testing.T, path string, want ...string) error {
	t.Helper()
	dir := t.TempDir()
	out, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Config{
		Inputs: []string{path}, PublicURL: mustScope(t, fixtureBase), Sink: out, Name: "sitemap",
		MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1,
	})
	if err == nil {
		t.Fatalf("%s: run succeeded, want an error", path)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("failed run left %d files (%v)", len(ents), err)
	}
	return err
}

// encodeAllocs encodes the rows b holds with an encoder of scope, then again
// runs times with the encoder's output cleared in between (as the pipeline
// reuses a batch), and returns the allocations of one encoding after the
// first. b keeps the last encoding.
func encodeAllocs(t *testing.T, b *Batch, scope string, runs int) float64 {
	t.Helper()
	enc := encode.NewEncoder(mustScope(t, scope), nil)
	encodeBatch(enc, b, 1<<20, 1<<20)
	return testing.AllocsPerRun(runs, func() {
		b.Out, b.Ends = b.Out[:0], b.Ends[:0]
		b.EntryLine, b.EntryLastmod, b.EntryNews = b.EntryLine[:0], b.EntryLastmod[:0], b.EntryNews[:0]
		b.Rejects, b.RejectBuf = b.Rejects[:0], b.RejectBuf[:0]
		encodeBatch(enc, b, 1<<20, 1<<20)
	})
}

// urlEntries returns the <url> lines of a set's shards, in order.
func urlEntries(set *xmltest.Set) []string {
	var got []string
	for _, s := range set.Shards {
		for _, line := range strings.Split(string(s.Raw), "\n") {
			if strings.HasPrefix(line, "<url>") {
				got = append(got, line)
			}
		}
	}
	return got
}

func checkEntries(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries; want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
