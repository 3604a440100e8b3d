package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// Issue 22's done-when 3: a file the published set lists that was
// damaged, truncated, replaced or deleted at the destination is rewritten
// by the next run, with a warning naming it, and the set validates.

// repairDest is a destination the repair cases publish to.
type repairDest struct {
	args     func(extra ...string) []string
	snapshot func(t *testing.T) (dir string, files map[string][]byte)
	put      func(t *testing.T, name string, data []byte) // as another writer would
	remove   func(t *testing.T, name string)
}

// damages are what happens to a listed file between two nights; each
// returns the new bytes (nil: the file is deleted), given the file and
// another file of the set of the same kind.
var damages = []struct {
	name string
	do   func(data, other []byte) []byte
}{
	{"damaged", func(data, _ []byte) []byte {
		// The same size: only the ETag or the gzip trailer (or, for a small
		// index, its bytes) tells.
		d := bytes.Clone(data)
		d[len(d)-1] ^= 0xff
		return d
	}},
	{"truncated", func(data, _ []byte) []byte { return data[:len(data)/2] }},
	{"replaced", func(_, other []byte) []byte { return other }},
	{"missing", func([]byte, []byte) []byte { return nil }},
}

// repairInput writes 600 URLs and 20 news articles: at --max-urls 100 and
// --index-fanout 3, six shards and a news sitemap under three
// intermediate indexes.
func repairInput(t *testing.T) string {
	var b strings.Builder
	b.WriteString("loc,lastmod,news:publication_name,news:publication_language,news:publication_date,news:title\n")
	for i := range 600 {
		if i%30 == 0 {
			fmt.Fprintf(&b, "%snews/%d,2026-11-24,The Daily,en,2026-11-24T10:00:00Z,Title %d\n", base, i, i)
			continue
		}
		fmt.Fprintf(&b, "%spage/%d,2026-10-%02d,,,,\n", base, i, 1+i%28)
	}
	return inputtest.WriteFile(t, "in.csv", []byte(b.String()))
}

func runRepair(t *testing.T, dest func(t *testing.T, c int) repairDest) {
	in := repairInput(t)
	c := 0
	for _, kind := range []string{"shard", "index", "news"} {
		for _, dmg := range damages {
			c++
			t.Run(kind+" "+dmg.name, func(t *testing.T) {
				d := dest(t, c)
				gen := func() string {
					t.Helper()
					code, _, stderr := sitemapgen(t, "", d.args("--max-urls", "100", "--cut", "tight", "--index-fanout", "3",
						"--now", "2026-11-24T12:00:00Z", in)...)
					if code != 0 {
						t.Fatalf("generate: exit %d\n%s", code, stderr)
					}
					return stderr
				}
				gen()
				_, want := d.snapshot(t)
				var shards []string
				for n := range want {
					if strings.HasPrefix(n, "sitemap-0000") {
						shards = append(shards, n)
					}
				}
				slices.Sort(shards)
				// The file damaged, and another of its kind whose bytes replace it.
				victim, other := shards[0], shards[1]
				switch kind {
				case "index":
					victim, other = "sitemap-index-0001.xml", "sitemap-index-0002.xml"
				case "news":
					victim = "sitemap-news-0001.xml.gz"
				}
				if want[victim] == nil || want[other] == nil || victim == other {
					t.Fatalf("no %s to damage (%q, %q) in %d files", kind, victim, other, len(want))
				}
				if b := dmg.do(want[victim], want[other]); b != nil {
					d.put(t, victim, b)
				} else {
					d.remove(t, victim)
				}
				stderr := gen()
				if !strings.Contains(stderr, victim) {
					t.Errorf("no warning names %s:\n%s", victim, stderr)
				}
				dir, got := d.snapshot(t)
				for n, b := range want {
					if n != "sitemap.manifest.json" && !bytes.Equal(got[n], b) {
						t.Errorf("%s: not the bytes of the night before (%d bytes, want %d)", n, len(got[n]), len(b))
					}
				}
				if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, dir); code != 0 {
					t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
				}
			})
		}
	}
}

func TestRepairLocal(t *testing.T) {
	runRepair(t, func(t *testing.T, _ int) repairDest {
		out := t.TempDir()
		return repairDest{
			args: func(extra ...string) []string {
				return append([]string{"generate", "--public-url", base, "--out", out}, extra...)
			},
			snapshot: func(t *testing.T) (string, map[string][]byte) { return out, xmltest.Snapshot(t, out) },
			put: func(t *testing.T, name string, data []byte) {
				if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			remove: func(t *testing.T, name string) {
				if err := os.Remove(filepath.Join(out, name)); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func TestRepairS3(t *testing.T) {
	e := newS3Env(t)
	runRepair(t, func(t *testing.T, c int) repairDest {
		e := *e
		e.prefix = fmt.Sprintf("case%d/", c)
		return repairDest{
			args: func(extra ...string) []string { return e.args(e.ep, extra...) },
			snapshot: func(t *testing.T) (string, map[string][]byte) {
				dir, objs := e.download(t)
				files := map[string][]byte{}
				for n, o := range objs {
					files[n] = o.Data
				}
				return dir, files
			},
			put: func(t *testing.T, name string, data []byte) { s3test.Put(t, e.c, e.bucket, e.prefix+name, data) },
			remove: func(t *testing.T, name string) {
				if _, err := e.c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(e.prefix + name)}); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}
