package pqpage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

func group(name string, children int) format.SchemaElement {
	return format.SchemaElement{Name: name, NumChildren: thrift.New(int32(children)), RepetitionType: thrift.New(format.Optional)}
}

func leaf(name string) format.SchemaElement {
	return format.SchemaElement{Name: name, Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Optional)}
}

// chain returns a schema whose loc column is nested in depth-1 groups: the
// column is at depth depth.
func chain(depth int) []format.SchemaElement {
	s := []format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(1))}}
	for range depth - 1 {
		s = append(s, group("g", 1))
	}
	return append(s, leaf("loc"))
}

func checkSchemaOf(t testing.TB, s []format.SchemaElement) error {
	t.Helper()
	data := inputtest.FooterOnly(t, &format.FileMetaData{Version: 1, Schema: s})
	return CheckFooter(bytes.NewReader(data), int64(len(data)))
}

// TestCheckFooterSchemaDepth: a schema nested deeper than MaxSchemaDepth is
// refused before parquet-go sees it (it allocated a path per element, as
// deep as the element: gigabytes for a few hundred KB), and one at the
// limit is not.
func TestCheckFooterSchemaDepth(t *testing.T) {
	if err := checkSchemaOf(t, chain(64)); err != nil {
		t.Errorf("depth 64: %v", err)
	}
	for _, depth := range []int{65, 2000, 100000} {
		err := checkSchemaOf(t, chain(depth))
		want := "schema nested more than 64 levels deep (element 65, "
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("depth %d: %v, want %q", depth, err, want)
		}
	}
}

// TestCheckFooterSchemaTree: the schema's elements must be one tree, rooted
// at the first: children counts that do not add up are refused.
func TestCheckFooterSchemaTree(t *testing.T) {
	root := func(n int) format.SchemaElement {
		return format.SchemaElement{Name: "schema", NumChildren: thrift.New(int32(n))}
	}
	withChildren := leaf("loc")
	withChildren.NumChildren = thrift.New(int32(1))
	for _, tc := range []struct {
		name   string
		schema []format.SchemaElement
		want   string
	}{
		{"flat", []format.SchemaElement{root(2), leaf("loc"), leaf("lastmod")}, ""},
		{"nested", []format.SchemaElement{root(2), group("s", 2), leaf("a"), group("e", 0), leaf("loc")}, ""},
		{"leaf children zero", []format.SchemaElement{root(1), func() format.SchemaElement {
			e := leaf("loc")
			e.NumChildren = thrift.New(int32(0))
			return e
		}()}, ""},
		{"too many children", []format.SchemaElement{root(3), leaf("loc"), leaf("lastmod")}, "has 3 children, more than the 2 elements after it"},
		{"children short", []format.SchemaElement{root(2), group("g", 2), leaf("a"), leaf("loc")}, "its groups claim 1 more children than it has"},
		{"elements after the root", []format.SchemaElement{root(1), leaf("loc"), leaf("lastmod")}, "1 more elements after the root and its 1 descendants"},
		{"negative", []format.SchemaElement{root(1), group("g", -1)}, `schema element 1 ("g") has -1 children`},
		{"column with children", []format.SchemaElement{root(2), withChildren, leaf("x")}, `schema element 1 ("loc") is a column with 1 children`},
		{"root column", []format.SchemaElement{leaf("loc")}, `schema root "loc" is a column`},
	} {
		err := checkSchemaOf(t, tc.schema)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestMaxColumns(t *testing.T) {
	if MaxColumns != parquet.MaxColumnIndex+1 {
		t.Errorf("MaxColumns %d, parquet-go reads %d", MaxColumns, parquet.MaxColumnIndex+1)
	}
	if err := checkSchemaOf(t, flatSchema(MaxColumns)); err != nil {
		t.Error(err)
	}
	if err := checkSchemaOf(t, flatSchema(MaxColumns+1)); err == nil || err.Error() != "footer: schema of more than 65535 columns" {
		t.Errorf("%v, want too many columns", err)
	}
}

// TestCheckFooterFixtures: the fixtures' footers pass.
func TestCheckFooterFixtures(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "columnar", "*.parquet"))
	if len(paths) == 0 {
		t.Fatal("no fixture")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckFooter(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

func minimalChunk(name string) format.ColumnChunk {
	return format.ColumnChunk{FileOffset: 4, MetaData: format.ColumnMetaData{
		Type: format.ByteArray, Encoding: []format.Encoding{format.Plain}, PathInSchema: []string{name},
		NumValues: 1, TotalUncompressedSize: 1, TotalCompressedSize: 1, DataPageOffset: 4,
	}}
}

func flatSchema(n int) []format.SchemaElement {
	s := []format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(n))}}
	for i := range n {
		s = append(s, leaf(fmt.Sprint("c", i)))
	}
	return s
}

// footerShapes are footers of many small structs of every kind parquet-go
// allocates for, of about n of them.
func footerShapes(n int) map[string]*format.FileMetaData {
	one := flatSchema(1)
	shapes := map[string]*format.FileMetaData{}
	md := &format.FileMetaData{Version: 1, Schema: one}
	for range n {
		md.RowGroups = append(md.RowGroups, format.RowGroup{Columns: []format.ColumnChunk{minimalChunk("c0")}})
	}
	shapes["row groups"] = md
	md = &format.FileMetaData{Version: 1, Schema: flatSchema(n)}
	shapes["columns"] = md
	rg := format.RowGroup{}
	for i := range n {
		rg.Columns = append(rg.Columns, minimalChunk(fmt.Sprint("c", i)))
	}
	shapes["columns in a row group"] = &format.FileMetaData{Version: 1, Schema: flatSchema(n), RowGroups: []format.RowGroup{rg}}
	deep := chain(MaxSchemaDepth - 1)
	deep[len(deep)-1] = group("g", n)
	for range n {
		deep = append(deep, format.SchemaElement{Name: "", Type: thrift.New(format.ByteArray)})
	}
	shapes["deep columns"] = &format.FileMetaData{Version: 1, Schema: deep}
	md = &format.FileMetaData{Version: 1, Schema: one}
	for range n {
		md.KeyValueMetadata = append(md.KeyValueMetadata, format.KeyValue{})
		md.ColumnOrders = append(md.ColumnOrders, format.ColumnOrder{Value: &format.TypeDefinedOrder{}})
	}
	shapes["key-values and orders"] = md
	c := minimalChunk("c0")
	var sorting []format.SortingColumn
	for range n {
		c.MetaData.Encoding = append(c.MetaData.Encoding, 0)
		c.MetaData.PathInSchema = append(c.MetaData.PathInSchema, "")
		c.MetaData.EncodingStats = append(c.MetaData.EncodingStats, format.PageEncodingStats{})
		c.MetaData.KeyValueMetadata = append(c.MetaData.KeyValueMetadata, format.KeyValue{})
		c.MetaData.SizeStatistics.DefinitionLevelHistogram = append(c.MetaData.SizeStatistics.DefinitionLevelHistogram, 0)
		sorting = append(sorting, format.SortingColumn{})
	}
	shapes["lists in a chunk"] = &format.FileMetaData{Version: 1, Schema: one, RowGroups: []format.RowGroup{{Columns: []format.ColumnChunk{c}, SortingColumns: sorting}}}
	return shapes
}

func heapAllocs(f func()) int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - before)
}

// TestFooterCost: what footerCost says a footer takes is at least what
// CheckFooter and parquet-go's OpenFile allocate to read it, whatever it
// is made of; the writers' footers (the fixtures, small row groups of many
// columns) stay under half the limit.
func TestFooterCost(t *testing.T) {
	open := func(data []byte) {
		if err := CheckFooter(bytes.NewReader(data), int64(len(data))); err != nil && !strings.Contains(err.Error(), "memory to read") {
			t.Fatal(err)
		}
		parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
	}
	for _, n := range []int{100, 20000} {
		for name, md := range footerShapes(n) {
			data := inputtest.FooterOnly(t, md)
			footer := data[4 : len(data)-8]
			cost, err := footerCost(footer)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			open(data) // warm up parquet-go's caches
			// The heap's counter counts every goroutine's allocations (a
			// goroutine an earlier test left, the runtime's own): the least
			// of a few reads is this one's.
			got := heapAllocs(func() { open(data) })
			for range 4 {
				got = min(got, heapAllocs(func() { open(data) }))
			}
			if got > cost+64<<10 {
				t.Errorf("%s of %d: %d bytes of footer cost %d, %d allocated", name, n, len(footer), cost, got)
			}
			t.Logf("%s of %d: %d bytes of footer cost %d (%.1f per byte), %d allocated", name, n, len(footer), cost, float64(cost)/float64(len(footer)), got)
		}
	}
	// Writers' footers: the fixtures, and row groups of ten rows of many columns.
	var files [][]byte
	_, file, _, _ := runtime.Caller(0)
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "columnar", "*.parquet"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	type wide struct {
		A, B, C, D, E, F, G, H string
		I                      *int64
		J                      *float64
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[wide](&buf, parquet.MaxRowsPerRowGroup(10))
	for i := range 5000 {
		s := fmt.Sprint("https://www.example.com/", i)
		if _, err := w.Write([]wide{{s, s, s, s, s, s, s, s, nil, nil}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files = append(files, buf.Bytes())
	for _, data := range files {
		n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		cost, err := footerCost(data[len(data)-8-n : len(data)-8])
		if err != nil {
			t.Fatal(err)
		}
		if per := float64(cost-64<<10) / float64(n); per > footerCostPerByte/2 {
			t.Errorf("a writer's footer of %d bytes costs %d, %.1f per byte", n, cost, per)
		}
	}
}

// compact is a writer of Thrift's compact protocol, for footers too large
// to build through parquet-go's encoder in a test's time.
type compact []byte

func (c compact) field(delta int, typ byte) compact { return append(c, byte(delta<<4)|typ) }
func (c compact) varint(v int64) compact            { return binary.AppendUvarint(c, uint64(v<<1^v>>63)) }
func (c compact) list(n int, et byte) compact {
	if n < 15 {
		return append(c, byte(n<<4)|et)
	}
	return binary.AppendUvarint(append(c, 0xf0|et), uint64(n))
}

// rawFooter returns a Parquet file whose footer holds the schema of one
// column loc and the row groups rowGroups, each the bytes of a RowGroup
// struct.
func rawFooter(rowGroups ...[]byte) []byte {
	var md compact
	md = md.field(1, tI32).varint(1)
	md = md.field(1, tList).list(2, tStruct)
	md = append(md.field(4, tBinary), 6, 's', 'c', 'h', 'e', 'm', 'a')
	md = md.field(1, tI32).varint(1).field(0, tStop)                                       // num_children
	md = append(md.field(1, tI32).varint(6).field(2, tI32).varint(0).field(1, tBinary), 3) // BYTE_ARRAY, REQUIRED
	md = append(md, "loc"...)
	md = md.field(0, tStop)
	md = md.field(1, tI64).varint(0)
	md = md.field(1, tList).list(len(rowGroups), tStruct)
	for _, g := range rowGroups {
		md = append(md, g...)
	}
	md = md.field(0, tStop)
	out := append([]byte("PAR1"), md...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(md)))
	return append(out, "PAR1"...)
}

// rowGroup returns a RowGroup of chunks column chunks holding only their
// file_offset: 3 bytes each.
func rowGroup(chunks int) []byte {
	var g compact
	g = g.field(1, tList).list(chunks, tStruct)
	for range chunks {
		g = g.field(2, tI64).varint(4).field(0, tStop)
	}
	return g.field(1, tI64).varint(0).field(1, tI64).varint(0).field(0, tStop)
}

// TestCheckFooterStructs: a footer of many small structs is refused before
// parquet-go allocates for them (a 560-byte ColumnChunk for each 3-byte
// one: 9 MB of footer took 1.6 GiB): column chunks that are not one per
// column of the schema in each row group, and structs that would take more
// than maxFooterCost.
func TestCheckFooterStructs(t *testing.T) {
	check := func(data []byte) error {
		var err error
		if got := heapAllocs(func() { err = CheckFooter(bytes.NewReader(data), int64(len(data))) }); got > 2*int64(len(data))+1<<20 {
			t.Errorf("%d bytes allocated to check %d", got, len(data))
		}
		return err
	}
	if err := check(rawFooter(rowGroup(1), rowGroup(1))); err != nil {
		t.Fatal(err)
	}
	err := check(rawFooter(rowGroup(1), rowGroup(3000000)))
	if want := "footer: row group 1 lists 3000000 column chunks for the schema's 1 columns"; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
	groups := make([][]byte, 300000)
	for i := range groups {
		groups[i] = rowGroup(1)
	}
	err = check(rawFooter(groups...))
	if want := "footer: 3000033 bytes of footer would take 357066643 bytes of memory to read (the limit is 112778272)"; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}
