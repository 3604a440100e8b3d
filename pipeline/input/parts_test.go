package input_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// export is a set of Parquet parts written by bench's generator.
type export struct {
	parts, rows, rowGroup int

	once sync.Once
	dir  string
	err  error
}

var (
	// smallParts: many small parts with small row groups, whose decoding
	// the parts' window overlaps.
	smallParts = &export{parts: 8, rows: 50_000, rowGroup: 12_500}
	// largeParts: parts each far larger than the window, with row groups
	// of a warehouse export's size; only reading pages ahead overlaps them.
	largeParts = &export{parts: 2, rows: 500_000, rowGroup: 250_000}
)

// exportParts writes smallParts, once per test binary, into a temporary
// folder.
func exportParts(tb testing.TB) string { return smallParts.write(tb) }

func (e *export) write(tb testing.TB) string {
	e.once.Do(func() {
		e.dir, e.err = os.MkdirTemp("", "sitemapgen-parts-")
		for i := 0; i < e.parts && e.err == nil; i++ {
			var buf bytes.Buffer
			if e.err = bench.WriteParquet(&buf, bench.NewGenerator(uint64(i+1), "https://www.example.com/"), e.rows, e.rowGroup); e.err == nil {
				e.err = os.WriteFile(filepath.Join(e.dir, fmt.Sprintf("part-%05d.parquet", i)), buf.Bytes(), 0o644)
			}
		}
	})
	if e.err != nil {
		tb.Fatal(e.err)
	}
	return e.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, e := range []*export{smallParts, largeParts} {
		if e.dir != "" {
			os.RemoveAll(e.dir)
		}
	}
	os.Exit(code)
}

// readParts reads files with par parts decoded at once (par 0: one, with
// pages read on the decoding goroutine), from a pool of pool batches, and
// returns a digest of every batch in the order Emit got
// them (source, rows, fields), the rows and the files Done saw in order.
func readParts(tb testing.TB, files []input.File, par, pool int) (sum [32]byte, rows int64, done []int, err error) {
	free := make(chan *input.Batch, pool)
	for range pool {
		free <- new(input.Batch)
	}
	h := sha256.New()
	p := input.Parts[*input.Batch]{
		Files: files, Parallel: max(par, 1), Opt: input.Options{Sequential: par == 0},
		Get: func(ctx context.Context) (*input.Batch, error) {
			select {
			case b := <-free:
				return b, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Put:  func(b *input.Batch) { b.Reset(); free <- b },
		Fill: func(src input.Source, b *input.Batch) error { return src.Fill(b, input.DefaultChunk) },
		Emit: func(i int, b *input.Batch) error {
			if b.Source != files[i].Name() {
				return fmt.Errorf("batch of %s emitted as file %d", b.Source, i)
			}
			digest(h, b)
			rows += int64(b.Len())
			b.Reset()
			free <- b
			return nil
		},
		Done: func(i int, n int64) error { done = append(done, i); return nil },
	}
	err = p.Read(context.Background())
	h.Sum(sum[:0])
	return sum, rows, done, err
}

func digest(h hash.Hash, b *input.Batch) {
	h.Write([]byte(b.Source))
	for i := range b.Len() {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(b.Line[i])))
		for c := range input.CoreColumns {
			f := b.Field(c, i)
			h.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(f))))
			h.Write(f)
		}
	}
}

// TestPartsInOrder: decoding several parts at once, their pages read
// ahead, hands out the same batches in the same order as reading them one
// by one on one goroutine, whatever the window, and Done sees each file
// once, in order.
func TestPartsInOrder(t *testing.T) {
	files, err := input.Expand([]string{exportParts(t)})
	if err != nil {
		t.Fatal(err)
	}
	want, wantRows, _, err := readParts(t, files, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if wantRows != 400_000 {
		t.Fatalf("%d rows, want 400000", wantRows)
	}
	for _, par := range []int{1, 2, 3, 8} {
		got, rows, done, err := readParts(t, files, par, (par-1)*(input.PartsAhead+1)+1)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || rows != wantRows || fmt.Sprint(done) != "[0 1 2 3 4 5 6 7]" {
			t.Errorf("Parallel %d: digest %x rows %d done %v; one by one: %x %d", par, got[:4], rows, done, want[:4], wantRows)
		}
	}
}

// TestPartsError: a bad part fails the read with its own error, in file
// order: the parts before it are handed out whole, none after it.
func TestPartsError(t *testing.T) {
	dir := t.TempDir()
	src := exportParts(t)
	var args []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", i))
		data, _ := os.ReadFile(filepath.Join(src, fmt.Sprintf("part-%05d.parquet", i)))
		if i == 2 {
			data = data[:len(data)/2] // cut: no footer
		}
		os.WriteFile(p, data, 0o644)
		args = append(args, p)
	}
	files, err := input.Expand(args)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, done, err := readParts(t, files, 4, 16)
	if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), args[2]) {
		t.Fatalf("error %v, want ErrCorrupt naming %s", err, args[2])
	}
	if rows != 100_000 || fmt.Sprint(done) != "[0 1]" {
		t.Errorf("%d rows, done %v before the error; want 100000 of parts [0 1]", rows, done)
	}
}

// TestPartsPageBudget: the files decoded at once share a budget of
// decompressed pages, in which the file the read is at goes first: a file
// ahead of its turn that needs more than the shared pool waits for its
// turn, so files that each need most of the budget are all read (not one
// stuck behind another); a file that needs more than the budget fails,
// naming its column, in file order.
func TestPartsPageBudget(t *testing.T) {
	const page = 1 << 20
	input.SetPageBudget(t.Cleanup, 3*page, page+page/2, 0)
	dir := t.TempDir()
	var args []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		// Two columns of a 1 MiB page: 2 MiB of the 3, of which
		// a file ahead of its turn holds half.
		if err := os.WriteFile(p, inputtest.ParquetGzipPages([]string{"loc", "lastmod"}, page), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	files, err := input.Expand(args)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		rows int64
		done []int
		err  error
	}
	read := func(files []input.File) result {
		c := make(chan result, 1)
		go func() {
			_, rows, done, err := readParts(t, files, 4, 16)
			c <- result{rows, done, err}
		}()
		select {
		case r := <-c:
			return r
		case <-time.After(time.Minute):
			t.Fatal("the read is stuck")
			return result{}
		}
	}
	if r := read(files); r.err != nil || r.rows != 4 || fmt.Sprint(r.done) != "[0 1 2 3]" {
		t.Fatalf("%d rows, done %v, %v; want 4 of [0 1 2 3]", r.rows, r.done, r.err)
	}
	// Three columns need 3 MiB and a bit: the third file fails, in turn.
	big := filepath.Join(dir, "part-2.parquet")
	if err := os.WriteFile(big, inputtest.ParquetGzipPages([]string{"loc", "lastmod", "changefreq"}, page+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if files, err = input.Expand(args); err != nil {
		t.Fatal(err)
	}
	r := read(files)
	want := big + `: row group 0, column "changefreq": corrupt or truncated file: data page: 1048577 bytes once decompressed, with the 2097154 bytes the file's other pages in use hold: more than the 3145728 a file may hold at once`
	if r.err == nil || r.err.Error() != want || r.rows != 2 || fmt.Sprint(r.done) != "[0 1]" {
		t.Fatalf("%d rows, done %v, %v\nwant 2 rows of [0 1], %s", r.rows, r.done, r.err, want)
	}
}

// BenchmarkParts decodes Parquet parts (decoding only) on one goroutine,
// with pages read ahead, and GOMAXPROCS parts at once with pages read
// ahead: small is 8 parts of 50k rows, large 2 parts of 500k rows in row
// groups of 250k. rows/s is the figure to compare:
//
//	GOMAXPROCS=2 go test -run '^$' -bench Parts -count 3 ./pipeline/input/
func BenchmarkParts(b *testing.B) {
	for _, e := range []struct {
		name string
		*export
	}{{"small", smallParts}, {"large", largeParts}} {
		files, err := input.Expand([]string{e.write(b)})
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name       string
			par        int
			sequential bool
		}{
			{"goroutines=1", 1, true},
			{"ahead", 1, false},
			{fmt.Sprintf("parts=%d", runtime.GOMAXPROCS(0)), runtime.GOMAXPROCS(0), false},
		} {
			b.Run(e.name+"/"+mode.name, func(b *testing.B) {
				var rows int64
				// One pool for all iterations, as a run has: batches grown in
				// the first are reused, so the figure is decoding, not the
				// collector's work on fresh batches.
				free := make(chan *input.Batch, 16)
				for range cap(free) {
					free <- new(input.Batch)
				}
				for b.Loop() {
					p := input.Parts[*input.Batch]{
						Files: files, Parallel: mode.par, Opt: input.Options{Sequential: mode.sequential},
						Get:  func(context.Context) (*input.Batch, error) { return <-free, nil },
						Put:  func(b *input.Batch) { b.Reset(); free <- b },
						Fill: func(src input.Source, b *input.Batch) error { return src.Fill(b, input.DefaultChunk) },
						Emit: func(_ int, b *input.Batch) error {
							rows += int64(b.Len())
							b.Reset()
							free <- b
							return nil
						},
						Done: func(int, int64) error { return nil },
					}
					if err := p.Read(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
