package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/format"
)

// Errors of the columnar readers (Parquet, Arrow IPC). They reach the caller
// wrapped with the file name and, where known, the row group and column;
// test them with errors.Is.
var (
	// ErrCorrupt: the file is truncated, is not of its format, or holds data
	// its format does not allow.
	ErrCorrupt = errors.New("corrupt or truncated file")
	// ErrColumnType: a mapped column has a type sitemapgen cannot read as
	// that field (a nested type, a number for loc, ...).
	ErrColumnType = errors.New("unsupported column type")
	// ErrNoColumn: the schema lacks the loc column, or an optional column
	// mapped to a name other than its default.
	ErrNoColumn = errors.New("no such column")
)

// maxBatchRows caps the rows of one columnar batch, whatever their size, so
// a column of tiny values cannot make a batch's row slices huge.
const maxBatchRows = 64 << 10

// ColumnOptions maps the fields to column names in a columnar input.
type ColumnOptions struct {
	Columns [NumColumns]string // column name of each field; "" = default name: "loc", "lastmod", "changefreq", "priority"
}

// names returns the column names to look up, and whether each is the default.
func (o ColumnOptions) names() (names [NumColumns]string, mapped [NumColumns]bool) {
	for c, n := range o.Columns {
		if n = strings.TrimSpace(n); n == "" {
			n = defaultColumnNames[c]
		}
		names[c] = n
		mapped[c] = n != defaultColumnNames[c]
	}
	return names, mapped
}

// missingColumn is the error for a field whose column the schema lacks, or
// nil when the field may be absent.
func missingColumn(source string, c Column, name string, mapped bool, have []string) error {
	if c != Loc && !mapped {
		return nil
	}
	flag := "--" + defaultColumnNames[c] + "-column"
	return fmt.Errorf("%s: %w %q (columns: %s; map another with %s)", source, ErrNoColumn, name, strings.Join(have, ", "), flag)
}

// span is where one field value sits in Batch.Buf; nullSpan marks a null.
type span struct{ start, end uint32 }

var nullSpan = span{math.MaxUint32, math.MaxUint32}

// setViews appends to b.Fields[c] a view of b.Buf for every span, after the
// copying is done: b.Buf may have moved while it grew.
func setViews(b *Batch, c Column, spans []span) {
	for _, s := range spans {
		if s == nullSpan {
			b.Fields[c] = append(b.Fields[c], nil)
		} else {
			b.Fields[c] = append(b.Fields[c], b.Buf[s.start:s.end:s.end])
		}
	}
}

// appendViews appends to views a view of buf for every span (nil for a
// null), after the copying is done: buf may have moved while it grew.
func appendViews(views [][]byte, buf []byte, spans []span) [][]byte {
	for _, s := range spans {
		if s == nullSpan {
			views = append(views, nil)
		} else {
			views = append(views, buf[s.start:s.end:s.end])
		}
	}
	return views
}

// Time units, as the number of units in a second.
const (
	unitSeconds = 1
	unitMillis  = 1_000
	unitMicros  = 1_000_000
	unitNanos   = 1_000_000_000
)

// appendDate appends a day count since 1970-01-01 as YYYY-MM-DD.
func appendDate(dst []byte, days int64) []byte {
	return time.Unix(days*86400, 0).UTC().AppendFormat(dst, time.DateOnly)
}

// appendTimestamp appends v, in units of 1/perSec second since the epoch, as
// YYYY-MM-DDThh:mm:ss[.f], the fraction without trailing zeros: with Z when
// utc (an instant), without a zone otherwise (a wall-clock time, which the
// encoder reads in --lastmod-tz like any zone-less datetime).
func appendTimestamp(dst []byte, v, perSec int64, utc bool) []byte {
	sec, frac := v/perSec, v%perSec
	if frac < 0 {
		sec, frac = sec-1, frac+perSec
	}
	t := time.Unix(sec, frac*(unitNanos/perSec)).UTC()
	if utc {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.999999999Z07:00")
	}
	return t.AppendFormat(dst, "2006-01-02T15:04:05.999999999")
}

// appendDecimal appends the decimal unscaled×10^-scale.
func appendDecimal(dst []byte, unscaled int64, scale int) []byte {
	if scale <= 0 {
		dst = strconv.AppendInt(dst, unscaled, 10)
		for range -scale {
			dst = append(dst, '0')
		}
		return dst
	}
	if unscaled < 0 {
		dst = append(dst, '-')
	}
	u := uint64(unscaled)
	if unscaled < 0 {
		u = -u
	}
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	if len(d) <= scale {
		dst = append(dst, '0', '.')
		for range scale - len(d) {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	dst = append(dst, d[:len(d)-scale]...)
	dst = append(dst, '.')
	return append(dst, d[len(d)-scale:]...)
}

// bigEndianInt reads a big-endian two's complement integer, as Parquet
// stores decimals in (FIXED_LEN_)BYTE_ARRAY; ok is false when it does not
// fit in an int64.
func bigEndianInt(b []byte) (v int64, ok bool) {
	if len(b) == 0 {
		return 0, true
	}
	neg := b[0]&0x80 != 0
	for len(b) > 8 {
		if neg && b[0] != 0xff || !neg && b[0] != 0 {
			return 0, false
		}
		b = b[1:]
	}
	var u uint64
	if neg {
		u = math.MaxUint64
	}
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	v = int64(u)
	if (v < 0) != neg {
		return 0, false
	}
	return v, true
}

// invalidNumber is written for a value that cannot be a priority (a decimal
// beyond int64): the encoder drops it with priority_invalid.
const invalidNumber = "NaN"

// appendFloat appends f in the shortest decimal form that reads back as f
// at bits precision, without an exponent.
func appendFloat(dst []byte, f float64, bits int) []byte {
	return strconv.AppendFloat(dst, f, 'f', -1, bits)
}

// daysFromMillis returns the day (since 1970-01-01) of a millisecond instant,
// rounding down for instants before 1970.
func daysFromMillis(ms int64) int64 {
	days := ms / (86400 * unitMillis)
	if ms%(86400*unitMillis) < 0 {
		days--
	}
	return days
}

// arrowPerSec returns the ticks per second of an Arrow time unit, 0 if unknown.
func arrowPerSec(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return unitSeconds
	case arrow.Millisecond:
		return unitMillis
	case arrow.Microsecond:
		return unitMicros
	case arrow.Nanosecond:
		return unitNanos
	}
	return 0
}

// parquetPerSec returns the ticks per second of a Parquet TIMESTAMP, 0 if unknown.
func parquetPerSec(ts *format.TimestampType) int64 {
	switch ts.Unit.Value.(type) {
	case *format.MilliSeconds:
		return unitMillis
	case *format.MicroSeconds:
		return unitMicros
	case *format.NanoSeconds:
		return unitNanos
	}
	return 0
}
