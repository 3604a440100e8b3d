package shard

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLocHashGolden pins LocHash: it is wyhash final 4 (the reference
// test_vector.cpp values, seeds 0-6), and a change to it would move every
// stable cut of every published set.
func TestLocHashGolden(t *testing.T) {
	for seed, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0x0409638ee2bde459},
		{"a", 0xa8412d091b5fe0a9},
		{"abc", 0x32dd92e4b2915153},
		{"message digest", 0x8619124089a3a16b},
		{"abcdefghijklmnopqrstuvwxyz", 0x7a43afb61d7f5f40},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 0xff42329b90e50d58},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890", 0xc39cab13b115aad3},
	} {
		if got := wyhash([]byte(tc.in), uint64(seed)); got != tc.want {
			t.Errorf("wyhash(%q, %d) = %#x, want %#x", tc.in, seed, got, tc.want)
		}
	}
	if got := LocHash([]byte("https://www.example.com/products/shoes-42.html")); got != wyhash([]byte("https://www.example.com/products/shoes-42.html"), 0) {
		t.Errorf("LocHash is not wyhash with seed 0: %#x", got)
	}
}

// TestLocHashUniform: the share of similar locs (one counter apart) whose
// hash is below p·2^64 is p, for the small p the curve uses and for the
// halves, so a threshold on the hash is a fair coin of that bias.
func TestLocHashUniform(t *testing.T) {
	const n = 400_000
	ps := []float64{0.5, 1.0 / 16, 1.0 / 1024}
	below := make([]int, len(ps))
	var buf []byte
	for i := range n {
		buf = fmt.Appendf(buf[:0], "https://www.example.com/catalog/item-%d", i)
		h := LocHash(buf)
		for j, p := range ps {
			if float64(h) < p*math.Pow(2, 64) {
				below[j]++
			}
		}
	}
	for j, p := range ps {
		want := p * n
		if sd := math.Sqrt(want * (1 - p)); math.Abs(float64(below[j])-want) > 5*sd {
			t.Errorf("P(hash < %g·2^64) over %d locs: %d, want %.0f ± %.0f", p, n, below[j], want, 5*sd)
		}
	}
}

func TestEntryLoc(t *testing.T) {
	for _, tc := range []struct{ entry, loc string }{
		{"<url><loc>https://a.example/x</loc></url>\n", "https://a.example/x"},
		{"<url><loc>https://a.example/?a=1&amp;b=2</loc><lastmod>2024-01-01</lastmod></url>\n", "https://a.example/?a=1&amp;b=2"},
		{"<url><loc></loc></url>\n", ""},
		{"<url><loc>no end", "<url><loc>no end"}, // not an entry: the whole of it
		{"xxxxxxxxxxxxxxxx\n", "xxxxxxxxxxxxxxxx\n"},
		{"", ""},
	} {
		if got := EntryLoc([]byte(tc.entry)); string(got) != tc.loc {
			t.Errorf("EntryLoc(%q) = %q, want %q", tc.entry, got, tc.loc)
		}
	}
}

func TestParseCutMode(t *testing.T) {
	for _, m := range []CutMode{CutTight, CutStable} {
		if got, err := ParseCutMode(m.String()); err != nil || got != m {
			t.Errorf("ParseCutMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseCutMode("Stable"); err == nil {
		t.Error("ParseCutMode accepts Stable")
	}
	if mustCutter(CutterOptions{MaxURLs: 10, MaxBytes: 1 << 20, Header: Header, Mode: CutStable}).Mode() != CutStable || mustCutter(CutterOptions{MaxURLs: 10, MaxBytes: 1 << 20}).Mode() != CutTight {
		t.Error("Mode does not report the constructor's mode")
	}
}

func TestCurveCheck(t *testing.T) {
	for _, tc := range []struct {
		cv Curve
		ok bool
	}{
		{DefaultCurve, true},
		{Curve{0, 1, 1, 1}, true},
		{Curve{0.5, 0.505, 2, 4}, false}, // too narrow
		{Curve{0.9, 0.8, 2, 4}, false},
		{Curve{0.5, 1.01, 2, 4}, false},
		{Curve{-0.1, 0.9, 2, 4}, false},
		{Curve{0.5, 0.9, 0, 4}, false},
		{Curve{0.5, 0.9, 5, 4}, false},
		{Curve{0.5, 0.9, 2, 0}, false},
		{Curve{0.5, 0.9, 2, math.NaN()}, false},
		{Curve{0.5, 0.9, 2, 65}, false},
	} {
		if err := tc.cv.Check(); (err == nil) != tc.ok {
			t.Errorf("%+v.Check() = %v, want ok %v", tc.cv, err, tc.ok)
		}
		if _, err := NewCutter(CutterOptions{MaxURLs: 100, MaxBytes: 1 << 20, Header: Header, Mode: CutStable, Curve: &tc.cv}); (err == nil) != tc.ok {
			t.Errorf("NewStableCutter(%+v) = %v, want ok %v", tc.cv, err, tc.ok)
		}
	}
}

// locEntry returns an encoded entry of n >= 24 bytes whose loc is random.
func locEntry(rng *rand.Rand, n int) []byte {
	const pre, post = "<url><loc>", "</loc></url>\n"
	e := append(make([]byte, 0, n), pre...)
	for len(e) < n-len(post) {
		e = append(e, "abcdefghijklmnopqrstuvwxyz0123456789/-"[rng.IntN(38)])
	}
	return append(e, post...)
}

// batches splits entries into Entries of random lengths.
func batches(rng *rand.Rand, entries [][]byte) []Entries {
	var out []Entries
	for len(entries) > 0 {
		n := min(len(entries), rng.IntN(80))
		var e Entries
		for _, b := range entries[:n] {
			e.Data = append(e.Data, b...)
			e.Ends = append(e.Ends, uint32(len(e.Data)))
		}
		out = append(out, e)
		entries = entries[n:]
	}
	return out
}

type cutShard struct {
	num, urls int
	data      string
}

// keepShard appends s, if c cut one, to out and recycles it.
func keepShard(out *[]cutShard, c *Cutter, s *Sitemap) {
	if s != nil {
		if s.Len() != len(bytes.Join(s.Parts(), nil)) {
			panic("Sitemap.Len is not the length of its Parts")
		}
		*out = append(*out, cutShard{s.Num, s.URLs, string(bytes.Join(s.Parts(), nil))})
		c.Recycle(s)
	}
}

// cutAdd cuts entries one Add at a time.
func cutAdd(c *Cutter, bs []Entries) []cutShard {
	var out []cutShard
	for _, e := range bs {
		prev := 0
		for _, end := range e.Ends {
			keepShard(&out, c, c.Add(e.Data[prev:end]))
			prev = int(end)
		}
	}
	keepShard(&out, c, c.Flush())
	return out
}

// cutEntries cuts the batches with AddEntries, as the pipeline does.
func cutEntries(c *Cutter, bs []Entries) []cutShard {
	var out []cutShard
	for i := range bs {
		for k := 0; k < len(bs[i].Ends); {
			var s *Sitemap
			k, s = c.AddEntries(&bs[i], k)
			keepShard(&out, c, s)
		}
	}
	keepShard(&out, c, c.Flush())
	return out
}

// checkStable checks shards cut from entries under the limits and cv:
// every shard within both limits, every entry once and in order, and each
// shard ends exactly where the curve, given only the entry's loc hash and
// the fill before and after it, says so, or where the next entry would
// not fit, or at the end of the input.
func checkStable(t *testing.T, what string, shards []cutShard, entries [][]byte, maxURLs, maxBytes int, cv Curve) {
	t.Helper()
	p := newStable(cv, maxURLs, maxBytes)
	i := 0
	for n, s := range shards {
		if s.num != n+1 || s.urls < 1 || s.urls > maxURLs || len(s.data) > maxBytes {
			t.Fatalf("%s: shard %d (num %d): %d URLs, %d bytes; limits %d, %d", what, n, s.num, s.urls, len(s.data), maxURLs, maxBytes)
		}
		if !bytes.HasPrefix([]byte(s.data), []byte(Header)) || !bytes.HasSuffix([]byte(s.data), []byte(Footer)) {
			t.Fatalf("%s: shard %d is not Header + entries + Footer", what, n)
		}
		body := s.data[len(Header) : len(s.data)-len(Footer)]
		size := len(Header) + len(Footer)
		for u := range s.urls {
			if i >= len(entries) || !bytes.HasPrefix([]byte(body), entries[i]) {
				t.Fatalf("%s: shard %d entry %d is not input entry %d: lost, duplicated or reordered", what, n, u, i)
			}
			body = body[len(entries[i]):]
			f0 := p.fill(u, size)
			size += len(entries[i])
			ends := p.cut(f0, p.fill(u+1, size), LocHash(EntryLoc(entries[i])))
			last := u == s.urls-1
			switch {
			case ends && !last:
				t.Fatalf("%s: shard %d goes on after entry %d (input %d), where the curve ends it", what, n, u, i)
			case last && !ends && i+1 < len(entries) && s.urls < maxURLs && size+len(entries[i+1]) <= maxBytes:
				t.Fatalf("%s: shard %d ends after entry %d (input %d) at %d bytes: neither the curve nor a limit ends it there", what, n, u, i, size)
			}
			i++
		}
		if body != "" {
			t.Fatalf("%s: shard %d holds %d bytes beyond its %d entries", what, n, len(body), s.urls)
		}
	}
	if i != len(entries) {
		t.Fatalf("%s: shards hold %d of %d entries", what, i, len(entries))
	}
}

// TestStableProperty: over random limits, entry sizes and curves, with Add
// and with AddEntries over random batches, every shard is within both
// limits, every entry is in once and in order, each cut is where the loc
// hash and the fill (or a limit) put it, and both ways give the same
// shards.
func TestStableProperty(t *testing.T) {
	curves := []Curve{DefaultCurve, {0, 1, 1, 1}, {0.3, 0.6, 1, 0.5}, {0.5, 0.9, 4, 64}, {0.9, 0.91, 3, 2}}
	for seed := range 400 {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		maxURLs := 1 + rng.IntN(80)
		maxEntry := 24 + rng.IntN(300)
		maxBytes := len(Header) + len(Footer) + maxEntry + rng.IntN(4000)
		switch seed % 10 {
		case 0: // every entry near the byte limit
			maxBytes = len(Header) + len(Footer) + maxEntry + rng.IntN(20)
		case 1: // tiny URLs: the URL limit binds
			maxEntry, maxURLs = 24+rng.IntN(3), 20+rng.IntN(200)
		}
		cv := curves[seed%len(curves)]
		var entries [][]byte
		for range 1 + rng.IntN(1500) {
			n := maxEntry
			if seed%10 != 0 {
				n = 24 + rng.IntN(maxEntry-23)
			} else {
				n -= rng.IntN(4)
			}
			entries = append(entries, locEntry(rng, n))
		}
		bs := batches(rng, entries)
		one, _ := NewCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes, Header: Header, Mode: CutStable, Curve: &cv})
		run, _ := NewCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes, Header: Header, Mode: CutStable, Curve: &cv})
		want, got := cutAdd(one, bs), cutEntries(run, bs)
		what := fmt.Sprintf("seed %d (%d URLs, %d bytes, curve %v)", seed, maxURLs, maxBytes, cv)
		checkStable(t, what+" Add", want, entries, maxURLs, maxBytes, cv)
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("%s: AddEntries shard %d differs from Add's:\n%+v\n%+v", what, i, got[i], want[i])
				}
			}
			t.Fatalf("%s: AddEntries cut %d shards, Add %d", what, len(got), len(want))
		}
	}
}

// TestStableByteLimit: entries of exactly MaxEntry bytes fill a shard each,
// to the byte, whatever the curve says; one byte less leaves room for
// nothing else either.
func TestStableByteLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxBytes = 4096
	c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: maxBytes, Header: Header, Mode: CutStable})
	for _, n := range []int{c.MaxEntry(), c.MaxEntry() - 1, c.MaxEntry()/2 + 1} {
		var entries [][]byte
		for range 50 {
			entries = append(entries, locEntry(rng, n))
		}
		shards := cutEntries(mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: maxBytes, Header: Header, Mode: CutStable}), batches(rng, entries))
		checkStable(t, fmt.Sprintf("%d-byte entries", n), shards, entries, 50000, maxBytes, DefaultCurve)
		if len(shards) != len(entries) {
			t.Errorf("%d-byte entries: %d shards, want one per entry", n, len(shards))
		}
	}
}

// TestStableFill: at the production limits and with small entries, shards
// end between Min and Max, and their fills follow the curve: a share
// exp(-Hazard) reaches Max, and the median end fill is where 1-exp(-Λ)
// is 1/2.
func TestStableFill(t *testing.T) {
	const maxURLs = 2000 // small for speed; 1/2000 fill steps
	cv := DefaultCurve
	rng := rand.New(rand.NewPCG(3, 4))
	var entries [][]byte
	for range 400_000 {
		entries = append(entries, locEntry(rng, 40+rng.IntN(60)))
	}
	shards := cutEntries(mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: 10485760, Header: Header, Mode: CutStable}), batches(rng, entries))
	var fills []float64
	atMax := 0
	for _, s := range shards[:len(shards)-1] {
		f := float64(s.urls) / maxURLs
		if f <= cv.Min || f > cv.Max+1.0/maxURLs {
			t.Fatalf("a shard ends %.4f full, outside (%.2f, %.2f]", f, cv.Min, cv.Max)
		}
		if f >= cv.Max {
			atMax++
		}
		fills = append(fills, f)
	}
	slices.Sort(fills)
	n := float64(len(fills))
	wantMax := math.Exp(-cv.Hazard) * n
	if math.Abs(float64(atMax)-wantMax) > 4*math.Sqrt(wantMax)+2 {
		t.Errorf("%d of %.0f shards reach Max, want %.1f", atMax, n, wantMax)
	}
	median := cv.Min + (cv.Max-cv.Min)*math.Pow(math.Ln2/cv.Hazard, 1/float64(cv.Shape))
	if got := fills[len(fills)/2]; math.Abs(got-median) > 0.01 {
		t.Errorf("median end fill %.4f, want %.4f", got, median)
	}
}

// boundaries returns where each shard of entries cut by c ends, as an
// index into entries (the shard holds entries up to it, exclusive).
func boundaries(c *Cutter, entries [][]byte) []int {
	var out []int
	n := 0
	keep := func(s *Sitemap) {
		if s != nil {
			n += s.URLs
			out = append(out, n)
			c.Recycle(s)
		}
	}
	for _, e := range entries {
		keep(c.Add(e))
	}
	keep(c.Flush())
	return out
}

// TestStableResync: the same URLs after two different prefixes are cut at
// the same boundaries once the two runs share one boundary, and they come
// to share one: cuts depend on the URL and the fill, not on the position in
// the input. With tight cuts they never meet (unless the prefixes differ
// by whole shards).
func TestStableResync(t *testing.T) {
	const maxURLs, shards, trials = 200, 40, 150
	var meet []int // shards of the common URLs before the runs meet
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 5))
		var tail [][]byte
		for range shards * maxURLs {
			tail = append(tail, locEntry(rng, 40+rng.IntN(100)))
		}
		a, b := rng.IntN(3*maxURLs), rng.IntN(3*maxURLs)
		for a == b {
			b = rng.IntN(3 * maxURLs)
		}
		prefix := func(n int) [][]byte {
			var p [][]byte
			for range n {
				p = append(p, locEntry(rng, 40+rng.IntN(100)))
			}
			return append(p, tail...)
		}
		pa, pb := prefix(a), prefix(b)
		for _, mode := range []CutMode{CutStable, CutTight} {
			ba := rel(boundaries(mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: 1 << 20, Header: Header, Mode: mode}), pa), a)
			bb := rel(boundaries(mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: 1 << 20, Header: Header, Mode: mode}), pb), b)
			common := -1
			for i, x := range ba {
				if _, ok := slices.BinarySearch(bb, x); ok && x < len(tail) {
					common = i
					break
				}
			}
			if mode == CutTight {
				if common >= 0 && (a-b)%maxURLs != 0 {
					t.Fatalf("trial %d: tight cuts after prefixes %d and %d meet at %d", trial, a, b, ba[common])
				}
				continue
			}
			if common < 0 {
				t.Fatalf("trial %d: the same %d URLs after prefixes of %d and %d never get a common boundary", trial, len(tail), a, b)
			}
			j, _ := slices.BinarySearch(bb, ba[common])
			if !slices.Equal(ba[common:], bb[j:]) {
				t.Fatalf("trial %d: boundaries after the common one at %d differ:\n%v\n%v", trial, ba[common], ba[common:], bb[j:])
			}
			meet = append(meet, ba[common]/maxURLs)
		}
	}
	slices.Sort(meet)
	med, p90 := meet[len(meet)/2], meet[len(meet)*9/10]
	t.Logf("shards of common URLs before two runs meet: median %d, 90th percentile %d, max %d", med, p90, meet[len(meet)-1])
	if med > 2 || p90 > 8 {
		t.Errorf("runs meet after a median of %d shards (90th percentile %d): want at most 2 (8)", med, p90)
	}
}

// rel returns the boundaries past the prefix of n entries, relative to it.
func rel(b []int, n int) []int {
	var out []int
	for _, x := range b {
		if x > n {
			out = append(out, x-n)
		}
	}
	return out
}

// TestStableAllocs: in stable mode, placing an entry allocates nothing,
// hashing and cutting included, with Add and with AddEntries.
func TestStableAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := mustCutter(CutterOptions{MaxURLs: 500, MaxBytes: 64 << 10, Header: Header, Mode: CutStable})
	e := locEntry(rng, 150)
	for range 5000 {
		if s := c.Add(e); s != nil {
			c.Recycle(s)
		}
	}
	if allocs := testing.AllocsPerRun(10000, func() {
		if s := c.Add(e); s != nil {
			c.Recycle(s)
		}
	}); allocs != 0 {
		t.Fatalf("Add: %v allocations per entry, want 0", allocs)
	}
	var es [][]byte
	for range 300 {
		es = append(es, locEntry(rng, 100+rng.IntN(100)))
	}
	bs := batches(rng, es)
	cutAll := func() {
		for i := range bs {
			for k := 0; k < len(bs[i].Ends); {
				var s *Sitemap
				if k, s = c.AddEntries(&bs[i], k); s != nil {
					c.Recycle(s)
				}
			}
		}
	}
	cutAll()
	if allocs := testing.AllocsPerRun(100, cutAll); allocs != 0 {
		t.Fatalf("AddEntries: %v allocations per %d entries, want 0", allocs, len(es))
	}
}

// realisticEntries returns n entries shaped like the encoder's output for
// generated rows: a loc of 30-300 bytes around 90, a lastmod on most.
func realisticEntries(n int) Entries {
	rng := rand.New(rand.NewPCG(9, 10))
	var e Entries
	for i := range n {
		e.Data = append(e.Data, "<url><loc>https://www.example.com/"...)
		for range 6 + int(rng.ExpFloat64()*50) {
			e.Data = append(e.Data, "abcdefghijklmnopqrstuvwxyz-/"[rng.IntN(28)])
		}
		e.Data = fmt.Appendf(e.Data, "-%d</loc><lastmod>2024-05-06T07:08:09Z</lastmod><changefreq>daily</changefreq></url>\n", i)
		e.Ends = append(e.Ends, uint32(len(e.Data)))
	}
	return e
}

// BenchmarkCutterModes compares AddEntries in both modes on realistic
// entries at the production limits, in batches as the pipeline hands them.
func BenchmarkCutterModes(b *testing.B) {
	e := realisticEntries(6000)
	for _, mode := range []CutMode{CutTight, CutStable} {
		b.Run(mode.String(), func(b *testing.B) {
			c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 10485760, Header: Header, Mode: mode})
			benchAddEntries(b, c, &e)
		})
	}
}

// BenchmarkLocHash: the hash of a loc of the generator's mean length.
func BenchmarkLocHash(b *testing.B) {
	e := realisticEntries(1)
	loc := EntryLoc(e.Data)
	b.SetBytes(int64(len(loc)))
	var h uint64
	for b.Loop() {
		h += LocHash(EntryLoc(e.Data))
	}
	_ = h
}
