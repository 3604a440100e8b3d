// Command nightly is the nightly-cost benchmark (issue 22): what a night 2
// costs against night 1, in CPU seconds (user + sys of the sitemapgen
// process) and wall time, for unchanged input, a typical night
// (bench.Typical: a section removed, four pages edited, 1% new URLs) and a
// scattered night (5% of the lastmods changed all over the set), with and
// without --verify on both nights. Pairs are interleaved: each pair runs
// night 1 into an empty folder, then every night 2 into a copy of it; the
// ratios are medians over the pairs, with night 2's stage split.
//
//	go build -o /tmp/sitemapgen ./cmd/sitemapgen
//	go run ./bench/cmd/nightly -bin /tmp/sitemapgen -rows 1000000 -pairs 3
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
)

// change is one night 2.
type change struct {
	name  string
	apply func(bench.Night, *bench.Generator, *rand.Rand) bench.Night
}

var changes = []change{
	{"unchanged", func(n bench.Night, _ *bench.Generator, _ *rand.Rand) bench.Night { return n }},
	{"typical (a section removed, 4 pages edited, 1% new)", bench.Typical},
	{"scattered (5% of lastmods changed)", bench.Scattered(0.05)},
}

// run is one sitemapgen run's cost.
type run struct {
	cpu, wall float64
	stages    map[string]float64
	uploaded  int
	reused    int
	shards    int
}

func main() {
	bin := flag.String("bin", "", "the sitemapgen binary (go build -o /tmp/sitemapgen ./cmd/sitemapgen)")
	rows := flag.Int("rows", 1_000_000, "night 1's URLs")
	pairs := flag.Int("pairs", 3, "interleaved night-1 / night-2 pairs; ratios are medians")
	withVerify := flag.Bool("verify", true, "also run the pairs with --verify on both nights")
	dir := flag.String("dir", "", "work folder (default: a new temporary folder, removed at the end)")
	flag.Parse()
	if *bin == "" {
		fail(fmt.Errorf("-bin is required"))
	}
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "sitemapgen-nightly-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(work)
	}
	night1, g := bench.FirstNight(1, *rows)
	in1 := filepath.Join(work, "night1.csv")
	if err := night1.WriteCSV(in1); err != nil {
		fail(err)
	}
	inputs := make([]string, len(changes))
	for i, ch := range changes {
		inputs[i] = filepath.Join(work, fmt.Sprintf("night2-%d.csv", i))
		if err := ch.apply(night1, g, rand.New(rand.NewPCG(uint64(i), 22))).WriteCSV(inputs[i]); err != nil {
			fail(err)
		}
	}
	t1 := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	type key struct {
		change int
		verify bool
	}
	ratios, walls := map[key][]float64{}, map[key][]float64{}
	second := map[key][]run{}
	var first, firstVerify []float64
	modes := []bool{false}
	if *withVerify {
		modes = append(modes, true)
	}
	for p := range *pairs {
		for _, verify := range modes {
			out1 := filepath.Join(work, "night1-out")
			os.RemoveAll(out1)
			r1 := generate(*bin, work, in1, out1, t1, verify)
			if verify {
				firstVerify = append(firstVerify, r1.cpu)
			} else {
				first = append(first, r1.cpu)
			}
			for i := range changes {
				out2 := filepath.Join(work, "night2-out")
				os.RemoveAll(out2)
				if err := os.CopyFS(out2, os.DirFS(out1)); err != nil {
					fail(err)
				}
				r2 := generate(*bin, work, inputs[i], out2, t1.Add(24*time.Hour), verify)
				k := key{i, verify}
				ratios[k] = append(ratios[k], r2.cpu/r1.cpu)
				walls[k] = append(walls[k], r2.wall/r1.wall)
				second[k] = append(second[k], r2)
				fmt.Fprintf(os.Stderr, "pair %d, verify %v, %s: night 1 %.2f CPU-s %.2f s, night 2 %.2f CPU-s %.2f s, %d of %d shards uploaded, %d reused\n",
					p+1, verify, changes[i].name, r1.cpu, r1.wall, r2.cpu, r2.wall, r2.uploaded, r2.shards, r2.reused)
			}
		}
	}
	fmt.Printf("%d URLs (bench generator, duplicates included), stable cuts, --max-urls 50000; medians of %d interleaved pairs\n\n", *rows, *pairs)
	fmt.Printf("night 1: %.2f CPU-s", median(first))
	if *withVerify {
		fmt.Printf("; with --verify %.2f CPU-s (+%.0f%%)", median(firstVerify), 100*(median(ratioOf(firstVerify, first))-1))
	}
	fmt.Print("\n\n")
	fmt.Println("| night 2 | --verify | shards uploaded | reused | CPU night 2 / night 1 | wall night 2 / night 1 | night 2 stages (busy s): read encode cut hash compress write |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, ch := range changes {
		for _, verify := range modes {
			k := key{i, verify}
			rs := second[k]
			last := rs[len(rs)-1]
			var st []string
			for _, s := range []string{"read", "encode", "cut", "hash", "compress", "write"} {
				var v []float64
				for _, r := range rs {
					v = append(v, r.stages[s])
				}
				st = append(st, fmt.Sprintf("%.2f", median(v)))
			}
			fmt.Printf("| %s | %v | %d of %d | %d | %.2fx | %.2fx | %s |\n", ch.name, verify, last.uploaded, last.shards, last.reused,
				median(ratios[k]), median(walls[k]), strings.Join(st, " "))
		}
	}
}

// generate runs sitemapgen and returns its cost.
func generate(bin, work, in, out string, now time.Time, verify bool) run {
	report := filepath.Join(work, "report.json")
	args := []string{"generate", "--public-url", "https://www.example.com/", "--out", out, "--now", now.Format(time.RFC3339),
		"--report", report}
	if verify {
		args = append(args, "--verify")
	}
	cmd := exec.Command(bin, append(args, in)...)
	cmd.Stderr = nil
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err))
	}
	wall := time.Since(start).Seconds()
	st := cmd.ProcessState
	raw, err := os.ReadFile(report)
	if err != nil {
		fail(err)
	}
	var rep struct {
		Shards       int                `json:"shards"`
		Reused       int                `json:"reused"`
		StageSeconds map[string]float64 `json:"stage_seconds"`
		Uploaded     struct {
			Shards int `json:"shards"`
		} `json:"uploaded"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		fail(err)
	}
	return run{cpu: (st.UserTime() + st.SystemTime()).Seconds(), wall: wall, stages: rep.StageSeconds,
		uploaded: rep.Uploaded.Shards, reused: rep.Reused, shards: rep.Shards}
}

func ratioOf(a, b []float64) []float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	return r
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "nightly:", err)
	os.Exit(1)
}
