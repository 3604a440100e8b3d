package pqread

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/pqpage"
	"github.com/sitemapgen/sitemapgen/internal/saferio"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// listColumn reads a list extension column of a Parquet file (images,
// alternates, videos; see columnar.IsListKind): its leaf columns in step, a page at a
// time, through their repetition and definition levels, packing each row's
// list into Batch.Buf. Both the standard 3-level LIST layout
// (group (LIST) { repeated group list { element } }) and the legacy
// 2-level one (a repeated field) are read; nulls, empty lists, null
// elements and dictionary pages are handled like in flat columns.
type listColumn struct {
	kind   encode.ExtKind
	name   string
	rep    byte // repetition level of the list's repeated node
	repDef byte // definition level at which a row's list has an element
	leaves []*listLeaf
}

// listLeaf is one leaf column of a list: the values of an images list, or a
// field of the struct of an alternates or videos list (video tag: a list in
// the list, one repetition level deeper). Its pages go through the same
// bounded decoder as flat columns (pqpage.Reader): repetition and definition
// levels, and dictionary indexes, are decoded a block of levelBlock entries
// at a time into the leaf's fixed buffers, values one at a time from the
// page.
type listLeaf struct {
	*column
	tag    byte // record field tag; 0 for the values of an images list
	maxRep byte
	reps   [pqpage.LevelBlock]uint32 // repetition levels of the block (definition levels: lv, indexes: ix)
	bi, bn int                       // next entry of the block, entries in the block
	vi     int                       // next dictionary index of the block
	open   bool                      // a column chunk is open
	eof    bool                      // the column chunk has no more pages
}

// maxListBytes bounds one row's packed list (see columnar.MaxListBytes).
const maxListBytes = columnar.MaxListBytes

// addList maps the list column col, of kind k, as the next extension column.
func (pr *Reader) addList(x encode.ExtColumn, col *parquet.Column) error {
	pl, err := newListColumn(x.Kind, col)
	if err != nil {
		return err
	}
	pr.lists = columnar.AddList(&pr.fill, pr.lists, x, pl)
	pr.extCols = append(pr.extCols, nil)
	return nil
}

func newListColumn(k encode.ExtKind, col *parquet.Column) (*listColumn, error) {
	pl := &listColumn{kind: k, name: col.Name()}
	typeErr := func(what string) error {
		return fmt.Errorf("column %q: %w %s; want %s", col.Name(), input.ErrColumnType, what, columnar.ListShape(k))
	}
	// The repeated node: the column itself (2-level) or its only child.
	node := col
	for !node.Repeated() {
		if node.Leaf() || len(node.Columns()) != 1 {
			return nil, typeErr(describe(col) + " (not a list)")
		}
		node = node.Columns()[0]
	}
	if node.MaxRepetitionLevel() != 1 {
		return nil, typeErr("a list nested in a list")
	}
	pl.rep, pl.repDef = 1, byte(node.MaxDefinitionLevel())
	// The element: the repeated node, or its only child (3-level).
	elem := node
	if !node.Leaf() && len(node.Columns()) == 1 {
		c := node.Columns()[0]
		if _, _, known := columnar.StructFieldTag(k, c.Name()); !known && !c.Repeated() {
			elem = c
		}
	}
	if k == encode.ExtImageList {
		for !elem.Leaf() && len(elem.Columns()) == 1 && !elem.Columns()[0].Repeated() {
			elem = elem.Columns()[0]
		}
		if !elem.Leaf() {
			return nil, typeErr("a list of " + describe(elem))
		}
		pc, err := newListLeaf(encode.ExtImage, elem)
		if err != nil {
			return nil, typeErr("a list of " + describe(elem))
		}
		pl.leaves = append(pl.leaves, &listLeaf{column: pc, maxRep: byte(elem.MaxRepetitionLevel())})
		return pl, nil
	}
	if elem.Leaf() {
		return nil, typeErr("a list of " + describe(elem))
	}
	for _, f := range elem.Columns() {
		tag, like, ok := columnar.StructFieldTag(k, f.Name())
		if !ok {
			continue // a field sitemapgen does not know: ignored, like other columns
		}
		leaf := f
		if !f.Leaf() && like == encode.ExtVideoTag {
			// tag: a list of strings in the element.
			for !leaf.Leaf() && len(leaf.Columns()) == 1 {
				leaf = leaf.Columns()[0]
			}
		}
		if !leaf.Leaf() || leaf.MaxRepetitionLevel() > 1 && !(like == encode.ExtVideoTag && leaf.MaxRepetitionLevel() == 2) {
			return nil, fmt.Errorf("column %q, field %q: %w %s; want a flat field (tag: a string or a list of strings)", col.Name(), f.Name(), input.ErrColumnType, describe(f))
		}
		pc, err := newListLeaf(like, leaf)
		if err != nil {
			return nil, fmt.Errorf("column %q, field %q: %w", col.Name(), f.Name(), err)
		}
		pl.leaves = append(pl.leaves, &listLeaf{column: pc, tag: tag, maxRep: byte(leaf.MaxRepetitionLevel())})
	}
	if len(pl.leaves) == 0 {
		return nil, typeErr("a list of a struct with no field sitemapgen knows (" + strings.Join(columnNames(elem.Columns()), ", ") + ")")
	}
	return pl, nil
}

// describe names a column's type for errors.
func describe(c *parquet.Column) string {
	if c.Leaf() {
		return c.Type().String()
	}
	if lt := c.Type().LogicalType(); lt != nil && lt.Value != nil {
		return lt.String() + " group"
	}
	return "group"
}

// newListLeaf checks that the leaf col can hold values of extension kind
// like, and decides how to read them: strings for everything; also DATE
// and TIMESTAMP for dates, integers for duration and view count, BOOLEAN
// for the yes/no elements, FLOAT and DOUBLE for the rating.
func newListLeaf(like encode.ExtKind, col *parquet.Column) (*column, error) {
	pc, err := newListLeafKind(like, col)
	if err != nil {
		return nil, err
	}
	pc.setPages()
	return pc, nil
}

func newListLeafKind(like encode.ExtKind, col *parquet.Column) (*column, error) {
	pc := &column{field: input.Changefreq, name: strings.Join(col.Path(), "."), leaf: col, maxDef: byte(col.MaxDefinitionLevel())}
	typ := col.Type()
	var lt format.LogicalTypeValue
	if l := typ.LogicalType(); l != nil {
		lt = l.Value
	}
	kind := typ.Kind()
	date := like == encode.ExtVideoPublicationDate || like == encode.ExtVideoExpirationDate
	integer := like == encode.ExtVideoDuration || like == encode.ExtVideoViewCount
	boolean := like == encode.ExtVideoFamilyFriendly || like == encode.ExtVideoRequiresSubscription || like == encode.ExtVideoLive
	rating := like == encode.ExtVideoRating
	switch {
	case kind == parquet.ByteArray:
		switch lt.(type) {
		case nil, *format.StringType, *format.EnumType, *format.JsonType:
			pc.kind = kindBytes
			return pc, nil
		}
	case date && kind == parquet.Int32:
		if _, ok := lt.(*format.DateType); ok {
			pc.kind = kindDate
			return pc, nil
		}
	case date && kind == parquet.Int64:
		if ts, ok := lt.(*format.TimestampType); ok {
			pc.kind, pc.utc = kindTimestamp, ts.IsAdjustedToUTC
			if pc.perSec = columnar.ParquetPerSec(ts); pc.perSec == 0 {
				return nil, fmt.Errorf("%w %s of unknown unit", input.ErrColumnType, typ)
			}
			return pc, nil
		}
	case integer && kind == parquet.Int32:
		pc.kind = kindInt32
		return pc, nil
	case integer && kind == parquet.Int64:
		pc.kind = kindInt64
		return pc, nil
	case boolean && kind == parquet.Boolean:
		pc.kind = kindBool
		return pc, nil
	case rating && kind == parquet.Float:
		pc.kind = kindFloat
		return pc, nil
	case rating && kind == parquet.Double:
		pc.kind = kindDouble
		return pc, nil
	}
	want := "a string"
	switch {
	case date:
		want = "a string, DATE or TIMESTAMP"
	case integer:
		want = "a string, INT32 or INT64"
	case boolean:
		want = "a string or BOOLEAN"
	case rating:
		want = "a string, FLOAT or DOUBLE"
	}
	return nil, fmt.Errorf("%w %s; want %s", input.ErrColumnType, typ, want)
}

// openLists opens the column chunks of the list columns in row group g
// (pr.rg-1). A leaf's page values (level entries) are bounded by its chunk's
// num_values, itself bounded like the rows of the file (saferio.MaxRowsPerByte).
func (pr *Reader) openLists(g *format.RowGroup) error {
	for _, pl := range pr.lists {
		if pl == nil {
			continue
		}
		for _, l := range pl.leaves {
			l.open, l.eof, l.bi, l.bn, l.vi = false, false, 0, 0, 0
			i := l.leaf.Index()
			if i < 0 || i >= len(g.Columns) {
				return fmt.Errorf("%s: row group %d, column %q: %w: no column chunk", pr.name, pr.rg-1, l.name, input.ErrCorrupt)
			}
			nv := g.Columns[i].MetaData.NumValues
			if nv < 0 || nv > saferio.MaxRowsPerByte*pr.size {
				return fmt.Errorf("%s: row group %d, column %q: %w: column chunk claims %d values in a file of %d bytes", pr.name, pr.rg-1, l.name, input.ErrCorrupt, nv, pr.size)
			}
			if err := pr.openChunk(l.column, g, nv); err != nil {
				return err
			}
			l.open = true
		}
	}
	return nil
}

// closeLists releases the list columns' decoders.
func (pr *Reader) closeLists() {
	for _, pl := range pr.lists {
		if pl != nil {
			for _, l := range pl.leaves {
				l.close()
			}
		}
	}
}

// takeList appends the next n rows of list column x to buf, their spans
// to spans; errors are wrapped like a flat column's.
func (pr *Reader) takeList(x int, buf []byte, spans []columnar.Span, n int) ([]byte, []columnar.Span, error) {
	pl := pr.lists[x]
	for range n {
		start := len(buf)
		var err error
		if buf, err = pl.takeRow(buf); err != nil {
			return buf, spans, pr.colErr(pl.leaves[0].column, err)
		}
		spans = append(spans, columnar.Span{Start: uint32(start), End: uint32(len(buf))})
	}
	return buf, spans, nil
}

var errRowStart = errors.New("a row does not start at repetition level 0")

// ready makes the leaf's next level entry current, decoding the next block
// of levels (and reading the next page) as needed; it reports false at the
// end of the column chunk. Each turn of its loop reads a page (consuming
// bytes of the chunk) or decodes a non-empty block of the page.
func (l *listLeaf) ready() (bool, error) {
	for l.bi == l.bn {
		if l.eof || !l.open {
			return false, nil
		}
		pg := &l.page
		if pg.Left() == 0 {
			if err := l.pages.Next(pg, l.maxDef, l.maxRep); err != nil {
				if err == io.EOF {
					l.eof = true
					return false, nil
				}
				return false, err
			}
			continue
		}
		k := min(pqpage.LevelBlock, pg.Left())
		if _, err := pg.Block(l.reps[:k], l.lv[:k], l.ix[:], l.maxDef); err != nil {
			return false, err
		}
		for _, r := range l.reps[:k] {
			if r > uint32(l.maxRep) {
				return false, fmt.Errorf("repetition level %d above the column's %d", r, l.maxRep)
			}
		}
		if pg.HasDef() {
			for _, d := range l.lv[:k] {
				if d > uint32(l.maxDef) {
					return false, fmt.Errorf("definition level %d above the column's %d", d, l.maxDef)
				}
			}
		}
		l.bi, l.bn, l.vi = 0, k, 0
	}
	return true, nil
}

// rep is the repetition level of the current entry (ready must be true).
func (l *listLeaf) rep() uint32 { return l.reps[l.bi] }

// def is the definition level of the current entry (ready must be true).
func (l *listLeaf) def() byte {
	if !l.page.HasDef() {
		return l.maxDef
	}
	return byte(l.lv[l.bi])
}

// take consumes the current entry, appending its value to buf, packed
// (as a record field when l.tag != 0), unless it is null.
func (l *listLeaf) take(buf []byte) ([]byte, error) {
	d := l.def()
	l.bi++
	if d != l.maxDef {
		return buf, nil
	}
	var v []byte
	var err error
	if l.page.Dict() {
		v, err = l.pages.DictValue(l.ix[l.vi])
		l.vi++
	} else {
		v, err = l.pages.Value(&l.page)
	}
	if err != nil {
		return buf, err
	}
	if len(v) > maxListBytes {
		return buf, columnar.ErrListTooLong // before it is copied
	}
	var at int
	if l.tag != 0 {
		buf, at = encode.OpenField(buf, l.tag)
	} else {
		buf, at = encode.OpenPacked(buf)
	}
	buf = l.appendValue(buf, v)
	return encode.ClosePacked(buf, at), nil
}

// takeRow appends the packed list of the next row to buf: the values of
// an images list, or a record per element of an alternates or videos list.
func (pl *listColumn) takeRow(buf []byte) ([]byte, error) {
	for _, l := range pl.leaves {
		ok, err := l.ready()
		if err != nil {
			return buf, err
		}
		if !ok {
			return buf, io.ErrUnexpectedEOF
		}
		if l.rep() != 0 {
			return buf, errRowStart
		}
	}
	row := len(buf)
	drv := pl.leaves[0] // every leaf has an entry for each element; the first decides
	for {
		// One element, or the one entry of a null or empty list.
		has := drv.def() >= pl.repDef
		mark, at := len(buf), 0
		record := has && pl.kind != encode.ExtImageList
		if record {
			buf, at = encode.OpenPacked(buf)
		}
		for _, l := range pl.leaves {
			// The leaf's entries of this element: the current one, then
			// those of a list in the element (a deeper repetition level).
			for first := true; ; first = false {
				ok, err := l.ready()
				if err != nil {
					return buf, err
				}
				if !ok {
					if first {
						return buf, io.ErrUnexpectedEOF
					}
					break
				}
				if !first && l.rep() <= uint32(pl.rep) {
					break
				}
				if buf, err = l.take(buf); err != nil {
					return buf, err
				}
				if len(buf)-row > maxListBytes {
					return buf, columnar.ErrListTooLong
				}
			}
		}
		switch {
		case record:
			buf = encode.ClosePacked(buf, at)
		case !has:
			buf = buf[:mark] // a null in a null list: nothing
		}
		ok, err := drv.ready()
		if err != nil {
			return buf, err
		}
		if !ok || drv.rep() != uint32(pl.rep) {
			return buf, nil
		}
	}
}
