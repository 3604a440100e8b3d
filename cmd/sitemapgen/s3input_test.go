package main

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/internal/s3test"
)

// putFiles uploads the files of the local folder dir (sub-folders
// included) under prefix in the bucket.
func (e *s3env) putFiles(t *testing.T, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s3test.Put(t, e.c, e.bucket, prefix+filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// inputRun is the output of one run to a local folder.
type inputRun struct {
	out, rejects, report string
}

// runTo runs generate on inputs (s3:// ones through endpoint) into a new
// folder and fails t unless it exits 0.
func runTo(t *testing.T, endpoint string, inputs []string, extra ...string) inputRun {
	t.Helper()
	dir := t.TempDir()
	r := inputRun{filepath.Join(dir, "out"), filepath.Join(dir, "rejects.csv"), filepath.Join(dir, "report.json")}
	args := append([]string{"generate", "--public-url", base, "--out", r.out, "--rejects", r.rejects, "--report", r.report,
		"--s3-endpoint", endpoint, "--s3-path-style"}, extra...)
	if code, _, stderr := sitemapgen(t, "", append(args, inputs...)...); code != 0 {
		t.Fatalf("generate %q: exit %d\n%s", inputs, code, stderr)
	}
	return r
}

var indexLastmod = regexp.MustCompile(`<lastmod>[^<]*</lastmod>`)

// sameOutput checks that two runs wrote the same files with the same bytes:
// sitemaps, robots lines and rejects byte for byte (the rejects' source
// column renamed as rename says), the index files but for their lastmods
// (the run's time: main has no --now yet); the manifests hold times too.
func sameOutput(t *testing.T, a, b inputRun, rename *strings.Replacer) {
	t.Helper()
	names := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	na, nb := names(a.out), names(b.out)
	if !slices.Equal(na, nb) {
		t.Fatalf("files %q, want %q", nb, na)
	}
	shards := 0
	for _, n := range na {
		if strings.HasSuffix(n, ".json") {
			continue
		}
		da, _ := os.ReadFile(filepath.Join(a.out, n))
		db, _ := os.ReadFile(filepath.Join(b.out, n))
		if strings.HasSuffix(n, ".xml") {
			da, db = indexLastmod.ReplaceAll(da, nil), indexLastmod.ReplaceAll(db, nil)
		} else {
			shards++
		}
		if !bytes.Equal(da, db) {
			t.Errorf("%s differs (%d and %d bytes)", n, len(da), len(db))
		}
	}
	ra, _ := os.ReadFile(a.rejects)
	rb, _ := os.ReadFile(b.rejects)
	if rename.Replace(string(ra)) != string(rb) {
		t.Errorf("rejects differ:\n%.500s\nwant\n%.500s", rb, rename.Replace(string(ra)))
	}
	if shards == 0 {
		t.Fatal("no sitemap written")
	}
}

// writeParts writes parts Parquet files of rows rows each, with a wide
// column no run reads, into a new folder, as a warehouse export does.
func writeParts(t *testing.T, parts, rows, rowGroup int) string {
	dir := t.TempDir()
	for i := range parts {
		g := bench.NewGenerator(uint64(i+1), base)
		g.Bad = 0.01
		var buf bytes.Buffer
		if err := bench.WriteWideParquet(&buf, g, rows, rowGroup, 200); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, "part-0000"+string(rune('0'+i))+"-c000.snappy.parquet")
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// neededBytes returns the bytes of the column chunks a run maps (loc,
// lastmod, changefreq, priority) and of the footer of the Parquet file.
func neededBytes(t *testing.T, path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	n := 8 + int64(binary.LittleEndian.Uint32(data[len(data)-8:])) // the footer
	for _, g := range pf.Metadata().RowGroups {
		for _, c := range g.Columns {
			if c.MetaData.PathInSchema[0] != "payload" {
				n += c.MetaData.TotalCompressedSize
			}
		}
	}
	return n
}

// TestS3InputParquetExport: a Spark-like export of 8 Parquet parts with a
// wide unused column, read from the bucket, gives the output the same files
// give from local disk, and fetches the mapped column chunks and footers
// only (at most 1.1x their bytes, the probe's reads included).
func TestS3InputParquetExport(t *testing.T) {
	e := newS3Env(t)
	dir := writeParts(t, 8, 25000, 10000)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	e.putFiles(t, dir, "export/date=2024-05-01/")
	local := runTo(t, e.ep, []string{dir})
	prefix := "s3://" + e.bucket + "/export/date=2024-05-01/"
	remote := runTo(t, e.ep, []string{prefix}, "--require-success")
	sameOutput(t, local, remote, strings.NewReplacer(dir+"/", prefix))

	rep := readReport(t, remote.report)
	var need, fetched int64
	for i, in := range rep.Inputs {
		name := strings.TrimPrefix(in.Name, prefix)
		need += neededBytes(t, filepath.Join(dir, name))
		fi, _ := os.Stat(filepath.Join(dir, name))
		if in.Size != fi.Size() || !strings.HasPrefix(in.ETag, `"`) || in.Fetched <= 0 || in.Rows != 25000 {
			t.Errorf("input %d: %+v; want size %d, an ETag, bytes fetched, 25000 rows", i, in, fi.Size())
		}
		fetched += in.Fetched
	}
	if len(rep.Inputs) != 8 || fetched != rep.BytesFetched {
		t.Fatalf("%d inputs fetching %d bytes, report says %d", len(rep.Inputs), fetched, rep.BytesFetched)
	}
	t.Logf("fetched %d bytes for %d needed (%.3fx) in %d requests", fetched, need, float64(fetched)/float64(need), rep.Requests)
	if float64(fetched) > 1.1*float64(need) {
		t.Errorf("fetched %d bytes, more than 1.1x the %d the mapped columns and footers hold", fetched, need)
	}
}

// TestS3InputFormats: CSV, .csv.gz, text and Arrow file and stream objects
// give the output the same local files give, named one by one; a prefix
// mixing formats reads its Parquet and Arrow objects in lexical order, as
// a local folder does.
func TestS3InputFormats(t *testing.T) {
	e := newS3Env(t)
	dir := t.TempDir()
	files := map[string][]byte{
		"a.csv":    []byte("\ufeffpriority,extra,LOC,lastmod\r\n0.5,x," + base + "a1,2024-05-01\r\n1,\"y,z\",\"" + base + "a2?q=\"\"v\"\"\",\r\nbad,," + base + "a3,\r\n"),
		"b.txt.gz": gz(t, base+"b1,with,commas\n\n"+base+"b2\nhttps://other.example/b3\n"),
		"c.csv.gz": gz(t, "loc,lastmod\n"+strings.Repeat(base+"c/x,2024-01-01\n", 20000)),
		"d.txt":    []byte(base + "d1\n" + base + "d2\n"),
	}
	for _, n := range []string{"rows.arrow", "rows.arrows", "lists.arrow", "parquetgo_snappy_timestamp.parquet", "arrow_zstd_plain_date.parquet", "rows_date.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "columnar", n))
		if err != nil {
			t.Fatal(err)
		}
		files["mixed/"+n] = data
	}
	os.Mkdir(filepath.Join(dir, "mixed"), 0o755)
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.putFiles(t, dir, "in/")
	url := "s3://" + e.bucket + "/in/"
	rename := strings.NewReplacer(dir+"/", url)
	var locals, remotes []string
	for _, n := range []string{"a.csv", "b.txt.gz", "c.csv.gz", "d.txt", "mixed/rows.arrow", "mixed/rows.arrows", "mixed/rows_date.csv"} {
		locals = append(locals, filepath.Join(dir, n))
		remotes = append(remotes, url+n)
	}
	sameOutput(t, runTo(t, e.ep, locals), runTo(t, e.ep, remotes), rename)
	// The folder: Parquet and Arrow files in lexical order, the CSV not.
	sameOutput(t, runTo(t, e.ep, []string{filepath.Join(dir, "mixed")}), runTo(t, e.ep, []string{url + "mixed/"}), rename)
	// A glob names any format.
	sameOutput(t, runTo(t, e.ep, []string{filepath.Join(dir, "mixed", "rows*")}), runTo(t, e.ep, []string{url + "mixed/rows*"}), rename)
}

// TestS3InputResumed: connections reset in the middle of objects (a
// Parquet column chunk, a gzip CSV stream, an Arrow file) are resumed with
// Range requests and the output is the same; 503 SlowDown is retried.
func TestS3InputResumed(t *testing.T) {
	e := newS3Env(t)
	dir := writeParts(t, 2, 20000, 8000)
	csvData := gz(t, "loc\n"+strings.Repeat(base+"some/long/path/of/a/page\n", 100000))
	os.WriteFile(filepath.Join(dir, "z.csv.gz"), csvData, 0o644)
	arrow, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "columnar", "rows.arrow"))
	os.WriteFile(filepath.Join(dir, "y.arrow"), arrow, 0o644)
	e.putFiles(t, dir, "in/")
	url := "s3://" + e.bucket + "/in/"
	var locals, remotes []string
	for _, n := range []string{"part-00000-c000.snappy.parquet", "part-00001-c000.snappy.parquet", "y.arrow", "z.csv.gz"} {
		locals = append(locals, filepath.Join(dir, n))
		remotes = append(remotes, url+n)
	}
	local := runTo(t, e.ep, locals)

	var mu sync.Mutex
	cut := map[string]bool{}
	p := s3test.NewCutProxy(t, e.ep, func(resp *http.Response, n int) int64 {
		// The first long answer for each object is cut in its middle.
		r := resp.Request
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodGet || r.URL.Query().Has("list-type") || resp.ContentLength < 2000 || cut[r.URL.Path] {
			return -1
		}
		cut[r.URL.Path] = true
		return resp.ContentLength / 2
	})
	remote := runTo(t, p.URL, remotes)
	if p.Cuts.Load() != int64(len(remotes)) {
		t.Fatalf("%d connections cut, want one per object (%d)", p.Cuts.Load(), len(remotes))
	}
	sameOutput(t, local, remote, strings.NewReplacer(dir+"/", url))

	slowed := 0
	sp := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
		if r.Method == http.MethodGet && n%2 == 1 && slowed < 3 { // three requests, retried once each
			slowed++
			return http.StatusServiceUnavailable, "SlowDown"
		}
		return 0, ""
	})
	sameOutput(t, local, runTo(t, sp.URL, remotes), strings.NewReplacer(dir+"/", url))
	if sp.Injected.Load() != 3 {
		t.Errorf("%d SlowDown answers, want 3", sp.Injected.Load())
	}
}

// failedRun runs generate on inputs through endpoint and checks that it
// exits 1 with one line naming the object (and want), and publishes
// nothing.
func failedRun(t *testing.T, endpoint, object, want string, inputs ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args := append([]string{"generate", "--public-url", base, "--out", out, "--s3-endpoint", endpoint, "--s3-path-style"}, inputs...)
	code, _, stderr := sitemapgen(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	var line string
	for l := range strings.SplitSeq(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "sitemapgen generate: ") {
			line = l
		}
	}
	if !strings.Contains(line, object) || !strings.Contains(line, want) {
		t.Errorf("error line %q: want it to name %s and say %q\n%s", line, object, want, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "sitemap.xml")); err == nil {
		t.Errorf("a failed run published %s", out)
	}
}

// TestS3InputFailures: a missing object, access denied, an object rewritten
// during the run, a prefix without _SUCCESS under --require-success, a
// prefix of CSV objects only and a Delta table each fail the run with one
// line naming the object; nothing is published.
func TestS3InputFailures(t *testing.T) {
	e := newS3Env(t)
	dir := writeParts(t, 2, 20000, 5000)
	e.putFiles(t, dir, "in/")
	url := "s3://" + e.bucket + "/in/"
	part := url + "part-00001-c000.snappy.parquet"

	t.Run("missing", func(t *testing.T) {
		failedRun(t, e.ep, url+"nothere.parquet", "no such object", url+"nothere.parquet")
	})
	t.Run("denied", func(t *testing.T) {
		p := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "part-00001-c000.snappy.parquet") {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		})
		failedRun(t, p.URL, part, "access denied", url)
	})
	t.Run("rewritten", func(t *testing.T) {
		// The second part is rewritten when its row groups are read: after
		// the listing, the probe and the first part.
		var gets atomic.Int64
		data, _ := os.ReadFile(filepath.Join(dir, "part-00000-c000.snappy.parquet"))
		p := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "part-00001-c000.snappy.parquet") && gets.Add(1) == 6 { // a row group's chunks, after the footer and the first ones
				s3test.Put(t, e.c, e.bucket, "in/part-00001-c000.snappy.parquet", data)
			}
			return 0, ""
		})
		failedRun(t, p.URL, part, "changed during the run", url)
	})
	t.Run("require-success", func(t *testing.T) {
		failedRun(t, e.ep, url, "no _SUCCESS marker", "--require-success", url)
		s3test.Put(t, e.c, e.bucket, "in/_SUCCESS", nil)
		runTo(t, e.ep, []string{url}, "--require-success")
	})
	t.Run("only-csv", func(t *testing.T) {
		// As for a local folder: say what to do, not only what is missing.
		s3test.Put(t, e.c, e.bucket, "csv/urls.csv", []byte("loc\nhttps://www.example.com/a\n"))
		csv := "s3://" + e.bucket + "/csv/"
		failedRun(t, e.ep, csv, "is a folder without .parquet or Arrow files; name the files to read", csv)
	})
	t.Run("delta", func(t *testing.T) {
		s3test.Put(t, e.c, e.bucket, "in/_delta_log/00000000000000000000.json", []byte("{}"))
		failedRun(t, e.ep, url, "Delta", url)
	})
}

// TestRequireSuccessLocal: --require-success refuses a local folder
// without _SUCCESS, too.
func TestRequireSuccessLocal(t *testing.T) {
	dir := writeParts(t, 1, 100, 100)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--require-success", dir)
	if code != 1 || !strings.Contains(stderr, "no _SUCCESS marker") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--require-success", dir); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// TestZeroByteParts: a zero-byte .parquet part in an export folder or under
// an s3:// prefix (writers leave them for empty partitions) is skipped with
// a warning naming it; a folder of nothing else has no data rows.
func TestZeroByteParts(t *testing.T) {
	dir := writeParts(t, 1, 100, 100)
	empty := filepath.Join(dir, "part-00009-c000.snappy.parquet")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, endpoint, arg, name string) {
		t.Helper()
		out := t.TempDir()
		report := filepath.Join(out, "report.json")
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(out, "out"), "--report", report,
			"--s3-endpoint", endpoint, "--s3-path-style", arg)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, "empty part file") || !strings.Contains(stderr, name) {
			t.Errorf("no warning naming %s:\n%s", name, stderr)
		}
		if rep := readReport(t, report); rep.Rows != 100 || len(rep.Inputs) != 1 {
			t.Errorf("rows %d from %d inputs, want 100 from 1", rep.Rows, len(rep.Inputs))
		}
	}
	t.Run("local", func(t *testing.T) {
		check(t, "http://127.0.0.1:1", dir, empty)
		only := t.TempDir()
		os.WriteFile(filepath.Join(only, "part-00000.parquet"), nil, 0o644)
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(t.TempDir(), "out"), only)
		if code != 1 || !strings.Contains(stderr, "no data rows") {
			t.Errorf("a folder of zero-byte parts: exit %d, want 1 saying no data rows\n%s", code, stderr)
		}
	})
	t.Run("s3", func(t *testing.T) {
		e := newS3Env(t)
		e.putFiles(t, dir, "in/")
		url := "s3://" + e.bucket + "/in/"
		check(t, e.ep, url, url+"part-00009-c000.snappy.parquet")
	})
}
