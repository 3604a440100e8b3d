package check_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/sink"
)

const base = "https://www.example.com/"

// writeInput writes rows realistic CSV rows, some of them bad, whose good
// URLs are all distinct (generate keeps duplicate input rows, and validate
// rightly reports them).
func writeInput(t testing.TB, dir string, seed uint64, rows int, bad float64) string {
	path := filepath.Join(dir, "in.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(bench.CSVHeader)
	g := bench.NewGenerator(seed, base)
	g.Bad = bad
	var buf []byte
	for i := range rows {
		buf = g.AppendCSV(buf[:0])
		if at := bytes.Index(buf, []byte(base)); at >= 0 {
			at += len(base)
			buf = slices.Insert(buf, at, []byte("r"+strconv.Itoa(i)+"/")...)
		}
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

type genOpts struct{ maxURLs, maxBytes, fanout int }

func generate(t testing.TB, in, out string, o genOpts) *pipeline.Report {
	t.Helper()
	pub, err := encode.ParseScope(base)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sink.NewLocal(out)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), pipeline.Config{
		Inputs: []string{in}, PublicURL: pub, Sink: s, Name: "sitemap",
		MaxURLs: o.maxURLs, MaxBytes: o.maxBytes, Fanout: o.fanout, GzipLevel: 1, Workers: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func validate(t testing.TB, dir string, lim check.Limits) *check.Report {
	t.Helper()
	pub, _ := encode.ParseScope(base)
	rep, err := check.Set(context.Background(), check.Dir(dir), "sitemap.xml", check.Options{
		Limits: lim, PublicURL: pub, RunRecords: 500, TempDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAcceptsWhatGenerateWrites is the property: for random inputs and
// limits, validate (with generate's limits) finds no problem in the set
// generate writes, and counts its URLs and files as the run reports them.
func TestAcceptsWhatGenerateWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	runs := 12
	if testing.Short() {
		runs = 4
	}
	for i := range runs {
		o := genOpts{maxURLs: 1 + rng.IntN(300), maxBytes: 4096 + rng.IntN(60000), fanout: 2 + rng.IntN(6)}
		rows := 1 + rng.IntN(3000)
		t.Run(fmt.Sprintf("%d-rows%d-urls%d-bytes%d-fanout%d", i, rows, o.maxURLs, o.maxBytes, o.fanout), func(t *testing.T) {
			dir := t.TempDir()
			in := writeInput(t, dir, uint64(i), rows, 0.05)
			out := filepath.Join(dir, "out")
			gen := generate(t, in, out, o)
			rep := validate(t, out, check.Limits{MaxURLs: o.maxURLs, MaxBytes: o.maxBytes, MaxEntries: o.fanout, MaxDepth: 20})
			if !rep.OK() {
				t.Fatalf("problems in a generated set: %v", rep.List[:min(len(rep.List), 10)])
			}
			if rep.URLs != gen.URLs || rep.Sitemaps != gen.Shards || rep.Indexes != gen.Indexes {
				t.Errorf("validate counted %d URLs, %d sitemaps, %d indexes; generate wrote %d, %d, %d",
					rep.URLs, rep.Sitemaps, rep.Indexes, gen.URLs, gen.Shards, gen.Indexes)
			}
		})
	}
}

// goodSet generates a set of several shards and returns its folder and names.
func goodSet(t *testing.T) (dir string, shards []string) {
	dir = filepath.Join(t.TempDir(), "out")
	in := writeInput(t, t.TempDir(), 7, 900, 0)
	generate(t, in, dir, genOpts{maxURLs: 200, maxBytes: 10485760, fanout: 1000})
	names, _ := filepath.Glob(filepath.Join(dir, "sitemap-0*.xml.gz"))
	for _, n := range names {
		shards = append(shards, filepath.Base(n))
	}
	if len(shards) != 5 {
		t.Fatalf("want 5 shards, got %v", shards)
	}
	if rep := validate(t, dir, check.Ours); !rep.OK() {
		t.Fatalf("the good set has problems: %v", rep.List)
	}
	return dir, shards
}

func appendFile(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGzipAsGzipReadsIt: a sitemap is read as gzip(1) reads it: members in
// turn, and zero bytes after the last (a block writer's padding) ignored.
func TestGzipAsGzipReadsIt(t *testing.T) {
	dir, shards := goodSet(t)
	appendFile(t, filepath.Join(dir, shards[0]), strings.Repeat("\x00", 700))
	data := readGz(t, filepath.Join(dir, shards[1]))
	half := bytes.Index(data[len(data)/2:], []byte("<url>")) + len(data)/2
	var b bytes.Buffer
	for _, part := range [][]byte{data[:half], data[half:]} {
		zw := gzip.NewWriter(&b)
		zw.Write(part)
		zw.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, shards[1]), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := validate(t, dir, check.Ours); !rep.OK() || rep.URLs != 900 {
		t.Fatalf("%d URLs, problems %v; want 900 and none", rep.URLs, rep.List)
	}
}

// TestDamagedGzipOneProblem: a sitemap damaged as a failed disk or upload
// leaves it (cut in the middle and padded with zeros to its length, or one
// bit flipped). The deflate decoder turns the damage into text (elements in
// the wrong place, URLs on another host, copies of earlier lines) before
// the stream's error or its checksum, at the end, says so: one problem is
// listed, the gzip stream's, also when the text stops the XML reader first
// and when it holds more problems than --max-problems.
func TestDamagedGzipOneProblem(t *testing.T) {
	var x bytes.Buffer
	x.WriteString(xml.Header + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range 30000 {
		fmt.Fprintf(&x, "<url><loc>%sp/%d/item</loc><lastmod>2024-05-01</lastmod><changefreq>daily</changefreq></url>\n", base, i)
	}
	x.WriteString("</urlset>\n")
	for _, damage := range []struct {
		name string
		do   func(b []byte)
	}{
		{"zero padded", func(b []byte) { clear(b[len(b)/2:]) }},
		{"bit flipped early", func(b []byte) { b[5000] ^= 0x10 }},
		{"bit flipped", func(b []byte) { b[20000] ^= 0x10 }},
		{"bit flipped late", func(b []byte) { b[60000] ^= 0x10 }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			writeGz(t, filepath.Join(dir, "a.xml.gz"), x.Bytes())
			b, err := os.ReadFile(filepath.Join(dir, "a.xml.gz"))
			if err != nil {
				t.Fatal(err)
			}
			damage.do(b)
			if err := os.WriteFile(filepath.Join(dir, "a.xml.gz"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			index := xml.Header + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` + base + `a.xml.gz</loc></sitemap></sitemapindex>`
			if err := os.WriteFile(filepath.Join(dir, "sitemap.xml"), []byte(index), 0o644); err != nil {
				t.Fatal(err)
			}
			pub, _ := encode.ParseScope(base)
			rep, err := check.Set(context.Background(), check.Dir(dir), "sitemap.xml", check.Options{
				Limits: check.Ours, PublicURL: pub, TempDir: t.TempDir(), MaxProblems: 3,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Problems != 1 || rep.ByCode[check.CodeGzip] != 1 || len(rep.List) != 1 || rep.Stopped {
				t.Fatalf("%d problems %v (stopped %v), want one bad_gzip: %v", rep.Problems, rep.ByCode, rep.Stopped, rep.List[:min(5, len(rep.List))])
			}
			if p := rep.List[0]; p.File != "a.xml.gz" {
				t.Errorf("%v: want a.xml.gz", p)
			}
		})
	}
}

func readGz(t *testing.T, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeGz(t *testing.T, path string, data []byte) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editShard rewrites the n-th <url> of a shard with edit.
func editShard(t *testing.T, path string, n int, edit func(url []byte) []byte) {
	data := readGz(t, path)
	urls := regexp.MustCompile(`<url>.*?</url>`).FindAllIndex(data, -1)
	u := urls[n]
	out := append(append(append([]byte(nil), data[:u[0]]...), edit(data[u[0]:u[1]])...), data[u[1]:]...)
	writeGz(t, path, out)
}

// TestInjectedDefects: each defect injected into a good set is caught,
// with the right code, file and line.
func TestInjectedDefects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(t *testing.T, dir string, shards []string) check.Limits
		want   check.Code
		file   int // index into shards of the file the problem names; -1: the root
	}{
		{"missing shard", func(t *testing.T, dir string, shards []string) check.Limits {
			os.Remove(filepath.Join(dir, shards[2]))
			return check.Ours
		}, check.CodeMissingFile, -1},
		{"orphan", func(t *testing.T, dir string, shards []string) check.Limits {
			b, _ := os.ReadFile(filepath.Join(dir, shards[0]))
			os.WriteFile(filepath.Join(dir, "sitemap-news-0099.xml.gz"), b, 0o644)
			return check.Ours
		}, check.CodeOrphan, -2},
		{"oversize shard: URLs", func(t *testing.T, dir string, shards []string) check.Limits {
			editShard(t, filepath.Join(dir, shards[0]), 0, func(u []byte) []byte {
				return slices.Concat(u, []byte("<url><loc>"+base+"extra</loc></url>"))
			})
			lim := check.Ours
			lim.MaxURLs = 200 // as generated
			return lim
		}, check.CodeTooManyURLs, 0},
		{"oversize shard: bytes", func(t *testing.T, dir string, shards []string) check.Limits {
			lim := check.Ours
			lim.MaxBytes = 0
			for _, s := range shards {
				lim.MaxBytes = max(lim.MaxBytes, len(readGz(t, filepath.Join(dir, s))))
			}
			// The last shard is the smallest: grow it past the largest.
			editShard(t, filepath.Join(dir, shards[4]), 0, func(u []byte) []byte {
				for i := range 10 {
					u = slices.Concat(u, []byte("<url><loc>"+base+strconv.Itoa(i)+strings.Repeat("x", 2000)+"</loc></url>"))
				}
				return u
			})
			return lim
		}, check.CodeTooManyBytes, 4},
		{"raw &", func(t *testing.T, dir string, shards []string) check.Limits {
			editShard(t, filepath.Join(dir, shards[3]), 10, func(u []byte) []byte {
				return bytes.Replace(u, []byte("</loc>"), []byte("?a=1&b=2</loc>"), 1)
			})
			return check.Ours
		}, check.CodeNotWellFormed, 3},
		{"out-of-scope URL", func(t *testing.T, dir string, shards []string) check.Limits {
			editShard(t, filepath.Join(dir, shards[4]), 3, func(u []byte) []byte {
				return bytes.Replace(u, []byte(base), []byte("https://elsewhere.example.org/"), 1)
			})
			return check.Ours
		}, "out_of_scope", 4},
		{"bad lastmod", func(t *testing.T, dir string, shards []string) check.Limits {
			editShard(t, filepath.Join(dir, shards[0]), 5, func(u []byte) []byte {
				return bytes.Replace(u, []byte("</loc>"), []byte("</loc><lastmod>2024-02-30</lastmod>"), 1)
			})
			return check.Ours
		}, check.CodeLastmodInvalid, 0},
		{"duplicate URL", func(t *testing.T, dir string, shards []string) check.Limits {
			first := regexp.MustCompile(`<url>.*?</url>`).Find(readGz(t, filepath.Join(dir, shards[0])))
			editShard(t, filepath.Join(dir, shards[2]), 7, func(u []byte) []byte { return slices.Concat(u, first) })
			return check.Ours
		}, check.CodeDuplicateURL, 2},
		{"bytes after the gzip stream", func(t *testing.T, dir string, shards []string) check.Limits {
			appendFile(t, filepath.Join(dir, shards[1]), "\x00\x00<url>")
			return check.Ours
		}, check.CodeGzip, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, shards := goodSet(t)
			lim := tc.inject(t, dir, shards)
			rep := validate(t, dir, lim)
			if rep.ByCode[tc.want] != 1 || rep.Problems != 1 {
				t.Fatalf("want exactly one %s problem, got %v", tc.want, rep.List)
			}
			p := rep.List[0]
			switch tc.file {
			case -1:
				if p.File != "sitemap.xml" || p.Line == 0 || !strings.Contains(p.Value, shards[2]) {
					t.Errorf("want the root index's entry for %s, got %v", shards[2], p)
				}
			case -2:
				if p.File != "sitemap-news-0099.xml.gz" {
					t.Errorf("wrong file: %v", p)
				}
			default:
				if p.File != shards[tc.file] {
					t.Errorf("want %s, got %v", shards[tc.file], p)
				}
			}
		})
	}
}
