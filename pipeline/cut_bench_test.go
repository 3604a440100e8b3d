package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/bench"
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// BenchmarkCutGrouped measures the cut stage of a grouped run alone on
// the grouped benchmark's rows (bench.DefaultSections, encoded once): the
// routing of each batch's entries to the sets of their groups, the parking
// of the long tail and the cutting of the large groups, then the end of
// the input (the live groups flushed, the parked ones cut). The closed
// sitemaps are handed straight back. Ungrouped, the same rows are cut as
// one set. 1M rows, as the end-to-end benchmark's grouped run: the tail's
// groups hold about 50 rows each, and the large groups' first rows,
// parked until they go live, are a small share of theirs.
func BenchmarkCutGrouped(b *testing.B) {
	cols := [input.NumColumns]string{input.Group: "section"}
	batches := benchBatchesN(b, 1_000_000, &bench.DefaultSections, input.Options{Columns: cols})
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		b.Fatal(err)
	}
	for _, grouped := range []bool{false, true} {
		snk, err := sink.NewLocal(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		cfg := Config{Inputs: []string{"bench.csv"}, PublicURL: scope, Sink: snk, Name: "sm", MaxURLs: 50000,
			MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Columns: cols}
		if grouped {
			cfg.Group = &Grouping{}
		}
		r := &run{cfg: cfg.withDefaults(time.Now()), rep: NewReport(1), progress: &Progress{}}
		if err := r.begin(context.Background()); err != nil {
			b.Fatal(err)
		}
		r.prepare()
		var gr *grouper
		if grouped {
			gr = r.newGrouper(r.newEncoder(scope))
		}
		enc := r.newEncoder(scope)
		rows := 0
		for _, batch := range batches {
			encodeAgain(b, enc, gr, batch)
			rows += batch.Len()
		}
		r.begins.Wait()
		b.Run(map[bool]string{false: "ungrouped", true: "grouped"}[grouped], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchCut(b, r, batches)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows*b.N), "ns/row")
		})
		r.closeDestinations(context.Background())
	}
}

// benchCut cuts batches as the cut stage does, from fresh sets.
func benchCut(b *testing.B, r *run, batches []*Batch) {
	ctx := context.Background()
	out := make(chan cutShard, 4)
	done := make(chan struct{})
	go func() {
		for s := range out {
			s.set.cutter.Recycle(s.Sitemap)
			select {
			case r.shardRoom <- struct{}{}:
			default:
			}
		}
		close(done)
	}()
	c := &cutStage{r: r, ctx: ctx, out: out}
	if r.groups != nil {
		c.park = newParking(r.cfg, r.blocks)
		for _, s := range r.groups.all() {
			s.cutter, s.pending, s.spills = nil, parked{}, nil
		}
	}
	for len(r.shardRoom) > 0 {
		<-r.shardRoom
	}
	r.shardRoom <- struct{}{}
	for _, batch := range batches {
		if r.groups != nil {
			c.sets = r.groups.snapshot(c.sets)
			if err := c.route(batch); err != nil {
				b.Fatal(err)
			}
		} else if err := c.place(&shard.Entries{Data: batch.Out, Ends: batch.Ends}); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.finish(); err != nil {
		b.Fatal(err)
	}
	c.park.close()
	close(out)
	<-done
}
