package check

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const oneURL = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/a</loc></url></urlset>`

// codes lists the problems of a report as "CODE: message".
func codes(rep *Report) []string {
	var out []string
	for _, p := range rep.List {
		out = append(out, string(p.Code)+": "+p.Message)
	}
	return out
}

// TestRobotsBOM: a robots.txt that starts with a UTF-8 byte order mark has
// its first line read as Google reads it.
func TestRobotsBOM(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "\ufeffSitemap: %s/sitemap.xml\n", srv.URL)
		case "/sitemap.xml":
			fmt.Fprintf(w, oneURL, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := Set(t.Context(), &HTTP{Retries: -1}, srv.URL+"/robots.txt", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Sitemaps != 1 || rep.URLs != 1 {
		t.Errorf("%d sitemaps, %d URLs, problems %q; want the sitemap read, no problem", rep.Sitemaps, rep.URLs, codes(rep))
	}
}

// TestRobotsRedirectToAnotherHost: a robots.txt redirected to another host
// (example.com -> www.example.com) is followed, and the sitemaps it names
// are checked from where each is served: a sitemap's own redirect to
// another host is still bad_redirect.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	var www, other *httptest.Server
	www = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s/sitemap.xml\nSitemap: %s/moved.xml\n", www.URL, www.URL)
		case "/sitemap.xml":
			fmt.Fprintf(w, oneURL, www.URL)
		case "/moved.xml":
			http.Redirect(w, r, other.URL+"/moved.xml", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	defer www.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, www.URL+r.URL.Path, http.StatusMovedPermanently)
	}))
	defer bare.Close()
	other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, oneURL, www.URL)
	}))
	defer other.Close()
	rep, err := Set(t.Context(), &HTTP{Retries: -1}, bare.URL+"/robots.txt", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := codes(rep)
	if rep.Sitemaps != 1 || len(got) != 1 || !strings.HasPrefix(got[0], "bad_redirect: ") || !strings.Contains(got[0], "moved.xml") {
		t.Errorf("%d sitemaps, problems %q; want the robots.txt followed to %s, its sitemap read and only moved.xml's redirect reported", rep.Sitemaps, got, www.URL)
	}
}

// TestHTTPDeadline: a server on 127.0.0.1 that drips a byte every 20 ms,
// never slower than the read timeout, is stopped at the file's deadline,
// gzip or not, and reported unreadable (not bad_gzip).
func TestHTTPDeadline(t *testing.T) {
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var out interface {
				Write([]byte) (int, error)
			} = w
			var zw *gzip.Writer
			if gz {
				zw = gzip.NewWriter(w)
				out = zw
			}
			// Enough at once for the first read (the sniff of an HTML page
			// reads 512 bytes), then a byte every 20 ms.
			fmt.Fprint(out, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+strings.Repeat(" ", 1024))
			// 3 s of drip, then a valid end: without a deadline the file passes.
			for range 150 {
				out.Write([]byte(" "))
				if zw != nil {
					zw.Flush()
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
			fmt.Fprintf(out, `<url><loc>http://%s/a</loc></url></urlset>`, r.Host)
			if zw != nil {
				zw.Close()
			}
		}))
		name := srv.URL + "/sitemap.xml"
		if gz {
			name += ".gz"
		}
		start := time.Now()
		rep, err := Set(t.Context(), &HTTP{Retries: -1, Timeout: time.Second, Deadline: 500 * time.Millisecond}, name,
			Options{Limits: Ours, TempDir: t.TempDir()})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := codes(rep)
		if len(got) != 1 || !strings.HasPrefix(got[0], "unreadable: ") || !strings.Contains(got[0], "not read within 500ms") {
			t.Errorf("gzip %v: problems %q, want one unreadable past the deadline", gz, got)
		}
		if d := time.Since(start); d > 2500*time.Millisecond {
			t.Errorf("gzip %v: %v to give up, want about the 500 ms deadline", gz, d)
		}
	}
}

// TestRobotsVouchesForItsHost: a robots.txt, sent gzip-encoded in transit,
// names a root index in /sitemaps/ (as generate's robots lines do) whose
// sitemap lists pages elsewhere on the host: robots.txt vouches for its
// whole host, so the index's sitemaps may list them (a set generate wrote
// with --scope the host). The same sitemap reached without robots.txt is
// bound to its folder.
func TestRobotsVouchesForItsHost(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprintf(zw, "Sitemap: %s/sitemaps/sitemap.xml\n", srv.URL)
			zw.Close()
		case "/sitemaps/sitemap.xml":
			fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/sitemaps/sm-1.xml</loc></sitemap></sitemapindex>`, srv.URL)
		case "/sitemaps/sm-1.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/products/a</loc></url></urlset>`, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := Set(t.Context(), &HTTP{Retries: -1}, srv.URL+"/robots.txt", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Sitemaps != 1 || rep.URLs != 1 {
		t.Errorf("through robots.txt: %d sitemaps, %d URLs, problems %q; want the page accepted", rep.Sitemaps, rep.URLs, codes(rep))
	}
	rep, err = Set(t.Context(), &HTTP{Retries: -1}, srv.URL+"/sitemaps/sitemap.xml", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(strings.Join(codes(rep), "\n"), "out_of_scope") {
		t.Errorf("from the index itself: problems %q; want the page out of the folder's scope", codes(rep))
	}
}

// TestServerErrorIsNotMissing: a root that answers 500 is unreadable, not
// a missing file (a 404 is): the file may exist, the server failed.
func TestServerErrorIsNotMissing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone.xml" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for path, want := range map[string]Code{"/sitemap.xml": CodeUnreadable, "/gone.xml": CodeMissingFile} {
		rep, err := Set(t.Context(), &HTTP{Retries: -1}, srv.URL+path, Options{Limits: Ours, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ByCode[want] != 1 || rep.Problems != 1 {
			t.Errorf("%s: problems %q; want one %s", path, codes(rep), want)
		}
	}
}

// TestBadLocationNotRetried: a redirect whose Location is not a URL is
// bad_redirect at once; retrying cannot mend it.
func TestBadLocationNotRetried(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Location", "http://[::1/moved.xml")
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	rep, err := Set(t.Context(), &HTTP{Retries: 3, Backoff: time.Millisecond}, srv.URL+"/sitemap.xml", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := codes(rep)
	if len(got) != 1 || !strings.HasPrefix(got[0], "bad_redirect: ") || !strings.Contains(got[0], `to http://[::1/moved.xml not followed: not a URL`) || gets.Load() != 1 {
		t.Errorf("%d requests, problems %q; want one, and one bad_redirect: not a URL", gets.Load(), got)
	}
}

// TestRobotsSitemapRedirectInItsHost: a sitemap a robots.txt names may be
// redirected anywhere on its host (robots.txt vouches for the host, and
// its scope is the host); reached without robots.txt, the same redirect
// leaves its folder and is not followed.
func TestRobotsSitemapRedirectInItsHost(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "Sitemap: %s/sitemaps/sitemap.xml\n", srv.URL)
		case "/sitemaps/sitemap.xml":
			http.Redirect(w, r, "/v2/sitemap.xml", http.StatusMovedPermanently)
		case "/v2/sitemap.xml":
			fmt.Fprintf(w, oneURL, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := Set(t.Context(), &HTTP{Retries: -1}, srv.URL+"/robots.txt", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Sitemaps != 1 || rep.URLs != 1 {
		t.Errorf("through robots.txt: %d sitemaps, %d URLs, problems %q; want the redirect followed", rep.Sitemaps, rep.URLs, codes(rep))
	}
	rep, err = Set(t.Context(), &HTTP{Retries: -1}, srv.URL+"/sitemaps/sitemap.xml", Options{Limits: Ours, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := codes(rep); len(got) != 1 || !strings.HasPrefix(got[0], "bad_redirect: ") || !strings.Contains(got[0], "out of the folder /sitemaps/") {
		t.Errorf("without robots.txt: problems %q; want one bad_redirect out of the folder", got)
	}
}
