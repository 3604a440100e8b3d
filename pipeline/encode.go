package pipeline

import (
	"cmp"
	"context"
	"math/bits"
	"slices"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// encode turns the rows of each batch into <url> entries or rejects.
func (r *run) encode(ctx context.Context, in <-chan *Batch, out chan<- *Batch) error {
	enc := r.newEncoder(r.cfg.Scope)
	g := r.newGrouper(enc)
	for b := range in {
		t := time.Now()
		if err := encodeRows(enc, g, b, r.maxEntry, r.maxNews); err != nil {
			r.encodeFailed.Store(true) // before the cut stage can see the input end
			return err
		}
		r.times.encode.Add(int64(time.Since(t)))
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// newEncoder returns an encoder of the run's rows under scope.
func (r *run) newEncoder(scope *encode.Scope) *encode.Encoder {
	enc := encode.NewEncoder(scope, r.cfg.LastmodTZ)
	if r.cfg.MediaQuery != "" {
		enc.SetMediaQuery(r.cfg.MediaQuery)
	}
	if r.maxNews > 0 {
		enc.SetNewsWindow(r.cfg.Now.Add(-r.cfg.NewsWindow), r.cfg.Now)
	}
	return enc
}

// newGrouper returns the grouper of one worker, nil in a run without
// groups; enc encodes the rows of every group when they share a scope.
func (r *run) newGrouper(enc *encode.Encoder) *grouper {
	gr := r.cfg.Group
	if gr == nil {
		return nil
	}
	g := &grouper{gs: r.groups, byHost: gr.ByHost, cache: map[string]*set{}, def: []byte(gr.Default),
		newEnc: func(s *set) *encode.Encoder { return r.newEncoder(s.place.Scope) }}
	if gr.Place == nil {
		g.shared = enc
	}
	if gr.ByHost {
		g.any = encode.NewEncoder(nil, nil)
	}
	return g
}

// encodeBatch encodes every row of b into b.Out, recording accepted entries
// and rejects, and their news entries into b.NewsOut; an entry longer than
// maxEntry rejects its row, a news entry longer than maxNews loses the news
// item (NewsInvalid). It does not allocate once b's buffers have grown.
func encodeBatch(enc *encode.Encoder, b *Batch, maxEntry, maxNews int) {
	_ = encodeRows(enc, nil, b, maxEntry, maxNews) // without groups, it cannot fail
}

// encodeRows is encodeBatch, and with a grouper g, it finds each row's
// group first (a row without one is rejected), encodes it under its
// group's scope and records the group of each entry. It fails only on a
// grouped run's error (ErrTooManyGroups, ErrGroupCollision).
//
// A grouped batch's entries come a window of groupWindow rows at a time,
// and within a window group by group, in the order of each group's first
// row, each group's in input order: the rows are encoded in that order, so
// that the cut stage places a group's share of a window in one go without
// moving the entries. Rejects stay in input order.
func encodeRows(enc *encode.Encoder, g *grouper, b *Batch, maxEntry, maxNews int) error {
	if g != nil {
		return encodeGrouped(g, b, maxEntry, maxNews)
	}
	refused := b.Rejected // rows the reader rejected itself
	for i := range b.Len() {
		if len(refused) > 0 && refused[0].Row == i {
			b.reject(i, refused[0].Reason, b.Field(input.Loc, i))
			refused = refused[1:]
			continue
		}
		encodeRow(enc, b, i, maxEntry, maxNews, false)
	}
	return nil
}

// encodeGrouped is encodeRows with groups: a window of rows at a time,
// their groups first, then the rows, group by group.
func encodeGrouped(g *grouper, b *Batch, maxEntry, maxNews int) error {
	refused := b.Rejected
	before := len(b.Rejects)
	for lo := 0; lo < b.Len(); lo += groupWindow {
		var err error
		if refused, err = encodeWindow(g, b, lo, min(lo+groupWindow, b.Len()), refused, maxEntry, maxNews); err != nil {
			return err
		}
	}
	if len(b.Rejects) > before {
		// Rows rejected as they were encoded, after the others: back
		// to input order (a row's line is its place in the batch).
		slices.SortStableFunc(b.Rejects, func(x, y Reject) int { return cmp.Compare(x.Line, y.Line) })
	}
	return nil
}

// groupWindow is how many rows of a batch encodeGrouped takes at a time,
// group by group. The pass that finds their groups reads them in input
// order, and touches each row's loc and lastmod, and the views of its
// changefreq and priority, as it goes: the reader wrote the batch on
// another core, and in order the hardware fetches the rows ahead, out of
// order it cannot. A window's fields (about 16 KiB) then stay in the
// core's cache while its rows are encoded group by group. With the whole
// batch at once, the encode stage took 0.1-0.15 s more of CPU at 1M rows
// (docs/performance.md, round 15); without the touch of the two views, the
// loads of them in encodeRow took about 15 ms (round 18).
const groupWindow = 128

// encodeWindow encodes rows [lo, hi) of b group by group; refused are the
// reader's own rejects from row lo on, and it returns those from hi on.
func encodeWindow(g *grouper, b *Batch, lo, hi int, refused []input.RowReject, maxEntry, maxNews int) ([]input.RowReject, error) {
	g.rowGroup, g.order = g.rowGroup[:0], g.order[:0]
	b.rowGroup = -1 // the group of rejects without one
	var touched byte
	for i := lo; i < hi; i++ {
		if loc := b.Field(input.Loc, i); len(loc) > 0 {
			touched += loc[0] + loc[len(loc)-1]
		}
		if lm := b.Field(input.Lastmod, i); len(lm) > 0 {
			touched += lm[0]
		}
		touched += byte(len(b.Field(input.Changefreq, i)) + len(b.Field(input.Priority, i))) // their views only
		group := int32(-1)
		switch {
		case len(refused) > 0 && refused[0].Row == i:
			b.reject(i, refused[0].Reason, b.Field(input.Loc, i))
			refused = refused[1:]
		default:
			s, reason, err := g.group(b, i)
			if err != nil {
				return nil, err
			}
			if reason != encode.OK {
				b.reject(i, reason, b.Field(input.Loc, i))
				break
			}
			group = int32(s.index)
			for len(g.count) <= s.index {
				g.count, g.at = append(g.count, 0), append(g.at, 0)
			}
			if g.count[group] == 0 {
				g.order = append(g.order, s)
			}
			g.count[group]++
		}
		g.rowGroup = append(g.rowGroup, group)
	}
	// The row numbers by group: a counting sort.
	n := int32(0)
	for _, s := range g.order {
		g.at[s.index] = n
		n += g.count[s.index]
	}
	g.rows = slices.Grow(g.rows[:0], int(n))[:n]
	for i, group := range g.rowGroup {
		if group >= 0 {
			g.rows[g.at[group]] = int32(lo + i)
			g.at[group]++
		}
	}
	rows := g.rows
	for _, s := range g.order {
		enc := g.encoder(s)
		b.rowGroup = int32(s.index)
		for _, i := range rows[:g.count[s.index]] {
			encodeRow(enc, b, int(i), maxEntry, maxNews, true)
		}
		rows = rows[g.count[s.index]:]
		g.count[s.index] = 0
	}
	b.rowGroup = -1
	g.touched += touched // kept, so that the reads are not left out
	return refused, nil
}

// encodeRow encodes row i of b, as an entry of group b.rowGroup when
// grouped, or records its reject.
func encodeRow(enc *encode.Encoder, b *Batch, i, maxEntry, maxNews int, grouped bool) {
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
	newsAt := int32(-1)
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
			newsAt = int32(len(b.NewsEnds) - 1)
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
		return
	}
	b.Ends = append(b.Ends, uint32(len(b.Out)))
	b.EntryLine = append(b.EntryLine, b.Line[i])
	b.EntryLastmod = append(b.EntryLastmod, res.LastmodKey)
	b.EntryNews = append(b.EntryNews, newsAt)
	if grouped {
		b.EntryGroup = append(b.EntryGroup, b.rowGroup)
	}
}
