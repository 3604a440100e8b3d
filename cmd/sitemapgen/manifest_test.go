package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/zeebo/blake3"
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
		{"xml_blake3 short", setFile(0, "xml_blake3", "abc"), night2, false, 0, "files[0].xml_blake3"},
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
				editManifest(t, mpath, tc.edit)
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

// A manifest names a sitemap's XML by its BLAKE3 and size (checked against
// the inflated file). One of an earlier sitemapgen named it by its SHA-256
// (xml_sha256), where this one records its BLAKE3 (xml_blake3). The first
// night after the upgrade cannot match the two: it compresses every sitemap
// again, but their bytes are unchanged, so nothing is uploaded and every
// index <lastmod> is carried. The night after reuses them all.
func TestManifestOfAnEarlierVersion(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("loc,lastmod\n")
	for i := range 600 {
		fmt.Fprintf(&rows, "%spage/%d,2026-10-%02d\n", base, i, 1+i%28)
	}
	in := inputtest.WriteFile(t, "in.csv", []byte(rows.String()))
	out := t.TempDir()
	rep := filepath.Join(t.TempDir(), "report.json")
	gen := func(now string) pipeline.Report {
		t.Helper()
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100",
			"--cut", "tight", "--index-fanout", "3", "--now", now, "--report", rep, in)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", now, code, stderr)
		}
		return readReport(t, rep)
	}

	if r := gen("2026-11-24T12:00:00Z"); r.Shards < 3 {
		t.Fatalf("night 1 cut %d sitemaps, want several", r.Shards)
	}
	before := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	xml := map[string][]byte{}
	for _, sh := range before.Shards {
		xml[sh.Name] = sh.Raw
	}
	// What the earlier version wrote: the XML's SHA-256, no BLAKE3.
	mpath := filepath.Join(out, "sitemap.manifest.json")
	legacy := 0
	editManifest(t, mpath, func(m map[string]any) {
		for _, f := range m["files"].([]any) {
			f := f.(map[string]any)
			b3, ok := f["xml_blake3"]
			if !ok {
				continue
			}
			raw := xml[f["name"].(string)]
			if want := fmt.Sprintf("%x", blake3.Sum256(raw)); b3 != want || f["xml_size"] != float64(len(raw)) {
				t.Errorf("%s: xml_blake3 %v, xml_size %v; its XML has %s, %d bytes", f["name"], b3, f["xml_size"], want, len(raw))
			}
			delete(f, "xml_blake3")
			f["xml_sha256"] = fmt.Sprintf("%x", sha256.Sum256(raw))
			legacy++
		}
	})
	if legacy != len(before.Shards) {
		t.Fatalf("night 1's manifest records xml_blake3 for %d files, want its %d sitemaps", legacy, len(before.Shards))
	}

	r := gen("2026-11-25T12:00:00Z")
	if r.Reused != 0 || r.Uploaded.Shards != 0 {
		t.Errorf("the night after the upgrade: %d sitemaps reused, %d uploaded; want 0 and 0 (all compressed again, the same bytes)", r.Reused, r.Uploaded.Shards)
	}
	if after := xmltest.ReadSet(t, out, base, "sitemap.xml", ""); !reflect.DeepEqual(after.Indexes, before.Indexes) {
		t.Errorf("the indexes changed across the upgrade:\n%v\n%v", before.Indexes, after.Indexes)
	}
	raw, _ := os.ReadFile(mpath)
	if n := strings.Count(string(raw), `"xml_blake3"`); n < legacy {
		t.Errorf("the new manifest records %d xml_blake3, want %d", n, legacy)
	}
	if r := gen("2026-11-26T12:00:00Z"); r.Reused != r.Shards || r.Uploaded.Shards != 0 {
		t.Errorf("the night after: %d of %d sitemaps reused, %d uploaded; want all, and 0", r.Reused, r.Shards, r.Uploaded.Shards)
	}
}

// editManifest rewrites the manifest at path as edit changes its JSON.
func editManifest(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
