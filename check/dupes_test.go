package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSortRecords: the radix sort orders records by fingerprint as a
// comparison sort does, for uniform fingerprints, fingerprints that share
// their top bits (one bucket), repeats, and every size around the bucket
// thresholds, its buckets sorted by one to three goroutines.
func TestSortRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 15, 16, 255, 256, 257, 4095, 4096, 4097, 70000, 300000} {
		for _, shape := range []string{"uniform", "same top bits", "repeats"} {
			rs := make([]record, n)
			for i := range rs {
				rs[i] = record{h: rng.Uint64(), h2: rng.Uint64(), file: uint32(i)}
				switch shape {
				case "same top bits":
					rs[i].h &= 1<<40 - 1
				case "repeats":
					rs[i].h, rs[i].h2 = rs[i].h%64<<58, rs[i].h2%3
				}
			}
			want := slices.Clone(rs)
			slices.SortFunc(want, byHash)
			sortRecordsParts(rs, 1+n%3)
			if !slices.IsSortedFunc(rs, byHash) {
				t.Fatalf("%d records, %s: not sorted", n, shape)
			}
			for i := range rs {
				if rs[i].h != want[i].h || rs[i].h2 != want[i].h2 {
					t.Fatalf("%d records, %s: record %d is %x %x, want %x %x", n, shape, i, rs[i].h, rs[i].h2, want[i].h, want[i].h2)
				}
			}
			files := map[uint32]bool{}
			for _, r := range rs {
				files[r.file] = true
			}
			if len(files) != n {
				t.Fatalf("%d records, %s: %d records left after the sort", n, shape, len(files))
			}
		}
	}
}

// BenchmarkSortRecords compares the radix sort of a run of a million
// records with the comparison sort it replaced.
func BenchmarkSortRecords(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]record, 1<<19)
	for i := range src {
		src[i] = record{h: rng.Uint64(), h2: rng.Uint64()}
	}
	rs := make([]record, len(src))
	for _, bc := range []struct {
		name string
		sort func([]record)
	}{{"radix", sortRecords}, {"pdqsort", func(rs []record) { slices.SortFunc(rs, byHash) }}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				copy(rs, src)
				bc.sort(rs)
			}
		})
	}
}

// TestGroupsParts: the merge split among parts goroutines gives the groups
// of one merge, in fingerprint order, over runs of many duplicates (more
// than a part's channel holds) and a group past maxGroup.
func TestGroupsParts(t *testing.T) {
	type grp struct {
		h, h2      uint64
		n          int
		sum, sumSq uint64 // of the records' ordinals, when all are there
	}
	key := func(g []record, extra int) grp {
		k := grp{h: g[0].h, h2: g[0].h2, n: len(g) + extra}
		for _, r := range g {
			if extra == 0 {
				k.sum, k.sumSq = k.sum+uint64(r.ord), k.sumSq+uint64(r.ord)*uint64(r.ord)
			}
		}
		return k
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var all []record
	for i := range 30050 { // 30 runs and a rest in memory
		r := record{h: rng.Uint64(), h2: rng.Uint64(), ord: uint32(i)}
		switch {
		case i%7 == 3:
			d := all[rng.IntN(len(all))]
			r.h, r.h2 = d.h, d.h2
		case i%5 == 1:
			r.h, r.h2 = 1<<63+12345, 99 // one URL many times, past maxGroup
		}
		all = append(all, r)
	}
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, byHash)
	var want []grp
	groupsOf(sorted, nil, func(g []record, extra int) { want = append(want, key(g, extra)) })
	for _, parts := range []int{1, 2, 3} {
		for _, singles := range []bool{false, true} {
			s := newSpill(t.TempDir(), 1000, parts)
			var buf []record
			for i := 0; i < len(all); i += 50 {
				buf = s.add(buf, all[i:i+50])
			}
			var got []grp
			if err := s.groups(buf, singles, nil, func(g []record, extra int) {
				if singles || len(g) > 1 || extra > 0 {
					got = append(got, key(g, extra))
				}
			}); err != nil {
				t.Fatal(err)
			}
			w := want
			if !singles {
				w = slices.DeleteFunc(slices.Clone(want), func(g grp) bool { return g.n < 2 })
			}
			if !slices.Equal(got, w) {
				t.Fatalf("%d parts, singles %v: %d groups, want %d", parts, singles, len(got), len(w))
			}
		}
	}
}

// TestDuplicatesPastMaxGroup: a URL listed more times than a group holds
// is reported, every repeat counted, against its first place, whether the
// records stay in memory or are merged from spilled runs.
func TestDuplicatesPastMaxGroup(t *testing.T) {
	dir := t.TempDir()
	const base = "https://www.example.com/"
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, l := range locs {
			fmt.Fprintf(&b, "\n<url><loc>%s</loc></url>", l)
		}
		return b.String() + "\n</urlset>\n"
	}
	first := []string{base + "a", base + "x"} // x at sm-1.xml:3
	var again []string
	for range maxGroup + 904 {
		again = append(again, base+"x")
	}
	files := map[string]string{
		"sitemap.xml": `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` + base + `sm-2.xml</loc></sitemap><sitemap><loc>` + base + `sm-1.xml</loc></sitemap></sitemapindex>`,
		"sm-1.xml":    urlset(first...),
		"sm-2.xml":    urlset(again...),
	}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, runRecords := range []int{0, 512} { // in memory; spilled and merged
		rep, err := Set(context.Background(), Dir(dir), "sitemap.xml", Options{Limits: Ours, TempDir: t.TempDir(), RunRecords: runRecords,
			PublicURL: mustScope(t, base)})
		if err != nil {
			t.Fatal(err)
		}
		if n := rep.ByCode[CodeDuplicateURL]; n != len(again) {
			t.Errorf("run records %d: %d duplicate_url; want %d", runRecords, n, len(again))
		}
		for _, p := range rep.List {
			if p.Code == CodeDuplicateURL && p.Message != "URL already listed at sm-1.xml:3" {
				t.Fatalf("run records %d: %s:%d: %s; want it against sm-1.xml:3", runRecords, p.File, p.Line, p.Message)
			}
		}
	}
}
