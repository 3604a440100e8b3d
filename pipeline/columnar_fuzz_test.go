package pipeline

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
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
// rows or an error, never panic nor loop, and the rows keep Fill's promises.
func FuzzParquetReader(f *testing.F) {
	fuzzSeeds(f, ".parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := NewParquetReader(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", ColumnOptions{})
		if err != nil {
			return
		}
		defer pr.Close()
		fuzzRead(t, pr)
	})
}

// FuzzArrowReader is FuzzParquetReader for Arrow IPC files and streams.
func FuzzArrowReader(f *testing.F) {
	fuzzSeeds(f, ".arrow")
	fuzzSeeds(f, ".arrows")
	f.Fuzz(func(t *testing.T, data []byte) {
		ar, err := NewArrowReader(bytes.NewReader(data), "fuzz.arrow", ColumnOptions{})
		if err != nil {
			return
		}
		defer ar.Close()
		fuzzRead(t, ar)
	})
}

func fuzzRead(t *testing.T, src rowSource) {
	var b Batch
	next := int64(1)
	for range 10000 {
		b.reset()
		err := src.Fill(&b, 256)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if err2 := src.Fill(&b, 256); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			return
		}
		next = checkBatch(t, &b, next)
		if src.Rows() != next-1 {
			t.Fatalf("Rows %d, want %d", src.Rows(), next-1)
		}
	}
	t.Fatalf("reader does not end")
}
