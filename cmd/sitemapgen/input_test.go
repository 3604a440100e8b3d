package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestInputFormats: CSV with a BOM, CRLF, reordered and extra columns and
// quoting; a gzipped text list; a headerless CSV; a renamed loc column; all
// read in the order given, rejects naming the right file and line.
func TestInputFormats(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"a.csv": []byte("\ufeffpriority,extra,LOC,lastmod\r\n" +
			"0.5,x," + base + "a1,2024-05-01\r\n" +
			"1,\"y,z\",\"" + base + "a2?q=\"\"v\"\"\",\r\n" +
			",," + base + "a3,\r\n"),
		"b.txt.gz": gz(t, base+"b1,with,commas\n\n"+base+"b2\nhttps://other.example/b3\n"),
		"c.csv":    []byte(base + "c1,2024-01-01,daily,0.1\n" + base + "c2\n"),
		"d.csv":    []byte("URL\n" + base + "d1\n"),
	}
	var args []string
	for _, n := range []string{"a.csv", "b.txt.gz", "c.csv"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, rejects := filepath.Join(dir, "out"), filepath.Join(dir, "rejects.csv")
	code, _, stderr := sitemapgen(t, "", append([]string{"generate", "--public-url", base, "--out", out, "--rejects", rejects}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	var got []string
	for _, u := range set.Shards[0].URLs {
		got = append(got, strings.TrimPrefix(u.Loc, base)+"|"+u.Lastmod+"|"+u.Changefreq+"|"+u.Priority)
	}
	want := []string{
		"a1|2024-05-01||0.5", `a2?q=%22v%22|||1.0`, "a3|||",
		"b1,with,commas|||", "b2|||",
		"c1|2024-01-01|daily|0.1", "c2|||",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("published:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	recs := readCSV(t, rejects)
	if len(recs) != 2 || recs[1][0] != args[1] || recs[1][1] != "4" || recs[1][2] != "out_of_scope" {
		t.Errorf("rejects = %q; want b.txt.gz line 4 out_of_scope", recs)
	}

	// A renamed loc column.
	p := filepath.Join(dir, "d.csv")
	os.WriteFile(p, files["d.csv"], 0o644)
	out2 := filepath.Join(dir, "out2")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out2, "--loc-column", "url", p); code != 0 {
		t.Fatalf("--loc-column: exit %d\n%s", code, stderr)
	}
	if s := xmltest.ReadSet(t, out2, base, "sitemap.xml", ""); s.Shards[0].URLs[0].Loc != base+"d1" {
		t.Errorf("--loc-column: got %+v", s.Shards[0].URLs)
	}
}

func TestCorruptGzip(t *testing.T) {
	dir := t.TempDir()
	data := gz(t, strings.Repeat(base+"page\n", 10000))
	data[len(data)/2] ^= 0xff
	p := filepath.Join(dir, "broken.csv.gz")
	os.WriteFile(p, data, 0o644)
	out := filepath.Join(dir, "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, p)
	if code != 1 || !strings.Contains(stderr, "broken.csv.gz") {
		t.Fatalf("exit %d, want 1 naming the file:\n%s", code, stderr)
	}
	leftNothing(t, out, "the failed run")
}

// TestRejectsOfEarlyFailure: a run that fails before it reads a row (a
// Parquet or Arrow input failing as it is opened, an --out that cannot be
// made) leaves its --rejects file a CSV: the header, not an empty file nor
// the rows of the run before. docs/output.md promises it for every failed run.
func TestRejectsOfEarlyFailure(t *testing.T) {
	dir := t.TempDir()
	notParquet := filepath.Join(dir, "part-0.parquet")
	notArrow := filepath.Join(dir, "part-0.arrows")
	good := filepath.Join(dir, "urls.csv")
	notFolder := filepath.Join(dir, "file")
	for p, data := range map[string]string{notParquet: "not parquet\n", notArrow: "not arrow\n", good: "loc,section\n" + base + "a,x\n", notFolder: "x"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not parquet", []string{"--out", filepath.Join(dir, "out"), notParquet}, "source,row,reason,value\n"},
		{"not arrow, grouped", []string{"--out", filepath.Join(dir, "out"), "--group-by", "section", notArrow}, "source,row,reason,value,group\n"},
		{"--out not a folder", []string{"--out", filepath.Join(notFolder, "out"), good}, "source,row,reason,value\n"},
	} {
		rejects := filepath.Join(dir, "rejects.csv")
		if err := os.WriteFile(rejects, []byte("source,row,reason,value\nlast,2,night's,run\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"generate", "--public-url", base, "--rejects", rejects}, tc.args...)
		code, _, stderr := sitemapgen(t, "", args...)
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1:\n%s", tc.name, code, stderr)
		}
		if got, _ := os.ReadFile(rejects); string(got) != tc.want {
			t.Errorf("%s: rejects %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestColumnMappedTwice: one column mapped to two fields (--lastmod-column
// loc on loc,lastmod) is a usage error naming both flags and the column,
// for CSV, Parquet and Arrow: it used to publish with no lastmod, the file's
// lastmod column ignored and a warning on every row. The same name in two
// flags is found before anything is read; a name that matches another's
// column case-insensitively (LOC), once the columns are known.
func TestColumnMappedTwice(t *testing.T) {
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(csvFile, []byte("loc,lastmod\n"+base+"a,2024-01-01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join("..", "..", "testdata", "columnar")
	for _, in := range []string{csvFile, filepath.Join(fixtures, "parquetgo_zstd_dict_date.parquet"), filepath.Join(fixtures, "rows.arrow")} {
		for _, tc := range []struct {
			flags []string
			want  string
		}{
			{[]string{"--lastmod-column", "loc"}, `--loc-column and --lastmod-column both name the column "loc"`},
			{[]string{"--loc-column", "loc", "--priority-column", " loc"}, `--loc-column and --priority-column both name the column "loc"`},
			{[]string{"--lastmod-column", "LOC"}, `("loc") matches both the loc column name "loc" (--loc-column) and the lastmod column name "LOC" (--lastmod-column)`},
		} {
			out := filepath.Join(dir, "out")
			rep := filepath.Join(dir, "report.json")
			if err := os.WriteFile(rep, []byte("last night's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"generate", "--public-url", base, "--out", out, "--report", rep, in}, tc.flags...)
			code, _, stderr := sitemapgen(t, "", args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s %q: exit %d, want 2 saying %s:\n%s", filepath.Base(in), tc.flags, code, tc.want, stderr)
			}
			if b, _ := os.ReadFile(rep); string(b) != "last night's\n" {
				t.Errorf("%s %q: the usage error changed the report", filepath.Base(in), tc.flags)
			}
			leftNothing(t, out, "the refused run")
		}
	}
}

// TestMixedFolder: the CSV and text files of a folder holding Parquet or
// Arrow files are not read (a folder stands for those), and no longer
// silently: a warning names them and the report counts them. It used to
// read 1 file of 4 without a word.
func TestMixedFolder(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "export")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	arrow, err := os.ReadFile(filepath.Join("..", "..", "testdata", "columnar", "rows.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"a.arrow": arrow, "b.csv": []byte("loc\n" + base + "b\n"), "c.csv.gz": gz(t, "loc\n"+base+"c\n"), "d.txt": []byte(base + "d\n")} {
		if err := os.WriteFile(filepath.Join(folder, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := filepath.Join(dir, "report.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(dir, "out"), "--report", rep, folder)
	want := `skipped=3 files="b.csv, c.csv.gz, d.txt"`
	if code != 0 || !strings.Contains(stderr, "level=WARN msg=\"skipped the CSV and text files of a folder") ||
		!strings.Contains(stderr, "folder="+folder) || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want 0 and a warning naming the folder and %s:\n%s", code, want, stderr)
	}
	r := readReport(t, rep)
	if r.Warnings.ByReason[pipeline.FolderFileSkipped] != 3 || len(r.Inputs) != 1 {
		t.Errorf("report: warnings %v, %d inputs; want %s 3, 1 input", r.Warnings.ByReason, len(r.Inputs), pipeline.FolderFileSkipped)
	}
	// A glob for each kind reads them all, without a warning.
	code, _, stderr = sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(dir, "out"), "--report", rep,
		filepath.Join(folder, "*.arrow"), filepath.Join(folder, "*.csv*"), filepath.Join(folder, "*.txt"))
	if r := readReport(t, rep); code != 0 || len(r.Inputs) != 4 || r.Warnings.ByReason[pipeline.FolderFileSkipped] != 0 || strings.Contains(stderr, "skipped the CSV") {
		t.Fatalf("globs: exit %d, %d inputs, warnings %v:\n%s", code, len(r.Inputs), r.Warnings.ByReason, stderr)
	}
}

// TestRepeatedInput: a file given twice (here named and matched by a glob)
// is a usage error naming it, before anything is written; without the check
// every URL of it would be published twice.
func TestRepeatedInput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "urls.csv")
	if err := os.WriteFile(p, []byte("loc\n"+base+"a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, p, filepath.Join(dir, "*.csv"))
	if code != 2 || !strings.Contains(stderr, "input given more than once: \""+p+"\"") || !strings.Contains(stderr, "is the same file as") {
		t.Fatalf("exit %d, want 2 naming %s:\n%s", code, p, stderr)
	}
	leftNothing(t, out, "the refused run")
}

// writeLongLines writes a CSV with rows before, between and after a line
// whose loc is n bytes and one whose lastmod is n bytes.
func writeLongLines(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("loc,lastmod\n")
	for i := range 1000 {
		fmt.Fprintf(w, "%sa%d,2024-01-01\n", base, i)
	}
	w.WriteString(base + "long")
	w.Write(bytes.Repeat([]byte("x"), n-len(base)-4))
	w.WriteString(",2024-01-01\n")
	fmt.Fprintf(w, "%sb,2024-01-02\n", base)
	w.WriteString(base + "c,")
	w.Write(bytes.Repeat([]byte("1"), n))
	w.WriteString("\n")
	for i := range 1000 {
		fmt.Fprintf(w, "%sd%d,2024-01-03\n", base, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLongLine: a line over the 16 MiB record limit is a rejected row, not
// a failed run: the rows after it are published, the report adds up, the
// rejects file names the line with its value cut, and the memory the line
// costs does not grow with its length.
func TestLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 2 x 40 MiB")
	}
	dir := t.TempDir()
	var allocated [2]uint64
	for k, n := range []int{20 << 20, 60 << 20} {
		in := filepath.Join(dir, fmt.Sprintf("long%d.csv", k))
		writeLongLines(t, in, n)
		out := filepath.Join(dir, fmt.Sprintf("out%d", k))
		report, rejects := filepath.Join(dir, "report.json"), filepath.Join(dir, "rejects.csv")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report, "--rejects", rejects, in)
		runtime.ReadMemStats(&after)
		os.Remove(in)
		if code != 0 {
			t.Fatalf("%d MiB: exit %d\n%s", n>>20, code, stderr)
		}
		allocated[k] = after.TotalAlloc - before.TotalAlloc
		rep := readReport(t, report)
		if rep.Rows != 2003 || rep.URLs != 2001 || rep.Rejected.Total != 2 || rep.Rejected.ByReason["loc_too_long"] != 1 || rep.Rejected.ByReason["record_too_long"] != 1 {
			t.Fatalf("%d MiB: rows=%d urls=%d rejected=%+v", n>>20, rep.Rows, rep.URLs, rep.Rejected)
		}
		set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
		urls := set.Shards[0].URLs
		if len(urls) != 2001 || urls[1000].Loc != base+"b" || urls[1001].Loc != base+"d0" || urls[2000].Loc != base+"d999" {
			t.Fatalf("%d MiB: %d URLs published, around the long lines: %+v", n>>20, len(urls), urls[999:min(len(urls), 1003)])
		}
		recs := readCSV(t, rejects)
		if len(recs) != 3 {
			t.Fatalf("%d MiB: %d rejects records, want 3", n>>20, len(recs))
		}
		long, other := recs[1], recs[2]
		if long[0] != in || long[1] != "1002" || long[2] != "loc_too_long" || !strings.HasPrefix(long[3], base+"longxxx") ||
			!strings.HasSuffix(long[3], fmt.Sprintf("x…[cut: %d bytes]", n)) || len(long[3]) > 4<<10 {
			t.Errorf("%d MiB: rejects row %.80q…", n>>20, long)
		}
		if other[1] != "1004" || other[2] != "record_too_long" || other[3] != base+"c" {
			t.Errorf("%d MiB: rejects row %.80q…", n>>20, other)
		}
	}
	t.Logf("allocated in all: %.1f MiB for 20 MiB lines, %.1f MiB for 60 MiB lines", float64(allocated[0])/(1<<20), float64(allocated[1])/(1<<20))
	if allocated[1] > allocated[0]+4<<20 {
		t.Errorf("memory grows with the line: %d bytes allocated for 20 MiB lines, %d for 60 MiB", allocated[0], allocated[1])
	}
}

// TestColumnarLongValues: a Parquet or Arrow value over 64 KiB is a
// rejected row, as a CSV record over its limit: the rows around it are
// published, the report adds up, the rejects file names the row with its
// reason and its loc cut.
func TestColumnarLongValues(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		Loc     string  `parquet:"loc"`
		Lastmod *string `parquet:"lastmod,optional"`
	}
	var rows []row
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, {Name: "lastmod", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	for _, r := range inputtest.LongValues() {
		rb.Field(0).(*array.StringBuilder).Append(r[0])
		if r[1] == "" {
			rows = append(rows, row{r[0], nil})
			rb.Field(1).AppendNull()
		} else {
			rows = append(rows, row{r[0], &r[1]})
			rb.Field(1).(*array.StringBuilder).Append(r[1])
		}
	}
	for _, in := range []string{
		inputtest.WriteParquet(t, "long.parquet", rows),
		inputtest.WriteArrow(t, "long.arrows", []arrow.RecordBatch{rb.NewRecordBatch()}, true),
	} {
		out := filepath.Join(dir, "out"+filepath.Ext(in))
		report, rejects := filepath.Join(dir, "report.json"), filepath.Join(dir, "rejects.csv")
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--report", report, "--rejects", rejects, in)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", in, code, stderr)
		}
		rep := readReport(t, report)
		if rep.Rows != 5 || rep.URLs != 2 || rep.Rejected.Total != 3 || rep.Rejected.ByReason["loc_too_long"] != 2 || rep.Rejected.ByReason["record_too_long"] != 1 {
			t.Fatalf("%s: rows=%d urls=%d rejected=%+v", in, rep.Rows, rep.URLs, rep.Rejected)
		}
		set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
		if urls := set.Shards[0].URLs; len(urls) != 2 || urls[0].Loc != base+"a" || urls[1].Loc != base+"c" {
			t.Fatalf("%s: published %+v", in, urls)
		}
		recs := readCSV(t, rejects)
		long := inputtest.LongValues()
		want := [][]string{
			{"source", "row", "reason", "value"},
			{in, "2", "loc_too_long", long[1][0][:4000] + fmt.Sprintf("…[cut: %d bytes]", len(long[1][0]))},
			{in, "3", "record_too_long", base + "b"},
			{in, "4", "loc_too_long", long[3][0]},
		}
		if fmt.Sprint(recs) != fmt.Sprint(want) {
			t.Errorf("%s: rejects %.300q…\nwant %.300q…", in, recs, want)
		}
	}
}
