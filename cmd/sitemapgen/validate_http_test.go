package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/check"
)

// site serves a set that generate wrote, on 127.0.0.1, with faults injected
// per path, counting requests and the most in flight at once.
type site struct {
	srv    *httptest.Server
	dir    string
	shards []string // paths of the shards, "/sitemap-000001-....xml.gz"

	mu       sync.Mutex
	fault    map[string]func(w http.ResponseWriter, r *http.Request, n int) bool // true: handled
	requests map[string]int
	agents   map[string]bool
	inflight atomic.Int32
	peak     atomic.Int32
	delay    time.Duration
}

func newSite(t *testing.T, urls, maxURLs int) *site {
	s := &site{fault: map[string]func(http.ResponseWriter, *http.Request, int) bool{}, requests: map[string]int{}, agents: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	var b strings.Builder
	b.WriteString("loc,lastmod\n")
	for i := range urls {
		fmt.Fprintf(&b, "%s/items/%d?a=1&b=%d,2024-01-02\n", s.srv.URL, i, i)
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(in, []byte(b.String()), 0o644)
	s.dir = filepath.Join(t.TempDir(), "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", s.srv.URL+"/", "--out", s.dir,
		"--max-urls", fmt.Sprint(maxURLs), in); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	names, _ := filepath.Glob(filepath.Join(s.dir, "sitemap-0*.xml.gz"))
	for _, n := range names {
		s.shards = append(s.shards, "/"+filepath.Base(n))
	}
	if len(s.shards) < 2 {
		t.Fatalf("want shards, got %v", names)
	}
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	now := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		p := s.peak.Load()
		if now <= p || s.peak.CompareAndSwap(p, now) {
			break
		}
	}
	s.mu.Lock()
	s.requests[r.URL.Path]++
	n := s.requests[r.URL.Path]
	s.agents[r.UserAgent()] = true
	f := s.fault[r.URL.Path]
	delay := s.delay
	s.mu.Unlock()
	time.Sleep(delay)
	if f != nil && f(w, r, n) {
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "robots.txt" {
		name = "sitemap-robots.txt"
	}
	if strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	http.ServeFile(w, r, filepath.Join(s.dir, name))
}

// validateURL runs validate on a URL of the site with fast HTTP settings
// and returns the exit code and the report.
func (s *site) validate(t *testing.T, root string, extra ...string) (int, check.Report, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	args := append([]string{"validate", "--report", report, "--http-timeout", "30s"}, extra...)
	code, stdout, stderr := sitemapgen(t, "", append(args, s.srv.URL+root)...)
	var rep check.Report
	if b, err := os.ReadFile(report); err == nil {
		json.Unmarshal(b, &rep)
	}
	return code, rep, stdout + stderr
}

func init() { httpBackoff = 20 * time.Millisecond }

// TestValidateHTTPValid: a set that generate wrote, served over HTTP,
// passes through its robots.txt, its root index and one shard URL.
func TestValidateHTTPValid(t *testing.T) {
	s := newSite(t, 500, 100)
	for _, root := range []string{"/robots.txt", "/sitemap.xml", s.shards[0]} {
		code, rep, out := s.validate(t, root)
		if code != 0 || rep.URLs == 0 {
			t.Fatalf("%s: exit %d, %d URLs\n%s", root, code, rep.URLs, out)
		}
		if root != s.shards[0] && rep.URLs != 500 {
			t.Errorf("%s: %d URLs, want 500", root, rep.URLs)
		}
	}
	for ua := range s.agents {
		if !strings.HasPrefix(ua, "sitemapgen/") {
			t.Errorf("User-Agent %q does not name sitemapgen", ua)
		}
	}
	// A robots.txt without a Sitemap: line is a problem.
	s.fault["/robots.txt"] = func(w http.ResponseWriter, r *http.Request, n int) bool {
		fmt.Fprint(w, "User-agent: *\nDisallow:\n")
		return true
	}
	if code, rep, out := s.validate(t, "/robots.txt"); code != 1 || rep.ByCode[check.CodeNoSitemap] != 1 {
		t.Errorf("robots.txt without Sitemap: exit %d\n%s", code, out)
	}
}

// gzBytes compresses data.
func gzBytes(data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// bigSitemap is a valid sitemap padded with white space to size bytes.
func bigSitemap(size int) []byte {
	head := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
	tail := "</urlset>\n"
	b := bytes.Repeat([]byte(" "), size)
	copy(b, head)
	copy(b[len(b)-len(tail):], tail)
	return b
}

// TestValidateHTTPFaults injects one fault at a time into a served set:
// each is reported once, with its code, and the check exits 1; the faults
// that a retry heals pass.
func TestValidateHTTPFaults(t *testing.T) {
	s := newSite(t, 300, 100)
	shard := s.shards[1]
	data, err := os.ReadFile(filepath.Join(s.dir, strings.TrimPrefix(shard, "/")))
	if err != nil {
		t.Fatal(err)
	}
	bomb := gzBytes(bigSitemap(60 << 20))
	cases := []struct {
		name  string // a name ending in "-plain" is served at /big.xml, the root
		fault func(w http.ResponseWriter, r *http.Request, n int) bool
		want  check.Code // "": passes
		args  []string
		check func(t *testing.T)
	}{
		{"404", func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.NotFound(w, r)
			return true
		}, check.CodeMissingFile, nil, nil},
		{"410", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.WriteHeader(http.StatusGone)
			return true
		}, check.CodeMissingFile, nil, nil},
		{"500-then-200", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				return true
			}
			return false
		}, "", nil, func(t *testing.T) {
			if s.requests[shard] != 2 {
				t.Errorf("%d requests, want 2", s.requests[shard])
			}
		}},
		{"503-always", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}, check.CodeUnreadable, []string{"--http-retries", "2"}, func(t *testing.T) {
			if s.requests[shard] != 3 {
				t.Errorf("%d requests, want 3", s.requests[shard])
			}
		}},
		{"429-retry-after", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}, check.CodeUnreadable, []string{"--http-retries", "1"}, nil},
		{"redirect-loop", func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.Redirect(w, r, shard+".b", http.StatusFound)
			return true
		}, check.CodeRedirect, nil, nil},
		{"redirect-other-host", func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.Redirect(w, r, strings.Replace(s.srv.URL, "127.0.0.1", "localhost", 1)+shard, http.StatusMovedPermanently)
			return true
		}, check.CodeRedirect, nil, nil},
		{"html-soft-404", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!DOCTYPE html><html><body>Page not found</body></html>")
			return true
		}, check.CodeNotXML, nil, nil},
		{"html-unlabelled", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, "<html><body>Page not found</body></html>")
			return true
		}, check.CodeNotXML, nil, nil},
		{"gzip-bomb", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Write(bomb)
			return true
		}, check.CodeTooLarge, nil, nil},
		{"content-encoding-bomb", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
			return true
		}, check.CodeTooLarge, nil, nil},
		{"60MiB-plain", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Type", "application/xml")
			big := bigSitemap(60 << 20)
			for i := 0; i < len(big); i += 1 << 20 {
				if _, err := w.Write(big[i:min(i+1<<20, len(big))]); err != nil {
					return true
				}
			}
			return true
		}, check.CodeTooLarge, nil, nil},
		{"slow", func(w http.ResponseWriter, r *http.Request, n int) bool {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
			return true
		}, check.CodeUnreadable, []string{"--http-timeout", "150ms", "--http-retries", "1"}, nil},
		{"reset-mid-body", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n > 1 {
				return false
			}
			// The connection is closed half way through the body.
			http.ServeFile(&cutWriter{ResponseWriter: w, left: len(data) / 2}, r, filepath.Join(s.dir, strings.TrimPrefix(shard, "/")))
			return true
		}, "", nil, func(t *testing.T) {
			if s.requests[shard] != 2 {
				t.Errorf("%d requests, want 2", s.requests[shard])
			}
		}},
		{"reset-mid-body-no-range", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			if n > 1 {
				w.Write(data) // Range ignored: the whole body again
				return true
			}
			(&cutWriter{ResponseWriter: w, left: len(data) / 2}).Write(data)
			return true
		}, "", nil, func(t *testing.T) {
			if s.requests[shard] != 2 {
				t.Errorf("%d requests, want 2", s.requests[shard])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.mu.Lock()
			s.fault = map[string]func(http.ResponseWriter, *http.Request, int) bool{shard: tc.fault, shard + ".b": tc.fault}
			root := "/robots.txt"
			if strings.HasSuffix(tc.name, "-plain") {
				s.fault = map[string]func(http.ResponseWriter, *http.Request, int) bool{"/big.xml": tc.fault}
				root = "/big.xml"
			}
			s.requests = map[string]int{}
			s.mu.Unlock()
			start := time.Now()
			code, rep, out := s.validate(t, root, tc.args...)
			took := time.Since(start)
			s.mu.Lock()
			defer s.mu.Unlock()
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("exit %d, want 0\n%s", code, out)
				}
			} else if code != 1 || rep.Problems != 1 || rep.ByCode[tc.want] != 1 {
				t.Fatalf("exit %d, problems %v, want one %s\n%s", code, rep.ByCode, tc.want, out)
			} else if !strings.Contains(rep.List[0].File+rep.List[0].Value, s.srv.URL) {
				t.Errorf("the problem does not name the URL: %+v", rep.List[0])
			}
			if tc.name == "429-retry-after" && took < 900*time.Millisecond {
				t.Errorf("Retry-After: 1 not honoured: %v", took)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

// cutWriter passes left bytes of a body on, then drops the connection.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) >= c.left {
		c.ResponseWriter.Write(p[:c.left])
		c.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	c.left -= len(p)
	return c.ResponseWriter.Write(p)
}

// TestValidateHTTPConcurrency: --http-concurrency 2 is never exceeded, even
// with more workers, and is reached.
func TestValidateHTTPConcurrency(t *testing.T) {
	s := newSite(t, 1000, 50)
	s.delay = 20 * time.Millisecond
	code, _, out := s.validate(t, "/sitemap.xml", "--http-concurrency", "2", "--workers", "8")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if p := s.peak.Load(); p != 2 {
		t.Errorf("at most %d requests in flight, want exactly 2", p)
	}
}

// TestValidateHTTPScope: the sitemaps a robots.txt names may list URLs of
// the whole host; the same sitemap reached through an index in a folder
// may only list URLs under that folder.
func TestValidateHTTPScope(t *testing.T) {
	s := newSite(t, 200, 100)
	doc := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>` +
		s.srv.URL + `/elsewhere/page</loc></url></urlset>`
	index := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` +
		s.srv.URL + `/sub/x.xml</loc></sitemap></sitemapindex>`
	s.fault["/sub/x.xml"] = func(w http.ResponseWriter, r *http.Request, n int) bool { fmt.Fprint(w, doc); return true }
	s.fault["/sub/index.xml"] = func(w http.ResponseWriter, r *http.Request, n int) bool { fmt.Fprint(w, index); return true }
	s.fault["/robots.txt"] = func(w http.ResponseWriter, r *http.Request, n int) bool {
		fmt.Fprintf(w, "Sitemap: %s/sub/x.xml\n", s.srv.URL)
		return true
	}
	if code, _, out := s.validate(t, "/robots.txt"); code != 0 {
		t.Errorf("through robots.txt: exit %d\n%s", code, out)
	}
	if code, rep, out := s.validate(t, "/sub/index.xml"); code != 1 || rep.ByCode["out_of_scope"] != 1 {
		t.Errorf("through an index: exit %d\n%s", code, out)
	}
	// A folder moved elsewhere by a redirect is not followed.
	s.fault["/sub/moved.xml"] = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Redirect(w, r, "/other/x.xml", http.StatusFound)
		return true
	}
	if code, rep, out := s.validate(t, "/sub/moved.xml"); code != 1 || rep.ByCode[check.CodeRedirect] != 1 {
		t.Errorf("redirect out of the folder: exit %d\n%s", code, out)
	}
}

// TestValidateSIGTERM: a real validate process reading a body that trickles
// in for ever, with a long timeout, exits 1 at once on the first SIGTERM,
// saying it was interrupted and how far it got, not "context canceled".
func TestValidateSIGTERM(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	cmd := child("validate", "--http-timeout", "1h", srv.URL+"/sitemap.xml")
	stderr := start(t, cmd)
	time.Sleep(500 * time.Millisecond)
	if code := stopWith(t, cmd, syscall.SIGTERM, 5*time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if msg := stderr.String(); strings.Contains(msg, "context canceled") || !strings.Contains(msg, "interrupted after") ||
		!strings.Contains(msg, "0 sitemaps, 0 indexes, 0 URLs") {
		t.Errorf("stderr %q: want the interruption and how far the check got", msg)
	}
}
