// Package arrowread reads Arrow IPC inputs, the file format (.arrow,
// .feather v2) and the stream format (.arrows, .ipc), into batches: arrow-go
// decodes the record batches from messages internal/arrowmsg has read and
// checked first.
package arrowread

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/arrowmsg"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// Reader reads the rows of an Arrow IPC input, the file format
// (.arrow, .feather v2) or the stream format (.arrows), one record batch at a
// time, copying the values of the mapped columns from the record batch's
// arrays into the Batch's Buf without allocating per row.
//
// Columns are found as input.Options.Map says. loc and
// changefreq are string or binary arrays (also large, view and
// dictionary-encoded); lastmod is a string, a date32/date64 (written
// YYYY-MM-DD) or a timestamp of any unit (written YYYY-MM-DDThh:mm:ss[.f],
// with Z when the type has a time zone, the value then being an instant,
// without one, so read in --lastmod-tz, when it has none); priority is a
// float32, float64, decimal128 or a string. A null is an absent field. The
// list extension columns images, alternates and videos are list or
// large_list columns (listColumn).
//
// arrow-go decodes the messages, which sitemapgen reads and checks first
// (arrowmsg.Reader): nothing a corrupt input claims (lengths, counts,
// decompressed sizes) is allocated before it is checked against the input
// and the limits there, so a damaged file costs memory in proportion to its
// size, and at most a bounded amount per record batch.
//
// Batch.Line holds the 1-based row number of each row in the file.
type Reader struct {
	name string
	file *os.File
	sr   *ipc.Reader // over arrowMessages: the file or the stream format
	next int         // next record batch
	rec  arrow.RecordBatch
	pos  int   // next row of rec
	base int64 // the rows of the record batches before rec
	col  int   // the field being taken, for a panic (see where); -1 between takes
	cols [input.NumColumns]int
	fill columnar.Filler // its Ext are the extension columns (see encode.ParseExtColumn)

	extCols []int         // their field indexes
	lists   []*listColumn // list columns (images, alternates, videos) by extension index; see listColumn
	dicts   []dictBound   // by field: the dictionary checkRecord checked last
	per     int           // the most bytes a row of rec's columns after loc can add (see checkRecord)

	prefetch func() // nil, or the prefetch the first Fill starts
}

// Open opens the Arrow IPC file or stream name and maps its columns.
func Open(name string, opt input.Options) (*Reader, error) {
	ar, f, err := columnar.OpenFile(name, opt, NewReader)
	if err == nil {
		ar.file = f
	}
	return ar, err
}

// NewReader reads the Arrow IPC input of size bytes in r, an input
// named source, in the file format when it starts with the Arrow file
// magic, else in the stream format. Errors name the source and wrap
// input.ErrCorrupt, input.ErrNoColumn or input.ErrColumnType.
func NewReader(r io.ReaderAt, size int64, source string, opt input.Options) (ar *Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			ar, err = nil, fmt.Errorf("%s: %w: %v", source, input.ErrCorrupt, p)
		}
	}()
	ar = &Reader{name: source, col: -1}
	ar.fill.Name, ar.fill.Take, ar.fill.Where = source, ar.take, ar.where
	if pf, ok := r.(input.Prefetcher); ok {
		// An object in a store: every record batch carries every column,
		// so the first Fill prefetches the whole object, front to back, a
		// few blocks ahead (not the probe, which reads the schema only).
		ar.prefetch = func() { pf.Prefetch([]input.ByteRange{{Off: 0, Len: size}}) }
	}
	var magic [len(arrowmsg.FileMagic)]byte
	n, _ := r.ReadAt(magic[:], 0)
	// arrow-go decodes the messages, read and checked by arrowmsg.Reader:
	// it allocates what a message claims.
	var msgs *arrowmsg.Reader
	what := "not a readable Arrow IPC file or stream"
	if string(magic[:n]) == arrowmsg.FileMagic {
		what = "not a readable Arrow IPC file"
		if msgs, err = arrowmsg.NewFile(r, size); err != nil {
			return nil, fmt.Errorf("%s: %s: %w: %w", source, what, input.ErrCorrupt, err)
		}
	} else {
		buf := int(max(16, min(size, 1<<20)))
		msgs = arrowmsg.NewStream(bufio.NewReaderSize(io.NewSectionReader(r, 0, size), buf), size)
	}
	ar.sr, err = ipc.NewReaderFromMessageReader(msgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w: %w", source, what, input.ErrCorrupt, err)
	}
	fields := ar.sr.Schema().Fields()
	have := make([]string, len(fields))
	for i, f := range fields {
		have[i] = f.Name
	}
	for c := range ar.cols {
		ar.cols[c] = -1
	}
	err = columnar.Map(have, opt, columnar.Opener{
		Core: func(c input.Column, i int) error {
			ar.cols[c], ar.fill.Core[c] = i, true
			return checkType(c, fields[i])
		},
		Ext: func(x encode.ExtColumn, i int) error {
			ar.fill.AddExt(x)
			ar.extCols = append(ar.extCols, i)
			return checkExtType(x.Kind, fields[i])
		},
		List: func(x encode.ExtColumn, i int) error { return ar.addList(x, i, fields[i]) },
	})
	if err != nil {
		ar.Close()
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return ar, nil
}

// Extensions returns the extension columns of the input.
func (ar *Reader) Extensions() []encode.ExtColumn { return ar.fill.Ext }

// checkExtType reports whether field f can be read as an extension
// column of kind k: as the core field columnar.ExtLike(k) can, or as an integer
// (video:duration, video:view_count) or a boolean (mobile and the yes/no
// video elements).
func checkExtType(k encode.ExtKind, f arrow.Field) error {
	err := checkType(columnar.ExtLike(k), f)
	if err == nil {
		return nil
	}
	switch f.Type.ID() {
	case arrow.INT32, arrow.INT64:
		if k == encode.ExtVideoDuration || k == encode.ExtVideoViewCount {
			return nil
		}
	case arrow.BOOL:
		if k == encode.ExtMobile || k == encode.ExtVideoFamilyFriendly || k == encode.ExtVideoRequiresSubscription || k == encode.ExtVideoLive {
			return nil
		}
	}
	return err
}

// checkType reports whether field f can be read as field c.
func checkType(c input.Column, f arrow.Field) error {
	t := f.Type
	if d, ok := t.(*arrow.DictionaryType); ok {
		t = d.ValueType
	}
	ok := false
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		ok = true
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		ok = c == input.Lastmod
	case arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		ok = c == input.Priority
	}
	if d, isDec := t.(*arrow.Decimal128Type); ok && isDec && (d.Scale < -columnar.MaxScale || d.Scale > columnar.MaxScale) {
		return fmt.Errorf("column %q (%s field): %w %s of scale %d; want a scale from %d to %d", f.Name, input.FieldName(c), input.ErrColumnType, f.Type, d.Scale, -columnar.MaxScale, columnar.MaxScale)
	}
	if ok {
		return nil
	}
	want := map[input.Column]string{
		input.Loc:        "want a string or binary",
		input.Changefreq: "want a string or binary",
		input.Lastmod:    "want a string, date or timestamp",
		input.Priority:   "want float, double, decimal128 or a string",
		input.Group:      "want a string or binary",
	}[c]
	what := f.Type.String()
	if _, nested := t.(arrow.NestedType); nested {
		what += " (a nested column); want a flat column, " + strings.TrimPrefix(want, "want ")
	} else {
		what += "; " + want
	}
	return fmt.Errorf("column %q (%s field): %w %s", f.Name, input.FieldName(c), input.ErrColumnType, what)
}

// Rows reports the rows handed out so far.
func (ar *Reader) Rows() int64 { return ar.fill.Rows() }

// Close releases the input.
func (ar *Reader) Close() error {
	if ar.sr != nil {
		ar.sr.Release()
		ar.sr = nil
	}
	ar.rec = nil
	if ar.file != nil {
		err := ar.file.Close()
		ar.file = nil
		return err
	}
	return nil
}

// nextRecord makes the next non-empty record batch current, its mapped
// columns checked (checkRecord); io.EOF after the last.
func (ar *Reader) nextRecord() error {
	for {
		if ar.rec != nil {
			ar.base += ar.rec.NumRows()
		}
		ar.rec, ar.pos = nil, 0
		if !ar.sr.Next() {
			if err := ar.sr.Err(); err != nil {
				return fmt.Errorf("%s: record batch %d: %w: %w", ar.name, ar.next, input.ErrCorrupt, err)
			}
			return io.EOF
		}
		ar.next++
		ar.rec = ar.sr.RecordBatch()
		if ar.rec.NumRows() > 0 {
			return ar.checkRecord()
		}
	}
}

// checkRecord checks the string and binary values of the mapped flat
// columns of the current record batch, and of their dictionaries (each
// dictionary once), before any is read (see checkValues), and sums the
// bounds of the values of the columns after loc (ar.per).
func (ar *Reader) checkRecord() error {
	if ar.dicts == nil {
		ar.dicts = make([]dictBound, ar.rec.NumCols())
	}
	ar.per = 0
	for c, fi := range ar.cols {
		if fi < 0 {
			continue
		}
		bound, err := ar.check(fi)
		if err != nil {
			return ar.fieldErr(fi, err)
		}
		if c != int(input.Loc) {
			ar.per += bound
		}
	}
	for x, fi := range ar.extCols {
		var bound int
		var err error
		if l := ar.list(x); l != nil {
			bound, err = l.bound(ar.rec.Column(fi))
		} else {
			bound, err = ar.check(fi)
		}
		if err != nil {
			return ar.fieldErr(fi, err)
		}
		ar.per += bound
	}
	return nil
}

// dictBound is a dictionary checkRecord checked, and its values' bound.
type dictBound struct {
	data  arrow.ArrayData
	bound int
}

// check checks the values of flat field fi of the current record batch
// (see checkValues) and returns the most bytes one of its values can add
// to a batch: the longest string (at most columnar.MaxValue: a longer one
// adds nothing, see columnar.Long) or the longest text of its type.
func (ar *Reader) check(fi int) (int, error) {
	var b int
	var err error
	if fi < len(ar.dicts) {
		b, err = checkArray(ar.rec.Column(fi), ar.base+1, &ar.dicts[fi])
	} else {
		b, err = checkArray(ar.rec.Column(fi), ar.base+1, nil)
	}
	return min(b, columnar.MaxValue), err
}

// checkArray is checkValues for arr, or for its dictionary when it is
// dictionary-encoded: once, when last remembers it checked it; it
// remembers the dictionary in last (when not nil).
func checkArray(arr arrow.Array, row int64, last *dictBound) (int, error) {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		return checkValues(arr, row)
	}
	dict := d.Dictionary()
	if last != nil && last.data == dict.Data() {
		return last.bound, nil
	}
	bound, err := checkValues(dict, dictValues)
	if err == nil && last != nil {
		*last = dictBound{dict.Data(), bound}
	}
	return bound, err
}

// Fill appends rows to b (b.Buf, b.Fields, b.Line; b.Source = the file name)
// until about chunk bytes are in b.Buf (chunk <= 0: input.DefaultChunk) or the
// input ends; b.Line[i] is the 1-based row number in the file. It returns
// io.EOF when the input is exhausted and it added no rows; errors name the
// file and record batch, wrap input.ErrCorrupt, and are sticky. A panic of the
// Arrow library on a corrupt input is returned as such an error.
func (ar *Reader) Fill(b *input.Batch, chunk int) error {
	if ar.prefetch != nil {
		ar.prefetch()
		ar.prefetch = nil
	}
	return ar.fill.Fill(b, chunk)
}

// where names the record batch being read, and the column when a take is
// under way, for a panic.
func (ar *Reader) where() string {
	if ar.col >= 0 && ar.rec != nil && ar.col < int(ar.rec.NumCols()) {
		return fmt.Sprintf("record batch %d, column %q", ar.next-1, ar.rec.Schema().Field(ar.col).Name)
	}
	return fmt.Sprintf("record batch %d", ar.next-1)
}

// take is the Filler's Take: the next rows of the current record batch, at
// most most, after moving on to the next one when it is done.
func (ar *Reader) take(buf []byte, most, budget int) ([]byte, int, error) {
	if ar.rec == nil || ar.pos >= int(ar.rec.NumRows()) {
		if err := ar.nextRecord(); err != nil {
			return buf, 0, err
		}
	}
	f := &ar.fill
	want := min(int(ar.rec.NumRows())-ar.pos, most)
	if budget >= 0 && ar.per > 0 {
		// The other columns take as many rows as the loc does: a step
		// of rows whose values, at their longest, add at most
		// columnar.StepBytes.
		want = min(want, max(1, columnar.StepBytes/ar.per))
	}
	var n int
	var err error
	ar.col = ar.cols[input.Loc]
	buf, f.Spans[input.Loc], n, err = take(f, buf, f.Spans[input.Loc], ar.rec.Column(ar.col), ar.pos, want, budget, true)
	if err != nil {
		return buf, 0, ar.colErr(input.Loc, err)
	}
	if n == 0 {
		return buf, 0, nil // the next loc does not fit
	}
	for c := input.Loc + 1; c < input.NumColumns; c++ {
		if ar.cols[c] < 0 {
			continue
		}
		ar.col = ar.cols[c]
		if buf, f.Spans[c], _, err = take(f, buf, f.Spans[c], ar.rec.Column(ar.col), ar.pos, n, -1, false); err != nil {
			return buf, 0, ar.colErr(c, err)
		}
	}
	for x, fi := range ar.extCols {
		ar.col = fi
		if l := ar.list(x); l != nil {
			buf, f.ExtSpans[x], err = l.take(buf, f.ExtSpans[x], ar.rec.Column(fi), ar.pos, n)
		} else {
			buf, f.ExtSpans[x], _, err = take(f, buf, f.ExtSpans[x], ar.rec.Column(fi), ar.pos, n, -1, false)
		}
		if err != nil {
			return buf, 0, ar.fieldErr(fi, err)
		}
	}
	ar.col = -1
	ar.pos += n
	return buf, n, nil
}

func (ar *Reader) colErr(c input.Column, err error) error { return ar.fieldErr(ar.cols[c], err) }

// fieldErr is err, of field fi of the current record batch.
func (ar *Reader) fieldErr(fi int, err error) error {
	return fmt.Errorf("%s: record batch %d, column %q: %w: %w", ar.name, ar.next-1, ar.rec.Schema().Field(fi).Name, input.ErrCorrupt, err)
}

var errLength = errors.New("column shorter than its record batch")

// take appends rows from..from+n of arr to buf as text, their spans to
// spans, and reports how many it took: fewer than n when budget >= 0 and
// the next value would take buf past budget (a string over
// columnar.MaxValue counted as that; only strings are read with a
// budget: the loc's). A string over columnar.MaxValue is not copied:
// columnar.Long takes its row (loc: the column is the loc).
func take(f *columnar.Filler, buf []byte, spans []columnar.Span, arr arrow.Array, from, n, budget int, loc bool) ([]byte, []columnar.Span, int, error) {
	if arr.Len() < from+n {
		return buf, spans, 0, errLength
	}
	if buf, spans, took, ok, err := text(f, buf, spans, nil, arr, from, n, budget, loc); ok {
		return buf, spans, took, err
	}
	switch a := arr.(type) {
	case *array.Date32:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Date32, i int) []byte { return columnar.AppendDate(d, int64(a.Value(i))) })
	case *array.Date64:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Date64, i int) []byte {
			return columnar.AppendDate(d, columnar.DaysFromMillis(int64(a.Value(i))))
		})
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		perSec := columnar.ArrowPerSec(t.Unit)
		if perSec == 0 {
			return buf, spans, 0, fmt.Errorf("timestamp of unknown unit %v", t.Unit)
		}
		utc := t.TimeZone != ""
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Timestamp, i int) []byte {
			return columnar.AppendTimestamp(d, int64(a.Value(i)), perSec, utc)
		})
	case *array.Float32:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Float32, i int) []byte {
			return columnar.AppendFloat(d, float64(a.Value(i)), 32)
		})
	case *array.Float64:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Float64, i int) []byte { return columnar.AppendFloat(d, a.Value(i), 64) })
	case *array.Decimal128:
		scale := int(a.DataType().(*arrow.Decimal128Type).Scale)
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Decimal128, i int) []byte {
			v := a.Value(i)
			lo, hi := int64(v.LowBits()), v.HighBits()
			if hi != lo>>63 { // beyond int64: no priority anyway
				return append(d, columnar.InvalidNumber...)
			}
			return columnar.AppendDecimal(d, lo, scale)
		})
	case *array.Int32:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Int32, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Int64:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Int64, i int) []byte { return strconv.AppendInt(d, a.Value(i), 10) })
	case *array.Boolean:
		return loop(buf, spans, a, from, n, func(d []byte, a *array.Boolean, i int) []byte { return strconv.AppendBool(d, a.Value(i)) })
	case *array.Dictionary:
		return takeDict(f, buf, spans, a, from, n, budget, loc)
	}
	return buf, spans, 0, fmt.Errorf("%w %s", input.ErrColumnType, arr.DataType())
}

// takeDict is take for a dictionary-encoded array: each row is its
// dictionary value.
func takeDict(f *columnar.Filler, buf []byte, spans []columnar.Span, a *array.Dictionary, from, n, budget int, loc bool) ([]byte, []columnar.Span, int, error) {
	if buf, spans, took, ok, err := text(f, buf, spans, a, a.Dictionary(), from, n, budget, loc); ok {
		return buf, spans, took, err
	}
	// Typed values (dates, numbers: never a loc, so without a budget).
	dict := a.Dictionary()
	var one []columnar.Span
	took := 0
	for i := from; i < from+n; i++ {
		if a.IsNull(i) {
			spans = append(spans, columnar.NullSpan)
		} else {
			j := a.GetValueIndex(i)
			if j < 0 || j >= dict.Len() {
				return buf, spans, took, fmt.Errorf("dictionary index %d out of range (%d values)", j, dict.Len())
			}
			var err error
			var k int
			// One dictionary value, through the typed loops above; one is
			// the scratch span list of length 1 on the stack's behalf.
			buf, one, k, err = take(f, buf, one[:0], dict, j, 1, -1, false)
			if err != nil || k != 1 {
				return buf, spans, took, err
			}
			spans = append(spans, one[0])
		}
		took++
	}
	return buf, spans, took, nil
}

// text is take for the string and binary arrays, values of the dictionary
// d if it is not nil: ok is false for an array of another type.
func text(f *columnar.Filler, buf []byte, spans []columnar.Span, d *array.Dictionary, arr arrow.Array, from, n, budget int, loc bool) (_ []byte, _ []columnar.Span, took int, ok bool, err error) {
	switch a := arr.(type) {
	case *array.String:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.String).Value, from, n, budget, loc)
	case *array.LargeString:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.LargeString).Value, from, n, budget, loc)
	case *array.StringView:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.StringView).Value, from, n, budget, loc)
	case *array.Binary:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.Binary).Value, from, n, budget, loc)
	case *array.LargeBinary:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.LargeBinary).Value, from, n, budget, loc)
	case *array.BinaryView:
		buf, spans, took, err = strs(f, buf, spans, d, a, (*array.BinaryView).Value, from, n, budget, loc)
	default:
		return buf, spans, 0, false, nil
	}
	return buf, spans, took, true, err
}

// strs appends rows from..from+n of the string or binary array a (value
// reads one), or of the dictionary-encoded array d whose dictionary a is,
// nulls as columnar.NullSpan; it stops before a value that would take buf
// past budget (when budget >= 0), one over columnar.MaxValue counted as
// that, and hands such a value to columnar.Long.
func strs[A interface{ IsNull(int) bool }, T string | []byte](f *columnar.Filler, buf []byte, spans []columnar.Span, d *array.Dictionary, a A, value func(A, int) T, from, n, budget int, loc bool) ([]byte, []columnar.Span, int, error) {
	took := 0
	values := 0 // of the dictionary
	if d != nil {
		values = d.Dictionary().Len()
	}
	for i := from; i < from+n; i++ {
		j := i
		if d != nil {
			if d.IsNull(i) {
				spans = append(spans, columnar.NullSpan)
				took++
				continue
			}
			if j = d.GetValueIndex(i); j < 0 || j >= values {
				return buf, spans, took, fmt.Errorf("dictionary index %d out of range (%d values)", j, values)
			}
		}
		if a.IsNull(j) {
			spans = append(spans, columnar.NullSpan)
			took++
			continue
		}
		v := value(a, j)
		if budget >= 0 && len(buf)+min(len(v), columnar.MaxValue) > budget {
			break
		}
		if len(v) > columnar.MaxValue {
			buf, spans = columnar.Long(f, buf, spans, v, loc)
		} else {
			start := len(buf)
			buf = append(buf, v...)
			spans = append(spans, columnar.Span{Start: uint32(start), End: uint32(len(buf))})
		}
		took++
	}
	return buf, spans, took, nil
}

// loop appends rows from..from+n of a with app, nulls as
// columnar.NullSpan: the typed values, whose text is bounded by their type.
func loop[A interface{ IsNull(int) bool }](buf []byte, spans []columnar.Span, a A, from, n int, app func([]byte, A, int) []byte) ([]byte, []columnar.Span, int, error) {
	for i := from; i < from+n; i++ {
		if a.IsNull(i) {
			spans = append(spans, columnar.NullSpan)
		} else {
			start := len(buf)
			buf = app(buf, a, i)
			spans = append(spans, columnar.Span{Start: uint32(start), End: uint32(len(buf))})
		}
	}
	return buf, spans, n, nil
}
