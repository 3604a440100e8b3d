package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 22's done-when 4: a manifest field that does not parse or is out of
// range never reaches a published file: the run fails naming it, or drops
// it with a warning (the file it describes is then written again, dated
// now). A --now before the last run's exits 2 unless --force.
func TestManifestFields(t *testing.T) {
	in := repairInput(t)
	const night1, night2 = "2026-11-24T12:00:00Z", "2026-11-25T12:00:00Z"
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]any)
		now   string
		force bool
		code  int
		say   string // in stderr: the field, or the reason
	}{
		{"modified not a time", setFile(0, "modified", "not-a-time"), night2, false, 0, "files[0].modified"},
		{"modified in 2099", setFile(0, "modified", "2099-01-01T00:00:00Z"), night2, false, 0, "files[0].modified"},
		{"modified without seconds", setFile(0, "modified", "2026-11-24T12:00Z"), night2, false, 0, "files[0].modified"},
		{"size negative", setFile(0, "size", -5), night2, false, 0, "files[0].size"},
		{"size huge", setFile(0, "size", 1e15), night2, false, 0, "files[0].size"},
		{"sha256 not hex", setFile(0, "sha256", strings.Repeat("z", 64)), night2, false, 0, "files[0].sha256"},
		{"xml_sha256 short", setFile(0, "xml_sha256", "abc"), night2, false, 0, "files[0].xml_sha256"},
		{"gzip_trailer not hex", setFile(0, "gzip_trailer", "<lastmod>"), night2, false, 0, "files[0].gzip_trailer"},
		{"codec with a newline", setFile(0, "codec", "pgzip\n"), night2, false, 0, "files[0].codec"},
		{"name not the set's", setFile(0, "name", "../../etc/passwd"), night2, false, 0, "files[0]"},
		{"name of another set", setFile(0, "name", "other-000001-0123456789.xml.gz"), night2, false, 0, "files[0]"},
		{"version", set("version", 7), night2, false, 1, "version 7"},
		{"generation", set("generation", -1), night2, false, 1, "generation"},
		{"urls", set("urls", -3), night2, false, 1, "urls"},
		{"root", set("root", "../x.xml"), night2, false, 1, "root"},
		{"time zero", set("time", "0001-01-01T00:00:00Z"), night2, false, 1, "time"},
		{"time not a time", set("time", "soon"), night2, false, 1, "manifest"},
		{"time in 2099", set("time", "2099-01-01T00:00:00Z"), night2, false, 2, "before"},
		{"now before the last run", nil, "2026-11-23T12:00:00Z", false, 2, "before"},
		{"now before the last run, forced", nil, "2026-11-23T12:00:00Z", true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			gen := func(now string, force bool) (int, string) {
				args := []string{"generate", "--public-url", base, "--out", out, "--max-urls", "100", "--cut", "tight",
					"--index-fanout", "3", "--now", now}
				if force {
					args = append(args, "--force")
				}
				code, _, stderr := sitemapgen(t, "", append(args, in)...)
				return code, stderr
			}
			if code, stderr := gen(night1, false); code != 0 {
				t.Fatalf("night 1: exit %d\n%s", code, stderr)
			}
			mpath := filepath.Join(out, "sitemap.manifest.json")
			if tc.edit != nil {
				raw, err := os.ReadFile(mpath)
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				tc.edit(m)
				raw, _ = json.Marshal(m)
				if err := os.WriteFile(mpath, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stderr := gen(tc.now, tc.force)
			if code != tc.code || !strings.Contains(stderr, tc.say) {
				t.Fatalf("exit %d, want %d, saying %q:\n%s", code, tc.code, tc.say, stderr)
			}
			if code != 0 {
				return
			}
			checkDates(t, out, tc.now)
			raw, _ := os.ReadFile(mpath)
			for _, bad := range []string{"not-a-time", "2099", "passwd", "other-", "zzzz", "<lastmod>", `pgzip\n`, `"size": -5`, `"size": 1e+15`, `"size": 1000000000000000`} {
				if strings.Contains(string(raw), bad) {
					t.Errorf("the new manifest holds %q", bad)
				}
			}
			if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, out); code != 0 {
				t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

func set(key string, v any) func(map[string]any) {
	return func(m map[string]any) { m[key] = v }
}

func setFile(i int, key string, v any) func(map[string]any) {
	return func(m map[string]any) { m["files"].([]any)[i].(map[string]any)[key] = v }
}

var lastmodRE = regexp.MustCompile(`<lastmod>([^<]*)</lastmod>`)

// checkDates checks every index <lastmod> of the set in dir: a W3C
// datetime in UTC, not after now.
func checkDates(t *testing.T, dir, now string) {
	t.Helper()
	limit, _ := time.Parse(time.RFC3339, now)
	names, _ := filepath.Glob(filepath.Join(dir, "sitemap*.xml"))
	for _, n := range names {
		b, _ := os.ReadFile(n)
		for _, m := range lastmodRE.FindAllSubmatch(b, -1) {
			d, err := time.Parse(time.RFC3339, string(m[1]))
			if err != nil || d.After(limit) {
				t.Errorf("%s: <lastmod>%s</lastmod>: not a datetime up to %s", filepath.Base(n), m[1], now)
			}
		}
	}
}
