// Command gen writes a synthetic URL CSV (or Parquet) of realistic rows to
// standard output.
//
//	go run ./bench/cmd/gen -rows 1000000 > urls.csv
//	go run ./bench/cmd/gen -rows 10000000 -format parquet -row-group 1000000 > urls.parquet
//	go run ./bench/cmd/gen -rows 1000000 -sections > sections.csv   # + a section column: 5 large, 990 small
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/sitemapgen/sitemapgen/bench"
)

func main() {
	rows := flag.Int("rows", 1000, "data rows to write")
	seed := flag.Uint64("seed", 1, "random seed: the same seed gives the same file")
	base := flag.String("base", "https://www.example.com/", "URL folder the rows fall under")
	bad := flag.Float64("bad", 0, "share of deliberately bad rows, 0..1")
	format := flag.String("format", "csv", "csv or parquet (the same rows for the same seed)")
	rowGroup := flag.Int("row-group", 1_000_000, "rows per Parquet row group")
	wide := flag.Int("wide", 0, "Parquet: bytes per row of an extra payload column no run reads (0: none)")
	sections := flag.Bool("sections", false, "CSV: add a section column (5 large sections, 990 small ones; the first segment of each path) for --group-by")
	flag.Parse()
	g := bench.NewGenerator(*seed, *base)
	g.Bad = *bad
	if *sections {
		if *format != "csv" {
			fmt.Fprintln(os.Stderr, "gen: -sections writes CSV only")
			os.Exit(2)
		}
		g.Sections = &bench.DefaultSections
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if *format == "parquet" {
		err := bench.WriteWideParquet(w, g, *rows, *rowGroup, *wide)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	w.WriteString(g.Header())
	var buf []byte
	for range *rows {
		buf = g.AppendCSV(buf[:0])
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
