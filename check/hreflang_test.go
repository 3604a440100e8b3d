package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestHreflangTargetsWithoutAlternates: pages without alternates are given
// to the hreflang check only by their fingerprints, at the end, and only
// when the set has alternates; a link to such a page (in another sitemap,
// in a news sitemap, or written with another case of host) is then not
// reciprocal, not a missing target, and a link to a URL the set does not
// list is still a missing target. A set without alternates has no hreflang
// problem at all.
func TestHreflangTargetsWithoutAlternates(t *testing.T) {
	const pub = "https://www.example.com/"
	urlset := func(news bool, body string) []byte {
		ns := `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"`
		if news {
			ns += ` xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"`
		}
		return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset " + ns + ">\n" + body + "</urlset>\n")
	}
	page := func(loc string, hrefs ...string) string {
		s := "<url><loc>" + pub + loc + "</loc>"
		langs := []string{"en", "fr", "de", "es", "it"}
		for i, h := range hrefs {
			s += fmt.Sprintf(`<xhtml:link rel="alternate" hreflang="%s" href="%s"/>`, langs[i], h)
		}
		return s + "</url>\n"
	}
	dir := t.TempDir()
	writeFile(t, dir, "sitemap.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>`+pub+`a.xml</loc></sitemap>
<sitemap><loc>`+pub+`b.xml</loc></sitemap>
<sitemap><loc>`+pub+`news.xml</loc></sitemap>
</sitemapindex>
`))
	writeFile(t, dir, "a.xml", urlset(false, page("en", pub+"en", pub+"plain", "HTTPS://WWW.EXAMPLE.COM:443/other", pub+"fresh", pub+"gone?a=1&amp;it&apos;s=2")))
	writeFile(t, dir, "b.xml", urlset(false, page("plain")+page("other")))
	writeFile(t, dir, "news.xml", urlset(true, `<url><loc>`+pub+`fresh</loc><news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication><news:publication_date>2024-01-01</news:publication_date><news:title>T</news:title></news:news></url>`+"\n"))
	rep, err := Set(t.Context(), Dir(dir), "sitemap.xml", Options{Limits: Ours, PublicURL: mustScope(t, pub), TempDir: t.TempDir(), RunRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.List {
		got = append(got, fmt.Sprintf("%s:%d %s %s", p.File, p.Line, p.Code, p.Value))
	}
	want := []string{
		"a.xml:3 hreflang_not_reciprocal https://www.example.com/plain",
		"a.xml:3 hreflang_not_reciprocal https://www.example.com/other",
		"a.xml:3 hreflang_not_reciprocal https://www.example.com/fresh",
		"a.xml:3 hreflang_target_missing https://www.example.com/gone?a=1&it's=2", // the URL, not its XML text
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range rep.List {
		if strings.Contains(p.Message, "&amp;") || strings.Contains(p.Message, "&apos;") {
			t.Errorf("message with XML escapes: %s", p.Message)
		}
	}
}
