package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sharedStems are sets whose names begin with each other's: one folder (or
// S3 prefix) holds them all.
var sharedStems = []string{"sitemap", "sitemap-products", "sitemap-2024", "sitemap-index", "sitemap-000001"}

// TestSetsShareAFolder: sets whose names are prefixes of each other live in
// one destination night after night (intermediate indexes appear and go,
// nothing kept beyond the switch) and when their runs overlap: no run
// deletes, takes over or reports as orphan another set's files. The cleanup
// of "a" used to delete "a-index-0001.xml", the root of set "a-index-0001";
// overlapping runs of "sitemap" and "sitemap-products" deleted each other's
// temporary files (exit 1 in 1 to 2 rounds of 8-16); validate of "sitemap"
// reported "sitemap-2024.xml" as an orphan. A stem ending like an index file
// is refused.
func TestSetsShareAFolder(t *testing.T) {
	t.Run("folder", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		sharedNights(t, []string{"--out", out}, []string{out + "/"})
	})
	t.Run("s3", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the folder's nights in -short; S3 in the full run")
		}
		e := newS3Env(t)
		dest := "s3://" + e.bucket + "/" + e.prefix
		s3 := []string{"--s3-endpoint", e.ep, "--s3-path-style"}
		sharedNights(t, append([]string{"--out", dest}, s3...), append(s3, dest))
	})
}

// sharedNights runs every set of sharedStems into one destination for three
// nights, then two of them at once for several rounds; every set validates
// after every step. where is what validate takes before the root's name (a
// folder with a slash, or flags and an s3:// prefix).
func sharedNights(t *testing.T, out, where []string) {
	if code, _, stderr := sitemapgen(t, "", append([]string{"generate", "--public-url", base, "--name", "sitemap-index-0001"}, append(out, overlapInput(t, "x", 10))...)...); code != 2 || !strings.Contains(stderr, `index file 0001 of set "sitemap"`) {
		t.Fatalf("--name sitemap-index-0001: exit %d\n%s", code, stderr)
	}
	gen := func(stem string, rows int) []string {
		args := []string{"generate", "--public-url", base, "--name", stem, "--max-urls", "100", "--index-fanout", "3",
			"--keep-generations", "0", "--max-shrink", "100%", "--cut", "tight"}
		return append(append(args, out...), overlapInput(t, strings.ReplaceAll(stem, "-", "_")+fmt.Sprint(rows), rows))
	}
	validateAll := func(step string) {
		t.Helper()
		for _, stem := range sharedStems {
			root := where[len(where)-1] + stem + ".xml"
			args := append(append([]string{"validate", "--public-url", base}, where[:len(where)-1]...), root)
			if code, stdout, stderr := sitemapgen(t, "", args...); code != 0 {
				t.Fatalf("%s: set %s does not validate: exit %d\n%s%s", step, stem, code, stdout, stderr)
			}
		}
	}
	// Nights: 5, 2 and 4 intermediate indexes (fanout 3, 100 URLs a sitemap).
	for night, rows := range []int{1400, 450, 1000} {
		for i, stem := range sharedStems {
			if code, _, stderr := sitemapgen(t, "", gen(stem, rows+i)...); code != 0 {
				t.Fatalf("night %d, %s: exit %d\n%s", night, stem, code, stderr)
			}
		}
		validateAll(fmt.Sprintf("night %d", night))
	}
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]string, 2)
		for i, stem := range sharedStems[:2] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code, _, stderr := sitemapgen(t, "", gen(stem, 300+100*(round%3)+i)...); code != 0 {
					errs[i] = fmt.Sprintf("%s: exit %d\n%s", stem, code, stderr)
				}
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Fatalf("round %d: %s", round, e)
			}
		}
		validateAll(fmt.Sprintf("round %d", round))
	}
}
