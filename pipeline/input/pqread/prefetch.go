package pqread

import (
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// footerPrefetch is the tail of an object prefetched before its footer is
// read: most footers of URL exports are a few KiB.
const footerPrefetch = 64 << 10

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
	add := func(c *pqColumn) {
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
				add(l.pqColumn)
			}
		}
	}
	return rs
}
