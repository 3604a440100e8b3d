package main

import (
	"encoding/json"
	"fmt"
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

// TestVerifyHreflangAcrossFiles: --verify does not judge hreflang
// reciprocity, which generate checks itself over the whole export (and
// reports as warnings). The check it runs reads one set, and not all of it:
// on night 2 the alternates pointing into the sitemaps verified before (not
// read again) would be "missing", and a nightly --verify would never
// publish again; a set of one host has the other hosts' pages nowhere; a
// page on another site is nowhere either.
func TestVerifyHreflangAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	pairs := func(changed int) {
		var b strings.Builder
		b.WriteString("loc,lastmod,alternate:en,alternate:de\n")
		for _, lang := range []string{"en", "de"} {
			for i := range 600 {
				lm := "2024-01-01"
				if lang == "en" && i == changed {
					lm = "2026-11-20"
				}
				fmt.Fprintf(&b, "%s%s/%d,%s,%sen/%d,%sde/%d\n", base, lang, i, lm, base, i, base, i)
			}
		}
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	for night, now := range []string{"2026-11-20T02:00:00Z", "2026-11-21T02:00:00Z"} {
		pairs(night*10 - 1) // night 2 changes one row
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100", "--now", now, "--verify", in)
		if code != 0 {
			t.Fatalf("night %d: exit %d\n%s", night+1, code, stderr)
		}
		if m := regexp.MustCompile(`verified_before=(\d+)`).FindStringSubmatch(stderr); night == 1 && (m == nil || m[1] == "0") {
			t.Errorf("night 2: want most sitemaps not read again\n%s", stderr)
		}
	}
	hosts := filepath.Join(dir, "hosts.csv")
	os.WriteFile(hosts, []byte("loc,alternate:en,alternate:de\n"+
		"https://www.example.com/a,https://www.example.com/a,https://www.example.de/a\n"+
		"https://www.example.de/a,https://www.example.com/a,https://www.example.de/a\n"+
		"https://www.example.com/b,https://www.example.com/b,https://www.example.fr/b\n"), 0o644)
	code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "host", "--public-url", "https://{group}/", "--scope", "https://{group}/",
		"--out", filepath.Join(dir, "hosts", "{group}"), "--verify", hosts)
	if code != 0 {
		t.Fatalf("two hosts' alternates, and one to another site: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "target_missing=1") {
		t.Errorf("generate's own check: want the page on another site a warning\n%s", stderr)
	}
}
