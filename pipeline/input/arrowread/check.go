package arrowread

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
)

// Values that checkValues numbers other than by the file's row.
const (
	dictValues = 0  // a dictionary's
	listValues = -1 // a list column's
)

// checkValues checks what arrow-go trusts when it slices a value of the
// string or binary array arr: offsets that start at 0 or more, never
// decrease and end within the data buffer; a view's length, and the buffer
// and range it points to. A corrupt file would otherwise end in a slice out
// of range when the value is read. row is the file's row number of arr's
// first row, for the error, or dictValues or listValues (whose values are
// numbered from 0). It returns the length of arr's longest string, or the
// longest text of a value of its type.
func checkValues(arr arrow.Array, row int64) (int, error) {
	if arr.Len() == 0 {
		return 0, nil
	}
	var longest int64
	var err error
	switch a := arr.(type) {
	case *array.String:
		longest, err = checkOffsets(a.ValueOffsets(), dataLen(a), row)
	case *array.Binary:
		longest, err = checkOffsets(a.ValueOffsets(), dataLen(a), row)
	case *array.LargeString:
		longest, err = checkOffsets(a.ValueOffsets(), dataLen(a), row)
	case *array.LargeBinary:
		longest, err = checkOffsets(a.ValueOffsets(), dataLen(a), row)
	case *array.StringView:
		longest, err = checkViews(a, a.ValueHeader, row)
	case *array.BinaryView:
		longest, err = checkViews(a, a.ValueHeader, row)
	default:
		return textBound(arr.DataType()), nil
	}
	return int(longest), err
}

// textBound returns the longest text of a value of the typed column t.
func textBound(t arrow.DataType) int {
	switch t.ID() {
	case arrow.DATE32, arrow.DATE64:
		return columnar.DateText
	case arrow.TIMESTAMP:
		return columnar.TimestampText
	case arrow.FLOAT32:
		return columnar.FloatText
	case arrow.FLOAT64:
		return columnar.DoubleText
	case arrow.DECIMAL128:
		return columnar.DecimalText
	case arrow.INT32, arrow.INT64:
		return columnar.IntText
	case arrow.BOOL:
		return columnar.BoolText
	}
	return columnar.MaxValue
}

// dataLen is the length of the data buffer (the third) of a string or
// binary array.
func dataLen(a arrow.Array) int64 {
	bufs := a.Data().Buffers()
	if len(bufs) < 3 || bufs[2] == nil {
		return 0
	}
	return int64(bufs[2].Len())
}

// checkOffsets checks the offsets of the values of a string or binary
// array (one more than its rows) against its data buffer of size bytes.
// It returns the length of the longest value.
func checkOffsets[T int32 | int64](offs []T, size, row int64) (int64, error) {
	if len(offs) == 0 {
		return 0, nil
	}
	if offs[0] < 0 {
		return 0, fmt.Errorf("bad value offsets: %s starts at offset %d", rowName(row, 0), offs[0])
	}
	var longest T
	for i := 1; i < len(offs); i++ {
		start, end := offs[i-1], offs[i]
		switch {
		case int64(end) > size:
			return 0, fmt.Errorf("bad value offsets: %s ends at offset %d, past the %d bytes of the data buffer", rowName(row, i-1), end, size)
		case end < start:
			return 0, fmt.Errorf("bad value offsets: %s ends at offset %d, before it starts (%d)", rowName(row, i-1), end, start)
		}
		longest = max(longest, end-start)
	}
	return int64(longest), nil
}

// checkViews checks the views of a string_view or binary_view array: a
// value longer than 12 bytes is in one of its data buffers. It returns the
// length of the longest value.
func checkViews(a arrow.Array, header func(int) *arrow.ViewHeader, row int64) (int64, error) {
	bufs := a.Data().Buffers()
	if len(bufs) < 2 || bufs[1] == nil || bufs[1].Len()/arrow.ViewHeaderSizeBytes < a.Data().Offset()+a.Len() {
		return 0, fmt.Errorf("bad views: a buffer of fewer than %d views", a.Len())
	}
	data := bufs[2:]
	longest := 0
	for i := range a.Len() {
		h := header(i)
		if h.Len() < 0 {
			return 0, fmt.Errorf("bad views: %s has length %d", rowName(row, i), h.Len())
		}
		longest = max(longest, h.Len())
		if h.IsInline() {
			continue
		}
		b, off := int(h.BufferIndex()), int64(h.BufferOffset())
		if b < 0 || b >= len(data) || data[b] == nil {
			return 0, fmt.Errorf("bad views: %s is in data buffer %d of %d", rowName(row, i), b, len(data))
		}
		if off < 0 || off+int64(h.Len()) > int64(data[b].Len()) {
			return 0, fmt.Errorf("bad views: %s is at bytes %d to %d of the %d of its data buffer", rowName(row, i), off, off+int64(h.Len()), data[b].Len())
		}
	}
	return int64(longest), nil
}

// rowName names value i of an array whose first row is the file's row
// row, or of a dictionary's or a list column's values.
func rowName(row int64, i int) string {
	switch row {
	case dictValues:
		return fmt.Sprintf("dictionary value %d", i)
	case listValues:
		return fmt.Sprintf("list value %d", i)
	}
	return fmt.Sprintf("row %d", row+int64(i))
}
