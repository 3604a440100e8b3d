// Command churn is the nightly-churn benchmark (issue 12): it writes night 1
// of N URLs in a stable order, then, for each change of bench.Changes, night 2
// into a copy of night 1's destination, and reports for tight and stable cuts
// what night 2 uploaded (shards and their bytes), how many robots lines
// changed, the shard count, and night 2's wall time as a ratio to the
// same-run compression limit (bench.CompressionLimit, as bench/cmd/e2e).
//
//	go run ./bench/cmd/churn -rows 1000000
//	go run ./bench/cmd/churn -rows 200000 -max-urls 500 -fanout 20   # a nested set
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "night 1's URLs")
	maxURLs := flag.Int("max-urls", 50000, "--max-urls")
	fanout := flag.Int("fanout", 1000, "--index-fanout")
	runs := flag.Int("runs", 1, "night-2 runs per change and mode; times are medians")
	dir := flag.String("dir", "", "work folder (default: a new temporary folder, removed at the end)")
	flag.Parse()

	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "sitemapgen-churn-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(work)
	}
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		fail(err)
	}
	night1, g := bench.FirstNight(1, *rows)
	in1 := filepath.Join(work, "night1.csv")
	if err := night1.WriteCSV(in1); err != nil {
		fail(err)
	}
	cfg := func(in string, out sink.Store, cut shard.CutMode, now time.Time) pipeline.Config {
		return pipeline.Config{Inputs: []string{in}, PublicURL: scope, Sink: out, Name: "sitemap",
			MaxURLs: *maxURLs, MaxBytes: 10485760, Fanout: *fanout, Cut: cut, GzipLevel: 6, MaxShrink: 0.5, Now: now}
	}
	t1 := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	modes := []shard.CutMode{shard.CutTight, shard.CutStable}
	first := map[shard.CutMode]string{}
	shards1 := map[shard.CutMode]int{}
	for _, cut := range modes {
		out := filepath.Join(work, "night1-"+cut.String())
		snk, err := sink.NewLocal(out)
		if err != nil {
			fail(err)
		}
		rep, err := pipeline.Run(context.Background(), cfg(in1, snk, cut, t1))
		if err != nil {
			fail(err)
		}
		first[cut], shards1[cut] = out, rep.Shards
	}

	type cell struct {
		shards, uploaded, robots int
		bytes                    int64
		ratio                    float64
	}
	results := make([]map[shard.CutMode]cell, len(bench.Changes))
	for i, ch := range bench.Changes {
		night2 := ch.Apply(night1, g, rand.New(rand.NewPCG(uint64(i), 2)))
		in2 := filepath.Join(work, "night2.csv")
		if err := night2.WriteCSV(in2); err != nil {
			fail(err)
		}
		results[i] = map[shard.CutMode]cell{}
		for _, cut := range modes {
			var ratios []float64
			var c cell
			for range *runs {
				out := filepath.Join(work, "night2")
				os.RemoveAll(out)
				if err := os.CopyFS(out, os.DirFS(first[cut])); err != nil {
					fail(err)
				}
				robots1, _ := os.ReadFile(filepath.Join(out, "sitemap-robots.txt"))
				snk, err := sink.NewLocal(out)
				if err != nil {
					fail(err)
				}
				start := time.Now()
				rep, err := pipeline.Run(context.Background(), cfg(in2, snk, cut, t1.Add(24*time.Hour)))
				secs := time.Since(start).Seconds()
				if err != nil {
					fail(err)
				}
				robots2, _ := os.ReadFile(filepath.Join(out, "sitemap-robots.txt"))
				limit, measured, err := bench.CompressionLimit(out, rep.Files, 6, 0, 4<<30)
				if err != nil {
					fail(err)
				}
				ratios = append(ratios, limit*float64(rep.BytesUncompressed)/float64(measured)/secs)
				c = cell{shards: rep.Shards, uploaded: rep.Uploaded.Shards, bytes: rep.Uploaded.ShardBytes,
					robots: linesChanged(string(robots1), string(robots2))}
				os.RemoveAll(out)
			}
			slices.Sort(ratios)
			c.ratio = ratios[len(ratios)/2]
			results[i][cut] = c
			fmt.Fprintf(os.Stderr, "%s, %s cuts: %d of %d shards uploaded (%.1f MB), %d robots lines changed, ratio %.2f\n",
				ch.Name, cut, c.uploaded, c.shards, float64(c.bytes)/1e6, c.robots, c.ratio)
		}
	}

	fmt.Printf("%d URLs in a stable order, --max-urls %d, --index-fanout %d; night 1: %d shards tight, %d stable\n\n",
		*rows, *maxURLs, *fanout, shards1[shard.CutTight], shards1[shard.CutStable])
	fmt.Println("| night 2 change | tight: shards uploaded | tight: MB | stable: shards uploaded | stable: MB | robots lines changed (tight / stable) | night 2 / limit (tight / stable) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, ch := range bench.Changes {
		t, s := results[i][shard.CutTight], results[i][shard.CutStable]
		fmt.Printf("| %s | %d of %d | %.1f | %d of %d | %.1f | %d / %d | %.2f / %.2f |\n", ch.Name,
			t.uploaded, t.shards, float64(t.bytes)/1e6, s.uploaded, s.shards, float64(s.bytes)/1e6, t.robots, s.robots, t.ratio, s.ratio)
	}
}

// linesChanged counts the lines of b not in a plus those of a not in b.
func linesChanged(a, b string) int {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			m[l]++
		}
		return m
	}
	ma, mb := count(a), count(b)
	n := 0
	for l, c := range ma {
		n += max(0, c-mb[l])
	}
	for l, c := range mb {
		n += max(0, c-ma[l])
	}
	return n
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "churn:", err)
	os.Exit(1)
}
