package pipeline

import (
	"context"
	"sync"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/runs"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// set is one sitemap set of a run: the run's only one, or a group's. The
// cut stage owns its cutters and counts; the compressors and uploaders its
// transaction and files (under run.mu).
type set struct {
	group  string // the group's name; "" in a run without groups
	index  int    // in the run's groups
	place  Place
	layout publish.Layout

	cutter *shard.Cutter // nil while the set is parked (see parking)
	news   *shard.Cutter // nil: the input has no news columns
	// newsSitemaps counts the news sitemaps closed so far.
	newsSitemaps int

	// A parked set's entries wait here, or in spills on disk, until the
	// set goes live or the input ends.
	pending parked
	spills  []spill

	rows, urls int64 // counted by the cut stage
	reasons    [encode.NumReasons]int64

	began chan struct{} // closed once tx (or err) is set
	tx    *publish.Tx
	err   error

	shards    []publish.File // by shard number - 1
	newsFiles []publish.File // by news sitemap number - 1
	bytesU    int64
	bytesC    int64
	res       *publish.Result
}

// spill is a run of a parked set's entries written to the run's temporary
// file: n entry ends (4 bytes each, little-endian) then the entries.
type spill struct {
	seg runs.Segment
	n   int
}

// wait returns the set's transaction once it has begun.
func (s *set) wait(ctx context.Context) (*publish.Tx, error) {
	select {
	case <-s.began:
		return s.tx, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newCutter returns a cutter of the run's shards. One that cuts as rows
// come (live) holds its shards in the run's blocks, as the cutter of a run
// without groups does, and its shards go round all the live groups'
// cutters: the shards in flight are few (shardRoom), so a live group
// needs no memory of its own beyond its open shard's blocks (five large
// groups kept twenty 10 MiB buffers, each allocated and cleared; then
// eight, each filled in turn to the largest shard it held). A parked
// group's, cut after the input, start small and go round all the parked
// groups' cutters.
func (r *run) newCutter(live bool) *shard.Cutter {
	o := shard.CutterOptions{MaxURLs: r.cfg.MaxURLs, MaxBytes: r.cfg.MaxBytes,
		Header: shard.URLSetHeaderSchema(r.namespaces&^encode.NSNews, r.cfg.SchemaLocation), Mode: r.cfg.Cut}
	switch {
	case r.groups == nil: // the run's only set: a free list of its own
		o.Blocks = r.blocks
	case live:
		o.Free, o.Blocks = r.liveFree, r.blocks
	default:
		o.Free, o.Capacity = r.shardFree, groupShardCapacity
	}
	c, _ := shard.NewCutter(o) // no Curve: NewCutter cannot fail
	return c
}

// newNewsCutter returns a cutter of news sitemaps, or nil when the input
// has no news columns. News items go to news sitemaps of their own, packed
// tight: they are rewritten every run under fixed names, so stable cuts buy
// nothing.
func (r *run) newNewsCutter() *shard.Cutter {
	if r.namespaces&encode.NSNews == 0 {
		return nil
	}
	// --max-urls bounds every sitemap of the set, news sitemaps too.
	o := shard.CutterOptions{MaxURLs: min(r.cfg.MaxNewsURLs, r.cfg.MaxURLs), MaxBytes: r.cfg.MaxBytes,
		Header: shard.URLSetHeaderSchema(encode.NSNews, r.cfg.SchemaLocation), Mode: shard.CutTight}
	if r.groups != nil {
		o.Capacity = groupShardCapacity
	}
	c, _ := shard.NewCutter(o)
	return c
}

// sitemapBlock is the size of the blocks that hold the sitemaps of the
// run's only set or of its live groups (shard.Blocks): a sitemap's last
// block is partly empty, 128 KiB on average, for each open or closed one.
const sitemapBlock = 256 << 10

// groupShardCapacity is the first capacity of a grouped run's shard
// buffers: most groups of a long tail are small.
const groupShardCapacity = 64 << 10

// newGroupSet makes the set of a new group and begins its transaction in
// the background (a lock, a listing and a manifest read per destination
// and set), at most beginsAtOnce at a time.
func (r *run) newGroupSet(ctx context.Context, name string, index int) (*set, error) {
	p, err := r.groupPlace(name)
	if err != nil {
		return nil, err
	}
	s := &set{group: name, index: index, layout: publish.NewLayout(p.Name), began: make(chan struct{})}
	if r.cfg.DryRun {
		p.Sink = r.dryRun(p.Sink)
	}
	s.place = p
	s.news = r.newNewsCutter()
	r.begins.Add(1)
	go func() {
		defer r.begins.Done()
		defer close(s.began)
		r.beginSem <- struct{}{}
		defer func() { <-r.beginSem }()
		s.tx, s.err = r.beginSet(ctx, s)
	}()
	return s, nil
}

// beginsAtOnce bounds the sets whose transactions begin at once: on S3 a
// begin is a few small reads (a manifest, the lock's look), round trips
// like a publish step's (setsAtOnce).
const beginsAtOnce = setsAtOnce

// beginSet begins the transaction of s in its destination, opened once for
// every set published there.
func (r *run) beginSet(ctx context.Context, s *set) (*publish.Tx, error) {
	d, err := r.destination(ctx, s.place.Sink)
	if err != nil {
		return nil, err
	}
	return publish.Begin(ctx, s.place.Sink, s.layout, r.txOptions(d, s.place))
}

// txOptions are the publish options of the set at p.
func (r *run) txOptions(d *publish.Destination, p Place) publish.Options {
	cfg := &r.cfg
	o := publish.Options{
		KeepGenerations: cfg.KeepGenerations, MaxShrink: cfg.MaxShrink, Force: cfg.Force,
		Verify: p.Verify, LockTTL: cfg.LockTTL, LockWait: cfg.LockWait, Now: cfg.Now, Log: r.log, Destination: d,
	}
	if sw := cfg.Switched; sw != nil && p.Sink != nil { // not a destination's own options
		o.Switched = func(ctx context.Context, prev, next *publish.Manifest) { sw(ctx, p, prev, next) }
	}
	return o
}

// destinations are the stores a grouped run publishes to, each opened
// (locked, listed) once.
type destinations struct {
	mu   sync.Mutex
	open map[sink.Store]*destination
	list []*destination // in the order opened
}

type destination struct {
	once sync.Once
	d    *publish.Destination
	err  error
}

// destination opens store for the run's sets, once.
func (r *run) destination(ctx context.Context, store sink.Store) (*publish.Destination, error) {
	ds := &r.dests
	ds.mu.Lock()
	if ds.open == nil {
		ds.open = map[sink.Store]*destination{}
	}
	e, ok := ds.open[store]
	if !ok {
		e = &destination{}
		ds.open[store] = e
		ds.list = append(ds.list, e)
	}
	ds.mu.Unlock()
	e.once.Do(func() {
		o := r.txOptions(nil, Place{})
		o.Groups = store == r.cfg.Sink // the groups' sets are NAME-GROUP here; in a folder of their own, NAME
		e.d, e.err = publish.OpenDestination(ctx, store, publish.NewLayout(r.cfg.Name), o)
	})
	return e.d, e.err
}

// openDestinations returns the destinations opened.
func (r *run) openDestinations() []*publish.Destination {
	r.dests.mu.Lock()
	defer r.dests.mu.Unlock()
	var ds []*publish.Destination
	for _, e := range r.dests.list {
		if e.d != nil {
			ds = append(ds, e.d)
		}
	}
	return ds
}

// closeDestinations releases the locks of every destination opened.
func (r *run) closeDestinations(ctx context.Context) {
	for _, d := range r.openDestinations() {
		d.Close(ctx)
	}
}

// dryRun returns the dry-run decorator of store, one per store.
func (r *run) dryRun(store sink.Store) *sink.DryRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := store.(*sink.DryRun); ok {
		return d
	}
	if r.drys == nil {
		r.drys = map[sink.Store]*sink.DryRun{}
	}
	d, ok := r.drys[store]
	if !ok {
		d = sink.NewDryRun(store)
		r.drys[store] = d
	}
	return d
}
