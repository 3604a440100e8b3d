package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline"
)

// Issue 12's nightly acceptance (done-when 1, 4, 7), sized for CI: 100,000
// URLs in a stable order at --max-urls 5000 (26 stable shards, as 1M URLs
// in shards of 50,000), nights run one after the other into the same
// destination, each changed from the night before.
//
// Why not smaller shards: one URL more or less moves the fill of every
// later URL of its shard by 1/max-urls, and a cut moves only when that
// step crosses the curve's Min or Max, about once in max-urls/100 shards
// at the default curve (its hazard is 2 over 38% of the shard). At 500
// URLs a shard a single delete then re-cuts three or four shards now and
// then; at 5,000 and 50,000 it is the one or two of the issue.

const (
	churnRows    = 100_000
	churnMaxURLs = "5000"
)

// churnNight is one night: its change to the previous night's rows and
// what must hold of what it uploaded; prev and cur are the shard names the
// root lists (in order) before and after.
type churnNight struct {
	name   string
	change func(bench.Night, *bench.Generator, *rand.Rand) bench.Night
	check  func(t *testing.T, rep pipeline.Report, prev, cur []string)
}

func insertAt(pos func(n int, rng *rand.Rand) int) func(bench.Night, *bench.Generator, *rand.Rand) bench.Night {
	return func(n bench.Night, g *bench.Generator, rng *rand.Rand) bench.Night {
		return slices.Insert(slices.Clone(n), pos(len(n), rng), g.Rows(1)...)
	}
}

func deleteAt(pos func(n int, rng *rand.Rand) int) func(bench.Night, *bench.Generator, *rand.Rand) bench.Night {
	return func(n bench.Night, _ *bench.Generator, rng *rand.Rand) bench.Night {
		i := pos(len(n), rng)
		return slices.Delete(slices.Clone(n), i, i+1)
	}
}

var (
	first  = func(int, *rand.Rand) int { return 0 }
	middle = func(n int, _ *rand.Rand) int { return n / 2 }
	random = func(n int, rng *rand.Rand) int { return rng.IntN(n) }
	last   = func(n int, _ *rand.Rand) int { return n - 1 }
)

// atMost: one change uploads at most k shards, removes at most k, keeps
// every other shard under its name, and keeps the robots lines.
func atMost(k int) func(t *testing.T, rep pipeline.Report, prev, cur []string) {
	return func(t *testing.T, rep pipeline.Report, prev, cur []string) {
		t.Helper()
		gone, added := diff(prev, cur)
		if rep.Uploaded.Shards > k || len(gone) > k || len(added) != rep.Uploaded.Shards || rep.ShardsNew != rep.Uploaded.Shards ||
			rep.ShardsRemoved != len(gone) || rep.RobotsChanged {
			t.Errorf("uploaded %d shards (at most %d), %d new, %d removed (%d by name), %d listed anew; robots changed %v",
				rep.Uploaded.Shards, k, rep.ShardsNew, rep.ShardsRemoved, len(gone), len(added), rep.RobotsChanged)
		}
	}
}

// diff returns the names only in a and those only in b.
func diff(a, b []string) (onlyA, onlyB []string) {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	for _, x := range a {
		if !mb[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

var churnNights = []churnNight{
	{"one URL inserted at the first row", insertAt(first), atMost(2)},
	{"one URL inserted in the middle", insertAt(middle), atMost(2)},
	{"one URL inserted at a random row", insertAt(random), atMost(2)},
	{"one URL inserted at another random row", insertAt(random), atMost(2)},
	{"one URL deleted at the first row", deleteAt(first), atMost(2)},
	{"one URL deleted at a random row", deleteAt(random), atMost(2)},
	{"one URL deleted at another random row", deleteAt(random), atMost(2)},
	{"the last URL deleted", deleteAt(last), atMost(2)},
	{"one lastmod changed", func(n bench.Night, _ *bench.Generator, rng *rand.Rand) bench.Night {
		out := slices.Clone(n)
		i := rng.IntN(len(n))
		out[i] = bench.SetLastmod(out[i], "2031-01-02")
		return out
	}, func(t *testing.T, rep pipeline.Report, prev, cur []string) {
		gone, added := diff(prev, cur)
		if rep.Uploaded.Shards != 1 || len(gone) != 1 || len(added) != 1 || rep.RobotsChanged {
			t.Errorf("uploaded %d shards, removed %d, added %d, robots changed %v: want exactly one shard replaced",
				rep.Uploaded.Shards, len(gone), len(added), rep.RobotsChanged)
		}
	}},
	{"1% appended", bench.Changes[3].Apply, func(t *testing.T, rep pipeline.Report, prev, cur []string) {
		// Only the last shard(s) change: every other shard of the night
		// before is listed again, in the same place, under its name.
		gone, added := diff(prev, cur)
		for _, g := range gone {
			if i := slices.Index(prev, g); i < len(prev)-2 {
				t.Errorf("shard %d of %d (%s) changed", i+1, len(prev), g)
			}
		}
		if !slices.Equal(cur[:len(prev)-len(gone)], prev[:len(prev)-len(gone)]) || len(added) != rep.Uploaded.Shards ||
			len(cur) < len(prev) || rep.RobotsChanged {
			t.Errorf("%d shards before, %d after, %d removed, %d uploaded, robots changed %v",
				len(prev), len(cur), len(gone), rep.Uploaded.Shards, rep.RobotsChanged)
		}
	}},
	// A block of 1% (1,000 URLs, a quarter of a shard) in the middle: the
	// shard it falls in, then a few until the cuts re-synchronise (4.9 on
	// average at 1M URLs, bench/README.md "Stable cuts"). Every later shard
	// keeps its name, though its place moved: when shard names followed
	// the place, this night re-uploaded all of them (half the set).
	{"a block of 1% inserted in the middle", bench.Changes[4].Apply, atMost(8)},
	{"nothing changed", func(n bench.Night, _ *bench.Generator, _ *rand.Rand) bench.Night { return n }, atMost(0)},
}

// nightsToRun returns churnNights, or in short mode (CI's pass under the
// race detector) one night of each kind: an insert, a delete, a changed
// lastmod, an append, a block in the middle, no change. The race detector
// needs every path taken once, not twelve times; the README's test command
// runs every night. (Both churn tests were 150 of the 350 s the package
// takes under the race detector.)
func nightsToRun() []churnNight {
	if !testing.Short() {
		return churnNights
	}
	var nights []churnNight
	for _, n := range churnNights {
		switch n.name {
		case "one URL inserted at a random row", "one URL deleted at a random row", "one lastmod changed",
			"1% appended", "a block of 1% inserted in the middle", "nothing changed":
			nights = append(nights, n)
		}
	}
	return nights
}

// churnDest is a destination the nights publish to.
type churnDest struct {
	args  func(extra ...string) []string // generate's flags for it
	local func(t *testing.T) string      // a folder holding the published set (downloaded for S3)
	// ref is a second destination of the same kind where every night runs
	// with --reuse=false: its files must be the same bytes (issue 22).
	ref *churnDest
}

// runChurn runs night 1, then each night of churnNights, and checks them:
// what each uploaded; that the set validates (done-when 7); and, on the
// nights where moved shards keep their names, that re-running the night
// from the night before's files with the same --now gives the same bytes
// (done-when 4; local destinations only).
func runChurn(t *testing.T, d churnDest, rerun func(t *testing.T, before map[string][]byte, args []string)) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	rows, g := bench.FirstNight(1, churnRows)
	night := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	generate := func(rows bench.Night) (pipeline.Report, []string) {
		t.Helper()
		in := filepath.Join(dir, "night.csv")
		if err := rows.WriteCSV(in); err != nil {
			t.Fatal(err)
		}
		args := d.args("--max-urls", churnMaxURLs, "--cut", "stable", "--now", night.Format(time.RFC3339), "--report", report, in)
		if code, _, stderr := sitemapgen(t, "", args...); code != 0 {
			t.Fatalf("generate: exit %d\n%s", code, stderr)
		}
		rep := readReport(t, report)
		if d.ref != nil {
			sameAsCompressingAll(t, d, rep, rows, night, in)
		}
		return rep, args
	}
	rep, _ := generate(rows)
	out := d.local(t)
	prev := listedShards(t, out)
	if rep.Shards < 20 || len(prev) != rep.Shards {
		t.Fatalf("night 1: %d shards (%d listed), want over 20", rep.Shards, len(prev))
	}
	top := t // downloads live as long as the whole test
	for i, n := range nightsToRun() {
		t.Run(n.name, func(t *testing.T) {
			night = night.Add(24 * time.Hour)
			before := xmltest.Snapshot(t, out)
			rows = n.change(rows, g, rand.New(rand.NewPCG(uint64(i), 12)))
			rep, args := generate(rows)
			out = d.local(top)
			cur := listedShards(t, out)
			n.check(t, rep, prev, cur)
			if d.ref != nil && rep.Reused != rep.Shards-rep.Uploaded.Shards {
				t.Errorf("reused %d of %d shards, uploaded %d: every shard not uploaded should be reused", rep.Reused, rep.Shards, rep.Uploaded.Shards)
			}
			if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, out); code != 0 {
				t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
			}
			if rerun != nil && (n.name == "a block of 1% inserted in the middle" || n.name == "one lastmod changed") {
				rerun(t, before, args)
			}
			t.Logf("%d of %d shards uploaded (%d bytes), %d removed", rep.Uploaded.Shards, rep.Shards, rep.Uploaded.ShardBytes, rep.ShardsRemoved)
			prev = cur
		})
	}
}

// sameAsCompressingAll runs the night into d.ref with --reuse=false and
// checks that both destinations hold the same bytes, the manifest
// included, though d reused what it could.
func sameAsCompressingAll(t *testing.T, d churnDest, rep pipeline.Report, rows bench.Night, night time.Time, in string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "ref.json")
	args := d.ref.args("--max-urls", churnMaxURLs, "--cut", "stable", "--now", night.Format(time.RFC3339), "--report", report, "--reuse=false", in)
	if code, _, stderr := sitemapgen(t, "", args...); code != 0 {
		t.Fatalf("generate --reuse=false: exit %d\n%s", code, stderr)
	}
	if ref := readReport(t, report); ref.Reused != 0 || ref.Shards != rep.Shards {
		t.Errorf("--reuse=false reused %d sitemaps, %d shards; with reuse %d shards", ref.Reused, ref.Shards, rep.Shards)
	}
	got, want := xmltest.Snapshot(t, d.local(t)), xmltest.Snapshot(t, d.ref.local(t))
	if len(got) != len(want) {
		t.Errorf("reused: %d files, compressing everything: %d", len(got), len(want))
	}
	for n, b := range want {
		if !bytes.Equal(got[n], b) {
			t.Errorf("%s: reused and compressed-everything bytes differ", n)
		}
	}
}

var locRE = regexp.MustCompile(`<loc>([^<]*)</loc>`)

// listedShards returns the shards the set in dir lists, in order, from the
// root index down through the intermediate indexes.
func listedShards(t *testing.T, dir string) []string {
	t.Helper()
	var shards []string
	var walk func(name string)
	walk = func(name string) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range locRE.FindAllSubmatch(b, -1) {
			n := strings.TrimPrefix(string(m[1]), base)
			if strings.HasSuffix(n, ".xml.gz") {
				shards = append(shards, n)
			} else {
				walk(n)
			}
		}
	}
	walk("sitemap.xml")
	return shards
}

// TestNightlyChurnLocal: issue 12's done-when 1 on a folder: one URL
// inserted or deleted anywhere uploads at most 2 shards, one lastmod
// exactly 1, 1% appended only the last shards and the new ones; every set
// validates; a night re-run from the same files with the same --now gives
// the same bytes.
func TestNightlyChurnLocal(t *testing.T) {
	out, refOut := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "ref")
	folder := func(out string) churnDest {
		return churnDest{
			args: func(extra ...string) []string {
				return append([]string{"generate", "--public-url", base, "--out", out}, extra...)
			},
			local: func(*testing.T) string { return out },
		}
	}
	d, ref := folder(out), folder(refOut)
	d.ref = &ref
	runChurn(t, d, func(t *testing.T, before map[string][]byte, args []string) {
		again := t.TempDir()
		for n, b := range before {
			if err := os.WriteFile(filepath.Join(again, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = slices.Clone(args)
		args[slices.Index(args, "--out")+1] = again
		args[slices.Index(args, "--report")+1] = filepath.Join(t.TempDir(), "report.json")
		if code, _, stderr := sitemapgen(t, "", args...); code != 0 {
			t.Fatalf("re-run: exit %d\n%s", code, stderr)
		}
		want, got := xmltest.Snapshot(t, out), xmltest.Snapshot(t, again)
		for n, b := range want {
			if n != "sitemap.manifest.json" && !bytes.Equal(got[n], b) {
				t.Errorf("re-run from the same files and --now: %s differs", n)
			}
		}
		if !bytes.Equal(manifestFiles(t, got["sitemap.manifest.json"]), manifestFiles(t, want["sitemap.manifest.json"])) {
			t.Error("re-run from the same files and --now: the manifest lists other files")
		}
	})
}

// TestNightlyChurnS3 is TestNightlyChurnLocal on the S3 server
// (internal/s3test): the same nights, the same bounds.
func TestNightlyChurnS3(t *testing.T) {
	e := newS3Env(t)
	r := *e
	r.prefix = "ref/maps/"
	bucket := func(e *s3env) churnDest {
		return churnDest{
			args: func(extra ...string) []string { return e.args(e.ep, extra...) },
			local: func(t *testing.T) string {
				dir, _ := e.download(t)
				return dir
			},
		}
	}
	d, ref := bucket(e), bucket(&r)
	d.ref = &ref
	runChurn(t, d, nil)
}

// TestNestedChurnKeepsRobots: issue 12's done-when 5, scaled from 3M URLs
// at --index-fanout 20 to 200,000 URLs at --max-urls 500 (about 530
// shards under about 27 intermediate indexes): two nights of 0.5% churn
// (0.25% deleted, 0.25% inserted, at random rows) keep the robots lines
// byte for byte, and every set validates.
func TestNestedChurnKeepsRobots(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of 200,000 URLs")
	}
	dir := t.TempDir()
	out, report, in := filepath.Join(dir, "out"), filepath.Join(dir, "report.json"), filepath.Join(dir, "night.csv")
	rows, g := bench.FirstNight(5, 200_000)
	night := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	var robots []byte
	for i := range 3 {
		if i > 0 {
			rows = bench.Churn(0.005)(rows, g, rand.New(rand.NewPCG(uint64(i), 5)))
		}
		if err := rows.WriteCSV(in); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "500",
			"--index-fanout", "20", "--now", night.Add(time.Duration(i)*24*time.Hour).Format(time.RFC3339), "--report", report, in); code != 0 {
			t.Fatalf("night %d: exit %d\n%s", i+1, code, stderr)
		}
		rep := readReport(t, report)
		got, err := os.ReadFile(filepath.Join(out, "sitemap-robots.txt"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(string(got), "\n")
		if i == 0 {
			robots = got
			if lines < 20 || rep.Indexes < 20 {
				t.Fatalf("night 1: %d robots lines, %d indexes, %d shards: not a nested set of the size wanted", lines, rep.Indexes, rep.Shards)
			}
		} else if !bytes.Equal(got, robots) || rep.RobotsChanged {
			t.Errorf("night %d (0.5%% churn): robots lines changed (report says %v): %d lines, were %d",
				i+1, rep.RobotsChanged, lines, strings.Count(string(robots), "\n"))
		}
		if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, "--index-fanout", "20", out); code != 0 {
			t.Errorf("night %d: validate: exit %d\n%s%s", i+1, code, stdout, stderr)
		}
		t.Logf("night %d: %d shards (%d uploaded, %d removed), %d indexes, %d robots lines", i+1, rep.Shards, rep.Uploaded.Shards, rep.ShardsRemoved, rep.Indexes, lines)
	}
}

// TestNightsToRun: short mode keeps one night of each kind, among them the
// two that re-run a night from the files before it; neither list is empty.
func TestNightsToRun(t *testing.T) {
	nights := nightsToRun()
	if !testing.Short() {
		if len(nights) != len(churnNights) {
			t.Fatalf("%d nights, want all %d", len(nights), len(churnNights))
		}
		return
	}
	if len(nights) != 6 {
		t.Fatalf("%d nights in short mode, want 6 (a name in nightsToRun no longer matches churnNights?)", len(nights))
	}
	names := map[string]bool{}
	for _, n := range nights {
		names[n.name] = true
	}
	for _, want := range []string{"a block of 1% inserted in the middle", "one lastmod changed"} {
		if !names[want] {
			t.Errorf("short mode leaves out %q, a night runChurn re-runs", want)
		}
	}
}
