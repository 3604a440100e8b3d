package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"strings"
	"testing"
)

// TestGeneratorRowsPinned holds the rows of GeneratorVersion: cached bench
// inputs are named by it, so rows that change without a new version would
// compare runs over different data.
func TestGeneratorRowsPinned(t *testing.T) {
	g := NewGenerator(1, "https://www.example.com/")
	g.Bad = 0.05
	buf := []byte(g.Header())
	for range 20000 {
		buf = g.AppendCSV(buf)
	}
	sum := sha256.Sum256(buf)
	const want = "d0a7b189282389c730f658f6c4c28db1d64d38ad603c4f5d90186a7ede9f4a82" // GeneratorVersion g2
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("20000 rows of seed 1 hash to %s, want %s: bump GeneratorVersion if the change is meant", got, want)
	}
}

// TestSections checks the section column: each row's section is the first
// segment of its path, the large sections hold most rows, and the long
// tail is there.
func TestSections(t *testing.T) {
	const rows = 200_000
	g := NewGenerator(7, "https://www.example.com/")
	g.Sections = &DefaultSections
	buf := []byte(g.Header())
	for range rows {
		buf = g.AppendCSV(buf)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "loc,lastmod,changefreq,priority,section" {
		t.Fatalf("header %q", got)
	}
	count := map[string]int{}
	for i, r := range recs[1:] {
		sec := r[4]
		if !strings.HasPrefix(r[0], "https://www.example.com/"+sec+"/") {
			t.Fatalf("row %d: loc %q is not under its section %q", i+1, r[0], sec)
		}
		count[sec]++
	}
	large := 0
	for i := range DefaultSections.Large {
		n := count[DefaultSections.Name(i)]
		if n < rows/10 {
			t.Errorf("large section %s has %d rows", DefaultSections.Name(i), n)
		}
		large += n
	}
	if share := 1 - float64(large)/rows; share < 0.04 || share > 0.06 {
		t.Errorf("small sections hold %.3f of the rows, want about %.2f", share, DefaultSections.SmallShare)
	}
	if len(count) < DefaultSections.Large+DefaultSections.Small*9/10 {
		t.Errorf("%d sections seen, want nearly %d", len(count), DefaultSections.Large+DefaultSections.Small)
	}
	for sec := range count {
		if strings.ContainsAny(sec, ",/ ") || sec == "" {
			t.Errorf("section name %q", sec)
		}
	}
}

// TestSectionNames: every section of a shape has a name of its own, and
// only the small ones are brands.
func TestSectionNames(t *testing.T) {
	s := Sections{Large: 12, Small: 990}
	seen := map[string]int{}
	for i := range s.Large + s.Small {
		n := s.Name(i)
		if large := i < s.Large; large == strings.HasPrefix(n, "brand-") {
			t.Errorf("section %d (large: %v) is named %q", i, large, n)
		}
		if j, ok := seen[n]; ok {
			t.Fatalf("sections %d and %d are both named %q", j, i, n)
		}
		seen[n] = i
	}
}
