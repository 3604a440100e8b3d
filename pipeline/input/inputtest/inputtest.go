// Package inputtest holds what the tests of the input readers share: the
// fixtures, the checks of what Fill promises, and the cost bounds of the
// fuzz targets.
package inputtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// Fixtures is the folder of the columnar fixtures (testdata/columnar of
// the module), with a trailing slash, whichever package's test runs.
var Fixtures = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "columnar") + string(filepath.Separator)
}()

// FixtureBase is the site the fixtures' URLs are under.
const FixtureBase = "https://www.example.com/"

// CheckBatch checks what Fill promises: views inside b.Buf, one line number
// per row, counting up from next. It returns the next line number.
func CheckBatch(t testing.TB, b *input.Batch, next int64) int64 {
	t.Helper()
	for c := range input.NumColumns {
		if n := len(b.Fields[c]); n != 0 && n != b.Len() {
			t.Fatalf("column %d has %d rows, batch %d", c, n, b.Len())
		}
		for _, f := range b.Fields[c] {
			if f == nil {
				continue
			}
			if cap(f) > 0 && !Inside(b.Buf, f) {
				t.Fatalf("a view of column %d is outside b.Buf", c)
			}
		}
	}
	for _, l := range b.Line {
		if l != next {
			t.Fatalf("line %d, want %d", l, next)
		}
		next++
	}
	return next
}

// Inside reports whether f lies within buf[:len(buf)].
func Inside(buf, f []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
	return p >= lo && p+uintptr(len(f)) <= lo+uintptr(len(buf))
}

// ReadAll reads every batch of src, as the read stage does, and returns
// the rows read and the error that ended it, if not io.EOF.
func ReadAll(src input.Source) (rows int, err error) {
	var b input.Batch
	for range 1 << 20 {
		b.Reset()
		if err := src.Fill(&b, 512); err != nil {
			if errors.Is(err, io.EOF) {
				return rows, nil
			}
			return rows, err
		}
		rows += b.Len()
	}
	return rows, errors.New("reader does not end")
}

// Seeds adds every fixture whose name ends in ext to f's corpus; a fixture
// that cannot be read fails f, and so does finding none.
func Seeds(f *testing.F, ext string) {
	paths, err := filepath.Glob(Fixtures + "*" + ext)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixture %s*%s: %v", Fixtures, ext, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// Per-input limits of the columnar fuzz targets: a corrupt file that takes
// seconds or allocates a gigabyte is as bad as a panic for a nightly job.
const (
	fuzzMaxTime  = 10 * time.Second
	fuzzMaxAlloc = 64 << 20 // bytes allocated per input, plus fuzzAllocPerByte per input byte
)

// fuzzAllocPerByte is twice what a Parquet footer may cost per byte
// (pqpage's footer bound: writers' footers take 8 to 25 times their size
// in parquet-go's structs), and about what decoding needs besides: a
// small crafted file may not make a reader allocate hundreds of MB. (It
// was 1,024, which let a 9 MB footer of tiny column chunks take 1.6 GiB.)
// A page that honestly decompresses to more than the constant part is
// over it too: a fuzzed input is not expected to hold one.
const fuzzAllocPerByte = 64

// BoundedCost fails the input when reading it allocates more than the
// budget, and crashes the fuzz worker (so the input is kept as a failure)
// when it runs longer than fuzzMaxTime. Call the result when done.
func BoundedCost(t testing.TB, data []byte) func() {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	timer := time.AfterFunc(fuzzMaxTime, func() {
		panic(fmt.Sprintf("reading a %d-byte input took more than %v", len(data), fuzzMaxTime))
	})
	return func() {
		timer.Stop()
		metrics.Read(sample)
		if got, limit := sample[0].Value.Uint64()-before, uint64(fuzzMaxAlloc+fuzzAllocPerByte*len(data)); got > limit {
			t.Fatalf("reading a %d-byte input allocated %d bytes (limit %d)", len(data), got, limit)
		}
	}
}

// FuzzRead reads src to the end, checking every batch, and returns the
// error that ended it, if not io.EOF: it must wrap input.ErrCorrupt and be
// sticky.
func FuzzRead(t *testing.T, src input.Source) error {
	var b input.Batch
	next := int64(1)
	for range 10000 {
		b.Reset()
		err := src.Fill(&b, 256)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if !errors.Is(err, input.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if err2 := src.Fill(&b, 256); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			return err
		}
		if b.Len() == 0 {
			t.Fatalf("Fill returned neither rows nor an error")
		}
		next = CheckBatch(t, &b, next)
		if src.Rows() != next-1 {
			t.Fatalf("Rows %d, want %d", src.Rows(), next-1)
		}
	}
	// Every Fill delivered rows, so the reader progresses: a small file may
	// hold many rows (RLE), and the time a file takes is bounded by
	// BoundedCost, not by a number of batches.
	return nil
}

// WriteFile writes data to a file name in a new temporary folder and
// returns its path.
func WriteFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteRows writes a CSV file name of n rows, loc,lastmod: row i's loc is
// prefix+"i/a", or prefix+"i/b" (as long) where changed(i) (nil: nowhere),
// so that exactly the shards of the changed rows change; its lastmod is a
// day of month ("2024-05"). It returns the file's path.
func WriteRows(t testing.TB, name, prefix, month string, n int, changed func(int) bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("loc,lastmod\n")
	for i := range n {
		v := "a"
		if changed != nil && changed(i) {
			v = "b"
		}
		fmt.Fprintf(&b, "%s%d/%s,%s-%02d\n", prefix, i, v, month, 1+i%28)
	}
	return WriteFile(t, name, []byte(b.String()))
}

// ReadFixture returns the bytes of the fixture name; a missing fixture
// fails the test.
func ReadFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(Fixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Row is a row a source read, as ReadRows reports it.
type Row struct {
	Line    int64
	Loc     string
	Lastmod string        // "" also for none
	Reason  encode.Reason // the source rejected the row itself (Batch.Rejected)
}

// ReadRows reads every batch of src with chunk, checking each (CheckBatch),
// and returns its rows and the most bytes a batch held in its Buf.
func ReadRows(t testing.TB, src input.Source, chunk int) (rows []Row, maxBuf int) {
	t.Helper()
	var b input.Batch
	next := int64(1)
	for range 1 << 20 {
		b.Reset()
		err := src.Fill(&b, chunk)
		if errors.Is(err, io.EOF) {
			return rows, maxBuf
		}
		if err != nil {
			t.Fatal(err)
		}
		next = CheckBatch(t, &b, next)
		maxBuf = max(maxBuf, len(b.Buf))
		rejected := b.Rejected
		for i := range b.Len() {
			r := Row{Line: b.Line[i], Loc: string(b.Field(input.Loc, i)), Lastmod: string(b.Field(input.Lastmod, i))}
			if len(rejected) > 0 && rejected[0].Row == i {
				r.Reason, r.Lastmod = rejected[0].Reason, ""
				rejected = rejected[1:]
			}
			rows = append(rows, r)
		}
		if len(rejected) > 0 {
			t.Fatalf("Rejected lists row %d of a batch of %d, or not in row order", rejected[0].Row, b.Len())
		}
	}
	t.Fatal("reader does not end")
	return nil, 0
}

// LongValues are the rows (loc, lastmod; "" a null lastmod) of the tests
// of values over columnar's cap (64 KiB), which CheckLongValues checks: a
// short row, a loc of 100 KiB, a lastmod of 100 KiB, a loc of 3,000 bytes
// with such a lastmod, a short row.
func LongValues() [][2]string {
	return [][2]string{
		{FixtureBase + "a", "2024-01-01"},
		{FixtureBase + strings.Repeat("x", 100<<10), ""},
		{FixtureBase + "b", strings.Repeat("1", 100<<10)},
		{FixtureBase + strings.Repeat("y", 3000), strings.Repeat("2", 100<<10)},
		{FixtureBase + "c", "2024-01-02"},
	}
}

// CheckLongValues checks the rows a source read from LongValues: the
// short rows as they are; the others rejected by the source, as a CSV
// record over its limit: loc_too_long when the loc is long, its first
// 4,000 bytes kept with the mark "…[cut: N bytes]", or when the loc is
// 2,048 bytes or more; record_too_long otherwise.
func CheckLongValues(t testing.TB, what string, got []Row) {
	t.Helper()
	in := LongValues()
	long := in[1][0]
	keep := long[:4000] + fmt.Sprintf("…[cut: %d bytes]", len(long))
	want := []Row{
		{Line: 1, Loc: in[0][0], Lastmod: in[0][1]},
		{Line: 2, Loc: keep, Reason: encode.TooLong},
		{Line: 3, Loc: in[2][0], Reason: encode.RecordTooLong},
		{Line: 4, Loc: in[3][0], Reason: encode.TooLong},
		{Line: 5, Loc: in[4][0], Lastmod: in[4][1]},
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: row %d: %d %.60q… %.20q %v; want %d %.60q… %.20q %v", what, i+1,
				got[i].Line, got[i].Loc, got[i].Lastmod, got[i].Reason, want[i].Line, want[i].Loc, want[i].Lastmod, want[i].Reason)
		}
	}
}

// ReadLongValues reads src, a columnar source of LongValues, in batches of
// chunk bytes and checks its rows (CheckLongValues) and its batches: none
// holds more than chunk, or two values cut to what Long keeps.
func ReadLongValues(t testing.TB, what string, src input.Source, chunk int) {
	t.Helper()
	rows, maxBuf := ReadRows(t, src, chunk)
	CheckLongValues(t, what, rows)
	if maxBuf > max(chunk, 2*columnar.MaxKept+3100) {
		t.Errorf("%s: a batch of %d bytes", what, maxBuf)
	}
}

// ReadRepeated reads src, a columnar source of n rows that all hold loc
// and lastmod, in batches of chunk bytes, and checks that each row is
// rejected for reason, or read back whole when reason is OK, and that no
// batch passes its budget by more than a step and two values.
func ReadRepeated(t testing.TB, what string, src input.Source, n, chunk int, loc, lastmod string, reason encode.Reason) {
	t.Helper()
	got, maxBuf := ReadRows(t, src, chunk)
	if len(got) != n {
		t.Fatalf("%s: %d rows, want %d", what, len(got), n)
	}
	for _, g := range got {
		if g.Reason != reason || reason == encode.OK && (g.Loc != loc || g.Lastmod != lastmod) {
			t.Fatalf("%s: row %d: %v, %d-byte loc, %d-byte lastmod", what, g.Line, g.Reason, len(g.Loc), len(g.Lastmod))
		}
	}
	if limit := chunk + columnar.StepBytes + 2*columnar.MaxValue; maxBuf > limit {
		t.Errorf("%s: a batch of %d bytes; want at most %d", what, maxBuf, limit)
	}
}
