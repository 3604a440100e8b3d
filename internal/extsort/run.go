package extsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
)

// A run is one sorted spill: an s2 stream (64 KiB blocks, so a reader needs
// no more) of records, each a flag byte 1 then
//
//	uvarint len(Data), Data, uvarint KeyAt, uvarint KeyLen, varint LmKey,
//	uvarint LmAt, uvarint LmLen, uvarint Source, varint Line
//
// and a flag byte 0 then uvarint count at the end. The count and the
// longest record are also kept in memory (runInfo), so a reader checks the
// file against what was written: a truncated or corrupt run is an error,
// never a panic, a short result or a large allocation.

const runBlock = 64 << 10

// ErrCorrupt reports a spilled run that does not read back as written.
var ErrCorrupt = errors.New("extsort: corrupt or truncated run")

// runWriter writes one run.
type runWriter struct {
	z     *s2.Writer
	buf   []byte
	count int64
	most  int // longest Data
}

func newRunWriter(w io.Writer) *runWriter {
	return &runWriter{z: s2.NewWriter(w, s2.WriterBlockSize(runBlock), s2.WriterConcurrency(1))}
}

// reset makes w write a new run to dst, keeping its buffers: a sort spills
// every few seconds, and a new writer each time (half a MiB of s2 buffers,
// the record buffer regrown) was most of the garbage while entries are
// added, which let the heap grow with the input's length.
func (w *runWriter) reset(dst io.Writer) {
	w.z.Reset(dst)
	w.buf, w.count, w.most = w.buf[:0], 0, 0
}

// write appends a record to the writer's buffer and hands the buffer to
// s2 a block at a time: a whole block is compressed from it without
// being copied again.
func (w *runWriter) write(e *Entry) error {
	b := append(w.buf, 1)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	b = append(b, e.Data...)
	b = binary.AppendUvarint(b, uint64(e.KeyAt))
	b = binary.AppendUvarint(b, uint64(e.KeyLen))
	b = binary.AppendVarint(b, e.LmKey)
	b = binary.AppendUvarint(b, uint64(e.LmAt))
	b = binary.AppendUvarint(b, uint64(e.LmLen))
	b = binary.AppendUvarint(b, uint64(e.Source))
	b = binary.AppendVarint(b, e.Line)
	w.buf = b
	w.count++
	w.most = max(w.most, len(e.Data))
	if len(b) < runBlock {
		return nil
	}
	_, err := w.z.Write(b)
	w.buf = b[:0]
	return err
}

func (w *runWriter) close() error {
	b := binary.AppendUvarint(append(w.buf, 0), uint64(w.count))
	w.buf = b[:0]
	if _, err := w.z.Write(b); err != nil {
		return err
	}
	return w.z.Close()
}

// runReader reads back a run written with count records of at most most
// bytes of Data each.
type runReader struct {
	r       *bufio.Reader
	count   int64 // records left
	written int64 // records in the run
	most    int
	cur     Entry
	data    []byte
}

func newRunReader(r io.Reader, count int64, most int) *runReader {
	z := s2.NewReader(r, s2.ReaderMaxBlockSize(runBlock))
	return &runReader{r: bufio.NewReaderSize(z, 16<<10), count: count, written: count, most: most}
}

// next reads the next record into cur (its Data valid until the next
// call); it returns io.EOF after the last, once the end mark has confirmed
// the count.
func (r *runReader) next() error {
	flag, err := r.r.ReadByte()
	if err != nil {
		return r.corrupt(err)
	}
	if flag == 0 {
		n, err := binary.ReadUvarint(r.r)
		if err != nil || r.count != 0 || int64(n) != r.written {
			return r.corrupt(err)
		}
		if _, err := r.r.ReadByte(); err != io.EOF {
			return r.corrupt(err) // bytes after the end mark
		}
		return io.EOF
	}
	if flag != 1 || r.count == 0 {
		return r.corrupt(nil)
	}
	r.count--
	n, err := r.uvarint(uint64(r.most))
	if err != nil {
		return err
	}
	if cap(r.data) < int(n) {
		r.data = make([]byte, n, max(int(n), 2*cap(r.data)))
	}
	r.data = r.data[:n]
	if _, err := io.ReadFull(r.r, r.data); err != nil {
		return r.corrupt(err)
	}
	e := Entry{Data: r.data}
	keyAt, err := r.uvarint(n)
	if err != nil {
		return err
	}
	keyLen, err := r.uvarint(n - keyAt)
	if err != nil {
		return err
	}
	if e.LmKey, err = binary.ReadVarint(r.r); err != nil {
		return r.corrupt(err)
	}
	lmAt, err := r.uvarint(n)
	if err != nil {
		return err
	}
	lmLen, err := r.uvarint(min(n-lmAt, 1<<16-1))
	if err != nil {
		return err
	}
	src, err := r.uvarint(1<<32 - 1)
	if err != nil {
		return err
	}
	if e.Line, err = binary.ReadVarint(r.r); err != nil {
		return r.corrupt(err)
	}
	e.KeyAt, e.KeyLen, e.LmAt, e.LmLen, e.Source = uint32(keyAt), uint32(keyLen), uint32(lmAt), uint16(lmLen), uint32(src)
	r.cur = e
	return nil
}

func (r *runReader) uvarint(limit uint64) (uint64, error) {
	v, err := binary.ReadUvarint(r.r)
	if err != nil {
		return 0, r.corrupt(err)
	}
	if v > limit {
		return 0, r.corrupt(nil)
	}
	return v, nil
}

func (r *runReader) corrupt(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrCorrupt
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}
