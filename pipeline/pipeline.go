// Package pipeline turns input rows into a published sitemap set: it reads
// inputs in batches, encodes them on all cores, restores input order, cuts
// shards, compresses them and publishes shards, indexes and the root index,
// in that order.
package pipeline

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// ErrNoURLs reports a run in which no row was accepted; nothing is published.
var ErrNoURLs = errors.New("no URLs to publish")

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
	LastmodTZ *time.Location
	Columns   [NumColumns]string // input column names ("" = default)
	Rejects   io.Writer          // CSV of rejected rows (nil: none)
	Log       *slog.Logger       // nil: discard
	Progress  *Progress          // live counters (nil: none)
	// Verify, when set, is called with the root index's name and bytes after
	// every other file is written and before the root is published; an
	// error fails the run and nothing new is published.
	Verify func(ctx context.Context, root string, data []byte) error
}

// batchBytes is the input read into one batch: big enough that per-batch
// costs vanish, small enough that the reorder window stays a few MiB.
const batchBytes = 1 << 20

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
	free     chan *Batch // recycled batches; its capacity bounds the batches in flight
	depth    int
	cutter   *shard.Cutter

	mu       sync.Mutex
	listed   []shard.Listed // by shard number - 1
	written  []string       // names this run put, for cleanup on failure
	switched bool           // the new root is in place: no cleanup after this
}

// Run reads the inputs and publishes a complete sitemap set to cfg.Sink, or
// fails leaving what the sink served before intact and reachable. The report
// is returned in both cases.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	rep := &Report{GzipLevel: cfg.GzipLevel}
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
	r := &run{cfg: cfg, log: cfg.Log, progress: cfg.Progress, rep: rep}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.progress == nil {
		r.progress = new(Progress)
	}
	if err := checkInputs(cfg.Inputs); err != nil {
		return finish(err)
	}
	before, err := cfg.Sink.List(ctx)
	if err != nil {
		return finish(fmt.Errorf("list %s: %w", cfg.Sink, err))
	}
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
		r.free <- new(Batch)
	}
	r.cutter = shard.NewCutter(cfg.MaxURLs, cfg.MaxBytes)

	g, ctx := errgroup.WithContext(ctx)
	toEncode := make(chan *Batch, cfg.Workers)
	toCut := make(chan *Batch, cfg.Workers)
	toCompress := make(chan *shard.Shard, 1)

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
	// Two compressors: one compresses while the other writes.
	for range 2 {
		g.Go(func() error { return r.compress(ctx, toCompress) })
	}
	return g.Wait()
}

// read fills batches from the inputs, in order.
func (r *run) read(ctx context.Context, out chan<- *Batch) error {
	var seq uint64
	opt := CSVOptions{Columns: r.cfg.Columns}
	for _, name := range r.cfg.Inputs {
		in, err := openInput(name, r.cfg.Stdin)
		if err != nil {
			return err
		}
		opt.Lines = in.lines
		sc := NewCSVScanner(in.r, in.name, opt)
		for {
			var b *Batch
			select {
			case b = <-r.free:
			case <-ctx.Done():
				in.close()
				return ctx.Err()
			}
			t := time.Now()
			err := sc.Fill(b, batchBytes)
			r.times.read.Add(int64(time.Since(t)))
			if err != nil {
				b.reset()
				r.free <- b
				if errors.Is(err, io.EOF) {
					break
				}
				in.close()
				return err
			}
			b.Seq = seq
			seq++
			select {
			case out <- b:
			case <-ctx.Done():
				in.close()
				return ctx.Err()
			}
		}
		rows := sc.Rows()
		if err := in.close(); err != nil {
			return fmt.Errorf("%s: %w", in.name, err)
		}
		if rows == 0 {
			return fmt.Errorf("%s: %w", in.name, ErrEmptyInput)
		}
		r.rep.Inputs = append(r.rep.Inputs, InputReport{Name: in.name, Rows: rows})
	}
	return nil
}

// encode turns the rows of each batch into <url> entries or rejects.
func (r *run) encode(ctx context.Context, in <-chan *Batch, out chan<- *Batch) error {
	enc := encode.NewEncoder(r.cfg.Scope, r.cfg.LastmodTZ)
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

func field(b *Batch, c Column, i int) []byte {
	if i < len(b.Fields[c]) {
		return b.Fields[c][i]
	}
	return nil
}

// encodeBatch encodes every row of b into b.Out, recording accepted entries
// and rejects. It does not allocate once b's buffers have grown.
func encodeBatch(enc *encode.Encoder, b *Batch, maxEntry int) {
	for i := range b.Len() {
		f := encode.Fields{
			Loc:        field(b, Loc, i),
			Lastmod:    field(b, Lastmod, i),
			Changefreq: field(b, Changefreq, i),
			Priority:   field(b, Priority, i),
		}
		start := len(b.Out)
		out, res := enc.AppendURL(b.Out, f)
		if res.Reason == encode.OK && len(out)-start > maxEntry {
			res.Reason, out = encode.EntryTooLarge, out[:start]
		}
		b.Out = out
		for w := range numWarnings {
			if res.Warnings&(1<<w) != 0 {
				b.Warnings[w]++
			}
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
	var rejects *csv.Writer
	if r.cfg.Rejects != nil {
		rejects = csv.NewWriter(r.cfg.Rejects)
		if err := rejects.Write([]string{"source", "row", "reason", "value"}); err != nil {
			return fmt.Errorf("rejects: %w", err)
		}
	}
	var reasons [encode.NumReasons]int64
	var warnings [numWarnings]int64
	pending := make([]*Batch, r.depth) // a ring: the batches in flight are fewer than depth
	var next uint64
	send := func(s *shard.Shard) error {
		select {
		case out <- s:
			return nil
		case <-ctx.Done():
			return ctx.Err()
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
			prev := uint32(0)
			for k, end := range b.Ends {
				at := b.LmAt[k]
				s := r.cutter.Add(b.Out[prev:end], b.LmKey[k], b.Out[at:at+uint32(b.LmLen[k])])
				prev = end
				if s != nil {
					if err := send(s); err != nil {
						return err
					}
				}
			}
			for _, rj := range b.Rejects {
				reasons[rj.Reason]++
				if rejects != nil {
					rejects.Write([]string{b.Source, strconv.FormatInt(rj.Line, 10), rj.Reason.String(), string(b.RejectBuf[rj.start:rj.end])})
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
			r.times.cut.Add(int64(time.Since(t)))
			b.reset()
			r.free <- b
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
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
		rejects.Flush()
		if err := rejects.Error(); err != nil {
			return fmt.Errorf("rejects: %w", err)
		}
	}
	return nil
}

// compress gzips shards and writes them to the sink.
func (r *run) compress(ctx context.Context, in <-chan *shard.Shard) error {
	c, err := shard.NewCompressor(r.cfg.GzipLevel, 0)
	if err != nil {
		return err
	}
	for s := range in {
		t := time.Now()
		gz, err := c.Compress(s.Data)
		if err != nil {
			return fmt.Errorf("shard %d: %w", s.Num, err)
		}
		r.times.compress.Add(int64(time.Since(t)))
		name := shard.ContentName(r.cfg.Name, "", s.Num, 6, gz, ".xml.gz")
		t = time.Now()
		if err := r.put(ctx, name, gz); err != nil {
			return err
		}
		r.times.write.Add(int64(time.Since(t)))
		r.mu.Lock()
		for len(r.listed) < s.Num {
			r.listed = append(r.listed, shard.Listed{})
		}
		r.listed[s.Num-1] = shard.Listed{Name: name, LastmodKey: s.LastmodKey, Lastmod: append([]byte(nil), s.Lastmod()...)}
		r.rep.BytesUncompressed += int64(len(s.Data))
		r.rep.BytesCompressed += int64(len(gz))
		r.mu.Unlock()
		r.progress.Shards.Add(1)
		r.cutter.Recycle(s)
	}
	return nil
}

func (r *run) put(ctx context.Context, name string, data []byte) error {
	r.mu.Lock()
	r.written = append(r.written, name)
	r.mu.Unlock()
	if err := r.cfg.Sink.Put(ctx, name, data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// publish writes the index files, root last, then the robots lines, and
// deletes what the new root no longer references.
func (r *run) publish(ctx context.Context) error {
	rep := r.rep
	rep.Shards = len(r.listed)
	if rep.URLs == 0 {
		return fmt.Errorf("%w: %d rows read, %d rejected", ErrNoURLs, rep.Rows, rep.Rejected.Total)
	}
	base := r.cfg.PublicURL.String()
	root := r.cfg.Name + ".xml"
	indexes, err := shard.Plan(r.listed, r.cfg.Fanout, base, r.cfg.Name, root)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, l := range r.listed {
		keep[l.Name] = true
		rep.Files = append(rep.Files, l.Name)
	}
	var robots []byte
	for _, ix := range indexes {
		if ix.Direct {
			rep.Submit = append(rep.Submit, base+ix.Name)
			robots = append(robots, "Sitemap: "+base+ix.Name+"\n"...)
		}
	}
	if s, ok := r.cfg.Sink.(interface{ Sync() error }); ok {
		// The shards' names must be durable before an index names them.
		if err := s.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", r.cfg.Sink, err)
		}
	}
	for i, ix := range indexes {
		if i == len(indexes)-1 && r.cfg.Verify != nil {
			if err := r.cfg.Verify(ctx, ix.Name, ix.Data); err != nil {
				return fmt.Errorf("verify: %w", err)
			}
		}
		if err := r.put(ctx, ix.Name, ix.Data); err != nil {
			return err
		}
		keep[ix.Name] = true
		rep.Files = append(rep.Files, ix.Name)
	}
	r.switched = true
	rep.Indexes = len(indexes)
	rep.Root = base + root
	robotsName := r.cfg.Name + "-robots.txt"
	if err := r.cfg.Sink.Put(ctx, robotsName, robots); err != nil {
		// The root is already switched; the old robots lines name indexes
		// that still exist until the next prune, so this is not fatal to readers.
		return fmt.Errorf("write %s: %w", robotsName, err)
	}
	rep.Files = append(rep.Files, robotsName)
	deleted, err := sink.Prune(ctx, r.cfg.Sink, r.cfg.Name, keep)
	rep.Deleted = deleted
	if err != nil {
		r.log.Warn("cleanup of files the new root no longer lists failed; the next run retries", "err", err)
	}
	return nil
}

// cleanup removes the files a failed run wrote that were not there before:
// nothing published references them.
func (r *run) cleanup(ctx context.Context, before []string) {
	if r.switched {
		return
	}
	had := make(map[string]bool, len(before))
	for _, n := range before {
		had[n] = true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	r.mu.Lock()
	written := r.written
	r.mu.Unlock()
	for _, n := range written {
		if n == r.cfg.Name+".xml" || had[n] {
			continue
		}
		if err := r.cfg.Sink.Delete(ctx, n); err != nil {
			r.log.Warn("cleanup after failure", "file", n, "err", err)
		}
	}
}
