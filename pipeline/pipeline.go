// Package pipeline wires the stages that turn input rows into a published
// sitemap set: it reads inputs in batches, encodes them on all cores,
// restores input order, cuts shards, compresses them and hands them to the
// publish transaction while the next ones are being made, then commits it.
package pipeline

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
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

// Config is a run's whole configuration.
type Config struct {
	Inputs    []string      // files in order; "-" is Stdin
	Stdin     io.Reader     // read for "-"
	Remote    *input.Remote // how s3:// inputs are read (nil: the SDK's defaults)
	PublicURL *encode.Scope // the folder the files are served from
	Scope     *encode.Scope // listed URLs must fall under it (nil: PublicURL)
	Sink      sink.Store    // where the files go
	Name      string        // file name stem
	MaxURLs   int           // per shard
	MaxBytes  int           // per shard, uncompressed, whole file
	Fanout    int           // entries per index
	// MaxNewsURLs bounds the URLs of a news sitemap (1..1000; 0: 1000).
	// Rows with a news item are also written, without it, to the regular
	// sitemaps.
	MaxNewsURLs int
	// NewsWindow is how old a news item may be, against Now, to be written
	// (0: DefaultNewsWindow); older ones lose their news item, not the URL.
	NewsWindow time.Duration
	Cut        shard.CutMode // where shards end: tight (the zero value) or stable
	// Sort orders the entries by their normalised loc before they are cut,
	// in bounded memory (spilling sorted runs to TmpDir), so that an export
	// in no stable order still gives stable shards.
	Sort bool
	// Dedup (implies Sort) keeps the first row, in input order, of each
	// normalised loc and rejects the others as encode.Duplicate.
	Dedup bool
	// TmpDir holds the sorted runs ("": os.TempDir()); SortMemory bounds
	// the entries held in memory (0: DefaultSortMemory).
	TmpDir     string
	SortMemory int
	Workers    int // encoding goroutines (0: GOMAXPROCS)
	GzipLevel  int // 1..9
	GzipProcs  int // goroutines per shard: 0 spreads each shard over all cores (pgzip), 1 compresses one shard per core
	LastmodTZ  *time.Location
	Columns    [input.NumColumns]string // input column names ("" = default)
	// MediaQuery is the media attribute of media-alternate links
	// ("": encode.DefaultMediaQuery).
	MediaQuery string
	// SchemaLocation adds xmlns:xsi and xsi:schemaLocation (sitemap.xsd or
	// siteindex.xsd, and the schema of each extension namespace declared)
	// to the start tag of every file; the bytes count in MaxBytes.
	SchemaLocation bool
	Rejects        io.Writer // CSV of rejected rows (nil: none)
	// HreflangReport receives, as CSV, every hreflang alternate Google
	// would ignore (see internal/hreflang), when the run's input carries
	// alternates (nil: counted in Report.Hreflang only).
	HreflangReport io.Writer
	Log            *slog.Logger // nil: discard
	Progress       *Progress    // live counters (nil: none)

	// KeepGenerations is how many earlier generations (per the manifest)
	// stay in place after the switch, so that crawlers that fetched an older
	// root moments ago still find its files. 0 deletes them at once.
	KeepGenerations int
	// MaxShrink is the fraction (0..1) by which the URL count may fall
	// against the published manifest; a larger fall is refused
	// (publish.ErrShrink).
	MaxShrink float64
	Force     bool // publish despite MaxShrink
	// LockTTL is how long the destination's lock outlives a run that died
	// without releasing it, where the store cannot see it die (S3); 0:
	// publish.DefaultLockTTL.
	LockTTL time.Duration
	// Now is the run's time: the index <lastmod> of every file whose content
	// changes, and the manifest's time (zero: the clock). Fixing it makes
	// runs reproducible.
	Now     time.Time
	DryRun  bool // everything but the writes; Report.Plan says what would happen (a Sink that is a *sink.DryRun is used as it is)
	Uploads int  // concurrent uploads to the sink (0: the sink's Connections)
	// Verify, when set, is called with the root index's name and bytes after
	// every other file is written and before the root is published; an
	// error fails the run and nothing new is published.
	Verify func(ctx context.Context, root string, data []byte) error
	// Switched is publish.Options.Switched: called after the switch, before
	// the prune, with the manifests before and after.
	Switched func(ctx context.Context, prev, next *publish.Manifest)
}

// DefaultNewsWindow is Config.NewsWindow's default: Google's news sitemaps
// list only articles "created in the last two days".
const DefaultNewsWindow = 48 * time.Hour

// MaxNewsURLs is the most URLs Google reads in one news sitemap.
const MaxNewsURLs = 1000

// Validate checks the limits of c against the protocol and the contract.
func (c *Config) Validate() error {
	switch {
	case len(c.Inputs) == 0:
		return errors.New("no input files")
	case c.PublicURL == nil:
		return errors.New("public URL is required")
	case c.Name == "" || !validName(c.Name):
		return fmt.Errorf("name %q: use letters, digits, '-', '_' and '.', not starting with '.'", c.Name)
	case c.MaxURLs < 1 || c.MaxURLs > 50000:
		return fmt.Errorf("max URLs %d: must be 1..50000", c.MaxURLs)
	case c.MaxBytes < 4096 || c.MaxBytes > 52428800:
		return fmt.Errorf("max bytes %d: must be 4096..52428800", c.MaxBytes)
	case c.Fanout < 1 || c.Fanout > 50000:
		return fmt.Errorf("index fanout %d: must be 1..50000", c.Fanout)
	case c.MaxNewsURLs < 0 || c.MaxNewsURLs > MaxNewsURLs:
		return fmt.Errorf("max news URLs %d: must be 1..%d", c.MaxNewsURLs, MaxNewsURLs)
	case c.NewsWindow < 0:
		return fmt.Errorf("news window %v: must be positive", c.NewsWindow)
	case c.GzipLevel < 1 || c.GzipLevel > 9:
		return fmt.Errorf("gzip level %d: must be 1..9", c.GzipLevel)
	case c.KeepGenerations < 0:
		return fmt.Errorf("keep generations %d: must be 0 or more", c.KeepGenerations)
	case !(c.MaxShrink >= 0 && c.MaxShrink <= 1):
		return fmt.Errorf("max shrink %g: must be 0..1 (0%%..100%%)", c.MaxShrink)
	case c.Uploads < 0:
		return fmt.Errorf("uploads %d: must be 1 or more", c.Uploads)
	}
	// Index <loc>s are the public URL plus a file name: both must fit the
	// protocol's 2,048 characters, and a full index its 50 MiB.
	longest := len(c.PublicURL.String()) + len(c.Name) + len("-index-0001-0123456789.xml") + 8
	if longest >= 2048 {
		return fmt.Errorf("public URL %s is too long: index <loc>s would reach %d characters (limit 2,047)", c.PublicURL, longest)
	}
	frame := len(shard.IndexHeaderOf(c.SchemaLocation)) + len(shard.IndexFooter)
	if perEntry := longest + len("<sitemap><loc></loc><lastmod>2006-01-02T15:04:05.000000000+00:00</lastmod></sitemap>\n"); c.Fanout*perEntry > 52428800-frame {
		return fmt.Errorf("index fanout %d: with this public URL an index could exceed 52,428,800 bytes; use at most %d", c.Fanout, (52428800-frame)/perEntry)
	}
	return nil
}

func validName(s string) bool {
	if s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

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

	mu       sync.Mutex
	files    []publish.File // by shard number - 1
	newsFile []publish.File // by news sitemap number - 1
	readOK   atomic.Bool    // every input was read to its end without error
	rowsRead atomic.Int64   // rows handed out by the inputs
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
		return rep, err
	}
	if err := cfg.Validate(); err != nil {
		return finish(err)
	}
	if cfg.Sink == nil {
		return finish(errors.New("no output sink"))
	}
	if cfg.Scope == nil {
		cfg.Scope = cfg.PublicURL
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.LastmodTZ == nil {
		cfg.LastmodTZ = time.UTC
	}
	if cfg.Uploads == 0 {
		cfg.Uploads = cfg.Sink.Connections()
	}
	if cfg.Now.IsZero() {
		cfg.Now = start // one clock reading: the news window and the manifest agree
	}
	if cfg.MaxNewsURLs == 0 {
		cfg.MaxNewsURLs = MaxNewsURLs
	}
	if cfg.NewsWindow == 0 {
		cfg.NewsWindow = DefaultNewsWindow
	}
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
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.progress == nil {
		r.progress = new(Progress)
	}
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
	r.depth = 4 * (cfg.Workers + 1)
	r.free = make(chan *Batch, r.depth)
	for range r.depth {
		r.free <- newBatch(input.DefaultChunk)
	}
	ns := r.namespaces
	if ns&encode.NSNews != 0 {
		// News items go to news sitemaps of their own, packed tight: they
		// are rewritten every run under fixed names, so stable cuts buy nothing.
		r.news = shard.NewCutterMode(cfg.MaxNewsURLs, cfg.MaxBytes, shard.URLSetHeaderSchema(encode.NSNews, cfg.SchemaLocation), shard.CutTight)
		ns &^= encode.NSNews
		r.rep.News = &NewsReport{
			Oldest: cfg.Now.Add(-cfg.NewsWindow).UTC().Format(time.RFC3339),
			Newest: cfg.Now.Add(encode.NewsSkew).UTC().Format(time.RFC3339),
		}
	}
	r.cutter = shard.NewCutterMode(cfg.MaxURLs, cfg.MaxBytes, shard.URLSetHeaderSchema(ns, cfg.SchemaLocation), cfg.Cut)

	r.hreflang = newReciprocity(r)

	g, ctx := errgroup.WithContext(ctx)
	toEncode := make(chan *Batch, cfg.Workers)
	toCut := make(chan *Batch, cfg.Workers)
	toCompress := make(chan cutShard, 1)
	toUpload := make(chan upload, cfg.Uploads)
	ncomp := 2 // pgzip uses every core for one shard: two, so one compresses while the other hands over
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

// read fills batches from the inputs, in order, decoding several at once
// (input.Parts): a part's rows are handed on in input order whatever the
// goroutines' race, so the output is the same as a read one by one.
func (r *run) read(ctx context.Context, out chan<- *Batch) error {
	var seq uint64
	argRows := make([]int64, len(r.cfg.Inputs))
	parts := input.Parts[*Batch]{
		Files: r.inputs, Stdin: r.cfg.Stdin, Opt: input.Options{Columns: r.cfg.Columns},
		// The parts waiting for their turn hold at most PartsAhead+1
		// batches each: together at most half of the pool, the rest is the
		// one's whose turn it is.
		Parallel: max(1, min(runtime.GOMAXPROCS(0), 1+r.depth/(2*(input.PartsAhead+1)))),
		Get: func(ctx context.Context) (*Batch, error) {
			select {
			case b := <-r.free:
				return b, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Put: func(b *Batch) {
			b.reset()
			r.free <- b
		},
		Fill: func(src input.Source, b *Batch) error {
			t := time.Now()
			err := src.Fill(&b.Batch, input.DefaultChunk)
			r.times.read.Add(int64(time.Since(t)))
			return err
		},
		Emit: func(_ int, b *Batch) error {
			r.rowsRead.Add(int64(b.Len()))
			b.Seq = seq
			seq++
			select {
			case out <- b:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Done: func(i int, rows int64) error {
			f := &r.inputs[i]
			// An empty part file in a folder is normal (Spark writes them); an
			// empty file named on its own, or a folder of empty parts, is not.
			if rows == 0 && !f.Listed {
				return fmt.Errorf("%s: %w", f.Name(), input.ErrEmptyInput)
			}
			argRows[f.Arg] += rows
			r.rep.Inputs = append(r.rep.Inputs, inputReport(f, rows))
			return nil
		},
	}
	if err := parts.Read(ctx); err != nil {
		return err
	}
	for arg, n := range argRows {
		if n == 0 {
			return fmt.Errorf("%s: %w", r.cfg.Inputs[arg], input.ErrEmptyInput)
		}
	}
	r.readOK.Store(true)
	return nil
}

// encode turns the rows of each batch into <url> entries or rejects.
func (r *run) encode(ctx context.Context, in <-chan *Batch, out chan<- *Batch) error {
	enc := encode.NewEncoder(r.cfg.Scope, r.cfg.LastmodTZ)
	if r.cfg.MediaQuery != "" {
		enc.SetMediaQuery(r.cfg.MediaQuery)
	}
	maxEntry, maxNews := r.cutter.MaxEntry(), 0
	if r.news != nil {
		enc.SetNewsWindow(r.cfg.Now.Add(-r.cfg.NewsWindow), r.cfg.Now)
		maxNews = r.news.MaxEntry()
	}
	for b := range in {
		t := time.Now()
		encodeBatch(enc, b, maxEntry, maxNews)
		r.times.encode.Add(int64(time.Since(t)))
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// encodeBatch encodes every row of b into b.Out, recording accepted entries
// and rejects, and their news entries into b.NewsOut; an entry longer than
// maxEntry rejects its row, a news entry longer than maxNews loses the news
// item (NewsInvalid). It does not allocate once b's buffers have grown.
func encodeBatch(enc *encode.Encoder, b *Batch, maxEntry, maxNews int) {
	refused := b.Rejected // rows the reader rejected itself
	for i := range b.Len() {
		if len(refused) > 0 && refused[0].Row == i {
			b.reject(i, refused[0].Reason, b.Field(input.Loc, i))
			refused = refused[1:]
			continue
		}
		f := encode.Fields{
			Loc:        b.Field(input.Loc, i),
			Lastmod:    b.Field(input.Lastmod, i),
			Changefreq: b.Field(input.Changefreq, i),
			Priority:   b.Field(input.Priority, i),
		}
		if len(b.Ext) > 0 {
			b.extRow = b.extRow[:0]
			for j := range b.Ext {
				b.extRow = append(b.extRow, b.ExtField(j, i))
			}
			f.Ext, f.ExtVals = b.Ext, b.extRow
		}
		start := len(b.Out)
		out, res := enc.AppendURL(b.Out, f)
		if res.NewsAt > 0 {
			// Split the news entry off: the regular entries stay back to back.
			news := out[res.NewsAt:]
			out = out[:res.NewsAt]
			switch {
			case len(out)-start > maxEntry: // the row is rejected below
			case len(news) > maxNews:
				res.Warnings |= encode.NewsInvalid
			default:
				b.NewsOut = append(b.NewsOut, news...)
				b.NewsEnds = append(b.NewsEnds, uint32(len(b.NewsOut)))
			}
		}
		if res.Reason == encode.OK && len(out)-start > maxEntry {
			res.Reason, out = encode.EntryTooLarge, out[:start]
		}
		b.Out = out
		for w := res.Warnings; w != 0; w &= w - 1 {
			b.Warnings[bits.TrailingZeros32(uint32(w))]++
		}
		if res.Reason != encode.OK {
			b.reject(i, res.Reason, f.Loc)
			continue
		}
		b.Ends = append(b.Ends, uint32(len(b.Out)))
		b.EntryLine = append(b.EntryLine, b.Line[i])
	}
}

// cutShard is a closed sitemap on its way to a compressor: a shard, or a
// news sitemap.
type cutShard struct {
	*shard.Sitemap
	news bool
}

// cut restores input order and packs entries into shards, and news entries
// into news sitemaps.
func (r *run) cut(ctx context.Context, in <-chan *Batch, out chan<- cutShard) error {
	var rejects *rejectWriter
	if r.cfg.Rejects != nil {
		rejects = newRejectWriter(r.cfg.Rejects)
	}
	var reasons [encode.NumReasons]int64
	var warnings [numWarnings]int64
	// Counted on every path: a failed run's report must still add up.
	defer func() {
		for i, n := range reasons {
			r.rep.Rejected.add(encode.Reason(i).String(), n)
		}
		for w, n := range warnings {
			r.rep.Warnings.add(encode.WarningName(w), n)
		}
	}()
	pending := make([]*Batch, r.depth) // a ring: the batches in flight are fewer than depth
	var next uint64
	var blocked time.Duration // waiting on the compressors is back-pressure, not cutting
	send := func(s *shard.Sitemap, news bool) error {
		t := time.Now()
		defer func() { blocked += time.Since(t) }()
		select {
		case out <- cutShard{s, news}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// room waits until the cutter may open another shard.
	room := func() error {
		t := time.Now()
		defer func() { blocked += time.Since(t) }()
		select {
		case <-r.shardRoom:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := room(); err != nil { // for the first shard
		return err
	}
	// place packs entries into shards and hands on each one closed.
	// pack adds ents to c and sends on every sitemap it closes: shards, or
	// (news) news sitemaps.
	newsSitemaps := 0
	pack := func(c *shard.Cutter, ents *shard.Entries, news bool) error {
		for k := 0; k < len(ents.Ends); {
			var s *shard.Sitemap
			if k, s = c.AddEntries(ents, k); s != nil {
				if news {
					newsSitemaps++
				} else if r.cfg.Fanout == 1 {
					return shard.ErrFanout // no index can list a second sitemap: fail now, not after the whole input
				}
				if err := send(s, news); err != nil {
					return err
				}
				if err := room(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	place := func(ents *shard.Entries) error { return pack(r.cutter, ents, false) }
	// placeNews packs a batch's news entries, in input order (also in a
	// sorted run: the news sitemaps are not part of its stable order).
	placeNews := func(b *Batch) error {
		ents := shard.Entries{Data: b.NewsOut, Ends: b.NewsEnds}
		if err := pack(r.news, &ents, true); err != nil {
			return err
		}
		r.rep.News.URLs += int64(len(ents.Ends))
		return nil
	}
	var sorted *sorter
	if r.cfg.Sort || r.cfg.Dedup {
		sorted = newSorter(r.cfg)
		defer sorted.close()
	}
	// The hreflang check takes the ordered batches and recycles them; a
	// sorted run's entries are added as they are placed, in output order.
	placeAll := place
	if h := r.hreflang; h != nil && sorted != nil {
		var ref uint64
		placeAll = func(ents *shard.Entries) error {
			if err := h.addEntries(ents, &ref); err != nil {
				return err
			}
			return place(ents)
		}
	}
	for b := range in {
		pending[b.Seq%uint64(r.depth)] = b
		for {
			b := pending[next%uint64(r.depth)]
			if b == nil || b.Seq != next {
				break
			}
			pending[next%uint64(r.depth)] = nil
			next++
			t := time.Now()
			if sorted != nil {
				if err := sorted.add(b); err != nil {
					return err
				}
			} else if err := place(&shard.Entries{Data: b.Out, Ends: b.Ends}); err != nil {
				return err
			}
			if r.news != nil {
				if err := placeNews(b); err != nil {
					return err
				}
			}
			for _, rj := range b.Rejects {
				reasons[rj.Reason]++
				if rejects != nil {
					if err := rejects.write(b.Source, rj.Line, rj.Reason, b.RejectBuf[rj.start:rj.end]); err != nil {
						return err
					}
				}
			}
			for w, n := range b.Warnings {
				warnings[w] += n
			}
			r.rep.Rows += int64(b.Len())
			r.rep.URLs += int64(len(b.Ends))
			r.progress.Rows.Add(int64(b.Len()))
			r.progress.URLs.Add(int64(len(b.Ends)))
			r.progress.Rejected.Add(int64(len(b.Rejects)))
			r.times.cut.Add(int64(time.Since(t) - blocked))
			blocked = 0
			if r.hreflang != nil && sorted == nil {
				r.hreflang.batches <- b // it recycles b
				continue
			}
			b.reset()
			r.free <- b
		}
	}
	if !r.readOK.Load() {
		// The input ended early: the stage that failed reports why.
		return nil
	}
	if sorted != nil {
		// Every batch is back in the pool: let them go, so that the merge
		// and the stages after it do not hold them beside the run readers
		// (the sorter collects before its merge).
		for len(r.free) > 0 {
			<-r.free
		}
		t := time.Now()
		dups, err := sorted.drain(placeAll, func(source string, line int64, loc []byte) error {
			reasons[encode.Duplicate]++
			if rejects != nil {
				return rejects.write(source, line, encode.Duplicate, loc)
			}
			return nil
		})
		r.rep.URLs -= dups
		r.progress.URLs.Add(-dups)
		r.progress.Rejected.Add(dups)
		r.times.cut.Add(int64(time.Since(t) - blocked))
		blocked = 0
		if err != nil {
			return err
		}
		r.rep.Sort = sorted.report()
	}
	if s := r.cutter.Flush(); s != nil {
		if err := send(s, false); err != nil {
			return err
		}
	}
	if r.news != nil {
		s := r.news.Flush()
		if s == nil && newsSitemaps == 0 {
			// No fresh article: an empty news sitemap keeps the name listed
			// (Google: it "will not cause any problems").
			s = &shard.Sitemap{Num: 1, Data: []byte(r.news.Header() + shard.Footer)}
		}
		if s != nil {
			if err := send(s, true); err != nil {
				return err
			}
		}
	}
	if rejects != nil {
		if err := rejects.flush(); err != nil {
			return err
		}
	}
	return nil
}

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
		files, cutter := &r.files, r.cutter
		if s.news {
			files, cutter = &r.newsFile, r.news
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

// uploadGrace bounds how long uploads in flight may go on after the run
// has failed or been interrupted.
const uploadGrace = 30 * time.Second

// detach returns a context that is canceled grace after ctx is, so work in
// flight when ctx ends can finish.
func detach(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return dctx, func() { stop(); cancel() }
}

// upload stores the shards it receives under putCtx, and starts no new
// upload once ctx is done.
func (r *run) upload(ctx, putCtx context.Context, in <-chan upload) error {
	for u := range in {
		if ctx.Err() != nil {
			r.gzFree <- u.data
			continue // drain: the run has failed
		}
		t := time.Now()
		var err error
		if u.news {
			err = r.tx.PutNews(putCtx, u.file, u.data)
		} else {
			err = r.tx.PutShard(putCtx, u.file, u.data)
		}
		r.gzFree <- u.data
		if err != nil {
			return err
		}
		r.times.write.Add(int64(time.Since(t)))
		r.progress.Shards.Add(1)
	}
	return nil
}

// publish commits the transaction with the shards the run wrote.
func (r *run) publish(ctx context.Context) error {
	rep := r.rep
	rep.Shards = len(r.files)
	if rep.News != nil {
		rep.News.Sitemaps = len(r.newsFile)
	}
	if rep.URLs == 0 {
		return fmt.Errorf("%w: %d rows read, %d rejected", ErrNoURLs, rep.Rows, rep.Rejected.Total)
	}
	res, err := r.tx.Commit(ctx, publish.Set{
		Files: r.files, News: r.newsFile, Rows: rep.Rows, URLs: rep.URLs, Rejected: rep.Rejected.Total,
		Fanout: r.cfg.Fanout, Base: r.cfg.PublicURL.String(), SchemaLocation: r.cfg.SchemaLocation,
	})
	rep.Published, rep.Generation, rep.Indexes, rep.Root = res.Published, res.Generation, res.Indexes, res.Root
	rep.Submit, rep.Files, rep.Deleted = res.Submit, res.Files, res.Deleted
	rep.ShardsNew, rep.ShardsUnchanged, rep.ShardsRemoved, rep.RobotsChanged = res.ShardsNew, res.ShardsUnchanged, res.ShardsRemoved, res.RobotsChanged
	return err
}
