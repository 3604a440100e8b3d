package columnar

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// MaxValue caps one value of a Parquet or Arrow input, of any column: a
// longer one is not copied into its batch, and its row is rejected (see
// Long). No field can be near it and still be written: a loc is
// rejected (loc_too_long) once its input passes 16 KiB (8 × 2,048 bytes:
// only dot segments can shorten it), a video description at 2,048
// characters (8 KiB), and the other fields are short. A value repeated
// by a dictionary is copied once per row, so without a cap a few bytes of
// dictionary indexes could fill gigabytes of batches.
const MaxValue = 64 << 10

// A long loc keeps its first keepBytes bytes, and the mark
// "…[cut: N bytes]" (at most cutMark bytes) with its length: as a CSV
// record over its limit, within the 4 KiB of a value the rejects file
// keeps whole.
const (
	keepBytes = 4000
	cutMark   = len("…[cut: 9223372036854775807 bytes]")
)

// MaxKept is the most bytes Long appends for a value.
const MaxKept = keepBytes + cutMark

// StepBytes bounds what the columns after loc may add to a batch in one
// step of a reader's Take: rows × the longest text each column's values
// can have there (a page's, a dictionary's, a record batch's or a type's).
// The loc column stops before a value that would take the batch past its
// budget, so a batch holds at most its budget, StepBytes and a row.
const StepBytes = 1 << 20

// Bounds of the text of a typed value (see AppendDate, AppendTimestamp,
// AppendFloat, AppendDecimal): what a step counts for a value of a column
// of the type, whatever the value.
const (
	DateText      = 24  // a date of years of 9 digits and a sign (int32 days: 7)
	TimestampText = 48  // a year of 12 digits and a sign, nanoseconds, Z
	FloatText     = 64  // float32: at most 48 ("-0.", 44 zeros, "1")
	DoubleText    = 330 // float64: at most 327 ("-0.", 323 zeros, "5")
	DecimalText   = 24 + MaxScale
	IntText       = 20 // "-9223372036854775808"
	BoolText      = 5  // "false"
)

// longRow is a row of the batch being filled that holds a value over
// MaxValue.
type longRow struct {
	row int  // among the rows of this Fill
	loc bool // the value is the row's loc
}

// Long appends what a batch keeps of v, a value over MaxValue of the
// column whose spans this Fill are spans, and its span, and marks its row
// (the len(spans)th of this Fill) to be rejected: loc_too_long when v is
// the loc or the row's loc is 2,048 bytes or more, else record_too_long.
// A loc keeps its first 4,000 bytes, marked "…[cut: N bytes]" with its
// length (as a CSV record over its limit); another column nothing (a
// null: the row is not encoded). It appends at most MaxKept bytes.
func Long[T string | []byte](f *Filler, buf []byte, spans []Span, v T, loc bool) ([]byte, []Span) {
	f.long = append(f.long, longRow{row: len(spans), loc: loc})
	if !loc {
		return buf, append(spans, NullSpan)
	}
	start := len(buf)
	n := keepBytes
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	buf = append(buf, v[:n]...)
	buf = append(buf, "…[cut: "...)
	buf = strconv.AppendInt(buf, int64(len(v)), 10)
	buf = append(buf, " bytes]"...)
	return buf, append(spans, Span{Start: uint32(start), End: uint32(len(buf))})
}

// rejectLong lists the long rows of this Fill in b.Rejected, in row order,
// each once; base is the batch's rows before this Fill.
func (f *Filler) rejectLong(b *input.Batch, base int) {
	slices.SortFunc(f.long, func(x, y longRow) int { return x.row - y.row })
	locs := f.Spans[input.Loc]
	for i, l := range f.long {
		if i > 0 && f.long[i-1].row == l.row {
			continue
		}
		loc := l.loc
		for _, m := range f.long[i+1:] {
			if m.row != l.row {
				break
			}
			loc = loc || m.loc
		}
		if !loc && l.row < len(locs) && locs[l.row] != NullSpan && locs[l.row].End-locs[l.row].Start >= protocol.MaxLoc {
			loc = true
		}
		reason := encode.RecordTooLong
		if loc {
			reason = encode.TooLong
		}
		b.Rejected = append(b.Rejected, input.RowReject{Row: base + l.row, Reason: reason})
	}
}
