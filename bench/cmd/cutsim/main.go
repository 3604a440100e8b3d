// Command cutsim compares cut policies by how many shards change from one
// night to the next (bench.CutSim) and prints a Markdown table.
//
//	go run ./bench/cmd/cutsim -n 1000000 -trials 15
//	go run ./bench/cmd/cutsim -n 1000000 -max-bytes 4194304   # byte-bound shards
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/shard"
)

// curves are the candidates measured for shard.DefaultCurve.
var curves = []shard.Curve{
	{Min: 0.50, Max: 0.98, Shape: 1, Hazard: 4},
	{Min: 0.50, Max: 0.98, Shape: 2, Hazard: 6},
	{Min: 0.60, Max: 0.98, Shape: 1, Hazard: 3},
	{Min: 0.60, Max: 0.98, Shape: 2, Hazard: 4},
	{Min: 0.60, Max: 0.98, Shape: 2, Hazard: 6},
	{Min: 0.65, Max: 0.98, Shape: 2, Hazard: 6},
	{Min: 0.70, Max: 0.98, Shape: 1, Hazard: 4},
	{Min: 0.70, Max: 0.98, Shape: 2, Hazard: 6},
	{Min: 0.70, Max: 0.98, Shape: 3, Hazard: 8},
	{Min: 0.80, Max: 0.98, Shape: 2, Hazard: 6},
	{Min: 0.90, Max: 0.99, Shape: 2, Hazard: 6},
}

func main() {
	n := flag.Int("n", 1_000_000, "URLs on night 1")
	maxURLs := flag.Int("max-urls", 50000, "URLs per shard")
	maxBytes := flag.Int("max-bytes", 10485760, "bytes per shard")
	trials := flag.Int("trials", 15, "nights 2 per single change")
	bulk := flag.Int("bulk", 5, "nights 2 per bulk change")
	only := flag.String("curves", "", "measure only these curves (Min,Max,Shape,Hazard;...), after tight")
	flag.Parse()
	if *only != "" {
		curves = nil
		for _, c := range strings.Split(*only, ";") {
			var cv shard.Curve
			if _, err := fmt.Sscanf(c, "%g,%g,%d,%g", &cv.Min, &cv.Max, &cv.Shape, &cv.Hazard); err != nil {
				fmt.Fprintln(os.Stderr, "cutsim: -curves:", err)
				os.Exit(2)
			}
			curves = append(curves, cv)
		}
	}
	sim, err := bench.NewCutSim(*n, *maxURLs, *maxBytes, *trials, *bulk)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cutsim:", err)
		os.Exit(1)
	}
	var rows []bench.CutSimRow
	for i := -1; i < len(curves); i++ {
		var cv *shard.Curve
		if i >= 0 {
			cv = &curves[i]
		}
		r, err := sim.Run(cv)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cutsim:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", r.Cut, r.Time.Round(1e6))
		rows = append(rows, r)
	}
	fmt.Printf("%d URLs, %d URLs and %d bytes per shard, %d trials per single change, %d per bulk change\n\n", *n, *maxURLs, *maxBytes, *trials, *bulk)
	bench.WriteCutSimTable(os.Stdout, rows)
}
