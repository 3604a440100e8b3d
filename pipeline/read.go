package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// read fills batches from the inputs, in order, decoding several at once
// (input.Parts): a part's rows are handed on in input order whatever the
// goroutines' race, so the output is the same as a read one by one.
func (r *run) read(ctx context.Context, out chan<- *Batch) error {
	var seq uint64
	argRows := make([]int64, len(r.cfg.Inputs))
	parts := input.Parts[*Batch]{
		Files: r.inputs, Stdin: r.cfg.Stdin, Opt: r.inputOptions(),
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

// inputOptions says how to read the run's inputs.
func (r *run) inputOptions() input.Options {
	g := r.cfg.Group
	return input.Options{Columns: r.cfg.Columns, ListsInDefaultGroup: g != nil && g.Default != ""}
}
