package pipeline

import (
	"context"
	"fmt"

	"github.com/sitemapgen/sitemapgen/publish"
)

// publish commits the transaction with the shards the run wrote.
func (r *run) publish(ctx context.Context) error {
	rep := r.rep
	rep.Shards = len(r.shards)
	if rep.News != nil {
		rep.News.Sitemaps = len(r.newsFiles)
	}
	if rep.URLs == 0 {
		return fmt.Errorf("%w: %d rows read, %d rejected", ErrNoURLs, rep.Rows, rep.Rejected.Total)
	}
	res, err := r.tx.Commit(ctx, publish.Set{
		Shards: r.shards, News: r.newsFiles, Rows: rep.Rows, URLs: rep.URLs, Rejected: rep.Rejected.Total,
		Fanout: r.cfg.Fanout, Base: r.cfg.PublicURL.String(), SchemaLocation: r.cfg.SchemaLocation,
	})
	rep.Published, rep.Generation, rep.Indexes, rep.Root = res.Published, res.Generation, res.Indexes, res.Root
	rep.Submit, rep.Files, rep.Deleted = res.Submit, res.Files, res.Deleted
	rep.ShardsNew, rep.ShardsUnchanged, rep.ShardsRemoved, rep.RobotsChanged = res.ShardsNew, res.ShardsUnchanged, res.ShardsRemoved, res.RobotsChanged
	return err
}
