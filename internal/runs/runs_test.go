package runs

import (
	"cmp"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestHeapMerges: merging random sorted runs (some empty) through the heap
// gives every record in order, ties by the run's order when less says so.
func TestHeapMerges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type cur struct {
		recs  []int
		order int
	}
	for trial := range 200 {
		var all []int
		var cs []*cur
		for k := range rng.IntN(12) {
			n := rng.IntN(50)
			r := make([]int, n)
			for i := range r {
				r[i] = rng.IntN(40)
			}
			slices.Sort(r)
			all = append(all, r...)
			if n > 0 {
				cs = append(cs, &cur{recs: r, order: k})
			}
		}
		h := NewHeap(cs, func(a, b *cur) bool {
			return cmp.Or(cmp.Compare(a.recs[0], b.recs[0]), cmp.Compare(a.order, b.order)) < 0
		})
		var got []int
		lastOrder := -1
		for h.Len() > 0 {
			c := h.Top()
			if len(got) > 0 && got[len(got)-1] == c.recs[0] && c.order < lastOrder {
				t.Fatalf("trial %d: equal records out of run order", trial)
			}
			got, lastOrder = append(got, c.recs[0]), c.order
			if c.recs = c.recs[1:]; len(c.recs) == 0 {
				h.Pop()
			} else {
				h.Fix()
			}
		}
		slices.Sort(all)
		if !slices.Equal(got, all) {
			t.Fatalf("trial %d: merged %v, want %v", trial, got, all)
		}
	}
}

// TestTempVanishes: the file has no name in its folder while open, and runs
// written back to back read back each on its own.
func TestTempVanishes(t *testing.T) {
	dir := t.TempDir()
	tmp, err := CreateTemp(dir, "x-*.run")
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the open run file is still listed: %v", ents)
	}
	a := NewAppender(tmp)
	for _, s := range []string{"first run", "", "third"} {
		a.Write([]byte(s))
		a.EndRun()
	}
	for i, want := range []string{"first run", "", "third"} {
		b, err := io.ReadAll(a.Open(a.Runs()[i]))
		if err != nil || string(b) != want {
			t.Errorf("run %d: %q, %v; want %q", i, b, err, want)
		}
	}
	if a.Size() != int64(len("first runthird")) {
		t.Errorf("size %d", a.Size())
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
}
