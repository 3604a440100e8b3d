package check

import (
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

// TestDuplicatesInLatin1 checks that the duplicate check reads back the
// URLs of a file declared in Latin-1, as the first pass read it.
func TestDuplicatesInLatin1(t *testing.T) {
	doc := []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/x</loc></url>` + "\n" +
		`<url><loc>https://a.example/x</loc></url></urlset>`)
	rep, err := Set(t.Context(), WithFile(noFiles{}, "root.xml", doc), "root.xml", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByCode[CodeDuplicateURL] != 1 || rep.ByCode[CodeNotUTF8] != 1 || rep.Problems != 2 {
		t.Fatalf("want a not_utf8 and a duplicate_url, got %v", rep.List)
	}
	if p := rep.List[len(rep.List)-1]; p.Code != CodeDuplicateURL || p.Line != 3 {
		t.Errorf("duplicate reported as %v, want line 3", p)
	}
}

// TestUTF16: a sitemap in UTF-16 (with its byte order mark, either order)
// is not_utf8, once, rather than invalid UTF-8.
func TestUTF16(t *testing.T) {
	text := `<?xml version="1.0" encoding="UTF-16"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/x</loc></url></urlset>`
	for _, bom := range [][]byte{{0xfe, 0xff}, {0xff, 0xfe}} {
		doc := append([]byte(nil), bom...)
		for _, r := range text {
			if bom[0] == 0xfe {
				doc = append(doc, 0, byte(r))
			} else {
				doc = append(doc, byte(r), 0)
			}
		}
		rep, err := Set(t.Context(), WithFile(noFiles{}, "root.xml", doc), "root.xml", Options{Limits: Ours, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ByCode[CodeNotUTF8] != 1 || rep.Problems != 1 {
			t.Errorf("byte order mark % x: want one not_utf8, got %v", bom, rep.List)
		}
	}
}

// FuzzSameEscaped: when the encoder writes a loc back as it was, XML
// escaping aside, the loc has nothing to percent-encode, so checkLoc may
// skip encode.UnencodedAt; and sameEscaped never holds for a loc the
// encoder changed.
func FuzzSameEscaped(f *testing.F) {
	for _, s := range []string{"https://a.example/x?a=1&b='2'", "https://a.example/ü", "https://a.example/a b",
		"https://A.example/%zz", "https://a.example/&amp;", "https://a.example/%41", "http://a.example:80/x#y#z",
		"https://a.example/\"<>", "https://a.example/x/../y"} {
		f.Add([]byte(s))
	}
	enc := encode.NewEncoder(nil, nil)
	f.Fuzz(func(t *testing.T, s []byte) {
		out, r := enc.AppendLoc(nil, s)
		if r != encode.OK || !sameEscaped(out, s) {
			return
		}
		if i := encode.UnencodedAt(s); i >= 0 {
			t.Fatalf("%q written back as %q, yet byte %d must be percent-encoded", s, out, i)
		}
		unescaped := strings.NewReplacer("&amp;", "&", "&apos;", "'").Replace(string(out))
		if unescaped != string(s) {
			t.Fatalf("%q written back as %q: not the same URL", s, out)
		}
	})
}
