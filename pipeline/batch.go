package pipeline

import "github.com/sitemapgen/sitemapgen/encode"

// Column indexes the fields the pipeline maps from an input row.
type Column int

// The mapped columns, in the order their elements appear in a <url>.
const (
	Loc Column = iota
	Lastmod
	Changefreq
	Priority
	NumColumns
)

// Batch is a run of consecutive input rows, held as views into Buf, plus the
// encoder's output for those rows. A Batch travels reader -> worker -> cutter
// and is then recycled; every view stays valid until the Batch is recycled.
type Batch struct {
	Seq    uint64 // position in the run; the cutter restores this order
	Source string // input file name, for errors and rejects

	Buf    []byte               // owns the bytes every field view points into
	Fields [NumColumns][][]byte // Fields[c][i] is column c of row i; nil when the row has no such field
	Line   []int64              // Line[i] is where row i starts in Source: line number for CSV (1-based, header included), row index for columnar input

	// Extension columns: found once per input from its header or schema,
	// so a row carries only views, like the core fields.
	Ext       []encode.ExtColumn // the extension columns of Source, shared by its batches; read-only
	ExtFields [][][]byte         // ExtFields[j][i] is the value of Ext[j] in row i; nil when absent. Only the first len(Ext) are in use.
	extRow    [][]byte           // one row's extension values, handed to the encoder

	// Filled by a worker.
	Out       []byte   // encoded <url> entries, back to back
	Ends      []uint32 // Ends[k] is the end offset in Out of accepted entry k
	LmKey     []int64  // LmKey[k] orders entry k's lastmod (encode.NoLastmod when absent)
	LmAt      []uint32 // LmAt[k] is the offset in Out of entry k's lastmod text
	LmLen     []uint16 // LmLen[k] is its length (0 when absent)
	Rejects   []Reject // rows rejected, in input order
	Warnings  [numWarnings]int64
	RejectBuf []byte // owns the raw values of Rejects
}

// newBatch returns a Batch sized for about chunk bytes of input, so a run
// does not spend its first batches growing slices.
func newBatch(chunk int) *Batch {
	rows := chunk / 64 // short URL rows; longer ones need fewer
	b := &Batch{
		Buf:   make([]byte, 0, chunk+chunk/8),
		Line:  make([]int64, 0, rows),
		Out:   make([]byte, 0, 2*chunk),
		Ends:  make([]uint32, 0, rows),
		LmKey: make([]int64, 0, rows),
		LmAt:  make([]uint32, 0, rows),
		LmLen: make([]uint16, 0, rows),
	}
	for c := range b.Fields {
		b.Fields[c] = make([][]byte, 0, rows)
	}
	return b
}

// Len reports the number of input rows in b.
func (b *Batch) Len() int { return len(b.Line) }

// Reset empties b for reuse, keeping its capacity, as the pipeline does
// when it recycles a batch (readers' benchmarks use it likewise).
func (b *Batch) Reset() { b.reset() }

// reset empties b for reuse, keeping its capacity.
func (b *Batch) reset() {
	b.Seq, b.Source = 0, ""
	b.Buf = b.Buf[:0]
	for c := range b.Fields {
		b.Fields[c] = b.Fields[c][:0]
	}
	b.Line = b.Line[:0]
	b.Ext = nil
	for j := range b.ExtFields {
		b.ExtFields[j] = b.ExtFields[j][:0]
	}
	b.Out = b.Out[:0]
	b.Ends = b.Ends[:0]
	b.LmKey = b.LmKey[:0]
	b.LmAt = b.LmAt[:0]
	b.LmLen = b.LmLen[:0]
	b.Rejects = b.Rejects[:0]
	b.RejectBuf = b.RejectBuf[:0]
	b.Warnings = [numWarnings]int64{}
}

// setExt makes b hold the extension columns cols, keeping the capacity of
// the value slices of earlier use.
func (b *Batch) setExt(cols []encode.ExtColumn) {
	b.Ext = cols
	for len(b.ExtFields) < len(cols) {
		b.ExtFields = append(b.ExtFields, nil)
	}
}

// extField returns the value of extension column j in row i.
func (b *Batch) extField(j, i int) []byte {
	if i < len(b.ExtFields[j]) {
		return b.ExtFields[j][i]
	}
	return nil
}
