package hreflang

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

var clusterLangs = []string{"en", "de", "fr", "es", "it"}

// appendClusterURL appends the URL of member k of cluster g.
func appendClusterURL(dst []byte, g, k int) []byte {
	dst = append(dst, "https://www.example.com/"...)
	dst = append(dst, clusterLangs[k]...)
	dst = append(dst, "/products/item-"...)
	return strconv.AppendInt(dst, int64(g), 10)
}

// appendClusterEntry appends page i of a set of reciprocal clusters of
// five, as the encoder writes it; every 100,000th page leaves out its link
// to the next member (one not_reciprocal problem each).
func appendClusterEntry(dst []byte, i int) []byte {
	g, k := i/5, i%5
	dst = append(dst, "<url><loc>"...)
	dst = appendClusterURL(dst, g, k)
	dst = append(dst, "</loc>"...)
	for j := range clusterLangs {
		if i%100000 == 99999 && j == (k+1)%5 {
			continue
		}
		dst = append(dst, `<xhtml:link rel="alternate" hreflang="`...)
		dst = append(dst, clusterLangs[j]...)
		dst = append(dst, `" href="`...)
		dst = appendClusterURL(dst, g, j)
		dst = append(dst, `"/>`...)
	}
	return append(dst, "</url>\n"...)
}

// BenchmarkAddEntry: the cost generate pays per row with five alternates.
func BenchmarkAddEntry(b *testing.B) {
	c := New(Options{TempDir: b.TempDir()})
	defer c.Close()
	var e []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e = appendClusterEntry(e[:0], i)
		if err := c.AddEntry(e, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck: a whole check (add and finish), per page of five links.
func BenchmarkCheck(b *testing.B) {
	var e []byte
	b.ReportAllocs()
	c := New(Options{TempDir: b.TempDir()})
	for i := 0; b.Loop(); i++ {
		e = appendClusterEntry(e[:0], i)
		if err := c.AddEntry(e, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := c.Finish(func(*Problem) error { return nil }); err != nil {
		b.Fatal(err)
	}
}

// TestScale measures a check of SITEMAPGEN_HREFLANG_PAGES pages with five
// alternates each (reciprocal clusters of five, one link in 100,000 pages
// left out): time per link, peak heap and peak RSS. Skipped unless the
// variable is set, e.g. 10000000 for the 10M x 5 figure of issue 13.
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SITEMAPGEN_HREFLANG_PAGES"))
	if n <= 0 {
		t.Skip("set SITEMAPGEN_HREFLANG_PAGES to measure")
	}
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // sample the heap
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	dir := os.Getenv("SITEMAPGEN_HREFLANG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	c := New(Options{TempDir: dir})
	start := time.Now()
	var e []byte
	for i := range n {
		e = appendClusterEntry(e[:0], i)
		if err := c.AddEntry(e, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	added := time.Since(start)
	disk := int64(c.logw.Buffered())
	if size, err := c.log.Seek(0, 1); err == nil {
		disk += size
	}
	c.join.stop()
	runs, size := c.join.spilled()
	disk += size + int64(len(c.join.buf))*int64(joinSize[kindNeed])
	var problems int
	counts, err := c.Finish(func(p *Problem) error {
		problems++
		if p.Kind != NotReciprocal {
			t.Errorf("unexpected %s %s %s %s", p.Kind, p.Page, p.Hreflang, p.Target)
		}
		return nil
	})
	total := time.Since(start)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if want := n / 100000; problems != want || counts.Pages != int64(n) {
		t.Errorf("%d problems, %d pages; want %d, %d", problems, counts.Pages, want, n)
	}
	status, _ := os.ReadFile("/proc/self/status")
	hwm := ""
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	t.Logf("%d pages, %d links: add %v, finish %v, total %v = %.0f ns/link; peak heap in use %.1f MiB, peak RSS %s; spilled %.2f GB (%d runs)",
		n, counts.Links, added.Round(time.Millisecond), (total - added).Round(time.Millisecond), total.Round(time.Millisecond),
		float64(total.Nanoseconds())/float64(counts.Links), float64(peak)/(1<<20), hwm, float64(disk)/1e9, runs)
}
