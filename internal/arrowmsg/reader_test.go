package arrowmsg_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/sitemapgen/sitemapgen/internal/arrowmsg"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/arrowread"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// ipcMsg is where a message of an Arrow IPC stream is.
type ipcMsg struct {
	at         int // its prefix
	meta, body int // where its metadata and body start
	typ        int64
}

// ipcMessages lists the messages of the stream in data from pos on.
func ipcMessages(t testing.TB, data []byte, pos int) []ipcMsg {
	t.Helper()
	var msgs []ipcMsg
	for pos+8 <= len(data) && binary.LittleEndian.Uint32(data[pos:]) == arrowmsg.Continuation {
		n := int(binary.LittleEndian.Uint32(data[pos+4:]))
		if n == 0 {
			break
		}
		typ, bodyLen, err := arrowmsg.ParseMessage(data[pos+8 : pos+8+n])
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, ipcMsg{pos, pos + 8, pos + 8 + n, typ})
		pos += 8 + n + int(bodyLen)
	}
	return msgs
}

// firstMsg returns the first message of type typ.
func firstMsg(t testing.TB, msgs []ipcMsg, typ int64) ipcMsg {
	t.Helper()
	for _, m := range msgs {
		if m.typ == typ {
			return m
		}
	}
	t.Fatalf("no message of type %d", typ)
	return ipcMsg{}
}

// fbAt returns the table of the flatbuffer starting at data[start:] found
// by following the table fields path from its root.
func fbAt(t testing.TB, data []byte, start int, path ...int) arrowmsg.Table {
	t.Helper()
	tb, err := arrowmsg.Root(data[start:])
	for _, slot := range path {
		if err != nil {
			break
		}
		var ok bool
		if tb, ok, err = tb.Sub(slot); !ok && err == nil {
			err = fmt.Errorf("no field %d", slot)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// at returns the position in the whole data of field slot of tb (found
// with fbAt from start).
func at(t testing.TB, tb arrowmsg.Table, start, slot int) int {
	t.Helper()
	p, err := tb.Field(slot, 1)
	if err != nil || p < 0 {
		t.Fatalf("no field %d (%v)", slot, err)
	}
	return start + p
}

// vec returns the position in the whole data of the length of vector field
// slot of tb; its elements follow.
func vec(t testing.TB, tb arrowmsg.Table, start, slot int) int {
	t.Helper()
	p, err := tb.Field(slot, 4)
	if err == nil && p >= 0 {
		p, err = tb.Ref(p)
	}
	if err != nil || p < 0 {
		t.Fatalf("no vector %d (%v)", slot, err)
	}
	return start + p
}

func put32(b []byte, at int, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }
func put64(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }

// Message.fbs slots.
const (
	slotMsgHeader  = 2
	slotMsgBodyLen = 3
	slotRBNodes    = 1
	slotRBBuffers  = 2
	slotRBVariadic = 4
	slotFields     = 1 // of Schema
	slotFooterRBs  = 3
)

// rewriteArrow writes the record batches of the Arrow file in to a new
// file or stream with opts (compression).
func rewriteArrow(t testing.TB, in []byte, stream bool, opts ...ipc.Option) []byte {
	t.Helper()
	fr, err := ipc.NewFileReader(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	opts = append(opts, ipc.WithSchema(fr.Schema()))
	var buf bytes.Buffer
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, opts...)
	} else if w, err = ipc.NewFileWriter(&buf, opts...); err != nil {
		t.Fatal(err)
	}
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// arrowText reads the Arrow input at path to the end: every field of
// every row, as text.
func arrowText(t *testing.T, path string) (string, error) {
	t.Helper()
	ar, err := arrowread.Open(path, input.Options{})
	if err != nil {
		return "", err
	}
	defer ar.Close()
	var sb strings.Builder
	var b input.Batch
	for {
		b.Reset()
		if err := ar.Fill(&b, 512); err != nil {
			if errors.Is(err, io.EOF) {
				return sb.String(), nil
			}
			return sb.String(), err
		}
		for i := range b.Len() {
			for c := range input.CoreColumns {
				if len(b.Fields[c]) > 0 {
					fmt.Fprintf(&sb, "%q,", b.Fields[c][i])
				}
			}
			sb.WriteString("\n")
		}
	}
}

// TestArrowCompressed: LZ4 and zstd compressed files and streams (which
// sitemapgen decompresses itself) read as the uncompressed fixture does,
// dictionary batches included.
func TestArrowCompressed(t *testing.T) {
	good, err := os.ReadFile(inputtest.Fixtures + "rows.arrow")
	if err != nil {
		t.Fatal(err)
	}
	want, err := arrowText(t, inputtest.Fixtures+"rows.arrow")
	if err != nil || strings.Count(want, "\n") != 23 {
		t.Fatalf("fixture: %v, %q", err, want)
	}
	for _, codec := range [][]ipc.Option{
		{ipc.WithZstd()},
		{ipc.WithLZ4()},
		{ipc.WithZstd(), ipc.WithMinSpaceSavings(0.5)}, // some buffers stored uncompressed
	} {
		for _, stream := range []bool{false, true} {
			name := map[bool]string{false: "c.arrow", true: "c.arrows"}[stream]
			data := rewriteArrow(t, good, stream, codec...)
			got, err := arrowText(t, inputtest.WriteFile(t, name, data))
			if err != nil || got != want {
				t.Errorf("%s: %v\n%s\nwant\n%s", name, err, got, want)
			}
		}
	}
}

// TestArrowStreamClaimsPastEnd: what a stream's messages claim beyond the
// bytes left in the file is refused before it is allocated.
func TestArrowStreamClaimsPastEnd(t *testing.T) {
	stream, err := os.ReadFile(inputtest.Fixtures + "rows.arrows")
	if err != nil {
		t.Fatal(err)
	}
	m := firstMsg(t, ipcMessages(t, stream, 0), arrowmsg.BatchMsg)
	for name, edit := range map[string]func(b []byte){
		"metadata": func(b []byte) { put32(b, m.at+4, 60<<20) },
		"body":     func(b []byte) { put64(b, at(t, fbAt(t, b, m.meta), m.meta, slotMsgBodyLen), 1000<<20) },
	} {
		bad := bytes.Clone(stream)
		edit(bad)
		done := inputtest.BoundedCost(t, bad)
		ar, err := arrowread.NewReader(bytes.NewReader(bad), int64(len(bad)), "x.arrows", input.Options{})
		if err == nil {
			_, err = inputtest.ReadAll(ar)
		}
		done()
		if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("%s: %v, want input.ErrCorrupt, unexpected EOF", name, err)
		}
	}
}

// failAt is a file whose reads fail at offset cut with an error that wraps io.EOF.
type failAt struct {
	*bytes.Reader
	cut int64
}

func (r failAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.cut {
		n, _ := r.Reader.ReadAt(p[:max(0, r.cut-off)], off)
		return n, fmt.Errorf("read: %w", io.EOF)
	}
	return r.Reader.ReadAt(p, off)
}

// TestArrowReadErrorNotEOF: an error reading inside a message is an error,
// even one that wraps io.EOF (which arrow-go takes for the end of the
// stream): rows are never dropped quietly.
func TestArrowReadErrorNotEOF(t *testing.T) {
	stream, err := os.ReadFile(inputtest.Fixtures + "rows.arrows")
	if err != nil {
		t.Fatal(err)
	}
	msgs := ipcMessages(t, stream, 0)
	last := msgs[len(msgs)-1]
	ar, err := arrowread.NewReader(failAt{bytes.NewReader(stream), int64(last.body + 8)}, int64(len(stream)), "x.arrows", input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := inputtest.ReadAll(ar)
	if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), "read: EOF") {
		t.Fatalf("%d rows, %v; want ErrCorrupt", rows, err)
	}
}

// TestArrowStringViewCompressed: a compressed string_view column (variadic
// data buffers) reads back.
func TestArrowStringViewCompressed(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.StringView, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	sb := b.Field(0).(*array.StringViewBuilder)
	for i := range 100 {
		sb.Append(fmt.Sprintf("%spages/a-rather-long-path-to-leave-the-inline-part/%d", inputtest.FixtureBase, i))
	}
	sb.AppendNull()
	rec := b.NewRecordBatch()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithZstd())
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := arrowText(t, inputtest.WriteFile(t, "view.arrows", buf.Bytes()))
	if err != nil || strings.Count(got, "\n") != 101 || !strings.Contains(got, "-inline-part/99") {
		t.Fatalf("%v: %q", err, got)
	}
}

// arrowClaim is a damaged Arrow input: a fixture with a length or count
// changed to claim far more than the input holds.
type arrowClaim struct {
	name string
	data []byte
	ext  string
	want string // in the error
}

// arrowClaims returns the damaged inputs of TestArrowClaimsBounded, also
// seeds of FuzzArrowReader.
func arrowClaims(t testing.TB) []arrowClaim {
	file, err := os.ReadFile(inputtest.Fixtures + "rows.arrow")
	if err != nil {
		t.Fatal(err)
	}
	stream, err := os.ReadFile(inputtest.Fixtures + "rows.arrows")
	if err != nil {
		t.Fatal(err)
	}
	zstdFile := rewriteArrow(t, file, false, ipc.WithZstd())
	zstdStream := rewriteArrow(t, file, true, ipc.WithZstd())
	lz4Stream := rewriteArrow(t, file, true, ipc.WithLZ4())
	viewStream := stringViewStream(t)
	sbatch := firstMsg(t, ipcMessages(t, stream, 0), arrowmsg.BatchMsg)
	fbatch := firstMsg(t, ipcMessages(t, file, 8), arrowmsg.BatchMsg)

	// firstBuffer returns where the bytes of the first non-empty buffer of
	// the first record batch of the stream at pos in data are.
	firstBuffer := func(data []byte, pos int) int {
		m := firstMsg(t, ipcMessages(t, data, pos), arrowmsg.BatchMsg)
		v := vec(t, fbAt(t, data, m.meta, slotMsgHeader), m.meta, slotRBBuffers)
		for i := range int(binary.LittleEndian.Uint32(data[v:])) {
			e := v + 4 + 16*i
			if binary.LittleEndian.Uint64(data[e+8:]) > 0 {
				return m.body + int(binary.LittleEndian.Uint64(data[e:]))
			}
		}
		t.Fatal("no buffer")
		return 0
	}
	// footerBlock returns the position of record batch block i in the footer.
	footerBlock := func(data []byte, i int) int {
		n := int(binary.LittleEndian.Uint32(data[len(data)-10:]))
		start := len(data) - 10 - n
		return vec(t, fbAt(t, data, start), start, slotFooterRBs) + 4 + 24*i
	}
	var cases []arrowClaim
	add := func(name string, data []byte, ext string, edit func(b []byte), want string) {
		data = bytes.Clone(data)
		if edit != nil {
			edit(data)
		}
		cases = append(cases, arrowClaim{name, data, ext, want})
	}
	add("stream metadata length 2 GiB", stream, ".arrows", func(b []byte) { put32(b, 4, 0x7ffffff0) }, "message metadata of 2147483632 bytes")
	add("stream metadata length past the end", stream, ".arrows", func(b []byte) { put32(b, sbatch.at+4, uint32(len(b))) }, "bytes left in the input")
	add("stream body length 2 GiB", stream, ".arrows", func(b []byte) {
		put64(b, at(t, fbAt(t, b, sbatch.meta), sbatch.meta, slotMsgBodyLen), 1<<31)
	}, "message body of 2147483648 bytes")
	add("stream body length 1 TiB", stream, ".arrows", func(b []byte) {
		put64(b, at(t, fbAt(t, b, sbatch.meta), sbatch.meta, slotMsgBodyLen), 1<<40)
	}, "the limit is 1073741824")
	add("stream buffer length 2 GiB", stream, ".arrows", func(b []byte) {
		v := vec(t, fbAt(t, b, sbatch.meta, slotMsgHeader), sbatch.meta, slotRBBuffers)
		put64(b, v+4+16+8, 1<<31)
	}, "buffer 1 at offset")
	add("stream field node of 2^40 values", stream, ".arrows", func(b []byte) {
		v := vec(t, fbAt(t, b, sbatch.meta, slotMsgHeader), sbatch.meta, slotRBNodes)
		put64(b, v+4, 1<<40)
	}, "field node 0 claims 1099511627776 values")
	add("stream schema of 2^31 fields", stream, ".arrows", func(b []byte) {
		put32(b, vec(t, fbAt(t, b, 8, slotMsgHeader), 8, slotFields), 1<<31)
	}, "vector of 2147483648 elements")
	add("stream zstd buffer claims 1 TiB", zstdStream, ".arrows", func(b []byte) { put64(b, firstBuffer(b, 0), 1<<40) }, "compressed buffers of more than 1073741824 bytes")
	add("stream zstd buffer claims 512 MiB", zstdStream, ".arrows", func(b []byte) { put64(b, firstBuffer(b, 0), 512<<20) }, "not the 536870912 it claims")
	// A zstd frame header asking for a 500 MiB single segment, or a 512 MiB
	// window: the decoder would allocate it before reading a byte.
	zstdFrame := func(claim uint64, fhd []byte) func(b []byte) {
		return func(b []byte) {
			at := firstBuffer(b, 0)
			if claim != 0 {
				put64(b, at, claim)
			}
			f := append([]byte{0x28, 0xB5, 0x2F, 0xFD}, fhd...)
			f = append(f, 1, 0, 0, 'a') // the last block: raw, one byte
			copy(b[at+8:], f)
		}
	}
	singleSegment := binary.LittleEndian.AppendUint64([]byte{0xE0}, 500<<20)
	add("stream zstd frame of 500 MiB", zstdStream, ".arrows", zstdFrame(0, singleSegment), "zstd frame of 524288000 bytes, more than the")
	add("stream zstd frame and buffer of 500 MiB", zstdStream, ".arrows", zstdFrame(500<<20, singleSegment), "decompressed size exceeds")
	add("stream zstd window of 512 MiB", zstdStream, ".arrows", zstdFrame(0, []byte{0x00, 19 << 3}), "window size exceeded")
	add("stream lz4 buffer claims 512 MiB", lz4Stream, ".arrows", func(b []byte) { put64(b, firstBuffer(b, 0), 512<<20) }, "not the 536870912 it claims")
	add("stream variadic count 2^40", viewStream, ".arrows", func(b []byte) {
		m := firstMsg(t, ipcMessages(t, b, 0), arrowmsg.BatchMsg)
		put64(b, vec(t, fbAt(t, b, m.meta, slotMsgHeader), m.meta, slotRBVariadic)+4, 1<<40)
	}, "variadic buffer count 1099511627776")
	add("stream variadic counts missing", viewStream, ".arrows", func(b []byte) {
		m := firstMsg(t, ipcMessages(t, b, 0), arrowmsg.BatchMsg)
		put32(b, vec(t, fbAt(t, b, m.meta, slotMsgHeader), m.meta, slotRBVariadic), 0)
	}, "batch lists 0 variadic buffer counts for 1 view columns")
	add("stream schema shared 2^30 times", schemaBomb(t, 30), ".arrows", nil, "more often than it can hold them")

	add("file footer length 2 GiB", file, ".arrow", func(b []byte) { put32(b, len(b)-10, 0x7ffffff0) }, "footer of 2147483632 bytes")
	add("file footer length past the start", file, ".arrow", func(b []byte) { put32(b, len(b)-10, uint32(len(b)-12)) }, "footer of")
	add("file without the trailing magic", file, ".arrow", func(b []byte) { copy(b[len(b)-6:], "ARROW0") }, "does not end with the Arrow IPC file magic")
	add("file block body 2 GiB", file, ".arrow", func(b []byte) { put64(b, footerBlock(b, 0)+16, 1<<31) }, "footer's record batch 0 (offset")
	add("file block offset past the end", file, ".arrow", func(b []byte) { put64(b, footerBlock(b, 1), 1<<40) }, "footer's record batch 1 (offset 1099511627776")
	add("file message body 2 GiB", file, ".arrow", func(b []byte) {
		put64(b, at(t, fbAt(t, b, fbatch.meta), fbatch.meta, slotMsgBodyLen), 1<<31)
	}, "message body of 2147483648 bytes")
	add("file schema of 2^31 fields", file, ".arrow", func(b []byte) {
		put32(b, vec(t, fbAt(t, b, 16, slotMsgHeader), 16, slotFields), 1<<31)
		n := int(binary.LittleEndian.Uint32(b[len(b)-10:]))
		start := len(b) - 10 - n
		put32(b, vec(t, fbAt(t, b, start, 1), start, slotFields), 1<<31) // the footer's copy
	}, "vector of 2147483648 elements")
	add("file zstd buffer claims 512 MiB", zstdFile, ".arrow", func(b []byte) { put64(b, firstBuffer(b, 8), 512<<20) }, "not the 536870912 it claims")
	add("file zstd buffer claims 2^62", zstdFile, ".arrow", func(b []byte) { put64(b, firstBuffer(b, 8), 1<<62) }, "compressed buffers of more than 1073741824 bytes")
	return cases
}

// TestArrowClaimsBounded: lengths and counts a damaged Arrow file or stream
// claims are checked before anything is allocated for them: the read fails
// with input.ErrCorrupt naming the file and what is wrong, without a panic,
// allocating at most fuzzMaxAlloc plus fuzzAllocPerByte per input byte.
// arrow-go allocated the claims: a stream's metadata and body length (2 GB
// for a 3 KB input), a compressed buffer's decompressed length, a schema's
// field count, a string_view column's variadic buffer count (the last three
// up to terabytes: the process died), and expanded a schema whose fields
// share their children (for minutes).
func TestArrowClaimsBounded(t *testing.T) {
	for _, tc := range arrowClaims(t) {
		t.Run(tc.name, func(t *testing.T) {
			path := inputtest.WriteFile(t, "bad"+tc.ext, tc.data)
			done := inputtest.BoundedCost(t, tc.data)
			_, err := arrowText(t, path)
			done()
			if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want input.ErrCorrupt naming the file and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "runtime error") || strings.Contains(err.Error(), "panic") {
				t.Fatalf("a panic, not a check: %v", err)
			}
			t.Log(err)
		})
	}
	// A body past the limit: the error names the file, the record batch and
	// the claim. (That a failed read publishes nothing is the pipeline's
	// promise, tested there.)
	stream, err := os.ReadFile(inputtest.Fixtures + "rows.arrows")
	if err != nil {
		t.Fatal(err)
	}
	m := firstMsg(t, ipcMessages(t, stream, 0), arrowmsg.BatchMsg)
	put64(stream, at(t, fbAt(t, stream, m.meta), m.meta, slotMsgBodyLen), 1<<31)
	p := inputtest.WriteFile(t, "bad.arrows", stream)
	_, err = arrowText(t, p)
	for _, want := range []string{p, "record batch 0", "corrupt or truncated", "message body of 2147483648 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// stringViewStream is an Arrow stream of a string_view loc column.
func stringViewStream(t testing.TB) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.StringView}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.StringViewBuilder).Append(inputtest.FixtureBase + "a-path-longer-than-twelve-bytes")
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(b.NewRecordBatch()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}

// schemaBomb is an Arrow stream whose schema is a chain of depth struct
// fields, each with two children that are the same field: a few hundred
// bytes that arrow-go would expand into 2^depth fields.
func schemaBomb(t testing.TB, depth int) []byte {
	t.Helper()
	b := flatbuffers.NewBuilder(1024)
	// vector writes a vector of the tables at offs, in order (a builder
	// writes back to front).
	vector := func(offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		b.StartVector(4, len(offs), 4)
		for i := len(offs) - 1; i >= 0; i-- {
			b.PrependUOffsetT(offs[i])
		}
		return b.EndVector(len(offs))
	}
	field := func(name string, typ byte, children []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		n := b.CreateString(name)
		b.StartObject(0)
		tt := b.EndObject() // Utf8 and Struct_ tables have no fields
		ch := vector(children)
		b.StartObject(7)
		b.PrependUOffsetTSlot(0, n, 0)
		b.PrependBoolSlot(1, true, false)
		b.PrependByteSlot(2, typ, 0)
		b.PrependUOffsetTSlot(3, tt, 0)
		b.PrependUOffsetTSlot(5, ch, 0)
		return b.EndObject()
	}
	const utf8, structType = 5, 13
	f := field("leaf", utf8, nil)
	for range depth {
		f = field("s", structType, []flatbuffers.UOffsetT{f, f})
	}
	fields := vector([]flatbuffers.UOffsetT{field("loc", utf8, nil), f})
	b.StartObject(4)
	b.PrependUOffsetTSlot(1, fields, 0)
	schema := b.EndObject()
	b.StartObject(5)
	b.PrependInt16Slot(0, 4, 0) // V5
	b.PrependByteSlot(1, arrowmsg.SchemaMsg, 0)
	b.PrependUOffsetTSlot(2, schema, 0)
	b.Finish(b.EndObject())
	meta := b.FinishedBytes()
	for len(meta)%8 != 0 {
		meta = append(meta, 0)
	}
	out := binary.LittleEndian.AppendUint32(nil, arrowmsg.Continuation)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	return binary.LittleEndian.AppendUint64(out, uint64(arrowmsg.Continuation)) // end of stream
}
