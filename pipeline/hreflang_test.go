package pipeline

import (
	"bytes"
	"path/filepath"
	"testing"
)

// reciprocityFixture holds two reciprocal pairs, a page whose target does
// not link back (en/b -> de/b), a page that does not list itself (en/c),
// a link to a page outside the set (en/d -> fr/d) and a page without
// alternates.
var reciprocityFixture = filepath.Join("..", "testdata", "hreflang-reciprocity.csv")

// reciprocityWant is the --hreflang-report CSV of the fixture: exactly
// its three problems, in input order.
const reciprocityWant = `page,hreflang,target,problem,missing
https://www.example.com/en/b,de,https://www.example.com/de/b,not_reciprocal,a link from the target back to the page
https://www.example.com/en/c,,https://www.example.com/en/c,missing_self,a link from the page to itself
https://www.example.com/en/d,fr,https://www.example.com/fr/d,target_missing,the target as a page of the set
`

// TestHreflangReciprocity: generate reports exactly the fixture's three
// problems, in the report and the CSV, in input order and sorted.
func TestHreflangReciprocity(t *testing.T) {
	for _, sorted := range []bool{false, true} {
		var csv bytes.Buffer
		rep, _, _ := runTo(t, Config{Inputs: []string{reciprocityFixture}, HreflangReport: &csv, Sort: sorted, Workers: 2})
		h := rep.Hreflang
		if h == nil {
			t.Fatal("no hreflang report")
		}
		want := HreflangReport{Pages: 8, Links: 12, NotReciprocal: 1, MissingSelf: 1, TargetMissing: 1, Seconds: h.Seconds}
		if *h != want {
			t.Errorf("sort %v: report %+v; want %+v", sorted, *h, want)
		}
		if csv.String() != reciprocityWant {
			t.Errorf("sort %v: CSV\n%s\nwant\n%s", sorted, csv.String(), reciprocityWant)
		}
	}
}

// TestHreflangNoAlternates: a run without alternate columns does no check.
func TestHreflangNoAlternates(t *testing.T) {
	rep, _, _ := runTo(t, Config{Inputs: []string{writeText(t, "in.txt", "https://www.example.com/a\nhttps://www.example.com/b\n")}})
	if rep.Hreflang != nil {
		t.Fatalf("hreflang report %+v for a run without alternates", *rep.Hreflang)
	}
}
