package pipeline

import (
	"context"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/shard"
)

// cutShard is a closed sitemap on its way to a compressor: a shard, or a
// news sitemap.
type cutShard struct {
	*shard.Sitemap
	news bool
	set  *set
}

// cutStage restores input order and packs entries into shards, and news
// entries into news sitemaps (through the sorter with --sort or --dedup). It
// also accounts for every row: rejects, warnings, progress.
type cutStage struct {
	r   *run
	ctx context.Context
	out chan<- cutShard

	pending []*Batch // a ring: the batches in flight are fewer than depth
	next    uint64   // the Seq of the batch whose turn it is
	sorted  *sorter  // nil without --sort and --dedup

	rejects  *rejectWriter // nil without --rejects
	reasons  [encode.NumReasons]int64
	warnings [numWarnings]int64

	blocked time.Duration // waiting on the compressors is back-pressure, not cutting
	locText []byte        // a duplicate's loc, as text

	park parking // a grouped run's parked sets
	sets []*set  // a grouped run's sets by index, as of the batch being taken
}

// cut runs the cut stage: batches in, closed sitemaps out.
func (r *run) cut(ctx context.Context, in <-chan *Batch, out chan<- cutShard) error {
	c := &cutStage{r: r, ctx: ctx, out: out, pending: make([]*Batch, r.depth)}
	if r.rejects != nil {
		c.rejects = r.rejects
		// A failed run's file still has its header and the rows rejected
		// until then (finish flushes a run that ends well; again is a no-op).
		defer c.rejects.flush()
	}
	if r.groups != nil {
		c.park = newParking(r.cfg, r.blocks)
		defer c.park.close()
	}
	defer c.count() // on every path: a failed run's report must still add up
	if r.cfg.Sort || r.cfg.Dedup {
		c.sorted = newSorter(r.cfg)
		defer c.sorted.close()
	}
	if err := c.room(); err != nil { // for the first shard
		return err
	}
	for b := range in {
		if err := c.restoreOrder(b); err != nil {
			return err
		}
	}
	if !r.readOK.Load() || r.encodeFailed.Load() {
		return nil // the input ended early: the stage that failed reports why
	}
	if c.sorted != nil {
		if err := c.drainSorted(); err != nil {
			return err
		}
	}
	return c.finish()
}

// count adds the rejects and warnings counted to the report.
func (c *cutStage) count() {
	for i, n := range c.reasons {
		c.r.rep.Rejected.add(encode.Reason(i).String(), n)
	}
	for w, n := range c.warnings {
		c.r.rep.Warnings.add(encode.WarningName(w), n)
	}
}

// restoreOrder holds b until its turn, then takes it and every held batch
// whose turn follows.
func (c *cutStage) restoreOrder(b *Batch) error {
	depth := uint64(len(c.pending))
	c.pending[b.Seq%depth] = b
	for {
		b := c.pending[c.next%depth]
		if b == nil || b.Seq != c.next {
			return nil
		}
		c.pending[c.next%depth] = nil
		c.next++
		if err := c.take(b); err != nil {
			return err
		}
	}
}

// take places the entries of b, in input order, accounts for its rows and
// passes it on to the hreflang check or back to the pool.
func (c *cutStage) take(b *Batch) error {
	r := c.r
	t := time.Now()
	if r.groups != nil {
		c.sets = r.groups.snapshot(c.sets) // the groups of b's rows are in it
	}
	switch {
	case c.sorted != nil:
		if err := c.sorted.add(b); err != nil {
			return err
		}
	case r.groups != nil:
		if err := c.route(b); err != nil {
			return err
		}
	default:
		if err := c.place(&shard.Entries{Data: b.Out, Ends: b.Ends}); err != nil {
			return err
		}
		if r.main.news != nil {
			if err := c.placeNews(&shard.Entries{Data: b.NewsOut, Ends: b.NewsEnds}); err != nil {
				return err
			}
		}
	}
	if err := c.account(b); err != nil {
		return err
	}
	r.times.cut.Add(int64(time.Since(t) - c.blocked))
	c.blocked = 0
	if r.hreflang != nil && c.sorted == nil {
		r.hreflang.batches <- b // it recycles b
		return nil
	}
	b.reset()
	r.free <- b
	return nil
}

// account counts the rows of b: rejects (written to --rejects), warnings,
// the report's totals and the live progress.
func (c *cutStage) account(b *Batch) error {
	r := c.r
	for _, rj := range b.Rejects {
		c.reasons[rj.Reason]++
		group := ""
		if rj.Group >= 0 && r.groups != nil {
			s := c.sets[rj.Group]
			s.reasons[rj.Reason]++
			s.rows++
			group = s.group
		}
		if c.rejects != nil {
			if err := c.rejects.write(b.Source, rj.Line, rj.Reason, b.RejectBuf[rj.start:rj.end], group); err != nil {
				return err
			}
		}
	}
	// By run (runEnd): a long tail's sets are rarely in the cache.
	for from := 0; from < len(b.EntryGroup); {
		to := runEnd(b.EntryGroup, from)
		s := c.sets[b.EntryGroup[from]]
		s.rows += int64(to - from)
		s.urls += int64(to - from)
		from = to
	}
	for w, n := range b.Warnings {
		c.warnings[w] += n
	}
	r.rep.Rows += int64(b.Len())
	r.rep.URLs += int64(len(b.Ends))
	r.progress.Rows.Add(int64(b.Len()))
	r.progress.URLs.Add(int64(len(b.Ends)))
	r.progress.Rejected.Add(int64(len(b.Rejects)))
	return nil
}

// place packs entries into the shards of the run's only set.
func (c *cutStage) place(ents *shard.Entries) error { return c.pack(c.r.main, ents, 0, false) }

// placeNews packs news entries into the news sitemaps of the run's only
// set: a batch's, in input order, or with --sort the sorter's, in the
// order of their rows.
func (c *cutStage) placeNews(ents *shard.Entries) error { return c.packNews(c.r.main, ents, 0) }

// packNews packs the news entries of ents from entry k on into the news
// sitemaps of set.
func (c *cutStage) packNews(set *set, ents *shard.Entries, k int) error {
	if err := c.pack(set, ents, k, true); err != nil {
		return err
	}
	c.r.rep.News.URLs += int64(len(ents.Ends) - k)
	return nil
}

// pack adds the entries of ents from entry k on to a cutter of set and
// sends on every sitemap it closes: shards, or (news) news sitemaps.
func (c *cutStage) pack(set *set, ents *shard.Entries, k int, news bool) error {
	cutter := set.cutter
	if news {
		cutter = set.news
	}
	for k < len(ents.Ends) {
		var s *shard.Sitemap
		if k, s = cutter.AddEntries(ents, k); s != nil {
			if news {
				set.newsSitemaps++
			} else if c.r.cfg.Fanout == 1 {
				return shard.ErrFanout // no index can list a second sitemap: fail now, not after the whole input
			}
			if err := c.send(set, s, news); err != nil {
				return err
			}
			if err := c.room(); err != nil {
				return err
			}
		}
	}
	return nil
}

// send hands a closed sitemap of set to the compressors.
func (c *cutStage) send(set *set, s *shard.Sitemap, news bool) error {
	t := time.Now()
	defer func() { c.blocked += time.Since(t) }()
	select {
	case c.out <- cutShard{s, news, set}:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// room waits until the cutter may open another shard.
func (c *cutStage) room() error {
	t := time.Now()
	defer func() { c.blocked += time.Since(t) }()
	select {
	case <-c.r.shardRoom:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// drainSorted places the sorted entries, once every batch is in, and
// rejects --dedup's repeats.
func (c *cutStage) drainSorted() error {
	r := c.r
	// Every batch is back in the pool: let them go, so that the merge and
	// the stages after it do not hold them beside the run readers (the
	// sorter collects before its merge).
	for len(r.free) > 0 {
		<-r.free
	}
	if r.groups != nil {
		c.sets = r.groups.snapshot(c.sets)
	}
	// The hreflang check takes a sorted run's entries as they are placed,
	// in output order.
	var ref uint64
	place := func(group int32, ents *shard.Entries) error {
		if h := r.hreflang; h != nil {
			if err := h.addEntries(ents, &ref); err != nil {
				return err
			}
		}
		if group < 0 {
			return c.place(ents)
		}
		return c.placeIn(c.sets[group], ents, 0)
	}
	t := time.Now()
	dups, err := c.sorted.drain(place, c.placeNewsOf, c.duplicate)
	r.rep.URLs -= dups
	r.progress.URLs.Add(-dups)
	r.progress.Rejected.Add(dups)
	r.times.cut.Add(int64(time.Since(t) - c.blocked))
	c.blocked = 0
	if err != nil {
		return err
	}
	r.rep.Sort = c.sorted.report()
	return nil
}

// placeNewsOf places the sorted news entries of group (-1: the run's only
// set).
func (c *cutStage) placeNewsOf(group int32, ents *shard.Entries) error {
	if group < 0 {
		return c.placeNews(ents)
	}
	return c.packNews(c.sets[group], ents, 0)
}

// duplicate rejects a row --dedup found repeating a kept one of its group
// (-1: no groups).
func (c *cutStage) duplicate(group int32, source string, line int64, loc []byte) error {
	c.reasons[encode.Duplicate]++
	name := ""
	if group >= 0 {
		s := c.sets[group]
		s.reasons[encode.Duplicate]++
		s.urls--
		name = s.group
	}
	if c.rejects == nil {
		return nil
	}
	// The row's own value is gone once sorted: its written loc, as a URL
	// (not XML-escaped like the sitemap's), is what made it a duplicate.
	c.locText = encode.AppendLocText(c.locText[:0], loc)
	return c.rejects.write(source, line, encode.Duplicate, c.locText, name)
}

// finish closes the last shard and news sitemap of every set, and flushes
// the rejects.
func (c *cutStage) finish() error {
	if r := c.r; r.main != nil {
		if _, err := c.flush(r.main); err != nil {
			return err
		}
	} else if err := c.finishGroups(); err != nil {
		return err
	}
	if c.rejects != nil {
		return c.rejects.flush()
	}
	return nil
}

// flush closes the open shard and news sitemap of set, and reports how
// many of the two it sent on.
func (c *cutStage) flush(set *set) (sent int, err error) {
	if s := set.cutter.Flush(); s != nil {
		if err := c.send(set, s, false); err != nil {
			return 0, err
		}
		sent++
	}
	if set.news == nil {
		return sent, nil
	}
	s := set.news.Flush()
	if s == nil && set.newsSitemaps == 0 && (set == c.r.main || set.urls > 0) {
		// No fresh article: an empty news sitemap keeps the name listed
		// (Google: it "will not cause any problems"). A group with no URL
		// is not published (its set is left as it was), so it gets none:
		// written in place, it would empty the live set's news sitemap.
		s = &shard.Sitemap{Num: 1, Data: []byte(set.news.Header() + shard.Footer)}
	}
	if s == nil {
		return sent, nil
	}
	if err := c.send(set, s, true); err != nil {
		return sent, err
	}
	return sent + 1, nil
}
