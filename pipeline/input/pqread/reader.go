// Package pqread reads Apache Parquet files into batches: it maps columns
// with parquet-go's schema and decodes the pages itself (internal/pqpage),
// so that memory is bounded by a page per column and the batch, and nothing
// a corrupt file claims is allocated before it is checked.
package pqread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/pqpage"
	"github.com/sitemapgen/sitemapgen/internal/saferio"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// Reader reads the rows of an Apache Parquet file into Batches. It
// uses parquet-go for the schema (after checking the footer, see
// pqpage.CheckFooter) and reads the pages itself (pqpage.Reader): a page per
// column at a time, with one read each, read and decompressed up to 3 pages
// ahead on a goroutine per column when there is a second core, its values
// copied into the Batch's Buf without allocating per row. Row groups are read
// in order and a batch may span several; memory is bounded by a few pages per
// column and the batch, never by the row group, and nothing a corrupt file
// claims is allocated before it is checked against the file. A Reader must be
// closed: Close stops the goroutines reading ahead.
//
// Columns are found among the top-level fields as input.Options.Map says. loc and changefreq are strings (BYTE_ARRAY, also
// dictionary-encoded); lastmod is a string, a DATE (written YYYY-MM-DD), a
// TIMESTAMP of any unit or an INT96 timestamp (written YYYY-MM-DDThh:mm:ss[.f],
// with Z when the timestamp is UTC-adjusted, without a zone, so read in
// --lastmod-tz, when it is not); priority is a FLOAT, a DOUBLE, a DECIMAL or a
// string. A null is an absent field. Nested and repeated columns are refused,
// but for the list extension columns images, alternates and videos
// (listColumn), read through the same page decoder.
//
// Batch.Line holds the 1-based row number of each row in the file.
type Reader struct {
	name string
	file *os.File
	r    io.ReaderAt
	size int64
	pf   *parquet.File

	cols [input.NumColumns]*column // nil: the file has no such column
	rg   int                       // next row group to open
	left int64                     // rows of the open row group not read yet
	fill columnar.Filler           // its Ext are the extension columns (see encode.ParseExtColumn)

	extCols []*column     // nil for a list column: lists
	lists   []*listColumn // list columns (images, alternates, videos) by extension index; see listColumn

	prefetched bool // the first row group's chunks were asked for (see prefetch)
	sync       bool // pages read on the filling goroutine (pqpage.Reader.Sync)

	budget    *saferio.Part // what the file's pages may hold (input.Options.Budget)
	ownBudget bool          // budget is the file's own, closed with it
}

// spansPool recycles the Readers' spans: a run opens one per part file,
// and regrowing them for each was most of the garbage of decoding parts
// in parallel.
var spansPool sync.Pool // of *[input.NumColumns][]columnar.Span

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
	kindBool                       // BOOLEAN: "true" or "false"
)

// column reads one mapped column, a page at a time.
type column struct {
	field  input.Column
	name   string
	leaf   *parquet.Column
	kind   valueKind
	perSec int64 // kindTimestamp
	utc    bool  // kindTimestamp
	scale  int   // decimals
	maxDef byte

	pages pqpage.Reader
	page  pqpage.Page
	lv    [pqpage.LevelBlock]uint32 // definition levels of a block of rows
	ix    [pqpage.LevelBlock]uint32 // dictionary indexes of a block of rows
	ends  [pqpage.LevelBlock]uint32 // where each string of a block ends (see pqpage.Page.AppendStrings)

	// The block of entries whose levels and dictionary indexes Page.Block
	// decoded, not all taken yet: levels lv[blockAt:blockEnd], indexes
	// ix[blockIx:]. held is the next value, read from the page
	// (Reader.Value) but not taken: take stopped before it.
	blockAt, blockEnd, blockIx int
	held                       []byte
	hasHeld                    bool
	dictMax                    int // the length of the chunk's longest dictionary value; -1: not known yet
	pageMax                    int // the length of the page's longest value left (Reader.MaxLen); -1: not known yet

	texts *textCache // numbers and dates as text: they repeat
}

// textCache remembers the text of recently seen non-string values (at
// most 12 bytes: dates, timestamps, numbers), which repeat in real exports:
// formatting a float or a time costs far more than a lookup.
type textCache struct {
	entries [256]textEntry
}

type textEntry struct {
	lo   uint64
	hi   uint32
	ok   bool
	n    uint8
	text [32]byte
}

func (tc *textCache) slot(v []byte) (lo uint64, hi uint32, e *textEntry) {
	var b [12]byte
	copy(b[:], v)
	lo, hi = binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint32(b[8:])
	h := (lo ^ uint64(hi)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return lo, hi, &tc.entries[h>>56]
}

// Open opens the Parquet file name and maps its columns.
func Open(name string, opt input.Options) (*Reader, error) {
	pr, f, err := columnar.OpenFile(name, opt, NewReader)
	if err == nil {
		pr.file = f
	}
	return pr, err
}

// NewReader reads the Parquet file of size bytes in r, an input named
// source. Errors name the source and wrap input.ErrCorrupt, input.ErrNoColumn or
// input.ErrColumnType.
func NewReader(r io.ReaderAt, size int64, source string, opt input.Options) (pr *Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			pr, err = nil, fmt.Errorf("%s: %w: %v", source, input.ErrCorrupt, p)
		}
	}()
	meta := r // where the footer is read from
	if _, ok := r.(input.Prefetcher); ok {
		// An object in a store: the footer in one or two requests, not a
		// request per read of it.
		if meta, err = readTail(r, size); err != nil {
			return nil, fmt.Errorf("%s: not a readable Parquet file: %w", source, err)
		}
	}
	if err := pqpage.CheckFooter(meta, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w: %w", source, input.ErrCorrupt, err)
	}
	pf, err := parquet.OpenFile(meta, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w: %w", source, input.ErrCorrupt, err)
	}
	// Pages are read ahead on another goroutine when there is another core.
	pr = &Reader{name: source, r: r, size: size, pf: pf, sync: opt.Sequential || runtime.GOMAXPROCS(0) == 1, budget: opt.Budget}
	if pr.budget == nil {
		pr.budget, pr.ownBudget = saferio.Own(), true
	}
	pr.fill.Name, pr.fill.Take, pr.fill.Where = source, pr.take, pr.where
	if sp, ok := spansPool.Get().(*[input.NumColumns][]columnar.Span); ok {
		pr.fill.Spans = *sp
	}
	// RLE lets a few bytes stand for millions of rows; a URL list holds
	// distinct URLs, which cost bytes. A file claiming more than
	// saferio.MaxRowsPerByte rows per byte is refused rather than read for hours.
	var rows int64
	for _, g := range pf.Metadata().RowGroups {
		if g.NumRows < 0 || g.NumRows > saferio.MaxRowsPerByte*size || rows > saferio.MaxRowsPerByte*size-g.NumRows {
			return nil, fmt.Errorf("%s: %w: row groups claim more than %d rows in %d bytes", source, input.ErrCorrupt, saferio.MaxRowsPerByte*size, size)
		}
		rows += g.NumRows
	}
	top := pf.Root().Columns()
	err = columnar.Map(columnNames(top), opt, columnar.Opener{
		Core: func(c input.Column, i int) error {
			pc, err := newColumn(c, top[i])
			pr.cols[c], pr.fill.Core[c] = pc, pc != nil
			return err
		},
		Ext: func(x encode.ExtColumn, i int) error {
			pc, err := newColumn(columnar.ExtLike(x.Kind), top[i])
			if err != nil {
				pc, err = newExtColumn(x.Kind, top[i], err)
			}
			pr.fill.AddExt(x)
			pr.extCols = append(pr.extCols, pc)
			return err
		},
		List: func(x encode.ExtColumn, i int) error { return pr.addList(x, top[i]) },
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return pr, nil
}

// Extensions returns the extension columns of the file.
func (pr *Reader) Extensions() []encode.ExtColumn { return pr.fill.Ext }

// newExtColumn accepts the integer columns of video:duration and
// video:view_count and the BOOLEAN columns of mobile and the yes/no video
// elements, or returns typeErr, the error of the string column they are not.
func newExtColumn(k encode.ExtKind, col *parquet.Column, typeErr error) (*column, error) {
	if !col.Leaf() || col.Repeated() || col.MaxRepetitionLevel() > 0 || col.MaxDefinitionLevel() > 1 {
		return nil, typeErr
	}
	pc := &column{field: input.Changefreq, name: col.Name(), leaf: col, maxDef: byte(col.MaxDefinitionLevel())}
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
	pc.setPages()
	return pc, nil
}

func columnNames(cols []*parquet.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name()
	}
	return names
}

// newColumn checks that col can be read as field c and decides how.
func newColumn(c input.Column, col *parquet.Column) (*column, error) {
	pc, err := columnKind(c, col)
	if err != nil {
		return nil, err
	}
	pc.setPages()
	return pc, nil
}

// setPages sets up the page decoder for the column's kind of values.
func (pc *column) setPages() {
	switch pc.kind {
	case kindBytes:
		pc.pages.Size = 0
	case kindDecBytes:
		// FIXED_LEN_BYTE_ARRAY: its length; BYTE_ARRAY: 0.
	case kindBool:
		pc.pages.Size = 1 // bit-packed (PLAIN) or RLE; decoded to one byte
	case kindDate, kindDec32, kindFloat, kindInt32:
		pc.pages.Size = 4
	case kindTimestamp, kindDec64, kindDouble, kindInt64:
		pc.pages.Size = 8
	case kindInt96:
		pc.pages.Size = 12
	}
	pc.pages.Type = format.Type(pc.leaf.Type().Kind())
}

func columnKind(c input.Column, col *parquet.Column) (*column, error) {
	pc := &column{field: c, name: col.Name(), leaf: col, maxDef: byte(col.MaxDefinitionLevel())}
	typeErr := func(what string) error {
		return fmt.Errorf("column %q (%s field): %w %s", col.Name(), input.FieldName(c), input.ErrColumnType, what)
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
		pc.pages.Size = typ.Length()
		if pc.pages.Size <= 0 || pc.pages.Size > 1<<20 {
			return nil, typeErr(typ.String() + " of length " + fmt.Sprint(pc.pages.Size))
		}
	}
	want := map[input.Column]string{
		input.Loc:        "want a string (BYTE_ARRAY)",
		input.Changefreq: "want a string (BYTE_ARRAY)",
		input.Lastmod:    "want a string, DATE or TIMESTAMP",
		input.Priority:   "want FLOAT, DOUBLE, DECIMAL or a string",
		input.Group:      "want a string (BYTE_ARRAY)",
	}[c]
	if d, ok := lt.(*format.DecimalType); ok {
		if c != input.Priority {
			return nil, typeErr(typ.String() + "; " + want)
		}
		if d.Scale < -columnar.MaxScale || d.Scale > columnar.MaxScale {
			return nil, typeErr(fmt.Sprintf("%s of scale %d; want a scale from %d to %d", typ, d.Scale, -columnar.MaxScale, columnar.MaxScale))
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
	case c == input.Lastmod && kind == parquet.Int32:
		if _, ok := lt.(*format.DateType); ok {
			pc.kind = kindDate
			return pc, nil
		}
	case c == input.Lastmod && kind == parquet.Int64:
		if ts, ok := lt.(*format.TimestampType); ok {
			pc.kind, pc.utc = kindTimestamp, ts.IsAdjustedToUTC
			if pc.perSec = columnar.ParquetPerSec(ts); pc.perSec == 0 {
				return nil, typeErr(typ.String() + " of unknown unit; " + want)
			}
			return pc, nil
		}
	case c == input.Lastmod && kind == parquet.Int96:
		pc.kind = kindInt96
		return pc, nil
	case c == input.Priority && kind == parquet.Float:
		pc.kind = kindFloat
		return pc, nil
	case c == input.Priority && kind == parquet.Double:
		pc.kind = kindDouble
		return pc, nil
	}
	return nil, typeErr(typ.String() + "; " + want)
}

// Rows reports the rows handed out so far.
func (pr *Reader) Rows() int64 { return pr.fill.Rows() }

// Close releases the file.
func (pr *Reader) Close() error {
	for _, c := range append(pr.cols[:], pr.extCols...) {
		if c != nil {
			c.close()
		}
	}
	if pr.fill.Spans[input.Loc] != nil {
		sp := pr.fill.Spans
		spansPool.Put(&sp)
		pr.fill.Spans = [input.NumColumns][]columnar.Span{}
	}
	pr.closeLists()
	if pr.ownBudget {
		pr.budget.Close()
		pr.ownBudget = false
	}
	if pr.file != nil {
		err := pr.file.Close()
		pr.file = nil
		return err
	}
	return nil
}

// Fill appends rows to b (b.Buf, b.Fields, b.Line; b.Source = the file name)
// until about chunk bytes are in b.Buf (chunk <= 0: input.DefaultChunk) or the
// file ends; b.Line[i] is the 1-based row number in the file. It returns
// io.EOF when the file is exhausted and it added no rows; errors name the
// file, row group and column, wrap input.ErrCorrupt, and are sticky. A panic of
// the Parquet library on a corrupt file is returned as such an error.
func (pr *Reader) Fill(b *input.Batch, chunk int) error { return pr.fill.Fill(b, chunk) }

// where names the row group being read, for a panic.
func (pr *Reader) where() string { return fmt.Sprintf("row group %d", pr.rg) }

// take is the Filler's Take: the next rows of the open row group, at most
// most, opening the next row group first when it is done.
func (pr *Reader) take(buf []byte, most, budget int) ([]byte, int, error) {
	if pr.left == 0 {
		for _, c := range append(pr.cols[:], pr.extCols...) {
			if c != nil {
				c.newChunk()
			}
		}
		if err := pr.nextRowGroup(); err != nil {
			return buf, 0, err
		}
	}
	f := &pr.fill
	want := int(min(pr.left, int64(most)))
	if len(pr.lists) > 0 {
		// A row's lists may be large (up to maxListBytes each): take
		// one row at a time, so that the batch stops at its budget.
		want = 1
	}
	if budget >= 0 {
		// The other columns take as many rows as the loc does: a step
		// of rows whose values, at their longest, add at most
		// columnar.StepBytes.
		per := 0
		var err error
		for _, col := range pr.cols[input.Loc+1:] {
			if want, per, err = pr.step(col, want, per); err != nil {
				return buf, 0, err
			}
		}
		for _, col := range pr.extCols {
			if want, per, err = pr.step(col, want, per); err != nil {
				return buf, 0, err
			}
		}
		if per > 0 {
			want = min(want, max(1, columnar.StepBytes/per))
		}
	}
	loc := pr.cols[input.Loc]
	var n int
	var err error
	buf, f.Spans[input.Loc], n, err = loc.take(f, buf, f.Spans[input.Loc], want, budget)
	if err != nil {
		return buf, 0, pr.colErr(loc, err)
	}
	if n == 0 {
		return buf, 0, nil // the next loc does not fit
	}
	for c := input.Loc + 1; c < input.NumColumns; c++ {
		if col := pr.cols[c]; col != nil {
			if buf, f.Spans[c], err = pr.takeRows(col, buf, f.Spans[c], n); err != nil {
				return buf, 0, err
			}
		}
	}
	for x, col := range pr.extCols {
		if col == nil {
			buf, f.ExtSpans[x], err = pr.takeList(x, buf, f.ExtSpans[x], n)
		} else {
			buf, f.ExtSpans[x], err = pr.takeRows(col, buf, f.ExtSpans[x], n)
		}
		if err != nil {
			return buf, 0, err
		}
	}
	pr.left -= int64(n)
	return buf, n, nil
}

// step adds col (nil: none, or a list) to a step of want rows whose
// values may add per bytes: its values' bound, and for strings, the rows
// left on its page, whose longest value the bound is.
func (pr *Reader) step(col *column, want, per int) (int, int, error) {
	if col == nil {
		return want, per, nil
	}
	if col.kind == kindBytes {
		rows, err := col.ready()
		if err != nil {
			return want, per, pr.colErr(col, err)
		}
		want = min(want, rows)
	}
	return want, per + col.bound(), nil
}

func (pr *Reader) colErr(c *column, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("column chunk ends before the row group's %d rows: %w", pr.pf.RowGroups()[pr.rg-1].NumRows(), io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: row group %d, column %q: %w: %w", pr.name, pr.rg-1, c.name, input.ErrCorrupt, err)
}

// nextRowGroup opens the column chunks of the next row group; io.EOF after
// the last. A chunk must lie inside the file.
func (pr *Reader) nextRowGroup() error {
	groups := pr.pf.Metadata().RowGroups
	for pr.rg < len(groups) {
		g := &groups[pr.rg]
		pr.rg++
		if g.NumRows < 0 {
			return fmt.Errorf("%s: row group %d: %w: %d rows", pr.name, pr.rg-1, input.ErrCorrupt, g.NumRows)
		}
		if g.NumRows == 0 {
			continue
		}
		pr.prefetch(pr.rg - 1)
		for _, c := range append(pr.cols[:], pr.extCols...) {
			if c == nil {
				continue
			}
			if err := pr.openChunk(c, g, g.NumRows); err != nil {
				return err
			}
		}
		if err := pr.openLists(g); err != nil {
			return err
		}
		pr.left = g.NumRows
		return nil
	}
	return io.EOF
}

// openChunk starts c on its column chunk in row group g (pr.rg-1), which
// holds at most values values (levels, for a list leaf; rows otherwise). The
// chunk must lie inside the file.
func (pr *Reader) openChunk(c *column, g *format.RowGroup, values int64) error {
	i := c.leaf.Index()
	if i < 0 || i >= len(g.Columns) {
		return fmt.Errorf("%s: row group %d, column %q: %w: no column chunk", pr.name, pr.rg-1, c.name, input.ErrCorrupt)
	}
	cc := &g.Columns[i]
	switch {
	case cc.FilePath != "":
		// A summary file (_metadata) or a file whose columns live apart:
		// the offsets are in the other file, read here they would be wrong.
		return fmt.Errorf("%s: row group %d, column %q: %w: the column chunk is in another file (file_path %q), which sitemapgen does not read",
			pr.name, pr.rg-1, c.name, input.ErrCorrupt, truncate(cc.FilePath))
	case cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0:
		return fmt.Errorf("%s: row group %d, column %q: %w: the column chunk is encrypted, which sitemapgen does not read",
			pr.name, pr.rg-1, c.name, input.ErrCorrupt)
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if d := md.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	if start < 4 || md.TotalCompressedSize < 0 || md.TotalCompressedSize > pr.size-start {
		return fmt.Errorf("%s: row group %d, column %q: %w: column chunk of %d bytes at %d in a file of %d bytes",
			pr.name, pr.rg-1, c.name, input.ErrCorrupt, md.TotalCompressedSize, start, pr.size)
	}
	c.page = pqpage.Page{}
	c.pages.Sync, c.pages.Budget = pr.sync, pr.budget
	c.pages.Reset(pr.r, start, md.TotalCompressedSize, values, md.Codec)
	return nil
}

// truncate cuts a string of the file short for an error.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func (c *column) close() { c.pages.Close() }

// takeRows takes the values of exactly n rows of col, as views into buf:
// fewer is a truncated column. Errors name the column.
func (pr *Reader) takeRows(col *column, buf []byte, spans []columnar.Span, n int) ([]byte, []columnar.Span, error) {
	buf, spans, m, err := col.take(&pr.fill, buf, spans, n, -1)
	if err == nil && m < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return buf, spans, pr.colErr(col, err)
	}
	return buf, spans, nil
}

// newChunk forgets what the column knew of its column chunk, before the
// next one is opened.
func (c *column) newChunk() {
	c.blockAt, c.blockEnd, c.blockIx, c.held, c.hasHeld = 0, 0, 0, nil, false
	c.dictMax, c.pageMax = -1, -1
}

// nextPage reads the column's next page (see pqpage.Reader.Next).
func (c *column) nextPage() error {
	c.pageMax = -1
	return c.pages.Next(&c.page, c.maxDef, 0)
}

// ready reports the rows left on the column's page, reading the next page
// when it has none: io.ErrUnexpectedEOF when the column chunk has no more.
func (c *column) ready() (int, error) {
	for c.blockAt == c.blockEnd && c.page.Left() == 0 {
		if err := c.nextPage(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	return c.blockEnd - c.blockAt + c.page.Left(), nil
}

// bound returns the most bytes a value of the column's page can add to a
// batch: the longest text of a value of its type, or of a string on the
// page (or in its dictionary), at most columnar.MaxValue (a longer string
// adds nothing: see columnar.Long).
func (c *column) bound() int {
	switch c.kind {
	case kindBytes:
		var m int
		if c.page.Dict() {
			if c.dictMax < 0 {
				c.dictMax = c.pages.DictMaxLen()
			}
			m = c.dictMax
		} else {
			if c.pageMax < 0 {
				c.pageMax = c.pages.MaxLen(&c.page)
			}
			m = c.pageMax
			if c.hasHeld {
				m = max(m, len(c.held))
			}
		}
		return min(m, columnar.MaxValue)
	case kindDate:
		return columnar.DateText
	case kindTimestamp, kindInt96:
		return columnar.TimestampText
	case kindFloat:
		return columnar.FloatText
	case kindDouble:
		return columnar.DoubleText
	case kindDec32, kindDec64, kindDecBytes:
		return columnar.DecimalText
	case kindInt32, kindInt64:
		return columnar.IntText
	case kindBool:
		return columnar.BoolText
	}
	return columnar.MaxValue
}

// take appends the next want rows of the column to buf, their spans to
// spans, and reports how many it took: fewer than want when budget >= 0
// and the next value would take buf past budget (a value over
// columnar.MaxValue counted as that), or when the column chunk ended
// (io.EOF). A value over columnar.MaxValue is not copied: columnar.Long
// takes its row. Every turn of its loop delivers rows, reads a page or
// decodes a block of levels, so it ends. The page checks every value
// against itself.
func (c *column) take(f *columnar.Filler, buf []byte, spans []columnar.Span, want, budget int) ([]byte, []columnar.Span, int, error) {
	took := 0
	pg := &c.page
	for took < want {
		if c.blockAt < c.blockEnd {
			var k int
			var err error
			buf, spans, k, err = c.takeBlock(f, buf, spans, want-took, budget)
			took += k
			if err != nil || c.blockAt < c.blockEnd {
				return buf, spans, took, err // want rows taken, or the next does not fit
			}
			continue
		}
		if pg.Left() == 0 {
			if err := c.nextPage(); err != nil {
				return buf, spans, took, err
			}
			continue
		}
		if c.kind == kindBytes && pg.Strings() {
			// The hot path: a required string column, PLAIN or as
			// parquet-go writes it (DELTA_LENGTH_BYTE_ARRAY).
			k := min(want-took, pg.Left(), pqpage.LevelBlock)
			start := uint32(len(buf))
			var ends []uint32
			var long []byte
			var err error
			buf, ends, long, err = pg.AppendStrings(buf, c.ends[:0], k, budget, columnar.MaxValue)
			for _, end := range ends {
				spans = append(spans, columnar.Span{Start: start, End: end})
				start = end
			}
			took += len(ends)
			if long != nil {
				buf, spans = columnar.Long(f, buf, spans, long, c.field == input.Loc)
				took++
			}
			if err != nil {
				return buf, spans, took, err
			}
			if long == nil && len(ends) < k {
				return buf, spans, took, nil // the next value does not fit
			}
			continue
		}
		k := min(pg.Left(), pqpage.LevelBlock)
		if _, err := pg.Block(nil, c.lv[:k], c.ix[:], c.maxDef); err != nil {
			return buf, spans, took, err
		}
		c.blockAt, c.blockEnd, c.blockIx = 0, k, 0
	}
	return buf, spans, took, nil
}

// takeBlock takes the next rows of the block of levels decoded, at most
// want, stopping before a value that would take buf past budget (budget
// >= 0), and reports how many it took.
func (c *column) takeBlock(f *columnar.Filler, buf []byte, spans []columnar.Span, want, budget int) ([]byte, []columnar.Span, int, error) {
	pg := &c.page
	took := 0
	for ; took < want && c.blockAt < c.blockEnd; took++ {
		if pg.HasDef() && c.lv[c.blockAt] != uint32(c.maxDef) {
			spans = append(spans, columnar.NullSpan)
			c.blockAt++
			continue
		}
		v := c.held
		if !c.hasHeld {
			var err error
			if pg.Dict() {
				v, err = c.pages.DictValue(c.ix[c.blockIx])
			} else {
				v, err = c.pages.Value(pg)
			}
			if err != nil {
				return buf, spans, took, err
			}
		}
		if budget >= 0 && len(buf)+min(len(v), columnar.MaxValue) > budget {
			// An index stays in the block; a value read stays held.
			c.held, c.hasHeld = v, !pg.Dict()
			break
		}
		c.held, c.hasHeld = nil, false
		c.blockAt++
		if pg.Dict() {
			c.blockIx++
		}
		if len(v) > columnar.MaxValue && (c.kind == kindBytes || c.kind == kindDecBytes) {
			buf, spans = columnar.Long(f, buf, spans, v, c.field == input.Loc)
			continue
		}
		start := len(buf)
		buf = c.appendValue(buf, v)
		spans = append(spans, columnar.Span{Start: uint32(start), End: uint32(len(buf))})
	}
	return buf, spans, took, nil
}

// appendValue appends v, a value in its PLAIN encoding (a BYTE_ARRAY
// without its length; of the size of its type otherwise), as text.
func (c *column) appendValue(buf []byte, v []byte) []byte {
	if c.kind == kindBytes || c.kind == kindDecBytes && c.pages.Size == 0 || len(v) > 12 {
		return c.formatValue(buf, v)
	}
	if c.texts == nil {
		c.texts = new(textCache)
	}
	lo, hi, e := c.texts.slot(v)
	if e.ok && e.lo == lo && e.hi == hi {
		return append(buf, e.text[:e.n]...)
	}
	start := len(buf)
	buf = c.formatValue(buf, v)
	if t := buf[start:]; len(t) <= len(e.text) {
		e.lo, e.hi, e.ok, e.n = lo, hi, true, uint8(copy(e.text[:], t))
	}
	return buf
}

// formatValue appends v as text.
func (c *column) formatValue(buf []byte, v []byte) []byte {
	le := binary.LittleEndian
	switch c.kind {
	case kindBytes:
		return append(buf, v...)
	case kindDate:
		return columnar.AppendDate(buf, int64(int32(le.Uint32(v))))
	case kindTimestamp:
		return columnar.AppendTimestamp(buf, int64(le.Uint64(v)), c.perSec, c.utc)
	case kindInt96:
		nanos := int64(le.Uint64(v))
		days := int64(int32(le.Uint32(v[8:])))
		const julianEpoch = 2440588 // the Julian day of 1970-01-01
		return columnar.AppendTimestamp(buf, (days-julianEpoch)*86400*columnar.Nanos+nanos, columnar.Nanos, true)
	case kindFloat:
		return columnar.AppendFloat(buf, float64(math.Float32frombits(le.Uint32(v))), 32)
	case kindDouble:
		return columnar.AppendFloat(buf, math.Float64frombits(le.Uint64(v)), 64)
	case kindDec32:
		return columnar.AppendDecimal(buf, int64(int32(le.Uint32(v))), c.scale)
	case kindDec64:
		return columnar.AppendDecimal(buf, int64(le.Uint64(v)), c.scale)
	case kindInt32:
		return strconv.AppendInt(buf, int64(int32(le.Uint32(v))), 10)
	case kindInt64:
		return strconv.AppendInt(buf, int64(le.Uint64(v)), 10)
	case kindBool:
		return strconv.AppendBool(buf, v[0] != 0)
	case kindDecBytes:
		n, ok := columnar.BigEndianInt(v)
		if !ok {
			return append(buf, columnar.InvalidNumber...)
		}
		return columnar.AppendDecimal(buf, n, c.scale)
	}
	return buf
}
