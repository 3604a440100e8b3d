package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
)

func entry(n int, tag byte) []byte {
	e := bytes.Repeat([]byte{tag}, n-1)
	return append(e, '\n')
}

// TestCutterExactFit: a shard whose entries fill the limit to the byte is
// not cut early, and one byte less moves the last entry to the next shard.
func TestCutterExactFit(t *testing.T) {
	const e = 100
	for _, slack := range []int{0, -1} {
		max := len(Header) + len(Footer) + 3*e + slack
		c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: max})
		var shards []*Sitemap
		for i := range 7 {
			if s := c.Add(entry(e, 'a'+byte(i))); s != nil {
				shards = append(shards, s)
			}
		}
		shards = append(shards, c.Flush())
		want := 3
		if slack < 0 {
			want = 2
		}
		if shards[0].URLs != want {
			t.Errorf("slack %d: first shard has %d entries, want %d", slack, shards[0].URLs, want)
		}
		if slack == 0 && len(shards[0].Data) != max {
			t.Errorf("exact fit: shard is %d bytes, limit %d", len(shards[0].Data), max)
		}
	}
}

// randomLimits draws a property test's limits: up to 60 URLs a shard,
// entries up to maxEntry bytes, and room for at least one of them.
func randomLimits(rng *rand.Rand) (maxURLs, maxEntry, maxBytes int) {
	maxURLs = 1 + rng.IntN(60)
	maxEntry = 1 + rng.IntN(200)
	return maxURLs, maxEntry, len(Header) + len(Footer) + maxEntry + rng.IntN(2000)
}

// TestCutterProperty: over random small entries and limits, every shard is
// within both limits, is closed only when the next entry would not fit, and
// the shards hold every entry once, in order.
func TestCutterProperty(t *testing.T) {
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		maxURLs, maxEntry, maxBytes := randomLimits(rng)
		c := mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes})
		var in, out []byte
		var shards []*Sitemap
		keep := func(s *Sitemap) {
			if s != nil {
				shards = append(shards, &Sitemap{Num: s.Num, URLs: s.URLs, Data: append([]byte(nil), s.Data...)})
				c.Recycle(s)
			}
		}
		for i := range 500 {
			e := entry(1+rng.IntN(maxEntry), 'a'+byte(i%26))
			in = append(in, e...)
			keep(c.Add(e))
		}
		keep(c.Flush())
		for i, s := range shards {
			if s.Num != i+1 || s.URLs < 1 || s.URLs > maxURLs || len(s.Data) > maxBytes {
				t.Fatalf("seed %d: shard %d (num %d): %d URLs, %d bytes; limits %d, %d", seed, i, s.Num, s.URLs, len(s.Data), maxURLs, maxBytes)
			}
			body := bytes.TrimSuffix(bytes.TrimPrefix(s.Data, []byte(Header)), []byte(Footer))
			if len(body)+len(Header)+len(Footer) != len(s.Data) || bytes.Count(body, []byte("\n")) != s.URLs {
				t.Fatalf("seed %d: shard %d is not Header + %d entries + Footer", seed, i, s.URLs)
			}
			if i+1 < len(shards) {
				next := shards[i+1].Data[len(Header):]
				next = next[:bytes.IndexByte(next, '\n')+1]
				if s.URLs < maxURLs && len(s.Data)+len(next) <= maxBytes {
					t.Fatalf("seed %d: shard %d closed at %d bytes with room for the next %d-byte entry (limit %d)", seed, i, len(s.Data), len(next), maxBytes)
				}
			}
			out = append(out, body...)
		}
		if !bytes.Equal(in, out) {
			t.Fatalf("seed %d: entries lost, duplicated or reordered", seed)
		}
	}
}

// TestCutterAllocs: placing an entry allocates nothing, cutting included,
// once recycled shards are available.
func TestCutterAllocs(t *testing.T) {
	c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 64 << 10})
	e := entry(200, 'x')
	for range 2000 { // warm up: grow and recycle a few shards
		if s := c.Add(e); s != nil {
			c.Recycle(s)
		}
	}
	allocs := testing.AllocsPerRun(10000, func() {
		if s := c.Add(e); s != nil {
			c.Recycle(s)
		}
	})
	if allocs != 0 {
		t.Fatalf("Add: %v allocations per entry, want 0", allocs)
	}
}

func BenchmarkCutterAdd(b *testing.B) {
	c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 10485760})
	e := entry(190, 'x')
	b.SetBytes(int64(len(e)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if s := c.Add(e); s != nil {
			c.Recycle(s)
		}
	}
}

func ExampleCutter() {
	c := mustCutter(CutterOptions{MaxURLs: 2, MaxBytes: 1 << 20})
	for _, loc := range []string{"a", "b", "c"} {
		if s := c.Add(fmt.Appendf(nil, "<url><loc>https://example.com/%s</loc></url>\n", loc)); s != nil {
			fmt.Println("shard", s.Num, s.URLs, "URLs")
		}
	}
	s := c.Flush()
	fmt.Println("shard", s.Num, s.URLs, "URLs")
	// Output:
	// shard 1 2 URLs
	// shard 2 1 URLs
}

// TestCutterHeaderCounts: a run's extension namespaces make the header
// longer, and those bytes count in the limit: the same entries that fit
// under Header to the byte no longer fit.
func TestCutterHeaderCounts(t *testing.T) {
	h := URLSetHeader(encode.NSXhtml | encode.NSImage | encode.NSVideo | encode.NSNews | encode.NSMobile)
	for _, want := range []string{`xmlns:xhtml="http://www.w3.org/1999/xhtml"`, `xmlns:mobile=`, `xmlns:image=`, `xmlns:video=`, `xmlns:news=`} {
		if !strings.Contains(h, want) {
			t.Errorf("header %s lacks %s", h, want)
		}
	}
	if URLSetHeader(0) != Header || URLSetHeader(encode.NSImage) == Header {
		t.Error("URLSetHeader(0) must be Header, and a namespace must change it")
	}
	const e = 100
	max := len(h) + len(Footer) + 3*e
	for _, tc := range []struct {
		header string
		want   int
	}{{h, 3}, {h[:len(h)-1] + " >\n", 2}} {
		c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: max, Header: tc.header})
		if c.MaxEntry() != max-len(tc.header)-len(Footer) {
			t.Errorf("MaxEntry %d ignores the header", c.MaxEntry())
		}
		var first *Sitemap
		for i := range 4 {
			if s := c.Add(entry(e, 'a'+byte(i))); s != nil && first == nil {
				first = s
			}
		}
		if first == nil || first.URLs != tc.want || !bytes.HasPrefix(first.Data, []byte(tc.header)) || len(first.Data) > max {
			t.Fatalf("header of %d bytes: first shard %+v; want %d entries within %d bytes", len(tc.header), first, tc.want, max)
		}
	}
}

// TestCutterAddEntries: over random entries, lastmods, limits and run
// lengths, AddEntries cuts exactly the shards successive Adds cut.
func TestCutterAddEntries(t *testing.T) {
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		maxURLs, maxEntry, maxBytes := randomLimits(rng)
		if seed%10 == 0 {
			maxBytes = len(Header) + len(Footer) + maxEntry // one long entry per shard
		}
		one, run := mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes}), mustCutter(CutterOptions{MaxURLs: maxURLs, MaxBytes: maxBytes})
		bs := make([]Entries, 40)
		for b := range bs {
			e := &bs[b]
			for i := range rng.IntN(80) {
				e.Data = append(e.Data, entry(1+rng.IntN(maxEntry), 'a'+byte((b+i)%26))...)
				e.Ends = append(e.Ends, uint32(len(e.Data)))
			}
		}
		want, got := cutAdd(one, bs), cutEntries(run, bs)
		if len(got) != len(want) {
			t.Fatalf("seed %d: AddEntries cut %d shards, Add %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: shard %d differs:\nAddEntries %+v\nAdd        %+v", seed, i, got[i], want[i])
			}
		}
	}
}

func BenchmarkCutterAddEntries(b *testing.B) {
	c := mustCutter(CutterOptions{MaxURLs: 50000, MaxBytes: 10485760})
	var e Entries
	for range 6000 {
		e.Data = append(e.Data, entry(190, 'x')...)
		e.Ends = append(e.Ends, uint32(len(e.Data)))
	}
	benchAddEntries(b, c, &e)
}

// benchAddEntries measures c cutting all of e, batch after batch, as the
// pipeline hands them, recycling every sitemap cut.
func benchAddEntries(b *testing.B, c *Cutter, e *Entries) {
	b.SetBytes(int64(len(e.Data)))
	b.ReportAllocs()
	for b.Loop() {
		for k := 0; k < len(e.Ends); {
			var s *Sitemap
			if k, s = c.AddEntries(e, k); s != nil {
				c.Recycle(s)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(e.Ends)), "ns/entry")
}

// mustCutter is NewCutter for options the test knows are valid.
func mustCutter(o CutterOptions) *Cutter {
	c, err := NewCutter(o)
	if err != nil {
		panic(err)
	}
	return c
}
