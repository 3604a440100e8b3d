package main

import (
	"encoding/json"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonLines asserts that every line of stderr is one JSON object carrying
// the run's id and generation, all of one run, and returns the objects.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	if stderr == "" {
		t.Fatal("nothing on stderr")
	}
	var recs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stderr line %d is not one JSON object: %v\n%s", i+1, err, line)
		}
		for _, k := range []string{"time", "level", "msg", "run_id", "generation"} {
			if _, ok := m[k]; !ok {
				t.Errorf("stderr line %d has no %q: %s", i+1, k, line)
			}
		}
		if n := strings.Count(line, `"generation":`); n != 1 {
			t.Errorf("stderr line %d names generation %d times: %s", i+1, n, line)
		}
		if len(recs) > 0 && m["run_id"] != recs[0]["run_id"] {
			t.Errorf("stderr line %d: run_id %v, line 1 says %v", i+1, m["run_id"], recs[0]["run_id"])
		}
		recs = append(recs, m)
	}
	return recs
}

// TestLogFormatJSON (done-when 3): with --log-format json every line a run
// writes to stderr is one JSON object, whether it succeeds, fails on its
// input, fails on its configuration or is refused as a usage error; each
// carries the run's id and the generation it publishes.
func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	sample := "../../testdata/sample.csv"
	for night := int64(1); night <= 2; night++ {
		code, _, stderr := sitemapgen(t, "", "generate", "--log-format", "json", "--public-url", base, "--out", out, sample)
		if code != 0 {
			t.Fatalf("night %d: exit %d\n%s", night, code, stderr)
		}
		recs := jsonLines(t, stderr)
		// The sample has rejected rows: a warning besides the summary.
		levels := map[any]bool{}
		for _, r := range recs {
			levels[r["level"]] = true
			if r["generation"] != float64(night) {
				t.Errorf("night %d: record %q carries generation %v", night, r["msg"], r["generation"])
			}
		}
		if !levels["INFO"] || !levels["WARN"] {
			t.Errorf("night %d: levels %v, want INFO and WARN records", night, levels)
		}
	}

	broken := filepath.Join(dir, "broken.csv")
	if err := os.WriteFile(broken, []byte("loc\n\"https://www.example.com/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside.csv")
	if err := os.WriteFile(outside, []byte("loc\nhttps://elsewhere.example/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		code int
		args []string
		hint bool // the error record carries a hint
	}{
		{"bad input", 1, []string{"--public-url", base, "--out", out, broken}, false},
		{"bad --out", 1, []string{"--public-url", base, "--out", notDir, sample}, false},
		{"no --public-url", 2, []string{"--out", out, sample}, false},
		{"repeated input", 2, []string{"--public-url", base, "--out", out, sample, sample}, false},
		{"no URL", 1, []string{"--public-url", base, "--out", out, outside}, true},
		{"time before the last run's", 2, []string{"--public-url", base, "--out", out, "--now", "2001-01-01T00:00:00Z", sample}, false},
	} {
		code, _, stderr := sitemapgen(t, "", append([]string{"generate", "--log-format", "json"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.code, stderr)
			continue
		}
		recs := jsonLines(t, stderr)
		last := recs[len(recs)-1]
		if last["level"] != "ERROR" || last["msg"] == "" || last["usage"] != (tc.code == 2) {
			t.Errorf("%s: last record %v, want the error, usage %v", tc.name, last, tc.code == 2)
		}
		if _, ok := last["hint"]; ok != tc.hint {
			t.Errorf("%s: last record %v: a hint %v, want %v", tc.name, last, ok, tc.hint)
		}
	}
	if code, _, stderr := sitemapgen(t, "", "generate", "--log-format", "xml", "--public-url", base, sample); code != 2 || !strings.Contains(stderr, "--log-format") {
		t.Errorf("--log-format xml: exit %d, want 2 naming the flag\n%s", code, stderr)
	}
}

// TestLogFormatJSONLibraryLines: what a library writes through the standard
// log package during a run (net/http on a misbehaving server, the AWS SDK's
// warnings) is a record of the run too, not a plain line among the JSON.
func TestLogFormatJSONLibraryLines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("Unsolicited response received on idle HTTP channel starting with %q", "junk")
	}))
	defer srv.Close()
	dir := t.TempDir()
	code, _, stderr := sitemapgen(t, "", "generate", "--log-format", "json", "--public-url", base, "--out", filepath.Join(dir, "out"),
		"--indexnow-key", "a1b2c3d4-e5f6", "--indexnow-endpoint", srv.URL, "--indexnow-all", "../../testdata/sample.csv")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	found := false
	for _, r := range jsonLines(t, stderr) {
		found = found || r["level"] == "WARN" && strings.HasPrefix(r["msg"].(string), "Unsolicited response")
	}
	if !found {
		t.Errorf("no WARN record of the library's line:\n%s", stderr)
	}
}
