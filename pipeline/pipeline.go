// Package pipeline wires the stages that turn input rows into a published
// sitemap set: it reads inputs in batches, encodes them on all cores,
// restores input order, cuts shards, compresses them and hands them to the
// publish transaction while the next ones are being made, then commits it.
package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// ErrNoURLs reports a run in which no row was accepted; nothing is published.
// Force does not override it: a sitemap index must list at least one sitemap.
var ErrNoURLs = errors.New("no URLs to publish")

// run is the state of one Run.
type run struct {
	cfg      Config
	log      *slog.Logger
	progress *Progress
	times    stageTimes
	rep      *Report
	inputs   []input.File // the inputs, folders and globs expanded
	gzFree   chan []byte  // recycled buffers of compressed shards; its capacity bounds them
	// shardRoom holds a token for each further shard the cutter may open
	// while closed ones are still being compressed: with the open shard,
	// its capacity bounds the uncompressed shards in memory, so the peak
	// does not depend on how the stages happen to race.
	shardRoom chan struct{}
	// namespaces are those of the extension columns of all inputs, known
	// before the first row: every shard of the run declares them.
	namespaces encode.Namespaces
	free       chan *Batch // recycled batches; its capacity bounds the batches in flight
	depth      int
	cutter     *shard.Cutter
	news       *shard.Cutter // cuts the news sitemaps; nil: the input has no news columns
	hreflang   *reciprocity  // nil: the run lists no alternates

	layout publish.Layout
	tx     *publish.Tx

	mu        sync.Mutex
	shards    []publish.File // by shard number - 1
	newsFiles []publish.File // by news sitemap number - 1
	readOK    atomic.Bool    // every input was read to its end without error
	reused    atomic.Int64   // sitemaps reused without compression
	rowsRead  atomic.Int64   // rows handed out by the inputs
}

// Run reads the inputs and publishes a complete sitemap set to cfg.Sink, or
// fails leaving what the sink served before intact and reachable. The report
// is returned in both cases.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	rep := NewReport(cfg.GzipLevel)
	finish := func(err error) (*Report, error) {
		rep.Seconds = time.Since(start).Seconds()
		st := cfg.Remote.Fetched()
		rep.BytesFetched, rep.Requests = st.Bytes, st.Requests
		if err != nil {
			rep.Error = err.Error()
		}
		if rep.Deleted == nil {
			rep.Deleted = []string{} // "deleted": [], as documented, when nothing was
		}
		return rep, err
	}
	if err := cfg.Validate(); err != nil {
		return finish(err)
	}
	if cfg.Sink == nil {
		return finish(errors.New("no output sink"))
	}
	cfg = cfg.withDefaults(start)
	var dry *sink.DryRun
	if cfg.DryRun {
		var ok bool
		if dry, ok = cfg.Sink.(*sink.DryRun); !ok { // the caller's, if it made one
			dry = sink.NewDryRun(cfg.Sink)
		}
		cfg.Sink = dry
	}
	r := &run{cfg: cfg, log: cfg.Log, progress: cfg.Progress, rep: rep, layout: publish.NewLayout(cfg.Name)}
	rep.DryRun = cfg.DryRun
	files, err := input.ExpandRemote(ctx, cfg.Inputs, cfg.Remote)
	if err != nil {
		return finish(err)
	}
	r.inputs = files
	if r.namespaces, err = input.Probe(ctx, files, cfg.Stdin, input.Options{Columns: cfg.Columns}); err != nil {
		return finish(err)
	}
	defer input.Release(files) // those a failed read did not reach
	r.tx, err = publish.Begin(ctx, cfg.Sink, r.layout, publish.Options{
		KeepGenerations: cfg.KeepGenerations, MaxShrink: cfg.MaxShrink, Force: cfg.Force,
		Verify: cfg.Verify, LockTTL: cfg.LockTTL, Now: cfg.Now, Log: r.log, Switched: cfg.Switched,
	})
	if err != nil {
		return finish(err)
	}
	err = r.generate(ctx)
	rep.StageSeconds = r.times.seconds()
	if err == nil {
		err = r.publish(ctx)
	}
	if err != nil {
		r.tx.Abort(ctx)
	}
	rep.Uploaded, rep.Skipped, _ = r.tx.Transfers()
	rep.Reused = int(r.reused.Load())
	// Rows read but not accounted (in flight when the run failed), so that
	// rows = urls + rejected + unfinished holds on every path.
	accounted := rep.Rows
	rep.Rows = r.rowsRead.Load()
	rep.Unfinished = rep.Rows - accounted
	if dry != nil {
		_, _, skips := r.tx.Transfers()
		rep.Plan = &Plan{Upload: dry.Puts(), Skip: skips, Delete: dry.Deletes()}
		rep.Deleted = nil // nothing was
	}
	return finish(err)
}

// generate runs the parallel stages and writes every shard.
func (r *run) generate(ctx context.Context) error {
	cfg := &r.cfg
	ncomp := r.prepare()
	g, ctx := errgroup.WithContext(ctx)
	toEncode := make(chan *Batch, cfg.Workers)
	toCut := make(chan *Batch, cfg.Workers)
	toCompress := make(chan cutShard, 1)
	toUpload := make(chan upload, cfg.Uploads)

	g.Go(func() error {
		defer close(toEncode)
		return r.read(ctx, toEncode)
	})
	var workers sync.WaitGroup
	for range cfg.Workers {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			return r.encode(ctx, toEncode, toCut)
		})
	}
	g.Go(func() error {
		workers.Wait()
		close(toCut)
		return nil
	})
	if h := r.hreflang; h != nil {
		g.Go(func() error { return h.feed(ctx) })
	}
	g.Go(func() error {
		defer close(toCompress)
		if r.hreflang != nil {
			defer close(r.hreflang.batches)
		}
		return r.cut(ctx, toCut, toCompress)
	})
	// pgzip spreads one shard over every core: two compressors, so one
	// compresses while the other hands over. Single streams: one per core.
	// Then a bounded set of uploaders: uploads overlap with generation, and
	// the shards in flight are at most Uploads queued + Uploads uploading.
	var compressors sync.WaitGroup
	for range ncomp {
		compressors.Add(1)
		g.Go(func() error {
			defer compressors.Done()
			return r.compress(ctx, toCompress, toUpload)
		})
	}
	g.Go(func() error {
		compressors.Wait()
		close(toUpload)
		return nil
	})
	// Uploads in flight when the run fails are let finish: an upload
	// canceled on the client may still complete on the store after cleanup
	// has run, leaving an object nobody deletes until the next run.
	putCtx, stopPuts := detach(ctx, uploadGrace)
	defer stopPuts()
	for range cfg.Uploads {
		g.Go(func() error { return r.upload(ctx, putCtx, toUpload) })
	}
	err := g.Wait()
	r.rep.shardBuffers = r.cutter.Buffers()
	return err
}

// prepare sets up what the stages share: the batch pool, the cutters, the
// bounds on shards in flight. It returns how many compressors to run.
func (r *run) prepare() (ncomp int) {
	cfg := &r.cfg
	r.depth = 4 * (cfg.Workers + 1)
	r.free = make(chan *Batch, r.depth)
	for range r.depth {
		r.free <- newBatch(input.DefaultChunk)
	}
	ns := r.namespaces
	if ns&encode.NSNews != 0 {
		// News items go to news sitemaps of their own, packed tight: they
		// are rewritten every run under fixed names, so stable cuts buy nothing.
		r.news, _ = shard.NewCutter(shard.CutterOptions{MaxURLs: cfg.MaxNewsURLs, MaxBytes: cfg.MaxBytes,
			Header: shard.URLSetHeaderSchema(encode.NSNews, cfg.SchemaLocation), Mode: shard.CutTight})
		ns &^= encode.NSNews
		r.rep.News = &NewsReport{
			Oldest: cfg.Now.Add(-cfg.NewsWindow).UTC().Format(time.RFC3339),
			Newest: cfg.Now.Add(encode.NewsSkew).UTC().Format(time.RFC3339),
		}
	}
	// No Curve: NewCutter cannot fail.
	r.cutter, _ = shard.NewCutter(shard.CutterOptions{MaxURLs: cfg.MaxURLs, MaxBytes: cfg.MaxBytes,
		Header: shard.URLSetHeaderSchema(ns, cfg.SchemaLocation), Mode: cfg.Cut})

	r.hreflang = newReciprocity(r)

	ncomp = 2 // pgzip uses every core for one shard: two, so one compresses while the other hands over
	if cfg.GzipProcs == 1 {
		ncomp = runtime.GOMAXPROCS(0) // single streams: one per core
	}
	// Uncompressed shards: the open one and one per compressor; a closed
	// shard waits in toCompress while the cutter waits for room.
	r.shardRoom = make(chan struct{}, ncomp+1)
	for range cap(r.shardRoom) {
		r.shardRoom <- struct{}{}
	}
	// Every compressed shard in flight (compressing, queued, uploading) has
	// a buffer from this pool: recycled, they keep memory flat on any input.
	r.gzFree = make(chan []byte, ncomp+2*cfg.Uploads)
	for range cap(r.gzFree) {
		r.gzFree <- nil
	}
	return ncomp
}
