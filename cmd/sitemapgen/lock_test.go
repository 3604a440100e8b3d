package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
)

// hostnameEnv names the host name a child run sets in its own UTS
// namespace before it starts (see TestMain).
const hostnameEnv = "SITEMAPGEN_TEST_HOSTNAME"

// inNamespaces returns the command run as a real process of the test
// binary in a PID namespace and a UTS namespace of its own: it is PID 1 on
// a host named host, as a run in a container is. Without namespaces (not
// root, no unshare) the test skips, but fails when CI requires S3.
func inNamespaces(t *testing.T, host string, args ...string) *exec.Cmd {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		err = exec.Command(unshare, "--pid", "--fork", "--uts", "--mount-proc", "--kill-child", "true").Run()
	}
	if err != nil {
		if os.Getenv(s3test.RequireEnv) != "" {
			t.Fatalf("PID and UTS namespaces (unshare --pid --fork --uts --mount-proc) are needed: %v", err)
		}
		t.Skipf("no PID and UTS namespaces here (unshare: %v)", err)
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "--uts", "--mount-proc", "--kill-child", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"=1", hostnameEnv+"="+host, "SITEMAPGEN_TEST_ARGS="+strings.Join(args, " "))
	return cmd
}

// TestS3LockSameOwnerText: two real runs in containers (PID 1 each, the
// same host name) with the same --now describe themselves with the same
// text. While the first holds the lock, the second is refused, and told who
// holds it, since when, until when, and how to clear it by hand.
func TestS3LockSameOwnerText(t *testing.T) {
	e := newS3Env(t)
	const now = "2020-01-02T03:04:05Z" // far from the clock: the lock's times must not be --now
	lock := e.prefix + ".sitemap.lock"
	first := inNamespaces(t, "sitemapgen-ctr", e.args(e.ep, "--now", now, "--max-urls", "100", "-")...)
	start := time.Now()
	stdin, firstErr := startFeeding(t, first, "a", 3000)
	// Stdin stays open: the first run holds the lock.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := e.c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(lock)})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first run took no lock: %v\n%s", err, firstErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	second := inNamespaces(t, "sitemapgen-ctr", e.args(e.ep, "--now", now, "--max-urls", "100", overlapInput(t, "b", 2000))...)
	var secondErr bytes.Buffer
	second.Stderr = &secondErr
	err := second.Run()
	code := second.ProcessState.ExitCode()
	if err != nil && second.ProcessState == nil {
		t.Fatal(err)
	}
	msg := secondErr.String()
	if code != 1 || !strings.Contains(msg, "another run holds the destination") {
		t.Fatalf("a second run with the same owner text beside a live one: exit %d, want 1 (another run holds the destination)\n%s", code, msg)
	}
	for _, want := range []string{"pid 1 on sitemapgen-ctr", "since " + start.UTC().Format("2006-01-02T"), "expires", "sitemapgen unlock --force"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, now) {
		t.Errorf("the refusal gives --now as a time of the lock:\n%s", msg)
	}

	stdin.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, firstErr.String())
	}
	set, _ := checkPublished(t, e)
	if n := len(allURLs(set)); n != 3000 {
		t.Errorf("the live set lists %d URLs, want the first run's 3000", n)
	}
	if keys := s3test.Keys(t, e.c, e.bucket, lock); len(keys) != 0 {
		t.Errorf("lock left: %q", keys)
	}
}

// lockEvent is one request a run sent to the store.
type lockEvent struct {
	method, key string
	status      int
	sent, done  time.Time // arrival at the proxy; the store's answer back at the proxy
}

// recorder is a proxy in front of the store that records one run's
// requests with the times it saw them.
type recorder struct {
	URL    string
	mu     sync.Mutex
	events []lockEvent
}

func newRecorder(t *testing.T, target string) *recorder {
	r := &recorder{}
	rp := s3test.ReverseProxy(t, target)
	rp.ModifyResponse = func(resp *http.Response) error {
		// Before the answer reaches the run: the run acts on it later.
		ev := resp.Request.Context().Value(eventKey{}).(*lockEvent)
		ev.status, ev.done = resp.StatusCode, time.Now()
		return nil
	}
	r.URL = s3test.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ev := &lockEvent{method: req.Method, key: req.URL.Path, sent: time.Now()}
		rp.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), eventKey{}, ev)))
		r.mu.Lock()
		r.events = append(r.events, *ev)
		r.mu.Unlock()
	}))
	return r
}

type eventKey struct{}

// held returns when the run surely held the lock: from the store's answer to
// its create of lockKey until it asked to delete it. ok is false if it
// never created it.
func (r *recorder) held(lockKey string) (from, to time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		switch {
		case ev.key != lockKey:
		case ev.method == http.MethodPut && ev.status == http.StatusOK && !ok:
			from, ok = ev.done, true
		case ev.method == http.MethodDelete && ok:
			to = ev.sent
		}
	}
	if ok && to.IsZero() {
		to = time.Now() // never released (it exited without): held to the end
	}
	return from, to, ok
}

// writes returns the run's requests that change objects other than lockKey.
func (r *recorder) writes(lockKey string) []lockEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []lockEvent
	for _, ev := range r.events {
		if ev.key != lockKey && ev.method != http.MethodGet && ev.method != http.MethodHead {
			w = append(w, ev)
		}
	}
	return w
}

// TestS3LockOverlappingSameOwner: trials of several runs started together
// on one S3 prefix, all with the same owner text (one process: the same PID
// and host name; the same --now). Seen from the store, at most one run at a
// time holds the lock, no run writes an object outside the time it holds
// it, every run publishes or is refused, and the live set validates after
// every trial.
func TestS3LockOverlappingSameOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("trials of concurrent runs")
	}
	e := newS3Env(t)
	lockKey := "/" + e.bucket + "/" + e.prefix + ".sitemap.lock"
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	inputs := []string{overlapInput(t, "a", 3000), overlapInput(t, "b", 2000), overlapInput(t, "c", 4000), overlapInput(t, "d", 1000)}
	const trials, runs = 20, 4
	var published, refused int
	for trial := range trials {
		recs := make([]*recorder, runs)
		codes, errs := make([]int, runs), make([]string, runs)
		var wg sync.WaitGroup
		for i := range runs {
			recs[i] = newRecorder(t, e.ep)
			delay := time.Duration(rng.IntN(150)) * time.Millisecond
			in := inputs[rng.IntN(len(inputs))]
			wg.Go(func() {
				time.Sleep(delay)
				codes[i], _, errs[i] = sitemapgen(t, "", e.args(recs[i].URL, "--now", "2026-01-02T03:04:05Z",
					"--max-urls", "200", "--keep-generations", "0", "--max-shrink", "100%", in)...)
			})
		}
		wg.Wait()
		type span struct {
			from, to time.Time
			run      int
		}
		var spans []span
		for i, r := range recs {
			switch {
			case codes[i] == 0:
				published++
			case codes[i] == 1 && strings.Contains(errs[i], "another run holds the destination"):
				refused++
			default:
				t.Fatalf("trial %d, run %d: exit %d\n%s", trial, i, codes[i], errs[i])
			}
			from, to, ok := r.held(lockKey)
			for _, w := range r.writes(lockKey) {
				if !ok || w.sent.Before(from) || w.done.After(to) {
					t.Errorf("trial %d, run %d (exit %d): %s %s outside the time it held the lock (%v, %v to %v)",
						trial, i, codes[i], w.method, w.key, ok, from.Format("15:04:05.000"), to.Format("15:04:05.000"))
				}
			}
			if ok {
				spans = append(spans, span{from, to, i})
			}
		}
		for a := range spans {
			for b := range a {
				if spans[a].from.Before(spans[b].to) && spans[b].from.Before(spans[a].to) {
					t.Errorf("trial %d: runs %d and %d both held the lock (%s to %s, %s to %s)", trial, spans[b].run, spans[a].run,
						spans[b].from.Format("15:04:05.000"), spans[b].to.Format("15:04:05.000"),
						spans[a].from.Format("15:04:05.000"), spans[a].to.Format("15:04:05.000"))
				}
			}
		}
		if code, stdout, stderr := sitemapgen(t, "", "validate", "--public-url", base, "--s3-endpoint", e.ep, "--s3-path-style",
			"s3://"+e.bucket+"/"+e.prefix); code != 0 {
			t.Fatalf("trial %d: the live set does not validate: exit %d\n%s%s", trial, code, stdout, stderr)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d runs published, %d refused", published, refused)
	if refused == 0 {
		t.Error("no run ever found the destination held: the trials did not overlap")
	}
	checkPublished(t, e)
}
