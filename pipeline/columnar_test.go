package pipeline

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)

// wantDatetime is what rows_datetime.csv publishes: the exact entries.
var wantDatetime = []string{
	"a|2024-05-01T10:20:30Z|daily|0.5",
	"b?x=1&y=2|2024-05-02T00:00:00Z|weekly|1.0",
	"%C3%BCmlat.html|||",
	`it's/%22quoted%22|2023-12-31T23:59:59.123Z|monthly|0.25`,
	"relative/path|2020-02-29T12:00:00Z|never|0.0",
	"c|2024-06-15T08:00:00Z||0.75",
	"d||yearly|0.1",
	"e/f/g|2019-07-04T16:45:00.5Z||0.9",
	"h|2024-05-01T10:20:30Z|daily|0.5",
	"i|2001-01-01T00:00:00Z|hourly|",
	"j|||0.3",
	"k%201|2024-03-10T02:30:00Z|always|0.6",
	"l|2024-05-01T10:20:30Z|daily|0.5",
	"m|2024-11-30T23:00:00Z|weekly|0.4",
	"n||daily|0.5",
	"o|2022-08-08T08:08:08Z|monthly|0.8",
	"p|2024-05-01T10:20:30Z|daily|",
	"q|2018-01-01T00:00:00Z||0.2",
	"r|2024-05-01T10:20:30Z|daily|0.5",
	"s|2024-12-24T18:00:00Z|yearly|1.0",
}

func TestColumnarFixtures(t *testing.T) {
	wantDate := make([]string, len(wantDatetime))
	for i, e := range wantDatetime {
		f := strings.Split(e, "|")
		if len(f[1]) > 10 {
			f[1] = f[1][:10]
		}
		wantDate[i] = strings.Join(f, "|")
	}
	csvSet := map[string]*xmltest.Set{}
	for _, c := range []struct {
		name string
		want []string
	}{{"rows_datetime.csv", wantDatetime}, {"rows_date.csv", wantDate}} {
		s, _, _ := runInputs(t, Config{}, fixtures+c.name)
		if got := entryList(s); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Fatalf("%s entries:\n%s\nwant:\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		csvSet[c.name] = s
	}

	tests := []struct {
		file      string
		csv       string
		rows      int64
		groups    int    // row groups (Parquet)
		codec     string // compression of the loc column (Parquet)
		dict      bool   // the loc column is dictionary-encoded (Parquet)
		lastmodLT string // lastmod's logical type (Parquet)
	}{
		{"parquetgo_snappy_timestamp.parquet", "rows_datetime.csv", 22, 5, "SNAPPY", false, "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)"},
		{"parquetgo_zstd_dict_date.parquet", "rows_date.csv", 23, 1, "ZSTD", true, "DATE"},
		{"arrow_snappy_dict_timestamp.parquet", "rows_datetime.csv", 23, 5, "SNAPPY", true, "TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)"},
		{"arrow_zstd_plain_date.parquet", "rows_date.csv", 23, 5, "ZSTD", false, "DATE"},
		{"arrow_zstd_local_timestamp.parquet", "rows_datetime.csv", 23, 5, "ZSTD", true, "TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		{"rows.arrow", "rows_datetime.csv", 23, 0, "", false, ""},
		{"rows.arrows", "rows_datetime.csv", 23, 0, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			if tc.groups > 0 {
				checkParquetFixture(t, fixtures+tc.file, tc.groups, tc.codec, tc.dict, tc.lastmodLT)
			}
			s, rep, rejects := runInputs(t, Config{}, fixtures+tc.file)
			if !bytes.Equal(shardBytes(s), shardBytes(csvSet[tc.csv])) {
				t.Errorf("sitemap differs from the one of %s:\n%s", tc.csv, strings.Join(entryList(s), "\n"))
			}
			if rep.Rows != tc.rows || rep.URLs != 20 || rep.Rows != rep.URLs+rep.Rejected.Total {
				t.Errorf("rows %d urls %d rejected %d; want %d rows, 20 URLs", rep.Rows, rep.URLs, rep.Rejected.Total, tc.rows)
			}
			if rep.Warnings.ByReason["changefreq_invalid"] != 1 || rep.Warnings.Total != 1 {
				t.Errorf("warnings %v, want one changefreq_invalid", rep.Warnings)
			}
			// Rejects carry the 1-based row number in the file.
			wantRejects := "out_of_scope,https://elsewhere.example.org/x"
			row := "7"
			if tc.rows == 22 {
				row = "6" // the null-loc row is not in this file
			}
			if !strings.Contains(rejects, fixtures+tc.file+","+row+","+wantRejects) {
				t.Errorf("rejects lack row %s out_of_scope:\n%s", row, rejects)
			}
		})
	}
}

// checkParquetFixture checks that a fixture has the shape its test claims.
func checkParquetFixture(t *testing.T, path string, groups int, codec string, dict bool, lastmodLT string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	if len(md.RowGroups) != groups {
		t.Errorf("%d row groups, want %d", len(md.RowGroups), groups)
	}
	loc := pf.Root().Column("loc").Index()
	cc := md.RowGroups[0].Columns[loc].MetaData
	if cc.Codec.String() != codec {
		t.Errorf("loc codec %s, want %s", cc.Codec, codec)
	}
	hasDict := false
	for _, e := range cc.Encoding {
		hasDict = hasDict || e == format.RLEDictionary || e == 2 // PLAIN_DICTIONARY (deprecated), as older writers mark it
	}
	if hasDict != dict {
		t.Errorf("loc encodings %v, dictionary want %v", cc.Encoding, dict)
	}
	lm := pf.Root().Column("lastmod")
	if got := lm.Type().LogicalType().String(); got != lastmodLT {
		t.Errorf("lastmod type %s, want %s", got, lastmodLT)
	}
	if !lm.Optional() {
		t.Errorf("lastmod is not nullable")
	}
}

// TestColumnarFolderAndGlob: a folder of Hive-style part files (and a glob
// over them) reads as the concatenation of the parts, in lexical path order,
// skipping _SUCCESS and hidden files.
func TestColumnarFolderAndGlob(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(fixtures + "arrow_snappy_dict_timestamp.parquet")
	if err != nil {
		t.Fatal(err)
	}
	date, err := os.ReadFile(fixtures + "parquetgo_zstd_dict_date.parquet")
	if err != nil {
		t.Fatal(err)
	}
	put := func(rel string, b []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Written out of order: the reader sorts.
	put("year=2025/part-00000.parquet", date)
	put("year=2024/part-00001.parquet", date)
	put("year=2024/part-00000.parquet", data)
	put("year=2024/_SUCCESS", nil)
	put("year=2024/.part-00000.parquet.crc", []byte("junk"))
	put("_temporary/part-00009.parquet", []byte("junk"))
	order := []string{"year=2024/part-00000.parquet", "year=2024/part-00001.parquet", "year=2025/part-00000.parquet"}
	var parts []string
	for _, rel := range order {
		ps, _, _ := runInputs(t, Config{}, filepath.Join(dir, rel))
		parts = append(parts, entryList(ps)...)
	}
	for _, in := range []string{dir, filepath.Join(dir, "year=*", "part-*.parquet")} {
		s, rep, _ := runInputs(t, Config{}, in)
		if len(rep.Inputs) != 3 {
			t.Fatalf("%s: inputs %v, want the 3 part files", in, rep.Inputs)
		}
		for i, r := range rep.Inputs {
			if r.Name != filepath.Join(dir, order[i]) {
				t.Errorf("%s: input %d is %s, want %s", in, i, r.Name, order[i])
			}
		}
		got := entryList(s)
		if len(got) != 60 {
			t.Fatalf("%s: %d entries, want 60", in, len(got))
		}
		// Same entries as the parts one by one, in order.
		if strings.Join(got, "\n") != strings.Join(parts, "\n") {
			t.Errorf("%s: entries differ from the parts in path order", in)
		}
	}
}

// TestColumnarMapping: --loc-column and friends map other names, found
// case-insensitively; unmapped extra columns are ignored.
func TestColumnarMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "renamed.parquet")
	type row struct {
		URL  string  `parquet:"URL"`
		Mod  *string `parquet:"modified,optional"`
		Prio float64 `parquet:"prio"`
		Loc  string  `parquet:"loc"` // not the mapped column: ignored
	}
	if err := parquet.WriteFile(path, []row{
		{URL: fixtureBase + "x", Mod: ptr("2024-01-02"), Prio: 0.3, Loc: "https://ignored.example/"},
		{URL: fixtureBase + "y", Prio: 2, Loc: "https://ignored.example/"},
	}); err != nil {
		t.Fatal(err)
	}
	var cols [input.NumColumns]string
	cols[input.Loc], cols[input.Lastmod], cols[input.Priority] = "url", "MODIFIED", "prio"
	s, rep, _ := runInputs(t, Config{Columns: cols}, path)
	want := "x|2024-01-02||0.3\ny|||"
	if got := strings.Join(entryList(s), "\n"); got != want {
		t.Errorf("entries:\n%s\nwant:\n%s", got, want)
	}
	if rep.Warnings.ByReason["priority_invalid"] != 1 {
		t.Errorf("warnings %v, want priority_invalid for 2", rep.Warnings)
	}
}

// TestParquetBatchesAreRowGroupIndependent: whatever the chunk size, the
// rows come out in order with their row numbers, across row groups and pages.
func TestParquetBatchesAreRowGroupIndependent(t *testing.T) {
	for _, chunk := range []int{1, 7, 100, 1 << 20} {
		pr, err := pqread.Open(fixtures+"arrow_snappy_dict_timestamp.parquet", input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		var lines []int64
		var locs []string
		for {
			var b input.Batch
			err := pr.Fill(&b, chunk)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Source != fixtures+"arrow_snappy_dict_timestamp.parquet" {
				t.Fatalf("source %q", b.Source)
			}
			lines = append(lines, b.Line...)
			for _, l := range b.Fields[input.Loc] {
				locs = append(locs, string(l))
			}
		}
		pr.Close()
		if len(lines) != 23 || pr.Rows() != 23 {
			t.Fatalf("chunk %d: %d rows", chunk, len(lines))
		}
		for i, l := range lines {
			if l != int64(i+1) {
				t.Fatalf("chunk %d: row %d has line %d", chunk, i, l)
			}
		}
		if locs[0] != fixtureBase+"a" || locs[4] != "" || locs[22] != fixtureBase+"s" {
			t.Errorf("chunk %d: locs %q", chunk, locs)
		}
	}
}
