package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRelativeURLs: a relative loc is not_http_url with a message that says
// "relative", short or long, in a sitemap or an index; a short one is also
// loc_length (xmllint rejects it too), whose message states the limits; a
// relative xhtml:link href is not_http_url.
func TestRelativeURLs(t *testing.T) {
	const urlset = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">`
	for _, tc := range []struct {
		name, doc string
		want      []string // code: a word of the message
	}{
		{"short relative loc", urlset + "<url><loc>/</loc></url></urlset>",
			[]string{"loc_length: 12 to 2048", "not_http_url: relative"}},
		{"short relative loc with a path", urlset + "<url><loc>/about/</loc></url></urlset>",
			[]string{"loc_length: 12 to 2048", "not_http_url: relative"}},
		{"long relative loc", urlset + "<url><loc>/about/our-long-history/</loc></url></urlset>",
			[]string{"not_http_url: relative"}},
		{"relative loc in an index", `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>s-1.xml</loc></sitemap></sitemapindex>`,
			[]string{"loc_length: 12 to 2048", "not_http_url: relative"}},
		{"long loc", urlset + "<url><loc>https://www.example.com/" + strings.Repeat("a", 2040) + "</loc></url></urlset>",
			[]string{"loc_length: 2064 characters"}},
		{"absolute loc of another scheme", urlset + "<url><loc>ftp://www.example.com/a/b</loc></url></urlset>",
			[]string{"not_http_url: not an absolute"}},
		{"relative hreflang href", urlset + `<url><loc>https://www.example.com/en/</loc><xhtml:link rel="alternate" hreflang="fr" href="/fr/"/></url></urlset>`,
			[]string{"not_http_url: relative"}},
		{"absolute hreflang href", urlset + `<url><loc>https://www.example.com/en/</loc><xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/"/></url></urlset>`,
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Set(t.Context(), WithFile(noFiles{}, "s.xml", []byte(tc.doc)), "s.xml", Options{Limits: Ours, TempDir: t.TempDir(), NoFollow: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.List {
				got = append(got, fmt.Sprintf("%s: %s", p.Code, p.Message))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			slices.Sort(got)
			for i, w := range tc.want {
				code, word, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(got[i], code+": ") || !strings.Contains(got[i], word) {
					t.Errorf("problem %d: got %q, want code %s with %q in the message", i, got[i], code, word)
				}
			}
		})
	}
}
