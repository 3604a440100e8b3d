// Package columnar holds what the Parquet and Arrow IPC readers share: the
// skeleton of a reader (Map finds and opens its columns, Filler runs its
// Fill, OpenFile opens a local file), the spans of values they copy into a
// batch, the text of typed values (dates, timestamps, decimals, floats), and
// the shapes of the list extension columns. Each reader keeps only what its
// format decides: how a column is typed and how its values are taken.
package columnar

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// Span is where one field value sits in Batch.Buf; NullSpan marks a null.
type Span struct{ Start, End uint32 }

// NullSpan is the span of a null value.
var NullSpan = Span{math.MaxUint32, math.MaxUint32}

// SetViews appends to b.Fields[c] a view of b.Buf for every span, after the
// copying is done: b.Buf may have moved while it grew.
func SetViews(b *input.Batch, c input.Column, spans []Span) {
	b.SizeColumn(c)
	for _, s := range spans {
		if s == NullSpan {
			b.Fields[c] = append(b.Fields[c], nil)
		} else {
			b.Fields[c] = append(b.Fields[c], b.Buf[s.Start:s.End:s.End])
		}
	}
}

// AppendViews appends to views a view of buf for every Span (nil for a
// null), after the copying is done: buf may have moved while it grew.
func AppendViews(views [][]byte, buf []byte, spans []Span) [][]byte {
	for _, s := range spans {
		if s == NullSpan {
			views = append(views, nil)
		} else {
			views = append(views, buf[s.Start:s.End:s.End])
		}
	}
	return views
}

// Time units, as the number of units in a second.
const (
	Seconds = 1
	Millis  = 1_000
	Micros  = 1_000_000
	Nanos   = 1_000_000_000
)

// AppendDate appends a day count since 1970-01-01 as YYYY-MM-DD.
func AppendDate(dst []byte, days int64) []byte {
	return time.Unix(days*86400, 0).UTC().AppendFormat(dst, time.DateOnly)
}

// AppendTimestamp appends v, in units of 1/perSec second since the epoch, as
// YYYY-MM-DDThh:mm:ss[.f], the fraction without trailing zeros: with Z when
// utc (an instant), without a zone otherwise (a wall-clock time, which the
// encoder reads in --lastmod-tz like any zone-less datetime).
func AppendTimestamp(dst []byte, v, perSec int64, utc bool) []byte {
	sec, frac := v/perSec, v%perSec
	if frac < 0 {
		sec, frac = sec-1, frac+perSec
	}
	t := time.Unix(sec, frac*(Nanos/perSec)).UTC()
	if utc {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.999999999Z07:00")
	}
	return t.AppendFormat(dst, "2006-01-02T15:04:05.999999999")
}

// MaxScale bounds the scale of a decimal column, either way: the most
// digits a decimal holds (decimal256: 76). AppendDecimal writes a digit
// for each step of the scale, so a column of a larger scale, which no
// writer makes, would have a few bytes of input become megabytes of text.
const MaxScale = 76

// AppendDecimal appends the decimal unscaled×10^-scale (|scale| <= MaxScale).
func AppendDecimal(dst []byte, unscaled int64, scale int) []byte {
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

// BigEndianInt reads a big-endian two's complement integer, as Parquet
// stores decimals in (FIXED_LEN_)BYTE_ARRAY; ok is false when it does not
// fit in an int64.
func BigEndianInt(b []byte) (v int64, ok bool) {
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

// InvalidNumber is written for a value that cannot be a priority (a decimal
// beyond int64): the encoder drops it with priority_invalid.
const InvalidNumber = "NaN"

// AppendFloat appends f in the shortest decimal form that reads back as f
// at bits precision, without an exponent.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	return strconv.AppendFloat(dst, f, 'f', -1, bits)
}

// DaysFromMillis returns the day (since 1970-01-01) of a millisecond instant,
// rounding down for instants before 1970.
func DaysFromMillis(ms int64) int64 {
	days := ms / (86400 * Millis)
	if ms%(86400*Millis) < 0 {
		days--
	}
	return days
}

// ArrowPerSec returns the ticks per second of an Arrow time unit, 0 if unknown.
func ArrowPerSec(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return Seconds
	case arrow.Millisecond:
		return Millis
	case arrow.Microsecond:
		return Micros
	case arrow.Nanosecond:
		return Nanos
	}
	return 0
}

// ParquetPerSec returns the ticks per second of a Parquet TIMESTAMP, 0 if unknown.
func ParquetPerSec(ts *format.TimestampType) int64 {
	switch ts.Unit.Value.(type) {
	case *format.MilliSeconds:
		return Millis
	case *format.MicroSeconds:
		return Micros
	case *format.NanoSeconds:
		return Nanos
	}
	return 0
}

// ExtLike returns the core field whose column types an extension column of
// kind k accepts: dates like lastmod (string, DATE, TIMESTAMP), a rating
// like priority (string, FLOAT, DOUBLE, DECIMAL), everything else a string
// like changefreq. Each reader adds integers and booleans where they fit.
func ExtLike(k encode.ExtKind) input.Column {
	switch k {
	case encode.ExtNewsDate, encode.ExtVideoPublicationDate, encode.ExtVideoExpirationDate:
		return input.Lastmod
	case encode.ExtVideoRating:
		return input.Priority
	}
	return input.Changefreq
}
