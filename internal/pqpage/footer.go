package pqpage

import (
	"encoding/binary"
	"fmt"
	"io"
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

// CheckFooter reads the footer of the Parquet file of size bytes in r and
// checks, before parquet-go reads it, that its length fits in the file,
// that every length and count in it fits in the footer, and that its
// schema is a tree of at most MaxSchemaDepth levels.
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
// and count fits (skip), then what parquet-go would build from it.
func checkFooter(footer []byte) error {
	tr := thriftReader{b: footer}
	if err := tr.skip(tStruct, 0); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	tr = thriftReader{b: footer[:tr.p]}
	var last int16
	for {
		id, t, err := tr.field(&last)
		if err != nil {
			return fmt.Errorf("footer: %w", err)
		}
		if t == tStop {
			return nil
		}
		if id == 2 && t == tList {
			err = checkSchema(&tr)
		} else {
			err = tr.skip(t, 1)
		}
		if err != nil {
			return fmt.Errorf("footer: %w", err)
		}
	}
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

// checkSchema checks the list of SchemaElements at r: the depth-first
// flattening of one tree, rooted at the first element, whose groups (the
// elements without a type) have as many children as they say and whose
// columns (with a type) have none, at most MaxSchemaDepth deep.
func checkSchema(r *thriftReader) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	n, et := int(c>>4), c&0xf
	if n == 0xf {
		if n, err = r.length(); err != nil {
			return err
		}
	}
	if et != tStruct {
		// parquet-go skips a list of another type: no schema, which it
		// refuses.
		for range n {
			if err := r.skipElem(et, 2); err != nil {
				return err
			}
		}
		return nil
	}
	// A SchemaElement holds at least its name: 3 bytes.
	if n > (len(r.b)-r.p)/3 {
		return fmt.Errorf("schema of %d elements in a footer of %d bytes", n, len(r.b))
	}
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
