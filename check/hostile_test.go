package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repeatReader yields head, then fill repeated to n bytes, then tail.
type repeatReader struct {
	head, fill, tail []byte
	n                int64 // fill bytes left
	at               int   // next byte of fill
}

func (r *repeatReader) Read(p []byte) (int, error) {
	switch {
	case len(r.head) > 0:
		k := copy(p, r.head)
		r.head = r.head[k:]
		return k, nil
	case r.n > 0:
		k := 0
		for k < len(p) && r.n > 0 {
			c := copy(p[k:k+int(min(int64(len(p)-k), r.n))], r.fill[r.at:])
			k += c
			r.n -= int64(c)
			r.at = (r.at + c) % len(r.fill)
		}
		return k, nil
	case len(r.tail) > 0:
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

const urlsetOpen = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`

// hostile is a file made to exhaust a reader: its bytes are generated as
// they are read, so a 500 MB text node costs the test nothing.
type hostile struct {
	name             string
	head, fill, tail string
	n                int64
	want             Code // "": the file is valid
	also             Code // a schema problem the fixture cannot avoid
}

func (h hostile) reader() io.Reader {
	return &repeatReader{head: []byte(h.head), fill: []byte(h.fill), tail: []byte(h.tail), n: h.n}
}

// hostiles are the denial-of-service files, those that fit the
// 50 MiB cap at full size and the rest cut off by it.
func hostiles() []hostile {
	loc := "<url><loc>https://a.example/x</loc></url>"
	return []hostile{
		{"spaces-past-the-cap", urlsetOpen, " ", "</urlset>", 2 << 30, CodeTooLarge, ""},
		{"zeros", "", "\x00", "", 2 << 30, CodeNotWellFormed, ""},
		{"text-node-500MB", urlsetOpen + "<url><loc>", "a", "</loc></url></urlset>", 500 << 20, CodeTooLarge, ""},
		{"text-node-40MB", urlsetOpen + "<url><loc>", "a", "</loc></url></urlset>", 40 << 20, CodeLocLength, ""},
		{"white-space-40MB", urlsetOpen + loc, "\r\n \t", "</urlset>", 40 << 20, "", ""},
		{"comment-100MB", urlsetOpen + loc + "<!--", "a-", "--></urlset>", 100 << 20, CodeTooLarge, ""},
		{"comment-40MB", urlsetOpen + loc + "<!--", "-a", "--></urlset>", 40 << 20, "", ""},
		{"unclosed-10M", urlsetOpen, "<url>", "", 50 << 20, CodeTooNested, CodeUnexpectedElement},
		{"nested-100k", urlsetOpen + "<url>", "<a>", "", 300 << 10, CodeTooNested, CodeUnexpectedElement},
		{"cdata-40MB", urlsetOpen + "<url><loc><![CDATA[", "a", "]]></loc></url></urlset>", 40 << 20, CodeTooLarge, ""},
		{"attribute-40MB", urlsetOpen + `<url a="`, "a", `"/></urlset>`, 40 << 20, CodeTooLarge, ""},
		{"pi-40MB", urlsetOpen + loc + "<?pi ", "a", "?></urlset>", 40 << 20, CodeTooLarge, ""},
		{"bom", "\xef\xbb\xbf" + urlsetOpen + loc, "", "</urlset>", 0, "", ""},
	}
}

// streamFiles serves one generated file.
type streamFiles struct{ h hostile }

func (s streamFiles) Open(context.Context, string) (io.ReadCloser, error) {
	return io.NopCloser(s.h.reader()), nil
}
func (streamFiles) List(context.Context) ([]string, error) { return nil, nil }
func (streamFiles) String() string                         { return "(generated)" }

// checkBounded runs a check and fails when it allocates more than 32 MiB
// in all (the fingerprint bit set alone is 8 MiB) or takes more than 20 s.
func checkBounded(t *testing.T, files Files, root string, want, also Code) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	rep, err := Set(context.Background(), files, root, Options{Limits: Protocol, RunRecords: 64, TempDir: t.TempDir(), SkipOrphans: true,
		Scope: mustScope(t, "https://a.example/")})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
	t.Logf("%s: %v, %d KiB allocated", root, took, (after.TotalAlloc-before.TotalAlloc)>>10) // time is for people: speed is benchmarked, not asserted
	if want == "" {
		if !rep.OK() {
			t.Errorf("problems: %v", rep.List)
		}
		return
	}
	if rep.ByCode[want] != 1 || rep.Problems != 1+rep.ByCode[also] || rep.ByCode[also] > 1 {
		t.Errorf("want one %s problem, got %v", want, rep.List)
	}
}

// TestHostileFiles reads each hostile file as a stream, as an HTTP body
// and, gzipped, from a local folder: bounded memory, seconds, one problem.
func TestHostileFiles(t *testing.T) {
	if raceEnabled {
		t.Skip("hundreds of MiB under the race detector; the bounds are checked in the normal run")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range hostiles() {
			if r.URL.Path == "/"+h.name+".xml" {
				io.Copy(w, h.reader())
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, h := range hostiles() {
		t.Run(h.name, func(t *testing.T) {
			checkBounded(t, streamFiles{h}, h.name+".xml", h.want, h.also)
			checkBounded(t, &HTTP{}, srv.URL+"/"+h.name+".xml", h.want, h.also)
			if h.n > 60<<20 && testing.Short() {
				return // gzipping the full size takes a while
			}
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, "hostile.xml.gz"))
			if err != nil {
				t.Fatal(err)
			}
			zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
			io.Copy(zw, io.LimitReader(h.reader(), 64<<20)) // past the cap is past the cap
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			want := h.want
			if h.n > 60<<20 && h.want != CodeTooLarge && h.want != CodeNotWellFormed {
				t.Fatalf("%s: the local copy is cut at 64 MiB: the table must say too_large", h.name)
			}
			checkBounded(t, Dir(dir), "hostile.xml.gz", want, h.also)
		})
	}
}

// TestNotRegularFiles: a symbolic link to /dev/zero, one leaving the
// folder, a FIFO and a folder are refused without being read; a link to a
// file inside the folder is followed.
func TestNotRegularFiles(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	doc := []byte(urlsetOpen + "<url><loc>https://a.example/x</loc></url></urlset>")
	writeFile(t, dir, "real.xml", doc)
	writeFile(t, outside, "far.xml", doc)
	os.Symlink("real.xml", filepath.Join(dir, "inside.xml"))
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.xml"))
	os.Symlink(filepath.Join(outside, "far.xml"), filepath.Join(dir, "far.xml"))
	os.Mkdir(filepath.Join(dir, "folder.xml"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.xml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Code{"inside.xml": "", "zero.xml": CodeNotRegular, "far.xml": CodeNotRegular,
		"fifo.xml": CodeNotRegular, "folder.xml": CodeNotRegular} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			checkBounded(t, Dir(dir), name, want, "")
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the check hangs", name)
		}
	}
	// Listed by an index: reported where it is listed.
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://a.example/zero.xml</loc></sitemap></sitemapindex>`
	writeFile(t, dir, "index.xml", []byte(index))
	rep, err := Set(context.Background(), Dir(dir), "index.xml", Options{Limits: Ours, TempDir: t.TempDir(), SkipOrphans: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems != 1 || rep.List[0].Code != CodeNotRegular || rep.List[0].File != "index.xml" || rep.List[0].Line != 1 {
		t.Errorf("got %v", rep.List)
	}
}

// slowFiles serves a file that never ends, slowly: the byte cap is
// minutes away, only the cancel can stop it.
type slowFiles struct{}

func (slowFiles) Open(context.Context, string) (io.ReadCloser, error) {
	return io.NopCloser(&slowReader{}), nil
}
func (slowFiles) List(context.Context) ([]string, error) { return nil, nil }
func (slowFiles) String() string                         { return "(slow)" }

type slowReader struct{ started bool }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	if !s.started {
		s.started = true
		return copy(p, urlsetOpen), nil
	}
	return copy(p, bytes.Repeat([]byte(" "), 100)), nil
}

// TestCancelStopsAtOnce: a cancelled check (SIGINT, SIGTERM) stops reading
// an endless file at once.
func TestCancelStopsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Set(ctx, slowFiles{}, "endless.xml", Options{Limits: Protocol, TempDir: t.TempDir()})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopped %v after the cancel", took-200*time.Millisecond)
	}
	if err == nil {
		t.Errorf("a cancelled check returned no error")
	}
}

// TestManyAttributes: tags with tens of thousands of attributes or
// namespace declarations are checked in linear time (the pairwise checks
// took seconds a tag): one problem for a known element's attributes, and
// reading stops past maxBindings declarations in scope.
func TestManyAttributes(t *testing.T) {
	attrs := func(format string) string {
		var b strings.Builder
		for i := range 20000 {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name string
		file string
		want Code
		n    int
	}{
		{"on a url", urlsetOpen + "<url" + attrs(` a%d=""`) + "><loc>https://a.example/x</loc></url></urlset>", CodeBadAttribute, 1},
		{"on an extension element", urlsetOpen + `<url><loc>https://a.example/x</loc><foo xmlns="http://e/f"` + attrs(` a%d=""`) + "/></url></urlset>", CodeUnknownExtension, 1},
		{"declarations", urlsetOpen + "<url" + attrs(` xmlns:p%d="http://e/"`) + "><loc>https://a.example/x</loc></url></urlset>", CodeTooLarge, 1},
		{"twice, past the pairwise check", urlsetOpen + "<url" + attrs(` a%d=""`) + ` a7=""><loc>https://a.example/x</loc></url></urlset>`, CodeNotWellFormed, 1},
	} {
		rep, err := Set(context.Background(), streamFiles{hostile{head: tc.file}}, "many.xml", Options{Limits: Protocol, TempDir: t.TempDir(),
			SkipOrphans: true, Scope: mustScope(t, "https://a.example/")})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ByCode[tc.want] != tc.n || rep.Problems != tc.n {
			t.Errorf("%s: want %d %s problem, got %d problems: %v", tc.name, tc.n, tc.want, rep.Problems, codes(rep))
		}
	}
}
