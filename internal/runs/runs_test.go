package runs

import (
	"cmp"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestSpiller: buffers handed to the spiller come back as sorted runs that
// hold every record; a folder that cannot take the file is an error from
// Hand or Stop, never a hang.
func TestSpiller(t *testing.T) {
	put := func(dst []byte, r uint32) []byte { return binary.BigEndian.AppendUint32(dst, r) }
	s := NewSpiller("test", t.TempDir(), "x-*.run", slices.Sort[[]uint32], put)
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]uint32, 0, 100)
	var all []uint32
	for range 7 {
		for len(buf) < cap(buf) {
			v := rng.Uint32()
			buf = append(buf, v)
			all = append(all, v)
		}
		var err error
		if buf, err = s.Hand(buf); err != nil || len(buf) != 0 || cap(buf) != 100 {
			t.Fatalf("Hand: %v, len %d cap %d", err, len(buf), cap(buf))
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(s.Runs()) != 7 || s.Size() != 7*100*4 {
		t.Fatalf("%d runs, %d bytes", len(s.Runs()), s.Size())
	}
	var got []uint32
	for _, seg := range s.Runs() {
		b, err := io.ReadAll(s.Open(seg))
		if err != nil {
			t.Fatal(err)
		}
		var run []uint32
		for i := 0; i < len(b); i += 4 {
			run = append(run, binary.BigEndian.Uint32(b[i:]))
		}
		if !slices.IsSorted(run) {
			t.Fatalf("run %v is not sorted", seg)
		}
		got = append(got, run...)
	}
	slices.Sort(got)
	slices.Sort(all)
	if !slices.Equal(got, all) {
		t.Fatal("the runs do not hold the records handed")
	}

	bad := NewSpiller("test", filepath.Join(t.TempDir(), "missing"), "x-*.run", slices.Sort[[]uint32], put)
	defer bad.Close()
	b := []uint32{3, 1, 2}
	var err error
	for range 3 {
		if b, err = bad.Hand(append(b[:0], 3, 1, 2)); err != nil {
			break
		}
	}
	if err == nil {
		err = bad.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "test: ") {
		t.Fatalf("a missing folder: %v", err)
	}
}
