package bench

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSetLastmod: the lastmod is replaced, every other field kept, also
// when the loc is quoted and holds commas.
func TestSetLastmod(t *testing.T) {
	for _, row := range []string{
		"https://www.example.com/a,2024-01-02,daily,0.5\n",
		"\"https://www.example.com/a,b\"\"c\",2024-01-02T10:00:00Z,,\n",
		"https://www.example.com/a,,,0.1\n",
	} {
		got := SetLastmod([]byte(row), "2031-01-02")
		in, _ := csv.NewReader(bytes.NewReader([]byte(row))).Read()
		out, err := csv.NewReader(bytes.NewReader(got)).Read()
		if err != nil || len(out) != 4 || out[0] != in[0] || out[1] != "2031-01-02" || out[2] != in[2] || out[3] != in[3] {
			t.Errorf("SetLastmod(%q) = %q (%v)", row, got, err)
		}
	}
}

// TestChanges: each change leaves night 1 as it was and gives night 2 the
// number of rows it says.
func TestChanges(t *testing.T) {
	const n = 2000
	night1, g := FirstNight(1, n)
	keep := slices.Clone(night1)
	want := []int{n + 1, n - 1, n, n + n/100, n + n/100, n}
	seen := map[string]bool{}
	for _, r := range night1 {
		seen[string(r)] = true
	}
	for i, ch := range Changes {
		night2 := ch.Apply(night1, g, rand.New(rand.NewPCG(uint64(i), 2)))
		if len(night2) != want[i] {
			t.Errorf("%s: %d rows, want %d", ch.Name, len(night2), want[i])
		}
		if slices.EqualFunc(night1, night2, bytes.Equal) {
			t.Errorf("%s: night 2 is night 1", ch.Name)
		}
		for _, r := range night2 {
			if !seen[string(r)] {
				seen[string(r)] = true // a new row, never one seen before
			}
		}
		for k := range night1 {
			if !bytes.Equal(night1[k], keep[k]) {
				t.Fatalf("%s changed night 1's row %d", ch.Name, k)
			}
		}
	}
}

// TestNightlyChanges: Typical removes a block of 1%, edits at most four
// rows and appends 1% new rows; Scattered(0.05) edits about 5% of the rows
// and keeps their number; night 1 is left as it was.
func TestNightlyChanges(t *testing.T) {
	const n = 10_000
	night1, g := FirstNight(3, n)
	keep := slices.Clone(night1)
	diff := func(a, b Night) (changed int) {
		for i := range min(len(a), len(b)) {
			if !bytes.Equal(a[i], b[i]) {
				changed++
			}
		}
		return changed
	}
	typ := Typical(night1, g, rand.New(rand.NewPCG(1, 2)))
	if len(typ) != n || diff(night1[:n/3], typ[:n/3]) > 4 || !bytes.Equal(typ[n/3], night1[n/3+n/100]) {
		t.Errorf("Typical: %d rows, %d of the first third edited", len(typ), diff(night1[:n/3], typ[:n/3]))
	}
	sc := Scattered(0.05)(night1, g, rand.New(rand.NewPCG(1, 2)))
	if c := diff(night1, sc); len(sc) != n || c < n*4/100 || c > n*5/100 {
		t.Errorf("Scattered(0.05): %d rows, %d edited; want %d, about %d", len(sc), c, n, n*5/100)
	}
	for i := range night1 {
		if !bytes.Equal(night1[i], keep[i]) {
			t.Fatal("night 1 changed")
		}
	}
}
