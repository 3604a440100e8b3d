package check

import "testing"

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
