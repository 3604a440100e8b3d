package s3test

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// Cut decides how many body bytes of the n-th answer (from 1) through a
// CutProxy pass before its connection drops; < 0 passes them all.
type Cut func(resp *http.Response, n int) int64

// CutProxy is a reverse proxy on 127.0.0.1 in front of the server that drops
// connections in the middle of the bodies it announced: what a reset
// connection does to a long download. URL is its endpoint.
type CutProxy struct {
	URL  string
	Cuts atomic.Int64 // bodies cut
	mu   sync.Mutex
	n    int
}

// NewCutProxy starts a CutProxy to target for the duration of t.
func NewCutProxy(t testing.TB, target string, cut Cut) *CutProxy {
	t.Helper()
	p := &CutProxy{}
	rp := ReverseProxy(t, target)
	rp.FlushInterval = -1 // every byte read is sent before the cut
	rp.ModifyResponse = func(resp *http.Response) error {
		p.mu.Lock()
		p.n++
		n := p.n
		p.mu.Unlock()
		if k := cut(resp, n); k >= 0 && k < resp.ContentLength {
			p.Cuts.Add(1)
			resp.Body = CutBody(resp.Body, k)
		}
		return nil
	}
	p.URL = Serve(t, rp)
	return p
}

var errCut = errors.New("cut by the test proxy")

// CutBody returns a body that passes the first left bytes of rc, then fails:
// a reverse proxy then drops the connection in the middle of the body it
// announced.
func CutBody(rc io.ReadCloser, left int64) io.ReadCloser {
	return &cutBody{rc: rc, left: left}
}

type cutBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errCut
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }
