package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/hreflang"
	"github.com/sitemapgen/sitemapgen/shard"
)

// HreflangReport counts the hreflang alternates Google would ignore across
// the whole set (see internal/hreflang): links the target does not return,
// pages with alternates that do not list themselves, links to pages the set
// does not list.
type HreflangReport struct {
	Pages         int64   `json:"pages"`
	Links         int64   `json:"links"`
	NotReciprocal int64   `json:"not_reciprocal"`
	MissingSelf   int64   `json:"missing_self"`
	TargetMissing int64   `json:"target_missing"`
	Seconds       float64 `json:"seconds"` // busy time of the check, feeding and final merge
}

// reciprocity checks hreflang reciprocity across a run. It is fed the
// ordered batches by the cut stage and recycles them once their entries
// are added, so the check runs beside the cutting and its memory is the
// batches already in flight plus the Checker's bounded buffers.
type reciprocity struct {
	r       *run
	check   *hreflang.Checker
	batches chan *Batch // ordered batches whose entries are to be added
	busy    time.Duration
}

// newReciprocity returns the check of run r, or nil when the run declares
// no xhtml namespace (no row can carry an alternate) and there is nothing
// to check.
func newReciprocity(r *run) *reciprocity {
	if r.namespaces&encode.NSXhtml == 0 {
		return nil
	}
	return &reciprocity{r: r, check: hreflang.New(hreflang.Options{TempDir: r.cfg.TmpDir}),
		batches: make(chan *Batch, r.depth)} // never full: the batches in flight are fewer
}

// feed runs until batches is closed: it adds every entry of each batch, in
// order, then recycles the batch. Once closed it finishes the check (the
// input was read whole) and writes the problems to cfg.HreflangReport.
func (h *reciprocity) feed(ctx context.Context) error {
	defer h.check.Close()
	for b := range h.batches {
		if ctx.Err() == nil { // else drain: the run has failed
			t := time.Now()
			if err := h.addBatch(b); err != nil {
				return err
			}
			h.busy += time.Since(t)
		}
		b.reset()
		h.r.free <- b
	}
	if ctx.Err() != nil || !h.r.readOK.Load() {
		return nil
	}
	return h.finish()
}

func (h *reciprocity) addBatch(b *Batch) error {
	start := uint32(0)
	for k, end := range b.Ends {
		if err := h.check.AddEntry(b.Out[start:end], uint64(b.EntryLine[k])); err != nil {
			return fmt.Errorf("hreflang check: %w", err)
		}
		start = end
	}
	return nil
}

// addEntries adds entries placed in output order (a sorted run, whose
// batches are recycled before their entries come out); ref counts them.
func (h *reciprocity) addEntries(e *shard.Entries, ref *uint64) error {
	t := time.Now()
	defer func() { h.busy += time.Since(t) }()
	start := uint32(0)
	for _, end := range e.Ends {
		*ref++
		if err := h.check.AddEntry(e.Data[start:end], *ref); err != nil {
			return fmt.Errorf("hreflang check: %w", err)
		}
		start = end
	}
	return nil
}

// finish merges the check's records and reports its problems.
func (h *reciprocity) finish() error {
	t := time.Now()
	var csvw *hreflang.CSVWriter
	if w := h.r.cfg.HreflangReport; w != nil {
		var err error
		if csvw, err = hreflang.NewCSVWriter(w); err != nil {
			return fmt.Errorf("hreflang report: %w", err)
		}
	}
	counts, err := h.check.Finish(func(p *hreflang.Problem) error {
		if csvw != nil {
			return csvw.Write(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hreflang check: %w", err)
	}
	if csvw != nil {
		if err := csvw.Flush(); err != nil {
			return fmt.Errorf("hreflang report: %w", err)
		}
	}
	h.busy += time.Since(t)
	h.r.rep.Hreflang = &HreflangReport{Pages: counts.Pages, Links: counts.Links,
		NotReciprocal: counts.NotReciprocal, MissingSelf: counts.MissingSelf, TargetMissing: counts.TargetMissing,
		Seconds: h.busy.Seconds()}
	if n := counts.Problems(); n > 0 {
		h.r.log.Warn("hreflang alternates Google ignores", "not_reciprocal", counts.NotReciprocal,
			"missing_self", counts.MissingSelf, "target_missing", counts.TargetMissing)
	}
	return nil
}
