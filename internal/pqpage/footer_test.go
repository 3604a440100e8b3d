package pqpage

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// FooterFile returns a Parquet file of md alone: no pages, only the footer,
// which is all CheckFooter and parquet-go's OpenFile read.
func footerFile(t testing.TB, md *format.FileMetaData) []byte {
	t.Helper()
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte("PAR1"), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

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
	data := footerFile(t, &format.FileMetaData{Version: 1, Schema: s})
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
