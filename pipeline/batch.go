package pipeline

import (
	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// Batch is a run of input rows as a reader filled it, plus the encoder's
// output for those rows. It travels reader -> worker -> cutter and is then
// recycled as one unit; every view stays valid until it is.
type Batch struct {
	input.Batch
	Seq uint64 // position in the run; the cutter restores this order

	extRow [][]byte // one row's extension values, handed to the encoder

	// Filled by a worker. The entries are in input order; a grouped run's
	// come group by group within each window of groupWindow rows, each
	// group's in input order (encodeRows).
	Out       []byte   // encoded <url> entries, back to back
	Ends      []uint32 // Ends[k] is the end offset in Out of accepted entry k
	EntryLine []int64  // EntryLine[k] is the Line of the row entry k came from
	// EntryLastmod[k] is entry k's encode.Result.LastmodKey, and
	// EntryNews[k] the index of its news entry in NewsEnds (-1: none):
	// --sort and --dedup order and choose by them.
	EntryLastmod []int64
	EntryNews    []int32
	// EntryGroup[k] is the index of entry k's group (grouped runs only).
	EntryGroup []int32
	NewsOut    []byte   // the rows' separate news entries (encode.Result.NewsAt), back to back
	NewsEnds   []uint32 // NewsEnds[k] is the end offset in NewsOut of news entry k
	Rejects    []Reject // rows rejected, in input order
	Warnings   [numWarnings]int64
	RejectBuf  []byte // owns the raw values of Rejects

	rowGroup int32 // the group of the row being encoded (-1: none), for its reject
}

// newBatch returns a Batch sized for about chunk bytes of input, so a run
// does not spend its first batches growing slices.
func newBatch(chunk int) *Batch {
	rows := chunk / 64 // short URL rows; longer ones need fewer
	b := &Batch{
		Out:       make([]byte, 0, 2*chunk),
		Ends:      make([]uint32, 0, rows),
		EntryLine: make([]int64, 0, rows),

		EntryLastmod: make([]int64, 0, rows),
		EntryNews:    make([]int32, 0, rows),
		rowGroup:     -1,
	}
	b.Grow(chunk)
	return b
}

// Reset empties both halves of b for reuse, keeping their capacity (the
// promoted input.Batch.Reset would keep the encoder's output).
func (b *Batch) Reset() { b.reset() }

func (b *Batch) reset() {
	b.Batch.Reset()
	b.Seq = 0
	b.Out = b.Out[:0]
	b.Ends = b.Ends[:0]
	b.EntryLine = b.EntryLine[:0]
	b.EntryLastmod = b.EntryLastmod[:0]
	b.EntryNews = b.EntryNews[:0]
	b.EntryGroup = b.EntryGroup[:0]
	b.rowGroup = -1
	b.NewsOut = b.NewsOut[:0]
	b.NewsEnds = b.NewsEnds[:0]
	b.Rejects = b.Rejects[:0]
	b.RejectBuf = b.RejectBuf[:0]
	b.Warnings = [numWarnings]int64{}
}

// reject records row i as rejected for reason, keeping its loc.
func (b *Batch) reject(i int, reason encode.Reason, loc []byte) {
	rs := len(b.RejectBuf)
	b.RejectBuf = append(b.RejectBuf, loc...)
	b.Rejects = append(b.Rejects, Reject{Line: b.Line[i], Reason: reason, Group: b.rowGroup, start: uint32(rs), end: uint32(len(b.RejectBuf))})
}
