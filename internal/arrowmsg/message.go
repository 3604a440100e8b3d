package arrowmsg

import (
	"errors"
	"fmt"
)

// message is a checked message.
type message struct {
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

	views viewCounts // a schema's
}

// buffer returns buffer i of a batch.
func (m *message) buffer(i int) (off, n int64) {
	p := m.bufAt + 16*i
	return m.f.i64(p), m.f.i64(p + 8)
}

// parseMessage checks the Message flatbuffer meta: a schema, or a
// record or dictionary batch whose nodes claim at most maxRows values each
// and whose buffers lie in its body.
func parseMessage(meta []byte, maxRows int64) (m message, err error) {
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
	if err := checkKeyValues(t, 4); err != nil {
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
	case schemaMsg:
		return m, checkSchema(h, &m.views)
	case dictMsg:
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
	case batchMsg:
	default:
		return m, fmt.Errorf("message of type %d, not a schema, dictionary or record batch", m.typ)
	}
	return m, m.checkBatch(h, maxRows)
}

func (m *message) checkBatch(t fbTable, maxRows int64) error {
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
		if m.codec != codecLZ4 && m.codec != codecZstd || method != 0 {
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
