package pipeline

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/arrowread"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)

// TestColumnarTruncated: every fixture cut at several offsets is an error
// naming the file and input.ErrCorrupt (or, cut to nothing, an empty input), never
// a panic nor a success.
func TestColumnarTruncated(t *testing.T) {
	for _, name := range []string{
		"parquetgo_snappy_timestamp.parquet", "parquetgo_zstd_dict_date.parquet",
		"arrow_snappy_dict_timestamp.parquet", "arrow_zstd_plain_date.parquet", "rows.arrow", "rows.arrows",
	} {
		data, err := os.ReadFile(fixtures + name)
		if err != nil {
			t.Fatal(err)
		}
		n := len(data)
		for _, cut := range []int{1, 4, 7, 100, n / 3, n / 2, n - 100, n - 9, n - 8, n - 1} {
			path := inputtest.WriteFile(t, name, data[:cut])
			src, err := openColumnar(path)
			if err != nil {
				if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s cut at %d: open error %v, want input.ErrCorrupt naming the file", name, cut, err)
				}
				continue
			}
			rows, err := inputtest.ReadAll(src)
			src.Close()
			if name == "rows.arrows" && err == nil && rows < 23 {
				// A stream cut between two messages is a shorter stream:
				// the format cannot tell. Only cuts inside a message fail.
				if rows == 10 || rows == 0 {
					continue
				}
			}
			if name == "rows.arrows" && err == nil && rows == 23 && cut >= n-8 {
				continue // only the end-of-stream marker is cut: every batch is whole
			}
			if err == nil {
				t.Errorf("%s cut at %d of %d: read %d rows without an error", name, cut, n, rows)
			} else if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s cut at %d: %v, want input.ErrCorrupt naming the file", name, cut, err)
			}
		}
	}
	// Through the pipeline: exit with the file named, nothing published.
	data := inputtest.ReadFixture(t, "arrow_zstd_plain_date.parquet")
	p := inputtest.WriteFile(t, "cut.parquet", data[:len(data)/2])
	failRun(t, p, p, "corrupt or truncated")
}

// openColumnar opens the Parquet (.parquet) or Arrow file path with its
// reader.
func openColumnar(path string) (input.Source, error) {
	if strings.HasSuffix(path, ".parquet") {
		pr, err := pqread.Open(path, input.Options{})
		if err != nil {
			return nil, err
		}
		return pr, nil
	}
	ar, err := arrowread.Open(path, input.Options{})
	if err != nil {
		return nil, err
	}
	return ar, nil
}

// TestParquetCorruptPage: damaged compressed page data fails naming the
// file, row group and column.
func TestParquetCorruptPage(t *testing.T) {
	for _, name := range []string{"parquetgo_snappy_timestamp.parquet", "arrow_zstd_plain_date.parquet", "parquetgo_zstd_dict_date.parquet"} {
		data, err := os.ReadFile(fixtures + name)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		rg := len(pf.Metadata().RowGroups) - 1
		loc := pf.Root().Column("loc").Index()
		md := pf.Metadata().RowGroups[rg].Columns[loc].MetaData
		start := md.DataPageOffset
		if md.DictionaryPageOffset > 0 {
			start = md.DictionaryPageOffset
		}
		// Past the page header, into the compressed bytes.
		bad := bytes.Clone(data)
		for i := start + 24; i < start+md.TotalCompressedSize && i < start+64; i++ {
			bad[i] ^= 0x5a
		}
		path := inputtest.WriteFile(t, name, bad)
		err = failRun(t, path, path, "corrupt or truncated", `column "loc"`)
		if !errors.Is(err, input.ErrCorrupt) {
			t.Errorf("%v: not ErrCorrupt", err)
		}
		t.Log(err)
	}
}

func TestColumnarNotThatFormat(t *testing.T) {
	csv := []byte("loc\n" + fixtureBase + "a\n")
	for _, name := range []string{"x.parquet", "x.arrow", "x.arrows", "x.feather"} {
		p := inputtest.WriteFile(t, name, csv)
		err := failRun(t, p, p, "not a readable")
		if !errors.Is(err, input.ErrCorrupt) {
			t.Errorf("%v: not ErrCorrupt", err)
		}
	}
	// A Parquet file named .arrow and the reverse: the format follows the
	// name, the content does not match it.
	pq := inputtest.ReadFixture(t, "arrow_snappy_dict_timestamp.parquet")
	failRun(t, inputtest.WriteFile(t, "x.arrow", pq), "not a readable Arrow")
	ar := inputtest.ReadFixture(t, "rows.arrow")
	failRun(t, inputtest.WriteFile(t, "x.parquet", ar), "not a readable Parquet")
	// An empty Parquet file (zero bytes) is not Parquet either.
	failRun(t, inputtest.WriteFile(t, "empty.parquet", nil), "empty.parquet")
}

// TestColumnarSchemaErrors: a missing loc column, a loc of the wrong type, a
// nested loc, a mapped column that is missing, all with a clear message.
func TestColumnarSchemaErrors(t *testing.T) {
	type intLoc struct {
		Loc int64 `parquet:"loc"`
	}
	type listLoc struct {
		Loc []string `parquet:"loc,list"`
	}
	type repeatedLoc struct {
		Loc []string `parquet:"loc"`
	}
	type inner struct {
		URL string `parquet:"url"`
	}
	type groupLoc struct {
		Loc inner `parquet:"loc"`
	}
	type noLoc struct {
		URL string `parquet:"url"`
	}
	type badLastmod struct {
		Loc     string  `parquet:"loc"`
		Lastmod float64 `parquet:"lastmod"`
	}
	tests := []struct {
		path string
		is   error
		want []string
	}{
		{inputtest.WriteParquet(t, "int.parquet", []intLoc{{1}}), input.ErrColumnType, []string{`column "loc"`, "INT(64", "want a string"}},
		{inputtest.WriteParquet(t, "list.parquet", []listLoc{{[]string{"a"}}}), input.ErrColumnType, []string{`column "loc"`, "LIST", "nested"}},
		{inputtest.WriteParquet(t, "repeated.parquet", []repeatedLoc{{[]string{"a"}}}), input.ErrColumnType, []string{`column "loc"`, "repeated"}},
		{inputtest.WriteParquet(t, "group.parquet", []groupLoc{{inner{"a"}}}), input.ErrColumnType, []string{`column "loc"`, "nested"}},
		{inputtest.WriteParquet(t, "noloc.parquet", []noLoc{{"a"}}), input.ErrNoColumn, []string{`"loc"`, "url", "--loc-column"}},
		{inputtest.WriteParquet(t, "lastmod.parquet", []badLastmod{{fixtureBase, 1}}), input.ErrColumnType, []string{`column "lastmod"`, "DOUBLE", "DATE or TIMESTAMP"}},
	}
	for _, tc := range tests {
		err := failRun(t, tc.path, append([]string{tc.path}, tc.want...)...)
		if !errors.Is(err, tc.is) {
			t.Errorf("%v: not %v", err, tc.is)
		}
	}

	// A mapped optional column the file lacks is an error, as for CSV.
	p := inputtest.WriteParquet(t, "ok.parquet", []noLoc{{fixtureBase + "a"}})
	var cols [input.NumColumns]string
	cols[input.Loc], cols[input.Lastmod] = "url", "modified"
	_, err := pqread.Open(p, input.Options{Columns: cols})
	if !errors.Is(err, input.ErrNoColumn) || !strings.Contains(err.Error(), `"modified"`) {
		t.Errorf("mapped lastmod missing: %v", err)
	}

	// Arrow: a nested loc and a numeric loc.
	for _, typ := range []arrow.DataType{arrow.ListOf(arrow.BinaryTypes.String), arrow.PrimitiveTypes.Int32} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: typ, Nullable: true}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).AppendNull()
		rec := b.NewRecordBatch()
		var buf bytes.Buffer
		w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		w.Close()
		path := inputtest.WriteFile(t, "typed.arrow", buf.Bytes())
		err = failRun(t, path, path, `column "loc"`, typ.String())
		if !errors.Is(err, input.ErrColumnType) {
			t.Errorf("%v: not ErrColumnType", err)
		}
	}
}

// TestColumnarEmpty: a file without rows is an error when named, fine as
// one part of a folder that has rows elsewhere.
func TestColumnarEmpty(t *testing.T) {
	type row struct {
		Loc string `parquet:"loc"`
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "part-0.parquet")
	if err := parquet.WriteFile(empty, []row{}); err != nil {
		t.Fatal(err)
	}
	failRun(t, empty, empty, "no data rows")
	if err := parquet.WriteFile(filepath.Join(dir, "part-1.parquet"), []row{{fixtureBase + "a"}}); err != nil {
		t.Fatal(err)
	}
	s, _, _ := runInputs(t, Config{}, dir)
	if got := entryList(s); len(got) != 1 {
		t.Errorf("entries %v", got)
	}
	emptyDir := t.TempDir()
	if err := parquet.WriteFile(filepath.Join(emptyDir, "part-0.parquet"), []row{}); err != nil {
		t.Fatal(err)
	}
	failRun(t, emptyDir, emptyDir, "no data rows")
	failRun(t, filepath.Join(emptyDir, "*.arrow"), "no file matches")
}

// TestParquetClaimsBounded: lengths and counts a corrupt file claims are
// checked against the file before anything is allocated for them. parquet-go
// allocated the footer length a file claims (4 GiB for a 6 KiB file found by
// FuzzParquetReader, kept in pqread's testdata/fuzz/FuzzParquetReader/ with the other
// inputs that cost gigabytes or minutes; `go test` runs them all under the
// fuzz target's time and allocation limits).
func TestParquetClaimsBounded(t *testing.T) {
	good, err := os.ReadFile(fixtures + "arrow_snappy_dict_timestamp.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func([]byte){
		"footer length 4 GiB": func(b []byte) { binary.LittleEndian.PutUint32(b[len(b)-8:], 0xfffffff0) },
		"footer length past the start": func(b []byte) {
			binary.LittleEndian.PutUint32(b[len(b)-8:], uint32(len(b)-8))
		},
	} {
		t.Run(name, func(t *testing.T) {
			data := bytes.Clone(good)
			edit(data)
			done := inputtest.BoundedCost(t, data)
			_, err := pqread.NewReader(bytes.NewReader(data), int64(len(data)), "bad.parquet", input.Options{})
			done()
			if !errors.Is(err, input.ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
		})
	}

}

// withFooter returns the Parquet file data with its footer metadata
// changed by edit.
func withFooter(t *testing.T, data []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	start := len(data) - 8 - n
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[start:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	edit(&md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data[:start]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// TestParquetClaimedRows: a file cannot claim rows out of proportion to its
// size (RLE could make it take hours), nor pages or chunks outside the file.
func TestParquetClaimedRows(t *testing.T) {
	good, err := os.ReadFile(fixtures + "parquetgo_zstd_dict_date.parquet")
	if err != nil {
		t.Fatal(err)
	}
	// The unchanged round trip reads.
	if _, err := inputtest.ReadAll(mustParquet(t, withFooter(t, good, func(*format.FileMetaData) {}))); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*format.FileMetaData){
		"rows":     func(md *format.FileMetaData) { md.RowGroups[0].NumRows = 1 << 40 },
		"negative": func(md *format.FileMetaData) { md.RowGroups[0].NumRows = -1 },
		"chunk past the end": func(md *format.FileMetaData) {
			md.RowGroups[0].Columns[0].MetaData.TotalCompressedSize = 1 << 30
		},
		"chunk offset": func(md *format.FileMetaData) {
			md.RowGroups[0].Columns[0].MetaData.DataPageOffset = -5
			md.RowGroups[0].Columns[0].MetaData.DictionaryPageOffset = 0
		},
		"more rows than pages": func(md *format.FileMetaData) { md.RowGroups[0].NumRows += 10 },
	} {
		t.Run(name, func(t *testing.T) {
			data := withFooter(t, good, edit)
			done := inputtest.BoundedCost(t, data)
			pr, err := pqread.NewReader(bytes.NewReader(data), int64(len(data)), "bad.parquet", input.Options{})
			if err == nil {
				_, err = inputtest.ReadAll(pr)
				pr.Close()
			}
			done()
			if !errors.Is(err, input.ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}

// TestParquetChunkElsewhere: a column chunk whose data is in another file
// (file_path, as in a _metadata summary file) or encrypted is refused,
// naming the row group and the column, rather than read from this file's
// offsets.
func TestParquetChunkElsewhere(t *testing.T) {
	good, err := os.ReadFile(fixtures + "parquetgo_zstd_dict_date.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		edit func(*format.ColumnChunk)
		want string
	}{
		"file_path": {func(c *format.ColumnChunk) { c.FilePath = "../elsewhere.parquet" },
			`x.parquet: row group 0, column "loc": corrupt or truncated file: the column chunk is in another file (file_path "../elsewhere.parquet"), which sitemapgen does not read`},
		"encrypted": {func(c *format.ColumnChunk) { c.CryptoMetadata.Value = &format.EncryptionWithFooterKey{} },
			`x.parquet: row group 0, column "loc": corrupt or truncated file: the column chunk is encrypted, which sitemapgen does not read`},
	} {
		data := withFooter(t, good, func(md *format.FileMetaData) {
			for i := range md.RowGroups[0].Columns {
				tc.edit(&md.RowGroups[0].Columns[i])
			}
		})
		_, err := inputtest.ReadAll(mustParquet(t, data))
		if !errors.Is(err, input.ErrCorrupt) || err.Error() != tc.want {
			t.Errorf("%s: %v\nwant %s", name, err, tc.want)
		}
	}
}

func mustParquet(t *testing.T, data []byte) *pqread.Reader {
	t.Helper()
	pr, err := pqread.NewReader(bytes.NewReader(data), int64(len(data)), "x.parquet", input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	return pr
}
