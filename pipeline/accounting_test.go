package pipeline

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
)

// TestRejectValueCut: a long rejected value is cut at MaxRejectValue bytes,
// on a character boundary, and marked with its real length; a short one is
// kept whole; the file stays valid CSV.
func TestRejectValueCut(t *testing.T) {
	long := "https://www.example.com/" + strings.Repeat("é", 10000) // 2-byte runes: the cut falls inside one
	var out bytes.Buffer
	rw := newRejectWriter(&out, false)
	if err := rw.write("in.csv", 7, encode.TooLong, []byte(long), ""); err != nil {
		t.Fatal(err)
	}
	if err := rw.write("in.csv", 8, encode.NotHTTP, []byte("ftp://x,y"), ""); err != nil {
		t.Fatal(err)
	}
	if err := rw.flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != "source,row,reason,value" {
		t.Fatalf("rejects CSV: %v, %q", err, recs)
	}
	recs = recs[1:]
	v := recs[0][3]
	marker := "…[cut: 20024 bytes]"
	if !strings.HasSuffix(v, marker) || len(v)-len(marker) > MaxRejectValue || len(v)-len(marker) < MaxRejectValue-3 || !utf8.ValidString(v) {
		t.Errorf("cut value: %d bytes, ends %q, valid UTF-8 %v", len(v), v[max(0, len(v)-30):], utf8.ValidString(v))
	}
	if !strings.HasPrefix(long, strings.TrimSuffix(v, marker)) {
		t.Error("the cut value is not the start of the value")
	}
	if recs[1][3] != "ftp://x,y" {
		t.Errorf("short value %q", recs[1][3])
	}
}
