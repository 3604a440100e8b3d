// Command e2e is sitemapgen's end-to-end benchmark. In one process it
// generates (or reuses) a CSV of N realistic rows, runs the whole pipeline to
// a local folder, and measures the limit on the same machine in the same run:
// compressing the same uncompressed XML with the same compressor, level and
// cores. It prints rows/s, MB/s, the ratio to the limit, peak RSS,
// allocations per row and the busy time of each stage, as medians of -runs
// interleaved runs. With -validate each run's output is then validated
// (check.Set, as sitemapgen validate) and inflated alone (the same-run
// inflate limit): it prints validate / generate and validate / inflate
// limit, the medians of each run's ratios.
//
//	go run ./bench/cmd/e2e -rows 1000000 -min-ratio 0.5
//	go run ./bench/cmd/e2e -rows 1000000 -validate
//
// With -group the input carries a section column (bench.DefaultSections: 5
// large sections, 990 small ones) and each run is paired with a grouped run
// over the same rows (--group-by section: one sitemap set per section),
// the two timed back to back, each first in turn; it prints grouped /
// ungrouped wall time, the medians of each pair's ratios, and the grouped
// run's peak RSS.
//
//	go run ./bench/cmd/e2e -rows 1000000 -group
//
// -group-check then compares the last grouped run's files with those of
// separate runs over each section's rows alone, byte for byte (exit 1 on a
// difference).
//
// It exits 1 when the median ratio falls below -min-ratio: CI uses that to
// catch gross regressions without ever comparing absolute times.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "input rows")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "sitemapgen-bench"), "folder for the generated input (reused) and the output")
	runs := flag.Int("runs", 3, "interleaved runs; figures are medians")
	level := flag.Int("gzip-level", 6, "gzip level")
	procs := flag.Int("gzip-procs", 0, "goroutines per shard: 0 = pgzip on all cores, 1 = one single-stream gzip per core")
	limitBytes := flag.Int64("limit-bytes", 4<<30, "measure the compression limit on at most this many uncompressed bytes")
	cutFlag := flag.String("cut", "stable", "shard cuts: stable (the product's default), tight, or a list (tight,stable) run alternately")
	sortFlag := flag.Bool("sort", false, "--sort: order the entries by loc through internal/extsort (runs spilled to -dir)")
	minRatio := flag.Float64("min-ratio", 0, "exit 1 when the median end-to-end/limit ratio is below this")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the last pipeline run")
	memprofile := flag.String("memprofile", "", "write an allocation profile of all runs at the end")
	validate := flag.Bool("validate", false, "after each run, validate its output (check.Set, as sitemapgen validate) and measure the same-run inflate limit")
	valprofile := flag.String("validate-cpuprofile", "", "write a CPU profile of the last validation")
	groupprofile := flag.String("group-cpuprofile", "", "write a CPU profile of the last grouped run")
	groupCheck := flag.Bool("group-check", false, "with -group: after the last grouped run, run the pipeline over each section's rows alone (--name sitemap-SECTION) and compare every file with the grouped run's")
	group := flag.Bool("group", false, "rows with a section column, and with each run a grouped run over them (--group-by section), timed back to back")
	outFlag := flag.String("out", "", "folder for the runs' output folders, removed at the end (default: a tmpfs with room, /dev/shm, else -dir)")
	flag.Parse()

	var cuts []shard.CutMode
	for _, name := range strings.Split(*cutFlag, ",") {
		cut, err := shard.ParseCutMode(name)
		if err != nil {
			fail(err)
		}
		cuts = append(cuts, cut)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	in, err := generated(*dir, *rows, *group)
	if err != nil {
		fail(err)
	}
	if outDir, err = outputFolder(*outFlag, *dir, in, *runs*len(cuts), *group); err != nil {
		fail(err)
	}
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		fail(err)
	}

	// With several cut modes the runs alternate between them (tight,
	// stable, tight, stable, ...), so the machine's drift hits both alike.
	res := make([][]result, len(cuts))
	for i := range *runs {
		for k, cut := range cuts {
			last := i == *runs-1 && k == len(cuts)-1
			var r result
			var plain plainRun
			runPlain := func() (err error) {
				plain, err = timedPlain(&r, in, *dir, scope, cut, *sortFlag, *level, *procs, last, *cpuprofile)
				return err
			}
			var grouped groupedRun
			runGrouped := func() (err error) {
				prof := ""
				if last {
					prof = *groupprofile
				}
				grouped, err = timedGrouped(&r, in, *dir, scope, cut, *sortFlag, *level, *procs, prof)
				return err
			}
			// The two runs of a pair back to back, in turn first: what is
			// compared is measured as close together as the machine allows,
			// and a drift of the machine within a pair hits both orders.
			steps := []func() error{runPlain}
			if *group {
				steps = append(steps, runGrouped)
				if i%2 == 1 {
					steps[0], steps[1] = steps[1], steps[0]
				}
			}
			for _, step := range steps {
				if err := step(); err != nil {
					fail(err)
				}
			}
			if err := plain.measure(&r, *level, *procs, *limitBytes, *dir, last, *validate, *valprofile); err != nil {
				fail(err)
			}
			if *group {
				if err := grouped.check(&r, in, *dir, scope, cut, *sortFlag, *level, *procs, last && *groupCheck); err != nil {
					fail(err)
				}
				fmt.Fprintf(os.Stderr, "run %d, grouped: %.2f s, CPU %.2f s (ungrouped %.2f s), %d groups, peak RSS %d MiB; grouped / ungrouped %.2f\n",
					i+1, r.groupSecs, r.groupCPU, r.cpuSecs, r.groups, r.groupRSS>>20, r.groupVsPlain())
			}
			res[k] = append(res[k], r)
			fmt.Fprintf(os.Stderr, "run %d, %s cuts: %.0f rows/s, limit %.0f rows/s, ratio %.2f, peak RSS %d MiB\n",
				i+1, cut, r.rowsPerSec(), r.limitRowsPerSec(), r.ratio(), r.rss>>20)
			if *validate {
				fmt.Fprintf(os.Stderr, "run %d, validate: %.2f s, CPU %.2f s, %d problems, peak RSS %d MiB; validate / generate %.2f, validate / inflate limit %.2f\n",
					i+1, r.valSecs, r.valCPU, r.valProblems, r.valRSS>>20, r.valVsGen(), r.valVsInflate())
			}
		}
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail(err)
		}
		f.Close()
	}
	var fixed groupCost
	if *group {
		if fixed, err = perGroup(in, *dir, scope, cuts[0], *level, *procs, max(*runs, 5)); err != nil {
			fail(err)
		}
	}
	mode := "pgzip, all cores per shard"
	if *procs == 1 {
		mode = "one gzip stream per shard, a shard per core"
	}
	failed := false
	var ratios []float64
	for k, cut := range cuts {
		m := median(res[k])
		ratios = append(ratios, m.ratio())
		fmt.Printf("| metric | median of %d runs |\n|---|---|\n", len(res[k]))
		fmt.Printf("| rows | %d |\n", m.rows)
		fmt.Printf("| cores (GOMAXPROCS) | %d |\n", runtime.GOMAXPROCS(0))
		fmt.Printf("| output folders in | %s (%s) |\n", outDir, fsName(outDir))
		fmt.Printf("| gzip | level %d, %s |\n", *level, mode)
		fmt.Printf("| cuts | %s%s |\n", cut, map[bool]string{true: ", --sort"}[*sortFlag])
		fmt.Printf("| end-to-end | %.2f s, %.0f rows/s, %.0f MB/s uncompressed XML |\n", m.seconds, m.rowsPerSec(), float64(m.xml)/m.seconds/1e6)
		fmt.Printf("| compression limit (same bytes, compressor, level, cores) | %.0f rows/s |\n", m.limitRowsPerSec())
		fmt.Printf("| **end-to-end / limit** | **%.2f** |\n", m.ratio())
		fmt.Printf("| CPU time | %.2f s, %.0f%% of %d cores |\n", m.cpuSecs, 100*m.cpuSecs/m.seconds/float64(runtime.GOMAXPROCS(0)), runtime.GOMAXPROCS(0))
		fmt.Printf("| peak RSS | %d MiB |\n", m.rss>>20)
		fmt.Printf("| allocations per row | %.5f |\n", m.allocsPerRow)
		fmt.Printf("| output | %d MB XML, %d MB gzip, %d shards |\n", m.xml/1e6, m.gz/1e6, m.shards)
		fmt.Printf("| stage busy time (s, summed over goroutines) | %s |\n", m.stages)
		if *validate {
			fmt.Printf("| validate (check.Set on the run's output) | %.2f s, %.0f URLs/s, CPU %.2f s, peak RSS %d MiB, %d problems |\n",
				m.valSecs, float64(m.rows)/m.valSecs, m.valCPU, m.valRSS>>20, m.valProblems)
			fmt.Printf("| inflate limit (same files, klauspost gzip, a file per core) | %.2f s |\n", m.inflateSecs)
			fmt.Printf("| **validate / generate** (rate, medians of the same-run ratios) | **%.2f** |\n", m.valVsGenMedian)
			fmt.Printf("| **validate / inflate limit** | **%.2f** |\n", m.valVsInflateMedian)
		}
		if *group {
			fmt.Printf("| grouped run (--group-by section, the same rows) | %.2f s, CPU %.2f s, %d groups, peak RSS %d MiB |\n",
				m.groupSecs, m.groupCPU, m.groups, m.groupRSS>>20)
			fmt.Printf("| **grouped / ungrouped** (wall, medians of the same-run ratios) | **%.2f** |\n", m.groupVsPlainMedian)
			fmt.Printf("| grouped / ungrouped, CPU time (medians of the same-run ratios) | %.2f |\n", m.groupCPUVsPlainMedian)
			fmt.Printf("| grouped / ungrouped, single runs (wall) | %.2f-%.2f |\n", m.groupVsPlainMin, m.groupVsPlainMax)
			fmt.Printf("| a group's fixed cost (one row in each of the %d sections, grouped - ungrouped, medians of %d) | %.0f µs wall, %.0f µs CPU; all groups %.2f s wall |\n",
				fixed.groups, fixed.runs, fixed.wall*1e6, fixed.cpu*1e6, fixed.wall*float64(fixed.groups))
		}
		if m.ratio() < *minRatio {
			fmt.Printf("FAIL: %s cuts: end-to-end is %.2f of the compression limit, below %.2f\n", cut, m.ratio(), *minRatio)
			failed = true
		}
	}
	for k := 1; k < len(cuts); k++ {
		fmt.Printf("ratio %s / %s: %.3f\n", cuts[k], cuts[0], ratios[k]/ratios[0])
	}
	removeOutputs()
	if failed {
		os.Exit(1)
	}
}

// outDir holds the runs' output folders (-out).
var outDir string

// outputFolder returns the folder the runs' outputs go to: flagged, else a
// tmpfs with room for every run's output (sized by the input, which is
// larger than its gzip output), else dir. A tmpfs because on a disk the
// cost of creating files depends on what was deleted in the minutes before,
// not on the run: ext4 without a journal allocates an inode only after
// passing over every inode freed in the last minutes (recently_deleted in
// fs/ext4/ialloc.c). CI's grouped run, right after the tests, measured
// 1.96x its ungrouped run that way; the next CI run, on tmpfs, 0.97x.
func outputFolder(flagged, dir, in string, runs int, grouped bool) (string, error) {
	if flagged != "" {
		return flagged, os.MkdirAll(flagged, 0o755)
	}
	fi, err := os.Stat(in)
	if err != nil {
		return "", err
	}
	need := fi.Size() * int64(runs+1) // the last run's separate runs (-group-check) too
	if grouped {
		need *= 2
	}
	if shm := "/dev/shm"; fsName(shm) == "tmpfs" && freeBytes(shm) > need+1<<30 {
		return shm, nil
	}
	return dir, nil
}

// outputs are the runs' output folders, removed at the end: removing one
// right before the next run writes would make that run's file creations pay
// for the freed inodes on some file systems (ext4 without a journal skips
// recently freed inodes), a cost of the benchmark, not of the run.
var outputs []string

func removeOutputs() {
	for _, o := range outputs {
		os.RemoveAll(o)
	}
}

func fail(err error) {
	removeOutputs()
	fmt.Fprintln(os.Stderr, "e2e:", err)
	os.Exit(1)
}

// generated returns a generated CSV of n rows in dir, with a section column
// when sections is set, writing it on first use.
func generated(dir string, n int, sections bool) (string, error) {
	// The name carries the generator's version, so a changed generator never
	// reuses the rows of an older one.
	name := "urls-" + strconv.Itoa(n) + "-" + bench.GeneratorVersion
	if sections {
		name += "-sections"
	}
	path := filepath.Join(dir, name+".csv")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	fmt.Fprintf(os.Stderr, "generating %d rows into %s\n", n, path)
	f, err := os.CreateTemp(dir, "gen-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	g := bench.NewGenerator(1, "https://www.example.com/")
	if sections {
		g.Sections = &bench.DefaultSections
	}
	w.WriteString(g.Header())
	var buf []byte
	for range n {
		buf = g.AppendCSV(buf[:0])
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(f.Name(), path)
}

type result struct {
	rows, xml, gz      int64
	shards             int
	seconds, limitSecs float64 // limitSecs is scaled to all xml bytes
	rss                int64
	cpuSecs            float64 // user+system CPU of the process during the pipeline run
	allocsPerRow       float64
	stages             string
	stageSecs          map[string]float64

	// validate, when measured
	valSecs, valCPU, inflateSecs       float64
	valRSS                             int64
	valProblems                        int
	valVsGenMedian, valVsInflateMedian float64

	// the grouped run, when measured
	groupSecs, groupCPU float64
	groupRSS            int64
	groups              int
	groupVsPlainMedian  float64
	// the medians of the same-run CPU ratios, and the lowest and highest
	// single-run wall ratios: how much the machine moved the figure
	groupCPUVsPlainMedian            float64
	groupVsPlainMin, groupVsPlainMax float64
}

// groupVsPlain is the grouped run's wall time as a ratio to the ungrouped
// run's in the same run.
func (r result) groupVsPlain() float64 { return r.groupSecs / r.seconds }

// groupCPUVsPlain is the grouped run's CPU time as a ratio to the ungrouped
// run's in the same run.
func (r result) groupCPUVsPlain() float64 { return r.groupCPU / r.cpuSecs }

// valVsGen is validate's rate as a ratio to generate's in the same run.
func (r result) valVsGen() float64 { return r.seconds / r.valSecs }

// valVsInflate is validate's rate as a ratio to the same-run inflate limit.
func (r result) valVsInflate() float64 { return r.inflateSecs / r.valSecs }

func (r result) rowsPerSec() float64      { return float64(r.rows) / r.seconds }
func (r result) limitRowsPerSec() float64 { return float64(r.rows) / r.limitSecs }
func (r result) ratio() float64           { return r.limitSecs / r.seconds }

// newOutput makes a new folder for a run's output under outDir (removed at
// the end) and the store writing to it.
func newOutput() (string, *sink.Local, error) {
	out, err := os.MkdirTemp(outDir, "out-")
	if err != nil {
		return "", nil, err
	}
	outputs = append(outputs, out)
	snk, err := sink.NewLocal(out)
	return out, snk, err
}

// plainRun is a timed ungrouped run, to be measured (plainRun.measure).
type plainRun struct {
	out string
	rep *pipeline.Report
}

// timedPlain runs the pipeline ungrouped and records its times in r.
func timedPlain(r *result, in, dir string, scope *encode.Scope, cut shard.CutMode, sorted bool, level, procs int, last bool, cpuprofile string) (plainRun, error) {
	out, snk, err := newOutput()
	if err != nil {
		return plainRun{}, err
	}
	stopProfile, err := settle(last, cpuprofile)
	if err != nil {
		return plainRun{}, err
	}
	defer stopProfile()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var rep *pipeline.Report
	r.seconds, r.cpuSecs, r.rss, err = timed(func() (err error) {
		rep, err = pipeline.Run(context.Background(), config(in, dir, scope, snk, cut, sorted, level, procs))
		return err
	})
	runtime.ReadMemStats(&ms1)
	if err != nil {
		return plainRun{}, err
	}
	r.rows, r.xml, r.gz, r.shards = rep.URLs, rep.BytesUncompressed, rep.BytesCompressed, rep.Shards
	r.allocsPerRow = float64(ms1.Mallocs-ms0.Mallocs) / float64(rep.Rows)
	r.stageSecs = rep.StageSeconds
	r.stages = stageString(rep.StageSeconds)
	return plainRun{out: out, rep: rep}, nil
}

// measure measures the compression limit on the run's output and, with
// validate, validates it and measures the inflate limit.
func (p plainRun) measure(r *result, level, procs int, limitBytes int64, dir string, last, validate bool, valprofile string) error {
	limit, measured, err := bench.CompressionLimit(p.out, p.rep.Files, level, procs, limitBytes)
	if err != nil {
		return err
	}
	r.limitSecs = limit * float64(p.rep.BytesUncompressed) / float64(measured)
	if validate {
		if err := validateOnce(r, p.out, dir, last, valprofile); err != nil {
			return err
		}
		if r.inflateSecs, _, err = bench.InflateLimit(p.out, p.rep.Files); err != nil {
			return err
		}
	}
	return nil
}

// groupedRun is a timed grouped run, to be checked (groupedRun.check).
type groupedRun struct {
	out  string
	urls int64
}

// timedGrouped runs the pipeline again over the same rows, grouped by their
// section (as --group-by section), into a folder of its own, and records
// its times in r.
func timedGrouped(r *result, in, dir string, scope *encode.Scope, cut shard.CutMode, sorted bool, level, procs int, cpuprofile string) (groupedRun, error) {
	out, snk, err := newOutput()
	if err != nil {
		return groupedRun{}, err
	}
	stopProfile, err := settle(cpuprofile != "", cpuprofile)
	if err != nil {
		return groupedRun{}, err
	}
	defer stopProfile()
	cfg := config(in, dir, scope, snk, cut, sorted, level, procs)
	cfg.Columns[input.Group] = "section"
	cfg.Group = &pipeline.Grouping{}
	cfg.Now = checkNow // the separate runs' clock: the manifests compare too
	var rep *pipeline.Report
	r.groupSecs, r.groupCPU, r.groupRSS, err = timed(func() (err error) {
		rep, err = pipeline.Run(context.Background(), cfg)
		return err
	})
	if err != nil {
		return groupedRun{}, err
	}
	r.groups = len(rep.Groups)
	return groupedRun{out: out, urls: rep.URLs}, nil
}

// check checks that the grouped run wrote the ungrouped run's URLs and,
// with compare, that its files are those of separate runs (compareSeparate).
func (g groupedRun) check(r *result, in, dir string, scope *encode.Scope, cut shard.CutMode, sorted bool, level, procs int, compare bool) error {
	if g.urls != r.rows {
		return fmt.Errorf("the grouped run wrote %d URLs, the ungrouped one %d", g.urls, r.rows)
	}
	if compare {
		return compareSeparate(in, dir, g.out, config(in, dir, scope, nil, cut, sorted, level, procs))
	}
	return nil
}

// checkNow is the clock of the grouped run and of the separate runs
// compareSeparate makes.
var checkNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// compareSeparate splits the input by its section column, runs base over
// each section's rows alone with the name sitemap-SECTION, and checks that
// the grouped run's folder out holds exactly the files of those runs, byte
// for byte (issue 28's promise, at the benchmark's scale).
func compareSeparate(in, dir, out string, base pipeline.Config) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	header, err := rd.Read()
	if err != nil {
		return err
	}
	rows := map[string][][]string{}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		rows[rec[len(rec)-1]] = append(rows[rec[len(rec)-1]], rec)
	}
	work, err := os.MkdirTemp(outDir, "separate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	files := 0
	for _, section := range slices.Sorted(maps.Keys(rows)) {
		sdir := filepath.Join(work, section)
		if err := os.Mkdir(sdir, 0o755); err != nil {
			return err
		}
		part := filepath.Join(work, section+".csv")
		if err := writeCSV(part, header, rows[section]); err != nil {
			return err
		}
		snk, err := sink.NewLocal(sdir)
		if err != nil {
			return err
		}
		cfg := base
		cfg.Inputs, cfg.Sink, cfg.Name, cfg.Now = []string{part}, snk, "sitemap-"+section, checkNow
		if _, err := pipeline.Run(context.Background(), cfg); err != nil {
			return fmt.Errorf("section %s alone: %w", section, err)
		}
		names, err := os.ReadDir(sdir)
		if err != nil {
			return err
		}
		for _, e := range names {
			want, err := os.ReadFile(filepath.Join(sdir, e.Name()))
			if err != nil {
				return err
			}
			got, err := os.ReadFile(filepath.Join(out, e.Name()))
			if err != nil {
				return fmt.Errorf("section %s: the grouped run did not write %s: %w", section, e.Name(), err)
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("section %s: %s differs from the separate run's", section, e.Name())
			}
			files++
		}
	}
	all, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(all) != files {
		return fmt.Errorf("the grouped run wrote %d files, the %d separate runs %d", len(all), len(rows), files)
	}
	fmt.Fprintf(os.Stderr, "grouped run = %d separate runs: %d files, byte for byte\n", len(rows), files)
	return nil
}

// groupCost is what one group costs whatever its rows (perGroup).
type groupCost struct {
	wall, cpu    float64 // seconds a group
	groups, runs int
}

// perGroup measures what a group costs whatever its rows: the files, the
// manifest and the switch of its set. It runs the pipeline over the first
// row of each section of in, grouped by section and not, interleaved, and
// returns the medians of the runs' differences divided by the sections.
func perGroup(in, dir string, scope *encode.Scope, cut shard.CutMode, level, procs, runs int) (groupCost, error) {
	f, err := os.Open(in)
	if err != nil {
		return groupCost{}, err
	}
	defer f.Close()
	rd := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	header, err := rd.Read()
	if err != nil {
		return groupCost{}, err
	}
	seen := map[string]bool{}
	var rows [][]string
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return groupCost{}, err
		}
		if section := rec[len(rec)-1]; !seen[section] {
			seen[section] = true
			rows = append(rows, rec)
		}
	}
	one := filepath.Join(outDir, "one-row-a-section.csv")
	if err := writeCSV(one, header, rows); err != nil {
		return groupCost{}, err
	}
	defer os.Remove(one)
	var walls, cpus []float64
	for range runs {
		var secs, cpu [2]float64
		for k, grouped := range []bool{false, true} {
			_, snk, err := newOutput()
			if err != nil {
				return groupCost{}, err
			}
			cfg := config(one, dir, scope, snk, cut, false, level, procs)
			if grouped {
				cfg.Columns[input.Group] = "section"
				cfg.Group = &pipeline.Grouping{}
			}
			if _, err := settle(false, ""); err != nil {
				return groupCost{}, err
			}
			if secs[k], cpu[k], _, err = timed(func() error {
				_, err := pipeline.Run(context.Background(), cfg)
				return err
			}); err != nil {
				return groupCost{}, err
			}
		}
		walls = append(walls, (secs[1]-secs[0])/float64(len(rows)))
		cpus = append(cpus, (cpu[1]-cpu[0])/float64(len(rows)))
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return groupCost{wall: walls[len(walls)/2], cpu: cpus[len(cpus)/2], groups: len(rows), runs: runs}, nil
}

// writeCSV writes header and rows to a new CSV file at path.
func writeCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows) // flushes; its error is w.Error's
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// config is the pipeline's configuration of a benchmark run.
func config(in, dir string, scope *encode.Scope, snk sink.Store, cut shard.CutMode, sorted bool, level, procs int) pipeline.Config {
	return pipeline.Config{
		Inputs: []string{in}, PublicURL: scope, Sink: snk, Name: "sitemap",
		MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, Cut: cut, Sort: sorted, TmpDir: dir, GzipLevel: level, GzipProcs: procs,
	}
}

// validateOnce validates the run's output as sitemapgen validate does
// (every problem listed), timing it.
func validateOnce(r *result, out, dir string, last bool, cpuprofile string) error {
	stopProfile, err := settle(last, cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	var rep *check.Report
	r.valSecs, r.valCPU, r.valRSS, err = timed(func() (err error) {
		rep, err = check.Set(context.Background(), check.Dir(out), "sitemap.xml", check.Options{Limits: check.Ours, TempDir: dir})
		return err
	})
	if err != nil {
		return err
	}
	if rep.URLs != r.rows {
		return fmt.Errorf("validate read %d URLs of the %d written", rep.URLs, r.rows)
	}
	r.valProblems = rep.Problems
	return nil
}

func stageString(s map[string]float64) string {
	var parts []string
	for _, k := range []string{"read", "encode", "cut", "compress", "write"} {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, s[k]))
	}
	return strings.Join(parts, ", ")
}

// median returns, field by field, the median of the runs.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	m := rs[0]
	m.seconds = pick(func(r result) float64 { return r.seconds })
	m.limitSecs = pick(func(r result) float64 { return r.limitSecs })
	m.cpuSecs = pick(func(r result) float64 { return r.cpuSecs })
	m.rss = int64(pick(func(r result) float64 { return float64(r.rss) }))
	m.allocsPerRow = pick(func(r result) float64 { return r.allocsPerRow })
	m.valSecs = pick(func(r result) float64 { return r.valSecs })
	m.valCPU = pick(func(r result) float64 { return r.valCPU })
	m.inflateSecs = pick(func(r result) float64 { return r.inflateSecs })
	m.valRSS = int64(pick(func(r result) float64 { return float64(r.valRSS) }))
	m.valVsGenMedian = pick(result.valVsGen)
	m.valVsInflateMedian = pick(result.valVsInflate)
	m.groupSecs = pick(func(r result) float64 { return r.groupSecs })
	m.groupCPU = pick(func(r result) float64 { return r.groupCPU })
	m.groupRSS = int64(pick(func(r result) float64 { return float64(r.groupRSS) }))
	m.groupVsPlainMedian = pick(result.groupVsPlain)
	m.groupCPUVsPlainMedian = pick(result.groupCPUVsPlain)
	m.groupVsPlainMin, m.groupVsPlainMax = m.groupVsPlainMedian, m.groupVsPlainMedian
	for _, r := range rs {
		m.groupVsPlainMin = min(m.groupVsPlainMin, r.groupVsPlain())
		m.groupVsPlainMax = max(m.groupVsPlainMax, r.groupVsPlain())
	}
	st := map[string]float64{}
	for k := range m.stageSecs {
		st[k] = pick(func(r result) float64 { return r.stageSecs[k] })
	}
	m.stages = stageString(st)
	return m
}

// timed runs fn, returning its wall and CPU seconds and the process's peak
// RSS at its end (settle resets the peak before).
func timed(fn func() error) (secs, cpu float64, rss int64, err error) {
	cpu0 := cpuSeconds()
	start := time.Now()
	err = fn()
	return time.Since(start).Seconds(), cpuSeconds() - cpu0, peakRSS(), err
}

// cpuSeconds returns the user and system CPU time the process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// resetPeakRSS makes the kernel restart the process's peak RSS count
// (VmHWM) from the current RSS, so each run measures its own peak.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS reads VmHWM from /proc/self/status, in bytes; 0 when unavailable.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// settle starts a measurement from a collected heap and a fresh peak RSS,
// and a CPU profile to cpuprofile on the last run; stop ends the profile.
func settle(last bool, cpuprofile string) (stop func(), err error) {
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	if !last || cpuprofile == "" {
		return func() {}, nil
	}
	f, err := os.Create(cpuprofile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
