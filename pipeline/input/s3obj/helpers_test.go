package s3obj_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// env is a bucket on the test server.
type env struct {
	ep     string
	c      *s3.Client
	bucket string
}

func newEnv(t testing.TB) *env {
	ep := s3test.Endpoint(t)
	c := s3test.Client(t, ep)
	return &env{ep: ep, c: c, bucket: s3test.NewBucket(t, c)}
}

// store returns a Store of endpoint (the server or a proxy in front of it).
func (e *env) store(t testing.TB, endpoint string) *s3obj.Store {
	t.Helper()
	s, err := s3obj.New(context.Background(), s3obj.Options{Endpoint: endpoint, PathStyle: true, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) put(t testing.TB, key string, data []byte) { s3test.Put(t, e.c, e.bucket, key, data) }

// putLocal puts data as key on the server and in a local file of the same
// base name, to compare the two, and returns the file's path, a Store of the
// server and the object.
func (e *env) putLocal(tb testing.TB, key string, data []byte) (string, *s3obj.Store, s3obj.Object) {
	tb.Helper()
	e.put(tb, key, data)
	p := filepath.Join(tb.TempDir(), path.Base(key))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	s := e.store(tb, e.ep)
	return p, s, e.stat(tb, s, key)
}

// stat returns the object as List gives it.
func (e *env) stat(t testing.TB, s *s3obj.Store, key string) s3obj.Object {
	t.Helper()
	o, err := s.Stat(context.Background(), e.bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// proxy is a reverse proxy on 127.0.0.1 in front of the server that records
// the GETs it passes, how many were in flight at once, and cuts or alters
// answers as the test says.
type proxy struct {
	URL string

	mu     sync.Mutex
	n      int      // requests
	ranges []string // Range header of each GET ("" for none)

	inflight, maxInflight atomic.Int64

	// cut, when set, returns how many body bytes of the n-th request (from
	// 1) pass before the connection drops; < 0: all of them.
	cut func(r *http.Request, n int) int64
	// modify, when set, alters an answer before it is sent.
	modify func(resp *http.Response, n int)
	// hold, when set, is waited on by every GET before it is passed on.
	hold chan struct{}
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	p := &proxy{}
	rp := s3test.ReverseProxy(t, target)
	rp.FlushInterval = -1 // every byte read is sent before a cut
	rp.ModifyResponse = func(resp *http.Response) error {
		n := resp.Request.Context().Value(nKey{}).(int)
		if p.modify != nil {
			p.modify(resp, n)
		}
		if p.cut != nil {
			if k := p.cut(resp.Request, n); k >= 0 {
				resp.Body = s3test.CutBody(resp.Body, k)
			}
		}
		return nil
	}
	p.URL = s3test.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.n++
		n := p.n
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" {
			p.ranges = append(p.ranges, r.Header.Get("Range"))
		}
		p.mu.Unlock()
		if p.hold != nil && r.Method == http.MethodGet {
			<-p.hold
		}
		cur := p.inflight.Add(1)
		for {
			m := p.maxInflight.Load()
			if cur <= m || p.maxInflight.CompareAndSwap(m, cur) {
				break
			}
		}
		defer p.inflight.Add(-1)
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), nKey{}, n)))
	}))
	return p
}

type nKey struct{}

// gets returns the Range headers of the object GETs passed so far.
func (p *proxy) gets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ranges...)
}

// oneLine checks that err is one line naming the object.
func oneLine(t testing.TB, err error, name string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, name) {
		t.Errorf("error %q: want one line naming %s", msg, name)
	}
}

func readAll(t testing.TB, r io.Reader) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
