package sitemapgz

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/shard"
)

// sitemap returns a sitemap of rows entries from the bench generator (seed),
// encoded as the pipeline encodes them.
func sitemap(seed uint64, rows int) []byte {
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		panic(err)
	}
	enc := encode.NewEncoder(scope, nil)
	g := bench.NewGenerator(seed, "https://www.example.com/")
	out := []byte(shard.Header)
	var row []byte
	for i := 0; i < rows; i++ {
		var r bench.Row
		row, r = g.AppendRow(row[:0])
		f := encode.Fields{
			Loc:        row[r.Loc[0]:r.Loc[1]],
			Lastmod:    row[r.Lastmod[0]:r.Lastmod[1]],
			Changefreq: row[r.Changefreq[0]:r.Changefreq[1]],
			Priority:   row[r.Priority[0]:r.Priority[1]],
		}
		out, _ = enc.AppendURL(out, f)
	}
	return append(out, shard.Footer...)
}

// repeatedFields returns a sitemap of rows entries with the bench
// generator's locs (seed 1), one lastmod per run of 1,000 entries, and the
// same changefreq and priority in every entry.
func repeatedFields(rows int) []byte {
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		panic(err)
	}
	enc := encode.NewEncoder(scope, nil)
	g := bench.NewGenerator(1, "https://www.example.com/")
	out := []byte(shard.Header)
	var row []byte
	lastmod := []byte("2024-05-01T10:00:00Z")
	for i := 0; i < rows; i++ {
		var r bench.Row
		row, r = g.AppendRow(row[:0])
		lastmod[9] = byte('0' + i/1000%10)
		out, _ = enc.AppendURL(out, encode.Fields{
			Loc:        row[r.Loc[0]:r.Loc[1]],
			Lastmod:    lastmod,
			Changefreq: []byte("weekly"),
			Priority:   []byte("0.5"),
		})
	}
	return append(out, shard.Footer...)
}

// roundTrip checks that compress/gzip and klauspost both decompress z to
// exactly src.
func roundTrip(t testing.TB, src, z []byte) {
	t.Helper()
	r, err := stdgzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("compress/gzip: got %d bytes, want %d (first difference at %d)", len(got), len(src), firstDiff(got, src))
	}
	kr, err := kgzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatalf("klauspost: %v", err)
	}
	got, err = io.ReadAll(kr)
	if err != nil {
		t.Fatalf("klauspost: %v", err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("klauspost: got %d bytes, want %d", len(got), len(src))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	small := make([]byte, 100_000) // few symbols: long codes, long runs
	for i := range small {
		small[i] = "ab\n"[rng.IntN(3)]
	}
	tests := []struct {
		name string
		src  []byte
	}{
		{"empty", nil},
		{"one byte", []byte("x")},
		{"one line", []byte("<url><loc>https://www.example.com/</loc></url>\n")},
		{"no newline", []byte(strings.Repeat("abcdefgh", 1000))},
		{"zeros", make([]byte, 1<<20)},
		{"long lines", []byte(strings.Repeat(strings.Repeat("x", 70_000)+"\n", 3))},
		{"random", random},
		{"three symbols", small},
		{"sitemap", sitemap(1, 20_000)},
		{"another sitemap", sitemap(7, 3_000)},
		{"repeated fields", repeatedFields(5_000)},
	}
	for _, v := range variants {
		e := v.new()
		for _, tt := range tests {
			t.Run(v.name+"/"+tt.name, func(t *testing.T) {
				z := e.Append(nil, tt.src)
				roundTrip(t, tt.src, z)
				if z2 := e.Append(nil, tt.src); !bytes.Equal(z, z2) {
					t.Fatal("same input, different bytes")
				}
				if z3 := v.new().Append(nil, tt.src); !bytes.Equal(z, z3) {
					t.Fatal("a new Encoder wrote different bytes")
				}
			})
		}
	}
}

// variants are the Encoders measured in BenchmarkCompress; every test
// runs them all.
var variants = []struct {
	name string
	new  func() *Encoder
}{
	{"default", NewEncoder},
	{"fast", func() *Encoder { e := NewEncoder(); e.lazy, e.oneWay = 0, true; return e }},
	{"greedy", func() *Encoder { e := NewEncoder(); e.lazy = 0; return e }},
	{"lazy", func() *Encoder { e := NewEncoder(); e.lazy = maxMatch + 1; return e }},
	{"shape", func() *Encoder { e := NewEncoder(); e.shape = true; return e }},
	{"shape-greedy", func() *Encoder { e := NewEncoder(); e.shape, e.lazy = true, 0; return e }},
}

// TestAppendKeepsPrefix checks that Append appends to dst.
func TestAppendKeepsPrefix(t *testing.T) {
	src := sitemap(2, 100)
	z := NewEncoder().Append([]byte("prefix"), src)
	if !bytes.HasPrefix(z, []byte("prefix")) {
		t.Fatal("dst's bytes were not kept")
	}
	roundTrip(t, src, z[len("prefix"):])
}

// TestSymbols checks lengthSym and distSym against RFC 1951's tables.
func TestSymbols(t *testing.T) {
	lengthBase := []uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra := []uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	for l := uint32(3); l <= 258; l++ {
		sym, n, x := lengthSym(l - 3)
		i := sym - 257
		if n != lengthExtra[i] || lengthBase[i]+x != l || x >= 1<<n && n > 0 || n == 0 && x != 0 {
			t.Fatalf("length %d: symbol %d, %d extra bits %d", l, sym, n, x)
		}
	}
	distBase := []uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	for d := uint32(1); d <= 32768; d++ {
		sym, n, x := distSym(d - 1)
		wantN := uint32(0)
		if sym >= 4 {
			wantN = sym/2 - 1
		}
		if n != wantN || distBase[sym]+x != d || n > 0 && x >= 1<<n {
			t.Fatalf("distance %d: symbol %d, %d extra bits %d", d, sym, n, x)
		}
	}
}

// TestAppendAllocs checks that an Encoder reuses its buffers: once dst has
// room, Append allocates nothing.
func TestAppendAllocs(t *testing.T) {
	src := sitemap(4, 2_000)
	e := NewEncoder()
	z := e.Append(nil, src)
	if n := testing.AllocsPerRun(5, func() { z = e.Append(z[:0], src) }); n != 0 {
		t.Fatalf("%v allocations per Append", n)
	}
}

// TestOtherInflaters decompresses a sitemap with gzip(1) and Python's gzip
// module, where they are installed.
func TestOtherInflaters(t *testing.T) {
	src := sitemap(5, 5_000)
	z := NewEncoder().Append(nil, src)
	for _, cmd := range [][]string{
		{"gzip", "-dc"},
		{"python3", "-c", "import gzip, sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))"},
	} {
		if _, err := exec.LookPath(cmd[0]); err != nil {
			t.Logf("%s: not installed", cmd[0])
			continue
		}
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Stdin = bytes.NewReader(z)
		got, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", cmd[0], err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%s: got %d bytes, want %d", cmd[0], len(got), len(src))
		}
	}
}
