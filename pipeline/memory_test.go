package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/sink"
)

// slowSink delays every shard write, so compressed shards back up behind
// the writers and the pressure reaches the cutter.
type slowSink struct {
	sink.Store
	delay time.Duration
}

func (s *slowSink) Put(ctx context.Context, name string, data []byte) error {
	if strings.HasSuffix(name, ".xml.gz") {
		time.Sleep(s.delay)
	}
	return s.Store.Put(ctx, name, data)
}

// pagesCSV writes a CSV of n URLs and returns its path.
func pagesCSV(t *testing.T, n int) string {
	t.Helper()
	var in strings.Builder
	in.WriteString("loc\n")
	for i := range n {
		fmt.Fprintf(&in, "https://www.example.com/p/%d\n", i)
	}
	return writeText(t, "in.csv", in.String())
}

// TestShardBuffersBounded: however far the writers fall behind, the run
// holds at most compressors + 1 uncompressed shards, so peak memory does not
// depend on how the stages race.
func TestShardBuffersBounded(t *testing.T) {
	path := pagesCSV(t, 6000)
	local, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Inputs: []string{path}, PublicURL: mustScope(t, "https://www.example.com/"),
		Sink: &slowSink{local, 5 * time.Millisecond}, Name: "sm", MaxURLs: 100, MaxBytes: 10485760, Fanout: 1000,
		GzipLevel: 1, Workers: 2, Uploads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Shards != 60 {
		t.Fatalf("%d shards, want 60", rep.Shards)
	}
	// Three tokens: two compressors with a shard each and the open one, or,
	// while the cutter waits for room, a third closed shard queued.
	if rep.shardBuffers < 1 || rep.shardBuffers > 3 {
		t.Errorf("the run allocated %d shard buffers; want at most 3 (2 compressors + 1)", rep.shardBuffers)
	}
	// Each shard (about 4 KB) fits one block: the blocks go round with
	// the shards.
	if rep.shardBlocks < 1 || rep.shardBlocks > 3 {
		t.Errorf("the run allocated %d blocks for its shards; want at most 3, a shard's each", rep.shardBlocks)
	}
}

// smallSink is slowSink on a store whose small puts are worth running
// many at once (sink.SmallPutter): it records the shard puts in flight,
// the largest small one and the largest buffer a small one came in.
type smallSink struct {
	slowSink
	small int

	mu             sync.Mutex
	inFlight, most int
	large          int // shards of more than sink.SmallFile bytes
	smallLen       int // the largest shard of at most sink.SmallFile bytes
	smallCap       int // the largest cap of such a shard's data
}

func (s *smallSink) SmallConnections() int { return s.small }

func (s *smallSink) Put(ctx context.Context, name string, data []byte) error {
	if strings.HasSuffix(name, ".xml.gz") {
		s.mu.Lock()
		s.inFlight++
		s.most = max(s.most, s.inFlight)
		if len(data) > sink.SmallFile {
			s.large++
		} else {
			s.smallLen, s.smallCap = max(s.smallLen, len(data)), max(s.smallCap, cap(data))
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
	}
	return s.slowSink.Put(ctx, name, data)
}

// TestSmallUploads: a store's small files go up to its SmallConnections at
// once beside its Connections, in buffers of at most sink.SmallFile bytes
// (a buffer grown with headroom for a small file near the bound, or one a
// large file held, would pass it); with Uploads given, all files share
// those.
func TestSmallUploads(t *testing.T) {
	// 100 URLs a sitemap: 5 of about 150 KiB compressed (random paths
	// deflate little), 5 of about 100 KiB, 50 of a few KiB.
	rng := rand.New(rand.NewPCG(1, 2))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var in strings.Builder
	in.WriteString("loc\n")
	for i := range 6000 {
		n := 0
		switch {
		case i < 500:
			n = 1900
		case i < 1000:
			n = 1300
		}
		fmt.Fprintf(&in, "https://www.example.com/p/%d/", i)
		for range n {
			in.WriteByte(alnum[rng.IntN(len(alnum))])
		}
		in.WriteByte('\n')
	}
	path := writeText(t, "in.csv", in.String())
	for _, c := range []struct {
		uploads     int
		least, most int
	}{
		{0, sink.LocalConnections + 1, sink.LocalConnections + 6}, // Connections 2 (a folder's), SmallConnections 6
		{1, 1, 1},
	} {
		t.Run(fmt.Sprint("uploads ", c.uploads), func(t *testing.T) {
			local, err := sink.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s := &smallSink{slowSink: slowSink{local, 20 * time.Millisecond}, small: 6}
			rep, err := Run(context.Background(), Config{Inputs: []string{path}, PublicURL: mustScope(t, "https://www.example.com/"),
				Sink: s, Name: "sm", MaxURLs: 100, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Workers: 2, Uploads: c.uploads})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Shards != 60 {
				t.Fatalf("%d shards, want 60", rep.Shards)
			}
			if s.large == 0 || s.smallLen <= sink.SmallFile*2/3 {
				t.Fatalf("%d shards over %d bytes, the largest small one %d bytes: the input no longer has both", s.large, sink.SmallFile, s.smallLen)
			}
			if s.most < c.least || s.most > c.most {
				t.Errorf("at most %d shards put at once; want %d..%d", s.most, c.least, c.most)
			}
			if c.uploads == 0 && s.smallCap > sink.SmallFile {
				t.Errorf("a small shard came in a buffer of %d bytes; want at most %d", s.smallCap, sink.SmallFile)
			}
		})
	}
}
