package pipeline

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
)

// ArrowReader reads the rows of an Arrow IPC input, the file format
// (.arrow, .feather v2) or the stream format (.arrows), one record batch at a
// time, copying the values of the mapped columns from the record batch's
// arrays into the Batch's Buf without allocating per row.
//
// Columns are found by name (exact, else case-insensitive). loc and
// changefreq are string or binary arrays (also large, view and
// dictionary-encoded); lastmod is a string, a date32/date64 (written
// YYYY-MM-DD) or a timestamp of any unit (written YYYY-MM-DDThh:mm:ss[.f],
// with Z when the type has a time zone, the value then being an instant,
// without one, so read in --lastmod-tz, when it has none); priority is a
// float32, float64, decimal128 or a string. A null is an absent field. The
// list extension columns images, alternates and videos are list or
// large_list columns (arrow_list.go).
//
// arrow-go decodes the messages, which sitemapgen reads and checks first
// (arrow_guard.go): nothing a corrupt input claims (lengths, counts,
// decompressed sizes) is allocated before it is checked against the input
// and the limits there, so a damaged file costs memory in proportion to its
// size, and at most maxArrowBatch per record batch.
//
// Batch.Line holds the 1-based row number of each row in the file.
type ArrowReader struct {
	name  string
	file  *os.File
	sr    *ipc.Reader // over arrowMessages: the file or the stream format
	next  int         // next record batch
	rec   arrow.RecordBatch
	pos   int // next row of rec
	cols  [NumColumns]int
	rows  int64
	err   error
	spans [NumColumns][]span

	ext      []encode.ExtColumn // extension columns (see encode.ParseExtColumn)
	extCols  []int              // their field indexes
	extSpans [][]span
	lists    []*arrowList // list columns (images, alternates, videos) by extension index; see arrow_list.go
}

// arrowMagic opens the Arrow IPC file format (the stream format has none).
const arrowMagic = "ARROW1"

// OpenArrow opens the Arrow IPC file or stream name and maps its columns.
func OpenArrow(name string, opt ColumnOptions) (*ArrowReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	ar, err := NewArrowReader(f, name, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	ar.file = f
	return ar, nil
}

// NewArrowReader reads the Arrow IPC input in r, an input named source, in
// the file format when it starts with the Arrow file magic, else in the
// stream format. Errors name the source and wrap ErrCorrupt, ErrNoColumn or
// ErrColumnType.
func NewArrowReader(r io.ReadSeeker, source string, opt ColumnOptions) (ar *ArrowReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			ar, err = nil, fmt.Errorf("%s: %w: %v", source, ErrCorrupt, p)
		}
	}()
	ar = &ArrowReader{name: source}
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		size = -1 // a stream of unknown size: the limits alone bound what it claims
	}
	var magic [len(arrowMagic)]byte
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	n, _ := io.ReadFull(r, magic[:])
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	// arrow-go decodes the messages, read and checked by arrowMessages
	// (arrow_guard.go): it allocates what a message claims.
	var msgs *arrowMessages
	what := "not a readable Arrow IPC file or stream"
	if string(magic[:n]) == arrowMagic {
		what = "not a readable Arrow IPC file"
		ra, ok := r.(io.ReaderAt)
		if !ok || size < 0 {
			return nil, fmt.Errorf("%s: the Arrow file format needs a file, not a stream", source)
		}
		if msgs, err = newArrowFile(ra, size); err != nil {
			return nil, fmt.Errorf("%s: %s: %w: %w", source, what, ErrCorrupt, err)
		}
	} else {
		buf := 1 << 20
		if size >= 0 {
			buf = int(max(16, min(size, 1<<20)))
		}
		msgs = newArrowStream(bufio.NewReaderSize(r, buf), size)
	}
	ar.sr, err = ipc.NewReaderFromMessageReader(msgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w: %w", source, what, ErrCorrupt, err)
	}
	fields := ar.sr.Schema().Fields()
	have := make([]string, len(fields))
	for i, f := range fields {
		have[i] = f.Name
	}
	names, mapped := opt.names()
	for c := range NumColumns {
		ar.cols[c] = -1
		i := findField(have, names[c])
		if i < 0 {
			if err := missingColumn(source, c, names[c], mapped[c], have); err != nil {
				ar.Close()
				return nil, err
			}
			continue
		}
		if err := checkArrowType(c, fields[i]); err != nil {
			ar.Close()
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		ar.cols[c] = i
	}
	// Extension columns: the other fields named like one.
next:
	for i, f := range fields {
		for _, c := range ar.cols {
			if c == i {
				continue next
			}
		}
		x, ok := encode.ParseExtColumn(f.Name)
		if !ok {
			continue
		}
		if isListKind(x.Kind) {
			if err := ar.addList(x, i, f); err != nil {
				ar.Close()
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			continue
		}
		if err := checkArrowExtType(x.Kind, f); err != nil {
			ar.Close()
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		ar.ext = append(ar.ext, x)
		ar.extCols = append(ar.extCols, i)
		ar.extSpans = append(ar.extSpans, nil)
	}
	return ar, nil
}

// Extensions returns the extension columns of the input.
func (ar *ArrowReader) Extensions() []encode.ExtColumn { return ar.ext }

// checkArrowExtType reports whether field f can be read as an extension
// column of kind k: as the core field extLike(k) can, or as an integer
// (video:duration, video:view_count) or a boolean (mobile and the yes/no
// video elements).
func checkArrowExtType(k encode.ExtKind, f arrow.Field) error {
	err := checkArrowType(extLike(k), f)
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

func findField(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// checkArrowType reports whether field f can be read as field c.
func checkArrowType(c Column, f arrow.Field) error {
	t := f.Type
	if d, ok := t.(*arrow.DictionaryType); ok {
		t = d.ValueType
	}
	ok := false
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		ok = true
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		ok = c == Lastmod
	case arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		ok = c == Priority
	}
	if ok {
		return nil
	}
	want := map[Column]string{
		Loc:        "want a string or binary",
		Changefreq: "want a string or binary",
		Lastmod:    "want a string, date or timestamp",
		Priority:   "want float, double, decimal128 or a string",
	}[c]
	what := f.Type.String()
	if _, nested := t.(arrow.NestedType); nested {
		what += " (a nested column); want a flat column, " + strings.TrimPrefix(want, "want ")
	} else {
		what += "; " + want
	}
	return fmt.Errorf("column %q (%s field): %w %s", f.Name, defaultColumnNames[c], ErrColumnType, what)
}

// Rows reports the rows handed out so far.
func (ar *ArrowReader) Rows() int64 { return ar.rows }

// Close releases the input.
func (ar *ArrowReader) Close() error {
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

// nextRecord makes the next non-empty record batch current; io.EOF after the last.
func (ar *ArrowReader) nextRecord() error {
	for {
		ar.rec, ar.pos = nil, 0
		if !ar.sr.Next() {
			if err := ar.sr.Err(); err != nil {
				return fmt.Errorf("%s: record batch %d: %w: %w", ar.name, ar.next, ErrCorrupt, err)
			}
			return io.EOF
		}
		ar.next++
		ar.rec = ar.sr.RecordBatch()
		if ar.rec.NumRows() > 0 {
			return nil
		}
	}
}

// Fill appends rows to b (b.Buf, b.Fields, b.Line; b.Source = the file name)
// until about chunk bytes are in b.Buf (chunk <= 0: DefaultChunk) or the
// input ends; b.Line[i] is the 1-based row number in the file. It returns
// io.EOF when the input is exhausted and it added no rows; errors name the
// file and record batch, wrap ErrCorrupt, and are sticky. A panic of the
// Arrow library on a corrupt input is returned as such an error.
func (ar *ArrowReader) Fill(b *Batch, chunk int) (err error) {
	if ar.err != nil {
		return ar.err
	}
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: record batch %d: %w: %v", ar.name, ar.next-1, ErrCorrupt, p)
		}
		if err != nil && err != io.EOF {
			ar.err = err
		}
	}()
	b.Source = ar.name
	budget := len(b.Buf) + chunk
	for c := range ar.spans {
		ar.spans[c] = ar.spans[c][:0]
	}
	for x := range ar.extSpans {
		ar.extSpans[x] = ar.extSpans[x][:0]
	}
	total := 0
	for len(b.Buf) < budget && total < maxBatchRows {
		if ar.rec == nil || ar.pos >= int(ar.rec.NumRows()) {
			if err := ar.nextRecord(); err != nil {
				if err == io.EOF {
					break
				}
				return err
			}
		}
		want := min(int(ar.rec.NumRows())-ar.pos, maxBatchRows-total)
		var n int
		b.Buf, ar.spans[Loc], n, err = takeArrow(b.Buf, ar.spans[Loc], ar.rec.Column(ar.cols[Loc]), ar.pos, want, budget)
		if err != nil {
			return ar.colErr(Loc, err)
		}
		for c := Loc + 1; c < NumColumns; c++ {
			if ar.cols[c] < 0 {
				continue
			}
			b.Buf, ar.spans[c], _, err = takeArrow(b.Buf, ar.spans[c], ar.rec.Column(ar.cols[c]), ar.pos, n, -1)
			if err != nil {
				return ar.colErr(c, err)
			}
		}
		for x, fi := range ar.extCols {
			if l := ar.list(x); l != nil {
				b.Buf, ar.extSpans[x], err = l.take(b.Buf, ar.extSpans[x], ar.rec.Column(fi), ar.pos, n)
			} else {
				b.Buf, ar.extSpans[x], _, err = takeArrow(b.Buf, ar.extSpans[x], ar.rec.Column(fi), ar.pos, n, -1)
			}
			if err != nil {
				return fmt.Errorf("%s: record batch %d, column %q: %w: %w", ar.name, ar.next-1, ar.rec.Schema().Field(fi).Name, ErrCorrupt, err)
			}
		}
		ar.pos += n
		total += n
	}
	if len(ar.ext) > 0 {
		b.setExt(ar.ext)
		for x := range ar.extCols {
			b.ExtFields[x] = appendViews(b.ExtFields[x], b.Buf, ar.extSpans[x])
		}
	}
	for c := range NumColumns {
		if ar.cols[c] >= 0 {
			setViews(b, c, ar.spans[c])
		}
	}
	for i := range total {
		b.Line = append(b.Line, ar.rows+int64(i)+1)
	}
	ar.rows += int64(total)
	if total == 0 {
		return io.EOF
	}
	return nil
}

func (ar *ArrowReader) colErr(c Column, err error) error {
	return fmt.Errorf("%s: record batch %d, column %q: %w: %w", ar.name, ar.next-1, ar.rec.Schema().Field(ar.cols[c]).Name, ErrCorrupt, err)
}

var errArrowLength = errors.New("column shorter than its record batch")

// takeArrow appends rows from..from+n of arr to buf as text, their spans to
// spans, and reports how many it took: fewer than n when budget >= 0 and
// buf reached budget bytes.
func takeArrow(buf []byte, spans []span, arr arrow.Array, from, n, budget int) ([]byte, []span, int, error) {
	if arr.Len() < from+n {
		return buf, spans, 0, errArrowLength
	}
	switch a := arr.(type) {
	case *array.String:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.String, i int) []byte { return append(d, a.Value(i)...) })
	case *array.LargeString:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.LargeString, i int) []byte { return append(d, a.Value(i)...) })
	case *array.StringView:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.StringView, i int) []byte { return append(d, a.Value(i)...) })
	case *array.Binary:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Binary, i int) []byte { return append(d, a.Value(i)...) })
	case *array.LargeBinary:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.LargeBinary, i int) []byte { return append(d, a.Value(i)...) })
	case *array.BinaryView:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.BinaryView, i int) []byte { return append(d, a.Value(i)...) })
	case *array.Date32:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Date32, i int) []byte { return appendDate(d, int64(a.Value(i))) })
	case *array.Date64:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Date64, i int) []byte {
			return appendDate(d, daysFromMillis(int64(a.Value(i))))
		})
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		perSec := arrowPerSec(t.Unit)
		if perSec == 0 {
			return buf, spans, 0, fmt.Errorf("timestamp of unknown unit %v", t.Unit)
		}
		utc := t.TimeZone != ""
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Timestamp, i int) []byte {
			return appendTimestamp(d, int64(a.Value(i)), perSec, utc)
		})
	case *array.Float32:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Float32, i int) []byte { return appendFloat(d, float64(a.Value(i)), 32) })
	case *array.Float64:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Float64, i int) []byte { return appendFloat(d, a.Value(i), 64) })
	case *array.Decimal128:
		scale := int(a.DataType().(*arrow.Decimal128Type).Scale)
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Decimal128, i int) []byte {
			v := a.Value(i)
			lo, hi := int64(v.LowBits()), v.HighBits()
			if hi != lo>>63 { // beyond int64: no priority anyway
				return append(d, invalidNumber...)
			}
			return appendDecimal(d, lo, scale)
		})
	case *array.Int32:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Int32, i int) []byte { return strconv.AppendInt(d, int64(a.Value(i)), 10) })
	case *array.Int64:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Int64, i int) []byte { return strconv.AppendInt(d, a.Value(i), 10) })
	case *array.Boolean:
		return loop(buf, spans, a, from, n, budget, func(d []byte, a *array.Boolean, i int) []byte { return strconv.AppendBool(d, a.Value(i)) })
	case *array.Dictionary:
		return takeDict(buf, spans, a, from, n, budget)
	}
	return buf, spans, 0, fmt.Errorf("%w %s", ErrColumnType, arr.DataType())
}

// takeDict is takeArrow for a dictionary-encoded array: each row is its
// dictionary value.
func takeDict(buf []byte, spans []span, a *array.Dictionary, from, n, budget int) ([]byte, []span, int, error) {
	dict := a.Dictionary()
	var one []span
	took := 0
	for i := from; i < from+n; i++ {
		if budget >= 0 && len(buf) >= budget {
			break
		}
		if a.IsNull(i) {
			spans = append(spans, nullSpan)
		} else {
			j := a.GetValueIndex(i)
			if j < 0 || j >= dict.Len() {
				return buf, spans, took, fmt.Errorf("dictionary index %d out of range (%d values)", j, dict.Len())
			}
			var err error
			var k int
			// One dictionary value, through the typed loops above; one is
			// the scratch span list of length 1 on the stack's behalf.
			buf, one, k, err = takeArrow(buf, one[:0], dict, j, 1, -1)
			if err != nil || k != 1 {
				return buf, spans, took, err
			}
			spans = append(spans, one[0])
		}
		took++
	}
	return buf, spans, took, nil
}

// loop appends rows from..from+n of a with app, nulls as nullSpan, stopping
// once buf reaches budget (when budget >= 0).
func loop[A interface{ IsNull(int) bool }](buf []byte, spans []span, a A, from, n, budget int, app func([]byte, A, int) []byte) ([]byte, []span, int, error) {
	took := 0
	for i := from; i < from+n; i++ {
		if budget >= 0 && len(buf) >= budget {
			break
		}
		if a.IsNull(i) {
			spans = append(spans, nullSpan)
		} else {
			start := len(buf)
			buf = app(buf, a, i)
			spans = append(spans, span{uint32(start), uint32(len(buf))})
		}
		took++
	}
	return buf, spans, took, nil
}
