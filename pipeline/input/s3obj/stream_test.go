package s3obj_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

func TestStream(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(3<<20+123, 1)
	e.put(t, "in/urls.csv.gz", data)
	e.put(t, "in/empty.csv", nil)
	s := e.store(t, e.ep)
	for _, key := range []string{"in/urls.csv.gz", "in/empty.csv"} {
		r := s.NewStream(context.Background(), e.stat(t, s, key))
		got := readAll(t, r)
		r.Close()
		if want := map[bool][]byte{true: data}[key == "in/urls.csv.gz"]; !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes, want %d", key, len(got), len(want))
		}
		if st := r.Stats(); key == "in/urls.csv.gz" && (st.Requests != 1 || st.Bytes != int64(len(data))) {
			t.Errorf("%s: %+v, want one request of %d bytes", key, st, len(data))
		}
	}
}

// TestStreamResume: connections dropped in the middle of the body are
// resumed from the last byte received; the bytes read are the object's.
func TestStreamResume(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(2<<20+7, 2)
	e.put(t, "in/urls.csv", data)
	p := newProxy(t, e.ep)
	cuts := map[int]int64{2: 100_000, 3: 1, 4: 0, 5: 700_000} // request 1 is the HEAD
	p.cut = func(r *http.Request, n int) int64 {
		if k, ok := cuts[n]; ok {
			return k
		}
		return -1
	}
	s := e.store(t, p.URL)
	o := e.stat(t, s, "in/urls.csv")
	r := s.NewStream(context.Background(), o)
	defer r.Close()
	got := readAll(t, r)
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the object's %d", len(got), len(data))
	}
	want := []string{"", "bytes=100000-", "bytes=100001-", "bytes=100001-", "bytes=800001-"}
	if g := p.gets(); strings.Join(g, ",") != strings.Join(want, ",") {
		t.Errorf("GETs with Range %q, want %q", g, want)
	}
	// Request 4 may be cut before its headers (the SDK sends it again) or
	// after them (the stream resumes): 4 or 5 GETs of the stream's own.
	if st := r.Stats(); st.Requests < 4 || st.Requests > 5 || st.Bytes != int64(len(data)) {
		t.Errorf("stats %+v", st)
	}
}

// TestStreamGivesUp: a connection that drops at every try fails, after the
// resumes allowed, with one line naming the object.
func TestStreamGivesUp(t *testing.T) {
	e := newEnv(t)
	e.put(t, "in/urls.csv", randomBytes(1<<20, 3))
	p := newProxy(t, e.ep)
	p.cut = func(r *http.Request, n int) int64 { return 1000 }
	s, err := s3obj.New(context.Background(), s3obj.Options{Endpoint: p.URL, PathStyle: true, Resumes: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := s.NewStream(context.Background(), e.stat(t, s, "in/urls.csv"))
	n, err := io.Copy(io.Discard, r)
	oneLine(t, err, "s3://"+e.bucket+"/in/urls.csv")
	if n != 3000 || len(p.gets()) != 3 {
		t.Errorf("read %d bytes in %d GETs, want 3000 in 3", n, len(p.gets()))
	}
}

// TestStreamChanged: an object rewritten between two requests of a stream
// fails with ErrChanged, naming it: never a mix of two versions.
func TestStreamChanged(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(1<<20, 4)
	e.put(t, "in/urls.csv", data)
	p := newProxy(t, e.ep)
	p.cut = func(r *http.Request, n int) int64 {
		if n == 2 {
			return 5000
		}
		return -1
	}
	s := e.store(t, p.URL)
	o := e.stat(t, s, "in/urls.csv")
	r := s.NewStream(context.Background(), o)
	buf := make([]byte, 5000)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	e.put(t, "in/urls.csv", randomBytes(1<<20, 5)) // same size, other bytes
	_, err := io.Copy(io.Discard, r)
	if !errors.Is(err, s3obj.ErrChanged) {
		t.Fatalf("read of a rewritten object: %v, want ErrChanged", err)
	}
	oneLine(t, err, "s3://"+e.bucket+"/in/urls.csv")
	// A stream opened after the rewrite, with the listing's ETag, fails too.
	_, err = io.Copy(io.Discard, s.NewStream(context.Background(), o))
	if !errors.Is(err, s3obj.ErrChanged) {
		t.Fatalf("first GET of a rewritten object: %v, want ErrChanged", err)
	}
}

// TestErrors: each failure is one line naming the object, with a sentinel.
func TestErrors(t *testing.T) {
	e := newEnv(t)
	e.put(t, "in/a.csv", []byte("loc\nhttps://example.com/\n"))
	ctx := context.Background()
	s := e.store(t, e.ep)
	o := e.stat(t, s, "in/a.csv")

	missing := o
	missing.Key = "in/missing.csv"
	_, err := io.ReadAll(s.NewStream(ctx, missing))
	if !errors.Is(err, s3obj.ErrNotExist) {
		t.Errorf("missing object: %v", err)
	}
	oneLine(t, err, "s3://"+e.bucket+"/in/missing.csv")
	t.Log(err)

	nobucket := o
	nobucket.Bucket += "-gone"
	_, err = io.ReadAll(s.NewStream(ctx, nobucket))
	if !errors.Is(err, s3obj.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing bucket: %v", err)
	}
	oneLine(t, err, "s3://"+nobucket.Bucket+"/in/a.csv")
	t.Log(err)

	deny := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) { return 403, "AccessDenied" })
	_, err = e.store(t, deny.URL).NewReaderAt(ctx, o, s3obj.ReaderOptions{}).ReadAt(make([]byte, 3), 0)
	if !errors.Is(err, s3obj.ErrPermission) {
		t.Errorf("access denied: %v", err)
	}
	oneLine(t, err, "s3://"+e.bucket+"/in/a.csv")
	t.Log(err)
	_, err = e.store(t, deny.URL).ListFolder(ctx, e.bucket, "in/", nil)
	if !errors.Is(err, s3obj.ErrPermission) {
		t.Errorf("access denied: %v", err)
	}
	oneLine(t, err, "s3://"+e.bucket+"/in/")

	// 503 SlowDown is retried by the SDK's standard retryer.
	slow := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
		if n <= 2 {
			return 503, "SlowDown"
		}
		return 0, ""
	})
	got, err := io.ReadAll(e.store(t, slow.URL).NewStream(ctx, o))
	if err != nil || string(got) != "loc\nhttps://example.com/\n" || slow.Injected.Load() != 2 {
		t.Errorf("after 2 SlowDown: %q, %v (%d injected)", got, err, slow.Injected.Load())
	}
}
