package input

import "github.com/sitemapgen/sitemapgen/encode"

// Column indexes the fields the pipeline maps from an input row.
type Column int

// The mapped columns, in the order their elements appear in a <url>.
const (
	Loc Column = iota
	Lastmod
	Changefreq
	Priority
	// Group is the column --group-by names: which sitemap set the row
	// belongs to. It has no default name: unmapped unless named.
	Group
	NumColumns

	// CoreColumns bounds the fields written in a <url>: Loc..Priority.
	CoreColumns = Group
)

// DefaultNames are the column names each field is read from unless
// Options.Columns names another.
var DefaultNames = [NumColumns]string{Loc: "loc", Lastmod: "lastmod", Changefreq: "changefreq", Priority: "priority", Group: ""}

// FieldName returns the name of field c in messages and flags: "loc",
// "lastmod", ..., "group".
func FieldName(c Column) string {
	if c == Group {
		return "group"
	}
	return DefaultNames[c]
}

// Batch is a run of consecutive input rows, held as views into Buf. A
// Source fills it; every view stays valid until the Batch is reset.
type Batch struct {
	Source string // input file name, for errors and rejects

	Buf    []byte               // owns the bytes every field view points into
	Fields [NumColumns][][]byte // Fields[c][i] is column c of row i; nil when the row has no such field
	Line   []int64              // Line[i] is where row i starts in Source: line number for CSV (1-based, header included), row number (1-based) for columnar input

	// Extension columns: found once per input from its header or schema,
	// so a row carries only views, like the core fields.
	Ext       []encode.ExtColumn // the extension columns of Source, shared by its batches; read-only
	ExtFields [][][]byte         // ExtFields[j][i] is the value of Ext[j] in row i; nil when absent. Only the first len(Ext) are in use.

	// Rejected lists the rows the source rejected itself, in row order: a
	// CSV record over csvscan.MaxRecordBytes. Such a row is not encoded;
	// its loc holds what the source kept of it for the rejects file, other
	// fields are nil. Almost always empty: no cost per row.
	Rejected []RowReject
}

// RowReject is a row of a Batch that its source rejected.
type RowReject struct {
	Row    int           // index of the row in the Batch
	Reason encode.Reason // why
}

// Grow gives an empty b room for about chunk bytes of input, so a run does
// not spend its first batches growing slices. Only the loc column is sized:
// the others may not be mapped, and a source leaves an unmapped column
// empty rather than holding a nil per row.
func (b *Batch) Grow(chunk int) {
	rows := chunk / 64 // short URL rows; longer ones need fewer
	b.Buf = make([]byte, 0, chunk+chunk/8)
	b.Line = make([]int64, 0, rows)
	b.Fields[Loc] = make([][]byte, 0, rows)
}

// SizeColumn gives column c of b, while it holds no rows, the room of its
// loc column. A mapped column grown by append as rows came left each
// smaller array behind, written once and dead: at 1M rows with three
// mapped columns besides loc, the CSV scanner allocated 17.6 MiB, 6.9
// sized (docs/performance.md, round 16).
func (b *Batch) SizeColumn(c Column) {
	if len(b.Fields[c]) == 0 && cap(b.Fields[c]) < cap(b.Fields[Loc]) {
		b.Fields[c] = make([][]byte, 0, cap(b.Fields[Loc]))
	}
}

// Len reports the number of input rows in b.
func (b *Batch) Len() int { return len(b.Line) }

// Field returns column c of row i, nil when the row has no such field.
func (b *Batch) Field(c Column, i int) []byte {
	if i < len(b.Fields[c]) {
		return b.Fields[c][i]
	}
	return nil
}

// Reset empties b for reuse, keeping its capacity.
func (b *Batch) Reset() {
	b.Source = ""
	b.Buf = b.Buf[:0]
	for c := range b.Fields {
		b.Fields[c] = b.Fields[c][:0]
	}
	b.Line = b.Line[:0]
	b.Rejected = b.Rejected[:0]
	b.Ext = nil
	for j := range b.ExtFields {
		b.ExtFields[j] = b.ExtFields[j][:0]
	}
}

// SetExt makes b hold the extension columns cols, keeping the capacity of
// the value slices of earlier use.
func (b *Batch) SetExt(cols []encode.ExtColumn) {
	b.Ext = cols
	for len(b.ExtFields) < len(cols) {
		b.ExtFields = append(b.ExtFields, nil)
	}
}

// ExtField returns the value of extension column j in row i, nil when absent.
func (b *Batch) ExtField(j, i int) []byte {
	if i < len(b.ExtFields[j]) {
		return b.ExtFields[j][i]
	}
	return nil
}
