package inputtest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Hostile Parquet footers, written byte by byte in Thrift's compact
// protocol: far larger than parquet-go's encoder builds in a test's time.

type compact []byte

func (c compact) field(delta int, typ byte) compact { return append(c, byte(delta<<4)|typ) }
func (c compact) varint(v int64) compact            { return binary.AppendUvarint(c, uint64(v<<1^v>>63)) }
func (c compact) bytes(b string) compact {
	return append(binary.AppendUvarint(c, uint64(len(b))), b...)
}
func (c compact) list(n int, et byte) compact {
	if n < 15 {
		return append(c, byte(n<<4)|et)
	}
	return binary.AppendUvarint(append(c, 0xf0|et), uint64(n))
}

// Compact protocol types.
const (
	tI32    = 5
	tI64    = 6
	tBinary = 8
	tList   = 9
	tStruct = 12
)

// ParquetFooterOnly returns a Parquet file without pages: the magic, then a
// footer whose schema is one required BYTE_ARRAY column loc, and whose row
// groups are rowGroups, each the bytes of a RowGroup (see ParquetRowGroup).
func ParquetFooterOnly(rowGroups ...[]byte) []byte {
	var md compact
	md = md.field(1, tI32).varint(1) // version
	md = md.field(1, tList).list(2, tStruct)
	md = md.field(4, tBinary).bytes("schema").field(1, tI32).varint(1).field(0, 0)
	md = md.field(1, tI32).varint(6).field(2, tI32).varint(0).field(1, tBinary).bytes("loc").field(0, 0)
	md = md.field(1, tI64).varint(0) // num_rows
	md = md.field(1, tList).list(len(rowGroups), tStruct)
	for _, g := range rowGroups {
		md = append(md, g...)
	}
	md = md.field(0, 0)
	out := append([]byte("PAR1"), md...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(md)))
	return append(out, "PAR1"...)
}

// ParquetRowGroup returns a RowGroup of 0 rows listing chunks column chunks
// that hold only their file_offset: 3 bytes each, which parquet-go decodes
// into a 560-byte struct.
func ParquetRowGroup(chunks int) []byte { return rowGroup(chunks, true) }

// ParquetRowGroupEmpty is ParquetRowGroup with empty column chunks: a byte
// each, for which parquet-go allocates its 560 bytes before it finds their
// file_offset missing.
func ParquetRowGroupEmpty(chunks int) []byte { return rowGroup(chunks, false) }

func rowGroup(chunks int, offset bool) []byte {
	var g compact
	g = g.field(1, tList).list(chunks, tStruct)
	for range chunks {
		if offset {
			g = g.field(2, tI64).varint(4)
		}
		g = g.field(0, 0)
	}
	return g.field(1, tI64).varint(0).field(1, tI64).varint(0).field(0, 0)
}

// ParquetGzipPages returns a Parquet file of one row: each column of names
// (required strings) holds one gzip data page that decompresses to size
// bytes, a URL and zeros, as a page honestly says: a few KB of file that
// take size bytes per column to decode.
func ParquetGzipPages(names []string, size int) []byte {
	value := "https://www.example.com/a"
	body := make([]byte, size)
	binary.LittleEndian.PutUint32(body, uint32(len(value)))
	copy(body[4:], value)
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	w.Write(body)
	w.Close()
	var hdr compact
	hdr = hdr.field(1, tI32).varint(0).field(1, tI32).varint(int64(size)).field(1, tI32).varint(int64(z.Len()))
	hdr = hdr.field(2, tStruct).field(1, tI32).varint(1).field(1, tI32).varint(0).field(1, tI32).varint(3).field(1, tI32).varint(3).field(0, 0)
	hdr = hdr.field(0, 0)
	page := append(hdr, z.Bytes()...)

	out := []byte("PAR1")
	var md compact
	md = md.field(1, tI32).varint(1)
	md = md.field(1, tList).list(len(names)+1, tStruct)
	md = md.field(4, tBinary).bytes("schema").field(1, tI32).varint(int64(len(names))).field(0, 0)
	for _, n := range names {
		md = md.field(1, tI32).varint(6).field(2, tI32).varint(0).field(1, tBinary).bytes(n).field(0, 0)
	}
	md = md.field(1, tI64).varint(1)
	md = md.field(1, tList).list(1, tStruct)
	md = md.field(1, tList).list(len(names), tStruct)
	for _, n := range names {
		at := int64(len(out))
		out = append(out, page...)
		md = md.field(2, tI64).varint(at).field(1, tStruct)
		md = md.field(1, tI32).varint(6).field(1, tList).list(2, tI32).varint(0).varint(3)
		md = md.field(1, tList).list(1, tBinary).bytes(n)
		md = md.field(1, tI32).varint(2).field(1, tI64).varint(1) // GZIP, 1 value
		md = md.field(1, tI64).varint(int64(len(page))).field(1, tI64).varint(int64(len(page)))
		md = md.field(2, tI64).varint(at).field(0, 0) // data_page_offset
		md = md.field(0, 0)
	}
	md = md.field(1, tI64).varint(int64(len(names)*len(page))).field(1, tI64).varint(1).field(0, 0) // total_byte_size, num_rows
	md = md.field(0, 0)
	out = append(out, md...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(md)))
	return append(out, "PAR1"...)
}

// FooterOnly returns a Parquet file of md alone: no pages, only the
// footer, which is all a reader's checks of the footer read.
func FooterOnly(t testing.TB, md *format.FileMetaData) []byte {
	t.Helper()
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte("PAR1"), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}
