package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// PartsAhead is how many filled batches a part decoded ahead of its turn
// holds at most, besides the one it is filling: about 2 MiB of input.
// Parts larger than that are decoded one after another, each on two cores
// where its format reads ahead (Parquet pages, see pqread).
const PartsAhead = (2 << 20) / DefaultChunk

// Parts reads files in order, decoding up to Parallel of them at once: a
// goroutine per file in flight opens it and fills batches ahead, and one
// consumer hands them to Emit in file order, as a sequential read would,
// so that the output does not depend on how the goroutines race (the
// ordered-results idiom of pgzip: workers run free, one consumer restores
// the order, memory bounded by the window).
//
// B is the caller's batch type, which holds an input Batch. Every batch
// comes from Get, so the caller's pool bounds the memory; a file waiting
// for its turn holds at most PartsAhead+1 of them, so the pool must hold
// more than (Parallel-1)*(PartsAhead+1) batches for the file whose turn it
// is to go on. A file is opened when it enters the window, not before:
// many parts cost no more than Parallel of them.
type Parts[B any] struct {
	Files    []File
	Stdin    io.Reader // read for "-"
	Opt      Options
	Parallel int // files decoded at once (<= 0: 1)

	// Get returns an empty batch, waiting for one; it fails only when ctx
	// is done. Put takes back one that was not handed to Emit.
	Get func(ctx context.Context) (B, error)
	Put func(B)
	// Fill fills b from src: src.Fill on the input Batch b holds.
	Fill func(src Source, b B) error
	// Emit takes a filled batch of file i; Done is called after the last
	// one, with the rows the file held, before any batch of file i+1. An
	// error of either stops the read and is returned.
	Emit func(i int, b B) error
	Done func(i int, rows int64) error
}

// pageBudget is the limits of the Budget of the files of a Read: turn,
// shared, ahead (see saferio.NewBudget). A variable for the tests.
var pageBudget = [3]int64{saferio.BudgetTurn, saferio.BudgetShared, saferio.BudgetAhead}

// part is a file in flight: its batches, then its error and rows, set
// before batches is closed.
type part[B any] struct {
	batches chan B
	err     error
	rows    int64
}

// Read reads every file; it returns the first error in file order (or of
// ctx), after every goroutine it started has ended and closed its input.
func (p *Parts[B]) Read(ctx context.Context) error {
	par := max(p.Parallel, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parts := make([]*part[B], len(p.Files))
	for i := range parts {
		parts[i] = &part[B]{batches: make(chan B, PartsAhead)}
	}
	// The files in flight share a budget of decompressed pages, in which
	// the first one not done has its turn: the one consumed now.
	budget := saferio.NewBudget(pageBudget[0], pageBudget[1], pageBudget[2])
	window := make(chan struct{}, par) // a token per file in flight
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // opens the files in order as the window allows
		defer wg.Done()
		for i := range parts {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			share := budget.Part() // in file order
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.decode(ctx, i, parts[i], share)
			}()
		}
	}()
	err := p.consume(ctx, parts, window)
	cancel()
	budget.Stop() // a file waiting for its turn waits no more
	wg.Wait()
	return err
}

// consume hands the batches out in file order.
func (p *Parts[B]) consume(ctx context.Context, parts []*part[B], window <-chan struct{}) error {
	for i, pt := range parts {
		for {
			var b B
			var ok bool
			select {
			case b, ok = <-pt.batches:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !ok {
				break
			}
			if err := p.Emit(i, b); err != nil {
				return err
			}
		}
		if pt.err != nil {
			return pt.err
		}
		if err := p.Done(i, pt.rows); err != nil {
			return err
		}
		<-window
	}
	return nil
}

// decode opens file i and fills its batches until it ends, fails or ctx is
// done; it closes the file.
func (p *Parts[B]) decode(ctx context.Context, i int, pt *part[B], share *saferio.Part) {
	defer close(pt.batches)
	defer share.Close() // after src's: the next file's turn
	f := &p.Files[i]
	opt := p.Opt
	opt.Budget = share
	src, err := Open(f, p.Stdin, opt)
	if err != nil {
		pt.err = err
		return
	}
	defer func() {
		pt.rows = src.Rows()
		if err := src.Close(); err != nil && pt.err == nil {
			pt.err = fmt.Errorf("%s: %w", f.Name(), err)
		}
	}()
	for {
		b, err := p.Get(ctx)
		if err != nil {
			pt.err = err
			return
		}
		if err := p.Fill(src, b); err != nil {
			p.Put(b)
			if !errors.Is(err, io.EOF) {
				pt.err = err
			}
			return
		}
		select {
		case pt.batches <- b:
		case <-ctx.Done():
			p.Put(b)
			pt.err = ctx.Err()
			return
		}
	}
}
