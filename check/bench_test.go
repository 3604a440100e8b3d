package check

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmlscan"
)

// cpuNanos is the user and system CPU time of the process: on a shared
// machine a steadier figure than the wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchShard is a sitemap of n URLs as generate writes it from the bench
// generator's rows: a lastmod, changefreq and priority on most.
func benchShard(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://www.example.com/catalog/p%d/blue-widget-%d?ref=home&amp;utm_source=x%d</loc><lastmod>2024-01-%02dT03:04:05Z</lastmod><changefreq>daily</changefreq><priority>0.%d</priority></url>\n", i, i*7, i%13, 1+i%28, i%10)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// BenchmarkParse is the per-URL cost of checking a sitemap, tokenizer,
// rules, loc checks and fingerprints included (no gzip, one goroutine).
func BenchmarkParse(b *testing.B) {
	doc := benchShard(50000)
	pub := mustScope(b, "https://www.example.com/")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	cpu0 := cpuNanos()
	for b.Loop() {
		rep, err := Set(b.Context(), WithFile(noFiles{}, "s.xml", doc), "s.xml", Options{Limits: Ours, Workers: 1, TempDir: b.TempDir(),
			PublicURL: pub, SkipOrphans: true})
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.List[:min(len(rep.List), 3)])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/50000, "ns/url")
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N)/50000, "cpu-ns/url")
}

// BenchmarkTokenize is BenchmarkParse's tokenizer alone, for the share of
// the rules.
func BenchmarkTokenize(b *testing.B) {
	doc := benchShard(50000)
	b.SetBytes(int64(len(doc)))
	cpu0 := cpuNanos()
	for b.Loop() {
		t := xmlscan.NewTokenizer(bytes.NewReader(doc), nil)
		for t.Next() == nil {
		}
		t.Close()
	}
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N)/50000, "cpu-ns/url")
}
