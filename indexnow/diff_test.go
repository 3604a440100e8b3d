package indexnow

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/publish"
)

type files map[string][]byte

func (f files) Get(_ context.Context, name string) ([]byte, error) {
	if b, ok := f[name]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
}

func urlset(entries ...string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">` + "\n"))
	for _, e := range entries {
		zw.Write([]byte(e + "\n"))
	}
	zw.Write([]byte("</urlset>\n"))
	zw.Close()
	return b.Bytes()
}

func entry(loc, lastmod string) string {
	s := "<url><loc>" + loc + "</loc>"
	if lastmod != "" {
		s += "<lastmod>" + lastmod + "</lastmod>"
	}
	return s + "</url>"
}

func manifest(gen int64, names ...string) *publish.Manifest {
	m := &publish.Manifest{Generation: gen}
	for _, n := range names {
		m.Files = append(m.Files, publish.File{Name: n})
	}
	m.Files = append(m.Files, publish.File{Name: "sitemap.xml"})
	return m
}

func isShard(name string) bool { return strings.HasPrefix(name, "s-") }

// TestChanges: only the shards one generation lists and the other does not
// are read; an entry moved unchanged to another shard is no change; any
// field of an entry counts; the order is the new set's, then the removed.
func TestChanges(t *testing.T) {
	store := files{
		"s-1-a": urlset(entry("https://x.com/1", ""), entry("https://x.com/2", "2024-01-01")),
		"s-2-a": urlset(entry("https://x.com/3", ""), entry("https://x.com/4?a=1&amp;b=2", ""), entry("https://x.com/5", "")),
		"s-2-b": urlset(entry("https://x.com/3", ""), entry("https://x.com/4?a=1&amp;b=2", "2024-02-02"), entry("https://x.com/6", "")),
		"s-3-b": urlset(entry("https://x.com/5", ""), `<url><loc>https://x.com/7</loc><image:image><image:loc>https://x.com/i.png</image:loc></image:image></url>`),
		"s-3-c": urlset(entry("https://x.com/5", ""), `<url><loc>https://x.com/7</loc><image:image><image:loc>https://x.com/j.png</image:loc></image:image></url>`),
	}
	// "s-1-a" is in both: if it were read, its missing twin would fail.
	ch, err := Changes(context.Background(), store, isShard, manifest(1, "s-1-a", "s-2-a"), manifest(2, "s-1-a", "s-2-b", "s-3-b"), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://x.com/4?a=1&b=2", "https://x.com/6", "https://x.com/7"}
	if !slices.Equal(ch.URLs, want) || ch.Added != 2 || ch.Changed != 1 || ch.Removed != 0 || ch.Read != 3 {
		t.Errorf("night 2: %+v, want %q (1 changed, 2 added; 5 moved unchanged)", ch, want)
	}
	ch, err = Changes(context.Background(), store, isShard, manifest(2, "s-1-a", "s-2-b", "s-3-b"), manifest(3, "s-1-a", "s-3-c"), 100)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"https://x.com/7", "https://x.com/3", "https://x.com/4?a=1&b=2", "https://x.com/6"}
	if !slices.Equal(ch.URLs, want) || ch.Changed != 1 || ch.Removed != 3 {
		t.Errorf("night 3: %+v, want %q (an image changed, 3 removed)", ch, want)
	}
	ch, err = Changes(context.Background(), store, isShard, nil, manifest(1, "s-1-a", "s-2-a"), 100)
	if err != nil || ch.Added != 5 || len(ch.URLs) != 5 {
		t.Errorf("first run: %+v, %v; want its 5 URLs added", ch, err)
	}
	if _, err := Changes(context.Background(), store, isShard, nil, manifest(1, "s-1-a", "s-2-a"), 4); !errors.Is(err, ErrTooMany) {
		t.Errorf("5 URLs with a limit of 4: %v, want ErrTooMany", err)
	}
	if _, err := Changes(context.Background(), store, isShard, manifest(1, "s-9"), manifest(2, "s-1-a"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a replaced shard that is gone: %v, want fs.ErrNotExist", err)
	}
}

// TestEntriesHostile: what is not a sitemap is an error, never a panic nor
// an allocation beyond the protocol's size.
func TestEntriesHostile(t *testing.T) {
	defer func(n int) { maxSitemapBytes = n }(maxSitemapBytes)
	maxSitemapBytes = 1 << 20 // the bomb goes beyond in a blink
	seed := maphash.MakeSeed()
	nop := func(string, uint64) error { return nil }
	for name, data := range map[string][]byte{
		"not xml":       []byte("hello"),
		"wrong root":    []byte("<sitemapindex><sitemap><loc>x</loc></sitemap></sitemapindex>"),
		"no loc":        []byte("<urlset><url><lastmod>2024-01-01</lastmod></url></urlset>"),
		"unclosed":      []byte("<urlset><url><loc>a</loc>"),
		"broken gzip":   urlset(entry("https://x.com/1", ""))[:20],
		"gzip bomb":     bomb(),
		"stray element": []byte("<urlset><x/></urlset>"),
	} {
		if err := Entries(data, seed, nop); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// bomb is a gzip stream of a sitemap whose text goes beyond
// maxSitemapBytes.
func bomb() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte("<urlset><url><loc>"))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range maxSitemapBytes>>20 + 1 {
		zw.Write(chunk)
	}
	zw.Write([]byte("</loc></url></urlset>"))
	zw.Close()
	return b.Bytes()
}

// FuzzEntries: any bytes give entries or an error, never a panic; the same
// text gzipped gives the same entries and hashes.
func FuzzEntries(f *testing.F) {
	f.Add(urlset(entry("https://x.com/1", "2024-01-01"), entry("https://x.com/&amp;", "")))
	f.Add([]byte(`<urlset><url><loc> https://x.com/a </loc><image:image xmlns:image="i"><image:loc>y</image:loc></image:image></url></urlset>`))
	f.Add([]byte("<urlset><url><loc>a</loc><loc>b</loc></url></urlset>"))
	seed := maphash.MakeSeed()
	f.Fuzz(func(t *testing.T, data []byte) {
		type e struct {
			loc string
			sum uint64
		}
		var plain []e
		errPlain := Entries(data, seed, func(loc string, sum uint64) error { plain = append(plain, e{loc, sum}); return nil })
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		var zipped []e
		errZip := Entries(b.Bytes(), seed, func(loc string, sum uint64) error { zipped = append(zipped, e{loc, sum}); return nil })
		if (errPlain == nil) != (errZip == nil) || !slices.Equal(plain, zipped) {
			t.Errorf("plain: %v %v; gzipped: %v %v", plain, errPlain, zipped, errZip)
		}
	})
}

// BenchmarkChanges: one full sitemap (50,000 URLs with lastmods) replaced
// by one with a URL re-dated: what a night costs per changed sitemap.
func BenchmarkChanges(b *testing.B) {
	old, new := make([]string, 50000), make([]string, 50000)
	for i := range old {
		loc := fmt.Sprintf("https://www.example.com/products/category-%d/item-%d", i%97, i)
		old[i], new[i] = entry(loc, "2024-01-01T10:00:00Z"), entry(loc, "2024-01-01T10:00:00Z")
	}
	new[25000] = entry("https://www.example.com/products/category-71/item-25000", "2024-06-01T10:00:00Z")
	store := files{"s-1-a": urlset(old...), "s-1-b": urlset(new...)}
	n := 0
	for b.Loop() {
		ch, err := Changes(context.Background(), store, isShard, manifest(1, "s-1-a"), manifest(2, "s-1-b"), 200000)
		if err != nil || len(ch.URLs) != 1 {
			b.Fatal(ch, err)
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*2*len(old)), "ns/entry")
}
