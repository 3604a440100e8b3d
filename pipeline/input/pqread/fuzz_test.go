package pqread

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"path/filepath"
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
	for _, data := range hostileSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ahead, aheadErr := fuzzRead(t, bytes.NewReader(data), data, false)
		seq, seqErr := fuzzRead(t, bytes.NewReader(data), data, true)
		if ahead != seq || aheadErr != seqErr {
			t.Fatalf("pages read ahead: rows %x, error %q; on one goroutine: rows %x, error %q", ahead[:4], aheadErr, seq[:4], seqErr)
		}
	})
}

// hostileSeeds are files that cost hundreds of MB before CheckFooter
// refused them: a schema nested 4,000 deep (8 bytes a level; parquet-go
// allocated a path per element, 130 MB for these 32 KB) and a row group of
// 200,000 empty column chunks for a schema of one column (a 560-byte
// struct for each byte: 112 MB for 200 KB).
func hostileSeeds(f *testing.F) [][]byte {
	return [][]byte{
		deepSchema(f, 4000),
		inputtest.ParquetFooterOnly(inputtest.ParquetRowGroup(1), inputtest.ParquetRowGroupEmpty(200000)),
	}
}

// store is an object in a store, as the reader sees it: an
// input.Prefetcher, whose footer is read through readTail. It counts the
// requests.
type store struct {
	data     []byte
	requests int
}

func (s *store) ReadAt(p []byte, off int64) (int, error) {
	s.requests++
	return bytes.NewReader(s.data).ReadAt(p, off)
}

func (s *store) Prefetch([]input.ByteRange) {}

// FuzzParquetTail: the footer of an object in a store is read in one or
// two requests (readTail, the first of guess bytes), and tail.ReadAt then
// serves any read as the object itself would; NewReader over the store
// gives the rows and the error it gives over the bytes.
func FuzzParquetTail(f *testing.F) {
	paths, err := filepath.Glob(inputtest.Fixtures + "*.parquet")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no Parquet fixture: %v", err)
	}
	seeds := hostileSeeds(f)
	for _, p := range paths {
		seeds = append(seeds, inputtest.ReadFixture(f, filepath.Base(p)))
	}
	for _, data := range seeds {
		// The whole footer in the first request, and in two; a read of
		// the footer's length and of the start of the file.
		f.Add(data, uint16(16<<10-1), int64(len(data)-8), uint16(8))
		f.Add(data, uint16(99), int64(0), uint16(1000))
	}
	f.Fuzz(func(t *testing.T, data []byte, guess uint16, off int64, n uint16) {
		size := int64(len(data))
		st := &store{data: data}
		tl, err := readTailGuess(st, size, int64(guess)+1)
		if err != nil {
			t.Fatalf("readTail: %v", err)
		}
		if st.requests > 2 {
			t.Fatalf("readTail made %d requests", st.requests)
		}
		if tl.off < 0 || tl.off+int64(len(tl.buf)) != size || !bytes.Equal(tl.buf, data[tl.off:]) {
			t.Fatalf("the tail holds %d bytes from %d of a %d-byte object, not its end", len(tl.buf), tl.off, size)
		}
		p, q := make([]byte, n), make([]byte, n)
		if off < 0 {
			off = -off % (size + 1)
		}
		gotN, gotErr := tl.ReadAt(p, off)
		wantN, wantErr := bytes.NewReader(data).ReadAt(q, off)
		if gotN != wantN || !bytes.Equal(p[:gotN], q[:wantN]) || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("ReadAt(%d bytes at %d): %d bytes, %v; the object gives %d, %v", n, off, gotN, gotErr, wantN, wantErr)
		}
		remote, remoteErr := fuzzRead(t, &store{data: data}, data, true)
		local, localErr := fuzzRead(t, bytes.NewReader(data), data, true)
		if remote != local || remoteErr != localErr {
			t.Fatalf("over a store: rows %x, error %q; over the bytes: rows %x, error %q", remote[:4], remoteErr, local[:4], localErr)
		}
	})
}

// fuzzRead reads data, in r, to its end and returns a digest of its rows
// and the error that ended it ("" for none).
func fuzzRead(t *testing.T, r io.ReaderAt, data []byte, sequential bool) (sum [32]byte, errText string) {
	defer inputtest.BoundedCost(t, data)()
	pr, err := NewReader(r, int64(len(data)), "fuzz.parquet", input.Options{Sequential: sequential})
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
