package check

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTP reads a sitemap set where it is served: its names are absolute
// http:// or https:// URLs. It is polite and bounded: at most Concurrency
// requests at once per host (a request holds its slot until its body is
// closed), a User-Agent, a timeout per request and per read, retries with
// backoff that honour Retry-After, and redirects followed only on the same
// host and inside the file's folder. A body that fails mid-way is fetched
// again from where it failed (a Range request, or the whole body with the
// bytes already read skipped), so the parser never sees the failure.
type HTTP struct {
	// Client makes the requests; nil: a client built from the fields below.
	// Its CheckRedirect is not used: redirects are followed here.
	Client *http.Client
	// UserAgent is sent with every request ("" : "sitemapgen").
	UserAgent string
	// Concurrency is the most requests in flight per host (0: 4).
	Concurrency int
	// Timeout bounds the wait for a response's headers and for each read of
	// its body (0: 30s); a request that times out is retried.
	Timeout time.Duration
	// Retries is the attempts after the first for a 5xx or 429 status, a
	// network error or a timeout (0: 3; negative: none).
	Retries int
	// Backoff is the first wait before a retry, doubled each time (0: 1s).
	Backoff time.Duration
	// MaxWait caps the wait a Retry-After header asks for (0: 60s).
	MaxWait time.Duration
	// MaxRedirects is the most redirects followed for one file (0: 5).
	MaxRedirects int
	// Deadline bounds the time to read one file, from its first request to
	// the last byte of its body, retries included (0: 5 minutes): a server
	// that sends a byte now and then never trips Timeout.
	Deadline time.Duration

	once   sync.Once
	client *http.Client
	mu     sync.Mutex
	slots  map[string]chan struct{}
}

func (h *HTTP) init() {
	h.once.Do(func() {
		if h.Concurrency <= 0 {
			h.Concurrency = 4
		}
		if h.Timeout <= 0 {
			h.Timeout = 30 * time.Second
		}
		if h.Retries == 0 {
			h.Retries = 3
		}
		h.Retries = max(h.Retries, 0)
		if h.Backoff <= 0 {
			h.Backoff = time.Second
		}
		if h.MaxWait <= 0 {
			h.MaxWait = time.Minute
		}
		if h.MaxRedirects <= 0 {
			h.MaxRedirects = 5
		}
		if h.Deadline <= 0 {
			h.Deadline = 5 * time.Minute
		}
		if h.UserAgent == "" {
			h.UserAgent = "sitemapgen"
		}
		c := h.Client
		if c == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxConnsPerHost = h.Concurrency
			t.MaxIdleConnsPerHost = h.Concurrency
			t.ResponseHeaderTimeout = h.Timeout
			t.DisableCompression = true // Accept-Encoding is ours: the parser decodes and counts
			c = &http.Client{Transport: t}
		}
		cc := *c
		cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		h.client = &cc
		h.slots = map[string]chan struct{}{}
	})
}

// String describes the location for people: the URLs name themselves.
func (h *HTTP) String() string { return "" }

// List fails: a web server does not list its folders, so there is no
// orphan check over HTTP.
func (h *HTTP) List(context.Context) ([]string, error) {
	return nil, errors.New("a folder cannot be listed over HTTP")
}

// slot returns the semaphore of a host.
func (h *HTTP) slot(host string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	host = strings.ToLower(host)
	s := h.slots[host]
	if s == nil {
		s = make(chan struct{}, h.Concurrency)
		h.slots[host] = s
	}
	return s
}

// StatusError is a final HTTP status other than 200: the file is missing
// as far as a crawler can tell (errors.Is(err, fs.ErrNotExist) holds).
type StatusError struct {
	URL      string
	Code     int
	Attempts int
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	return s
}

// Is makes a client error (404, 410, 403…) a missing file; a server
// error (5xx, retried and still failing) is not: the file may well exist.
func (e *StatusError) Is(target error) bool {
	return target == fs.ErrNotExist && e.Code < 500 && e.Code != http.StatusTooManyRequests
}

// RedirectError is a redirect not followed: a loop, too many, or one that
// leaves the file's host or folder (where a file is served decides which
// URLs it may list).
type RedirectError struct {
	URL, To string
	Reason  string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s not followed: %s", e.URL, e.To, e.Reason)
}

// NotXMLError is a response whose body is an HTML page (a "soft 404": the
// server answers 200 with an error page) or otherwise not XML.
type NotXMLError struct {
	URL, ContentType string
}

func (e *NotXMLError) Error() string {
	return fmt.Sprintf("the response is %s, not a sitemap (a soft 404?)", e.ContentType)
}

// DeadlineError is a file not read within HTTP.Deadline.
type DeadlineError struct {
	URL      string
	Deadline time.Duration
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("GET %s: not read within %s (--http-deadline): reading stopped", e.URL, e.Deadline)
}

// Open fetches a URL. The body it returns is read as sent (Content-Encoding
// decoding is left to the parser, which counts and caps the bytes). A
// robots.txt may redirect to another host, as crawlers follow it; the
// sitemaps it names are then checked from where each is served.
func (h *HTTP) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	h.init()
	u, err := url.Parse(name)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("open %q: not an http or https URL", name)
	}
	ctx, stop := context.WithTimeoutCause(ctx, h.Deadline, &DeadlineError{URL: name, Deadline: h.Deadline})
	hostWide, _ := ctx.Value(hostWideKey{}).(bool)
	b := &httpBody{h: h, ctx: ctx, stop: stop, orig: u, slot: h.slot(u.Host), robots: isRobots(u.Path), hostWide: hostWide}
	if err := b.open(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// httpBody is a response body that resumes after a failure.
type httpBody struct {
	h      *HTTP
	ctx    context.Context    // ends at the file's deadline
	stop   context.CancelFunc // releases the deadline's timer
	robots bool               // a robots.txt: redirects to another host are followed
	// hostWide: a file a robots.txt names (or an index's child of one):
	// redirects may leave its folder, as its scope is its host.
	hostWide bool
	orig     *url.URL
	slot     chan struct{}
	held     bool

	final    *url.URL // after redirects
	encoding string
	resp     *http.Response
	r        *bufio.Reader
	cancel   context.CancelFunc
	timer    *time.Timer
	timedOut bool
	tmu      sync.Mutex

	n        int64 // bytes returned so far
	attempts int
	same     string // ETag, Last-Modified and length: a resumed body must match
	done     bool
}

// URL is where the file was read, after redirects.
func (b *httpBody) URL() string { return b.final.String() }

// ContentEncoding is "gzip" when the body is gzip-encoded in transit.
func (b *httpBody) ContentEncoding() string { return b.encoding }

func (b *httpBody) acquire() error {
	if b.held {
		return nil
	}
	select {
	case b.slot <- struct{}{}:
		b.held = true
		return nil
	case <-b.ctx.Done():
		return b.err()
	}
}

// err is why the body's context ended: the check cancelled, or the
// file's deadline (a *DeadlineError).
func (b *httpBody) err() error { return context.Cause(b.ctx) }

func (b *httpBody) release() {
	if b.held {
		<-b.slot
		b.held = false
	}
}

// closeResp ends the current response.
func (b *httpBody) closeResp() {
	if b.timer != nil {
		b.timer.Stop()
	}
	if b.resp != nil {
		b.resp.Body.Close()
		b.resp = nil
	}
	if b.cancel != nil {
		b.cancel()
	}
}

// retryable is a failure worth another attempt, with the wait it asks for.
type retryable struct {
	err  error
	wait time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// open gets a response for the body from byte n on, retrying.
func (b *httpBody) open() error {
	for {
		err := b.try()
		var re *retryable
		if !errors.As(err, &re) {
			return err
		}
		b.attempts++
		if b.ctx.Err() != nil {
			return b.err()
		}
		if b.attempts > b.h.Retries {
			var st *StatusError
			if errors.As(re.err, &st) {
				st.Attempts = b.attempts
				return st
			}
			return fmt.Errorf("GET %s: %w (%d attempts)", b.orig, re.err, b.attempts)
		}
		wait := re.wait
		if wait == 0 {
			wait = b.h.Backoff << (b.attempts - 1)
		}
		b.release() // others may use the slot while this one waits
		t := time.NewTimer(min(wait, b.h.MaxWait))
		select {
		case <-t.C:
		case <-b.ctx.Done():
			t.Stop()
			return b.err()
		}
	}
}

// try makes one attempt: the request, its redirects, the status checks.
func (b *httpBody) try() error {
	b.closeResp()
	if err := b.acquire(); err != nil {
		return err
	}
	cur := b.orig
	seen := map[string]bool{cur.String(): true}
	folder := cur.Path[:strings.LastIndexByte(cur.Path, '/')+1]
	for hop := 0; ; hop++ {
		resp, err := b.get(cur)
		if err != nil {
			if b.ctx.Err() != nil {
				return b.err()
			}
			if loc, ok := badLocation(err); ok {
				return &RedirectError{URL: cur.String(), To: loc, Reason: "not a URL"}
			}
			return &retryable{err: b.explain(err)}
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			b.closeResp()
			next, err := cur.Parse(loc)
			redirect := &RedirectError{URL: cur.String(), To: loc}
			switch {
			case err != nil:
				redirect.Reason = "not a URL"
			case seen[next.String()]:
				redirect.Reason = "a redirect loop"
			case hop >= b.h.MaxRedirects:
				redirect.Reason = fmt.Sprintf("more than %d redirects", b.h.MaxRedirects)
			case !sameSite(b.orig, next) && !b.robots:
				redirect.Reason = "to another host (a sitemap may only list URLs of the host it is served from)"
			case !strings.HasPrefix(next.Path, folder) && !b.robots && !b.hostWide:
				redirect.Reason = "out of the folder " + folder + " (a sitemap may only list URLs under its own folder)"
			}
			if redirect.Reason != "" {
				if err == nil {
					redirect.To = next.String()
				}
				return redirect
			}
			seen[next.String()] = true
			cur = next
			continue
		}
		b.final, b.resp = cur, resp
		break
	}
	resp := b.resp
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		wait := retryAfter(resp.Header.Get("Retry-After"))
		b.closeResp()
		return &retryable{err: &StatusError{URL: b.final.String(), Code: resp.StatusCode}, wait: wait}
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent:
		b.closeResp()
		return &StatusError{URL: b.final.String(), Code: resp.StatusCode}
	}
	b.r = bufio.NewReaderSize(resp.Body, 32<<10)
	same := resp.Header.Get("ETag") + "|" + resp.Header.Get("Last-Modified") + "|" + resp.Header.Get("Content-Encoding")
	if b.n == 0 {
		b.same = same
		b.encoding = ""
		switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
		case "", "identity":
		case "gzip", "x-gzip":
			b.encoding = "gzip"
		default:
			b.closeResp()
			return fmt.Errorf("GET %s: Content-Encoding %q, not asked for", b.final, enc)
		}
		return b.sniff(resp)
	}
	// A resumed body: the rest of the same content.
	if same != b.same {
		b.closeResp()
		return fmt.Errorf("GET %s: the file changed while it was read", b.final)
	}
	if resp.StatusCode == http.StatusPartialContent {
		if !strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", b.n)) {
			b.closeResp()
			return &retryable{err: errors.New("a partial response not from the byte asked for")}
		}
		return nil
	}
	// No Range support: skip what was read already (at most MaxFileBytes).
	b.timer.Reset(b.h.Timeout)
	_, err := io.CopyN(io.Discard, b.r, b.n)
	b.timer.Stop()
	if err != nil {
		b.closeResp()
		return &retryable{err: b.explain(err)}
	}
	return nil
}

// get sends one GET for u, resuming at byte b.n; the request is cancelled
// when no byte arrives for Timeout.
func (b *httpBody) get(u *url.URL) (*http.Response, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	b.cancel = cancel
	b.tmu.Lock()
	b.timedOut = false
	b.tmu.Unlock()
	b.timer = time.AfterFunc(b.h.Timeout, func() {
		b.tmu.Lock()
		b.timedOut = true
		b.tmu.Unlock()
		cancel()
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", b.h.UserAgent)
	req.Header.Set("Accept-Encoding", "gzip")
	if b.n > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", b.n))
	}
	resp, err := b.h.client.Do(req)
	if err != nil {
		return nil, err
	}
	b.timer.Stop() // restarted by each Read: a slow parser is not a slow server
	b.resp = resp
	return resp, nil
}

// explain names a timeout as such.
func (b *httpBody) explain(err error) error {
	b.tmu.Lock()
	defer b.tmu.Unlock()
	if b.timedOut {
		return fmt.Errorf("no response for %s", b.h.Timeout)
	}
	return err
}

// sniff refuses an HTML page, by its Content-Type or its first bytes.
func (b *httpBody) sniff(resp *http.Response) error {
	ct := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	html := media == "text/html" || media == "application/xhtml+xml"
	if !html && b.encoding == "" {
		b.timer.Reset(b.h.Timeout)
		head, _ := b.r.Peek(512)
		b.timer.Stop()
		if sniffed := http.DetectContentType(head); strings.HasPrefix(sniffed, "text/html") {
			html = true
			if ct == "" {
				ct = sniffed
			}
		}
	}
	if html {
		b.closeResp()
		return &NotXMLError{URL: b.final.String(), ContentType: ct}
	}
	return nil
}

// Read reads the body, resuming it after a failure.
func (b *httpBody) Read(p []byte) (int, error) {
	for {
		if b.done {
			return 0, io.EOF
		}
		if b.resp == nil {
			return 0, errors.New("read after close")
		}
		b.timer.Reset(b.h.Timeout)
		n, err := b.r.Read(p)
		b.timer.Stop()
		b.n += int64(n)
		if err == nil || n > 0 {
			return n, nil
		}
		if err == io.EOF {
			b.done = true
			b.closeResp()
			b.release()
			return 0, io.EOF
		}
		if b.ctx.Err() != nil {
			return 0, b.err()
		}
		b.attempts++
		if b.attempts > b.h.Retries {
			return 0, fmt.Errorf("GET %s: reading the body: %w (%d attempts)", b.final, b.explain(err), b.attempts)
		}
		if err := b.open(); err != nil {
			return 0, err
		}
	}
}

// Close ends the request and frees its slot.
func (b *httpBody) Close() error {
	b.closeResp()
	b.release()
	b.stop()
	return nil
}

// badLocation recognises net/http's error for a redirect whose Location is
// not a URL (the client parses it before CheckRedirect could say no): no
// retry mends it. It returns the header's value.
func badLocation(err error) (string, bool) {
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Err == nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(ue.Err.Error(), "failed to parse Location header ")
	if !ok {
		return "", false
	}
	if q, err := strconv.QuotedPrefix(rest); err == nil {
		if loc, err := strconv.Unquote(q); err == nil {
			return loc, true
		}
	}
	return rest, true
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// sameSite reports whether a redirect stays on the host: the same host
// name and port, where http may become https (its default port then too).
func sameSite(from, to *url.URL) bool {
	if sameHost(from, to) {
		return true
	}
	return from.Scheme == "http" && to.Scheme == "https" && strings.EqualFold(from.Hostname(), to.Hostname()) &&
		(from.Port() == "" || from.Port() == "80") && (to.Port() == "" || to.Port() == "443")
}
