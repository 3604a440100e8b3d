package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sitemapgen/sitemapgen/internal/s3test"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/sink"
)

// TestGroupByHost: one export of five hosts, each host's set under its own
// folder and URLs ({group} in --public-url, --scope and --out); every set
// validates, and a row outside its host's scope is rejected.
func TestGroupByHost(t *testing.T) {
	groupHosts := []string{"blog.example.com", "m.example.com", "shop.example.org", "www.example.com", "www.example.de"}
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("loc,lastmod\n")
	for i := range 500 {
		h := groupHosts[i%len(groupHosts)]
		fmt.Fprintf(&in, "https://%s/pages/%d,2024-05-01\n", strings.ToUpper(h[:1])+h[1:], i) // hosts are case-insensitive
		if i%100 == 0 {
			fmt.Fprintf(&in, "https://%s/admin/%d,\n", groupHosts[i/100], i) // outside the scope
		}
	}
	input := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	report := filepath.Join(dir, "report.json")
	code, stdout, stderr := sitemapgen(t, "", "generate", "--group-by", "host", "--public-url", "https://{group}/sitemaps/",
		"--scope", "https://{group}/pages/", "--out", filepath.Join(out, "{group}"), "--max-urls", "30", "--report", report, input)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rep := readReport(t, report)
	if len(rep.Groups) != 5 || rep.Rejected.ByReason["out_of_scope"] != 5 || rep.URLs != 500 {
		t.Fatalf("groups %d, rejected %v, urls %d", len(rep.Groups), rep.Rejected.ByReason, rep.URLs)
	}
	// The last log line counts the groups: a grouped run has no one root.
	if !strings.Contains(stderr, "msg=done") || !strings.Contains(stderr, " groups=5") || strings.Contains(stderr, `root=""`) {
		t.Errorf("the last log line:\n%s", stderr)
	}
	// Every group's robots lines, a line each, nothing else.
	if lines := strings.Split(stdout, "\n"); len(lines) != len(rep.Submit)+1 || lines[len(lines)-1] != "" {
		t.Errorf("stdout has %d lines, want the report's %d robots lines:\n%s", len(lines)-1, len(rep.Submit), stdout)
	}
	for k, g := range rep.Groups {
		h := groupHosts[k]
		if g.Group != h || g.URLs != 100 || g.Rejected.ByReason["out_of_scope"] != 1 || g.PublicURL != "https://"+h+"/sitemaps/" || g.Name != "sitemap" ||
			g.Generation != 1 || g.Root != "https://"+h+"/sitemaps/sitemap.xml" {
			t.Errorf("group %+v", g)
		}
		folder := filepath.Join(out, h)
		set := xmltest.ReadSet(t, folder, "https://"+h+"/sitemaps/", "sitemap.xml", "sitemap-robots.txt")
		for _, s := range set.Shards {
			for _, u := range s.URLs {
				if !strings.HasPrefix(u.Loc, "https://"+h+"/pages/") {
					t.Errorf("%s lists %s", h, u.Loc)
				}
			}
		}
		if !strings.Contains(stdout, "Sitemap: https://"+h+"/sitemaps/sitemap") {
			t.Errorf("stdout lacks %s's robots lines:\n%s", h, stdout)
		}
		if want := strings.Join(set.Robots, "\n") + "\n"; !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %s's robots lines %q:\n%s", h, want, stdout)
		}
		if code, _, stderr := sitemapgen(t, "", "validate", "--public-url", "https://"+h+"/sitemaps/", "--scope", "https://"+h+"/pages/", folder); code != 0 {
			t.Errorf("validate %s: exit %d\n%s", h, code, stderr)
		}
	}
}

// TestGroupUsage: grouping flags that cannot work are usage errors, found
// before anything is read or written; among them --group-by host with a
// scope of one host, which would reject every other host's rows and still
// succeed.
func TestGroupUsage(t *testing.T) {
	input := inputtest.WriteFile(t, "in.csv", []byte("loc\nhttps://a.example.com/x\nhttps://b.example.com/y\n"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--public-url", "https://{group}/"}, "needs --group-by"},
		{[]string{"--public-url", base, "--default-group", "x"}, "need --group-by"},
		{[]string{"--public-url", base, "--group-by", "section", "--max-groups", "0"}, "--max-groups 0"},
		{[]string{"--public-url", base, "--group-by", "host"}, "holds no {group}"},
		{[]string{"--public-url", "https://{group}/", "--scope", base, "--group-by", "host"}, "holds no {group}"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append([]string{"generate", "--out", out}, c.args...), input)
		code, _, stderr := sitemapgen(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s", c.args, code, c.want, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%q: %s was made (%v)", c.args, out, err)
		}
	}

	// {group} in --out alone: every group's root would be one URL.
	parent := t.TempDir()
	code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "section", "--public-url", base,
		"--out", filepath.Join(parent, "{group}"), input)
	if code != 2 || !strings.Contains(stderr, "--public-url") {
		t.Errorf("{group} in --out alone: exit %d, want 2 naming --public-url\n%s", code, stderr)
	}
	if ents, _ := os.ReadDir(parent); len(ents) > 0 {
		t.Errorf("{group} in --out alone: %s holds %d files", parent, len(ents))
	}

	// {group} in --scope alone: every set in one host's folder lists its
	// own host's URLs (cross-submission), and no row is out of scope.
	out := filepath.Join(t.TempDir(), "out")
	report := filepath.Join(t.TempDir(), "report.json")
	code, _, stderr = sitemapgen(t, "", "generate", "--group-by", "host", "--public-url", base, "--scope", "https://{group}/",
		"--out", out, "--report", report, input)
	if rep := readReport(t, report); code != 0 || rep.URLs != 2 || len(rep.Groups) != 2 {
		t.Fatalf("scope per host: exit %d, %d URLs, %d groups\n%s", code, rep.URLs, len(rep.Groups), stderr)
	}
}

// TestGroupsS3FailMidPublish: groups beside one another on S3; a write
// refused at any point of the second night, the switch of the second
// group's root included, leaves the bucket and every root as they were.
func TestGroupsS3FailMidPublish(t *testing.T) {
	e := newS3Env(t)
	rows := func(night int) string {
		var b strings.Builder
		b.WriteString("loc,section\n")
		for i := range 600 {
			fmt.Fprintf(&b, "%s%c/%d-%d,%c\n", base, 'a'+i%3, i, night*(i%7), 'a'+i%3)
		}
		p := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The nights' times differ: every root and index changes.
	args := func(ep string, night int) []string {
		return e.args(ep, "--group-by", "section", "--max-urls", "50", "--index-fanout", "2", "--max-shrink", "100%",
			"--now", fmt.Sprintf("2026-11-%02dT02:00:00Z", 20+night), rows(night))
	}
	if code, _, stderr := sitemapgen(t, "", args(e.ep, 1)...); code != 0 {
		t.Fatalf("first night: exit %d\n%s", code, stderr)
	}
	before := s3test.Keys(t, e.c, e.bucket, "")
	roots := map[string][]byte{}
	for _, g := range []string{"a", "b", "c"} {
		roots[g] = s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap-"+g+".xml").Data
	}
	putOf := func(name string) s3test.Fault {
		return func(r *http.Request, n int) (int, string) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+name) {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		}
	}
	for _, tc := range []struct {
		name  string
		fault s3test.Fault
	}{
		{"a shard", func(r *http.Request, n int) (int, string) {
			if s3test.IsWrite(r) && strings.Contains(r.URL.Path, "/sitemap-b-0000") {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		}},
		{"an index", putOf("sitemap-c-index-0002.xml")},
		{"the second manifest", putOf("sitemap-b.manifest.json")},
		{"the last root", putOf("sitemap-c.xml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s3test.NewProxy(t, e.ep, tc.fault)
			code, _, stderr := sitemapgen(t, "", args(p.URL, 2)...)
			if code != 1 || p.Injected.Load() == 0 {
				t.Fatalf("exit %d, %d faults injected\n%s", code, p.Injected.Load(), stderr)
			}
			if after := s3test.Keys(t, e.c, e.bucket, ""); !slices.Equal(after, before) {
				t.Errorf("failed run left the bucket changed:\nbefore %q\nafter  %q", before, after)
			}
			for g, root := range roots {
				if got := s3test.Get(t, e.c, e.bucket, e.prefix+"sitemap-"+g+".xml").Data; !bytes.Equal(got, root) {
					t.Errorf("group %s: the root is not the previous one", g)
				}
			}
		})
	}
	if code, _, stderr := sitemapgen(t, "", args(e.ep, 2)...); code != 0 {
		t.Fatalf("next run: exit %d\n%s", code, stderr)
	}
	dir, _ := e.download(t)
	for _, g := range []string{"a", "b", "c"} {
		if code, _, stderr := sitemapgen(t, "", "validate", "--name", "sitemap-"+g, "--public-url", base, dir); code != 0 {
			t.Errorf("validate %s: exit %d\n%s", g, code, stderr)
		}
	}
}

// TestValidateGroupsFolder: validate of a folder holding the sets of a
// grouped run checks each; a group's files are not another's orphans, an
// unlisted index of one group is that group's.
func TestValidateGroupsFolder(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("loc,section\n")
	for i := range 300 {
		fmt.Fprintf(&in, "%s%d,%s\n", base, i, []string{"a", "a-b", "b"}[i%3]) // set "sitemap-a" beside "sitemap-a-b"
	}
	input := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "section", "--public-url", base, "--out", out,
		"--max-urls", "10", "--index-fanout", "3", input); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := sitemapgen(t, "", "validate", out)
	if code != 0 || strings.Count(stderr, "OK ") != 3 {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	stray, err := os.ReadFile(filepath.Join(out, "sitemap-b-index-0001.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "sitemap-b-index-0099.xml"), stray, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = sitemapgen(t, "", "validate", out)
	if code != 1 || strings.Count(stdout, "orphan_file") != 1 || !strings.Contains(stdout, "sitemap-b-index-0099.xml") || strings.Count(stderr, "OK ") != 2 {
		t.Fatalf("validate with an orphan: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestGroupVanishedOwnFolder: with {group} in --out each group has a
// destination of its own; a group published there that the input no
// longer has is still a shrink of 100%, refused without --force (nothing
// published), and with it left as it was and reported. In folders and on
// S3.
func TestGroupVanishedOwnFolder(t *testing.T) {
	t.Run("folder", func(t *testing.T) {
		sites := filepath.Join(t.TempDir(), "sites")
		snap := func() map[string][]byte {
			m := map[string][]byte{}
			for _, h := range []string{"a.example.com", "b.example.com", "c.example.com"} {
				for n, b := range xmltest.Snapshot(t, filepath.Join(sites, h, "sitemaps")) {
					m[h+"/"+n] = b
				}
			}
			return m
		}
		// Not groups: a folder with no set, and one no group could be named.
		mkdirs := func() {
			for _, d := range []string{"d.example.com/sitemaps", "Not_A_Group/sitemaps"} {
				if err := os.MkdirAll(filepath.Join(sites, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		testVanishedOwn(t, []string{"--out", filepath.Join(sites, "{group}", "sitemaps")}, snap, mkdirs)
	})
	t.Run("s3", func(t *testing.T) {
		e := newS3Env(t)
		snap := func() map[string][]byte {
			m := map[string][]byte{}
			for _, k := range s3test.Keys(t, e.c, e.bucket, "") {
				m[k] = s3test.Get(t, e.c, e.bucket, k).Data
			}
			return m
		}
		mkdirs := func() { s3test.Put(t, e.c, e.bucket, e.prefix+"d.example.com/sitemaps/other.xml", []byte("x")) }
		testVanishedOwn(t, []string{"--out", "s3://" + e.bucket + "/" + e.prefix + "{group}/sitemaps", "--s3-endpoint", e.ep, "--s3-path-style"}, snap, mkdirs)
	})
}

func testVanishedOwn(t *testing.T, out []string, snap func() map[string][]byte, notGroups func()) {
	dir := t.TempDir()
	in, report := filepath.Join(dir, "in.csv"), filepath.Join(dir, "report.json")
	write := func(hosts ...string) {
		var b strings.Builder
		b.WriteString("loc,lastmod\n")
		for _, h := range hosts {
			for i := range 20 {
				fmt.Fprintf(&b, "https://%s/pages/%d,2024-05-01\n", h, i)
			}
		}
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen := func(extra ...string) (int, string) {
		args := append([]string{"generate", "--group-by", "host", "--public-url", "https://{group}/sitemaps/",
			"--scope", "https://{group}/pages/", "--report", report}, out...)
		code, _, stderr := sitemapgen(t, "", append(append(args, extra...), in)...)
		return code, stderr
	}
	write("a.example.com", "b.example.com", "c.example.com")
	if code, stderr := gen(); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	notGroups()
	before := snap()
	write("a.example.com", "b.example.com")
	code, stderr := gen()
	if code != 1 || !strings.Contains(stderr, `group "c.example.com" is published but has no row in the input`) || strings.Contains(stderr, "d.example.com") {
		t.Fatalf("night 2 without c: exit %d, want 1 naming c.example.com alone\n%s", code, stderr)
	}
	if after := snap(); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Errorf("a refused run changed the destinations: %d files before, %d after", len(before), len(after))
	}
	if code, stderr := gen("--force"); code != 0 {
		t.Fatalf("night 2 forced: exit %d\n%s", code, stderr)
	}
	rep := readReport(t, report)
	var vanished []string
	for _, g := range rep.Groups {
		if g.Vanished {
			vanished = append(vanished, g.Group)
			// Where its set is left, to find it by.
			if g.Name != "sitemap" || g.PublicURL != "https://"+g.Group+"/sitemaps/" || !strings.Contains(g.Destination, g.Group) {
				t.Errorf("vanished group %+v: want its name, public URL and destination", g)
			}
		}
	}
	if !slices.Equal(vanished, []string{"c.example.com"}) {
		t.Errorf("vanished groups %q; want c.example.com", vanished)
	}
	after := snap()
	for k, b := range before {
		if strings.Contains(k, "c.example.com/") && !bytes.Equal(after[k], b) {
			t.Errorf("%s changed in a forced run without c.example.com", k)
		}
	}
}

// TestVanishedGroupsSegment: with {group} inside a path segment, only the
// folders that segment's text around {group} matches are groups'.
func TestVanishedGroupsSegment(t *testing.T) {
	dir := t.TempDir()
	for folder, manifest := range map[string]bool{"site-a.x": true, "site-b.x": true, "other-c.x": true, "site-d.x": false, "site-e.y": true} {
		p := filepath.Join(dir, folder, "sm")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if manifest {
			published(t, p)
		}
	}
	// A group's folder may be a link to it; a folder the run may not
	// read is someone else's, not a reason to fail.
	target := filepath.Join(t.TempDir(), "f")
	if err := os.MkdirAll(filepath.Join(target, "sm"), 0o755); err != nil {
		t.Fatal(err)
	}
	published(t, filepath.Join(target, "sm"))
	if err := os.Symlink(target, filepath.Join(dir, "site-f.x")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "site-g.x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "site-g.x", "sm"), nil, 0o644); err != nil { // a file: ENOTDIR below it
		t.Fatal(err)
	}
	f := &generateFlags{out: filepath.Join(dir, "site-{group}.x", "sm")}
	gone, err := f.vanishedGroups(&pipeline.Config{Name: "sitemap"}, slog.New(slog.DiscardHandler))(context.Background(), []string{"a"})
	if err != nil || !slices.Equal(gone, []string{"b", "f"}) {
		t.Fatalf("vanished %q, %v; want [b f]", gone, err)
	}
}

// published writes the root and manifest of a set named sitemap in dir.
func published(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{"sitemap.xml", "sitemap.manifest.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupsS3StepsAtOnce: the groups' publish steps on S3 (a file of a
// few kilobytes each) run many at once, more than the 8 shard uploads,
// over connections the client keeps: a proxy that makes each request take
// 20 ms sees more than 8 PUTs in flight and no more connections than
// requests were ever in flight at once, plus a few.
func TestGroupsS3StepsAtOnce(t *testing.T) {
	e := newS3Env(t)
	const groups = 60
	var in strings.Builder
	in.WriteString("loc,section\n")
	for i := range groups * 4 {
		fmt.Fprintf(&in, "%ss%d/%d,s%d\n", base, i%groups, i, i%groups)
	}
	p := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(p, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var inFlight, most, conns int
	rp := s3test.ReverseProxy(t, e.ep)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		rp.ServeHTTP(w, r)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	if code, _, stderr := sitemapgen(t, "", e.args(srv.URL, "--group-by", "section", p)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if most <= 8 {
		t.Errorf("at most %d requests in flight; want more than the 8 shard uploads", most)
	}
	if conns > most+8 {
		t.Errorf("%d connections for at most %d requests in flight: connections were not kept", conns, most)
	}
	t.Logf("%d groups: at most %d requests in flight, %d connections", groups, most, conns)
}

// TestGroupsS3SmallShardsAtOnce: on S3 a long tail of groups' sitemaps (a
// few kilobytes each, one round trip apiece) are uploaded many at once
// (sink.S3SmallConnections) beside the S3Connections of the large ones,
// with the groups in one prefix or each in its own ({group} in --out);
// an explicit --uploads bounds them all.
func TestGroupsS3SmallShardsAtOnce(t *testing.T) {
	const groups = 80
	var in strings.Builder
	in.WriteString("loc,section\n")
	for i := range groups * 4 {
		fmt.Fprintf(&in, "%ss%d/%d,s%d\n", base, i%groups, i, i%groups)
	}
	p := inputtest.WriteFile(t, "in.csv", []byte(in.String()))
	for _, c := range []struct {
		name        string
		out         func(e *s3env) []string
		uploads     []string
		least, most int // of the shards' PUTs in flight
	}{
		{"one prefix", func(e *s3env) []string { return nil }, nil, sink.S3Connections + 1, sink.S3Connections + sink.S3SmallConnections},
		{"a prefix a group", func(e *s3env) []string {
			return []string{"--out", "s3://" + e.bucket + "/" + e.prefix + "{group}/sm", "--public-url", base + "{group}/"}
		}, nil, sink.S3Connections + 1, sink.S3Connections + sink.S3SmallConnections},
		{"--uploads 3", func(e *s3env) []string { return nil }, []string{"--uploads", "3"}, 1, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newS3Env(t)
			var mu sync.Mutex
			var inFlight, most, shards int
			rp := s3test.ReverseProxy(t, e.ep)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				shard := r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, ".xml.gz")
				if shard {
					mu.Lock()
					inFlight++
					shards++
					most = max(most, inFlight)
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
				}
				rp.ServeHTTP(w, r)
				if shard {
					mu.Lock()
					inFlight--
					mu.Unlock()
				}
			}))
			t.Cleanup(srv.Close)
			args := append(append(e.args(srv.URL, "--group-by", "section"), c.out(e)...), c.uploads...)
			if code, _, stderr := sitemapgen(t, "", append(args, p)...); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			if shards != groups {
				t.Fatalf("%d shards put, want %d", shards, groups)
			}
			want := e.prefix + "sitemap-s7-000001-" // the groups share the prefix
			if c.name == "a prefix a group" {
				want = e.prefix + "s7/sm/sitemap-000001-"
			}
			if keys := s3test.Keys(t, e.c, e.bucket, ""); !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, want) }) {
				t.Fatalf("no shard %s*: %v", want, keys[:min(len(keys), 8)])
			}
			if most < c.least || most > c.most {
				t.Errorf("at most %d shards' PUTs in flight; want %d..%d", most, c.least, c.most)
			}
			t.Logf("%d groups: at most %d shards' PUTs in flight", groups, most)
		})
	}
}

// TestGroupsAndASetAloneExclude: a grouped run and a run of one group's
// set alone (--name NAME-GROUP) write the same files, so they never
// overlap: whichever holds its lock first, the other exits 1 and publishes
// nothing. A run of set NAME alone (no groups) does not shut out a run of
// NAME-GROUP. In a folder and on S3.
func TestGroupsAndASetAloneExclude(t *testing.T) {
	var all, b strings.Builder
	all.WriteString("loc,section\n")
	b.WriteString("loc,section\n")
	for i := range 60 {
		fmt.Fprintf(&all, "%s%c/%d,%c\n", base, 'a'+i%2, i, 'a'+i%2)
		if i%2 == 1 {
			fmt.Fprintf(&b, "%sb/%d-alone,b\n", base, i)
		}
	}
	in := inputtest.WriteFile(t, "in.csv", []byte(all.String()))
	inB := inputtest.WriteFile(t, "b.csv", []byte(b.String()))
	for _, where := range []string{"folder", "s3"} {
		t.Run(where, func(t *testing.T) {
			ctx := context.Background()
			var store interface {
				sink.Store
				sink.Locker
			}
			var out []string
			var files func() map[string]string // name: content, the locks left out
			if where == "folder" {
				folder := filepath.Join(t.TempDir(), "out")
				l, err := sink.NewLocal(folder)
				if err != nil {
					t.Fatal(err)
				}
				store, out = l, []string{"--out", folder}
				files = func() map[string]string {
					m := map[string]string{}
					for n, b := range xmltest.Snapshot(t, folder) {
						if !strings.HasSuffix(n, ".lock") {
							m[n] = string(b)
						}
					}
					return m
				}
			} else {
				e := newS3Env(t)
				s, err := sink.NewS3(ctx, sink.S3Options{Bucket: e.bucket, Prefix: e.prefix, Endpoint: e.ep, PathStyle: true})
				if err != nil {
					t.Fatal(err)
				}
				store, out = s, []string{"--out", "s3://" + e.bucket + "/" + e.prefix, "--s3-endpoint", e.ep, "--s3-path-style"}
				files = func() map[string]string {
					m := map[string]string{}
					for _, k := range s3test.Keys(t, e.c, e.bucket, e.prefix) {
						if !strings.HasSuffix(k, ".lock") {
							m[k] = string(s3test.Get(t, e.c, e.bucket, k).Data)
						}
					}
					return m
				}
			}
			run := func(extra ...string) (int, string) {
				args := append(append([]string{"generate", "--public-url", base, "--now", "2026-11-20T02:00:00Z"}, out...), extra...)
				code, _, stderr := sitemapgen(t, "", args...)
				return code, stderr
			}
			hold := func(name string, groups bool) sink.Lock {
				l, err := store.Lock(ctx, name, sink.Holder{Owner: "the other run", Groups: groups}, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}

			// A run of sitemap-b alone holds its lock: the grouped run is refused.
			lk := hold(".sitemap-b.lock", false)
			if code, stderr := run("--group-by", "section", in); code != 1 || !strings.Contains(stderr, "another run holds the destination") ||
				!strings.Contains(stderr, "set sitemap-b alone") || !strings.Contains(stderr, "the other run") {
				t.Fatalf("grouped run beside a run of sitemap-b: exit %d\n%s", code, stderr)
			}
			if f := files(); len(f) != 0 {
				t.Fatalf("the refused grouped run left %v", slices.Sorted(maps.Keys(f)))
			}
			lk.Release(ctx)
			if code, stderr := run("--group-by", "section", in); code != 0 {
				t.Fatalf("grouped run: exit %d\n%s", code, stderr)
			}
			published := files()

			// A grouped run holds the destination: a run of sitemap-b alone is refused.
			lk = hold(".sitemap.lock", true)
			if code, stderr := run("--name", "sitemap-b", inB); code != 1 || !strings.Contains(stderr, "another run holds the destination") ||
				!strings.Contains(stderr, "group b of set sitemap") || !strings.Contains(stderr, "publishing groups") {
				t.Fatalf("run of sitemap-b beside a grouped run: exit %d\n%s", code, stderr)
			}
			if f := files(); !maps.Equal(f, published) {
				t.Fatalf("the refused run of sitemap-b changed the destination")
			}
			lk.Release(ctx)

			// A run of set sitemap alone holds its lock: it publishes no
			// group, and sitemap-b's run goes ahead.
			lk = hold(".sitemap.lock", false)
			defer lk.Release(ctx)
			if code, stderr := run("--name", "sitemap-b", inB); code != 0 {
				t.Fatalf("run of sitemap-b beside a run of sitemap: exit %d\n%s", code, stderr)
			}
		})
	}
}

// TestGroupByHostRejectReasons: by host, a loc that is no URL is rejected
// for what is wrong with it, not as a row of no group; a path has no host
// (group_empty); "//host/…" is that host's, in its scope's scheme.
func TestGroupByHostRejectReasons(t *testing.T) {
	dir := t.TempDir()
	rows := []struct{ loc, reason string }{
		{"https://a.example.com/p/1", ""},
		{"//a.example.com/p/2", ""},
		{"ftp://a.example.com/x", "not_http_url"},
		{"https://" + strings.Repeat("a", 70) + ".example.com/x", "bad_host"},
		{"https://a.example.com:99999/x", "bad_port"},
		{"/relative/path", "group_empty"},
		{"https://user:pw@a.example.com/x", "userinfo"},
		{"\"https://a.example.com/\x01\"", "control_character"},
		{"\"  \"", "empty_loc"},
	}
	var in strings.Builder
	in.WriteString("loc\n")
	for _, r := range rows {
		in.WriteString(r.loc + "\n")
	}
	input := inputtest.WriteFile(t, "in.csv", []byte(in.String()))
	rejects := filepath.Join(dir, "rejects.csv")
	report := filepath.Join(dir, "report.json")
	code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "host", "--public-url", "https://{group}/",
		"--out", filepath.Join(dir, "out", "{group}"), "--rejects", rejects, "--report", report, input)
	if rep := readReport(t, report); code != 0 || len(rep.Groups) != 1 || rep.Groups[0].URLs != 2 {
		t.Fatalf("exit %d, report %+v\n%s", code, rep.Groups, stderr)
	}
	b, err := os.ReadFile(rejects)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // row number: reason
	for _, r := range recs[1:] {
		got[r[1]] = r[2]
	}
	for i, r := range rows {
		if want := r.reason; got[strconv.Itoa(i+2)] != want {
			t.Errorf("row %d %q: rejected as %q, want %q", i+2, r.loc, got[strconv.Itoa(i+2)], want)
		}
	}
}

// TestNeverPublishedGroup: a new group's first publish that died before
// its root (after its manifest, or before it) left files that nothing
// lists and no crawler was given. A later night without that group is not
// refused as if the group had vanished: it deletes those files (a dry run
// lists them), in a shared folder and in a folder of the group's own,
// which goes with them, as does the folder a refused run made for a new
// group: "validate out/*/" passes after.
func TestNeverPublishedGroup(t *testing.T) {
	dir := t.TempDir()
	input, report := filepath.Join(dir, "in.csv"), filepath.Join(dir, "report.json")
	write := func(perSection map[string]int) {
		var b strings.Builder
		b.WriteString("loc,section\n")
		for _, sec := range slices.Sorted(maps.Keys(perSection)) {
			for i := range perSection[sec] {
				fmt.Fprintf(&b, "%s%s/%d,%s\n", base, sec, i, sec)
			}
		}
		if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen := func(out string, extra ...string) (int, string) {
		args := append([]string{"generate", "--group-by", "section", "--public-url", base, "--now", "2026-01-02T00:00:00Z",
			"--report", report, "--out", out, "--max-urls", "10"}, extra...)
		code, _, stderr := sitemapgen(t, "", append(args, input)...)
		return code, stderr
	}
	remove := func(dir string, names ...string) {
		for _, n := range names {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	withPrefix := func(dir, prefix string) []string {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				names = append(names, e.Name())
			}
		}
		return names
	}
	nights := map[string]int{"a": 30, "b": 20}
	withNew := map[string]int{"a": 30, "b": 20, "newsec": 25}

	t.Run("shared", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		write(withNew)
		if code, stderr := gen(out); code != 0 {
			t.Fatalf("night 1: exit %d\n%s", code, stderr)
		}
		// Killed between newsec's manifest and its root (its first
		// publish: night 1 stands for the nights before it)...
		remove(out, "sitemap-newsec.xml", "sitemap-newsec-robots.txt")
		// ... and another new group killed before its manifest.
		shards := withPrefix(out, "sitemap-newsec-0")
		if len(shards) != 3 {
			t.Fatalf("newsec's shards %q; want 3", shards)
		}
		data, err := os.ReadFile(filepath.Join(out, shards[0]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "sitemap-other-000001-0123456789.xml.gz"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		left := append(withPrefix(out, "sitemap-newsec"), "sitemap-other-000001-0123456789.xml.gz")
		// A run refused (group b, published, has vanished) deletes nothing.
		write(map[string]int{"a": 30})
		if code, stderr := gen(out); code != 1 || !strings.Contains(stderr, `group "b" is published`) {
			t.Fatalf("night without b: exit %d, want 1\n%s", code, stderr)
		}
		if got := len(withPrefix(out, "sitemap-newsec")); got != 4 {
			t.Errorf("a refused run deleted files: %d of newsec's 4 left", got)
		}
		write(nights)
		if code, stderr := gen(out, "--dry-run"); code != 0 {
			t.Fatalf("dry run: exit %d\n%s", code, stderr)
		}
		if rep := readReport(t, report); rep.Plan == nil || !subset(left, rep.Plan.Delete) {
			t.Errorf("dry run's plan deletes %v; want %q among them", rep.Plan, left)
		}
		if got := len(withPrefix(out, "sitemap-newsec")); got != 4 {
			t.Errorf("a dry run deleted files: %d of newsec's 4 left", got)
		}
		code, stderr := gen(out)
		if code != 0 || !strings.Contains(stderr, "never published") {
			t.Fatalf("night 2 without newsec: exit %d, want 0 and a warning\n%s", code, stderr)
		}
		if got := append(withPrefix(out, "sitemap-newsec"), withPrefix(out, "sitemap-other")...); len(got) > 0 {
			t.Errorf("left after night 2: %q", got)
		}
		if rep := readReport(t, report); !subset(left, rep.Deleted) {
			t.Errorf("report deleted %q; want %q among them", rep.Deleted, left)
		}
		if code, stdout, stderr := sitemapgen(t, "", "validate", out); code != 0 || strings.Contains(stderr, "warning") {
			t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
		}
	})

	t.Run("in the input", func(t *testing.T) {
		// A group whose first publish died is not held to --max-shrink
		// against the manifest it left: that set was never live.
		out := filepath.Join(t.TempDir(), "out")
		withRejected := func(rows map[string]int, group string) {
			write(rows)
			f, err := os.OpenFile(input, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("https://elsewhere.example/x," + group + "\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		write(map[string]int{"a": 30, "b": 20, "newsec": 25, "new2": 10})
		if code, stderr := gen(out); code != 0 {
			t.Fatalf("night 1: exit %d\n%s", code, stderr)
		}
		remove(out, "sitemap-newsec.xml", "sitemap-newsec-robots.txt", "sitemap-new2.xml", "sitemap-new2-robots.txt")
		// newsec with 2 of its 25 rows; new2's one row rejected.
		withRejected(map[string]int{"a": 30, "b": 20, "newsec": 2}, "new2")
		if code, stderr := gen(out); code != 0 {
			t.Fatalf("night 2: exit %d, want 0\n%s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "sitemap-newsec.xml")); err != nil {
			t.Errorf("newsec not published: %v", err)
		}
		// A root lost after the set was live (newsec's generation 2) is
		// no first publish's: the shrink is refused.
		remove(out, "sitemap-newsec.xml", "sitemap-newsec-robots.txt")
		withRejected(map[string]int{"a": 30, "b": 20}, "newsec")
		if code, stderr := gen(out); code != 1 || !strings.Contains(stderr, `group "newsec": URL count fell too far`) {
			t.Fatalf("night 3, newsec's root lost: exit %d, want 1 for the shrink\n%s", code, stderr)
		}
	})

	t.Run("own folder", func(t *testing.T) {
		sites := t.TempDir()
		out := filepath.Join(sites, "{group}")
		write(withNew)
		if code, stderr := gen(out, "--public-url", base+"{group}/"); code != 0 {
			t.Fatalf("night 1: exit %d\n%s", code, stderr)
		}
		// Killed while newsec's shards were uploaded: its lock's file
		// stays, the flock dies with the run.
		newsec := filepath.Join(sites, "newsec")
		remove(newsec, "sitemap.xml", "sitemap-robots.txt", "sitemap.manifest.json")
		if err := os.WriteFile(filepath.Join(newsec, ".sitemap.lock"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// A group's folder that is a link, to something the run did not
		// make (a backup, a copy): its files stay, with a warning. A link
		// to a group of the run is that group's: not a group gone.
		linked := filepath.Join(t.TempDir(), "linked")
		if err := os.MkdirAll(linked, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(linked, "sitemap-000001-0123456789.xml.gz"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(linked, filepath.Join(sites, "linked")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(sites, "a"), filepath.Join(sites, "alias")); err != nil {
			t.Fatal(err)
		}
		write(nights)
		code, stderr := gen(out, "--public-url", base+"{group}/", "--dry-run")
		if code != 0 || !strings.Contains(stderr, "would delete") {
			t.Fatalf("dry run: exit %d, want 0 and what it would delete\n%s", code, stderr)
		}
		if ents, err := os.ReadDir(newsec); err != nil || len(ents) != 4 { // 3 sitemaps, the lock's file
			t.Fatalf("a dry run changed newsec's folder: %d files, %v", len(ents), err)
		}
		code, stderr = gen(out, "--public-url", base+"{group}/")
		if code != 0 || !strings.Contains(stderr, "never published") || !strings.Contains(stderr, "is a link") {
			t.Fatalf("night 2 without newsec: exit %d, want 0 and a warning\n%s", code, stderr)
		}
		if _, err := os.Stat(newsec); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("newsec's folder after night 2: %v; want it gone", err)
		}
		if ents, err := os.ReadDir(filepath.Join(sites, "linked")); err != nil || len(ents) != 1 {
			t.Errorf("the linked group's folder: %d files, %v; want its file left", len(ents), err)
		}
		for _, l := range []string{"linked", "alias"} {
			if err := os.Remove(filepath.Join(sites, l)); err != nil {
				t.Fatal(err)
			}
		}
		// A run refused (a 90% shrink of a) after it made a new group's
		// folder leaves no folder behind.
		write(map[string]int{"a": 3, "b": 20, "new2": 5})
		if code, stderr := gen(out, "--public-url", base+"{group}/"); code != 1 || !strings.Contains(stderr, "fell too far") {
			t.Fatalf("night 3: exit %d, want 1 for the shrink\n%s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(sites, "new2")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the refused run's new folder: %v; want it gone", err)
		}
		ents, err := os.ReadDir(sites)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if code, stdout, stderr := sitemapgen(t, "", "validate", filepath.Join(sites, e.Name())); code != 0 {
				t.Errorf("validate %s: exit %d\n%s%s", e.Name(), code, stdout, stderr)
			}
		}
		if len(ents) != 2 {
			t.Errorf("%d folders; want a and b", len(ents))
		}
	})
}

// subset reports whether every name of want is in have.
func subset(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestNeverPublishedGroupS3: in a shared S3 prefix, a never-published
// group's files are deleted under that set's own lock: a dead run's lock
// (expired) is taken over and removed with them. A live one (a run of that
// group alone, perhaps only paused) refuses the grouped run, which then
// deletes nothing.
func TestNeverPublishedGroupS3(t *testing.T) {
	e := newS3Env(t)
	dir := t.TempDir()
	input := filepath.Join(dir, "in.csv")
	write := func(sections ...string) {
		var b strings.Builder
		b.WriteString("loc,section\n")
		for _, sec := range sections {
			for i := range 20 {
				fmt.Fprintf(&b, "%s%s/%d,%s\n", base, sec, i, sec)
			}
		}
		if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen := func() (int, string) {
		code, _, stderr := sitemapgen(t, "", "generate", "--group-by", "section", "--public-url", base, "--max-urls", "10",
			"--out", "s3://"+e.bucket+"/"+e.prefix, "--s3-endpoint", e.ep, "--s3-path-style", input)
		return code, stderr
	}
	keys := func(prefix string) []string { return s3test.Keys(t, e.c, e.bucket, e.prefix+prefix) }
	write("a", "g", "h")
	if code, stderr := gen(); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	// g's and h's first publishes died before their roots: g's run left
	// its lock (expired); a run of h alone holds its own.
	for _, g := range []string{"g", "h"} {
		for _, k := range []string{"sitemap-" + g + ".xml", "sitemap-" + g + "-robots.txt"} {
			if _, err := e.c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(e.prefix + k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s3test.Put(t, e.c, e.bucket, e.prefix+".sitemap-g.lock", []byte(deadLock))
	s, err := sink.NewS3(context.Background(), sink.S3Options{Bucket: e.bucket, Prefix: e.prefix, Endpoint: e.ep, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.Lock(context.Background(), ".sitemap-h.lock", sink.Holder{Owner: "a run of h alone"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	before := keys("")
	write("a")
	if code, stderr := gen(); code != 1 || !strings.Contains(stderr, ".sitemap-h.lock") {
		t.Fatalf("night 2 beside a live run of h: exit %d, want 1 naming its lock\n%s", code, stderr)
	}
	if after := keys(""); !slices.Equal(before, after) {
		t.Errorf("a refused run changed the prefix: %d keys before, %d after", len(before), len(after))
	}
	if err := live.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, stderr := gen()
	if code != 0 || strings.Count(stderr, "deleted the files of a set never published") != 2 {
		t.Fatalf("night 3 without g and h: exit %d, want 0 and g's and h's files deleted\n%s", code, stderr)
	}
	if left := append(append(keys("sitemap-g"), keys(".sitemap-g")...), append(keys("sitemap-h"), keys(".sitemap-h")...)...); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
}

// TestShrinkAgainstLiveGeneration: a run killed between its manifest and
// its root leaves the manifest ahead of what crawlers see; the next run is
// held to --max-shrink against the live generation too, not only against
// the manifest's that never went live (1000 live, 600 in the manifest, 310
// now: -69% of what is served).
func TestShrinkAgainstLiveGeneration(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	gen := func(n int, now string) (int, string) {
		code, _, stderr := sitemapgen(t, "", "generate", "--public-url", base, "--out", out, "--max-urls", "100", "--now", now,
			rowsCSV(t, n, nil))
		return code, stderr
	}
	if code, stderr := gen(1000, "2026-01-01T00:00:00Z"); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	live, err := os.ReadFile(filepath.Join(out, "sitemap.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if code, stderr := gen(600, "2026-01-02T00:00:00Z"); code != 0 {
		t.Fatalf("night 2: exit %d\n%s", code, stderr)
	}
	// Night 2 died after its manifest: night 1's root is the live one
	// (its 10 sitemaps are kept for the grace period).
	if err := os.WriteFile(filepath.Join(out, "sitemap.xml"), live, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := gen(310, "2026-01-03T00:00:00Z")
	if code != 1 || !strings.Contains(stderr, "310 URLs, the published set (generation 1) has 1000") {
		t.Fatalf("night 3: exit %d; want 1, refused against the live generation\n%s", code, stderr)
	}
	if code, stderr := gen(600, "2026-01-03T00:00:00Z"); code != 0 {
		t.Fatalf("night 3 with 600 (-40%% of the live set): exit %d\n%s", code, stderr)
	}
}
