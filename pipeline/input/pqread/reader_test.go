package pqread

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// TestParquetDuplicateColumn: a schema with two columns matching a mapped
// name by the same rule (Parquet names are unique, so here two that match
// "loc" case-insensitively, neither exactly) is refused, naming the file and
// both columns.
func TestParquetDuplicateColumn(t *testing.T) {
	type twoLocs struct {
		A string `parquet:"Loc"`
		B string `parquet:"LOC"`
	}
	in := inputtest.WriteParquet(t, "x.parquet", []twoLocs{{"https://www.example.com/a", "https://www.example.com/b"}})
	_, err := Open(in, input.Options{})
	want := in + `: duplicate column: columns 1 ("Loc") and 2 ("LOC") both match the loc column name "loc"`
	if !errors.Is(err, input.ErrDuplicateColumn) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%v\nwant %s…", err, want)
	}

	// An exact match is no guess.
	type exact struct {
		A string `parquet:"loc"`
		B string `parquet:"LOC"`
	}
	in = inputtest.WriteParquet(t, "y.parquet", []exact{{"https://www.example.com/a", "https://www.example.com/b"}})
	r, err := Open(in, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := inputtest.ReadAll(r); n != 1 || err != nil {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// footerOnly returns a Parquet file of md alone: no pages, only the footer,
// which is all NewReader reads.
func footerOnly(t testing.TB, md *format.FileMetaData) []byte {
	t.Helper()
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte("PAR1"), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// deepSchema returns a file whose loc column is nested depth levels deep
// through groups of one child: a few bytes per level.
func deepSchema(t testing.TB, depth int) []byte {
	s := []format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(1))}}
	for range depth - 1 {
		s = append(s, format.SchemaElement{Name: "g", NumChildren: thrift.New(int32(1)), RepetitionType: thrift.New(format.Optional)})
	}
	s = append(s, format.SchemaElement{Name: "loc", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Optional)})
	return footerOnly(t, &format.FileMetaData{Version: 1, Schema: s})
}

// TestParquetDeepSchema: a schema nested thousands of levels deep is
// refused, naming the file and the limit, before parquet-go builds a path
// per element as deep as the element (depth²/2 names: an 800 KB file made
// the process die of "out of memory").
func TestParquetDeepSchema(t *testing.T) {
	data := deepSchema(t, 5000)
	done := inputtest.BoundedCost(t, data)
	_, err := NewReader(bytes.NewReader(data), int64(len(data)), "deep.parquet", input.Options{})
	done()
	want := "deep.parquet: not a readable Parquet file: corrupt or truncated file: footer: schema nested more than 64 levels deep"
	if !errors.Is(err, input.ErrCorrupt) || err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%v\nwant %s…", err, want)
	}
}

// TestParquetFooterStructs: a footer listing far more column chunks than
// the schema has columns is refused before parquet-go decodes them (a
// 560-byte ColumnChunk for each 3 bytes of footer: 9 MB took 1.6 GiB).
func TestParquetFooterStructs(t *testing.T) {
	data := inputtest.ParquetFooterOnly(inputtest.ParquetRowGroup(1), inputtest.ParquetRowGroup(1000000))
	done := inputtest.BoundedCost(t, data)
	_, err := NewReader(bytes.NewReader(data), int64(len(data)), "structs.parquet", input.Options{})
	done()
	want := "structs.parquet: not a readable Parquet file: corrupt or truncated file: footer: row group 1 lists 1000000 column chunks for the schema's 1 columns"
	if !errors.Is(err, input.ErrCorrupt) || err == nil || err.Error() != want {
		t.Fatalf("%v\nwant %s", err, want)
	}
}
