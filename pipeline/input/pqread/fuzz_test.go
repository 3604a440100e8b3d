package pqread

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// FuzzParquetReader: whatever the bytes, NewReader and Fill return rows or
// an error, never panic nor hang, allocate in proportion to the input, and
// the rows keep Fill's promises. Read with pages read ahead and on one
// goroutine, the file gives the same rows and the same error.
func FuzzParquetReader(f *testing.F) {
	inputtest.Seeds(f, ".parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		ahead, aheadErr := fuzzRead(t, data, false)
		seq, seqErr := fuzzRead(t, data, true)
		if ahead != seq || aheadErr != seqErr {
			t.Fatalf("pages read ahead: rows %x, error %q; on one goroutine: rows %x, error %q", ahead[:4], aheadErr, seq[:4], seqErr)
		}
	})
}

// fuzzRead reads data to its end and returns a digest of its rows and the
// error that ended it ("" for none).
func fuzzRead(t *testing.T, data []byte, sequential bool) (sum [32]byte, errText string) {
	defer inputtest.BoundedCost(t, data)()
	pr, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", input.Options{Sequential: sequential})
	if err != nil {
		return sum, err.Error()
	}
	defer pr.Close()
	src := &digest{Reader: pr, h: sha256.New()}
	// The page decoding is ours: it must check, not lean on the recover
	// that turns a panic into ErrCorrupt.
	if err := inputtest.FuzzRead(t, src); err != nil {
		if strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("Fill panicked: %v", err)
		}
		errText = err.Error()
	}
	src.h.Sum(sum[:0])
	return sum, errText
}

// digest hashes every row its Reader fills: its line and fields, a nil
// field told from an empty one.
type digest struct {
	*Reader
	h hash.Hash
}

func (d *digest) Fill(b *input.Batch, chunk int) error {
	from := b.Len()
	err := d.Reader.Fill(b, chunk)
	var n [8]byte
	for i := from; i < b.Len(); i++ {
		d.h.Write(binary.LittleEndian.AppendUint64(n[:0], uint64(b.Line[i])))
		for c := range input.CoreColumns {
			v := b.Field(c, i)
			l := uint64(len(v)) + 1
			if v == nil {
				l = 0
			}
			d.h.Write(binary.LittleEndian.AppendUint64(n[:0], l))
			d.h.Write(v)
		}
		for j := range b.Ext {
			v := b.ExtField(j, i)
			d.h.Write(binary.LittleEndian.AppendUint64(n[:0], uint64(len(v))))
			d.h.Write(v)
		}
	}
	return err
}
