package s3obj_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

func TestParseContentRange(t *testing.T) {
	for _, tt := range []struct {
		in                 string
		first, last, total int64
		ok                 bool
	}{
		{"bytes 0-99/1000", 0, 99, 1000, true},
		{"bytes 5-5/6", 5, 5, 6, true},
		{"bytes 0-99/*", 0, 99, -1, true},
		{"bytes 0-99/99", 0, 0, 0, false},  // last beyond the total
		{"bytes 10-9/100", 0, 0, 0, false}, // backwards
		{"bytes -1-9/100", 0, 0, 0, false},
		{"bytes +1-9/100", 0, 0, 0, false},
		{"bytes 0-9/1e3", 0, 0, 0, false},
		{"bytes 0-99999999999999999999/*", 0, 0, 0, false},
		{"bytes */100", 0, 0, 0, false}, // unsatisfied range: not an answer to a read
		{"items 0-9/100", 0, 0, 0, false},
		{"bytes 0-9", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	} {
		f, l, tot, ok := s3obj.ParseContentRange(tt.in)
		if ok != tt.ok || ok && (f != tt.first || l != tt.last || tot != tt.total) {
			t.Errorf("parseContentRange(%q) = %d, %d, %d, %v", tt.in, f, l, tot, ok)
		}
	}
}

// FuzzContentRange: whatever a server sends, the parse never panics, and
// what it accepts is a range that can be true and prints back the same.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/1000", "bytes 0-0/*", "bytes 9-8/10", "bytes 1-2/3x", "bytes 00-1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		first, last, total, ok := s3obj.ParseContentRange(h)
		if !ok {
			return
		}
		if first < 0 || last < first || total != -1 && total <= last {
			t.Fatalf("%q: accepted %d-%d/%d", h, first, last, total)
		}
		tot := "*"
		if total >= 0 {
			tot = fmt.Sprint(total)
		}
		back := fmt.Sprintf("bytes %d-%d/%s", first, last, tot)
		if f2, l2, t2, ok2 := s3obj.ParseContentRange(back); !ok2 || f2 != first || l2 != last || t2 != total {
			t.Fatalf("%q: %q does not parse back", h, back)
		}
	})
}

// FuzzPlan: the requests of a prefetch cover every byte asked for within
// the object, none outside it, none twice, none longer than the maximum.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{0, 10, 15, 10, 90, 50}, int64(100), int64(3), int64(7))
	f.Fuzz(func(t *testing.T, raw []byte, size, gap, maxBlock int64) {
		size, gap, maxBlock = size%4096, gap%64, max(maxBlock%512, 1)
		if size < 0 || gap < 0 {
			return
		}
		var in []s3obj.Range
		for i := 0; i+1 < len(raw); i += 2 {
			in = append(in, s3obj.Range{Off: int64(raw[i]) * 16, Len: int64(int8(raw[i+1]))})
		}
		plan := s3obj.Plan(slices.Clone(in), size, gap, maxBlock)
		cover := make([]int, size)
		for _, r := range plan {
			if r.Len <= 0 || r.Len > maxBlock || r.Off < 0 || r.End() > size {
				t.Fatalf("plan %v: bad request %v", plan, r)
			}
			for i := r.Off; i < r.End(); i++ {
				cover[i]++
			}
		}
		for _, r := range in {
			for i := max(r.Off, 0); i < min(r.End(), size); i++ {
				if cover[i] != 1 {
					t.Fatalf("byte %d of %v covered %d times by %v", i, r, cover[i], plan)
				}
			}
		}
	})
}
