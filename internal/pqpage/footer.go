package pqpage

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/parquet-go/parquet-go/format"
)

// MaxSchemaDepth bounds how deep a Parquet schema nests (the root is at
// depth 0, a top-level column at 1), as the Arrow reader bounds its fields.
// A schema's nesting is told by the children counts of its flat list of
// elements, not by nested structs, so a footer of a few bytes per element
// can nest as deep as it has elements, and parquet-go allocates a path of
// depth names for every element before its own limit of 255 levels: a
// 100,000-deep schema in an 800 KB file made it ask for 80 GB. sitemapgen
// reads flat columns and lists of structs (under ten levels); warehouse
// exports nest a few levels more at most.
const MaxSchemaDepth = 64

// MaxColumns is the most columns (leaves) a schema may have: parquet-go's
// limit (MaxColumnIndex+1), checked here before it allocates for them.
const MaxColumns = 65535

// CheckFooter reads the footer of the Parquet file of size bytes in r and
// checks, before parquet-go reads it, that its length fits in the file,
// that every length and count in it fits in the footer, that its schema is
// a tree of at most MaxSchemaDepth levels and MaxColumns columns, that each
// row group lists a column chunk per column, and that parquet-go will not
// take more than maxFooterCost to read it.
func CheckFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes, too short for Parquet", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return fmt.Errorf("no PAR1 magic at the end (encrypted footers are not supported): %q", tail[4:])
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n+12 > size {
		return fmt.Errorf("footer of %d bytes in a file of %d bytes", n, size)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	return checkFooter(footer)
}

// checkFooter checks the FileMetaData in footer: first that every length
// and count fits (skip), then what parquet-go would build from it: the
// schema's tree, a column chunk per column in every row group, and the
// memory it takes, which must stay under maxFooterCost.
func checkFooter(footer []byte) error {
	cost, err := footerCost(footer)
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	if limit := maxFooterCost(len(footer)); cost > limit {
		return fmt.Errorf("footer: %d bytes of footer would take %d bytes of memory to read (the limit is %d)", len(footer), cost, limit)
	}
	return nil
}

// footerCost checks the footer's structure and returns what parquet-go
// allocates to read it.
func footerCost(footer []byte) (int64, error) {
	tr := thriftReader{b: footer}
	if err := tr.skip(tStruct, 0); err != nil {
		return 0, err
	}
	// The footer is read here, then by parquet-go (after a first read of
	// 64 KiB) and copied.
	w := footerWalk{leaves: -1, cost: 3*int64(len(footer)) + 64<<10}
	tr = thriftReader{b: footer[:tr.p]}
	var rowGroups []int // where each list of row groups starts: walked once the schema is known
	var last int16
	for {
		id, t, err := tr.field(&last)
		if err != nil {
			return 0, err
		}
		if t == tStop {
			break
		}
		switch {
		case id == 2 && t == tList:
			err = w.schema(&tr)
		case id == 4 && t == tList:
			rowGroups = append(rowGroups, tr.p)
			err = tr.skip(t, 1)
		default:
			err = w.walk(&tr, t, fileMetaData[id], 1)
		}
		if err != nil {
			return 0, err
		}
	}
	for _, at := range rowGroups {
		tr.p = at
		if err := w.rowGroups(&tr); err != nil {
			return 0, err
		}
	}
	return w.cost, nil
}

// What reading a footer may cost: parquet-go decodes the compact Thrift of
// a footer into structs many times its size (a 560-byte ColumnChunk for
// each 3-byte one: a 9 MB footer took 1.6 GiB), then builds a tree of
// columns from the schema and a column chunk per column and row group.
// Writers' footers cost 8 to 25 times their size (parquet-go and arrow-go,
// with and without statistics: 10 with row groups of thousands of rows, 25
// with row groups of one row and no statistics); a footer of empty structs
// costs a hundred times and more.
const (
	footerCostBase    = 16 << 20
	footerCostPerByte = 32
)

func maxFooterCost(n int) int64 { return footerCostBase + footerCostPerByte*int64(n) }

// What parquet-go allocates besides the decoded structs (their sizes are
// the format package's): a Column per schema element and its place in its
// parent's children and fields, and for each column chunk (a leaf in a row
// group) and row group the structures of parquet.File. Measured on
// parquet-go v0.32, with margin: TestFooterCost checks them.
const (
	costPerElement  = 384
	costPerPathName = 16 // a string of a column's path, as deep as the column
	costPerChunk    = 256
	costPerRowGroup = 256
)

// footerWalk adds up the memory parquet-go takes to read a footer.
type footerWalk struct {
	cost   int64
	leaves int // the schema's columns; -1 before the schema
}

// tfield is a field of a struct of the footer that parquet-go decodes into
// memory of its own: a list, whose elements take elem bytes each (and are
// structs of kind sub), or a struct of kind sub.
type tfield struct {
	typ  byte // the field's wire type; a field of another is skipped, as parquet-go does
	et   byte // a list's element type
	elem int64
	sub  tstruct
}

// tstruct is a struct of the footer: its fields that cost memory, by id.
type tstruct map[int16]tfield

var (
	keyValue   = tfield{typ: tList, et: tStruct, elem: int64(unsafe.Sizeof(format.KeyValue{}))}
	stringList = tfield{typ: tList, et: tBinary, elem: int64(unsafe.Sizeof(""))}
	// ColumnChunk: its ColumnMetaData and its crypto metadata's path.
	columnChunk = tstruct{
		3: {typ: tStruct, sub: tstruct{
			2:  {typ: tList, et: tI32, elem: 8},
			3:  stringList,
			8:  keyValue,
			13: {typ: tList, et: tStruct, elem: int64(unsafe.Sizeof(format.PageEncodingStats{}))},
			16: {typ: tStruct, sub: tstruct{
				2: {typ: tList, et: tI64, elem: 16},
				3: {typ: tList, et: tI64, elem: 16},
			}},
			17: {typ: tStruct, sub: tstruct{2: {typ: tList, et: tI32, elem: 8}}},
		}},
		8: {typ: tStruct, sub: tstruct{2: {typ: tStruct, sub: tstruct{1: stringList}}}},
	}
	fileMetaData = tstruct{
		5: keyValue,
		7: {typ: tList, et: tStruct, elem: int64(unsafe.Sizeof(format.ColumnOrder{}))},
	}
)

// walk steps over a value of type typ, described by f (zero: nothing
// parquet-go allocates for), adding up what it costs.
func (w *footerWalk) walk(r *thriftReader, typ byte, f tfield, depth int) error {
	if f.typ == 0 || typ != f.typ {
		return r.skip(typ, depth)
	}
	if typ == tStruct {
		return w.walkStruct(r, f.sub, depth)
	}
	n, et, err := r.list()
	if err != nil {
		return err
	}
	if et != f.et {
		return r.skipElems(n, et, depth)
	}
	w.cost += int64(n) * f.elem
	if f.sub == nil {
		return r.skipElems(n, et, depth)
	}
	for range n {
		if err := w.walkStruct(r, f.sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (w *footerWalk) walkStruct(r *thriftReader, s tstruct, depth int) error {
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil || t == tStop {
			return err
		}
		if err := w.walk(r, t, s[id], depth+1); err != nil {
			return err
		}
	}
}

// rowGroups walks a list of RowGroups: each must list a column chunk per
// column of the schema (parquet-go allocates for the chunks it lists
// before it compares their number with the schema's).
func (w *footerWalk) rowGroups(r *thriftReader) error {
	n, et, err := r.list()
	if err != nil {
		return err
	}
	if et != tStruct {
		return r.skipElems(n, et, 1)
	}
	w.cost += int64(n) * (int64(unsafe.Sizeof(format.RowGroup{})) + costPerRowGroup)
	for g := range n {
		var last int16
		chunks := -1
		for {
			id, t, err := r.field(&last)
			if err != nil {
				return err
			}
			if t == tStop {
				break
			}
			switch {
			case id == 1 && t == tList:
				var et byte
				if chunks, et, err = r.list(); err != nil {
					return err
				}
				if et != tStruct {
					// parquet-go skips a list of another type: no chunks.
					if err = r.skipElems(chunks, et, 3); err != nil {
						return err
					}
					chunks = 0
				}
				if w.leaves >= 0 && chunks != w.leaves {
					return fmt.Errorf("row group %d lists %d column chunks for the schema's %d columns", g, chunks, w.leaves)
				}
				w.cost += int64(chunks) * (int64(unsafe.Sizeof(format.ColumnChunk{})) + costPerChunk)
				for range chunks {
					if err := w.walkStruct(r, columnChunk, 3); err != nil {
						return err
					}
				}
			case id == 4 && t == tList:
				// parquet-go adds a SortingColumn interface and the struct behind it.
				err = w.walk(r, t, tfield{typ: tList, et: tStruct, elem: int64(unsafe.Sizeof(format.SortingColumn{})) + 32}, 2)
			default:
				err = r.skip(t, 2)
			}
			if err != nil {
				return err
			}
		}
		if chunks < 0 && w.leaves > 0 {
			return fmt.Errorf("row group %d lists no column chunks for the schema's %d columns", g, w.leaves)
		}
	}
	return nil
}

// schemaElement is what is read of a SchemaElement.
type schemaElement struct {
	name                 []byte
	hasType, hasChildren bool
	hasName              bool
	children             int32
}

// readSchemaElement reads a SchemaElement as parquet-go does: a field of
// another wire type than its own is skipped, as if absent.
func readSchemaElement(r *thriftReader) (e schemaElement, err error) {
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil || t == tStop {
			return e, err
		}
		switch {
		case id == 1 && t == tI32:
			e.hasType = true
			_, err = r.i32()
		case id == 4 && t == tBinary:
			var n int
			n, err = r.length()
			e.name, e.hasName = r.b[r.p:r.p+n], true
			r.p += n
		case id == 5 && t == tI32:
			e.hasChildren = true
			e.children, err = r.i32()
		default:
			err = r.skip(t, 2)
		}
		if err != nil {
			return e, err
		}
	}
}

// schema checks the list of SchemaElements at r: the depth-first
// flattening of one tree, rooted at the first element, whose groups (the
// elements without a type) have as many children as they say and whose
// columns (with a type) have none, at most MaxSchemaDepth deep. It counts
// the columns and adds up what parquet-go allocates for the tree.
func (w *footerWalk) schema(r *thriftReader) error {
	n, et, err := r.list()
	if err != nil {
		return err
	}
	if et != tStruct {
		// parquet-go skips a list of another type: no schema, which it
		// refuses.
		return r.skipElems(n, et, 2)
	}
	// A SchemaElement holds at least its name: 3 bytes.
	if n > (len(r.b)-r.p)/3 {
		return fmt.Errorf("schema of %d elements in a footer of %d bytes", n, len(r.b))
	}
	w.cost += int64(n) * (int64(unsafe.Sizeof(format.SchemaElement{})) + costPerElement)
	w.leaves = 0
	// open holds the children still to come of each group open above the
	// element read, the root's first: its length is the element's depth.
	var open []int32
	for i := range n {
		e, err := readSchemaElement(r)
		if err != nil {
			return err
		}
		name := elementName(e.name)
		if !e.hasName {
			return fmt.Errorf("schema element %d has no name", i)
		}
		if i > 0 && len(open) == 0 {
			return fmt.Errorf("schema: %d more elements after the root and its %d descendants", n-i, i-1)
		}
		if len(open) > MaxSchemaDepth {
			return fmt.Errorf("schema nested more than %d levels deep (element %d, %s)", MaxSchemaDepth, i, name)
		}
		switch {
		case i == 0 && e.hasType:
			return fmt.Errorf("schema root %s is a column, not a group", name)
		case e.hasChildren && e.children < 0:
			return fmt.Errorf("schema element %d (%s) has %d children", i, name, e.children)
		case e.hasType && e.hasChildren && e.children > 0:
			return fmt.Errorf("schema element %d (%s) is a column with %d children", i, name, e.children)
		case e.hasChildren && int64(e.children) > int64(n-1-i):
			return fmt.Errorf("schema element %d (%s) has %d children, more than the %d elements after it", i, name, e.children, n-1-i)
		}
		w.cost += int64(len(open)+1) * costPerPathName
		if e.hasType {
			if w.leaves++; w.leaves > MaxColumns {
				return fmt.Errorf("schema of more than %d columns", MaxColumns)
			}
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		if !e.hasType && e.children > 0 {
			open = append(open, e.children)
		}
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("schema: its groups claim %d more children than it has", sum(open))
	}
	return nil
}

func sum(v []int32) (s int64) {
	for _, x := range v {
		s += int64(x)
	}
	return s
}

// elementName quotes a schema element's name for an error, cut short.
func elementName(b []byte) string {
	const max = 64
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
