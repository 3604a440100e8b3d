package arrowmsg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/pierrec/lz4/v4"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// decompress returns the buffers of the compressed batch msg with body,
// decompressed into a new body, each 8-byte aligned, and where each is
// (offset, length pairs). What the buffers claim is checked against
// maxBatch first, and each grows with the output really produced,
// never beyond its claim.
func (m *Reader) decompress(msg *message, body []byte) (out []byte, bufs []int64, err error) {
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
		if size < 0 || size > maxBatch || total+size > maxBatch {
			return nil, nil, fmt.Errorf("compressed buffers of more than %d bytes (buffer %d claims %d)", int64(maxBatch), i, size)
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
func uncompressedMessage(msg *message, bufs []int64, bodyLen int) []byte {
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
	if msg.typ == dictMsg {
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
	if codec == codecLZ4 {
		if m.lz == nil {
			m.lz = lz4.NewReader(nil)
		}
		m.lz.Reset(bytes.NewReader(src))
		return m.lz, nil
	}
	if m.zs == nil {
		zs, err := saferio.NewZstd(maxBatch)
		if err != nil {
			return nil, err
		}
		m.zs = zs
	}
	return m.zs, saferio.ResetZstd(m.zs, src, size)
}
