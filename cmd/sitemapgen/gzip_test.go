package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestGzipErrorSaysWhere: a damaged or truncated .csv.gz fails the run with
// the line the data had reached and the byte of the file where the damage
// was found, not only the file's name.
func TestGzipErrorSaysWhere(t *testing.T) {
	var rows strings.Builder
	const n = 50000
	for i := range n {
		fmt.Fprintf(&rows, "%sp/%d\n", base, i)
	}
	data := gz(t, rows.String())
	corrupt := append([]byte(nil), data...)
	const from = 1000 // damaged bytes: [from, from+100)
	for i := from; i < from+100; i++ {
		corrupt[i] = 0xff
	}
	truncated := data[:len(data)-300]
	where := regexp.MustCompile(`\.csv\.gz:(\d+): gzip: (.*) \(byte (\d+) of the file(: it is cut short)?\)`)
	for _, tt := range []struct {
		name      string
		data      []byte
		cut       bool
		minOffset int // the damage is found at or after it
		maxOffset int
	}{
		{"corrupt", corrupt, false, from, len(corrupt)},
		{"truncated", truncated, true, len(truncated), len(truncated)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tt.name+".csv.gz")
			if err := os.WriteFile(p, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(dir, "out"), p)
			m := where.FindStringSubmatch(stderr)
			if code != 1 || m == nil {
				t.Fatalf("exit %d, want 1 with file:line: gzip: … (byte N of the file)\n%s", code, stderr)
			}
			line, _ := strconv.Atoi(m[1])
			off, _ := strconv.Atoi(m[3])
			if line < 2 || line > n+1 {
				t.Errorf("line %d, want one in 2..%d", line, n+1)
			}
			if off < tt.minOffset || off > tt.maxOffset || (m[4] != "") != tt.cut {
				t.Errorf("%q: byte %d, want %d..%d, cut short %v", m[0], off, tt.minOffset, tt.maxOffset, tt.cut)
			}
		})
	}
}

// TestGzipMembersAndPadding: a .csv.gz is read as gzip(1) reads it, every
// member in turn and zero bytes after the last ignored (block writers pad
// so); other bytes after the last member fail the run, saying where.
func TestGzipMembersAndPadding(t *testing.T) {
	var a, b strings.Builder
	a.WriteString("loc\n")
	const n = 3000
	for i := range n {
		fmt.Fprintf(&a, "%sa/%d\n", base, i)
		fmt.Fprintf(&b, "%sb/%d\n", base, i)
	}
	two := append(gz(t, a.String()), gz(t, b.String())...)
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data []byte
		urls int64
		err  string
	}{
		{"padded", append(gz(t, a.String()), make([]byte, 4096)...), n, ""},
		{"members padded", append(append([]byte(nil), two...), make([]byte, 100)...), 2 * n, ""},
		{"garbage", append(append([]byte(nil), two...), "\x00\x00junk"...), 0, "trailing garbage after the last member (byte " + strconv.Itoa(len(two)) + " of the file)"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".csv.gz")
		if err := os.WriteFile(p, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep := filepath.Join(dir, "report.json")
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", filepath.Join(dir, "out-"+tt.name), "--report", rep, p)
		if tt.err != "" {
			if code != 1 || !strings.Contains(stderr, tt.err) {
				t.Errorf("%s: exit %d, want 1 and %q\n%s", tt.name, code, tt.err, stderr)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tt.name, code, stderr)
		}
		if r := readReport(t, rep); r.URLs != tt.urls {
			t.Errorf("%s: %d URLs, want %d", tt.name, r.URLs, tt.urls)
		}
	}
}
