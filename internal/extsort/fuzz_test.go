package extsort

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzRunReader: any bytes read as a run give records within the limits
// the run was written with, then io.EOF, or ErrCorrupt: never a panic.
func FuzzRunReader(f *testing.F) {
	b, count, most := runBytes(f, 20)
	f.Add(b, count, most)
	f.Add(b[:len(b)/2], count, most)
	f.Add([]byte{}, int64(0), 0)
	e, _, _ := runBytes(f, 0)
	f.Add(e, int64(0), 0)
	f.Fuzz(func(t *testing.T, b []byte, count int64, most int) {
		if count < 0 || most < 0 || most > 1<<20 {
			return
		}
		r := newRunReader(bytes.NewReader(b), count, most)
		var n int64
		for {
			err := r.next()
			if err == io.EOF {
				if n != count {
					t.Fatalf("run of %d records read as %d", count, n)
				}
				return
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v is not ErrCorrupt", err)
				}
				return
			}
			e := r.cur
			if n++; n > count || len(e.Data) > most || int(e.KeyAt)+int(e.KeyLen) > len(e.Data) || int(e.LmAt)+int(e.LmLen) > len(e.Data) {
				t.Fatalf("record %d: %+v outside the run's limits (%d records, %d bytes)", n, e, count, most)
			}
			_ = e.Key()
		}
	})
}
