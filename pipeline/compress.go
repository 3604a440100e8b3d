package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"time"

	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
	"github.com/zeebo/blake3"
)

// upload is a compressed shard or news sitemap on its way to the sink.
type upload struct {
	file publish.File
	data []byte
	free chan<- []byte // where data goes back to: run.gzFree or run.smallFree
	news bool
	tx   *publish.Tx // of its set
}

// compress gzips shards and news sitemaps and hands them to the uploaders:
// to out, or to small when they are small files and small uploaders run
// (run.smallFree).
func (r *run) compress(ctx context.Context, in <-chan cutShard, out, small chan<- upload) error {
	c, err := shard.NewCompressor(r.cfg.GzipLevel, r.cfg.GzipProcs)
	if err != nil {
		return err
	}
	h := blake3.New()
	for s := range in {
		tx, err := s.set.wait(ctx)
		if err != nil {
			return err
		}
		t := time.Now()
		var name string
		if s.news {
			name = s.set.layout.News(s.Num)
		}
		parts := s.Parts()
		content := publish.Content{XMLBLAKE3: xmlSum(h, parts), XMLSize: s.Len(), Codec: c.ID()}
		if f, ok := r.reuse(ctx, tx, name, content); ok {
			r.times.hash.Add(int64(time.Since(t)))
			r.done(s, f)
			r.progress.Shards.Add(1)
			continue
		}
		r.times.hash.Add(int64(time.Since(t)))
		t = time.Now()
		gz, err := c.Compress(parts...)
		if err != nil {
			return fmt.Errorf("shard %d: %w", s.Num, err)
		}
		sum := sha256.Sum256(gz) // once: it names the shard and goes in the manifest
		if !s.news {
			name = tx.ShardName(s.Num, len(gz), sum)
		}
		f := publish.DescribeGzip(name, gz, sum, content)
		free, to, most := r.gzFree, out, math.MaxInt
		if r.smallFree != nil && len(gz) <= sink.SmallFile {
			free, to, most = r.smallFree, small, sink.SmallFile // the bound of smallFree's buffers
		}
		var buf []byte
		select {
		case buf = <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
		if cap(buf) < len(gz) {
			// Headroom, so a buffer is rarely outgrown by a later shard: each
			// regrowth would leave garbage that only the next GC returns.
			buf = make([]byte, 0, min(len(gz)+len(gz)/2, most))
		}
		u := upload{file: f, data: append(buf[:0], gz...), free: free, news: s.news, tx: tx}
		r.times.compress.Add(int64(time.Since(t)))
		r.done(s, f)
		select {
		case to <- u:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// xmlSum returns the BLAKE3-256 of the pieces of one file, hashed with h.
func xmlSum(h *blake3.Hasher, parts [][]byte) (sum [publish.XMLSumSize]byte) {
	h.Reset()
	for _, p := range parts {
		h.Write(p)
	}
	h.Sum(sum[:0])
	return sum
}

// reuse returns the published file holding content, if the run may reuse
// one (publish.Tx.Reuse).
func (r *run) reuse(ctx context.Context, tx *publish.Tx, name string, content publish.Content) (publish.File, bool) {
	if r.cfg.CompressAll {
		return publish.File{}, false
	}
	f, ok := tx.Reuse(ctx, name, content)
	if ok {
		r.reused.Add(1)
	}
	return f, ok
}

// done records the file of sitemap s, compressed or reused, and recycles s.
func (r *run) done(s cutShard, f publish.File) {
	r.mu.Lock()
	// Only the field of s's own kind is read: a parked group's news
	// sitemaps come back while the cut stage may be giving it its cutter.
	var files *[]publish.File
	var cutter *shard.Cutter
	if s.news {
		files, cutter = &s.set.newsFiles, s.set.news
	} else {
		files, cutter = &s.set.shards, s.set.cutter
	}
	for len(*files) < s.Num {
		*files = append(*files, publish.File{})
	}
	(*files)[s.Num-1] = f
	r.rep.BytesUncompressed += int64(s.Len())
	r.rep.BytesCompressed += f.Size
	s.set.bytesU += int64(s.Len())
	s.set.bytesC += f.Size
	r.mu.Unlock()
	cutter.Recycle(s.Sitemap)
	select {
	case r.shardRoom <- struct{}{}:
	default: // the last shard needed no room after it
	}
}
