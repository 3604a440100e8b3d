package input_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/sitemapgen/sitemapgen/pipeline/input/csvscan" // the stream format
	_ "github.com/sitemapgen/sitemapgen/pipeline/input/pqread"  // a format read by position

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// TestInputsOpenedOnce: the probe and the read open a regular file each, but
// an input that can be read only once (a FIFO here) is opened once and
// every one of its rows is read, its header included.
func TestInputsOpenedOnce(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(regular, []byte("loc\nhttps://www.example.com/a1\nhttps://www.example.com/a2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "b.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 30000 // more than one probe's worth of bytes
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		fmt.Fprintln(f, "lastmod,loc")
		for i := range n {
			if _, err := fmt.Fprintf(f, "2024-01-02,https://www.example.com/b%d\n", i); err != nil {
				t.Error(err) // EPIPE: the reader closed early
				return
			}
		}
	}()

	var mu sync.Mutex
	opens := map[string]int{}
	input.SetOpenFile(t.Cleanup, func(name string) (*os.File, error) {
		mu.Lock()
		opens[name]++
		mu.Unlock()
		return os.Open(name)
	})

	// As a run reads them: expand, probe, then open and read each.
	files, err := input.Expand([]string{regular, fifo})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := input.Probe(context.Background(), files, nil, input.Options{}); err != nil {
		t.Fatal(err)
	}
	defer input.Release(files)
	var got []string
	var rows int64
	for i := range files {
		src, err := input.Open(&files[i], nil, input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b input.Batch
		for {
			b.Reset()
			if err := src.Fill(&b, 0); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			for k := range b.Len() {
				got = append(got, strings.TrimPrefix(string(b.Field(input.Loc, k)), "https://www.example.com/")+" "+string(b.Field(input.Lastmod, k)))
			}
		}
		rows += src.Rows()
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if rows != n+2 {
		t.Errorf("rows=%d, want %d", rows, n+2)
	}
	if len(got) != n+2 || got[0] != "a1 " || got[2] != "b0 2024-01-02" || got[n+1] != fmt.Sprintf("b%d 2024-01-02", n-1) {
		t.Errorf("%d rows read; first %q", len(got), got[:min(len(got), 3)])
	}
	if opens[fifo] != 1 {
		t.Errorf("the FIFO was opened %d times, want 1", opens[fifo])
	}
	if opens[regular] != 2 {
		t.Errorf("the regular file was opened %d times, want 2 (probe, read)", opens[regular])
	}
}

// TestColumnarInputMustBeRegular: Parquet and Arrow are read by position; a
// pipe named .parquet is refused with a message, before anything is opened.
func TestColumnarInputMustBeRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "x.parquet")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := input.Expand([]string{fifo})
	if err == nil || !strings.Contains(err.Error(), "must be a regular file") {
		t.Fatalf("err = %v, want a Parquet input that must be a regular file", err)
	}
}

// TestFIFOWithoutWriterHonoursCancel: opening a FIFO blocks until a writer
// comes; a canceled run must not wait for one.
func TestFIFOWithoutWriterHonoursCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := input.Expand([]string{fifo})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = input.Probe(ctx, files, nil, input.Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v", d)
	}
	// Let the blocked open finish, so the test leaves no goroutine behind.
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
}

// TestExpandRepeats: a file reached twice, by any route, is refused naming
// both routes; distinct files alike in size and kind are not.
func TestExpandRepeats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", "loc\nhttps://www.example.com/a\n")
	b := write("b.csv", "loc\nhttps://www.example.com/b\n") // same size as a
	pq := write("export/part-0.parquet", "PAR1")
	write("export/part-1.parquet", "PAR1")
	if err := os.Symlink(a, filepath.Join(dir, "sym.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, filepath.Join(dir, "hard.csv")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f1.csv", "f2.csv"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := filepath.Rel(mustGetwd(t), a)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string // "": no error
	}{
		{[]string{a, b, pq, filepath.Join(dir, "f1.csv"), filepath.Join(dir, "f2.csv"), "-"}, ""},
		{[]string{a, a}, fmt.Sprintf("%q (argument 2) is the same file as %q (argument 1)", a, a)},
		{[]string{a, rel}, fmt.Sprintf("%q (argument 2) is the same file as %q (argument 1)", rel, a)},
		{[]string{b, dir + "/./a.csv", dir + "/export/../a.csv"}, fmt.Sprintf("%q (argument 3) is the same file as %q (argument 2)", dir+"/export/../a.csv", dir+"/./a.csv")},
		{[]string{pq, filepath.Join(dir, "export")}, fmt.Sprintf("%q (found by argument 2, %q) is the same file as %q (argument 1)", pq, filepath.Join(dir, "export"), pq)},
		{[]string{filepath.Join(dir, "export/*.parquet"), pq}, fmt.Sprintf("%q (argument 2) is the same file as %q (found by argument 1, %q)", pq, pq, filepath.Join(dir, "export/*.parquet"))},
		{[]string{a, filepath.Join(dir, "sym.csv")}, "sym.csv\" (argument 2) is the same file as"},
		{[]string{filepath.Join(dir, "hard.csv"), b, a}, "a.csv\" (argument 3) is the same file as \"" + filepath.Join(dir, "hard.csv")},
		{[]string{filepath.Join(dir, "f1.csv"), filepath.Join(dir, "f1.csv")}, "f1.csv\" (argument 2)"},
		{[]string{"-", a, "-"}, "input given more than once: '-' (stdin)"},
	} {
		_, err := input.Expand(tt.args)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.args, err)
			}
			continue
		}
		if !errors.Is(err, input.ErrRepeatedInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v\nwant input.ErrRepeatedInput saying …%s…", tt.args, err, tt.want)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
