package extsort

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
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
			if n++; n > count || len(e.Data) > most || int(e.KeyAt)+int(e.KeyLen) > len(e.Data) || int(e.LmAt)+int(e.LmLen) > len(e.Data) || int(e.Split) > len(e.Data) {
				t.Fatalf("record %d: %+v outside the run's limits (%d records, %d bytes)", n, e, count, most)
			}
			_ = e.Key()
		}
	})
}

// FuzzRecordParse: records read in place from the buffer are the records
// read field by field: same fields, same bytes, same errors, from any bytes
// (here without the s2 layer, whose checksums would stop most of them).
func FuzzRecordParse(f *testing.F) {
	var raw bytes.Buffer
	rng := rand.New(rand.NewPCG(9, 9))
	var buf []byte
	most := 0
	for i, word := range words(rng, 30, 0.1) {
		var e Entry
		buf, e = testEntry(buf, rng, word, i)
		if i == 7 {
			e.Line, e.LmKey = -5, -1<<63
		}
		w := &runWriter{}
		w.write(&e)
		raw.Write(w.buf)
		most = max(most, len(e.Data))
	}
	raw.Write([]byte{0, 30})
	f.Add(raw.Bytes(), int64(30), most)
	f.Add(raw.Bytes()[:len(raw.Bytes())/2], int64(30), most)
	f.Add(raw.Bytes(), int64(29), most-1)
	f.Fuzz(func(t *testing.T, b []byte, count int64, most int) {
		if count < 0 || most < 0 || most > 1<<20 {
			return
		}
		fast := &runReader{r: bufio.NewReaderSize(bytes.NewReader(b), readBuffer), count: count, written: count, most: most}
		slow := &runReader{r: bufio.NewReaderSize(bytes.NewReader(b), readBuffer), count: count, written: count, most: most}
		for k := 0; ; k++ {
			errF, errS := fast.next(), slow.nextSlow()
			if (errF == nil) != (errS == nil) || errF != nil && errF.Error() != errS.Error() {
				t.Fatalf("record %d: in place %v, field by field %v", k, errF, errS)
			}
			if errF != nil {
				return
			}
			a, c := fast.cur, slow.cur
			if !bytes.Equal(a.Data, c.Data) || a.KeyAt != c.KeyAt || a.KeyLen != c.KeyLen || a.LmKey != c.LmKey ||
				a.LmAt != c.LmAt || a.LmLen != c.LmLen || a.Split != c.Split || a.Source != c.Source || a.Line != c.Line {
				t.Fatalf("record %d: in place %+v, field by field %+v", k, a, c)
			}
		}
	})
}
