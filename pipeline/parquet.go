package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/encode"
)

// ParquetReader reads the rows of an Apache Parquet file into Batches through
// parquet-go's page API: it decodes one page per column at a time and copies
// the values of the mapped columns into the Batch's Buf, without allocating
// per row. Row groups are read in order and a batch may span several; memory
// is bounded by a page per column and the batch, never by the row group.
//
// Columns are found by name (exact, else case-insensitive) among the
// top-level fields. loc and changefreq are strings (BYTE_ARRAY, also
// dictionary-encoded); lastmod is a string, a DATE (written YYYY-MM-DD), a
// TIMESTAMP of any unit or an INT96 timestamp (written YYYY-MM-DDThh:mm:ss[.f],
// with Z when the timestamp is UTC-adjusted, without a zone, so read in
// --lastmod-tz, when it is not); priority is a FLOAT, a DOUBLE, a DECIMAL or a
// string. A null is an absent field. Nested and repeated columns are refused,
// but for the list extension columns images, alternates and videos
// (parquet_list.go).
//
// Batch.Line holds the 1-based row number of each row in the file.
type ParquetReader struct {
	name string
	file *os.File
	pf   *parquet.File

	cols  [NumColumns]*pqColumn // nil: the file has no such column
	rg    int                   // next row group to open
	left  int64                 // rows of the open row group not read yet
	rows  int64
	err   error
	spans [NumColumns][]span

	ext      []encode.ExtColumn // extension columns (see encode.ParseExtColumn)
	extCols  []*pqColumn        // nil for a list column: lists
	extSpans [][]span
	lists    []*pqList // list columns (images, alternates, videos) by extension index; see parquet_list.go
}

// readBuffer is the read size per column chunk: large reads, few system calls.
const readBuffer = 1 << 20

// valueKind is how a column's values become text.
type valueKind int

const (
	kindBytes     valueKind = iota // BYTE_ARRAY, as is
	kindDate                       // INT32 days since the epoch
	kindTimestamp                  // INT64 in units of 1/perSec s
	kindInt96                      // legacy INT96 timestamp: nanoseconds of the day, Julian day
	kindFloat                      // FLOAT
	kindDouble                     // DOUBLE
	kindDec32                      // INT32 decimal
	kindDec64                      // INT64 decimal
	kindDecBytes                   // (FIXED_LEN_)BYTE_ARRAY decimal, big-endian
	kindInt32                      // INT32, as a decimal integer
	kindInt64                      // INT64, as a decimal integer
	kindBool                       // BOOLEAN, bit-packed: "true" or "false"
)

// pqColumn reads one mapped column, a page at a time.
type pqColumn struct {
	field  Column
	name   string
	leaf   *parquet.Column
	kind   valueKind
	perSec int64 // kindTimestamp
	utc    bool  // kindTimestamp
	scale  int   // decimals

	pages  parquet.Pages
	page   parquet.Page
	def    []byte // definition levels of the page; nil when the column is required
	maxDef byte
	n, r   int // rows in the page, next row
	v      int // next value

	idx []int32 // dictionary indexes of the page's values; nil: plain values
	// The values: of the page, or of the dictionary when idx != nil.
	bytes []byte
	offs  []uint32
	fixed int // FIXED_LEN_BYTE_ARRAY size (offs is nil then)
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	i96   []deprecated.Int96
	bits  []byte
	nvals int
}

// OpenParquet opens the Parquet file name and maps its columns.
func OpenParquet(name string, opt ColumnOptions) (*ParquetReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pr, err := NewParquetReader(f, fi.Size(), name, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	pr.file = f
	return pr, nil
}

// NewParquetReader reads the Parquet file of size bytes in r, an input named
// source. Errors name the source and wrap ErrCorrupt, ErrNoColumn or
// ErrColumnType.
func NewParquetReader(r io.ReaderAt, size int64, source string, opt ColumnOptions) (pr *ParquetReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			pr, err = nil, fmt.Errorf("%s: %w: %v", source, ErrCorrupt, p)
		}
	}()
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(readBuffer))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w: %w", source, ErrCorrupt, err)
	}
	pr = &ParquetReader{name: source, pf: pf}
	names, mapped := opt.names()
	top := pf.Root().Columns()
	for c := range NumColumns {
		col := findColumn(top, names[c])
		if col == nil {
			if err := missingColumn(source, c, names[c], mapped[c], columnNames(top)); err != nil {
				return nil, err
			}
			continue
		}
		pc, err := newPQColumn(c, col)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		pr.cols[c] = pc
	}
	// Extension columns: the other top-level columns named like one.
next:
	for _, col := range top {
		for _, pc := range pr.cols {
			if pc != nil && pc.leaf == col {
				continue next
			}
		}
		x, ok := encode.ParseExtColumn(col.Name())
		if !ok {
			continue
		}
		if isListKind(x.Kind) {
			if err := pr.addList(x, col); err != nil {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			continue
		}
		pc, err := newPQColumn(extLike(x.Kind), col)
		if err != nil {
			pc, err = newPQExtColumn(x.Kind, col, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		pr.ext = append(pr.ext, x)
		pr.extCols = append(pr.extCols, pc)
		pr.extSpans = append(pr.extSpans, nil)
	}
	return pr, nil
}

// Extensions returns the extension columns of the file.
func (pr *ParquetReader) Extensions() []encode.ExtColumn { return pr.ext }

// extLike returns the core field whose column types an extension column
// accepts: dates like lastmod (string, DATE, TIMESTAMP), a rating like
// priority (string, FLOAT, DOUBLE, DECIMAL), everything else a string like
// changefreq. newPQExtColumn adds integers and booleans where they fit.
func extLike(k encode.ExtKind) Column {
	switch k {
	case encode.ExtNewsDate, encode.ExtVideoPublicationDate, encode.ExtVideoExpirationDate:
		return Lastmod
	case encode.ExtVideoRating:
		return Priority
	}
	return Changefreq
}

// newPQExtColumn accepts the integer columns of video:duration and
// video:view_count and the BOOLEAN columns of mobile and the yes/no video
// elements, or returns typeErr, the error of the string column they are not.
func newPQExtColumn(k encode.ExtKind, col *parquet.Column, typeErr error) (*pqColumn, error) {
	if !col.Leaf() || col.Repeated() || col.MaxRepetitionLevel() > 0 || col.MaxDefinitionLevel() > 1 {
		return nil, typeErr
	}
	pc := &pqColumn{field: Changefreq, name: col.Name(), leaf: col, maxDef: byte(col.MaxDefinitionLevel())}
	switch kind := col.Type().Kind(); {
	case (k == encode.ExtVideoDuration || k == encode.ExtVideoViewCount) && kind == parquet.Int32:
		pc.kind = kindInt32
	case (k == encode.ExtVideoDuration || k == encode.ExtVideoViewCount) && kind == parquet.Int64:
		pc.kind = kindInt64
	case (k == encode.ExtMobile || k == encode.ExtVideoFamilyFriendly || k == encode.ExtVideoRequiresSubscription || k == encode.ExtVideoLive) && kind == parquet.Boolean:
		pc.kind = kindBool
	default:
		return nil, typeErr
	}
	return pc, nil
}

func findColumn(cols []*parquet.Column, name string) *parquet.Column {
	for _, c := range cols {
		if c.Name() == name {
			return c
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c.Name(), name) {
			return c
		}
	}
	return nil
}

func columnNames(cols []*parquet.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name()
	}
	return names
}

// newPQColumn checks that col can be read as field c and decides how.
func newPQColumn(c Column, col *parquet.Column) (*pqColumn, error) {
	pc := &pqColumn{field: c, name: col.Name(), leaf: col, maxDef: byte(col.MaxDefinitionLevel())}
	typeErr := func(what string) error {
		return fmt.Errorf("column %q (%s field): %w %s", col.Name(), defaultColumnNames[c], ErrColumnType, what)
	}
	if !col.Leaf() {
		what := "group"
		if lt := col.Type().LogicalType(); lt != nil && lt.Value != nil {
			what = lt.String()
		}
		return nil, typeErr(what + " (a nested column); want a flat column")
	}
	if col.Repeated() || col.MaxRepetitionLevel() > 0 {
		return nil, typeErr("repeated " + col.Type().String() + " (a list); want a flat column")
	}
	if pc.maxDef > 1 {
		return nil, typeErr(col.Type().String() + " nested in a group; want a flat column")
	}
	typ := col.Type()
	var lt format.LogicalTypeValue
	if l := typ.LogicalType(); l != nil {
		lt = l.Value
	}
	kind := typ.Kind()
	if kind == parquet.FixedLenByteArray {
		pc.fixed = typ.Length()
	}
	want := map[Column]string{
		Loc:        "want a string (BYTE_ARRAY)",
		Changefreq: "want a string (BYTE_ARRAY)",
		Lastmod:    "want a string, DATE or TIMESTAMP",
		Priority:   "want FLOAT, DOUBLE, DECIMAL or a string",
	}[c]
	if d, ok := lt.(*format.DecimalType); ok {
		if c != Priority {
			return nil, typeErr(typ.String() + "; " + want)
		}
		pc.scale = int(d.Scale)
		switch kind {
		case parquet.Int32:
			pc.kind = kindDec32
		case parquet.Int64:
			pc.kind = kindDec64
		default:
			pc.kind = kindDecBytes
		}
		return pc, nil
	}
	switch {
	case kind == parquet.ByteArray:
		switch lt.(type) {
		case nil, *format.StringType, *format.EnumType, *format.JsonType:
			pc.kind = kindBytes
			return pc, nil
		}
	case c == Lastmod && kind == parquet.Int32:
		if _, ok := lt.(*format.DateType); ok {
			pc.kind = kindDate
			return pc, nil
		}
	case c == Lastmod && kind == parquet.Int64:
		if ts, ok := lt.(*format.TimestampType); ok {
			pc.kind, pc.utc = kindTimestamp, ts.IsAdjustedToUTC
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				pc.perSec = unitMillis
			case *format.MicroSeconds:
				pc.perSec = unitMicros
			case *format.NanoSeconds:
				pc.perSec = unitNanos
			default:
				return nil, typeErr(typ.String() + " of unknown unit; " + want)
			}
			return pc, nil
		}
	case c == Lastmod && kind == parquet.Int96:
		pc.kind = kindInt96
		return pc, nil
	case c == Priority && kind == parquet.Float:
		pc.kind = kindFloat
		return pc, nil
	case c == Priority && kind == parquet.Double:
		pc.kind = kindDouble
		return pc, nil
	}
	return nil, typeErr(typ.String() + "; " + want)
}

// Rows reports the rows handed out so far.
func (pr *ParquetReader) Rows() int64 { return pr.rows }

// Close releases the file.
func (pr *ParquetReader) Close() error {
	for _, c := range append(pr.cols[:], pr.extCols...) {
		if c != nil {
			c.close()
		}
	}
	pr.closeLists()
	if pr.file != nil {
		err := pr.file.Close()
		pr.file = nil
		return err
	}
	return nil
}

// Fill appends rows to b (b.Buf, b.Fields, b.Line; b.Source = the file name)
// until about chunk bytes are in b.Buf (chunk <= 0: DefaultChunk) or the
// file ends; b.Line[i] is the 1-based row number in the file. It returns
// io.EOF when the file is exhausted and it added no rows; errors name the
// file, row group and column, wrap ErrCorrupt, and are sticky. A panic of
// the Parquet library on a corrupt file is returned as such an error.
func (pr *ParquetReader) Fill(b *Batch, chunk int) (err error) {
	if pr.err != nil {
		return pr.err
	}
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: row group %d: %w: %v", pr.name, pr.rg, ErrCorrupt, p)
		}
		if err != nil && err != io.EOF {
			pr.err = err
		}
	}()
	b.Source = pr.name
	rows0 := len(b.Line)
	budget := len(b.Buf) + chunk
	for c := range pr.spans {
		pr.spans[c] = pr.spans[c][:0]
	}
	for x := range pr.extSpans {
		pr.extSpans[x] = pr.extSpans[x][:0]
	}
	loc := pr.cols[Loc]
	total := 0
	for len(b.Buf) < budget && total < maxBatchRows {
		if pr.left == 0 {
			if err := pr.nextRowGroup(); err != nil {
				if err == io.EOF {
					break
				}
				return err
			}
			continue
		}
		want := int(min(pr.left, int64(maxBatchRows-total)))
		var n int
		b.Buf, pr.spans[Loc], n, err = loc.take(b.Buf, pr.spans[Loc], want, budget)
		if err != nil {
			return pr.colErr(loc, err)
		}
		for c := Loc + 1; c < NumColumns; c++ {
			col := pr.cols[c]
			if col == nil {
				continue
			}
			var m int
			b.Buf, pr.spans[c], m, err = col.take(b.Buf, pr.spans[c], n, -1)
			if err == nil && m < n {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return pr.colErr(col, err)
			}
		}
		for x, col := range pr.extCols {
			if col == nil {
				if b.Buf, pr.extSpans[x], err = pr.takeList(x, b.Buf, pr.extSpans[x], n); err != nil {
					return err
				}
				continue
			}
			var m int
			b.Buf, pr.extSpans[x], m, err = col.take(b.Buf, pr.extSpans[x], n, -1)
			if err == nil && m < n {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return pr.colErr(col, err)
			}
		}
		pr.left -= int64(n)
		total += n
	}
	for c := range NumColumns {
		if pr.cols[c] != nil {
			setViews(b, c, pr.spans[c])
		}
	}
	if len(pr.ext) > 0 {
		b.setExt(pr.ext)
		for x := range pr.extCols {
			b.ExtFields[x] = appendViews(b.ExtFields[x], b.Buf, pr.extSpans[x])
		}
	}
	for i := range total {
		b.Line = append(b.Line, pr.rows+int64(i)+1)
	}
	pr.rows += int64(total)
	if len(b.Line) == rows0 {
		return io.EOF
	}
	return nil
}

func (pr *ParquetReader) colErr(c *pqColumn, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("column chunk ends before the row group's %d rows: %w", pr.pf.RowGroups()[pr.rg-1].NumRows(), io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: row group %d, column %q: %w: %w", pr.name, pr.rg-1, c.name, ErrCorrupt, err)
}

// nextRowGroup opens the page readers of the next row group; io.EOF after the last.
func (pr *ParquetReader) nextRowGroup() error {
	groups := pr.pf.RowGroups()
	for pr.rg < len(groups) {
		g := groups[pr.rg]
		pr.rg++
		if g.NumRows() == 0 {
			continue
		}
		chunks := g.ColumnChunks()
		for _, c := range append(pr.cols[:], pr.extCols...) {
			if c == nil {
				continue
			}
			c.close()
			i := c.leaf.Index()
			if i < 0 || i >= len(chunks) {
				return fmt.Errorf("%s: row group %d, column %q: %w: no column chunk", pr.name, pr.rg-1, c.name, ErrCorrupt)
			}
			c.pages = chunks[i].Pages()
		}
		if err := pr.openLists(chunks); err != nil {
			return err
		}
		pr.left = g.NumRows()
		return nil
	}
	return io.EOF
}

func (c *pqColumn) close() {
	c.release()
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

func (c *pqColumn) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.n, c.r, c.v = 0, 0, 0
}

// nextPage reads the next data page of the column chunk and checks that its
// values and levels agree.
func (c *pqColumn) nextPage() error {
	c.release()
	p, err := c.pages.ReadPage()
	if err != nil {
		return err
	}
	c.page = p
	c.n = int(p.NumValues())
	c.def = nil
	nonNull := c.n
	if c.maxDef > 0 {
		c.def = p.DefinitionLevels()
		if len(c.def) != c.n {
			return fmt.Errorf("page has %d definition levels for %d values", len(c.def), c.n)
		}
		nonNull = 0
		for _, d := range c.def {
			if d == c.maxDef {
				nonNull++
			}
		}
	}
	data := p.Data()
	c.idx = nil
	if d := p.Dictionary(); d != nil {
		c.idx = data.Int32()
		if len(c.idx) < nonNull {
			return fmt.Errorf("page has %d dictionary indexes for %d values", len(c.idx), nonNull)
		}
		data = d.Page().Data()
	}
	c.bytes, c.offs = nil, nil
	switch c.kind {
	case kindBytes:
		c.bytes, c.offs = data.ByteArray()
		c.nvals = max(len(c.offs)-1, 0)
	case kindDecBytes:
		if c.fixed > 0 {
			c.bytes, _ = data.FixedLenByteArray()
			c.nvals = len(c.bytes) / c.fixed
		} else {
			c.bytes, c.offs = data.ByteArray()
			c.nvals = max(len(c.offs)-1, 0)
		}
	case kindInt96:
		c.i96 = data.Int96()
		c.nvals = len(c.i96)
	case kindBool:
		c.bits = data.Boolean()
		c.nvals = 8 * len(c.bits)
	case kindDate, kindDec32, kindInt32:
		c.i32 = data.Int32()
		c.nvals = len(c.i32)
	case kindTimestamp, kindDec64, kindInt64:
		c.i64 = data.Int64()
		c.nvals = len(c.i64)
	case kindFloat:
		c.f32 = data.Float()
		c.nvals = len(c.f32)
	case kindDouble:
		c.f64 = data.Double()
		c.nvals = len(c.f64)
	}
	if c.offs != nil && (c.offs[0] > c.offs[len(c.offs)-1] || int(c.offs[len(c.offs)-1]) > len(c.bytes)) {
		return errors.New("page value offsets out of range")
	}
	if c.idx == nil && c.nvals < nonNull {
		return fmt.Errorf("page has %d values for %d non-null rows", c.nvals, nonNull)
	}
	return nil
}

// take appends the next want rows of the column to buf, their spans to
// spans, and reports how many it took: fewer than want when budget >= 0 and
// buf reached budget bytes, or when the column chunk ended (io.EOF).
func (c *pqColumn) take(buf []byte, spans []span, want, budget int) ([]byte, []span, int, error) {
	took := 0
	for took < want {
		if budget >= 0 && len(buf) >= budget {
			break
		}
		if c.r == c.n {
			if err := c.nextPage(); err != nil {
				return buf, spans, took, err
			}
			continue
		}
		k := min(want-took, c.n-c.r)
		if c.kind == kindBytes && c.idx == nil && c.def == nil {
			// The hot path: a required plain string column.
			for range k {
				s, e := c.offs[c.v], c.offs[c.v+1]
				if s > e {
					return buf, spans, took, errors.New("page value offsets out of order")
				}
				start := len(buf)
				buf = append(buf, c.bytes[s:e]...)
				spans = append(spans, span{uint32(start), uint32(len(buf))})
				c.v++
				c.r++
				took++
				if budget >= 0 && len(buf) >= budget {
					break
				}
			}
			continue
		}
		for range k {
			if c.def != nil && c.def[c.r] != c.maxDef {
				spans = append(spans, nullSpan)
			} else {
				vi := c.v
				if c.idx != nil {
					vi = int(c.idx[c.v])
				}
				if vi < 0 || vi >= c.nvals {
					return buf, spans, took, fmt.Errorf("value index %d out of range (%d values)", vi, c.nvals)
				}
				c.v++
				start := len(buf)
				var err error
				if buf, err = c.appendValue(buf, vi); err != nil {
					return buf, spans, took, err
				}
				spans = append(spans, span{uint32(start), uint32(len(buf))})
			}
			c.r++
			took++
			if budget >= 0 && len(buf) >= budget {
				break
			}
		}
	}
	return buf, spans, took, nil
}

// appendValue appends value vi of the page (or dictionary) as text.
func (c *pqColumn) appendValue(buf []byte, vi int) ([]byte, error) {
	switch c.kind {
	case kindBytes:
		s, e := c.offs[vi], c.offs[vi+1]
		if s > e {
			return buf, errors.New("page value offsets out of order")
		}
		return append(buf, c.bytes[s:e]...), nil
	case kindDate:
		return appendDate(buf, int64(c.i32[vi])), nil
	case kindTimestamp:
		return appendTimestamp(buf, c.i64[vi], c.perSec, c.utc), nil
	case kindInt96:
		v := c.i96[vi]
		nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
		days := int64(v[2])
		const julianEpoch = 2440588 // the Julian day of 1970-01-01
		return appendTimestamp(buf, (days-julianEpoch)*86400*unitNanos+nanos, unitNanos, true), nil
	case kindFloat:
		return appendFloat(buf, float64(c.f32[vi]), 32), nil
	case kindDouble:
		return appendFloat(buf, c.f64[vi], 64), nil
	case kindDec32:
		return appendDecimal(buf, int64(c.i32[vi]), c.scale), nil
	case kindInt32:
		return strconv.AppendInt(buf, int64(c.i32[vi]), 10), nil
	case kindInt64:
		return strconv.AppendInt(buf, c.i64[vi], 10), nil
	case kindBool:
		return strconv.AppendBool(buf, c.bits[vi>>3]&(1<<(vi&7)) != 0), nil
	case kindDec64:
		return appendDecimal(buf, c.i64[vi], c.scale), nil
	case kindDecBytes:
		var raw []byte
		if c.offs == nil {
			raw = c.bytes[vi*c.fixed : (vi+1)*c.fixed]
		} else {
			s, e := c.offs[vi], c.offs[vi+1]
			if s > e {
				return buf, errors.New("page value offsets out of order")
			}
			raw = c.bytes[s:e]
		}
		v, ok := bigEndianInt(raw)
		if !ok {
			return append(buf, invalidNumber...), nil
		}
		return appendDecimal(buf, v, c.scale), nil
	}
	return buf, nil
}
