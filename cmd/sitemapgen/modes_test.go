package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

// validateSet runs sitemapgen validate on the set in out and returns its
// report; with want0 it fails t unless the set is clean.
func validateSet(t *testing.T, out string, want0 bool, extra ...string) check.Report {
	t.Helper()
	report := filepath.Join(t.TempDir(), "validate.json")
	code, stdout, stderr := sitemapgen(t, "", append(append([]string{"validate", "--public-url", base, "--report", report}, extra...), out)...)
	var rep check.Report
	b, _ := os.ReadFile(report)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("validate report: %v\n%s", err, b)
	}
	if want0 && (code != 0 || rep.Problems != 0) {
		t.Fatalf("validate: exit %d, %d problems\n%s%s", code, rep.Problems, stdout, stderr)
	}
	return rep
}

// TestValidateEveryMode: issue 12's done-when 7 and 3. Every set generate
// writes validates, in every mode: tight and stable cuts, --sort of
// shuffled rows, --dedup of rows with repeats, a nested set (intermediate
// indexes). --sort of shuffled rows gives the sorted rows' bytes; --dedup
// rejects exactly the repeats validate finds in the --sort set of the same
// rows.
func TestValidateEveryMode(t *testing.T) {
	const n = 20_000
	rows, _ := bench.FirstNight(3, n)
	rng := rand.New(rand.NewPCG(3, 3))
	shuffled := slices.Clone(rows)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// 1% repeats: rows copied to random places (the repeat may come first).
	dups := slices.Clone(shuffled)
	for range n / 100 {
		dups = slices.Insert(dups, rng.IntN(len(dups)), rows[rng.IntN(n)])
	}
	dir := t.TempDir()
	write := func(name string, night bench.Night) string {
		p := filepath.Join(dir, name)
		if err := night.WriteCSV(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inRows, inShuffled, inDups := write("rows.csv", rows), write("shuffled.csv", shuffled), write("dups.csv", dups)

	now := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC).Format(time.RFC3339)
	gen := func(t *testing.T, in string, flags ...string) (string, pipeline.Report) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		report := filepath.Join(t.TempDir(), "report.json")
		args := append([]string{"generate", "--public-url", base, "--out", out, "--now", now, "--report", report, "--tmp", t.TempDir()}, flags...)
		if code, _, stderr := sitemapgen(t, "", append(args, in)...); code != 0 {
			t.Fatalf("generate %v: exit %d\n%s", flags, code, stderr)
		}
		return out, readReport(t, report)
	}
	for _, tc := range []struct {
		name  string
		in    string
		flags []string
	}{
		{"tight", inRows, []string{"--cut", "tight", "--max-urls", "1000"}},
		{"stable", inRows, []string{"--cut", "stable", "--max-urls", "1000"}},
		{"sort", inShuffled, []string{"--sort", "--max-urls", "1000"}},
		{"sort-tight", inShuffled, []string{"--sort", "--cut", "tight", "--max-urls", "1000"}},
		{"dedup", inDups, []string{"--dedup", "--max-urls", "1000"}},
		{"nested", inRows, []string{"--max-urls", "100", "--index-fanout", "20"}},
		{"nested-sort-byte-bound", inShuffled, []string{"--sort", "--max-bytes", "65536", "--index-fanout", "10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := gen(t, tc.in, tc.flags...)
			v := validateSet(t, out, true, "--index-fanout", "1000")
			if v.URLs != rep.URLs || v.Sitemaps != rep.Shards {
				t.Errorf("validate counts %d URLs in %d sitemaps, generate wrote %d in %d", v.URLs, v.Sitemaps, rep.URLs, rep.Shards)
			}
		})
	}

	t.Run("shuffled rows sort to the sorted rows' bytes", func(t *testing.T) {
		a, _ := gen(t, inRows, "--sort", "--max-urls", "1000")
		b, _ := gen(t, inShuffled, "--sort", "--max-urls", "1000")
		sa, sb := snapshotSet(t, a), snapshotSet(t, b)
		if len(sa) == 0 || !mapsEqual(sa, sb) {
			t.Errorf("--sort of the rows and of the shuffled rows differ (%d and %d files)", len(sa), len(sb))
		}
	})

	t.Run("dedup rejects exactly the repeats validate finds", func(t *testing.T) {
		sorted, _ := gen(t, inDups, "--sort", "--max-urls", "1000")
		v := validateSet(t, sorted, false, "--max-problems", "100000")
		_, rep := gen(t, inDups, "--dedup", "--max-urls", "1000")
		if v.ByCode[check.CodeDuplicateURL] == 0 || int64(v.ByCode[check.CodeDuplicateURL]) != rep.Rejected.ByReason["duplicate"] ||
			rep.Sort == nil || rep.Sort.Duplicates != rep.Rejected.ByReason["duplicate"] || rep.URLs != n {
			t.Errorf("validate finds %d repeats in the --sort set; --dedup rejected %d (sort report %+v), kept %d URLs of %d",
				v.ByCode[check.CodeDuplicateURL], rep.Rejected.ByReason["duplicate"], rep.Sort, rep.URLs, n)
		}
	})
}

// snapshotSet returns the files of the set in dir but the manifest (whose
// generation history differs between folders).
func snapshotSet(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		if e.Name() == "sitemap.manifest.json" || e.Name()[0] == '.' {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
