package sink_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/sink"
)

// testLock runs the rules every Locker keeps: one holder at a time, the
// refusal says who holds it, and a released lock can be taken again.
func testLock(t *testing.T, s sink.Locker) {
	ctx := context.Background()
	a, err := s.Lock(ctx, ".x.lock", "run A", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, ".x.lock", "run B", time.Minute); !errors.Is(err, sink.ErrLocked) || !strings.Contains(err.Error(), "run A") {
		t.Fatalf("second Lock: %v, want ErrLocked naming run A", err)
	}
	y, err := s.Lock(ctx, ".y.lock", "run B", time.Minute)
	if err != nil {
		t.Fatalf("another name: %v", err)
	}
	defer y.Release(ctx)
	if err := a.Err(); err != nil {
		t.Fatalf("held lock: Err %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := s.Lock(ctx, ".x.lock", "run B", time.Minute)
	if err != nil {
		t.Fatalf("Lock after Release: %v", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLocalLock(t *testing.T) {
	dir := t.TempDir()
	l, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	testLock(t, l)
	if _, err := os.Stat(filepath.Join(dir, ".x.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a released lock leaves its file: %v", err)
	}
}

func TestS3Lock(t *testing.T) {
	ep := s3test.Endpoint(t)
	c := s3test.Client(t, ep)
	bucket := s3test.NewBucket(t, c)
	ctx := context.Background()
	s, err := sink.NewS3(ctx, sink.S3Options{Bucket: bucket, Prefix: "p/", Endpoint: ep, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	testLock(t, s)
	if keys := s3test.Keys(t, c, bucket, ""); len(keys) != 0 {
		t.Fatalf("released locks left %q", keys)
	}

	// A live holder renews: after several ttls it still holds, and a
	// newcomer is still refused.
	a, err := s.Lock(ctx, ".r.lock", "run A", 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := a.Err(); err != nil {
		t.Fatalf("renewed lock: %v", err)
	}
	if _, err := s.Lock(ctx, ".r.lock", "run B", time.Minute); !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("Lock of a renewed lock: %v", err)
	}
	// Another writer replaces it behind the holder's back: the next renewal
	// finds out and the holder knows it may not publish.
	s3test.Put(t, c, bucket, "p/.r.lock", []byte(`{"owner":"intruder","expires":"2999-01-01T00:00:00Z"}`))
	deadline := time.Now().Add(3 * time.Second)
	for a.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.Err() == nil {
		t.Fatal("a lock taken over is not reported lost")
	}
	a.Release(ctx)
	if got := s3test.Get(t, c, bucket, "p/.r.lock").Data; !strings.Contains(string(got), "intruder") {
		t.Fatalf("Release of a lost lock deleted the new holder's lock: %q", got)
	}

	// A holder that died (no renewals) is taken over once its lock expires.
	if _, err := s.Lock(ctx, ".d.lock", "dead run", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Simulate the death: nothing renews a lock whose expiry is past.
	s3test.Put(t, c, bucket, "p/.d.lock", []byte(`{"owner":"dead run","expires":"2000-01-01T00:00:00Z"}`))
	d, err := s.Lock(ctx, ".d.lock", "run C", time.Minute)
	if err != nil {
		t.Fatalf("Lock of an expired lock: %v", err)
	}
	d.Release(ctx)
}

// releaseOnRead is an HTTP client that, on the first GET of key, first
// deletes it: the holder released the lock between a newcomer's refused
// create and its read of the lock.
type releaseOnRead struct {
	t    *testing.T
	c    *s3.Client
	key  string
	once sync.Once
}

func (h *releaseOnRead) Do(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, h.key) {
		h.once.Do(func() {
			bucket := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")[0]
			if _, err := h.c.DeleteObject(req.Context(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &h.key}); err != nil {
				h.t.Errorf("delete %s: %v", h.key, err)
			}
		})
	}
	return http.DefaultClient.Do(req)
}

// TestS3LockReleasedWhileRead: a lock released between a newcomer's create
// (refused) and its read (no such key) is free: the newcomer takes it
// instead of failing on the missing object.
func TestS3LockReleasedWhileRead(t *testing.T) {
	ep := s3test.Endpoint(t)
	c := s3test.Client(t, ep)
	bucket := s3test.NewBucket(t, c)
	ctx := context.Background()
	t.Setenv("AWS_CA_BUNDLE", "") // the SDK cannot add a CA bundle to a client of its own
	s3test.Put(t, c, bucket, "p/.z.lock", []byte(`{"owner":"run A","expires":"2999-01-01T00:00:00Z"}`))
	s, err := sink.NewS3(ctx, sink.S3Options{Bucket: bucket, Prefix: "p/", Endpoint: ep, PathStyle: true,
		HTTPClient: &releaseOnRead{t: t, c: c, key: "p/.z.lock"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock(ctx, ".z.lock", "run B", time.Minute)
	if err != nil {
		t.Fatalf("Lock of a lock released while being read: %v", err)
	}
	if got := s3test.Get(t, c, bucket, "p/.z.lock").Data; !strings.Contains(string(got), "run B") {
		t.Fatalf("lock object %q, want run B's", got)
	}
	l.Release(ctx)
}
