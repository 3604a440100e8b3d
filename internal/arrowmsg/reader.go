// Package arrowmsg reads the messages of an Arrow IPC file or stream for
// arrow-go's ipc.Reader, checking each before arrow-go sees it: nothing a
// damaged input claims (metadata and body lengths, flatbuffer offsets and
// vector lengths, rows, decompressed buffer sizes, variadic buffer counts,
// dictionary sizes) is allocated before it is checked against the input and
// the limits here, so a damaged file costs memory in proportion to its size.
package arrowmsg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
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
	// maxArrowMetadata bounds a message's metadata and a file's footer
	// (flatbuffers of a few KB in practice; arrow-go's own default).
	maxArrowMetadata = 64 << 20
	// maxArrowBatch bounds one record or dictionary batch: its body as
	// stored and its buffers once decompressed. Writers cut tables into
	// batches of 64K-1M rows (pyarrow, DuckDB, Polars): megabytes each.
	maxArrowBatch = 1 << 30
	// maxArrowDicts bounds the dictionary data held at once (a delta adds
	// to its dictionary, a replacement replaces it).
	maxArrowDicts = 1 << 30
	// maxArrowDepth bounds the nesting of a schema's fields (arrow-go's own
	// limit when it loads arrays).
	maxArrowDepth = 64
)

// FileMagic opens (and ends) the Arrow IPC file format; the stream format
// has none.
const FileMagic = "ARROW1"

// Message header types (Message.fbs).
const (
	arrowSchemaMsg = 1
	arrowDictMsg   = 2
	arrowBatchMsg  = 3
)

// arrowContinuation starts a message's prefix (since Arrow 0.15).
const arrowContinuation = 0xFFFFFFFF

// Compression codecs (Message.fbs: CompressionType).
const (
	arrowLZ4  = 0
	arrowZstd = 1
)

var errFlatbuffer = errors.New("metadata flatbuffer points outside itself")

// fbuf is a flatbuffer being checked: every read is bounds-checked, and a
// walk may visit at most budget bytes of tables, vectors and strings, so a
// flatbuffer whose offsets share parts (a field whose children are the same
// field twice, and so on down) cannot make arrow-go, which expands it into
// a tree, build more than a few times its size.
type fbuf struct {
	b      []byte
	budget int
}

func newFB(b []byte) *fbuf { return &fbuf{b: b, budget: 4*len(b) + 1024} }

// inside reports whether b[pos:pos+n] is in the buffer.
func (f *fbuf) inside(pos, n int) bool {
	return pos >= 0 && n >= 0 && pos <= len(f.b) && n <= len(f.b)-pos
}

func (f *fbuf) spend(n int) error {
	f.budget -= n
	if f.budget < 0 {
		return errors.New("metadata flatbuffer refers to its parts more often than it can hold them")
	}
	return nil
}

func (f *fbuf) u32(pos int) (int, error) {
	if !f.inside(pos, 4) {
		return 0, errFlatbuffer
	}
	// Negative where int has 32 bits and u is 2^31 or more: callers check.
	return int(binary.LittleEndian.Uint32(f.b[pos:])), nil
}

func (f *fbuf) i64(pos int) int64 { return int64(binary.LittleEndian.Uint64(f.b[pos:])) }

// ref follows the offset at pos.
func (f *fbuf) ref(pos int) (int, error) {
	u, err := f.u32(pos)
	if err != nil || u < 0 || pos+u >= len(f.b) {
		return 0, errFlatbuffer
	}
	return pos + u, nil
}

// fbTable is a checked table: its vtable and inline data are in the buffer.
type fbTable struct {
	f           *fbuf
	pos, vt     int
	vtLen, size int
}

func (f *fbuf) table(pos int) (fbTable, error) {
	if !f.inside(pos, 4) {
		return fbTable{}, errFlatbuffer
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(f.b[pos:])))
	if !f.inside(vt, 4) {
		return fbTable{}, errFlatbuffer
	}
	vtLen, size := int(binary.LittleEndian.Uint16(f.b[vt:])), int(binary.LittleEndian.Uint16(f.b[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || !f.inside(vt, vtLen) || size < 4 || !f.inside(pos, size) {
		return fbTable{}, errFlatbuffer
	}
	return fbTable{f, pos, vt, vtLen, size}, f.spend(size)
}

func (f *fbuf) root() (fbTable, error) {
	p, err := f.ref(0)
	if err != nil {
		return fbTable{}, err
	}
	return f.table(p)
}

// elem returns table i of the vector of tables starting at start.
func (f *fbuf) elem(start, i int) (fbTable, error) {
	p, err := f.ref(start + 4*i)
	if err != nil {
		return fbTable{}, err
	}
	return f.table(p)
}

// field returns the position of field slot, of n bytes, or -1 when absent.
func (t fbTable) field(slot, n int) (int, error) {
	e := 4 + 2*slot
	if e+2 > t.vtLen {
		return -1, nil
	}
	off := int(binary.LittleEndian.Uint16(t.f.b[t.vt+e:]))
	if off == 0 {
		return -1, nil
	}
	if off < 4 || off+n > t.size {
		return 0, errFlatbuffer
	}
	return t.pos + off, nil
}

// int reads the n-byte integer field slot (a 1-byte one unsigned), 0 when absent.
func (t fbTable) int(slot, n int) (int64, error) {
	p, err := t.field(slot, n)
	if err != nil || p < 0 {
		return 0, err
	}
	b := t.f.b[p:]
	switch n {
	case 1:
		return int64(b[0]), nil
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// sub returns the table field slot refers to; ok is false when absent.
func (t fbTable) sub(slot int) (s fbTable, ok bool, err error) {
	p, err := t.field(slot, 4)
	if err != nil || p < 0 {
		return s, false, err
	}
	if p, err = t.f.ref(p); err != nil {
		return s, false, err
	}
	s, err = t.f.table(p)
	return s, err == nil, err
}

// vector returns where the elements of the vector field slot start and how
// many there are, each of elem bytes; none when absent. They are all in the
// buffer.
func (t fbTable) vector(slot, elem int) (start, n int, err error) {
	p, err := t.field(slot, 4)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	if p, err = t.f.ref(p); err != nil {
		return 0, 0, err
	}
	if n, err = t.f.u32(p); err != nil {
		return 0, 0, err
	}
	start = p + 4
	if n < 0 || n > (len(t.f.b)-start)/elem {
		return 0, 0, fmt.Errorf("metadata flatbuffer claims a vector of %d elements in %d bytes", n, len(t.f.b))
	}
	return start, n, t.f.spend(4 + n*elem)
}

// checkArrowSchema checks a Schema table: what arrow-go sizes from it (the
// fields and their children, key-value metadata, union type ids, strings)
// is in the flatbuffer, and fields nest at most maxArrowDepth deep.
// It counts in views the variadic buffer counts batches must list.
func checkArrowSchema(t fbTable, views *arrowViews) error {
	views.dict = map[int64]int{}
	if err := checkArrowFields(t, 1, 0, &views.batch, views.dict); err != nil {
		return err
	}
	if err := checkArrowKeyValues(t, 2); err != nil {
		return err
	}
	_, _, err := t.vector(3, 8) // features
	return err
}

// Type union members whose tables hold a vector (Schema.fbs), and the view
// types, whose batches list a count of variadic buffers.
const (
	arrowTypeTimestamp  = 10 // timezone: string
	arrowTypeUnion      = 14 // typeIds: [int]
	arrowTypeBinaryView = 23
	arrowTypeUtf8View   = 24
)

// arrowViews counts the BinaryView and Utf8View fields whose batches list a
// variadic buffer count each: those of a record batch, and those of each
// dictionary's batches. arrow-go reads one count per such field without
// checking the list is that long: beyond it, it reads whatever bytes follow.
type arrowViews struct {
	batch int
	dict  map[int64]int // by dictionary id
}

// checkArrowFields checks the fields of t's vector slot, counting their
// view fields in views; a dictionary-encoded field holds only indices, and
// its values count in dicts under its dictionary id.
func checkArrowFields(t fbTable, slot, depth int, views *int, dicts map[int64]int) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	if n > 0 && depth >= maxArrowDepth {
		return fmt.Errorf("schema fields nested more than %d deep", maxArrowDepth)
	}
	for i := range n {
		f, err := t.f.elem(start, i)
		if err != nil {
			return err
		}
		if _, _, err := f.vector(0, 1); err != nil { // name
			return err
		}
		typ, err := f.int(2, 1)
		if err != nil {
			return err
		}
		tt, ok, err := f.sub(3)
		if err != nil {
			return err
		}
		if ok && typ == arrowTypeTimestamp {
			_, _, err = tt.vector(1, 1) // its time zone
		} else if ok && typ == arrowTypeUnion {
			_, _, err = tt.vector(1, 4) // its type ids
		}
		if err != nil {
			return err
		}
		count, dict, id := views, 0, int64(-1)
		if d, ok, err := f.sub(4); err != nil { // dictionary encoding
			return err
		} else if ok {
			if _, _, err := d.sub(1); err != nil { // its index type
				return err
			}
			if id, err = d.int(0, 8); err != nil {
				return err
			}
			count = &dict
		}
		if typ == arrowTypeBinaryView || typ == arrowTypeUtf8View {
			*count++
		}
		if err := checkArrowFields(f, 5, depth+1, count, dicts); err != nil {
			return err
		}
		if count == &dict {
			dicts[id] = max(dicts[id], dict)
		}
		if err := checkArrowKeyValues(f, 6); err != nil {
			return err
		}
	}
	return nil
}

func checkArrowKeyValues(t fbTable, slot int) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		kv, err := t.f.elem(start, i)
		if err != nil {
			return err
		}
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		if _, _, err := kv.vector(1, 1); err != nil {
			return err
		}
	}
	return nil
}

// arrowMsg is a checked message.
type arrowMsg struct {
	typ     int64
	version int64
	bodyLen int64

	// A record or dictionary batch.
	f                *fbuf
	rows             int64
	nodeAt, nodes    int // FieldNode structs (length, null_count)
	bufAt, bufs      int // Buffer structs (offset, length)
	variadicAt, nvar int
	codec            int64 // -1: not compressed
	dictID           int64
	delta            bool

	views arrowViews // a schema's
}

// buffer returns buffer i of a batch.
func (m *arrowMsg) buffer(i int) (off, n int64) {
	p := m.bufAt + 16*i
	return m.f.i64(p), m.f.i64(p + 8)
}

// parseArrowMessage checks the Message flatbuffer meta: a schema, or a
// record or dictionary batch whose nodes claim at most maxRows values each
// and whose buffers lie in its body.
func parseArrowMessage(meta []byte, maxRows int64) (m arrowMsg, err error) {
	f := newFB(meta)
	t, err := f.root()
	if err != nil {
		return m, err
	}
	if m.version, err = t.int(0, 2); err != nil {
		return m, err
	}
	if m.typ, err = t.int(1, 1); err != nil {
		return m, err
	}
	if m.bodyLen, err = t.int(3, 8); err != nil {
		return m, err
	}
	if m.bodyLen < 0 {
		return m, fmt.Errorf("message body of %d bytes", m.bodyLen)
	}
	if err := checkArrowKeyValues(t, 4); err != nil {
		return m, err
	}
	h, ok, err := t.sub(2)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, errors.New("message without a header")
	}
	switch m.typ {
	case arrowSchemaMsg:
		return m, checkArrowSchema(h, &m.views)
	case arrowDictMsg:
		if m.dictID, err = h.int(0, 8); err != nil {
			return m, err
		}
		d, err := h.int(2, 1)
		if err != nil {
			return m, err
		}
		m.delta = d != 0
		if h, ok, err = h.sub(1); err != nil {
			return m, err
		} else if !ok {
			return m, errors.New("dictionary batch without data")
		}
	case arrowBatchMsg:
	default:
		return m, fmt.Errorf("message of type %d, not a schema, dictionary or record batch", m.typ)
	}
	return m, m.checkBatch(h, maxRows)
}

func (m *arrowMsg) checkBatch(t fbTable, maxRows int64) error {
	var err error
	m.f = t.f
	if m.rows, err = t.int(0, 8); err != nil {
		return err
	}
	if m.rows < 0 {
		return fmt.Errorf("batch of %d rows", m.rows)
	}
	if m.rows > maxRows {
		return fmt.Errorf("batch of %d rows (at most %d in this file)", m.rows, maxRows)
	}
	if m.nodeAt, m.nodes, err = t.vector(1, 16); err != nil {
		return err
	}
	for i := range m.nodes {
		length, nulls := m.f.i64(m.nodeAt+16*i), m.f.i64(m.nodeAt+16*i+8)
		if length < 0 || nulls < 0 || nulls > length || length > maxRows {
			return fmt.Errorf("field node %d claims %d values, %d of them null (at most %d in this file)", i, length, nulls, maxRows)
		}
	}
	if m.bufAt, m.bufs, err = t.vector(2, 16); err != nil {
		return err
	}
	for i := range m.bufs {
		off, n := m.buffer(i)
		if off < 0 || n < 0 || off%8 != 0 || off > m.bodyLen || n > m.bodyLen-off {
			return fmt.Errorf("buffer %d at offset %d, of %d bytes, is not in the %d-byte body", i, off, n, m.bodyLen)
		}
	}
	m.codec = -1
	if c, ok, err := t.sub(3); err != nil {
		return err
	} else if ok {
		if m.codec, err = c.int(0, 1); err != nil {
			return err
		}
		method, err := c.int(1, 1)
		if err != nil {
			return err
		}
		if m.codec != arrowLZ4 && m.codec != arrowZstd || method != 0 {
			return fmt.Errorf("compression codec %d, method %d: not LZ4_FRAME or ZSTD of whole buffers", m.codec, method)
		}
	}
	if m.variadicAt, m.nvar, err = t.vector(4, 8); err != nil {
		return err
	}
	for i := range m.nvar {
		if v := m.f.i64(m.variadicAt + 8*i); v < 0 || v > int64(m.bufs) {
			return fmt.Errorf("variadic buffer count %d, with %d buffers in the batch", v, m.bufs)
		}
	}
	return nil
}

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
	blocks []arrowBlock
	nblock int // next block; -1: the schema message first

	maxRows   int64 // values a batch or a field node may claim, and rows in all
	rows      int64
	dicts     map[int64]int64 // bytes of each dictionary
	dictBytes int64
	views     arrowViews // of the schema

	msg  *ipc.Message
	refs int

	zs *zstd.Decoder
	lz *lz4.Reader
}

var _ ipc.MessageReader = (*Reader)(nil)

// arrowBlock is a message the footer of an Arrow IPC file lists.
type arrowBlock struct {
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
	if n <= 0 || n > size-head-tail || n > maxArrowMetadata {
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
			m.blocks = append(m.blocks, arrowBlock{f.i64(p), int64(int32(binary.LittleEndian.Uint32(footer[p+8:]))), f.i64(p + 16), slot == 2, i})
		}
	}
	return m, nil
}

// check reports whether the block lies in the file's messages, which end
// at end, aligned as the format requires.
func (b arrowBlock) check(end int64) error {
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
	msg, err := m.message()
	if err != nil && err != io.EOF && errors.Is(err, io.EOF) {
		// arrow-go ends a stream quietly on an error that is io.EOF: only
		// the end of the input may be one, never a damaged message.
		err = errors.New(err.Error())
	}
	return msg, err
}

func (m *Reader) message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	want := int64(0)
	var blk *arrowBlock
	if m.ra != nil {
		switch {
		case m.nblock < 0: // the schema, after the magic
			m.r, m.left, want = io.NewSectionReader(m.ra, 8, m.end-8), m.end-8, arrowSchemaMsg
		case m.nblock < len(m.blocks):
			blk = &m.blocks[m.nblock]
			if err := blk.check(m.end); err != nil {
				return nil, err
			}
			m.r, m.left, want = io.NewSectionReader(m.ra, blk.offset, blk.meta+blk.body), blk.meta+blk.body, arrowBatchMsg
			if blk.dict {
				want = arrowDictMsg
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
	if msg.typ == arrowSchemaMsg {
		m.views = msg.views
	} else {
		need := m.views.batch
		if msg.typ == arrowDictMsg {
			need = m.views.dict[msg.dictID]
		}
		if msg.nvar < need {
			return nil, fmt.Errorf("batch lists %d variadic buffer counts for %d view columns", msg.nvar, need)
		}
		if msg.typ == arrowBatchMsg {
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
		if msg.typ == arrowDictMsg {
			if err := m.addDict(&msg, int64(len(body))); err != nil {
				return nil, err
			}
		}
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return m.msg, nil
}

// read reads a message: its prefix, metadata (checked) and body.
func (m *Reader) read() (meta, body []byte, prefix int, msg arrowMsg, err error) {
	var h [4]byte
	if _, err := io.ReadFull(m.r, h[:]); err != nil {
		if err == io.EOF {
			return nil, nil, 0, msg, io.EOF // a stream without its end-of-stream marker
		}
		return nil, nil, 0, msg, fmt.Errorf("message prefix: %w", err)
	}
	m.left -= 4
	n, prefix := binary.LittleEndian.Uint32(h[:]), 4
	if n == arrowContinuation {
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
	if meta, err = m.readPart("metadata", int64(int32(n)), 4, maxArrowMetadata); err != nil {
		return nil, nil, 0, msg, err
	}
	if msg, err = parseArrowMessage(meta, m.maxRows); err != nil {
		return nil, nil, 0, msg, fmt.Errorf("message metadata: %w", err)
	}
	if body, err = m.readPart("body", msg.bodyLen, 0, maxArrowBatch); err != nil {
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

// addDict counts the n bytes of a dictionary batch against maxArrowDicts.
func (m *Reader) addDict(msg *arrowMsg, n int64) error {
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
	if m.dictBytes > maxArrowDicts {
		return fmt.Errorf("dictionaries of more than %d bytes", int64(maxArrowDicts))
	}
	return nil
}

// decompress returns the buffers of the compressed batch msg with body,
// decompressed into a new body, each 8-byte aligned, and where each is
// (offset, length pairs). What the buffers claim is checked against
// maxArrowBatch first, and each grows with the output really produced,
// never beyond its claim.
func (m *Reader) decompress(msg *arrowMsg, body []byte) (out []byte, bufs []int64, err error) {
	var total int64
	for i := range msg.bufs {
		off, n := msg.buffer(i)
		if n == 0 {
			continue
		}
		if n < 8 {
			return nil, nil, fmt.Errorf("compressed buffer %d of %d bytes, without its length", i, n)
		}
		size := int64(binary.LittleEndian.Uint64(body[off:]))
		if size == -1 { // stored uncompressed
			size = n - 8
		}
		if size < 0 || size > maxArrowBatch || total+size > maxArrowBatch {
			return nil, nil, fmt.Errorf("compressed buffers of more than %d bytes (buffer %d claims %d)", int64(maxArrowBatch), i, size)
		}
		total += (size + 7) &^ 7
	}
	out = make([]byte, 0, min(total, 4*int64(len(body))+4096))
	bufs = make([]int64, 2*msg.bufs)
	for i := range msg.bufs {
		off, n := msg.buffer(i)
		start := len(out)
		if n > 0 {
			size := int64(binary.LittleEndian.Uint64(body[off:]))
			src := body[off+8 : off+n]
			if size == -1 {
				out = append(out, src...)
			} else {
				r, err := m.decoder(msg.codec, src, int(size))
				if err == nil {
					out, err = saferio.ReadUpTo(out, r, start+int(size))
				}
				if err == nil && int64(len(out)-start) != size {
					err = fmt.Errorf("%d bytes, not the %d it claims", len(out)-start, size)
				}
				if err != nil {
					return nil, nil, fmt.Errorf("compressed buffer %d: %w", i, err)
				}
			}
		}
		bufs[2*i], bufs[2*i+1] = int64(start), int64(len(out)-start)
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
	}
	return out, bufs, nil
}

// uncompressedMessage writes the metadata of the batch msg anew, without
// compression, its buffers at bufs (offset, length pairs) in a body of
// bodyLen bytes. The message's custom metadata is left out (sitemapgen
// does not read it).
func uncompressedMessage(msg *arrowMsg, bufs []int64, bodyLen int) []byte {
	b := flatbuffers.NewBuilder(256 + 16*(msg.nodes+msg.bufs) + 8*msg.nvar)
	b.StartVector(16, msg.nodes, 8)
	for i := msg.nodes - 1; i >= 0; i-- {
		b.Prep(8, 16)
		b.PrependInt64(msg.f.i64(msg.nodeAt + 16*i + 8)) // null_count
		b.PrependInt64(msg.f.i64(msg.nodeAt + 16*i))     // length
	}
	nodes := b.EndVector(msg.nodes)
	b.StartVector(16, msg.bufs, 8)
	for i := msg.bufs - 1; i >= 0; i-- {
		b.Prep(8, 16)
		b.PrependInt64(bufs[2*i+1]) // length
		b.PrependInt64(bufs[2*i])   // offset
	}
	buffers := b.EndVector(msg.bufs)
	var variadic flatbuffers.UOffsetT
	if msg.nvar > 0 {
		b.StartVector(8, msg.nvar, 8)
		for i := msg.nvar - 1; i >= 0; i-- {
			b.PrependInt64(msg.f.i64(msg.variadicAt + 8*i))
		}
		variadic = b.EndVector(msg.nvar)
	}
	b.StartObject(5) // RecordBatch
	b.PrependInt64Slot(0, msg.rows, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	b.PrependUOffsetTSlot(4, variadic, 0)
	hdr := b.EndObject()
	if msg.typ == arrowDictMsg {
		b.StartObject(3) // DictionaryBatch
		b.PrependInt64Slot(0, msg.dictID, 0)
		b.PrependUOffsetTSlot(1, hdr, 0)
		b.PrependBoolSlot(2, msg.delta, false)
		hdr = b.EndObject()
	}
	b.StartObject(5) // Message
	b.PrependInt16Slot(0, int16(msg.version), 0)
	b.PrependByteSlot(1, byte(msg.typ), 0)
	b.PrependUOffsetTSlot(2, hdr, 0)
	b.PrependInt64Slot(3, int64(bodyLen), 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

func (m *Reader) decoder(codec int64, src []byte, size int) (io.Reader, error) {
	if codec == arrowLZ4 {
		if m.lz == nil {
			m.lz = lz4.NewReader(nil)
		}
		m.lz.Reset(bytes.NewReader(src))
		return m.lz, nil
	}
	if m.zs == nil {
		zs, err := saferio.NewZstd(maxArrowBatch)
		if err != nil {
			return nil, err
		}
		m.zs = zs
	}
	return m.zs, saferio.ResetZstd(m.zs, src, size)
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
