package pipeline

import (
	"context"
	"math/bits"
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
func encodeRows(enc *encode.Encoder, g *grouper, b *Batch, maxEntry, maxNews int) error {
	refused := b.Rejected // rows the reader rejected itself
	for i := range b.Len() {
		if len(refused) > 0 && refused[0].Row == i {
			b.reject(i, refused[0].Reason, b.Field(input.Loc, i))
			refused = refused[1:]
			continue
		}
		enc := enc
		if g != nil {
			b.rowGroup = -1
			s, genc, reason, err := g.group(b, i)
			if err != nil {
				return err
			}
			if reason != encode.OK {
				b.reject(i, reason, b.Field(input.Loc, i))
				continue
			}
			enc, b.rowGroup = genc, int32(s.index)
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
			continue
		}
		b.Ends = append(b.Ends, uint32(len(b.Out)))
		b.EntryLine = append(b.EntryLine, b.Line[i])
		b.EntryLastmod = append(b.EntryLastmod, res.LastmodKey)
		b.EntryNews = append(b.EntryNews, newsAt)
		if g != nil {
			b.EntryGroup = append(b.EntryGroup, b.rowGroup)
		}
	}
	return nil
}
