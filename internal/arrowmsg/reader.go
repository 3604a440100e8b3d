// Package arrowmsg reads the messages of an Arrow IPC file or stream for
// arrow-go's ipc.Reader, checking each before arrow-go sees it: nothing a
// damaged input claims (metadata and body lengths, flatbuffer offsets and
// vector lengths, rows, decompressed buffer sizes, variadic buffer counts,
// dictionary sizes) is allocated before it is checked against the input and
// the limits here, so a damaged file costs memory in proportion to its size.
package arrowmsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// arrow-go (v18.8) allocates what an IPC message claims: the array loader a
// compressed buffer's decompressed length, the schema decoder the fields,
// children and key-value pairs a flatbuffer vector claims; it reads a
// batch's variadic buffer counts past the end of their list, and slices
// buffers without checking they lie in the body. Its own limits
// (ipc.WithMetadataSizeLimit, ipc.WithBodySizeLimit) and the file block
// checks of its FileReader apply only where arrow-go reads the messages
// itself, and then it has parsed and loaded them before any caller could
// check a flatbuffer or a compressed buffer (ipc.Message does not expose its
// metadata bytes). So sitemapgen reads the messages itself (Reader, an
// ipc.MessageReader for both the file and the stream format), checks every
// length and count against the input and the limits below, and hands
// arrow-go only messages whose claims hold; compressed batches it
// decompresses itself, into buffers that grow with the output really
// produced, and passes on uncompressed.
const (
	// maxMetadata bounds a message's metadata and a file's footer
	// (flatbuffers of a few KB in practice; arrow-go's own default).
	maxMetadata = 64 << 20
	// maxBatch bounds one record or dictionary batch: its body as
	// stored and its buffers once decompressed. Writers cut tables into
	// batches of 64K-1M rows (pyarrow, DuckDB, Polars): megabytes each.
	maxBatch = 1 << 30
	// maxDicts bounds the dictionary data held at once (a delta adds
	// to its dictionary, a replacement replaces it).
	maxDicts = 1 << 30
	// maxDepth bounds the nesting of a schema's fields (arrow-go's own
	// limit when it loads arrays).
	maxDepth = 64
)

// FileMagic opens (and ends) the Arrow IPC file format; the stream format
// has none.
const FileMagic = "ARROW1"

// Message header types (Message.fbs).
const (
	schemaMsg = 1
	dictMsg   = 2
	batchMsg  = 3
)

// continuation starts a message's prefix (since Arrow 0.15).
const continuation = 0xFFFFFFFF

// Compression codecs (Message.fbs: CompressionType).
const (
	codecLZ4  = 0
	codecZstd = 1
)

// Reader reads the messages of an Arrow IPC input for arrow-go's
// ipc.Reader, checking each before arrow-go sees it: the stream format's
// messages in order, or the file format's schema message and then the
// dictionaries and record batches its footer lists.
type Reader struct {
	r    io.Reader // the stream, or the file's current message
	left int64     // bytes of r not read yet

	// The file format.
	ra     io.ReaderAt
	end    int64 // where the footer starts
	blocks []block
	nblock int // next block; -1: the schema message first

	maxRows   int64 // values a batch or a field node may claim, and rows in all
	rows      int64
	dicts     map[int64]int64 // bytes of each dictionary
	dictBytes int64
	views     viewCounts // of the schema

	msg  *ipc.Message
	refs int

	zs *zstd.Decoder
	lz *lz4.Reader
}

var _ ipc.MessageReader = (*Reader)(nil)

// block is a message the footer of an Arrow IPC file lists.
type block struct {
	offset int64
	meta   int64 // prefix and metadata
	body   int64
	dict   bool
	n      int // its index among the dictionaries or record batches
}

// NewStream reads the Arrow IPC stream in r, of size bytes.
func NewStream(r io.Reader, size int64) *Reader {
	return &Reader{r: r, left: size, maxRows: saferio.MaxRowsPerByte * size, refs: 1}
}

// NewFile checks the magic at the end of the Arrow IPC file of size
// bytes in ra and reads its footer: it must fit in the file, after the
// leading magic, and its blocks are read (each is checked when read).
func NewFile(ra io.ReaderAt, size int64) (*Reader, error) {
	const head, tail = 8, 10 // magic and padding; footer length and magic
	if size < head+tail {
		return nil, fmt.Errorf("%d bytes are too short for an Arrow IPC file", size)
	}
	var end [tail]byte
	if _, err := ra.ReadAt(end[:], size-tail); err != nil {
		return nil, err
	}
	if string(end[4:]) != FileMagic {
		return nil, errors.New("the file does not end with the Arrow IPC file magic (truncated?)")
	}
	n := int64(int32(binary.LittleEndian.Uint32(end[:])))
	if n <= 0 || n > size-head-tail || n > maxMetadata {
		return nil, fmt.Errorf("footer of %d bytes claimed in a %d-byte file", n, size)
	}
	footer := make([]byte, n)
	if _, err := ra.ReadAt(footer, size-tail-n); err != nil {
		return nil, err
	}
	f := newFB(footer)
	t, err := f.root()
	if err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	m := &Reader{ra: ra, end: size - tail - n, nblock: -1, maxRows: saferio.MaxRowsPerByte * size, refs: 1}
	for _, slot := range []int{2, 3} { // dictionaries, record batches: [Block]
		start, k, err := t.vector(slot, 24)
		if err != nil {
			return nil, fmt.Errorf("footer: %w", err)
		}
		for i := range k {
			p := start + 24*i
			m.blocks = append(m.blocks, block{f.i64(p), int64(int32(binary.LittleEndian.Uint32(footer[p+8:]))), f.i64(p + 16), slot == 2, i})
		}
	}
	return m, nil
}

// check reports whether the block lies in the file's messages, which end
// at end, aligned as the format requires.
func (b block) check(end int64) error {
	if b.offset < 8 || b.offset%8 != 0 || b.meta < 8 || b.meta%8 != 0 || b.body < 0 || b.body%8 != 0 ||
		b.offset > end || b.meta > end-b.offset || b.body > end-b.offset-b.meta {
		kind := "record batch"
		if b.dict {
			kind = "dictionary batch"
		}
		return fmt.Errorf("the footer's %s %d (offset %d, metadata %d bytes, body %d bytes) is not in the file's %d bytes of messages", kind, b.n, b.offset, b.meta, b.body, end)
	}
	return nil
}

// Message returns the next message, checked; io.EOF after the last. It is
// valid until the next call.
func (m *Reader) Message() (*ipc.Message, error) {
	msg, err := m.nextMessage()
	if err != nil && err != io.EOF && errors.Is(err, io.EOF) {
		// arrow-go ends a stream quietly on an error that is io.EOF: only
		// the end of the input may be one, never a damaged message.
		err = errors.New(err.Error())
	}
	return msg, err
}

func (m *Reader) nextMessage() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	want := int64(0)
	var blk *block
	if m.ra != nil {
		switch {
		case m.nblock < 0: // the schema, after the magic
			m.r, m.left, want = io.NewSectionReader(m.ra, 8, m.end-8), m.end-8, schemaMsg
		case m.nblock < len(m.blocks):
			blk = &m.blocks[m.nblock]
			if err := blk.check(m.end); err != nil {
				return nil, err
			}
			m.r, m.left, want = io.NewSectionReader(m.ra, blk.offset, blk.meta+blk.body), blk.meta+blk.body, batchMsg
			if blk.dict {
				want = dictMsg
			}
		default:
			return nil, io.EOF
		}
		m.nblock++
	}
	meta, body, prefix, msg, err := m.read()
	if err == io.EOF && m.ra != nil {
		err = errors.New("end-of-stream marker where the footer lists a message")
	}
	if err != nil {
		return nil, err
	}
	if want != 0 && msg.typ != want {
		return nil, fmt.Errorf("message of type %d where the file should have one of type %d", msg.typ, want)
	}
	if blk != nil && (int64(prefix+len(meta)) != blk.meta || msg.bodyLen != blk.body) {
		return nil, fmt.Errorf("message of %d+%d bytes where the footer says %d+%d", prefix+len(meta), msg.bodyLen, blk.meta, blk.body)
	}
	if msg.typ == schemaMsg {
		m.views = msg.views
	} else {
		need := m.views.batch
		if msg.typ == dictMsg {
			need = m.views.dict[msg.dictID]
		}
		if msg.nvar < need {
			return nil, fmt.Errorf("batch lists %d variadic buffer counts for %d view columns", msg.nvar, need)
		}
		if msg.typ == batchMsg {
			m.rows += msg.rows
			if m.rows > m.maxRows {
				return nil, fmt.Errorf("record batches claim more than %d rows in a file of %d bytes", m.maxRows, m.maxRows/saferio.MaxRowsPerByte)
			}
		}
		if msg.codec >= 0 {
			var bufs []int64
			if body, bufs, err = m.decompress(&msg, body); err != nil {
				return nil, err
			}
			meta = uncompressedMessage(&msg, bufs, len(body))
		}
		if msg.typ == dictMsg {
			if err := m.addDict(&msg, int64(len(body))); err != nil {
				return nil, err
			}
		}
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return m.msg, nil
}

// read reads a message: its prefix, metadata (checked) and body.
func (m *Reader) read() (meta, body []byte, prefix int, msg message, err error) {
	var h [4]byte
	if _, err := io.ReadFull(m.r, h[:]); err != nil {
		if err == io.EOF {
			return nil, nil, 0, msg, io.EOF // a stream without its end-of-stream marker
		}
		return nil, nil, 0, msg, fmt.Errorf("message prefix: %w", err)
	}
	m.left -= 4
	n, prefix := binary.LittleEndian.Uint32(h[:]), 4
	if n == continuation {
		if _, err := io.ReadFull(m.r, h[:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, 0, msg, fmt.Errorf("message length: %w", err)
		}
		m.left -= 4
		n, prefix = binary.LittleEndian.Uint32(h[:]), 8
	}
	if n == 0 {
		return nil, nil, 0, msg, io.EOF // end-of-stream marker
	}
	if meta, err = m.readPart("metadata", int64(int32(n)), 4, maxMetadata); err != nil {
		return nil, nil, 0, msg, err
	}
	if msg, err = parseMessage(meta, m.maxRows); err != nil {
		return nil, nil, 0, msg, fmt.Errorf("message metadata: %w", err)
	}
	if body, err = m.readPart("body", msg.bodyLen, 0, maxBatch); err != nil {
		return nil, nil, 0, msg, err
	}
	return meta, body, prefix, msg, nil
}

// readPart reads the n bytes of a message's part, n in [least, limit] and
// within the input.
func (m *Reader) readPart(part string, n, least, limit int64) ([]byte, error) {
	switch {
	case n < least:
		return nil, fmt.Errorf("message %s of %d bytes", part, n)
	case n > limit:
		return nil, fmt.Errorf("message %s of %d bytes (the limit is %d)", part, n, limit)
	case n > m.left:
		return nil, fmt.Errorf("message %s of %d bytes, with %d bytes left in the input: %w", part, n, m.left, io.ErrUnexpectedEOF)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(m.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("message %s: %w", part, err)
	}
	m.left -= n
	return b, nil
}

// addDict counts the n bytes of a dictionary batch against maxDicts.
func (m *Reader) addDict(msg *message, n int64) error {
	if m.dicts == nil {
		m.dicts = map[int64]int64{}
	}
	old, seen := m.dicts[msg.dictID]
	if seen && !msg.delta && m.ra != nil {
		return fmt.Errorf("dictionary %d replaced, which the Arrow IPC file format does not allow", msg.dictID)
	}
	if msg.delta {
		n += old
	}
	m.dictBytes += n - old
	m.dicts[msg.dictID] = n
	if m.dictBytes > maxDicts {
		return fmt.Errorf("dictionaries of more than %d bytes", int64(maxDicts))
	}
	return nil
}

// Retain counts a reference to the reader (ipc.MessageReader).
func (m *Reader) Retain() { m.refs++ }

// Release drops a reference; the last releases the current message and the
// decoders.
func (m *Reader) Release() {
	if m.refs--; m.refs > 0 {
		return
	}
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if m.zs != nil {
		m.zs.Close()
		m.zs = nil
	}
}
