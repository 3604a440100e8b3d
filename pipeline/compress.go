package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
)

// upload is a compressed shard or news sitemap on its way to the sink.
type upload struct {
	file publish.File
	data []byte
	news bool
}

// compress gzips shards and news sitemaps and hands them to the uploaders.
func (r *run) compress(ctx context.Context, in <-chan cutShard, out chan<- upload) error {
	c, err := shard.NewCompressor(r.cfg.GzipLevel, r.cfg.GzipProcs)
	if err != nil {
		return err
	}
	for s := range in {
		t := time.Now()
		gz, err := c.Compress(s.Data)
		if err != nil {
			return fmt.Errorf("shard %d: %w", s.Num, err)
		}
		sum := sha256.Sum256(gz) // once: it names the shard and goes in the manifest
		var name string
		if s.news {
			name = r.layout.News(s.Num)
		} else {
			name = r.tx.ShardName(s.Num, len(gz), sum)
		}
		var buf []byte
		select {
		case buf = <-r.gzFree:
		case <-ctx.Done():
			return ctx.Err()
		}
		if cap(buf) < len(gz) {
			// Headroom, so a buffer is rarely outgrown by a later shard: each
			// regrowth would leave garbage that only the next GC returns.
			buf = make([]byte, 0, len(gz)+len(gz)/2)
		}
		u := upload{file: publish.DescribeSum(name, len(gz), sum), data: append(buf[:0], gz...), news: s.news}
		r.times.compress.Add(int64(time.Since(t)))
		r.mu.Lock()
		files, cutter := &r.shards, r.cutter
		if s.news {
			files, cutter = &r.newsFiles, r.news
		}
		for len(*files) < s.Num {
			*files = append(*files, publish.File{})
		}
		(*files)[s.Num-1] = u.file
		r.rep.BytesUncompressed += int64(len(s.Data))
		r.rep.BytesCompressed += int64(len(gz))
		r.mu.Unlock()
		cutter.Recycle(s.Sitemap)
		select {
		case r.shardRoom <- struct{}{}:
		default: // the last shard needed no room after it
		}
		select {
		case out <- u:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
