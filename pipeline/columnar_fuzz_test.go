package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// checkBatch checks what Fill promises: views inside b.Buf, one line number
// per row, counting up from next.
func checkBatch(t *testing.T, b *Batch, next int64) int64 {
	for c := range NumColumns {
		if n := len(b.Fields[c]); n != 0 && n != b.Len() {
			t.Fatalf("column %d has %d rows, batch %d", c, n, b.Len())
		}
		for _, f := range b.Fields[c] {
			if f == nil {
				continue
			}
			if cap(f) > 0 && !inside(b.Buf, f) {
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

// inside reports whether f lies within buf[:len(buf)].
func inside(buf, f []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
	return p >= lo && p+uintptr(len(f)) <= lo+uintptr(len(buf))
}

func fuzzSeeds(f *testing.F, ext string) {
	paths, _ := filepath.Glob(fixtures + "*" + ext)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzParquetReader: whatever the bytes, NewParquetReader and Fill return
// rows or an error, never panic nor hang, allocate in proportion to the
// input, and the rows keep Fill's promises.
func FuzzParquetReader(f *testing.F) {
	fuzzSeeds(f, ".parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer boundedCost(t, data)()
		pr, err := NewParquetReader(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", ColumnOptions{})
		if err != nil {
			return
		}
		defer pr.Close()
		// The page decoding is ours: it must check, not lean on the recover
		// that turns a panic into ErrCorrupt.
		if err := fuzzRead(t, pr); err != nil && strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("Fill panicked: %v", err)
		}
	})
}

// Per-input limits of the columnar fuzz targets: a corrupt file that takes
// seconds or allocates a gigabyte is as bad as a panic for a nightly job.
const (
	fuzzMaxTime  = 10 * time.Second
	fuzzMaxAlloc = 64 << 20 // bytes allocated per input, plus fuzzAllocPerByte per input byte
)

const fuzzAllocPerByte = 1024

// boundedCost fails the input when reading it allocates more than the
// budget, and crashes the fuzz worker (so the input is kept as a failure)
// when it runs longer than fuzzMaxTime. Call the result when done.
func boundedCost(t *testing.T, data []byte) func() {
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

// FuzzArrowReader is FuzzParquetReader for Arrow IPC files and streams,
// seeded also with compressed ones and the damaged inputs of
// TestArrowClaimsBounded.
func FuzzArrowReader(f *testing.F) {
	fuzzSeeds(f, ".arrow")
	fuzzSeeds(f, ".arrows")
	good, err := os.ReadFile(fixtures + "rows.arrow")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rewriteArrow(f, good, false, ipc.WithZstd()))
	f.Add(rewriteArrow(f, good, true, ipc.WithLZ4()))
	f.Add(stringViewStream(f))
	for _, c := range arrowClaims(f) {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer boundedCost(t, data)()
		ar, err := NewArrowReader(bytes.NewReader(data), "fuzz.arrow", ColumnOptions{})
		if err != nil {
			return
		}
		defer ar.Close()
		fuzzRead(t, ar)
	})
}

// fuzzRead reads src to the end and returns the error that ended it, if not io.EOF.
func fuzzRead(t *testing.T, src rowSource) error {
	var b Batch
	next := int64(1)
	for range 10000 {
		b.reset()
		err := src.Fill(&b, 256)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
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
		next = checkBatch(t, &b, next)
		if src.Rows() != next-1 {
			t.Fatalf("Rows %d, want %d", src.Rows(), next-1)
		}
	}
	// Every Fill delivered rows, so the reader progresses: a small file may
	// hold many rows (RLE), and the time a file takes is bounded by
	// boundedCost, not by a number of batches.
	return nil
}
