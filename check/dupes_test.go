package check

import (
	"math/rand/v2"
	"slices"
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
