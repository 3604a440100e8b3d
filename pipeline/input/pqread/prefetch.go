package pqread

import (
	"encoding/binary"
	"io"

	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// tailGuess is the tail of an object read first, in the hope that it holds
// the whole footer: those of URL exports are a few KiB.
const tailGuess = 16 << 10

// tail is an io.ReaderAt that serves the reads of the bytes from off to
// the end from buf: a remote file's footer, read by CheckFooter and then
// by parquet-go.
type tail struct {
	r   io.ReaderAt
	off int64
	buf []byte
}

// readTail reads the end of the Parquet file of size bytes in r, its footer
// whole: tailGuess bytes, and the rest of the footer when it is longer.
func readTail(r io.ReaderAt, size int64) (*tail, error) { return readTailGuess(r, size, tailGuess) }

// readTailGuess is readTail reading guess bytes first (> 0).
func readTailGuess(r io.ReaderAt, size, guess int64) (*tail, error) {
	n := min(size, guess)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return nil, err
	}
	t := &tail{r: r, off: size - n, buf: buf}
	if n < 8 {
		return t, nil // CheckFooter says what is wrong
	}
	footer := int64(binary.LittleEndian.Uint32(buf[n-8:]))
	if want := footer + 8; want > n && want <= size-4 { // as CheckFooter allows
		more := make([]byte, want-n, want)
		if _, err := r.ReadAt(more, size-want); err != nil && err != io.EOF {
			return nil, err
		}
		t.off, t.buf = size-want, append(more, buf...)
	}
	return t, nil
}

func (t *tail) ReadAt(p []byte, off int64) (int, error) {
	if off < t.off {
		return t.r.ReadAt(p, off)
	}
	if off-t.off >= int64(len(t.buf)) {
		return 0, io.EOF
	}
	n := copy(p, t.buf[off-t.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// prefetch tells a reader in a store (an input.Prefetcher) which bytes come
// next when row group g opens: the chunks of the mapped columns of g unless
// asked for already, and those of g+1, so that they are on their way while
// g is decoded. The columns the run does not map are never fetched.
func (pr *Reader) prefetch(g int) {
	pf, ok := pr.r.(input.Prefetcher)
	if !ok {
		return
	}
	groups := pr.pf.Metadata().RowGroups
	var rs []input.ByteRange
	from := g + 1
	if !pr.prefetched {
		from, pr.prefetched = g, true
	}
	for k := from; k <= g+1 && k < len(groups); k++ {
		rs = pr.chunkRanges(&groups[k], rs)
	}
	if len(rs) > 0 {
		pf.Prefetch(rs)
	}
}

// chunkRanges appends the byte ranges of the column chunks the reader
// decodes in row group g; chunks the footer says nonsense of are left to
// openChunk to refuse.
func (pr *Reader) chunkRanges(g *format.RowGroup, rs []input.ByteRange) []input.ByteRange {
	add := func(c *column) {
		i := c.leaf.Index()
		if i < 0 || i >= len(g.Columns) {
			return
		}
		md := &g.Columns[i].MetaData
		start := md.DataPageOffset
		if d := md.DictionaryPageOffset; d > 0 && d < start {
			start = d
		}
		if start < 4 || md.TotalCompressedSize <= 0 || md.TotalCompressedSize > pr.size-start {
			return
		}
		rs = append(rs, input.ByteRange{Off: start, Len: md.TotalCompressedSize})
	}
	for _, c := range append(pr.cols[:], pr.extCols...) {
		if c != nil {
			add(c)
		}
	}
	for _, pl := range pr.lists {
		if pl != nil {
			for _, l := range pl.leaves {
				add(l.column)
			}
		}
	}
	return rs
}
