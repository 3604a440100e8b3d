package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// sortRun publishes rows (CSV lines after a header) with --sort (and
// --dedup when asked) in a memory small enough to spill several runs; it
// returns the folder's files and the report.
func sortRun(t *testing.T, rows []string, dedup bool, rejects *strings.Builder) (map[string][]byte, *Report) {
	t.Helper()
	return sortRunTies(t, rows, dedup, TieContent, rejects)
}

func sortRunTies(t *testing.T, rows []string, dedup bool, ties TieOrder, rejects *strings.Builder) (map[string][]byte, *Report) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte("loc,lastmod\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	snk, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Inputs: []string{in}, PublicURL: mustScope(t, testBase), Sink: snk, Name: "sm",
		MaxURLs: 500, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Cut: shard.CutStable,
		Sort: true, Dedup: dedup, Ties: ties, TmpDir: t.TempDir(), SortMemory: 256 << 10, Now: testNow}
	if rejects != nil {
		cfg.Rejects = rejects
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return xmltest.Snapshot(t, dir), rep
}

// TestSortShuffledIsSorted: with --sort, shuffled rows give byte for byte
// the set the same rows in order give, and it lists them in loc order.
func TestSortShuffledIsSorted(t *testing.T) {
	var rows []string
	for i := range 20000 {
		rows = append(rows, fmt.Sprintf("%sp/%07d,2024-05-%02d", testBase, i*7919%1000003, 1+i%28))
	}
	sorted := slices.Clone(rows)
	slices.Sort(sorted)
	shuffled := slices.Clone(rows)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	want, rep := sortRun(t, sorted, false, nil)
	got, _ := sortRun(t, shuffled, false, nil)
	if rep.Sort == nil || rep.Sort.Runs < 2 {
		t.Fatalf("sort report %+v: the test wants runs spilled to disk", rep.Sort)
	}
	for n, b := range want {
		if n != "sm.manifest.json" && string(got[n]) != string(b) {
			t.Errorf("%s differs between sorted and shuffled input", n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d files, want %d", len(got), len(want))
	}
}

// TestDedup: --dedup keeps one row of each loc, the newest lastmod
// (--ties content, the default) or the first in input order (--ties input),
// and rejects the others as duplicate, with their source and row.
func TestDedup(t *testing.T) {
	var rows []string
	for i := range 3000 {
		rows = append(rows, fmt.Sprintf("%sp/%d,2024-01-01", testBase, i))
	}
	// Rows 3002.. repeat rows 2, 4, 6... with a later lastmod.
	for i := 0; i < 600; i += 2 {
		rows = append(rows, fmt.Sprintf("%sp/%d,2025-12-31", testBase, i))
	}
	for _, tc := range []struct {
		ties              TieOrder
		kept, dropped     string
		firstRow, lastRow int
	}{
		{TieContent, "2025-12-31", "2024-01-01", 2, 600},   // the newest wins: rows 2, 4, ... 600 go
		{TieInput, "2024-01-01", "2025-12-31", 3002, 3301}, // the first wins: the repeats go
	} {
		var rej strings.Builder
		files, rep := sortRunTies(t, rows, true, tc.ties, &rej)
		if rep.URLs != 3000 || rep.Rejected.ByReason["duplicate"] != 300 || rep.Rows != 3300 || rep.Sort.Duplicates != 300 {
			t.Fatalf("ties %d: rows %d urls %d rejected %v sort %+v", tc.ties, rep.Rows, rep.URLs, rep.Rejected.ByReason, rep.Sort)
		}
		kept := 0
		for n, b := range files {
			if !strings.HasSuffix(n, ".xml.gz") {
				continue
			}
			xml := gunzip(t, b)
			kept += strings.Count(xml, tc.kept)
			if tc.ties == TieInput && strings.Contains(xml, tc.dropped) {
				t.Errorf("ties input: %s holds a later duplicate's lastmod: the first row must win", n)
			}
		}
		if want := map[TieOrder]int{TieContent: 300, TieInput: 3000}[tc.ties]; kept != want {
			t.Errorf("ties %d: %d entries with lastmod %s, want %d", tc.ties, kept, tc.kept, want)
		}
		recs, err := csv.NewReader(strings.NewReader(rej.String())).ReadAll()
		if err != nil || len(recs) != 301 {
			t.Fatalf("rejects: %v, %d records", err, len(recs))
		}
		for _, r := range recs[1:] {
			if row, _ := strconv.Atoi(r[1]); r[2] != "duplicate" || row < tc.firstRow || row > tc.lastRow {
				t.Errorf("ties %d: reject %q: want a duplicate at rows %d..%d", tc.ties, r, tc.firstRow, tc.lastRow)
			}
		}
	}
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// heapAtFirstShard is a Store that, when the first shard is put (the merge
// is under way), records the live heap. Shards are put concurrently.
type heapAtFirstShard struct {
	sink.Store
	once sync.Once
	live uint64
}

func (h *heapAtFirstShard) Put(ctx context.Context, name string, data []byte) error {
	if strings.HasSuffix(name, ".xml.gz") {
		h.once.Do(func() {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			h.live = ms.HeapAlloc
		})
	}
	return h.Store.Put(ctx, name, data)
}

// TestSortMergeHoldsNoBatches: once the input is over, --sort lets the
// batch pool go, so the merge and the stages after it do not hold it
// beside the run readers (it was a third of the heap at the end of a long
// sorted run and set the GC's goal).
func TestSortMergeHoldsNoBatches(t *testing.T) {
	const workers = 8 // a pool well above what the merge holds
	depth := 4 * (workers + 1)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	pool := make([]*Batch, depth)
	for i := range pool {
		pool[i] = newBatch(input.DefaultChunk)
	}
	runtime.ReadMemStats(&ms)
	poolBytes := ms.HeapAlloc - before
	runtime.KeepAlive(pool)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc // what earlier tests left

	var sb strings.Builder
	sb.WriteString("loc\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, "%sp/%07d\n", testBase, i*7919%1000003)
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	snk, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &heapAtFirstShard{Store: snk}
	cfg := Config{Inputs: []string{in}, PublicURL: mustScope(t, testBase), Sink: h, Name: "sm", Workers: workers,
		// Small shards: their buffers (MaxBytes each) are live too.
		MaxURLs: 5000, MaxBytes: 1 << 20, Fanout: 1000, GzipLevel: 1, Cut: shard.CutStable,
		Sort: true, TmpDir: t.TempDir(), SortMemory: 256 << 10, Now: testNow}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sort == nil || rep.Sort.Runs < 2 || h.live == 0 {
		t.Fatalf("sort report %+v, heap %d: the test wants runs spilled and shards put", rep.Sort, h.live)
	}
	live := h.live - min(base, h.live)
	t.Logf("live heap during the merge %.1f MiB; the batch pool is %.1f MiB", float64(live)/(1<<20), float64(poolBytes)/(1<<20))
	if live > poolBytes/2 {
		t.Errorf("live heap during the merge is %.1f MiB, the batch pool %.1f MiB: the pool is still held",
			float64(live)/(1<<20), float64(poolBytes)/(1<<20))
	}
}
