package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/publish"
)

// TestVerifyInProportion: issue 22's --verify in proportion. A --verify run
// records the files it checked; a later --verify run reads only the files
// that are new since, or were published by a run without --verify, and
// every index (six shards under three intermediate indexes here).
func TestVerifyInProportion(t *testing.T) {
	out := t.TempDir()
	unread := regexp.MustCompile(`verified_before=(\d+)`)
	night := func(now string, verify bool, changed func(int) bool) (skipped int, verified map[string]bool) {
		t.Helper()
		args := []string{"generate", "--public-url", base, "--out", out, "--max-urls", "100", "--cut", "tight",
			"--index-fanout", "2", "--now", now}
		if verify {
			args = append(args, "--verify")
		}
		code, _, stderr := sitemapgen(t, "", append(args, rowsCSV(t, 600, changed))...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if m := unread.FindStringSubmatch(stderr); m != nil {
			skipped, _ = strconv.Atoi(m[1])
		} else if verify {
			t.Fatalf("no verify line:\n%s", stderr)
		}
		raw, err := os.ReadFile(filepath.Join(out, "sitemap.manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m publish.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		verified = map[string]bool{}
		for _, f := range m.Files {
			if strings.HasSuffix(f.Name, ".xml.gz") { // the sitemaps: root and robots are written every run
				verified[f.Name] = f.Verified
			}
		}
		return skipped, verified
	}
	count := func(v map[string]bool) (n int) {
		for _, ok := range v {
			if ok {
				n++
			}
		}
		return n
	}
	if n, v := night("2026-11-20T02:00:00Z", true, nil); n != 0 || count(v) != len(v) {
		t.Errorf("night 1 --verify: %d files not read, %d of %d recorded verified; want 0, all", n, count(v), len(v))
	}
	// One row changed: one shard new, five read before.
	if n, v := night("2026-11-21T02:00:00Z", true, func(i int) bool { return i == 5 }); n != 5 || count(v) != len(v) {
		t.Errorf("night 2 --verify: %d files not read, %d of %d recorded verified; want 5, all", n, count(v), len(v))
	}
	// Without --verify: the new shard is recorded unverified.
	if _, v := night("2026-11-22T02:00:00Z", false, func(i int) bool { return i == 5 || i == 300 }); count(v) != 5 {
		t.Errorf("night 3: %d of %d files recorded verified, want the 5 shards reused", count(v), len(v))
	}
	// Nothing changed, but the shard night 3 wrote was never verified: read.
	if n, v := night("2026-11-23T02:00:00Z", true, func(i int) bool { return i == 5 || i == 300 }); n != 5 || count(v) != len(v) {
		t.Errorf("night 4 --verify: %d files not read, %d of %d recorded verified; want 5, all", n, count(v), len(v))
	}
}
