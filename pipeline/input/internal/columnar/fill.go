package columnar

import (
	"fmt"
	"io"
	"os"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// Filler is the Fill of a columnar reader but for the format: the budget
// loop, the spans of the values taken and their views, the row numbers, a
// sticky error, and a panic of the format's library turned into
// input.ErrCorrupt. The reader sets Name, Take and Where, the core columns
// it maps and its extension columns, then calls Fill from its own.
type Filler struct {
	Name string // the input's, for b.Source and errors
	// Take appends the values of the next rows, at most max of them, to
	// buf, and their spans to Spans and ExtSpans: the loc column stops
	// before a value that would take buf past budget bytes (budget < 0:
	// no limit), the others take as many rows as it did, in steps that
	// add at most StepBytes (see StepBytes). A value over MaxValue is not
	// copied: the reader hands it to Long. Take reports the rows taken,
	// going on to the next row group or record batch as needed: 0
	// without an error only when budget >= 0 and the next row's loc does
	// not fit; io.EOF at the end.
	Take func(buf []byte, max, budget int) ([]byte, int, error)
	// Where names what Take was reading, for a panic: "row group 3".
	Where func() string

	Core     [input.NumColumns]bool // the core columns mapped
	Ext      []encode.ExtColumn     // the extension columns
	Spans    [input.NumColumns][]Span
	ExtSpans [][]Span // by extension column

	rows int64
	long []longRow // the rows of this Fill with a value over MaxValue (see Long)
	err  error
}

// AddList adds the list extension column x, read by l, to f and to lists,
// a reader's list columns by extension index, and returns lists.
func AddList[L any](f *Filler, lists []*L, x encode.ExtColumn, l *L) []*L {
	for len(lists) < len(f.Ext) {
		lists = append(lists, nil)
	}
	f.AddExt(x)
	return append(lists, l)
}

// AddExt adds the extension column x.
func (f *Filler) AddExt(x encode.ExtColumn) {
	f.Ext = append(f.Ext, x)
	f.ExtSpans = append(f.ExtSpans, nil)
}

// Rows reports the rows handed out so far.
func (f *Filler) Rows() int64 { return f.rows }

// Fill appends rows to b (b.Buf, b.Fields, b.ExtFields, b.Line; b.Source =
// Name) while their values fit in chunk bytes of b.Buf (chunk <= 0:
// input.DefaultChunk; see Take for what the columns after loc may add),
// up to input.MaxBatchRows rows or the end of the input; the first row
// whatever its size (at most a value of MaxValue, or what Long keeps of a
// longer one, per column). b.Line[i] is the 1-based row number in the
// input. A row with a value over MaxValue is listed in b.Rejected (see
// Long). It returns io.EOF when the input is exhausted and it added no
// rows. Errors are sticky.
func (f *Filler) Fill(b *input.Batch, chunk int) (err error) {
	if f.err != nil {
		return f.err
	}
	if chunk <= 0 {
		chunk = input.DefaultChunk
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %s: %w: %v", f.Name, f.Where(), input.ErrCorrupt, p)
		}
		if err != nil && err != io.EOF {
			f.err = err
		}
	}()
	b.Source = f.Name
	budget := len(b.Buf) + chunk
	for c := range f.Spans {
		f.Spans[c] = f.Spans[c][:0]
	}
	for x := range f.ExtSpans {
		f.ExtSpans[x] = f.ExtSpans[x][:0]
	}
	f.long = f.long[:0]
	total := 0
	for total < input.MaxBatchRows && len(b.Buf) < budget {
		max, lim := input.MaxBatchRows-total, budget
		if total == 0 {
			max, lim = 1, -1 // the first row, whatever its size
		}
		var n int
		b.Buf, n, err = f.Take(b.Buf, max, lim)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n == 0 {
			if lim < 0 {
				return fmt.Errorf("%s: %s: %w: no row read and no error", f.Name, f.Where(), input.ErrCorrupt)
			}
			break // the next row does not fit
		}
		total += n
	}
	f.views(b, total)
	if total == 0 {
		return io.EOF
	}
	return nil
}

// views gives b the values of the total rows taken, their numbers, and
// the rows with a value over MaxValue in b.Rejected.
func (f *Filler) views(b *input.Batch, total int) {
	if len(f.long) > 0 {
		f.rejectLong(b, b.Len())
	}
	for c := range input.NumColumns {
		if f.Core[c] {
			SetViews(b, c, f.Spans[c])
		}
	}
	if len(f.Ext) > 0 {
		b.SetExt(f.Ext)
		for x := range f.Ext {
			b.ExtFields[x] = AppendViews(b.ExtFields[x], b.Buf, f.ExtSpans[x])
		}
	}
	for i := range total {
		b.Line = append(b.Line, f.rows+int64(i)+1)
	}
	f.rows += int64(total)
}

// OpenFile opens the file name and reads it with newReader, a reader's
// NewReader; the file is the caller's to close with the reader, and is
// closed here when newReader fails.
func OpenFile[R any](name string, opt input.Options, newReader func(io.ReaderAt, int64, string, input.Options) (R, error)) (R, *os.File, error) {
	var zero R
	f, err := os.Open(name)
	if err != nil {
		return zero, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return zero, nil, err
	}
	r, err := newReader(f, fi.Size(), name, opt)
	if err != nil {
		f.Close()
		return zero, nil, err
	}
	return r, f, nil
}
