package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/pgzip"
)

// Compressor gzips whole files. It reuses its writer and buffer, so a
// Compressor is not safe for concurrent use.
//
// Two ways to keep every core busy, measured in bench/README.md: one
// Compressor spreading each file over all cores (klauspost/pgzip splits the
// stream into blocks), or one single-stream Compressor per core, each taking
// whole files (klauspost/compress/gzip).
type Compressor struct {
	w   gzipWriter
	out bytes.Buffer
	id  string
	// With pgzip, a file shorter than one block is compressed on the
	// calling goroutine, as pgzip would compress that block (same bytes):
	// pgzip's handing of a block to a goroutine and back costs more than
	// compressing a small file (BenchmarkCompressSmall: a long tail of
	// small groups' sitemaps compresses twice as fast).
	small  *flate.Writer
	header []byte // pgzip's gzip header
}

// gzipWriter is what pgzip.Writer and gzip.Writer have in common.
type gzipWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// NewCompressor returns a Compressor for a gzip level (1..9) that compresses
// one file on up to procs goroutines: 1 is a single stream, 0 means GOMAXPROCS.
// Only procs 1 changes the bytes: 0 on a machine of one core is still pgzip,
// so a set's files do not depend on the cores of the machine that wrote them.
func NewCompressor(level, procs int) (*Compressor, error) {
	if level < 1 || level > 9 {
		return nil, fmt.Errorf("gzip level %d: must be 1..9", level)
	}
	single := procs == 1
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	c := &Compressor{}
	if single {
		w, err := gzip.NewWriterLevel(&c.out, level)
		if err != nil {
			return nil, fmt.Errorf("gzip level %d: %w", level, err)
		}
		c.w = w
		c.id = fmt.Sprintf("gzip %s level %d", moduleVersion("github.com/klauspost/compress"), level)
		return c, nil
	}
	w, err := pgzip.NewWriterLevel(&c.out, level)
	if err != nil {
		return nil, fmt.Errorf("gzip level %d: %w", level, err)
	}
	// 1 MiB blocks: a full 10 MiB shard gives every core several blocks.
	// The output depends on the block size, not on how many are in flight.
	if err := w.SetConcurrency(pgzipBlock, procs*2); err != nil {
		return nil, err
	}
	c.w = w
	if c.small, err = flate.NewWriterDict(nil, level, nil); err != nil {
		return nil, fmt.Errorf("gzip level %d: %w", level, err)
	}
	// The header does not depend on the data: pgzip's own, taken once.
	if _, err := c.compressBlocks(nil, 0); err != nil {
		return nil, err
	}
	c.header = bytes.Clone(c.out.Bytes()[:gzipHeaderLen])
	c.id = fmt.Sprintf("pgzip %s compress %s level %d block %d",
		moduleVersion("github.com/klauspost/pgzip"), moduleVersion("github.com/klauspost/compress"), level, pgzipBlock)
	return c, nil
}

const pgzipBlock = 1 << 20

// ID names what decides the compressor's output bytes for a given input:
// the implementation (pgzip or a single stream), the versions of the
// modules doing the work, the level and the block size. Two Compressors
// with the same ID give the same bytes for the same input, so a file
// compressed by one need not be compressed again by the other.
func (c *Compressor) ID() string { return c.id }

// moduleVersion returns the version of module path in this binary, or
// "(unknown)" when the binary carries no build information.
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Path + "@" + d.Replace.Version
			}
			return d.Version
		}
	}
	return "(unknown)"
}

// Compress returns the gzip encoding of data, the pieces of one file in
// order (Sitemap.Parts): how it is cut into pieces does not change the
// output. The result is valid until the next call. The gzip header carries
// no name and no time, so equal input gives equal output.
func (c *Compressor) Compress(data ...[]byte) ([]byte, error) {
	n := 0
	for _, p := range data {
		n += len(p)
	}
	if c.small != nil && n < pgzipBlock {
		return c.compressBlock(data, n)
	}
	return c.compressBlocks(data, n)
}

// gzipHeaderLen is the length of a gzip header with no name, comment or
// extra field.
const gzipHeaderLen = 10

// compressBlock compresses data, n bytes in all, shorter than one pgzip
// block, into the bytes pgzip writes for it: its header, the block as
// pgzip's compressBlock deflates a last block (Write, Flush, Close on a
// flate writer reset with no dictionary), the CRC-32 and the length.
func (c *Compressor) compressBlock(data [][]byte, n int) ([]byte, error) {
	c.out.Reset()
	c.out.Grow(len(c.header) + n/3 + 8)
	c.out.Write(c.header)
	c.small.ResetDict(&c.out, nil)
	crc := uint32(0)
	for _, p := range data {
		if _, err := c.small.Write(p); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		crc = crc32.Update(crc, crc32.IEEETable, p)
	}
	if err := c.small.Flush(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := c.small.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	b := c.out.AvailableBuffer()
	b = binary.LittleEndian.AppendUint32(b, crc)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	c.out.Write(b)
	return c.out.Bytes(), nil
}

// compressBlocks compresses data, n bytes, through the gzip writer.
func (c *Compressor) compressBlocks(data [][]byte, n int) ([]byte, error) {
	c.out.Reset()
	// Room for a 3x compression ratio up front, so the buffer is sized once
	// rather than doubled (leaving garbage) as the output grows.
	c.out.Grow(n / 3)
	c.w.Reset(&c.out)
	for _, p := range data {
		if _, err := c.w.Write(p); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	}
	if err := c.w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return c.out.Bytes(), nil
}
