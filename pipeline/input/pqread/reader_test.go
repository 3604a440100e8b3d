package pqread

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
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

// deepSchema returns a file whose loc column is nested depth levels deep
// through groups of one child: a few bytes per level.
func deepSchema(t testing.TB, depth int) []byte {
	s := []format.SchemaElement{{Name: "schema", NumChildren: thrift.New(int32(1))}}
	for range depth - 1 {
		s = append(s, format.SchemaElement{Name: "g", NumChildren: thrift.New(int32(1)), RepetitionType: thrift.New(format.Optional)})
	}
	s = append(s, format.SchemaElement{Name: "loc", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Optional)})
	return inputtest.FooterOnly(t, &format.FileMetaData{Version: 1, Schema: s})
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

// TestParquetPagesBounded: the pages a file's columns hold at once are
// bounded together, not page by page: two columns each of one gzip page
// that honestly decompresses to 150 MiB (a file of 300 KB) fail at the
// second, naming it, having allocated one of them. Every mapped column
// held its own page of up to 256 MiB: a 1 MB file of four took 2.5 GiB
// and was published.
func TestParquetPagesBounded(t *testing.T) {
	data := inputtest.ParquetGzipPages([]string{"loc", "lastmod"}, 150<<20)
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	pr, err := NewReader(bytes.NewReader(data), int64(len(data)), "pages.parquet", input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = inputtest.ReadAll(pr)
	pr.Close()
	metrics.Read(sample)
	allocated := sample[0].Value.Uint64() - before
	want := `pages.parquet: row group 0, column "lastmod": corrupt or truncated file: data page: 157286400 bytes once decompressed, with the 157286400 bytes the file's other pages in use hold: more than the 268435456 a file may hold at once`
	if !errors.Is(err, input.ErrCorrupt) || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
	if allocated > 180<<20 {
		t.Errorf("%d bytes allocated to read a %d-byte file", allocated, len(data))
	}
}

// TestParquetDecimalScale: a DECIMAL column whose scale no decimal can
// have is refused when the file is opened: each of its values would be
// written with a digit per step of the scale (here 16 MiB a row).
func TestParquetDecimalScale(t *testing.T) {
	for scale, ok := range map[int]bool{2: true, -columnar.MaxScale: true, columnar.MaxScale: true, columnar.MaxScale + 1: false, 1 << 24: false, -1 << 24: false} {
		schema := parquet.NewSchema("x", parquet.Group{
			"loc":      parquet.String(),
			"priority": parquet.Decimal(scale, 9, parquet.Int32Type),
		})
		var buf bytes.Buffer
		w := parquet.NewWriter(&buf, schema)
		if _, err := w.WriteRows([]parquet.Row{{
			parquet.ByteArrayValue([]byte("https://www.example.com/")).Level(0, 0, 0),
			parquet.Int32Value(5).Level(0, 0, 1),
		}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		in := inputtest.WriteFile(t, "d.parquet", buf.Bytes())
		r, err := Open(in, input.Options{})
		if ok {
			if err != nil {
				t.Fatalf("scale %d: %v", scale, err)
			}
			if n, err := inputtest.ReadAll(r); n != 1 || err != nil {
				t.Errorf("scale %d: %d rows, %v", scale, n, err)
			}
			r.Close()
			continue
		}
		want := fmt.Sprintf(`column "priority" (priority field): unsupported column type DECIMAL(9,%d) of scale %d; want a scale from -76 to 76`, scale, scale)
		if !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), want) {
			if err == nil {
				r.Close()
			}
			t.Errorf("scale %d: %v\nwant …%s", scale, err, want)
		}
	}
}
