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
	"slices"
	"strings"
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
	inputs   []input.File  // the inputs, folders and globs expanded
	rejects  *rejectWriter // nil without Config.Rejects
	gzFree   chan []byte   // recycled buffers of compressed shards; its capacity bounds them
	// smallFree is gzFree for the files of at most sink.SmallFile bytes
	// that go to Config.SmallUploads' uploaders (nil: none do).
	smallFree chan []byte
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
	hreflang   *reciprocity // nil: the run lists no alternates

	main *set // the set of a run without groups
	// A grouped run's sets, their destinations, and the transactions
	// beginning in the background.
	groups    *groups
	dests     destinations
	begins    sync.WaitGroup
	beginSem  chan struct{}
	shardFree chan *shard.Sitemap // the parked groups' recycled shard buffers
	liveFree  chan *shard.Sitemap // the live groups' (newCutter)
	blocks    *shard.Blocks       // the bytes of the only set's sitemaps, or the live groups'
	maxEntry  int                 // the longest entry a shard takes
	maxNews   int                 // the longest news entry (0: no news)

	mu       sync.Mutex
	drys     map[sink.Store]*sink.DryRun // dry run: the decorators of the groups' own sinks
	readOK   atomic.Bool                 // every input was read to its end without error
	reused   atomic.Int64                // sitemaps reused without compression
	rowsRead atomic.Int64                // rows handed out by the inputs
	// encodeFailed: a worker failed (a grouped run's error), so a batch
	// never reached the cut stage though the input was read whole.
	encodeFailed atomic.Bool
}

// Run reads the inputs and publishes a complete sitemap set to cfg.Sink, or
// fails leaving what the sink served before intact and reachable. The report
// is returned in both cases.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	rep := NewReport(cfg.GzipLevel)
	var rejects *rejectWriter
	if cfg.Rejects != nil {
		rejects = newRejectWriter(cfg.Rejects, cfg.Group != nil)
	}
	finish := func(err error) (*Report, error) {
		if rejects != nil {
			// Every run leaves a CSV: the header and the rows rejected
			// before it stopped, also when it stopped before the read (an
			// input that fails as it is opened). The cut stage flushed
			// those of a run that got that far.
			if ferr := rejects.flush(); ferr != nil && err == nil {
				err = ferr
			}
		}
		rep.Seconds = time.Since(start).Seconds()
		st := cfg.Remote.Fetched()
		rep.BytesFetched, rep.Requests = st.Bytes, st.Requests
		if err != nil {
			rep.Error = err.Error()
		}
		if rep.Deleted == nil {
			rep.Deleted = []string{} // "deleted": [], as documented, when nothing was
		}
		if cfg.DryRun {
			// Nothing was put in place: the plan says what a run would do.
			rep.Published = false
			for i := range rep.Groups {
				rep.Groups[i].Published = false
			}
			if p := rep.Plan; p != nil { // [] rather than null, as documented
				for _, l := range []*[]string{&p.Upload, &p.Skip, &p.Delete} {
					if *l == nil {
						*l = []string{}
					}
				}
			}
		}
		return rep, err
	}
	if err := cfg.Validate(); err != nil {
		return finish(err)
	}
	if cfg.Sink == nil && (cfg.Group == nil || cfg.Group.Place == nil) {
		return finish(errors.New("no output sink"))
	}
	cfg = cfg.withDefaults(start)
	var dry *sink.DryRun
	if cfg.DryRun && cfg.Sink != nil {
		var ok bool
		if dry, ok = cfg.Sink.(*sink.DryRun); !ok { // the caller's, if it made one
			dry = sink.NewDryRun(cfg.Sink)
		}
		cfg.Sink = dry
	}
	r := &run{cfg: cfg, log: cfg.Log, progress: cfg.Progress, rep: rep, rejects: rejects}
	rep.DryRun = cfg.DryRun
	if cfg.Remote == nil {
		cfg.Remote = &input.Remote{Log: cfg.Log}
	}
	files, err := input.ExpandRemote(ctx, cfg.Inputs, cfg.Remote)
	if err != nil {
		return finish(err)
	}
	// The CSV and text files of a folder are not read (a folder stands for
	// its Parquet and Arrow files): said in the log, counted here.
	rep.Warnings.add(FolderFileSkipped, int64(len(cfg.Remote.SkippedFiles())))
	r.inputs = files
	// The lock first: a probe of a stream waits for its first bytes, which
	// a nightly export may take minutes to send.
	if err := r.begin(ctx); err != nil {
		return finish(err)
	}
	if r.namespaces, err = input.Probe(ctx, files, cfg.Stdin, r.inputOptions()); err == nil {
		defer input.Release(files) // those a failed read did not reach
		err = r.generate(ctx)
		rep.StageSeconds = r.times.seconds()
	}
	if err == nil {
		err = r.publish(ctx)
	}
	if err != nil {
		r.abort(ctx)
	}
	r.closeDestinations(ctx)
	r.transfers(dry)
	// Rows read but not accounted (in flight when the run failed), so that
	// rows = urls + rejected + unfinished holds on every path.
	accounted := rep.Rows
	rep.Rows = r.rowsRead.Load()
	rep.Unfinished = rep.Rows - accounted
	return finish(err)
}

// begin starts the publish: the transaction of a run's only set, or the
// registry of a grouped run's sets and the lock of its shared destination,
// taken before the input is read.
func (r *run) begin(ctx context.Context) error {
	cfg := &r.cfg
	r.blocks = shard.NewBlocks(sitemapBlock)
	if cfg.Group == nil {
		r.main = &set{layout: publish.NewLayout(cfg.Name), began: make(chan struct{}),
			place: Place{Name: cfg.Name, PublicURL: cfg.PublicURL, Scope: cfg.Scope, Sink: cfg.Sink, Verify: cfg.Verify}}
		close(r.main.began)
		r.main.tx, r.main.err = publish.Begin(ctx, cfg.Sink, r.main.layout, r.txOptions(nil, r.main.place))
		return r.main.err
	}
	r.groups = newGroups(ctx, r)
	r.beginSem = make(chan struct{}, beginsAtOnce)
	r.shardFree = make(chan *shard.Sitemap, 16)
	r.liveFree = make(chan *shard.Sitemap, 16)
	if cfg.Sink != nil {
		_, err := r.destination(ctx, cfg.Sink)
		return err
	}
	return nil
}

// sets returns the run's sets: its only one, or its groups' in name order.
func (r *run) sets() []*set {
	if r.main != nil {
		return []*set{r.main}
	}
	if r.groups == nil {
		return nil
	}
	r.begins.Wait() // every transaction has begun or failed to
	return r.groups.all()
}

// abort undoes what every set's transaction wrote.
func (r *run) abort(ctx context.Context) {
	for _, s := range r.sets() {
		if s.tx != nil {
			s.tx.Abort(ctx)
		}
	}
}

// transfers adds up the sets' uploads and skips in the report, and a dry
// run's plan.
func (r *run) transfers(dry *sink.DryRun) {
	rep := r.rep
	var skips []string
	for _, s := range r.sets() {
		if s.tx == nil {
			continue
		}
		up, sk, names := s.tx.Transfers()
		addTransfer(&rep.Uploaded, up)
		addTransfer(&rep.Skipped, sk)
		skips = append(skips, names...)
	}
	rep.Reused = int(r.reused.Load())
	if !r.cfg.DryRun {
		return
	}
	plan := &Plan{Skip: skips}
	drys := []*sink.DryRun{}
	if dry != nil {
		drys = append(drys, dry)
	}
	for _, d := range r.drys {
		drys = append(drys, d)
	}
	slices.SortFunc(drys[min(1, len(drys)):], func(a, b *sink.DryRun) int { return strings.Compare(a.String(), b.String()) })
	for _, d := range drys {
		plan.Upload = append(plan.Upload, d.Puts()...)
		plan.Delete = append(plan.Delete, d.Deletes()...)
	}
	rep.Plan = plan
	rep.Deleted = nil // nothing was
}

func addTransfer(t *publish.Transfer, u publish.Transfer) {
	t.Files += u.Files
	t.Bytes += u.Bytes
	t.Shards += u.Shards
	t.ShardBytes += u.ShardBytes
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
	var toUploadSmall chan upload // nil without SmallUploads: compress never sends on it
	if cfg.SmallUploads > 0 {
		toUploadSmall = make(chan upload, cfg.SmallUploads)
	}

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
			return r.compress(ctx, toCompress, toUpload, toUploadSmall)
		})
	}
	g.Go(func() error {
		compressors.Wait()
		close(toUpload)
		if toUploadSmall != nil {
			close(toUploadSmall)
		}
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
	for range cfg.SmallUploads {
		g.Go(func() error { return r.upload(ctx, putCtx, toUploadSmall) })
	}
	err := g.Wait()
	if r.main != nil {
		r.rep.shardBuffers = r.main.cutter.Buffers()
		r.rep.shardBlocks = r.blocks.Made()
	}
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
	if r.namespaces&encode.NSNews != 0 {
		r.rep.News = &NewsReport{
			Oldest: cfg.Now.Add(-cfg.NewsWindow).UTC().Format(time.RFC3339),
			Newest: cfg.Now.Add(encode.NewsSkew).UTC().Format(time.RFC3339),
		}
	}
	if r.main != nil {
		r.main.cutter, r.main.news = r.newCutter(true), r.newNewsCutter()
	}
	proto := r.newCutter(true)
	r.maxEntry = proto.MaxEntry()
	if news := r.newNewsCutter(); news != nil {
		r.maxNews = news.MaxEntry()
	}

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
	if cfg.SmallUploads > 0 {
		// Each at most sink.SmallFile: 8.25 MiB with 32 small uploads and
		// the two pgzip compressors.
		r.smallFree = make(chan []byte, ncomp+2*cfg.SmallUploads)
		for range cap(r.smallFree) {
			r.smallFree <- nil
		}
	}
	return ncomp
}
