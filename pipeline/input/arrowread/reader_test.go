package arrowread

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// TestArrowDuplicateColumn: a schema naming a mapped column twice is
// refused, naming the file and both columns, in the file and the stream
// format; an unmapped column may repeat.
func TestArrowDuplicateColumn(t *testing.T) {
	str := arrow.BinaryTypes.String
	for _, stream := range []bool{false, true} {
		for names, want := range map[[3]string]string{
			{"loc", "x", "loc"}:           `duplicate column: columns 1 ("loc") and 3 ("loc") both match the loc column name "loc"`,
			{"loc", "lastmod", "lastmod"}: `duplicate column: columns 2 ("lastmod") and 3 ("lastmod") both match the lastmod column name "lastmod"`,
			{"loc", "x", "x"}:             "",
		} {
			schema := arrow.NewSchema([]arrow.Field{{Name: names[0], Type: str}, {Name: names[1], Type: str}, {Name: names[2], Type: str}}, nil)
			rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
			for i := range 3 {
				rb.Field(i).(*array.StringBuilder).Append("https://www.example.com/")
			}
			in := inputtest.WriteArrow(t, "x.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, stream)
			r, err := Open(in, input.Options{})
			if want == "" {
				if err != nil {
					t.Fatalf("%q: %v", names, err)
				}
				if n, err := inputtest.ReadAll(r); err != nil || n != 1 {
					t.Fatalf("%q: %d rows, %v", names, n, err)
				}
				r.Close()
				continue
			}
			if !errors.Is(err, input.ErrDuplicateColumn) || !strings.HasPrefix(err.Error(), in+": "+want) {
				t.Errorf("stream %v %q: %v\nwant %s: %s…", stream, names, err, in, want)
			}
		}
	}
}

// TestArrowBadOffsets: string offsets or views that point outside their
// data (a corrupt file) fail the read with the record batch, the column and
// what is wrong, not a runtime error of a slice out of range.
func TestArrowBadOffsets(t *testing.T) {
	le32 := func(v ...int32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	le64 := func(v ...int64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	vals := []string{"https://www.example.com/a", "https://www.example.com/b"} // 25 bytes each
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	for _, tc := range []struct {
		name     string
		typ      arrow.DataType
		from, to []byte
		want     string
	}{
		{"decreasing", arrow.BinaryTypes.String, le32(0, 25, 50), le32(0, 40, 10), "bad value offsets: row 2 ends at offset 10, before it starts (40)"},
		{"past the data", arrow.BinaryTypes.String, le32(0, 25, 50), le32(0, 2147483647, 50), "bad value offsets: row 1 ends at offset 2147483647, past the 50 bytes of the data buffer"},
		{"negative", arrow.BinaryTypes.String, le32(0, 25, 50), le32(-8, 25, 50), "bad value offsets: row 1 starts at offset -8"},
		{"large", arrow.BinaryTypes.LargeString, le64(0, 25, 50), le64(0, 40, 10), "bad value offsets: row 2 ends at offset 10, before it starts (40)"},
		{"binary", arrow.BinaryTypes.Binary, le32(0, 25, 50), le32(0, 40, 10), "bad value offsets: row 2 ends at offset 10, before it starts (40)"},
		{"view buffer", arrow.BinaryTypes.StringView, append(le32(25), append([]byte("http"), le32(0, 25)...)...),
			append(le32(25), append([]byte("http"), le32(3, 25)...)...), "bad views: row 2 is in data buffer 3 of 1"},
		{"view range", arrow.BinaryTypes.StringView, append(le32(25), append([]byte("http"), le32(0, 25)...)...),
			append(le32(25), append([]byte("http"), le32(0, 30)...)...), "bad views: row 2 is at bytes 30 to 55 of the 50 of its data buffer"},
		{"dictionary", dictType, le32(0, 25, 50), le32(0, 40, 10), "bad value offsets: dictionary value 1 ends at offset 10, before it starts (40)"},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: tc.typ}}, nil)
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		for _, v := range vals {
			switch b := rb.Field(0).(type) {
			case *array.BinaryDictionaryBuilder:
				if err := b.AppendString(v); err != nil {
					t.Fatal(err)
				}
			case interface{ AppendString(string) }: // string, binary, large, view
				b.AppendString(v)
			}
		}
		in := inputtest.WriteArrow(t, "x.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, false)
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(data, tc.from); n != 1 {
			t.Fatalf("%s: %d copies of %x in the file", tc.name, n, tc.from)
		}
		if err := os.WriteFile(in, bytes.Replace(data, tc.from, tc.to, 1), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(in, input.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = inputtest.ReadAll(r)
		r.Close()
		want := in + `: record batch 0, column "loc": corrupt or truncated file: ` + tc.want
		if !errors.Is(err, input.ErrCorrupt) || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, want)
		}
	}
}

// TestArrowDecimalScale: a decimal128 column whose scale no decimal can
// have is refused when the input is opened: each of its values would be
// written with a digit per step of the scale (here 16 MiB a row).
func TestArrowDecimalScale(t *testing.T) {
	for scale, ok := range map[int32]bool{2: true, -columnar.MaxScale: true, columnar.MaxScale: true, columnar.MaxScale + 1: false, 1 << 24: false, -1 << 24: false} {
		dt := &arrow.Decimal128Type{Precision: 9, Scale: scale}
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, {Name: "priority", Type: dt}}, nil)
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		rb.Field(0).(*array.StringBuilder).Append("https://www.example.com/")
		rb.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(5))
		in := inputtest.WriteArrow(t, "d.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, false)
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
		want := fmt.Sprintf(`column "priority" (priority field): unsupported column type decimal(9, %d) of scale %d; want a scale from -76 to 76`, scale, scale)
		if !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), want) {
			if err == nil {
				r.Close()
			}
			t.Errorf("scale %d: %v\nwant …%s", scale, err, want)
		}
	}
}

// TestArrowBadListOffsets: a list column's values are checked like a flat
// column's before they are read.
func TestArrowBadListOffsets(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, {Name: "images", Type: arrow.ListOf(arrow.BinaryTypes.String)}}, nil)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	rb.Field(0).(*array.StringBuilder).Append("https://www.example.com/")
	images := rb.Field(1).(*array.ListBuilder)
	images.Append(true)
	images.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"https://www.example.com/a", "https://www.example.com/b"}, nil)
	in := inputtest.WriteArrow(t, "x.arrow", []arrow.RecordBatch{rb.NewRecordBatch()}, false)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	from, to := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0), 25), 50), []byte{0, 0, 0, 0, 40, 0, 0, 0, 10, 0, 0, 0}
	if n := bytes.Count(data, from); n != 1 {
		t.Fatalf("%d copies of the offsets", n)
	}
	if err := os.WriteFile(in, bytes.Replace(data, from, to, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(in, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = inputtest.ReadAll(r)
	want := in + `: record batch 0, column "images": corrupt or truncated file: bad value offsets: list value 1 ends at offset 10, before it starts (40)`
	if !errors.Is(err, input.ErrCorrupt) || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}
