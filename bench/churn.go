package bench

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"slices"
)

// Night is one night's export: CSV rows (each with its newline) in a stable
// order, as a warehouse query with ORDER BY gives them night after night.
type Night [][]byte

// FirstNight returns n generated rows and their Generator, whose next rows
// are URLs the night does not hold (the churn's new pages).
func FirstNight(seed uint64, n int) (Night, *Generator) {
	g := NewGenerator(seed, "https://www.example.com/")
	return g.Rows(n), g
}

// Rows returns n new rows (URLs no earlier row of g holds), in one buffer.
func (g *Generator) Rows(n int) Night {
	var buf []byte
	ends := make([]int, n)
	for i := range n {
		buf = g.AppendCSV(buf)
		ends[i] = len(buf)
	}
	night := make(Night, n)
	start := 0
	for i, end := range ends {
		night[i] = buf[start:end:end]
		start = end
	}
	return night
}

// WriteCSV writes the night as a CSV file with its header.
func (n Night) WriteCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(CSVHeader)
	for _, row := range n {
		w.Write(row)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Change is one way the second night's export differs from the first's.
type Change struct {
	Name string
	// Apply returns night 2; it leaves night 1 as it was. New rows come
	// from g, random places from rng.
	Apply func(night Night, g *Generator, rng *rand.Rand) Night
}

// Changes are the night-2 changes of the churn benchmark (bench/cmd/churn)
// and of the acceptance tests: one URL inserted, deleted or re-dated, 1%
// appended, a block of 1% inserted, and 0.5% churn (0.25% deleted and
// 0.25% inserted, at random rows).
var Changes = []Change{
	{"one URL inserted in the middle", func(n Night, g *Generator, _ *rand.Rand) Night {
		return slices.Insert(slices.Clone(n), len(n)/2, g.Rows(1)...)
	}},
	{"one URL deleted at random", func(n Night, _ *Generator, rng *rand.Rand) Night {
		i := rng.IntN(len(n))
		return slices.Delete(slices.Clone(n), i, i+1)
	}},
	{"one lastmod changed", func(n Night, _ *Generator, rng *rand.Rand) Night {
		out := slices.Clone(n)
		i := rng.IntN(len(n))
		out[i] = SetLastmod(out[i], "2031-01-02")
		return out
	}},
	{"1% appended", func(n Night, g *Generator, _ *rand.Rand) Night {
		return append(slices.Clone(n), g.Rows(max(1, len(n)/100))...)
	}},
	{"1% inserted as one block in the middle", func(n Night, g *Generator, _ *rand.Rand) Night {
		return slices.Insert(slices.Clone(n), len(n)/2, g.Rows(max(1, len(n)/100))...)
	}},
	{"0.5% churn (0.25% deleted, 0.25% inserted, random rows)", Churn(0.005)},
}

// Churn returns a change that deletes share/2 of the rows and inserts as
// many new ones, each at a random row.
func Churn(share float64) func(Night, *Generator, *rand.Rand) Night {
	return func(n Night, g *Generator, rng *rand.Rand) Night {
		k := max(1, int(float64(len(n))*share/2))
		del := map[int]bool{}
		for len(del) < k && len(del) < len(n) {
			del[rng.IntN(len(n))] = true
		}
		ins := map[int]int{} // row -> new rows before it
		for range k {
			ins[rng.IntN(len(n))]++
		}
		out := make(Night, 0, len(n)+k)
		for i, row := range n {
			if c := ins[i]; c > 0 {
				out = append(out, g.Rows(c)...)
			}
			if !del[i] {
				out = append(out, row)
			}
		}
		return out
	}
}

// SetLastmod returns a copy of a generated CSV row with its lastmod (the
// third field from the end: the loc may be quoted and hold commas, the
// fields after it never do) replaced.
func SetLastmod(row []byte, lastmod string) []byte {
	end := len(row)
	commas := 0
	at := []int{}
	for i := end - 1; i >= 0 && commas < 3; i-- {
		if row[i] == ',' {
			commas++
			at = append(at, i)
		}
	}
	// at[2] is the comma before the lastmod, at[1] the one after it.
	out := append(bytes.Clone(row[:at[2]+1]), lastmod...)
	return append(out, row[at[1]:]...)
}

// Typical is a typical night's change: a section removed (a block of 1%
// of the rows, as an export ordered by path holds a section), four pages
// edited (their lastmod) and 1% new URLs at the end.
func Typical(n Night, g *Generator, rng *rand.Rand) Night {
	out := slices.Clone(n)
	k := max(1, len(n)/100)
	at := len(out) / 3
	out = slices.Delete(out, at, min(at+k, len(out)))
	for range 4 {
		i := rng.IntN(len(out))
		out[i] = SetLastmod(out[i], "2031-01-02")
	}
	return append(out, g.Rows(k)...)
}

// Scattered returns a change that sets the lastmod of share of the rows,
// picked at random all over the night: nearly every sitemap changes.
func Scattered(share float64) func(Night, *Generator, *rand.Rand) Night {
	return func(n Night, _ *Generator, rng *rand.Rand) Night {
		out := slices.Clone(n)
		for range int(float64(len(n)) * share) {
			i := rng.IntN(len(out))
			out[i] = SetLastmod(out[i], "2031-01-02")
		}
		return out
	}
}
