package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// deadLock is the lock object of a run that died at 02:00 with a 10m ttl.
const deadLock = `{"owner":"sitemapgen pid 1 on etl-3","token":"0123456789abcdef0123456789abcdef",` +
	`"acquired":"2026-01-01T02:00:00Z","renewed":"2026-01-01T02:06:40Z","expires":"2026-01-01T02:16:40Z"}`

// TestUnlockS3: a lock past its expiry is removed by default; a live one is
// left, its holder named, unless --force.
func TestUnlockS3(t *testing.T) {
	e := newS3Env(t)
	dest := "s3://" + e.bucket + "/" + e.prefix
	unlock := func(extra ...string) (int, string, string) {
		return sitemapgen(t, "", append([]string{"unlock", "--out", dest, "--s3-endpoint", e.ep, "--s3-path-style"}, extra...)...)
	}
	if code, stdout, stderr := unlock(); code != 0 || !strings.Contains(stdout, "no lock") {
		t.Fatalf("unlock of no lock: exit %d\n%s%s", code, stdout, stderr)
	}
	s3test.Put(t, e.c, e.bucket, e.prefix+".sitemap.lock", []byte(deadLock))
	code, stdout, stderr := unlock()
	if code != 0 || !strings.Contains(stdout, "removed the lock "+dest+".sitemap.lock of sitemapgen pid 1 on etl-3 (run 01234567) since 2026-01-01T02:00:00Z") {
		t.Fatalf("unlock of an expired lock: exit %d\n%s%s", code, stdout, stderr)
	}
	if keys := s3test.Keys(t, e.c, e.bucket, ""); len(keys) != 0 {
		t.Fatalf("unlock left %q", keys)
	}

	// A live run's lock, under another name.
	s, err := sink.NewS3(context.Background(), sink.S3Options{Bucket: e.bucket, Prefix: e.prefix, Endpoint: e.ep, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.Lock(context.Background(), ".news.lock", sink.Holder{Owner: "sitemapgen pid 4121 on etl-4"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release(context.Background())
	code, stdout, stderr = unlock("--name", "news")
	for _, want := range []string{"another run holds the destination", "sitemapgen pid 4121 on etl-4 (run " + live.Holder().Run() + ")",
		"expires at", "If you know that run is dead (killed, or cut off from S3 before it could release the lock): sitemapgen unlock --force --out " + dest + " --name news --s3-endpoint " + e.ep + " --s3-path-style"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("unlock of a live lock does not say %q:\n%s", want, stderr)
		}
	}
	if code != 1 || live.Err() != nil {
		t.Fatalf("unlock of a live lock: exit %d (want 1), the lock: %v\n%s%s", code, live.Err(), stdout, stderr)
	}
	if code, stdout, stderr := unlock("--name", "news", "--force"); code != 0 || !strings.Contains(stdout, "removed the lock") {
		t.Fatalf("unlock --force of a live lock: exit %d\n%s%s", code, stdout, stderr)
	}
	if keys := s3test.Keys(t, e.c, e.bucket, ""); len(keys) != 0 {
		t.Fatalf("unlock --force left %q", keys)
	}
}

// TestUnlockFolder: the lock file a killed run left is removed; a lock a
// live process holds is left unless --force; a missing folder is not
// created.
func TestUnlockFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := sitemapgen(t, "", "unlock", "--out", out); code != 1 || !strings.Contains(stderr, "not a folder") {
		t.Fatalf("unlock of a missing folder: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("unlock created the folder")
	}
	os.Mkdir(out, 0o755)
	lock := filepath.Join(out, ".sitemap.lock")
	os.WriteFile(lock, []byte(deadLock), 0o644) // no process holds it: its run was killed
	if code, stdout, stderr := sitemapgen(t, "", "unlock", "--out", out); code != 0 || !strings.Contains(stdout, "removed the lock") {
		t.Fatalf("unlock of a stale lock file: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("stale lock file left")
	}

	l, err := sink.NewLocal(out)
	if err != nil {
		t.Fatal(err)
	}
	live, err := l.Lock(context.Background(), ".sitemap.lock", sink.Holder{Owner: "sitemapgen pid 4121 on etl-3"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release(context.Background())
	// A run beside it is refused, and told who holds it since when.
	code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--now", "2020-01-02T03:04:05Z", "../../testdata/sample.csv")
	for _, want := range []string{"another run holds the destination: " + lock + " is held by sitemapgen pid 4121 on etl-3 (run " + live.Holder().Run() + ") since " +
		live.Holder().Acquired.Format(time.RFC3339), "it ends when that process exits", "sitemapgen unlock --force --out " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refused run does not say %q:\n%s", want, stderr)
		}
	}
	if code != 1 || strings.Contains(stderr, "2020-01-02") {
		t.Errorf("refused run: exit %d, want 1, and not --now as the lock's time\n%s", code, stderr)
	}
	if code, stdout, stderr := sitemapgen(t, "", "unlock", "--out", out); code != 1 || !strings.Contains(stderr, "ends when that process exits") {
		t.Fatalf("unlock of a live lock: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("unlock removed a live lock without --force: %v", err)
	}
	if code, stdout, stderr := sitemapgen(t, "", "unlock", "--out", out, "--force"); code != 0 || !strings.Contains(stdout, "removed the lock") {
		t.Fatalf("unlock --force: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "../../testdata/sample.csv"); code != 0 {
		t.Fatalf("run after unlock --force: exit %d\n%s", code, stderr)
	}
}

func TestUnlockUsage(t *testing.T) {
	if code, stdout, _ := sitemapgen(t, "", "help", "unlock"); code != 0 || !strings.Contains(stdout, "--force") || !strings.Contains(stdout, "stale") {
		t.Errorf("help unlock: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := sitemapgen(t, "", "help"); code != 0 || !strings.Contains(stdout, "sitemapgen unlock") {
		t.Errorf("help does not list unlock: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := sitemapgen(t, "", "unlock", "out"); code != 2 || !strings.Contains(stderr, "--out") {
		t.Errorf("unlock with an argument: exit %d, want 2\n%s", code, stderr)
	}
	// A name generate refuses names no lock: a usage error, as there.
	if code, _, stderr := sitemapgen(t, "", "unlock", "--out", t.TempDir(), "--name", "bad/name"); code != 2 || !strings.Contains(stderr, "--name") {
		t.Errorf("unlock --name bad/name: exit %d, want 2\n%s", code, stderr)
	}
}

// forcedWhileHeld starts a run that holds the lock of dest (its input stays
// open), removes the lock with unlock --force, lets another run publish,
// then ends the first run's input: the first run, whose lock was taken
// from it, must publish nothing, and the live set must be the second's.
// (The first run leaves its shards: it cannot tell them from the second
// run's, so it deletes nothing; the next run removes them.)
func forcedWhileHeld(t *testing.T, gen []string, lockExists func() bool, unlockArgs []string, live func() *xmltest.Set) {
	first := child(append(gen, "-")...)
	stdin, firstErr := startFeeding(t, first, "a", 3000)
	for deadline := time.Now().Add(20 * time.Second); !lockExists(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first run took no lock\n%s", firstErr.String())
		}
	}
	if code, stdout, stderr := sitemapgen(t, "", append([]string{"unlock", "--force"}, unlockArgs...)...); code != 0 {
		t.Fatalf("unlock --force: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := sitemapgen(t, "", append(gen, "--max-shrink", "100%", overlapInput(t, "b", 2000))...); code != 0 {
		t.Fatalf("run after unlock --force: exit %d\n%s", code, stderr)
	}
	stdin.Close()
	first.Wait()
	if code := first.ProcessState.ExitCode(); code != 1 || !strings.Contains(firstErr.String(), "lock") {
		t.Fatalf("the run whose lock was removed: exit %d, want 1 (lock lost)\n%s", code, firstErr.String())
	}
	if urls := allURLs(live()); len(urls) != 2000 || !strings.Contains(urls[0], "/b/") {
		t.Fatalf("the live set lists %d URLs, want the second run's 2000", len(urls))
	}
}

// TestUnlockForceS3WhileHolderLives: --force on a lock whose holder still
// lives; that run finds out before its switch, at the latest.
func TestUnlockForceS3WhileHolderLives(t *testing.T) {
	e := newS3Env(t)
	dest := "s3://" + e.bucket + "/" + e.prefix
	forcedWhileHeld(t, e.args(e.ep, "--max-urls", "100"), func() bool {
		_, err := e.c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &e.bucket, Key: aws.String(e.prefix + ".sitemap.lock")})
		return err == nil
	}, []string{"--out", dest, "--s3-endpoint", e.ep, "--s3-path-style"}, func() *xmltest.Set {
		dir, _ := e.download(t)
		return xmltest.ReadSet(t, dir, base, "sitemap.xml", "sitemap-robots.txt")
	})
}

// TestUnlockForceFolderWhileHolderLives: the same in a folder.
func TestUnlockForceFolderWhileHolderLives(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	forcedWhileHeld(t, []string{"generate", "--public-url", base, "--out", out, "--max-urls", "100"}, func() bool {
		_, err := os.Stat(filepath.Join(out, ".sitemap.lock"))
		return err == nil
	}, []string{"--out", out}, func() *xmltest.Set {
		return xmltest.ReadSet(t, out, base, "sitemap.xml", "sitemap-robots.txt")
	})
}

// TestLockedHintNamesTheHeldLock: the unlock command a refused run is told
// names the lock it found, which need not be its own: a grouped run's
// (.sitemap.lock) for a run of one group's set, one group's folder for
// {group} in --out.
func TestLockedHintNamesTheHeldLock(t *testing.T) {
	for _, tc := range []struct {
		lock, out, name string
		want, not       string
	}{
		{"gg/blog/.sitemap.lock", "gg/{group}", "sitemap", "sitemapgen unlock --force --out gg/blog", "{group}"},
		{"s3://b/gs/.sitemap.lock", "s3://b/gs/", "sitemap-help", "sitemapgen unlock --force --out s3://b/gs/ --s3-path-style", "--name"},
		{"/srv/out/.sitemap-help.lock", "/srv/out", "sitemap", "sitemapgen unlock --force --out /srv/out --name sitemap-help", "{group}"},
		{"s3://b/gs/blog/.sitemap.lock", "s3://b/gs/{group}", "sitemap", "sitemapgen unlock --force --out 's3://b/gs/{group}' --s3-path-style", "blog"},
	} {
		g := &generateFlags{out: tc.out, name: tc.name, s3PathStyle: strings.HasPrefix(tc.out, "s3://")}
		h := lockedHint(&sink.LockedError{Lock: tc.lock, Expiry: strings.HasPrefix(tc.lock, "s3://")}, g)
		if !strings.Contains(h, tc.want) || strings.Contains(h, tc.not) {
			t.Errorf("lock %s, --out %s --name %s: hint %q; want %q, without %q", tc.lock, tc.out, tc.name, h, tc.want, tc.not)
		}
	}
}

// TestUnlockGroupsS3: a grouped run killed on S3 with {group} in --out
// leaves a lock in every group's prefix. The next run's hint names --out
// as given, and that one command removes them all (and no other object);
// the run after it publishes. Without --force, live locks are left and
// counted.
func TestUnlockGroupsS3(t *testing.T) {
	e := newS3Env(t)
	out := "s3://" + e.bucket + "/" + e.prefix + "{group}/sm"
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("loc,section\n")
	for i := range 60 {
		fmt.Fprintf(&in, "%ss%d/%d,s%d\n", base, i%6, i, i%6)
	}
	input := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func() (int, string) {
		code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "section", "--public-url", base+"{group}/", "--out", out,
			"--s3-endpoint", e.ep, "--s3-path-style", input)
		return code, stderr
	}
	if code, stderr := gen(); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	ctx := context.Background()
	for g := range 6 {
		s, err := sink.NewS3(ctx, sink.S3Options{Bucket: e.bucket, Prefix: fmt.Sprintf("%ss%d/sm/", e.prefix, g), Endpoint: e.ep, PathStyle: true})
		if err != nil {
			t.Fatal(err)
		}
		// Taken, never released: a dead run's lock looks live until it expires.
		if _, err := s.Lock(ctx, ".sitemap.lock", sink.Holder{Owner: "sitemapgen pid 7 on etl-9"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	before := s3test.Keys(t, e.c, e.bucket, "")
	code, stderr := gen()
	want := "sitemapgen unlock --force --out '" + out + "' --s3-endpoint " + e.ep + " --s3-path-style"
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "clears them all") {
		t.Fatalf("night 2: exit %d; want 1 and the hint %q\n%s", code, want, stderr)
	}
	unlock := func(extra ...string) (int, string, string) {
		return sitemapgen(t, "", append([]string{"unlock", "--out", out, "--s3-endpoint", e.ep, "--s3-path-style"}, extra...)...)
	}
	code, stdout, stderr := unlock()
	if code != 1 || !strings.Contains(stdout, "0 locks removed, 6 live locks left") {
		t.Fatalf("unlock without --force: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = unlock("--force")
	if code != 0 || strings.Count(stdout, "removed the lock s3://") != 6 || !strings.Contains(stdout, "6 locks removed") {
		t.Fatalf("unlock --force: exit %d\n%s%s", code, stdout, stderr)
	}
	after := s3test.Keys(t, e.c, e.bucket, "")
	if len(before)-len(after) != 6 {
		t.Errorf("unlock removed %d objects; want the 6 locks", len(before)-len(after))
	}
	if code, stdout, _ := unlock("--force"); code != 0 || !strings.Contains(stdout, "no lock: none in the 6 group destinations") {
		t.Errorf("unlock again: exit %d\n%s", code, stdout)
	}
	if code, stderr := gen(); code != 0 {
		t.Fatalf("night 2 after unlock: exit %d\n%s", code, stderr)
	}
}

// TestUnlockGroupsFolder: with {group} in a folder's --out, a folder the
// pattern's segment matches but without the rest of the path is no
// group's (not an error); a dead run's lock file in a group's folder is
// removed; a bucket per group cannot be listed (usage error).
func TestUnlockGroupsFolder(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/sm", "b/sm", "notes", "filesm"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "filesm", "sm"), nil, 0o644); err != nil { // a file, not a folder
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b/sm/.sitemap.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "{group}", "sm")
	code, stdout, stderr := sitemapgen(t, "", "unlock", "--out", out)
	if code != 0 || !strings.Contains(stdout, "removed the lock "+filepath.Join(dir, "b/sm")+"/.sitemap.lock") || !strings.Contains(stdout, "1 locks removed") {
		t.Fatalf("unlock: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := sitemapgen(t, "", "unlock", "--out", out); code != 0 || !strings.Contains(stdout, "no lock: none in the 4 group destinations") {
		t.Fatalf("unlock again: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := sitemapgen(t, "", "unlock", "--out", "s3://{group}/sm"); code != 2 || !strings.Contains(stderr, "a bucket per group") {
		t.Fatalf("a bucket per group: exit %d\n%s", code, stderr)
	}
}
