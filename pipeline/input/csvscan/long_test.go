package csvscan

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// TestCSVScannerLongRecord: a record over the limit (lowered to 1 KiB
// here) is one rejected row, wherever it is and however it is quoted, and
// the rows after it are read; its loc keeps its first bytes, marked when cut.
func TestCSVScannerLongRecord(t *testing.T) {
	const limit = 1 << 10
	keep := limit - cutMark // what a loc keeps under this limit
	x, y := strings.Repeat("x", 3000), strings.Repeat("y", 1500)
	cut := func(v string, n int) string { return fmt.Sprintf("%s…[cut: %d bytes]", v[:keep], n) }
	for _, tt := range []struct {
		name  string
		in    string
		lines bool
		want  []string
		err   error
		pos   string
	}{
		{name: "long loc", in: "loc,lastmod\nhttps://a/,1\nhttps://b/" + x + ",2\nhttps://c/,3\n",
			want: []string{`2 "https://a/" "1" nil nil`, `3 "` + cut("https://b/"+x, 3010) + `" nil nil nil !loc_too_long`, `4 "https://c/" "3" nil nil`}},
		{name: "long lastmod", in: "loc,lastmod\nhttps://a/,1\nhttps://b/," + x + "\r\nhttps://c/,3\r\n",
			want: []string{`2 "https://a/" "1" nil nil`, `3 "https://b/" nil nil nil !record_too_long`, `4 "https://c/" "3" nil nil`}},
		{name: "long record, loc last", in: "lastmod,changefreq,loc\n" + x + "," + x + ",\"https://b/\"\"\"\n\"\",,https://c/\n",
			want: []string{`2 "https://b/\"" nil nil nil !record_too_long`, `3 "https://c/" "" "" nil`}},
		{name: "no loc field", in: "lastmod,loc\n" + x + "\n2024,https://c/\n",
			want: []string{`2 "" nil nil nil !record_too_long`, `3 "https://c/" "2024" nil nil`}},
		{name: "quoted loc over lines", in: "loc,lastmod\n\"https://b/\"\"" + y + "\r\n" + y + "\",2\r\n\"https://c/\",3\n",
			want: []string{"2 " + strconv.Quote(cut("https://b/\""+y+"\n"+y, 3012)) + " nil nil nil !loc_too_long", `4 "https://c/" "3" nil nil`}},
		{name: "comma and CR in quotes", in: "loc\n\"https://b/," + y + "\r" + y + "\"\n",
			want: []string{"2 " + strconv.Quote(cut("https://b/,"+y+"\r"+y, 3012)) + " nil nil nil !loc_too_long"}},
		{name: "headerless", in: "https://b/" + x + ",2024\nhttps://c/,2025\n",
			want: []string{`1 "` + cut("https://b/"+x, 3010) + `" nil nil nil !loc_too_long`, `2 "https://c/" "2025" nil nil`}},
		{name: "last line, no line end", in: "loc\nhttps://a/\nhttps://b/" + x + "\r",
			want: []string{`2 "https://a/" nil nil nil`, `3 "` + cut("https://b/"+x, 3010) + `" nil nil nil !loc_too_long`}},
		{name: "lines", lines: true, in: "https://a/\n\"https://b/," + x + "\r\nhttps://c/\n",
			want: []string{`1 "https://a/" nil nil nil`, "2 " + strconv.Quote(cut("\"https://b/,"+x, 3012)) + " nil nil nil !loc_too_long", `3 "https://c/" nil nil nil`}},
		{name: "long header", in: "loc," + x + "\nhttps://c/\n", err: ErrRecordTooLong, pos: "1"},
		{name: "bare quote past the window", in: "loc\nhttps://a/\nhttps://b/" + x + "\"\nhttps://c/\n",
			want: []string{`2 "https://a/" nil nil nil`}, err: ErrQuote, pos: "3:3011"},
		{name: "extra quote past the window", in: "loc\n\"https://b/\n" + x + "\"z\n",
			err: ErrQuote, pos: "3:3001"},
		{name: "quote CR past the window", in: "loc\n\"https://b/\n" + x + "\"\rz\n",
			want: []string{"2 " + strconv.Quote(cut("https://b/\n"+x, 3011)) + " nil nil nil !loc_too_long", `4 "z" nil nil nil`}},
		{name: "unterminated past the window", in: "loc\nhttps://a/\n,\"https://b/" + x + "\n" + x,
			want: []string{`2 "https://a/" nil nil nil`}, err: ErrQuote, pos: "3:2"},
	} {
		readers := map[string]func() io.Reader{
			"plain":   func() io.Reader { return strings.NewReader(tt.in) },
			"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(tt.in)) },
			"half":    func() io.Reader { return iotest.HalfReader(strings.NewReader(tt.in)) },
		}
		for rname, mk := range readers {
			for _, chunk := range []int{1, 7, 100, 1000, 4096, 0} {
				sc := NewScanner(mk(), "in.csv", input.Options{Lines: tt.lines})
				sc.maxRecord = limit
				got, err := scanScanner(t, sc, chunk)
				where := fmt.Sprintf("%s: %s reader, chunk %d", tt.name, rname, chunk)
				checkErr(t, where, err, tt.err, tt.pos)
				if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
					t.Fatalf("%s: rows:\n%.300s\nwant:\n%.300s", where, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		}
	}
}

// lineReader reads rows before and after one line of n bytes, making the
// bytes as it goes: the input costs no memory.
type lineReader struct {
	head, tail []byte
	n, off     int64 // the long line's length, the bytes of it read
}

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.head) > 0 {
		k := copy(p, r.head)
		r.head = r.head[k:]
		return k, nil
	}
	if r.off < r.n {
		k := int(min(int64(len(p)), r.n-r.off))
		for i := range k {
			p[i] = 'x'
		}
		if r.off < 10 { // the line starts with a URL
			k = copy(p, "https://b/")
		}
		r.off += int64(k)
		return k, nil
	}
	if len(r.tail) > 0 {
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// TestCSVScannerLongLineMemory: the memory a long line costs is bounded by
// MaxRecordBytes, not by its length: a 20 MiB and a 200 MiB line cost the
// same, and no buffer holds either.
func TestCSVScannerLongLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 220 MiB")
	}
	var heap [2]uint64
	for k, n := range []int64{20 << 20, 200 << 20} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		head := []byte("loc,lastmod\n" + strings.Repeat("https://a/,2024-01-01\n", 1000))
		r := &lineReader{head: head, n: n, tail: []byte("\n" + strings.Repeat("https://c/,2024-01-01\n", 1000))}
		sc := NewScanner(r, "big.csv", input.Options{})
		var b input.Batch
		rows, rejected, maxBuf := 0, 0, 0
		var peak uint64
		for {
			b.Reset()
			err := sc.Fill(&b, 0)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			rows += b.Len()
			maxBuf = max(maxBuf, cap(b.Buf))
			for _, rj := range b.Rejected {
				rejected++
				if v := b.Field(input.Loc, rj.Row); !bytes.HasSuffix(v, fmt.Appendf(nil, "…[cut: %d bytes]", n)) || b.Line[rj.Row] != 1002 {
					t.Fatalf("line %d rejected with loc %.40q…%q", b.Line[rj.Row], v, v[max(0, len(v)-30):])
				}
			}
		}
		runtime.ReadMemStats(&after)
		if rows != 2001 || rejected != 1 {
			t.Fatalf("%d rows, %d rejected", rows, rejected)
		}
		heap[k] = peak - before.HeapAlloc
		t.Logf("a %d MiB line: peak heap +%.1f MiB, allocated %.1f MiB in all, largest buffer %.1f MiB",
			n>>20, float64(heap[k])/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(maxBuf)/(1<<20))
		if maxBuf > MaxRecordBytes+input.DefaultChunk {
			t.Errorf("a %d MiB line: a buffer of %d bytes", n>>20, maxBuf)
		}
		if total := after.TotalAlloc - before.TotalAlloc; total > 2*MaxRecordBytes+4<<20 {
			t.Errorf("a %d MiB line: %d bytes allocated", n>>20, total)
		}
	}
	if heap[1] > heap[0]+2<<20 {
		t.Errorf("peak heap grows with the line: +%d bytes for 20 MiB, +%d for 200 MiB", heap[0], heap[1])
	}
}
