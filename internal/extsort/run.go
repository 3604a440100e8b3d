package extsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
)

// A run is one sorted spill: an s2 stream (64 KiB blocks, so a reader needs
// no more) of records, each a flag byte 1 then
//
//	uvarint len(Data), Data, uvarint KeyAt, uvarint KeyLen, varint LmKey,
//	uvarint LmAt, uvarint LmLen, uvarint Split, uvarint Source, varint Line
//
// and a flag byte 0 then uvarint count at the end. The count and the
// longest record are also kept in memory (runInfo), so a reader checks the
// file against what was written: a truncated or corrupt run is an error,
// never a panic, a short result or a large allocation.

const runBlock = 64 << 10

// readBuffer is a run reader's buffer: records up to its size, less
// their fields, are read in place.
const readBuffer = 16 << 10

// ErrCorrupt reports a spilled run that does not read back as written.
var ErrCorrupt = errors.New("extsort: corrupt or truncated run")

// runWriter writes one run. Records are gathered into a block while a
// goroutine compresses and writes the one before: a spill's gathering (a
// cache miss or two per entry) and its compression overlap, instead of
// adding up in the one goroutine that spills while entries are added.
// Its two block buffers and the s2 writer are reused by every run.
type runWriter struct {
	z     *s2.Writer
	buf   []byte
	count int64
	most  int    // longest Data
	last  []byte // the key of the last record: the run's greatest

	full   chan []byte // blocks to compress, to the goroutine
	free   chan []byte // blocks written, back from it
	done   chan struct{}
	failed atomic.Bool // the goroutine failed: stop gathering
	err    error       // its error, once done is closed
}

// errBlock stops a run whose blocks can no longer be written; close
// returns the reason.
var errBlock = errors.New("extsort: writing a block failed")

func newRunWriter(dst io.Writer) *runWriter {
	w := &runWriter{z: s2.NewWriter(dst, s2.WriterBlockSize(runBlock), s2.WriterConcurrency(1)), free: make(chan []byte, 2)}
	w.free <- make([]byte, 0, runBlock+4<<10)
	w.free <- make([]byte, 0, runBlock+4<<10)
	w.start()
	return w
}

// start takes a block buffer and starts the goroutine that writes the
// blocks of one run.
func (w *runWriter) start() {
	w.buf = (<-w.free)[:0]
	w.full, w.done = make(chan []byte), make(chan struct{})
	go func() {
		var err error
		for b := range w.full {
			if err == nil {
				if _, err = w.z.Write(b); err != nil {
					w.failed.Store(true)
				}
			}
			w.free <- b[:0]
		}
		w.err = err
		close(w.done)
	}()
}

// reset makes w write a new run to dst, keeping its buffers: a sort spills
// every few seconds, and a new writer each time (half a MiB of s2 buffers,
// the record buffer regrown) was most of the garbage while entries are
// added, which let the heap grow with the input's length.
func (w *runWriter) reset(dst io.Writer) {
	w.z.Reset(dst)
	w.count, w.most, w.last, w.err = 0, 0, w.last[:0], nil
	w.failed.Store(false)
	w.start()
}

// write appends a record to the block being gathered and hands the block
// on once it holds runBlock bytes.
func (w *runWriter) write(e *Entry) error {
	b := append(w.buf, 1)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	b = append(b, e.Data...)
	b = binary.AppendUvarint(b, uint64(e.KeyAt))
	b = binary.AppendUvarint(b, uint64(e.KeyLen))
	b = binary.AppendVarint(b, e.LmKey)
	b = binary.AppendUvarint(b, uint64(e.LmAt))
	b = binary.AppendUvarint(b, uint64(e.LmLen))
	b = binary.AppendUvarint(b, uint64(e.Split))
	b = binary.AppendUvarint(b, uint64(e.Source))
	b = binary.AppendVarint(b, e.Line)
	w.buf = b
	w.count++
	w.most = max(w.most, len(e.Data))
	w.last = append(w.last[:0], e.Key()...)
	if len(b) < runBlock {
		return nil
	}
	w.full <- b
	w.buf = (<-w.free)[:0]
	if w.failed.Load() {
		return errBlock
	}
	return nil
}

// close writes the end mark, waits for the goroutine and ends the stream.
// It must be called once per run, also when filling it failed.
func (w *runWriter) close() error {
	w.full <- binary.AppendUvarint(append(w.buf, 0), uint64(w.count))
	close(w.full)
	<-w.done
	w.buf = nil
	if w.err != nil {
		return w.err
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
	return &runReader{r: bufio.NewReaderSize(z, readBuffer), count: count, written: count, most: most}
}

// next reads the next record into cur (its Data valid until the next
// call); it returns io.EOF after the last, once the end mark has confirmed
// the count.
func (r *runReader) next() error {
	// Most records are read in place from the buffer: parsed from a peek
	// at the bytes, no copy and no call per byte. Whatever that cannot
	// settle (a record longer than the buffer, the end mark, the run's
	// last bytes, damage) is read again below, which decides.
	if need := 1 + binary.MaxVarintLen64*8 + r.most; need <= readBuffer {
		b, _ := r.r.Peek(need)
		if n := r.parse(b); n > 0 {
			r.r.Discard(n)
			return nil
		}
	}
	return r.nextSlow()
}

// nextSlow is next reading field by field.
func (r *runReader) nextSlow() error {
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
	split, err := r.uvarint(n)
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
	e.KeyAt, e.KeyLen, e.LmAt, e.LmLen, e.Split, e.Source = uint32(keyAt), uint32(keyLen), uint32(lmAt), uint16(lmLen), uint32(split), uint32(src)
	r.cur = e
	return nil
}

// parse reads the record at the start of b into cur and returns its
// length, with the checks of next; 0 when b does not hold a whole valid
// record.
func (r *runReader) parse(b []byte) int {
	if len(b) == 0 || b[0] != 1 || r.count == 0 {
		return 0
	}
	p := 1
	field := func(limit uint64) (uint64, bool) {
		v, k := binary.Uvarint(b[p:])
		if k <= 0 || v > limit {
			return 0, false
		}
		p += k
		return v, true
	}
	signed := func() (int64, bool) {
		v, k := binary.Varint(b[p:])
		if k <= 0 {
			return 0, false
		}
		p += k
		return v, true
	}
	n, ok := field(uint64(r.most))
	if !ok || uint64(len(b)-p) < n {
		return 0
	}
	e := Entry{Data: b[p : p+int(n) : p+int(n)]}
	p += int(n)
	keyAt, ok1 := field(n)
	keyLen, ok2 := field(n - keyAt)
	if !ok1 || !ok2 {
		return 0
	}
	lmKey, ok1 := signed()
	lmAt, ok2 := field(n)
	if !ok1 || !ok2 {
		return 0
	}
	lmLen, ok1 := field(min(n-lmAt, 1<<16-1))
	split, ok2 := field(n)
	src, ok3 := field(1<<32 - 1)
	line, ok4 := signed()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0
	}
	e.KeyAt, e.KeyLen, e.LmKey, e.LmAt, e.LmLen, e.Split, e.Source, e.Line = uint32(keyAt), uint32(keyLen), lmKey, uint32(lmAt), uint16(lmLen), uint32(split), uint32(src), line
	r.count--
	r.cur = e
	return p
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
