// Package pipeline turns input rows into a published sitemap set: it reads
// inputs in batches, encodes them on all cores, restores input order, cuts
// shards, compresses them, uploads them while the next ones are being made,
// and publishes shards, indexes, the manifest and the root index, in that
// order; then it deletes what no kept generation references.
package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// ErrNoURLs reports a run in which no row was accepted; nothing is published.
// Force does not override it: a sitemap index must list at least one sitemap.
var ErrNoURLs = errors.New("no URLs to publish")

// ErrPublishedIncomplete reports a run whose new root index is live but whose
// last steps (the robots lines) failed. Report.Published is true.
var ErrPublishedIncomplete = errors.New("the new sitemap set is published")

// ErrShrink reports a run whose URL count fell by more than Config.MaxShrink
// against the published manifest; nothing is published unless Config.Force.
var ErrShrink = errors.New("URL count fell too far")

// Config is a run's whole configuration.
type Config struct {
	Inputs    []string      // files in order; "-" is Stdin
	Stdin     io.Reader     // read for "-"
	PublicURL *encode.Scope // the folder the files are served from
	Scope     *encode.Scope // listed URLs must fall under it (nil: PublicURL)
	Sink      sink.Sink     // where the files go
	Name      string        // file name stem
	MaxURLs   int           // per shard
	MaxBytes  int           // per shard, uncompressed, whole file
	Fanout    int           // entries per index
	Workers   int           // encoding goroutines (0: GOMAXPROCS)
	GzipLevel int           // 1..9
	GzipProcs int           // goroutines per shard: 0 spreads each shard over all cores (pgzip), 1 compresses one shard per core
	LastmodTZ *time.Location
	Columns   [input.NumColumns]string // input column names ("" = default)
	// MediaQuery is the media attribute of media-alternate links
	// ("": encode.DefaultMediaQuery).
	MediaQuery string
	Rejects    io.Writer    // CSV of rejected rows (nil: none)
	Log        *slog.Logger // nil: discard
	Progress   *Progress    // live counters (nil: none)

	// KeepGenerations is how many earlier generations (per the manifest)
	// stay in place after the switch, so that crawlers that fetched an older
	// root moments ago still find its files. 0 deletes them at once.
	KeepGenerations int
	// MaxShrink is the fraction (0..1) by which the URL count may fall
	// against the published manifest; a larger fall is refused (ErrShrink).
	MaxShrink float64
	Force     bool // publish despite MaxShrink
	DryRun    bool // everything but the writes; Report.Plan says what would happen
	Uploads   int  // concurrent uploads to the sink (0: DefaultUploads, or LocalUploads for a sink.Local)
	// Verify, when set, is called with the root index's name and bytes after
	// every other file is written and before the root is published; an
	// error fails the run and nothing new is published.
	Verify func(ctx context.Context, root string, data []byte) error
}

// DefaultUploads is the number of concurrent uploads when Config.Uploads is
// 0: enough to hide an object store's latency.
const DefaultUploads = 8

// LocalUploads replaces DefaultUploads for a local folder, where a write
// takes a few milliseconds: more would only hold more shards in memory.
const LocalUploads = 2

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
	if perEntry := longest + len("<sitemap><loc></loc><lastmod>2006-01-02T15:04:05.000000000+00:00</lastmod></sitemap>\n"); c.Fanout*perEntry > 52428800-200 {
		return fmt.Errorf("index fanout %d: with this public URL an index could exceed 52,428,800 bytes; use at most %d", c.Fanout, (52428800-200)/perEntry)
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

	start   time.Time
	before  []string                // the sink's files when the run started
	prev    *Manifest               // the published manifest, nil if none
	prevRaw []byte                  // its bytes, restored if the run fails after replacing it
	known   map[string]ManifestFile // files of kept generations present in the sink

	mu       sync.Mutex
	listed   []shard.Listed // by shard number - 1
	files    []ManifestFile // by shard number - 1
	written  []string       // names this run put, for cleanup on failure
	manifest bool           // the new manifest is in place
	unsure   bool           // the root write failed and may have landed: keep everything
	switched bool           // the new root is in place: no cleanup after this
	readOK   atomic.Bool    // every input was read to its end without error
}

// Run reads the inputs and publishes a complete sitemap set to cfg.Sink, or
// fails leaving what the sink served before intact and reachable. The report
// is returned in both cases.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	rep := &Report{GzipLevel: cfg.GzipLevel,
		Rejected: Counts{ByReason: map[string]int64{}}, Warnings: Counts{ByReason: map[string]int64{}}}
	finish := func(err error) (*Report, error) {
		rep.Seconds = time.Since(start).Seconds()
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
		cfg.Uploads = DefaultUploads
		if _, ok := cfg.Sink.(*sink.Local); ok {
			cfg.Uploads = LocalUploads
		}
	}
	r := &run{cfg: cfg, log: cfg.Log, progress: cfg.Progress, rep: rep, start: start}
	rep.DryRun = cfg.DryRun
	if cfg.DryRun {
		rep.Plan = &Plan{Upload: []string{}, Skip: []string{}, Delete: []string{}}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.progress == nil {
		r.progress = new(Progress)
	}
	files, err := input.Expand(cfg.Inputs)
	if err != nil {
		return finish(err)
	}
	r.inputs = files
	if r.namespaces, err = input.Probe(ctx, files, cfg.Stdin, input.Options{Columns: cfg.Columns}); err != nil {
		return finish(err)
	}
	defer input.Release(files) // those a failed read did not reach
	before, err := cfg.Sink.List(ctx)
	if err != nil {
		return finish(fmt.Errorf("list %s: %w", cfg.Sink, err))
	}
	r.before = before
	if r.prev, r.prevRaw, err = readManifest(ctx, cfg.Sink, cfg.Name); err != nil {
		return finish(fmt.Errorf("%s: %w", cfg.Sink, err))
	}
	r.known = knownFiles(r.prev, before, cfg.Name)
	err = r.generate(ctx)
	rep.StageSeconds = r.times.seconds()
	if err == nil {
		err = r.publish(ctx)
	}
	if err != nil {
		r.cleanup(ctx, before)
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
	r.cutter = shard.NewCutterHeader(cfg.MaxURLs, cfg.MaxBytes, shard.URLSetHeader(r.namespaces))

	g, ctx := errgroup.WithContext(ctx)
	toEncode := make(chan *Batch, cfg.Workers)
	toCut := make(chan *Batch, cfg.Workers)
	toCompress := make(chan *shard.Shard, 1)
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
	g.Go(func() error {
		defer close(toCompress)
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

// read fills batches from the inputs, in order.
func (r *run) read(ctx context.Context, out chan<- *Batch) error {
	var seq uint64
	opt := input.Options{Columns: r.cfg.Columns}
	argRows := make([]int64, len(r.cfg.Inputs))
	for i := range r.inputs {
		f := &r.inputs[i]
		src, err := input.Open(f, r.cfg.Stdin, opt)
		if err != nil {
			return err
		}
		name := f.Name()
		for {
			var b *Batch
			select {
			case b = <-r.free:
			case <-ctx.Done():
				src.Close()
				return ctx.Err()
			}
			t := time.Now()
			err := src.Fill(&b.Batch, input.DefaultChunk)
			r.times.read.Add(int64(time.Since(t)))
			if err != nil {
				b.reset()
				r.free <- b
				if errors.Is(err, io.EOF) {
					break
				}
				src.Close()
				return err
			}
			b.Seq = seq
			seq++
			select {
			case out <- b:
			case <-ctx.Done():
				src.Close()
				return ctx.Err()
			}
		}
		rows := src.Rows()
		if err := src.Close(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		// An empty part file in a folder is normal (Spark writes them); an
		// empty file named on its own, or a folder of empty parts, is not.
		if rows == 0 && !f.Listed {
			return fmt.Errorf("%s: %w", name, input.ErrEmptyInput)
		}
		argRows[f.Arg] += rows
		r.rep.Inputs = append(r.rep.Inputs, InputReport{Name: name, Rows: rows})
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
	maxEntry := r.cutter.MaxEntry()
	for b := range in {
		t := time.Now()
		encodeBatch(enc, b, maxEntry)
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
// and rejects. It does not allocate once b's buffers have grown.
func encodeBatch(enc *encode.Encoder, b *Batch, maxEntry int) {
	for i := range b.Len() {
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
		if res.Reason == encode.OK && len(out)-start > maxEntry {
			res.Reason, out = encode.EntryTooLarge, out[:start]
		}
		b.Out = out
		for w := res.Warnings; w != 0; w &= w - 1 {
			b.Warnings[bits.TrailingZeros32(uint32(w))]++
		}
		if res.Reason != encode.OK {
			rs := len(b.RejectBuf)
			b.RejectBuf = append(b.RejectBuf, f.Loc...)
			b.Rejects = append(b.Rejects, Reject{Line: b.Line[i], Reason: res.Reason, start: uint32(rs), end: uint32(len(b.RejectBuf))})
			continue
		}
		b.Ends = append(b.Ends, uint32(len(b.Out)))
		b.LmKey = append(b.LmKey, res.LastmodKey)
		b.LmAt = append(b.LmAt, uint32(res.LastmodAt))
		b.LmLen = append(b.LmLen, uint16(res.LastmodLen))
	}
}

// cut restores input order and packs entries into shards.
func (r *run) cut(ctx context.Context, in <-chan *Batch, out chan<- *shard.Shard) error {
	var rejects *rejectWriter
	if r.cfg.Rejects != nil {
		rejects = newRejectWriter(r.cfg.Rejects)
	}
	var reasons [encode.NumReasons]int64
	var warnings [numWarnings]int64
	pending := make([]*Batch, r.depth) // a ring: the batches in flight are fewer than depth
	var next uint64
	var blocked time.Duration // waiting on the compressors is back-pressure, not cutting
	send := func(s *shard.Shard) error {
		t := time.Now()
		defer func() { blocked += time.Since(t) }()
		select {
		case out <- s:
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
			ents := shard.Entries{Data: b.Out, Ends: b.Ends, Keys: b.LmKey, LmAt: b.LmAt, LmLen: b.LmLen}
			for k := 0; k < len(b.Ends); {
				var s *shard.Shard
				if k, s = r.cutter.AddEntries(&ents, k); s != nil {
					if r.cfg.Fanout == 1 {
						return shard.ErrFanout // no index can list a second sitemap: fail now, not after the whole input
					}
					if err := send(s); err != nil {
						return err
					}
					if err := room(); err != nil {
						return err
					}
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
			b.reset()
			r.free <- b
		}
	}
	if !r.readOK.Load() {
		// The input ended early: the stage that failed reports why.
		return nil
	}
	if s := r.cutter.Flush(); s != nil {
		if err := send(s); err != nil {
			return err
		}
	}
	for i, n := range reasons {
		r.rep.Rejected.add(encode.Reason(i).String(), n)
	}
	for w, n := range warnings {
		r.rep.Warnings.add(encode.WarningName(w), n)
	}
	if rejects != nil {
		if err := rejects.flush(); err != nil {
			return err
		}
	}
	return nil
}

// upload is a compressed shard on its way to the sink.
type upload struct {
	file ManifestFile
	data []byte
}

// compress gzips shards and hands them to the uploaders.
func (r *run) compress(ctx context.Context, in <-chan *shard.Shard, out chan<- upload) error {
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
		name := shard.SumName(r.cfg.Name, "", s.Num, 6, sum, ".xml.gz")
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
		u := upload{file: describeSum(name, len(gz), sum), data: append(buf[:0], gz...)}
		r.times.compress.Add(int64(time.Since(t)))
		r.mu.Lock()
		for len(r.listed) < s.Num {
			r.listed = append(r.listed, shard.Listed{})
			r.files = append(r.files, ManifestFile{})
		}
		r.listed[s.Num-1] = shard.Listed{Name: name, LastmodKey: s.LastmodKey, Lastmod: append([]byte(nil), s.Lastmod()...)}
		r.files[s.Num-1] = u.file
		r.rep.BytesUncompressed += int64(len(s.Data))
		r.rep.BytesCompressed += int64(len(gz))
		r.mu.Unlock()
		r.cutter.Recycle(s)
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
		err := r.store(putCtx, u.file, u.data, true)
		r.gzFree <- u.data
		if err != nil {
			return err
		}
		r.times.write.Add(int64(time.Since(t)))
		r.progress.Shards.Add(1)
	}
	return nil
}

// knownFiles returns the files of the generations prev describes that the
// sink still holds: a file of this run with the same name, size and SHA-256
// need not be uploaded again. Fixed names (root, robots) are always written.
func knownFiles(prev *Manifest, listed []string, stem string) map[string]ManifestFile {
	known := map[string]ManifestFile{}
	if prev == nil {
		return known
	}
	present := make(map[string]bool, len(listed))
	for _, n := range listed {
		present[n] = true
	}
	owned := sink.Owned(stem)
	add := func(files []ManifestFile) {
		for _, f := range files {
			if present[f.Name] && f.SHA256 != "" && owned.MatchString(f.Name) {
				known[f.Name] = f
			}
		}
	}
	add(prev.Files)
	for _, g := range prev.Previous {
		add(g.Files)
	}
	return known
}

// store puts data under f.Name, unless the sink already holds these bytes
// under that name (skip unchanged) or the run is a dry run, and counts it.
// Names it writes are recorded for cleanup on failure; fixed names (root,
// robots, manifest) go through putFixed instead.
func (r *run) store(ctx context.Context, f ManifestFile, data []byte, isShard bool) error {
	r.mu.Lock()
	k, ok := r.known[f.Name]
	skip := ok && k.Size == f.Size && k.SHA256 == f.SHA256
	if skip || r.cfg.DryRun {
		if skip {
			r.rep.Skipped.add(f.Size, isShard)
		} else {
			r.rep.Uploaded.add(f.Size, isShard)
		}
		if p := r.rep.Plan; p != nil {
			if skip {
				p.Skip = append(p.Skip, f.Name)
			} else {
				p.Upload = append(p.Upload, f.Name)
			}
		}
		r.mu.Unlock()
		return nil
	}
	r.written = append(r.written, f.Name)
	r.mu.Unlock()
	if err := r.cfg.Sink.Put(ctx, f.Name, data); err != nil {
		return fmt.Errorf("write %s: %w", f.Name, err)
	}
	r.mu.Lock()
	r.rep.Uploaded.add(f.Size, isShard)
	r.mu.Unlock()
	return nil
}

// putFixed writes a file with a fixed name: always uploaded, never deleted
// by cleanup.
func (r *run) putFixed(ctx context.Context, name string, data []byte) error {
	if !r.cfg.DryRun {
		if err := r.cfg.Sink.Put(ctx, name, data); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.DryRun {
		r.rep.Plan.Upload = append(r.rep.Plan.Upload, name)
	}
	r.rep.Uploaded.add(int64(len(data)), false)
	return nil
}

// putRoot writes the root index: the switch. It is not canceled half way
// (a PUT canceled on the client may still land); after a failure it reads
// the root back: if the new root landed after all the run goes on as
// switched, and if that cannot be known the run keeps every file it wrote.
func (r *run) putRoot(ctx context.Context, name string, data []byte) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := r.putFixed(pctx, name, data)
	if err == nil || r.cfg.DryRun {
		return err
	}
	got, gerr := r.cfg.Sink.Get(pctx, name)
	switch {
	case gerr == nil && bytes.Equal(got, data):
		r.log.Warn("the root index write reported an error but the new root is in place", "err", err)
		return nil
	case gerr != nil && !errors.Is(gerr, fs.ErrNotExist):
		r.mu.Lock()
		r.unsure = true
		r.mu.Unlock()
		return fmt.Errorf("%w (and whether the new root is in place is unknown: %v; its files are kept, the next run cleans up)", err, gerr)
	}
	return err
}

// checkShrink refuses a run whose URL count fell by more than MaxShrink
// against the published manifest.
func (r *run) checkShrink() error {
	if r.prev == nil || r.cfg.Force || r.prev.URLs == 0 {
		return nil
	}
	urls, was := r.rep.URLs, r.prev.URLs
	if float64(urls) >= float64(was)*(1-r.cfg.MaxShrink) {
		return nil
	}
	return fmt.Errorf("%w: %d URLs, the published set (generation %d) has %d: -%.1f%%, more than the allowed %g%%; nothing published (force to publish anyway)",
		ErrShrink, urls, r.prev.Generation, was, 100*float64(was-urls)/float64(was), 100*r.cfg.MaxShrink)
}

func (r *run) syncSink() error {
	if s, ok := r.cfg.Sink.(interface{ Sync() error }); ok && !r.cfg.DryRun {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", r.cfg.Sink, err)
		}
	}
	return nil
}

// publish writes the intermediate indexes, the manifest, the root index
// and the robots lines, then deletes what neither this generation nor a kept
// earlier one references.
func (r *run) publish(ctx context.Context) error {
	rep := r.rep
	rep.Shards = len(r.listed)
	if rep.URLs == 0 {
		return fmt.Errorf("%w: %d rows read, %d rejected", ErrNoURLs, rep.Rows, rep.Rejected.Total)
	}
	if err := r.checkShrink(); err != nil {
		return err
	}
	base := r.cfg.PublicURL.String()
	root := r.cfg.Name + ".xml"
	indexes, err := shard.Plan(r.listed, r.cfg.Fanout, r.cfg.PublicURL, r.cfg.Name, root)
	if err != nil {
		return err
	}
	files := append([]ManifestFile(nil), r.files...)
	for _, l := range r.listed {
		rep.Files = append(rep.Files, l.Name)
	}
	var robots []byte
	for _, ix := range indexes {
		if ix.Direct {
			rep.Submit = append(rep.Submit, base+ix.Name)
			robots = append(robots, "Sitemap: "+base+ix.Name+"\n"...)
		}
	}
	// The shards' names must be durable before an index names them.
	if err := r.syncSink(); err != nil {
		return err
	}
	rootIx := indexes[len(indexes)-1]
	for _, ix := range indexes[:len(indexes)-1] {
		f := describe(ix.Name, ix.Data)
		if err := r.store(ctx, f, ix.Data, false); err != nil {
			return err
		}
		files = append(files, f)
		rep.Files = append(rep.Files, ix.Name)
	}
	if r.cfg.Verify != nil {
		if err := r.cfg.Verify(ctx, root, rootIx.Data); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	robotsName := r.cfg.Name + "-robots.txt"
	files = append(files, describe(root, rootIx.Data), describe(robotsName, robots))
	m := r.newManifest(files, len(indexes))
	raw, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	// The manifest goes in before the root: should the run die between the
	// two, the next run still knows the files of the published root (they are
	// the manifest's previous generation) and keeps them for the grace period.
	if err := r.putFixed(ctx, manifestName(r.cfg.Name), append(raw, '\n')); err != nil {
		return err
	}
	r.mu.Lock()
	r.manifest = true
	r.mu.Unlock()
	if err := r.syncSink(); err != nil {
		return err
	}
	if err := r.putRoot(ctx, root, rootIx.Data); err != nil {
		return err
	}
	r.switched = true
	rep.Published = true
	rep.Generation = m.Generation
	rep.Indexes = len(indexes)
	rep.Root = base + root
	rep.Files = append(rep.Files, root)

	// The new set is live: finish even if the run is being cancelled, the
	// remaining steps take milliseconds.
	ctx = context.WithoutCancel(ctx)
	if err := r.putFixed(ctx, robotsName, robots); err != nil {
		// Skip the prune: the old robots lines still name existing indexes.
		return fmt.Errorf("%w at %s, but writing %s failed (it still names the previous indexes, which are kept): %w",
			ErrPublishedIncomplete, rep.Root, robotsName, err)
	}
	rep.Files = append(rep.Files, robotsName, manifestName(r.cfg.Name))

	keep := map[string]bool{}
	for _, f := range m.Files {
		keep[f.Name] = true
	}
	for _, g := range m.Previous {
		for _, f := range g.Files {
			keep[f.Name] = true
		}
	}
	if r.cfg.DryRun {
		plan, err := sink.PrunePlan(ctx, r.cfg.Sink, r.cfg.Name, keep)
		if err != nil {
			return err
		}
		rep.Plan.Delete = append(rep.Plan.Delete, plan...)
		return nil
	}
	deleted, err := sink.Prune(ctx, r.cfg.Sink, r.cfg.Name, keep)
	rep.Deleted = deleted
	if err != nil {
		r.log.Warn("cleanup of files no kept generation lists failed; the next run retries", "err", err)
	}
	return nil
}

// newManifest describes this generation and the earlier ones it keeps.
func (r *run) newManifest(files []ManifestFile, indexes int) *Manifest {
	rep := r.rep
	m := &Manifest{
		Version: ManifestVersion, Generation: 1, Time: r.start.UTC().Truncate(time.Millisecond),
		Seconds: time.Since(r.start).Seconds(), Rows: rep.Rows, URLs: rep.URLs, Rejected: rep.Rejected.Total,
		Shards: rep.Shards, Indexes: indexes, Root: r.cfg.Name + ".xml", Files: files,
	}
	var gens []Generation
	if r.prev != nil {
		m.Generation = r.prev.Generation + 1
		gens = append(gens, Generation{Generation: r.prev.Generation, Time: r.prev.Time, Files: r.prev.Files})
		gens = append(gens, r.prev.Previous...)
	} else {
		// A set published without a manifest (an older sitemapgen, or the
		// first run): its files are the previous generation, kept likewise.
		owned := sink.Owned(r.cfg.Name)
		var old []ManifestFile
		for _, n := range r.before {
			if owned.MatchString(n) && !strings.HasPrefix(n, ".") {
				old = append(old, ManifestFile{Name: n})
			}
		}
		if len(old) > 0 {
			gens = append(gens, Generation{Files: old})
		}
	}
	m.Previous = gens[:min(len(gens), r.cfg.KeepGenerations)]
	return m
}

// cleanup removes the files a failed run wrote that were not there before
// (nothing published references them), puts the previous manifest back if
// the run had replaced it, and aborts incomplete uploads it left.
func (r *run) cleanup(ctx context.Context, before []string) {
	if r.switched || r.cfg.DryRun {
		return
	}
	had := make(map[string]bool, len(before))
	for _, n := range before {
		had[n] = true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	r.mu.Lock()
	written, manifest, unsure := r.written, r.manifest, r.unsure
	r.mu.Unlock()
	if unsure {
		r.log.Warn("cleanup after failure skipped: the new root may be in place; the next run cleans up")
		return
	}
	for _, n := range written {
		if had[n] {
			continue
		}
		if err := r.cfg.Sink.Delete(ctx, n); err != nil {
			r.log.Warn("cleanup after failure", "file", n, "err", err)
		}
	}
	if manifest {
		name := manifestName(r.cfg.Name)
		var err error
		if r.prevRaw != nil {
			err = r.cfg.Sink.Put(ctx, name, r.prevRaw)
		} else {
			err = r.cfg.Sink.Delete(ctx, name)
		}
		if err != nil {
			r.log.Warn("cleanup after failure: restore the manifest", "file", name, "err", err)
		}
	}
	if a, ok := r.cfg.Sink.(sink.Aborter); ok {
		if _, err := a.AbortIncomplete(ctx, sink.Owned(r.cfg.Name).MatchString); err != nil {
			r.log.Warn("cleanup after failure: abort incomplete uploads", "err", err)
		}
	}
}
