package extsort

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testEntry returns entry i: a loc made from word (so keys repeat when
// words do), a lastmod on two entries of three, row i of source i%3.
func testEntry(buf []byte, rng *rand.Rand, word string, i int) ([]byte, Entry) {
	buf = append(buf[:0], "<url><loc>https://www.example.com/"...)
	buf = append(buf, word...)
	keyEnd := len(buf)
	buf = append(buf, "</loc>"...)
	e := Entry{KeyAt: 10, LmKey: -1 << 63, Source: uint32(i % 3), Line: int64(i) + 2}
	if i%3 > 0 {
		buf = append(buf, "<lastmod>"...)
		e.LmAt, e.LmLen, e.LmKey = uint32(len(buf)), 10, int64(rng.IntN(1e6))
		buf = fmt.Appendf(buf, "2024-%02d-%02d</lastmod>", 1+i%12, 1+i%28)
	}
	buf = append(buf, "</url>\n"...)
	if i%5 == 4 { // a news entry carried with it
		e.Split = uint32(len(buf))
		buf = append(buf, "<url><news>"...)
		buf = append(buf, word...)
		buf = append(buf, "</news></url>\n"...)
	}
	e.KeyLen = uint32(keyEnd - 10)
	e.Data = buf
	return buf, e
}

// words returns n locs' paths; with dups > 0, about that share repeat an
// earlier one.
func words(rng *rand.Rand, n int, dups float64) []string {
	out := make([]string, n)
	for i := range out {
		if i > 0 && rng.Float64() < dups {
			out[i] = out[rng.IntN(i)]
			continue
		}
		out[i] = fmt.Sprintf("p/%x/%d", rng.Uint32(), i)
		if rng.IntN(10) == 0 {
			out[i] += "/" + string(bytes.Repeat([]byte{'x'}, rng.IntN(300)))
		}
	}
	return out
}

type got struct {
	key  string
	e    Entry
	data string
	dup  bool
}

// addAndSort adds an entry of each word, in order, and sorts them.
func addAndSort(t testing.TB, s *Sorter, rng *rand.Rand, ws []string) {
	t.Helper()
	var buf []byte
	for i, w := range ws {
		var e Entry
		buf, e = testEntry(buf, rng, w, i)
		if err := s.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sort(); err != nil {
		t.Fatal(err)
	}
}

func sortAll(t testing.TB, o Options, ws []string, seed uint64) ([]got, Stats) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	s := New(o)
	defer s.Close()
	addAndSort(t, s, rng, ws)
	var out []got
	for s.Next() {
		e := s.Entry()
		out = append(out, got{string(e.Key()), e, string(e.Data), s.Duplicate()})
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out, s.Stats()
}

// TestSortOrder: over memory budgets from all-in-memory to a run every few
// entries, and fan-ins that force merge passes, shuffled entries come back
// in key order, equal keys in the tie order (by content: the newest lastmod
// first, then the smallest entry; or input order), every field as added;
// with Dedup the first of each key is kept and the others are flagged.
func TestSortOrder(t *testing.T) {
	for _, tc := range []struct {
		n      int
		dups   float64
		memory int
		fanIn  int
		dedup  bool
		ties   TieOrder
	}{
		{0, 0, 0, 0, false, 0},
		{1, 0, 0, 0, true, 0},
		{5000, 0, 0, 0, false, 0},          // in memory
		{5000, 0.2, 64 << 10, 0, false, 0}, // ~25 runs, one merge
		{5000, 0.2, 32 << 10, 3, true, 0},  // merge passes
		{5000, 0.2, 32 << 10, 3, true, TieInput},
		{3000, 0.5, 4 << 10, 2, false, TieInput},
		{3000, 0.5, 4 << 10, 2, true, 0},        // many tiny runs, binary passes
		{2000, 0.9, 1, 5, true, 0},              // one entry per run
		{20000, 0.05, 256 << 10, 16, true, 0},   // one pass of several groups
		{20000, 0.05, 256 << 10, 100, false, 0}, // fits the fan-in
	} {
		name := fmt.Sprintf("n%d-dups%g-mem%d-fan%d-dedup%v-ties%d", tc.n, tc.dups, tc.memory, tc.fanIn, tc.dedup, tc.ties)
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 2))
			ws := words(rng, tc.n, tc.dups)
			out, st := sortAll(t, Options{Memory: tc.memory, Dir: t.TempDir(), FanIn: tc.fanIn, Dedup: tc.dedup, Ties: tc.ties}, ws, 9)
			if len(out) != tc.n || st.Entries != int64(tc.n) {
				t.Fatalf("%d entries out, %d in (stats %+v)", len(out), tc.n, st)
			}
			rng = rand.New(rand.NewPCG(9, 1))
			want := make([]Entry, tc.n)
			var buf []byte
			for i, w := range ws {
				buf, want[i] = testEntry(buf, rng, w, i)
				want[i].Data = bytes.Clone(want[i].Data)
			}
			// The expected order: a stable sort of the input by key, then
			// (TieContent) by newest lastmod, then smallest bytes.
			idx := make([]int, tc.n)
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int {
				if c := strings.Compare(ws[a], ws[b]); c != 0 || tc.ties == TieInput {
					return c
				}
				if want[a].LmKey != want[b].LmKey {
					if want[a].LmKey > want[b].LmKey {
						return -1
					}
					return 1
				}
				return bytes.Compare(want[a].Data, want[b].Data)
			})
			seen := map[string]bool{}
			dups := 0
			for k, i := range idx {
				g, w := out[k], want[i]
				if g.data != string(w.Data) || g.key != "https://www.example.com/"+ws[i] || g.e.Line != w.Line || g.e.Source != w.Source ||
					g.e.LmKey != w.LmKey || g.e.LmAt != w.LmAt || g.e.LmLen != w.LmLen || g.e.Split != w.Split || g.e.KeyAt != w.KeyAt || g.e.KeyLen != w.KeyLen {
					t.Fatalf("entry %d out is %+v %q, want input %d: %+v %q", k, g.e, g.data, i, w, w.Data)
				}
				wantDup := tc.dedup && seen[ws[i]]
				if g.dup != wantDup {
					t.Fatalf("entry %d out (input row %d, key %q): Duplicate %v, want %v", k, i, ws[i], g.dup, wantDup)
				}
				if wantDup {
					dups++
				}
				seen[ws[i]] = true
			}
			if st.Duplicates != int64(dups) {
				t.Errorf("Stats.Duplicates %d, want %d", st.Duplicates, dups)
			}
			if tc.memory == 0 && st.Runs != 0 {
				t.Errorf("%d entries within the default budget spilled %d runs", tc.n, st.Runs)
			}
			if tc.fanIn > 0 && tc.fanIn < st.Runs && st.Passes == 0 {
				t.Errorf("%d runs over a fan-in of %d merged without a pass", st.Runs, tc.fanIn)
			}
		})
	}
}

// TestSortBig: entries larger than the arena's chunks and than the whole
// budget sort like small ones, between small ones.
func TestSortBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var ws []string
	for i := range 60 {
		w := fmt.Sprintf("%d/", rng.IntN(1000))
		if i%3 == 0 {
			w += strings.Repeat("y", rng.IntN(3<<20))
		}
		ws = append(ws, w)
	}
	for _, memory := range []int{0, 2 << 20} {
		out, _ := sortAll(t, Options{Memory: memory, Dir: t.TempDir(), FanIn: 3}, ws, 1)
		sorted := slices.Clone(ws)
		slices.Sort(sorted)
		for i, g := range out {
			if g.key != "https://www.example.com/"+sorted[i] || !strings.HasPrefix(g.data, "<url><loc>"+g.key+"</loc>") {
				t.Fatalf("budget %d: entry %d out of %d bytes is not the %d-byte key %d in order", memory, i, len(g.data), len(sorted[i]), i)
			}
		}
	}
}

// TestSortFiles: runs are spilled into Dir and nothing is left there after
// Close, after an error, or halfway through reading back.
func TestSortFiles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	ws := words(rng, 4000, 0)
	for _, stop := range []int{0, 10, -1} {
		s := New(Options{Memory: 16 << 10, Dir: dir, FanIn: 4})
		addAndSort(t, s, rng, ws)
		if st := s.Stats(); st.Runs < 10 || st.SpillBytes == 0 || st.PeakDisk == 0 || st.PeakDisk > st.SpillBytes {
			t.Fatalf("stats %+v: want spilled runs", st)
		}
		for n := 0; n != stop && s.Next(); n++ {
		}
		s.Close()
		if s.Next() || s.Add(Entry{Data: []byte("x")}) == nil {
			t.Fatal("a closed Sorter still reads or takes entries")
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Fatalf("%d files left in the temporary folder after Close", len(left))
		}
	}
	// A folder that cannot be written: the first spill fails, with the
	// error, not a panic, and the Sorter says so from then on.
	s := New(Options{Memory: 1 << 10, Dir: dir + "/missing"})
	defer s.Close()
	var err error
	var buf []byte
	for i := 0; err == nil && i < 1000; i++ {
		var e Entry
		buf, e = testEntry(buf, rng, ws[i], i)
		err = s.Add(e)
	}
	if err == nil || s.Sort() == nil {
		t.Fatalf("spilling into a missing folder: Add %v, Sort %v", err, s.Sort())
	}
}

func TestAddChecks(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, e := range []Entry{
		{Data: []byte("abc"), KeyAt: 2, KeyLen: 2},
		{Data: []byte("abc"), KeyAt: 1 << 31, KeyLen: 1 << 31},
		{Data: []byte("abc"), LmAt: 3, LmLen: 1},
	} {
		if err := s.Add(e); err == nil {
			t.Errorf("Add(%+v) accepted a key or lastmod outside Data", e)
		}
	}
	if err := s.Sort(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Entry{Data: []byte("x")}); !errors.Is(err, ErrSorted) {
		t.Errorf("Add after Sort: %v", err)
	}
}

// runBytes writes entries as one run and returns its bytes.
func runBytes(t testing.TB, n int) ([]byte, int64, int) {
	var b bytes.Buffer
	w := newRunWriter(&b)
	rng := rand.New(rand.NewPCG(3, 3))
	var buf []byte
	for i, word := range words(rng, n, 0.1) {
		var e Entry
		buf, e = testEntry(buf, rng, word, i)
		if err := w.write(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.count, w.most
}

// readRun reads a run back and returns its records as text.
func readRun(b []byte, count int64, most int) (string, error) {
	r := newRunReader(bytes.NewReader(b), count, most)
	var out []byte
	for {
		err := r.next()
		if err == io.EOF {
			return string(out), nil
		}
		if err != nil {
			return "", err
		}
		out = fmt.Appendf(out, "%+v %q\n", r.cur, r.cur.Data)
	}
}

// TestRunCorrupt: a run cut short anywhere, with a byte changed, or read
// with another count or longest record is an ErrCorrupt, or (a changed
// byte) reads back exactly as written.
func TestRunCorrupt(t *testing.T) {
	b, count, most := runBytes(t, 500)
	intact, err := readRun(b, count, most)
	if n := strings.Count(intact, "\n"); err != nil || n != int(count) {
		t.Fatalf("intact run: %d of %d records, %v", n, count, err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for range 200 {
		cut := rng.IntN(len(b))
		if _, err := readRun(b[:cut], count, most); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("run cut at %d of %d bytes: %v, want ErrCorrupt", cut, len(b), err)
		}
		c := bytes.Clone(b)
		c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
		// A change inside the compressed data that decodes to the same
		// bytes (a copy from another offset of the same text) is no harm.
		if got, err := readRun(c, count, most); !errors.Is(err, ErrCorrupt) && got != intact {
			t.Fatalf("run with a changed byte: %v and other records, want ErrCorrupt", err)
		}
	}
	for _, tc := range []struct {
		count int64
		most  int
	}{{count - 1, most}, {count + 1, most}, {count, most - 1}} {
		if _, err := readRun(b, tc.count, tc.most); !errors.Is(err, ErrCorrupt) {
			t.Errorf("run of %d records up to %d bytes read as %d up to %d: %v, want ErrCorrupt", count, most, tc.count, tc.most, err)
		}
	}
}

// TestSortMemory: sorting millions of entries keeps the live heap within
// the budget plus the merge's readers, the same for 1M and 3M entries, and
// the disk near the s2 size of the entries.
func TestSortMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 4M entries")
	}
	const budget = 32 << 20
	var peaks []uint64
	for _, n := range []int{1_000_000, 3_000_000} {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var live, inuse uint64
		// sample records the heap in use as the program runs (garbage
		// included), then the live heap after a collection.
		sample := func() {
			runtime.ReadMemStats(&ms)
			inuse = max(inuse, ms.HeapInuse-min(base, ms.HeapInuse))
			runtime.GC()
			runtime.ReadMemStats(&ms)
			live = max(live, ms.HeapAlloc-min(base, ms.HeapAlloc))
		}
		rng := rand.New(rand.NewPCG(5, 5))
		s := New(Options{Memory: budget, Dir: t.TempDir()})
		var buf, word []byte
		for i := range n {
			var e Entry
			word = fmt.Appendf(word[:0], "products/%x/item-%d", rng.Uint64(), i)
			buf, e = testEntry(buf, rng, string(word), i)
			if err := s.Add(e); err != nil {
				t.Fatal(err)
			}
			if i%200_000 == 199_999 {
				sample()
			}
		}
		if err := s.Sort(); err != nil {
			t.Fatal(err)
		}
		var prev []byte
		k := 0
		for s.Next() {
			if key := s.Entry().Key(); bytes.Compare(prev, key) > 0 {
				t.Fatalf("entry %d out of order", k)
			} else {
				prev = append(prev[:0], key...)
			}
			if k++; k%200_000 == 0 {
				sample()
			}
		}
		if s.Err() != nil || k != n {
			t.Fatalf("%d of %d entries back: %v", k, n, s.Err())
		}
		st := s.Stats()
		s.Close()
		t.Logf("%d entries, %d MiB of entries, budget %d MiB: peak live heap %.1f MiB, in use %.1f MiB; %d runs, %.0f MiB on disk (%.2f of the entries)",
			n, st.DataBytes>>20, budget>>20, float64(live)/(1<<20), float64(inuse)/(1<<20), st.Runs, float64(st.PeakDisk)/(1<<20), float64(st.PeakDisk)/float64(st.DataBytes))
		if live > budget+budget/8+8<<20 {
			t.Errorf("peak live heap %.1f MiB for a budget of %d MiB", float64(live)/(1<<20), budget>>20)
		}
		peaks = append(peaks, live)
	}
	if float64(peaks[1]) > 1.1*float64(peaks[0]) {
		t.Errorf("peak live heap grows with the input: %.1f MiB for 1M, %.1f MiB for 3M", float64(peaks[0])/(1<<20), float64(peaks[1])/(1<<20))
	}
}

// TestSpillGarbage: once both buffers have their size, a spill allocates
// next to nothing (the run writer and its buffers are reused), so the heap
// does not grow with the input while entries are added. A new s2 writer per
// run was about 0.5 MiB.
func TestSpillGarbage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own account")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	s := New(Options{Memory: 4 << 20, Dir: t.TempDir()})
	defer s.Close()
	var buf []byte
	i := 0
	addUntil := func(runs int) {
		for s.Stats().Runs < runs {
			buf = append(buf[:0], "<url><loc>https://www.example.com/products/"...)
			buf = strconv.AppendUint(buf, rng.Uint64(), 16)
			keyLen := len(buf) - 10
			buf = append(buf, "</loc></url>\n"...)
			if err := s.Add(Entry{Data: buf, KeyAt: 10, KeyLen: uint32(keyLen), Line: int64(i)}); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	addUntil(4)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	addUntil(24)
	runtime.ReadMemStats(&after)
	perSpill := (after.TotalAlloc - before.TotalAlloc) / 20
	t.Logf("%d bytes allocated per spill", perSpill)
	if perSpill > 32<<10 {
		t.Errorf("a spill allocates %d bytes: buffers are not reused", perSpill)
	}
}

// BenchmarkSort: entries per second through Add, Sort and Next, in memory
// and spilling with the default budget of 64 MiB at 1M entries.
func BenchmarkSort(b *testing.B) {
	for _, tc := range []struct {
		name   string
		n      int
		memory int
	}{{"memory-200k", 200_000, 0}, {"spill-1M", 1_000_000, 64 << 20}, {"spill-1M-8MiB", 1_000_000, 8 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(6, 6))
			entries := make([]Entry, tc.n)
			var size int64
			for i := range entries {
				_, entries[i] = testEntry(nil, rng, fmt.Sprintf("products/%x/item-%d", rng.Uint64(), i), i)
				size += int64(len(entries[i].Data))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			var runs int
			for b.Loop() {
				s := New(Options{Memory: tc.memory, Dir: b.TempDir()})
				for _, e := range entries {
					if err := s.Add(e); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Sort(); err != nil {
					b.Fatal(err)
				}
				for s.Next() {
				}
				if s.Err() != nil {
					b.Fatal(s.Err())
				}
				runs = s.Stats().Runs
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tc.n), "ns/entry")
			b.ReportMetric(float64(runs), "runs")
		})
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		return 0, errDiskFull
	}
	f.n -= len(b)
	return len(b), nil
}

// TestRunWriterFails: a block the goroutine cannot write stops the run
// (write returns errBlock soon after) and close returns the cause; the
// writer then writes a whole run again after reset.
func TestRunWriterFails(t *testing.T) {
	w := newRunWriter(&failAfter{n: 100 << 10})
	rng := rand.New(rand.NewPCG(8, 8))
	var buf []byte
	stopped := -1
	for i := range 100_000 {
		var e Entry
		buf, e = testEntry(buf, rng, fmt.Sprintf("p/%d/%x", i, rng.Uint64()), i)
		if err := w.write(&e); err != nil {
			if !errors.Is(err, errBlock) {
				t.Fatalf("write: %v, want errBlock", err)
			}
			stopped = i
			break
		}
	}
	if stopped < 0 {
		t.Fatal("100,000 records written to a writer that fails after 100 KiB")
	}
	if err := w.close(); !errors.Is(err, errDiskFull) {
		t.Fatalf("close after a failed block: %v, want the cause", err)
	}
	var b bytes.Buffer
	w.reset(&b)
	for i := range 3000 {
		var e Entry
		buf, e = testEntry(buf, rng, fmt.Sprintf("q/%d", i), i)
		if err := w.write(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if got, err := readRun(b.Bytes(), 3000, w.most); err != nil || strings.Count(got, "\n") != 3000 {
		t.Fatalf("run after reset: %d records, %v", strings.Count(got, "\n"), err)
	}
}

// TestSortDisjointRuns: input in reverse key order gives runs over disjoint
// key ranges, with keys that are prefixes of others and shared prefixes
// of every length, so the prefix the merge skips (from the least first
// and the greatest last key) is as long as it gets; merge passes, groups
// passed through whole and the entries left in memory all take part.
func TestSortDisjointRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var ws []string
	for i := range 3000 {
		w := fmt.Sprintf("x/%03d", i/30)
		ws = append(ws, w[:3+rng.IntN(len(w)-2)]+strings.Repeat("z", rng.IntN(3)))
	}
	slices.Sort(ws)
	slices.Reverse(ws)
	for _, fan := range []int{2, 3, 7, 128} {
		out, st := sortAll(t, Options{Memory: 8 << 10, Dir: t.TempDir(), FanIn: fan}, ws, 3)
		if len(out) != len(ws) {
			t.Fatalf("fan-in %d: %d entries out of %d", fan, len(out), len(ws))
		}
		want := slices.Clone(ws)
		slices.Sort(want)
		for i, g := range out {
			if g.key != "https://www.example.com/"+want[i] {
				t.Fatalf("fan-in %d (%d runs, %d passes): entry %d is %q, want %q", fan, st.Runs, st.Passes, i, g.key, want[i])
			}
		}
	}
}
