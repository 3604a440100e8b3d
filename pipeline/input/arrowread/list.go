package arrowread

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// listColumn reads a list extension column of an Arrow input (images:
// list<string>; alternates, videos: list<struct<…>>; also large_list; see
// columnar.IsListKind). It walks the record batch's arrays in place, through the list
// offsets and the struct's child arrays, and packs each row's list into
// Batch.Buf (the record batch does not outlive the next one).
type listColumn struct {
	kind   encode.ExtKind
	fields []arrowListField // the struct fields sitemapgen knows; none for images

	arrs  []arrow.Array // scratch: the fields' arrays in the current record batch
	dicts []dictBound   // the dictionaries bound checked last: of the values, then of each field
}

type arrowListField struct {
	idx  int  // field index in the struct
	tag  byte // record field tag
	list bool // video tag as a list of strings
}

// addList maps field i of the schema, f, named like the list column x.
func (ar *Reader) addList(x encode.ExtColumn, i int, f arrow.Field) error {
	al, err := newListColumn(x.Kind, f)
	if err != nil {
		return err
	}
	ar.lists = columnar.AddList(&ar.fill, ar.lists, x, al)
	ar.extCols = append(ar.extCols, i)
	return nil
}

// list returns the list reader of extension column x, or nil.
func (ar *Reader) list(x int) *listColumn {
	if x < len(ar.lists) {
		return ar.lists[x]
	}
	return nil
}

// arrowListElem returns the element type of a list or large_list.
func arrowListElem(t arrow.DataType) (arrow.DataType, bool) {
	switch t := t.(type) {
	case *arrow.ListType:
		return t.Elem(), true
	case *arrow.LargeListType:
		return t.Elem(), true
	}
	return nil, false
}

func newListColumn(k encode.ExtKind, f arrow.Field) (*listColumn, error) {
	typeErr := func(what string) error {
		return fmt.Errorf("column %q: %w %s; want %s", f.Name, input.ErrColumnType, what, columnar.ListShape(k))
	}
	elem, ok := arrowListElem(f.Type)
	if !ok {
		return nil, typeErr(f.Type.String() + " (not a list)")
	}
	al := &listColumn{kind: k}
	if k == encode.ExtImageList {
		if checkType(input.Changefreq, arrow.Field{Name: f.Name, Type: elem}) != nil {
			return nil, typeErr(f.Type.String())
		}
		return al, nil
	}
	st, ok := elem.(*arrow.StructType)
	if !ok {
		return nil, typeErr(f.Type.String())
	}
	var names []string
	for i, sf := range st.Fields() {
		names = append(names, sf.Name)
		tag, like, ok := columnar.StructFieldTag(k, sf.Name)
		if !ok {
			continue // unknown fields are ignored, like other columns
		}
		af := arrowListField{idx: i, tag: tag}
		if e, isList := arrowListElem(sf.Type); isList && like == encode.ExtVideoTag {
			af.list = true
			if checkType(input.Changefreq, arrow.Field{Name: sf.Name, Type: e}) != nil {
				return nil, fmt.Errorf("column %q, field %q: %w %s; want a string or a list of strings", f.Name, sf.Name, input.ErrColumnType, sf.Type)
			}
		} else if err := checkExtType(like, arrow.Field{Name: sf.Name, Type: sf.Type}); err != nil {
			return nil, fmt.Errorf("column %q, field %q: %w %s", f.Name, sf.Name, input.ErrColumnType, sf.Type)
		}
		al.fields = append(al.fields, af)
	}
	if len(al.fields) == 0 {
		return nil, typeErr("a list of a struct with no field sitemapgen knows (" + strings.Join(names, ", ") + ")")
	}
	return al, nil
}

var errListOffsets = errors.New("list offsets out of range")

// packed is what packing adds to a value (see encode.OpenPacked).
const packed = 5

// bound checks the values of the list array arr of the current record
// batch (see checkValues: a corrupt offset would end in a slice out of
// range) and returns the most bytes one of its rows can add to a batch:
// its most elements, each packed at its longest, at most
// columnar.MaxListBytes and an element (take refuses a longer row).
func (al *listColumn) bound(arr arrow.Array) (int, error) {
	ll, ok := arr.(array.ListLike)
	if !ok {
		return 0, nil // take reports the type
	}
	vals := ll.ListValues()
	var elem int64
	if al.kind == encode.ExtImageList {
		b, err := al.valueBound(0, vals)
		if err != nil {
			return 0, err
		}
		elem = packed + b
	} else {
		st, ok := vals.(*array.Struct)
		if !ok || st.NumField() <= al.fields[len(al.fields)-1].idx {
			return 0, nil // take reports the type
		}
		elem = packed // the record
		for k, f := range al.fields {
			fa := st.Field(f.idx)
			if fa.Len() < st.Len() {
				return 0, nil // take reports it
			}
			if !f.list {
				b, err := al.valueBound(1+k, fa)
				if err != nil {
					return 0, err
				}
				elem += 1 + packed + b
				continue
			}
			sub, ok := fa.(array.ListLike)
			if !ok {
				return 0, nil // take reports the type
			}
			b, err := al.valueBound(1+k, sub.ListValues())
			if err != nil {
				return 0, err
			}
			elem += mostElems(sub, sub.ListValues().Len()) * (1 + packed + b)
		}
	}
	return int(min(mostElems(ll, vals.Len())*elem, columnar.MaxListBytes+elem)), nil
}

// valueBound is checkValues for the values arr of a list, their
// dictionary checked once (slot: which of the list's).
func (al *listColumn) valueBound(slot int, arr arrow.Array) (int64, error) {
	for len(al.dicts) <= slot {
		al.dicts = append(al.dicts, dictBound{})
	}
	if _, ok := arr.(*array.Dictionary); !ok {
		b, err := checkValues(arr, listValues)
		return int64(b), err
	}
	b, err := checkArray(arr, dictValues, &al.dicts[slot])
	return int64(b), err
}

// mostElems returns the most elements a non-null list of ll has, of those
// whose offsets lie within its n values (take refuses the others when it
// comes to them).
func mostElems(ll array.ListLike, n int) int64 {
	var most int64
	for i := range ll.Len() {
		if ll.IsNull(i) {
			continue
		}
		if s, e := ll.ValueOffsets(i); s >= 0 && s <= e && e <= int64(n) {
			most = max(most, e-s)
		}
	}
	return most
}

// take appends rows from..from+n of the list array arr to buf, packed,
// and their spans to spans.
func (al *listColumn) take(buf []byte, spans []columnar.Span, arr arrow.Array, from, n int) ([]byte, []columnar.Span, error) {
	ll, ok := arr.(array.ListLike)
	if !ok {
		return buf, spans, fmt.Errorf("%w %s", input.ErrColumnType, arr.DataType())
	}
	if ll.Len() < from+n {
		return buf, spans, errLength
	}
	vals := ll.ListValues()
	var st *array.Struct
	if al.kind != encode.ExtImageList {
		if st, ok = vals.(*array.Struct); !ok || st.NumField() <= al.fields[len(al.fields)-1].idx {
			return buf, spans, fmt.Errorf("%w %s", input.ErrColumnType, arr.DataType())
		}
		al.arrs = al.arrs[:0]
		for _, f := range al.fields {
			fa := st.Field(f.idx)
			if fa.Len() < st.Len() {
				return buf, spans, errLength
			}
			if _, ok := fa.(array.ListLike); f.list && !ok {
				return buf, spans, fmt.Errorf("%w %s", input.ErrColumnType, fa.DataType())
			}
			al.arrs = append(al.arrs, fa)
		}
	}
	var err error
	for i := from; i < from+n; i++ {
		if ll.IsNull(i) {
			spans = append(spans, columnar.NullSpan)
			continue
		}
		start := len(buf)
		s, e := ll.ValueOffsets(i)
		if s < 0 || s > e || e > int64(vals.Len()) {
			return buf, spans, errListOffsets
		}
		for j := int(s); j < int(e); j++ {
			if len(buf)-start > columnar.MaxListBytes {
				return buf, spans, columnar.ErrListTooLong
			}
			if st == nil {
				if buf, err = appendArrowField(buf, vals, j, 0); err != nil {
					return buf, spans, err
				}
				continue
			}
			if st.IsNull(j) {
				continue
			}
			var at int
			buf, at = encode.OpenPacked(buf)
			for k, f := range al.fields {
				fa := al.arrs[k]
				if !f.list {
					if buf, err = appendArrowField(buf, fa, j, f.tag); err != nil {
						return buf, spans, err
					}
					continue
				}
				if fa.IsNull(j) {
					continue
				}
				sub := fa.(array.ListLike)
				tv := sub.ListValues()
				s2, e2 := sub.ValueOffsets(j)
				if s2 < 0 || s2 > e2 || e2 > int64(tv.Len()) {
					return buf, spans, errListOffsets
				}
				for t := int(s2); t < int(e2); t++ {
					if buf, err = appendArrowField(buf, tv, t, f.tag); err != nil {
						return buf, spans, err
					}
				}
			}
			buf = encode.ClosePacked(buf, at)
		}
		if len(buf)-start > columnar.MaxListBytes {
			return buf, spans, columnar.ErrListTooLong
		}
		spans = append(spans, columnar.Span{Start: uint32(start), End: uint32(len(buf))})
	}
	return buf, spans, nil
}

// appendArrowField appends value j of arr, packed (as a record field when
// tag != 0), unless it is null.
func appendArrowField(buf []byte, arr arrow.Array, j int, tag byte) ([]byte, error) {
	if arr.IsNull(j) {
		return buf, nil
	}
	var at int
	if tag != 0 {
		buf, at = encode.OpenField(buf, tag)
	} else {
		buf, at = encode.OpenPacked(buf)
	}
	buf, err := appendArrowValue(buf, arr, j, 0)
	return encode.ClosePacked(buf, at), err
}

// appendArrowValue appends value j of arr as text, like take, one
// value at a time and without allocating.
func appendArrowValue(buf []byte, arr arrow.Array, j, depth int) ([]byte, error) {
	switch a := arr.(type) {
	case *array.String:
		return appendElem(buf, a.Value(j))
	case *array.LargeString:
		return appendElem(buf, a.Value(j))
	case *array.StringView:
		return appendElem(buf, a.Value(j))
	case *array.Binary:
		return appendElem(buf, a.Value(j))
	case *array.LargeBinary:
		return appendElem(buf, a.Value(j))
	case *array.BinaryView:
		return appendElem(buf, a.Value(j))
	case *array.Int32:
		return strconv.AppendInt(buf, int64(a.Value(j)), 10), nil
	case *array.Int64:
		return strconv.AppendInt(buf, a.Value(j), 10), nil
	case *array.Boolean:
		return strconv.AppendBool(buf, a.Value(j)), nil
	case *array.Float32:
		return columnar.AppendFloat(buf, float64(a.Value(j)), 32), nil
	case *array.Float64:
		return columnar.AppendFloat(buf, a.Value(j), 64), nil
	case *array.Date32:
		return columnar.AppendDate(buf, int64(a.Value(j))), nil
	case *array.Date64:
		return columnar.AppendDate(buf, columnar.DaysFromMillis(int64(a.Value(j)))), nil
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		perSec := columnar.ArrowPerSec(t.Unit)
		if perSec == 0 {
			return buf, fmt.Errorf("timestamp of unknown unit %v", t.Unit)
		}
		return columnar.AppendTimestamp(buf, int64(a.Value(j)), perSec, t.TimeZone != ""), nil
	case *array.Decimal128:
		v := a.Value(j)
		lo, hi := int64(v.LowBits()), v.HighBits()
		if hi != lo>>63 {
			return append(buf, columnar.InvalidNumber...), nil
		}
		return columnar.AppendDecimal(buf, lo, int(a.DataType().(*arrow.Decimal128Type).Scale)), nil
	case *array.Dictionary:
		d := a.Dictionary()
		k := a.GetValueIndex(j)
		if k < 0 || k >= d.Len() || depth > 0 {
			return buf, fmt.Errorf("dictionary index %d out of range (%d values)", k, d.Len())
		}
		if d.IsNull(k) {
			return buf, nil
		}
		return appendArrowValue(buf, d, k, depth+1)
	}
	return buf, fmt.Errorf("%w %s", input.ErrColumnType, arr.DataType())
}

// appendElem appends v, a string of a list, unless it is longer than a
// row's list may be: then it fails before copying it.
func appendElem[T string | []byte](buf []byte, v T) ([]byte, error) {
	if len(v) > columnar.MaxListBytes {
		return buf, columnar.ErrListTooLong
	}
	return append(buf, v...), nil
}
