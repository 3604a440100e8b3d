package check_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/check"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/sink"
)

// TestNewsSets: a set with news sitemaps, which repeat URLs the regular
// shards list, is accepted (and so is the empty news sitemap of a run with
// no fresh article); a URL twice in the news sitemaps, a news sitemap of
// more than 1,000 items and an empty regular sitemap are not.
func TestNewsSets(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	run := func(t *testing.T, rows int, now time.Time) string {
		var b strings.Builder
		b.WriteString("loc,news:publication_name,news:publication_language,news:publication_date,news:title\n")
		for i := range rows {
			fmt.Fprintf(&b, "%sa%d,Daily,en,2026-11-24T10:00:00Z,T%d\n", base, i, i)
		}
		in := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		s, _ := sink.NewLocal(out)
		pub, _ := encode.ParseScope(base)
		if _, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{in}, PublicURL: pub, Sink: s, Name: "sitemap",
			MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Now: now}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	codes := func(rep *check.Report) map[check.Code]int { return rep.ByCode }

	dir := run(t, 2500, now)
	rep := validate(t, dir, check.Ours)
	if !rep.OK() || rep.Sitemaps != 4 || rep.URLs != 5000 {
		t.Fatalf("a set with news sitemaps: %d sitemaps, %d URLs, problems %v", rep.Sitemaps, rep.URLs, rep.List)
	}

	// The same URL twice across news sitemaps is a duplicate.
	n1, n3 := filepath.Join(dir, "sitemap-news-0001.xml.gz"), filepath.Join(dir, "sitemap-news-0003.xml.gz")
	first := readGz(t, n1)
	editShard(t, n3, 0, func(url []byte) []byte {
		at := strings.Index(string(first), "<url>")
		return first[at : at+strings.Index(string(first[at:]), "</url>")+len("</url>")]
	})
	if rep := validate(t, dir, check.Ours); codes(rep)[check.CodeDuplicateURL] != 1 || len(rep.List) != 1 || rep.List[0].File != "sitemap-news-0003.xml.gz" {
		t.Errorf("a news URL repeated in another news sitemap: %v", rep.List)
	}

	// Google reads at most 1,000 items of a news sitemap.
	dir = run(t, 2500, now)
	n1 = filepath.Join(dir, "sitemap-news-0001.xml.gz")
	data := readGz(t, n1)
	extra := readGz(t, filepath.Join(dir, "sitemap-news-0003.xml.gz"))
	body := extra[strings.Index(string(extra), "<url>"):strings.LastIndex(string(extra), "</urlset>")]
	data = append(data[:strings.LastIndex(string(data), "</urlset>")], append([]byte(body), "</urlset>\n"...)...)
	writeGz(t, n1, data)
	os.Remove(filepath.Join(dir, "sitemap-news-0003.xml.gz"))
	if rep := validate(t, dir, check.Ours); codes(rep)[check.CodeTooManyNews] != 1 {
		t.Errorf("a news sitemap of 1,500 items: %v", rep.ByCode)
	}

	// No fresh article: one empty news sitemap, accepted.
	dir = run(t, 10, now.Add(72*time.Hour))
	if rep := validate(t, dir, check.Ours); !rep.OK() || rep.Sitemaps != 2 || rep.URLs != 10 {
		t.Fatalf("a set with an empty news sitemap: %d sitemaps, %d URLs, problems %v", rep.Sitemaps, rep.URLs, rep.List)
	}
	// An empty sitemap that is not a news sitemap is still refused.
	reg, _ := filepath.Glob(filepath.Join(dir, "sitemap-0*.xml.gz"))
	writeGz(t, reg[0], []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n</urlset>\n"))
	if rep := validate(t, dir, check.Ours); codes(rep)[check.CodeMissingElement] != 1 {
		t.Errorf("an empty regular sitemap: %v", rep.ByCode)
	}
}
