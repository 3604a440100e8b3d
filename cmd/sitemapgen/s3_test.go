package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/publish"
)

// s3env is a bucket on the test server and the flags that publish to it.
type s3env struct {
	ep     string
	c      *s3.Client
	bucket string
	prefix string
}

func newS3Env(t *testing.T) *s3env {
	ep := s3test.Endpoint(t)
	c := s3test.Client(t, ep)
	return &s3env{ep: ep, c: c, bucket: s3test.NewBucket(t, c), prefix: "site/maps/"}
}

// args are the flags of a run to the bucket through endpoint (the server or
// a proxy in front of it).
func (e *s3env) args(endpoint string, extra ...string) []string {
	// Tight cuts: these tests count shards.
	return append([]string{"generate", "--public-url", base, "--out", "s3://" + e.bucket + "/" + e.prefix,
		"--s3-endpoint", endpoint, "--s3-path-style", "--cut", "tight"}, extra...)
}

// download copies the published objects into a new folder.
func (e *s3env) download(t *testing.T) (string, map[string]s3test.Object) {
	dir := t.TempDir()
	return dir, s3test.Download(t, e.c, e.bucket, e.prefix, dir)
}

// publish runs generate on rowsCSV's n rows, 100 URLs a shard, into e, and
// returns the bucket's keys and the root index it published.
func (e *s3env) publish(t *testing.T, n int) (keys []string, root []byte) {
	t.Helper()
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "100", rowsCSV(t, n, nil))...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	return s3test.Keys(t, e.c, e.bucket, ""), s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data
}

// unchanged fails t unless the bucket still holds keys, and root as its
// root index: what ran since (a refused or failed run) changed nothing.
func (e *s3env) unchanged(t *testing.T, keys []string, root []byte, what string) {
	t.Helper()
	if after := s3test.Keys(t, e.c, e.bucket, ""); !slices.Equal(after, keys) {
		t.Errorf("%s changed the bucket:\nbefore %q\nafter  %q", what, keys, after)
	}
	if got := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data; !bytes.Equal(got, root) {
		t.Errorf("%s switched the root", what)
	}
}

// rowsCSV writes n rows; rows for which changed is true get another path of
// the same length.
func rowsCSV(t *testing.T, n int, changed func(int) bool) string {
	return inputtest.WriteRows(t, "rows.csv", base+"item/", "2024-05", n, changed)
}

// bigCSV writes rows of random paths: their shard hardly compresses, so a
// single shard is larger than a 5 MiB part and goes up in parts.
func bigCSV(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("loc\n")
	buf := make([]byte, 500)
	for i := range n {
		rand.Read(buf)
		fmt.Fprintf(&b, "%sbig/%d/%s\n", base, i, hex.EncodeToString(buf))
	}
	return inputtest.WriteFile(t, "big.csv", []byte(b.String()))
}

// checkPublished walks the set from the root on the server: every object it
// lists exists and is complete (it parses), the set validates, the headers are
// right, and the manifest lists exactly the current files with their sizes
// and SHA-256; every other object belongs to a kept generation.
func checkPublished(t *testing.T, e *s3env) (*xmltest.Set, *publish.Manifest) {
	t.Helper()
	dir, objs := e.download(t)
	set := xmltest.ReadSet(t, dir, base, "sitemap.xml", "sitemap-robots.txt")
	xmltest.ValidateDir(t, dir)
	for name, o := range objs {
		want := map[bool]string{true: "application/x-gzip", false: "application/xml"}[strings.HasSuffix(name, ".gz")]
		switch {
		case strings.HasSuffix(name, ".txt"):
			want = "text/plain; charset=utf-8"
		case strings.HasSuffix(name, ".json"):
			want = "application/json"
		}
		if o.ContentType != want || o.ContentEncoding != "" || o.CacheCtrl != "public, max-age=3600" {
			t.Errorf("%s: Content-Type %q (want %q), Content-Encoding %q (want none), Cache-Control %q",
				name, o.ContentType, want, o.ContentEncoding, o.CacheCtrl)
		}
	}
	var m publish.Manifest
	if err := json.Unmarshal(objs["sitemap.manifest.json"].Data, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	listed := map[string]bool{"sitemap.xml": true, "sitemap-robots.txt": true}
	for _, s := range set.Shards {
		listed[s.Name] = true
	}
	for _, ix := range set.Indexes {
		listed[ix.Name] = true
	}
	inManifest := map[string]bool{}
	for _, f := range m.Files {
		inManifest[f.Name] = true
		o, ok := objs[f.Name]
		if !ok || int64(len(o.Data)) != f.Size || hexSum(o.Data) != f.SHA256 {
			t.Errorf("manifest entry %+v does not match the object (present %v)", f, ok)
		}
		if !listed[f.Name] {
			t.Errorf("manifest lists %s, the root does not reach it", f.Name)
		}
	}
	if len(inManifest) != len(listed) || m.URLs != int64(len(allURLs(set))) {
		t.Errorf("manifest: %d files, %d URLs; the set: %d files, %d URLs", len(inManifest), m.URLs, len(listed), len(allURLs(set)))
	}
	kept := map[string]bool{"sitemap.manifest.json": true}
	for _, g := range m.Previous {
		for _, f := range g.Files {
			kept[f.Name] = true
		}
	}
	for name := range objs {
		if !inManifest[name] && !kept[name] {
			t.Errorf("object %s belongs to no kept generation", name)
		}
	}
	if ups := s3test.OpenUploads(t, e.c, e.bucket); len(ups) != 0 {
		t.Errorf("multipart uploads left open: %q", ups)
	}
	return set, &m
}

func allURLs(s *xmltest.Set) []string {
	var u []string
	for _, sh := range s.Shards {
		for _, x := range sh.URLs {
			u = append(u, x.Loc)
		}
	}
	return u
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestS3PublishSkipUnchanged publishes to the server and reads the set back
// ("Done when" 1), re-runs on identical input (no shard uploaded) and on
// input with 1% of rows changed in four shards (those four uploaded).
func TestS3PublishSkipUnchanged(t *testing.T) {
	e := newS3Env(t)
	const rows = 20000 // 100 shards of 200, 4 intermediate indexes
	in := rowsCSV(t, rows, nil)
	report := filepath.Join(t.TempDir(), "report.json")
	flags := []string{"--max-urls", "200", "--index-fanout", "30", "--report", report, in}

	t0 := time.Now()
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, flags...)...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	d1 := time.Since(t0)
	set, m := checkPublished(t, e)
	rep := readReport(t, report)
	if len(set.Shards) != 100 || len(set.Indexes) != 5 || rep.Uploaded.Shards != 100 || m.Generation != 1 {
		t.Fatalf("first run: %d shards, %d indexes, uploaded %+v, generation %d", len(set.Shards), len(set.Indexes), rep.Uploaded, m.Generation)
	}
	rootBefore := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data

	// The identical run goes through a proxy that records what it asks:
	// nothing of the root index or the robots lines (the listing's ETags
	// say they hold the new bytes).
	var mu sync.Mutex
	var asked []string
	p := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		return 0, ""
	})
	t0 = time.Now()
	if code, _, stderr := sitemapgen(t, "", e.args(p.URL, flags...)...); code != 0 {
		t.Fatalf("identical run: exit %d\n%s", code, stderr)
	}
	d2 := time.Since(t0)
	mu.Lock()
	for _, a := range asked {
		if strings.HasSuffix(a, "/"+e.prefix+"sitemap.xml") || strings.HasSuffix(a, "/"+e.prefix+"sitemap-robots.txt") {
			t.Errorf("identical run asked %s", a)
		}
	}
	if !slices.ContainsFunc(asked, func(a string) bool {
		return strings.HasPrefix(a, "PUT ") && strings.HasSuffix(a, "sitemap.manifest.json")
	}) {
		t.Errorf("identical run did not write its manifest: %q", asked)
	}
	mu.Unlock()
	rep = readReport(t, report)
	if rep.Uploaded.Shards != 0 || rep.Uploaded.ShardBytes != 0 || rep.Skipped.Shards != 100 {
		t.Fatalf("identical run: uploaded %+v, skipped %+v", rep.Uploaded, rep.Skipped)
	}
	if root := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data; !bytes.Equal(root, rootBefore) {
		t.Fatal("identical run changed the root index: an unchanged shard's lastmod must stay")
	}
	t.Logf("identical run: uploaded %d shards / %d shard bytes, skipped %d shards / %d bytes; %d files / %d bytes uploaded in all (%v, first run %v)",
		rep.Uploaded.Shards, rep.Uploaded.ShardBytes, rep.Skipped.Shards, rep.Skipped.ShardBytes, rep.Uploaded.Files, rep.Uploaded.Bytes, d2.Round(time.Millisecond), d1.Round(time.Millisecond))

	// 200 rows (1%) changed: every 4th row of shards 1, 26, 51 and 76.
	changed := func(i int) bool { return (i/200)%25 == 0 && i%4 == 0 }
	flags[len(flags)-1] = rowsCSV(t, rows, changed)
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, flags...)...); code != 0 {
		t.Fatalf("1%% run: exit %d\n%s", code, stderr)
	}
	rep = readReport(t, report)
	if rep.Uploaded.Shards != 4 || rep.Skipped.Shards != 96 {
		t.Fatalf("1%% changed: uploaded %+v, skipped %+v", rep.Uploaded, rep.Skipped)
	}
	t.Logf("1%% changed: uploaded %d shards / %d bytes, skipped %d shards / %d bytes",
		rep.Uploaded.Shards, rep.Uploaded.ShardBytes, rep.Skipped.Shards, rep.Skipped.ShardBytes)
	_, m = checkPublished(t, e)
	// Grace: the previous root's shards are all still there.
	for _, s := range set.Shards {
		s3test.Get(t, e.c, e.bucket, e.prefix+s.Name)
	}
	if m.Generation != 3 || len(m.Previous) != 1 {
		t.Fatalf("generation %d, previous %d", m.Generation, len(m.Previous))
	}
}

// TestS3MaxShrink: a truncated input is refused and the old set stays
// published; --force publishes it; --dry-run writes nothing.
func TestS3MaxShrink(t *testing.T) {
	e := newS3Env(t)
	before, root := e.publish(t, 1000)
	truncated := rowsCSV(t, 300, nil)
	code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "100", truncated)...)
	if code != 1 || !strings.Contains(stderr, "URL count fell too far") || !strings.Contains(stderr, "1000") {
		t.Fatalf("truncated input: exit %d\n%s", code, stderr)
	}
	e.unchanged(t, before, root, "the refused run")
	report := filepath.Join(t.TempDir(), "plan.json")
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "100", "--force", "--dry-run", "--report", report, truncated)...); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	e.unchanged(t, before, root, "the dry run")
	// The first 3 shards are unchanged; only the manifest and root would be
	// written (the robots lines are the same); the other 7 shards stay for
	// the grace period.
	if p := readReport(t, report).Plan; p == nil || len(p.Upload) != 2 || len(p.Skip) != 3+1 || len(p.Delete) != 0 {
		t.Fatalf("dry-run plan %+v", p)
	}
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "100", "--force", truncated)...); code != 0 {
		t.Fatalf("--force: exit %d\n%s", code, stderr)
	}
	if set, _ := checkPublished(t, e); len(allURLs(set)) != 300 {
		t.Fatalf("forced set has %d URLs", len(allURLs(set)))
	}
}

// TestS3FailAfterK: the store refuses every write after the k-th (a fault
// proxy). The run exits 1, the published root still lists only complete
// objects of the previous generation, nothing new is left, no multipart
// upload is open, and the next run succeeds and cleans up.
func TestS3FailAfterK(t *testing.T) {
	e := newS3Env(t)
	before, root := e.publish(t, 3000)
	next := rowsCSV(t, 3000, func(i int) bool { return true })
	big := bigCSV(t, 12000)
	for _, tc := range []struct {
		name  string
		input string
		flags []string
		fault s3test.Fault
	}{
		{"after 5 objects", next, []string{"--max-urls", "100"}, func(r *http.Request, n int) (int, string) {
			if s3test.IsWrite(r) && n > 5 {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		}},
		{"second part of a multipart upload", big, []string{"--max-bytes", "52428800", "--s3-part-size", "5", "--max-shrink", "100%"}, func(r *http.Request, n int) (int, string) {
			if r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "2" {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s3test.NewProxy(t, e.ep, tc.fault)
			code, _, stderr := sitemapgen(t, "", e.args(p.URL, append(tc.flags, tc.input)...)...)
			if code != 1 || p.Injected.Load() == 0 {
				t.Fatalf("exit %d, %d faults injected\n%s", code, p.Injected.Load(), stderr)
			}
			e.unchanged(t, before, root, "the failed run")
			checkPublished(t, e)
		})
	}
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "100", next)...); code != 0 {
		t.Fatalf("next run: exit %d\n%s", code, stderr)
	}
	if set, _ := checkPublished(t, e); !strings.HasSuffix(set.Shards[0].URLs[0].Loc, "/b") {
		t.Fatal("the next run did not publish its input")
	}
}

// TestS3SlowDown: the store throttles (503 SlowDown) the first writes; the
// SDK retries them with backoff and the run succeeds.
func TestS3SlowDown(t *testing.T) {
	e := newS3Env(t)
	slowed := 0
	p := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
		if s3test.IsWrite(r) && slowed < 4 {
			slowed++
			return http.StatusServiceUnavailable, "SlowDown"
		}
		return 0, ""
	})
	if code, _, stderr := sitemapgen(t, "", e.args(p.URL, "--max-urls", "100", "--uploads", "2", rowsCSV(t, 1000, nil))...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if p.Injected.Load() != 4 {
		t.Fatalf("%d SlowDown answers, want 4", p.Injected.Load())
	}
	if set, _ := checkPublished(t, e); len(set.Shards) != 10 {
		t.Fatalf("%d shards", len(set.Shards))
	}
}

// TestS3Kill kills a real child process (SIGKILL) while a multipart upload is
// open: the published root still lists only complete objects of the
// previous generation; the next run succeeds, aborts the open upload and
// deletes what the killed run left.
func TestS3Kill(t *testing.T) {
	e := newS3Env(t)
	_, root := e.publish(t, 1000)
	// Parts go slowly, so the kill lands while the upload is open.
	p := s3test.NewProxy(t, e.ep, func(r *http.Request, n int) (int, string) {
		if r.URL.Query().Has("partNumber") {
			time.Sleep(300 * time.Millisecond)
		}
		return 0, ""
	})
	big := bigCSV(t, 12000)
	cmd := child(e.args(p.URL, "--max-bytes", "52428800", "--s3-part-size", "5", "--max-shrink", "100%", "--lock-ttl", "2s", big)...)
	stderr := start(t, cmd)
	deadline := time.Now().Add(60 * time.Second)
	for len(s3test.OpenUploads(t, e.c, e.bucket)) == 0 {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			cmd.Process.Kill()
			t.Fatalf("no multipart upload seen in flight\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	open := s3test.OpenUploads(t, e.c, e.bucket)
	t.Logf("killed with %d multipart upload(s) open: %q", len(open), open)
	if got := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data; !bytes.Equal(got, root) {
		t.Fatal("the killed run switched the root")
	}
	dir, _ := e.download(t)
	xmltest.ReadSet(t, dir, base, "sitemap.xml", "sitemap-robots.txt") // every listed object exists and is complete

	// The killed run's lock lives on until it expires (S3 cannot see the
	// holder die): a run now is refused, and publishes nothing.
	next := e.args(e.ep, "--max-urls", "100", rowsCSV(t, 1000, func(i int) bool { return i < 10 }))
	if code, _, stderr := sitemapgen(t, "", next...); code != 1 || !strings.Contains(stderr, "another run holds the destination") {
		t.Fatalf("run while the dead run's lock lives: exit %d\n%s", code, stderr)
	}
	if got := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap.xml").Data; !bytes.Equal(got, root) {
		t.Fatal("the refused run changed the root")
	}
	time.Sleep(2 * time.Second) // the lock's ttl: then it is taken over
	if code, _, stderr := sitemapgen(t, "", next...); code != 0 {
		t.Fatalf("next run: exit %d\n%s", code, stderr)
	}
	checkPublished(t, e) // no upload open, no object outside a kept generation, no lock left
}

// TestS3Errors: wrong credentials, a missing bucket and an unreachable
// endpoint fail fast, with one clear line, exit 1, and publish nothing.
func TestS3Errors(t *testing.T) {
	e := newS3Env(t)
	in := rowsCSV(t, 100, nil)
	for _, tc := range []struct {
		name, endpoint, bucket, want string
		env                          [2]string
	}{
		{"wrong credentials", e.ep, e.bucket, "refused the credentials", [2]string{"AWS_SECRET_ACCESS_KEY", "wrong-secret"}},
		{"unknown access key", e.ep, e.bucket, "refused the credentials", [2]string{"AWS_ACCESS_KEY_ID", "nobody"}},
		{"missing bucket", e.ep, "no-such-bucket-sitemapgen", `bucket "no-such-bucket-sitemapgen" does not exist`, [2]string{}},
		{"unreachable endpoint", "http://127.0.0.1:1", e.bucket, "cannot reach the S3 endpoint", [2]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env[0] != "" {
				t.Setenv(tc.env[0], tc.env[1])
			}
			t0 := time.Now()
			code, stdout, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", "s3://"+tc.bucket+"/x/",
				"--s3-endpoint", tc.endpoint, "--s3-path-style", in)
			took := time.Since(t0)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 1 || len(lines) != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d in %v, stdout %q, stderr:\n%s", code, took, stdout, stderr)
			}
			if took > 10*time.Second {
				t.Errorf("took %v to fail", took)
			}
			t.Logf("%v: %s", took.Round(time.Millisecond), lines[0])
		})
	}
	if keys := s3test.Keys(t, e.c, e.bucket, ""); len(keys) != 0 {
		t.Fatalf("failed runs wrote %q", keys)
	}
}

// TestS3ValidateAndVerify: generate --verify checks the set in the bucket
// before the root goes live, and validate reads a set from s3:// and finds a
// shard deleted behind its back.
func TestS3ValidateAndVerify(t *testing.T) {
	e := newS3Env(t)
	in := rowsCSV(t, 3000, nil)
	if code, _, stderr := sitemapgen(t, "", e.args(e.ep, "--max-urls", "500", "--verify", in)...); code != 0 {
		t.Fatalf("generate --verify: exit %d\n%s", code, stderr)
	}
	root := "s3://" + e.bucket + "/" + e.prefix
	flags := []string{"validate", "--public-url", base, "--s3-endpoint", e.ep, "--s3-path-style"}
	for _, r := range []string{root, root + "sitemap.xml"} {
		code, stdout, stderr := sitemapgen(t, "", append(flags, r)...)
		if code != 0 || !strings.Contains(stderr, "3000 URLs") {
			t.Fatalf("validate %s: exit %d\n%s%s", r, code, stdout, stderr)
		}
	}
	set, _ := checkPublished(t, e)
	if _, err := e.c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &e.bucket, Key: aws.String(e.prefix + set.Shards[2].Name)}); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := sitemapgen(t, "", append(flags, root)...)
	if code != 1 || !strings.Contains(stdout, set.Shards[2].Name) || !strings.Contains(stdout, "missing") {
		t.Fatalf("validate after deleting a shard: exit %d\n%s", code, stdout)
	}
}
