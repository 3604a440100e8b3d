package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

const testBase = "https://example.com/site/"

func mustScope(t testing.TB, s string) *encode.Scope {
	t.Helper()
	sc, err := encode.ParseScope(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// randomInput writes rows of random length (some escaping, some with a
// lastmod, some out of scope, some too long for a shard with maxEntry room)
// and returns the file and the locs that must be published, in order, as they
// will be written (XML-escaped).
func randomInput(t *testing.T, rng *rand.Rand, rows, maxLoc, maxEntry int) (path string, want []string) {
	var buf bytes.Buffer
	buf.WriteString("loc,lastmod\n")
	for i := range rows {
		var loc strings.Builder
		loc.WriteString(testBase)
		fmt.Fprintf(&loc, "r%d", i)
		n := rng.IntN(maxLoc)
		for range n {
			loc.WriteByte("abcdefghij/-&"[rng.IntN(13)])
		}
		out := strings.ReplaceAll(loc.String(), "&", "&amp;")
		size := len("<url><loc></loc></url>\n") + len(out)
		switch rng.IntN(20) {
		case 0: // out of scope: rejected
			fmt.Fprintf(&buf, "https://example.com/other/%d\n", i)
			continue
		case 1: // a lastmod adds to the entry's size
			fmt.Fprintf(&buf, "%s,2024-01-%02dT10:00Z\n", loc.String(), 1+rng.IntN(28))
			size += len("<lastmod>2024-01-01T10:00:00Z</lastmod>")
		default:
			fmt.Fprintf(&buf, "%s,\n", loc.String())
		}
		if loc.Len() < 2048 && size <= maxEntry {
			want = append(want, out)
		}
	}
	path = filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// entries splits a shard's bytes into its entry lines.
func entries(t *testing.T, raw []byte) [][]byte {
	body, ok := bytes.CutPrefix(raw, []byte(shard.Header))
	if !ok {
		t.Fatalf("shard does not start with the header")
	}
	body, ok = bytes.CutSuffix(body, []byte(shard.Footer))
	if !ok {
		t.Fatalf("shard does not end with the footer")
	}
	return bytes.SplitAfter(body, []byte("\n"))[:bytes.Count(body, []byte("\n"))]
}

// TestPropertyLimitsTightOrderNesting checks invariants 1–4 over random entry
// sizes and small limits: every shard within both limits, closed only when its
// next entry would not fit, every accepted row exactly once in input order,
// every index within the fanout, every shard listed once, robots lines naming
// exactly the indexes that list shards.
func TestPropertyLimitsTightOrderNesting(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 42))
		maxBytes := 4096 + rng.IntN(16000)
		maxURLs := 1 + rng.IntN(60)
		fanout := 2 + rng.IntN(4)
		rows := 50 + rng.IntN(1500)
		maxLoc := []int{40, 400, 2100}[rng.IntN(3)]
		t.Run(fmt.Sprintf("seed%d_bytes%d_urls%d_fanout%d_rows%d_loc%d", seed, maxBytes, maxURLs, fanout, rows, maxLoc), func(t *testing.T) {
			maxEntry := maxBytes - len(shard.Header) - len(shard.Footer)
			in, want := randomInput(t, rng, rows, maxLoc, maxEntry)
			dir := t.TempDir()
			snk, err := sink.NewLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Inputs: []string{in}, PublicURL: mustScope(t, testBase), Sink: snk, Name: "sm",
				MaxURLs: maxURLs, MaxBytes: maxBytes, Fanout: fanout, Workers: 1 + rng.IntN(4), GzipLevel: 1}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			set := xmltest.ReadSet(t, dir, testBase, "sm.xml", "sm-robots.txt")

			var got []string
			for i, s := range set.Shards {
				if len(s.Raw) > maxBytes || len(s.URLs) > maxURLs || len(s.URLs) == 0 {
					t.Fatalf("%s: %d bytes, %d URLs; limits %d, %d", s.Name, len(s.Raw), len(s.URLs), maxBytes, maxURLs)
				}
				es := entries(t, s.Raw)
				if len(es) != len(s.URLs) {
					t.Fatalf("%s: %d lines, %d <url>s", s.Name, len(es), len(s.URLs))
				}
				if i+1 < len(set.Shards) {
					next := entries(t, set.Shards[i+1].Raw)[0]
					if len(s.URLs) < maxURLs && len(s.Raw)+len(next) <= maxBytes {
						t.Fatalf("%s closed at %d bytes, %d URLs, but the next entry (%d bytes) fits", s.Name, len(s.Raw), len(s.URLs), len(next))
					}
				}
				for _, e := range es {
					_, after, _ := bytes.Cut(e, []byte("<loc>"))
					loc, _, _ := bytes.Cut(after, []byte("</loc>"))
					got = append(got, string(loc))
				}
			}
			if int64(len(got)) != rep.URLs || rep.Rows != int64(rows) || rep.Rows != rep.URLs+rep.Rejected.Total {
				t.Fatalf("accounting: %d published, report %+v", len(got), rep)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("published %d URLs, want %d: not exactly the accepted rows in input order", len(got), len(want))
			}

			direct := map[string]bool{}
			depth := -1
			for _, ix := range set.Indexes {
				shards := 0
				for _, e := range ix.Entries {
					if strings.HasSuffix(e.Loc, ".xml.gz") {
						shards++
					}
				}
				if shards != 0 && shards != len(ix.Entries) {
					t.Fatalf("%s mixes sitemaps and indexes", ix.Name)
				}
				if shards > 0 {
					if depth >= 0 && ix.Depth != depth {
						t.Fatalf("sitemaps at depths %d and %d: the tree is not balanced", depth, ix.Depth)
					}
					depth = ix.Depth
				}
				if len(ix.Entries) > fanout || len(ix.Entries) == 0 {
					t.Fatalf("%s lists %d entries, fanout %d", ix.Name, len(ix.Entries), fanout)
				}
				if strings.HasSuffix(ix.Entries[0].Loc, ".xml.gz") {
					direct[testBase+ix.Name] = true
				}
			}
			if len(set.Shards) <= fanout && len(set.Indexes) != 1 {
				t.Fatalf("%d shards, fanout %d: want only the root, got %d indexes", len(set.Shards), fanout, len(set.Indexes))
			}
			if len(set.Robots) != len(direct) {
				t.Fatalf("robots lines %q, indexes listing shards %v", set.Robots, direct)
			}
			for _, l := range set.Robots {
				if !direct[strings.TrimPrefix(l, "Sitemap: ")] {
					t.Fatalf("robots line %q names no index that lists shards", l)
				}
			}
			if len(set.Files) != len(set.Shards)+len(set.Indexes)+2 {
				t.Fatalf("%d files in the folder, %d reachable + robots + manifest", len(set.Files), len(set.Shards)+len(set.Indexes))
			}
			if seed < 4 {
				xmltest.ValidateDir(t, dir)
			}
		})
	}
}

// failingSink fails or cancels at the n-th Put. Uploads run concurrently:
// the count is under a lock.
type failingSink struct {
	sink.Store
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

var errInjected = errors.New("injected failure")

func (s *failingSink) Put(ctx context.Context, name string, data []byte) error {
	if err := s.next(); err != nil {
		return err
	}
	return s.Store.Put(ctx, name, data)
}

// next counts a write and returns the failure injected at the n-th.
func (s *failingSink) next() error {
	s.mu.Lock()
	s.n--
	n := s.n
	s.mu.Unlock()
	if n == 0 {
		if s.cancel != nil {
			// The run is interrupted during this write, which fails. (Not
			// ctx.Err(): writes that must not stop half way run under a
			// context the interrupt does not cancel.)
			s.cancel()
			return context.Canceled
		}
		return errInjected
	}
	return nil
}

// failingFolder is a failingSink over a folder that takes deferred puts
// and batches, as sink.Local does: a file of a batch counts as a write,
// and a batch failing at its k-th places the files before it. It logs
// its writes and syncs, in order.
type failingFolder struct {
	*failingSink
	local *sink.Local
	ops   []string // "put NAME", "deferred NAME", "batch NAME..." and "sync"
}

func newFailingFolder(t *testing.T, dir string, n int) *failingFolder {
	t.Helper()
	local, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &failingFolder{failingSink: &failingSink{Store: local, n: n}, local: local}
}

func (s *failingFolder) log(op string) {
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.mu.Unlock()
}

func (s *failingFolder) Put(ctx context.Context, name string, data []byte) error {
	s.log("put " + name)
	return s.failingSink.Put(ctx, name, data)
}

func (s *failingFolder) PutDeferred(ctx context.Context, name string, data []byte) error {
	s.log("deferred " + name)
	if err := s.next(); err != nil {
		return err
	}
	return s.local.PutDeferred(ctx, name, data)
}

func (s *failingFolder) Sync() error {
	s.log("sync")
	return s.local.Sync()
}

func (s *failingFolder) PutAll(ctx context.Context, files []sink.File) ([]string, error) {
	op := "batch"
	for _, f := range files {
		op += " " + f.Name
	}
	s.log(op)
	for i := range files {
		if err := s.next(); err != nil {
			placed, perr := s.local.PutAll(ctx, files[:i])
			return placed, cmp.Or(perr, err)
		}
	}
	return s.local.PutAll(ctx, files)
}

// TestFailedRunKeepsPreviousSet checks invariant 6: a run cancelled or failing
// at any write leaves the previous set byte for byte as it was, reachable from
// its root, with no leftovers.
func TestFailedRunKeepsPreviousSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	first, _ := randomInput(t, rng, 2000, 100, 1e6)
	second, _ := randomInput(t, rng, 2500, 100, 1e6)
	dir := t.TempDir()
	local, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Inputs: []string{first}, PublicURL: mustScope(t, testBase), Sink: local, Name: "sitemap",
		MaxURLs: 100, MaxBytes: 10000, Fanout: 4, GzipLevel: 1}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	before := xmltest.Snapshot(t, dir)
	prev := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")

	// Count the second run's writes (shards, intermediate indexes, manifest,
	// root, robots), then fail at the first, in the middle, at the first and
	// last intermediate index, at the manifest (it replaced the previous one:
	// cleanup puts that back) and at the root itself.
	scratch, _ := sink.NewLocal(t.TempDir())
	c := cfg
	c.Inputs, c.Sink = []string{second}, scratch
	rep, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Shards < 20 || rep.Indexes < 4 {
		t.Fatalf("want a nested set for this test; got %d shards, %d indexes", rep.Shards, rep.Indexes)
	}
	manifest := rep.Shards + rep.Indexes
	for _, at := range []int{1, 2, rep.Shards / 2, rep.Shards + 1, manifest - 1, manifest, manifest + 1} {
		for _, cancel := range []bool{false, true} {
			t.Run(fmt.Sprintf("put%d_cancel%v", at, cancel), func(t *testing.T) {
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				fs := &failingSink{Store: local, n: at}
				if cancel {
					fs.cancel = stop
				}
				c := cfg
				c.Inputs, c.Sink = []string{second}, fs
				if _, err := Run(ctx, c); err == nil {
					t.Fatalf("run did not fail")
				} else if !cancel && !errors.Is(err, errInjected) || cancel && !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v does not wrap the cause", err)
				}
				xmltest.Unchanged(t, dir, before, "the failed run")
				set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
				if len(set.Shards) != len(prev.Shards) {
					t.Errorf("previous set not reachable: %d shards, was %d", len(set.Shards), len(prev.Shards))
				}
			})
		}
	}

	// A failure after the switch (writing the robots lines): the new set is
	// live and says so; nothing is pruned, so the old robots lines still work.
	fs := &failingSink{Store: local, n: manifest + 2} // shards, intermediates, manifest, root, robots
	c.Sink = fs
	rep, err = Run(context.Background(), c)
	if !errors.Is(err, publish.ErrPublishedIncomplete) || !rep.Published {
		t.Fatalf("failure at the robots lines: err %v, published %v", err, rep.Published)
	}
	if set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt"); len(set.Shards) != rep.Shards {
		t.Fatalf("new root lists %d shards, report %d", len(set.Shards), rep.Shards)
	}
	for _, l := range prev.Robots {
		name := strings.TrimPrefix(l, "Sitemap: "+testBase)
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("old robots line %q names a pruned file", l)
		}
	}

	// And a successful run replaces the set and removes what it no longer lists.
	c.Sink = local
	rep, err = Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	set := xmltest.ReadSet(t, dir, testBase, "sitemap.xml", "sitemap-robots.txt")
	// KeepGenerations is 0 here: no grace period, the old files go at once
	// (TestGracePeriod covers keeping them).
	if len(set.Files) != len(set.Shards)+len(set.Indexes)+2 || len(rep.Deleted) == 0 {
		t.Errorf("after a successful run: %d files, %d shards, %d indexes; deleted %d", len(set.Files), len(set.Shards), len(set.Indexes), len(rep.Deleted))
	}
}
