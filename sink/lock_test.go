package sink_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/sink"
)

// testLock runs the rules every Locker keeps: one holder at a time, the
// refusal says who holds it, and a released lock can be taken again.
func testLock(t *testing.T, s sink.Locker) {
	ctx := context.Background()
	if err := s.Held(ctx, ".x.lock"); err != nil {
		t.Fatalf("Held before any Lock: %v", err)
	}
	a, err := s.Lock(ctx, ".x.lock", sink.Holder{Owner: "run A", Groups: true}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Held names the holder and says it publishes groups, and takes
	// nothing: the holder keeps it.
	le, ok := errors.AsType[*sink.LockedError](s.Held(ctx, ".x.lock"))
	if !ok || le.Holder.Owner != "run A" || !le.Holder.Groups || !strings.Contains(le.Error(), "publishing groups") {
		t.Fatalf("Held of a held lock: %v", le)
	}
	if err := a.Err(); err != nil {
		t.Fatalf("held lock after Held: Err %v", err)
	}
	if _, err := s.Lock(ctx, ".x.lock", sink.Holder{Owner: "run B"}, time.Minute); !errors.Is(err, sink.ErrLocked) || !strings.Contains(err.Error(), "run A") {
		t.Fatalf("second Lock: %v, want ErrLocked naming run A", err)
	}
	y, err := s.Lock(ctx, ".y.lock", sink.Holder{Owner: "run B"}, time.Minute)
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
	if err := s.Held(ctx, ".x.lock"); err != nil {
		t.Fatalf("Held after Release: %v", err)
	}
	b, err := s.Lock(ctx, ".x.lock", sink.Holder{Owner: "run B"}, time.Minute)
	if err != nil {
		t.Fatalf("Lock after Release: %v", err)
	}
	if le, ok := errors.AsType[*sink.LockedError](s.Held(ctx, ".x.lock")); !ok || le.Holder.Groups || strings.Contains(le.Error(), "groups") {
		t.Fatalf("Held of a lock of no groups: %v", le)
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

	// A killed run's file, which no process holds, is taken over: the file
	// at the name is then the new holder's, locked, and no temporary file
	// is left beside it.
	path := filepath.Join(dir, ".x.lock")
	os.WriteFile(path, []byte(`{"owner":"sitemapgen pid 7 on etl-3","token":"89abcdef0123456789abcdef01234567","acquired":"2026-01-01T00:00:00Z"}`), 0o644)
	ctx := context.Background()
	if err := l.Held(ctx, ".x.lock"); err != nil {
		t.Fatalf("Held of a stale file: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Held removed the stale file: %v", err)
	}
	c, err := l.Lock(ctx, ".x.lock", sink.Holder{Owner: "run C"}, 0)
	if err != nil {
		t.Fatalf("Lock over a stale file: %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"run C"`) {
		t.Errorf("the taken-over file says %q, want run C", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("lock file: %v, %v, want readable by all", fi, err)
	}
	if _, err := l.Lock(ctx, ".x.lock", sink.Holder{Owner: "run D"}, 0); !errors.Is(err, sink.ErrLocked) || !strings.Contains(err.Error(), "run C") {
		t.Errorf("Lock of the taken-over file: %v, want ErrLocked naming run C", err)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the folder holds %v after every lock was released, want nothing", ents)
	}
}

func TestS3Lock(t *testing.T) {
	s, c, bucket := s3Store(t, sink.S3Options{}, nil)
	ctx := context.Background()
	testLock(t, s)
	if keys := s3test.Keys(t, c, bucket, ""); len(keys) != 0 {
		t.Fatalf("released locks left %q", keys)
	}

	// A live holder renews: after several ttls it still holds, and a
	// newcomer is still refused.
	a, err := s.Lock(ctx, ".r.lock", sink.Holder{Owner: "run A"}, 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := a.Err(); err != nil {
		t.Fatalf("renewed lock: %v", err)
	}
	if _, err := s.Lock(ctx, ".r.lock", sink.Holder{Owner: "run B"}, time.Minute); !errors.Is(err, sink.ErrLocked) {
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
	if _, err := s.Lock(ctx, ".d.lock", sink.Holder{Owner: "dead run"}, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Simulate the death: nothing renews a lock whose expiry is past.
	s3test.Put(t, c, bucket, "p/.d.lock", []byte(`{"owner":"dead run","expires":"2000-01-01T00:00:00Z"}`))
	if err := s.Held(ctx, ".d.lock"); err != nil {
		t.Fatalf("Held of an expired lock: %v", err)
	}
	d, err := s.Lock(ctx, ".d.lock", sink.Holder{Owner: "run C"}, time.Minute)
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
	l, err := s.Lock(ctx, ".z.lock", sink.Holder{Owner: "run B"}, time.Minute)
	if err != nil {
		t.Fatalf("Lock of a lock released while being read: %v", err)
	}
	if got := s3test.Get(t, c, bucket, "p/.z.lock").Data; !strings.Contains(string(got), "run B") {
		t.Fatalf("lock object %q, want run B's", got)
	}
	l.Release(ctx)
}

// lockClient is an HTTP client that passes requests to the server, except
// that fault may answer one itself (return a response) after or instead of
// passing it on.
type lockClient struct {
	fault func(req *http.Request) *http.Response
}

func (c *lockClient) Do(req *http.Request) (*http.Response, error) {
	if resp := c.fault(req); resp != nil {
		return resp, nil
	}
	return http.DefaultClient.Do(req)
}

// answerLost passes req on, then answers 500 as if the server's answer had
// been lost: the write landed, and the SDK retries it.
func answerLost(req *http.Request) *http.Response {
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusInternalServerError, Request: req,
		Header: http.Header{"Content-Type": {"application/xml"}},
		Body:   io.NopCloser(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>lost by the test</Message></Error>`))}
}

// losingFirstAnswer returns s3Store's sink, client and bucket, with the
// answer to the first PUT of key conditional on cond lost, and the count of
// those PUTs.
func losingFirstAnswer(t *testing.T, key, cond string) (*sink.S3, *s3.Client, string, *atomic.Int32) {
	lost := new(atomic.Int32)
	s, c, bucket := s3Store(t, sink.S3Options{}, func(req *http.Request) *http.Response {
		if isLockPut(req, key, cond) && lost.Add(1) == 1 {
			return answerLost(req)
		}
		return nil
	})
	return s, c, bucket, lost
}

// releaseLeavesNone releases l and fails unless the bucket is then empty:
// the run knew its lock object's ETag.
func releaseLeavesNone(t *testing.T, l sink.Lock, c *s3.Client, bucket string) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keys := s3test.Keys(t, c, bucket, ""); len(keys) != 0 {
		t.Fatalf("Release left %q: the run did not know the lock object's ETag", keys)
	}
}

func isLockPut(req *http.Request, key, cond string) bool {
	return req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/"+key) && req.Header.Get(cond) != ""
}

// TestS3LockSameOwner: two runs that describe themselves alike (PID 1 in
// containers with one host name) are still two runs: the second is
// refused, told who holds the lock and since when.
func TestS3LockSameOwner(t *testing.T) {
	s, _, _ := s3Store(t, sink.S3Options{}, nil)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	a, err := s.Lock(ctx, ".x.lock", sink.Holder{Owner: "sitemapgen pid 1 on ctr"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	_, err = s.Lock(ctx, ".x.lock", sink.Holder{Owner: "sitemapgen pid 1 on ctr"}, time.Minute)
	var le *sink.LockedError
	if !errors.As(err, &le) || !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("second Lock with the same owner text: %v, want a *LockedError", err)
	}
	h := a.Holder()
	if le.Holder.Token != h.Token || len(h.Token) != 32 || le.Holder.Acquired.Before(before) || le.Holder.Acquired.After(time.Now()) ||
		!le.Holder.Expires.After(time.Now().Add(50*time.Second)) || !le.Expiry {
		t.Errorf("refusal's holder %+v (expiry %v), want the first run's %+v taken just now, expiring in a minute", le.Holder, le.Expiry, h)
	}
	msg := err.Error()
	for _, want := range []string{s.String() + ".x.lock", "sitemapgen pid 1 on ctr (run " + h.Token[:8] + ")",
		"since " + h.Acquired.UTC().Format(time.RFC3339), "expires at " + le.Holder.Expires.UTC().Format(time.RFC3339)} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if err := a.Err(); err != nil {
		t.Errorf("the holder lost its lock to a refused run: %v", err)
	}
}

// TestS3LockCreateAnswerLost: the create landed but its answer was lost;
// the SDK's retry is refused (the object exists). The run finds its own
// token and makes the lock its own by a conditional write.
func TestS3LockCreateAnswerLost(t *testing.T) {
	s, c, bucket, lost := losingFirstAnswer(t, "p/.c.lock", "If-None-Match")
	ctx := context.Background()
	l, err := s.Lock(ctx, ".c.lock", sink.Holder{Owner: "run A"}, time.Minute)
	if lost.Load() < 2 {
		t.Fatalf("the create was not retried (%d attempts)", lost.Load())
	}
	if err != nil {
		t.Fatalf("Lock whose create's answer was lost: %v", err)
	}
	if got := s3test.Get(t, c, bucket, "p/.c.lock").Data; !strings.Contains(string(got), l.Holder().Token) {
		t.Fatalf("lock object %q, want this run's token", got)
	}
	releaseLeavesNone(t, l, c, bucket)
}

// TestS3LockRenewalAnswerLost: a renewal landed but its answer was lost;
// the retry is refused (the ETag moved on). The lock is still this run's:
// it must not be reported lost, and Release must remove it.
func TestS3LockRenewalAnswerLost(t *testing.T) {
	s, c, bucket, lost := losingFirstAnswer(t, "p/.r.lock", "If-Match")
	ctx := context.Background()
	l, err := s.Lock(ctx, ".r.lock", sink.Holder{Owner: "run A"}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond) // renewals every second, the first answer lost
	if lost.Load() < 3 {
		t.Fatalf("%d renewals seen, want the lost one, its retry and more (Err %v)", lost.Load(), l.Err())
	}
	if err := l.Err(); err != nil {
		t.Fatalf("a lock whose renewal's answer was lost is reported lost: %v", err)
	}
	releaseLeavesNone(t, l, c, bucket)
}

// TestS3LockRemovedWhileHeld: a lock removed behind its holder's back (by
// sitemapgen unlock --force, or by hand) is lost at the next renewal, not
// at its expiry; a new run takes it, and the old holder's Release leaves
// the new lock alone.
func TestS3LockRemovedWhileHeld(t *testing.T) {
	s, c, bucket := s3Store(t, sink.S3Options{}, nil)
	ctx := context.Background()
	a, err := s.Lock(ctx, ".u.lock", sink.Holder{Owner: "run A"}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String("p/.u.lock")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond) // one renewal (every ttl/3 = 1s), well before the expiry
	for a.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.Err() == nil {
		t.Fatal("a lock removed while held is not reported lost at the next renewal")
	}
	b, err := s.Lock(ctx, ".u.lock", sink.Holder{Owner: "run B"}, time.Minute)
	if err != nil {
		t.Fatalf("Lock of a removed lock: %v", err)
	}
	defer b.Release(ctx)
	a.Release(ctx)
	if got := s3test.Get(t, c, bucket, "p/.u.lock").Data; !strings.Contains(string(got), b.Holder().Token) {
		t.Fatalf("lock object %q, want run B's", got)
	}
	if err := b.Err(); err != nil {
		t.Fatalf("run B: %v", err)
	}
}

// TestS3LockStalledRenewal: renewals that hang past the expiry (a stalled
// connection, a suspended host) leave the lock open to a takeover: Err
// says so once it has expired, without waiting for the hung request.
func TestS3LockStalledRenewal(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s, _, _ := s3Store(t, sink.S3Options{}, func(req *http.Request) *http.Response {
		if isLockPut(req, "p/.s.lock", "If-Match") {
			<-release // hangs, whatever the request's context says
		}
		return nil
	})
	ctx := context.Background()
	l, err := s.Lock(ctx, ".s.lock", sink.Holder{Owner: "run A"}, 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond)
	if l.Err() == nil {
		t.Fatal("a lock past its expiry, its renewal hung, is reported held")
	}
}

// TestS3Unlock: a lock past its expiry is removed; a live one is refused
// unless forced; one renewed between the read and the delete is left.
func TestS3Unlock(t *testing.T) {
	s, c, bucket := s3Store(t, sink.S3Options{}, nil)
	ctx := context.Background()
	if _, err := s.Unlock(ctx, ".sitemap.lock", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Unlock of no lock: %v, want fs.ErrNotExist", err)
	}
	dead := `{"owner":"sitemapgen pid 1 on gone","token":"0123456789abcdef0123456789abcdef","acquired":"2026-01-01T00:00:00Z","expires":"2026-01-01T00:10:00Z"}`
	s3test.Put(t, c, bucket, "p/.sitemap.lock", []byte(dead))
	h, err := s.Unlock(ctx, ".sitemap.lock", false)
	if err != nil || h.Owner != "sitemapgen pid 1 on gone" || h.Run() != "01234567" {
		t.Fatalf("Unlock of an expired lock: %+v, %v", h, err)
	}
	if keys := s3test.Keys(t, c, bucket, ""); len(keys) != 0 {
		t.Fatalf("Unlock left %q", keys)
	}

	live, err := s.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "run A"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Unlock(ctx, ".sitemap.lock", false)
	var le *sink.LockedError
	if !errors.As(err, &le) || le.Holder.Token != live.Holder().Token {
		t.Fatalf("Unlock of a live lock: %v, want a *LockedError naming its holder", err)
	}
	if live.Err() != nil {
		t.Fatalf("a refused Unlock broke the lock: %v", live.Err())
	}
	if h, err := s.Unlock(ctx, ".sitemap.lock", true); err != nil || h.Token != live.Holder().Token {
		t.Fatalf("Unlock --force of a live lock: %+v, %v", h, err)
	}
	if keys := s3test.Keys(t, c, bucket, ""); len(keys) != 0 {
		t.Fatalf("forced Unlock left %q", keys)
	}
	live.Release(ctx)

	// Renewed between Unlock's read and its delete: the delete is refused.
	s3test.Put(t, c, bucket, "p/.sitemap.lock", []byte(dead))
	var once sync.Once
	s2 := s3On(t, sink.S3Options{Bucket: bucket}, func(req *http.Request) *http.Response {
		if req.Method == http.MethodDelete {
			once.Do(func() {
				s3test.Put(t, c, bucket, "p/.sitemap.lock", []byte(strings.Replace(dead, "2026-01-01T00:10", "2999-01-01T00:10", 1)))
			})
		}
		return nil
	})
	if _, err := s2.Unlock(ctx, ".sitemap.lock", false); !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("Unlock of a lock renewed meanwhile: %v, want ErrLocked", err)
	}
	if got := s3test.Get(t, c, bucket, "p/.sitemap.lock").Data; !strings.Contains(string(got), "2999") {
		t.Fatalf("the renewed lock was removed: %q", got)
	}
}

// TestLocalUnlock: a lock file no process holds is stale and removed; one
// a live process holds is refused unless forced, and the holder's Release
// then leaves a new holder's file alone.
func TestLocalUnlock(t *testing.T) {
	dir := t.TempDir()
	l, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	path := filepath.Join(dir, ".sitemap.lock")
	if _, err := l.Unlock(ctx, ".sitemap.lock", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Unlock of no lock: %v, want fs.ErrNotExist", err)
	}
	// What a killed run leaves: the file, which no process holds.
	os.WriteFile(path, []byte(`{"owner":"sitemapgen pid 7 on etl-3","token":"89abcdef0123456789abcdef01234567","acquired":"2026-01-01T00:00:00Z"}`), 0o644)
	if h, err := l.Unlock(ctx, ".sitemap.lock", false); err != nil || h.Owner != "sitemapgen pid 7 on etl-3" {
		t.Fatalf("Unlock of a stale lock: %+v, %v", h, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stale lock left: %v", err)
	}

	a, err := l.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "run A"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Unlock(ctx, ".sitemap.lock", false)
	var le *sink.LockedError
	if !errors.As(err, &le) || le.Holder.Token != a.Holder().Token || le.Expiry ||
		!strings.Contains(err.Error(), "run A (run "+a.Holder().Run()+") since ") || !strings.Contains(err.Error(), "ends when that process exits") {
		t.Fatalf("Unlock of a live lock: %v, want a *LockedError naming run A", err)
	}
	if _, err := l.Unlock(ctx, ".sitemap.lock", true); err != nil {
		t.Fatalf("Unlock --force: %v", err)
	}
	// Err and Renew look each time: never an earlier look's answer.
	if err := a.Err(); err == nil {
		t.Fatal("Err of a lock removed by force: nil error")
	}
	if err := a.Renew(ctx); err == nil {
		t.Fatal("Renew of a lock removed by force: nil error")
	}
	b, err := l.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "run B"}, 0)
	if err != nil {
		t.Fatalf("Lock after a forced Unlock: %v", err)
	}
	a.Release(ctx)
	if _, err := l.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "run C"}, 0); !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("the forced-out holder's Release removed run B's lock: run C got %v", err)
	}
	b.Release(ctx)
}

// TestLocalLockNeverSeenUnheld: a folder's lock file is never at its name
// without its holder's flock and its holder's words. A run that looks at
// the moment another takes the lock sees a held lock, not a stale one:
// unlock without --force never removes it, and a refused run is told who
// holds it.
func TestLocalLockNeverSeenUnheld(t *testing.T) {
	dir := t.TempDir()
	l, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			lk, err := l.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "the taker"}, 0)
			if err != nil {
				if !errors.Is(err, sink.ErrLocked) && ctx.Err() == nil {
					done <- err
				}
				continue
			}
			if err := lk.Release(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	path := filepath.Join(dir, ".sitemap.lock")
	var seen int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		h, err := l.Unlock(ctx, ".sitemap.lock", false)
		var le *sink.LockedError
		switch {
		case err == nil:
			t.Fatalf("unlock without --force removed a lock being taken (holder %+v)", h)
		case errors.As(err, &le):
			seen++
			if le.Holder.Owner != "the taker" {
				t.Fatalf("a held lock says it is held by %q, want the taker's words", le.Holder.Owner)
			}
		case !errors.Is(err, fs.ErrNotExist):
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err == nil && len(b) == 0 {
			t.Fatal("the lock file is at its name empty")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("the lock was never seen held: the test proves nothing")
	}
}
