package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
		err = exec.Command(unshare, "--pid", "--fork", "--uts", "--mount-proc", "true").Run()
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
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	start := time.Now()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	fmt.Fprintln(stdin, "loc")
	for i := range 3000 {
		fmt.Fprintf(stdin, "%sa/%d\n", base, i)
	}
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
	err = second.Run()
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
