package shard

import (
	"bytes"
	"fmt"
	"runtime"

	"github.com/klauspost/pgzip"
)

// Compressor gzips whole files with klauspost/pgzip, which splits the stream
// into blocks compressed on all cores. It reuses its writer and buffer, so a
// Compressor is not safe for concurrent use.
type Compressor struct {
	w   *pgzip.Writer
	out bytes.Buffer
}

// NewCompressor returns a Compressor for a gzip level (1..9, or -1 for the
// library's default) that uses up to procs goroutines (0: GOMAXPROCS).
func NewCompressor(level, procs int) (*Compressor, error) {
	c := &Compressor{}
	w, err := pgzip.NewWriterLevel(&c.out, level)
	if err != nil {
		return nil, fmt.Errorf("gzip level %d: %w", level, err)
	}
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	// 1 MiB blocks: a full 10 MiB shard gives every core several blocks.
	if err := w.SetConcurrency(1<<20, procs*2); err != nil {
		return nil, err
	}
	c.w = w
	return c, nil
}

// Compress returns the gzip encoding of data. The result is valid until the
// next call. The gzip header carries no name and no time, so equal input
// gives equal output.
func (c *Compressor) Compress(data []byte) ([]byte, error) {
	c.out.Reset()
	c.w.Reset(&c.out)
	if _, err := c.w.Write(data); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := c.w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return c.out.Bytes(), nil
}
