package encode

import (
	"math"
	"time"
)

const (
	usPerSec  = 1_000_000
	secPerDay = 86400
	// maxFrac bounds the fraction of a second: nine digits (nanoseconds) is
	// the finest any database or time library writes, and LastmodLen must
	// stay small.
	maxFrac = 9
	// maxOffset is the largest zone offset xsd:dateTime allows: 14:00.
	maxOffset = 14 * 3600
)

// AppendLastmod appends the lastmod raw, trimmed of white space, in a form
// that both W3C Datetime and sitemap.xsd (xsd:date | xsd:dateTime) accept,
// and returns the extended buffer and the key of the instant: microseconds
// since 1970-01-01T00:00:00Z, a date counting as its midnight UTC.
//
// Accepted forms (year 0001–9999, real dates, hh 00–23, mm and ss 00–59):
//
//	YYYY-MM-DD                        written as is
//	YYYY-MM-DDThh:mm:ss[.f]ZONE       written as is ('t' and 'z' upper-cased)
//	YYYY-MM-DDThh:mmZONE              gains ":00" seconds
//	YYYY-MM-DDThh:mm[:ss[.f]]         read in tz, written with its offset
//	YYYY-MM-DD hh:mm[:ss[.f]][ZONE]   the SQL form, likewise
//
// ZONE is Z, ±hh:mm, ±hhmm, ±hh (written ±hh:mm, at most 14:00 either way)
// or " UTC" (written Z). A zone-less time gets the offset tz has at that
// wall-clock time, written Z when it is zero; a wall-clock time that a
// daylight-saving change skips (02:30 on a spring-forward night in New York)
// names no instant and returns LastmodNonexistent: writing it would invent
// one. Should the offset not be a whole number of minutes (local mean time
// before time zones), the instant is written in UTC instead. The fraction f (1 to 9 digits) is kept as given.
// A nil tz means UTC.
//
// YYYY and YYYY-MM return LastmodImprecise (writing them would invent a
// day); anything else returns LastmodInvalid. On a warning dst is returned
// unchanged with the key NoLastmod.
func AppendLastmod(dst, raw []byte, tz *time.Location) ([]byte, int64, Warning) {
	return appendLastmodZone(dst, raw, tz, nil)
}

// appendLastmodZone is AppendLastmod, reading zone-less times in tz
// through zc when zc is not nil.
func appendLastmodZone(dst, raw []byte, tz *time.Location, zc *zoneCache) ([]byte, int64, Warning) {
	s := trimWhite(raw)
	utc := tz == nil || tz == time.UTC
	if key, ok := lastmodFast(s, utc); ok {
		if len(s) != len("2006-01-02T15:04:05") {
			return append(dst, s...), key, 0
		}
		// Zone-less in UTC: the SQL form's space becomes 'T', and 'Z' the zone.
		dst = append(dst, s[:10]...)
		dst = append(dst, 'T')
		dst = append(dst, s[11:]...)
		return append(dst, 'Z'), key, 0
	}
	return appendLastmod(dst, s, tz, zc)
}

// lastmodFast returns the key of s when s has one of the common fixed
// layouts and is valid: YYYY-MM-DD or YYYY-MM-DDThh:mm:ss followed by Z or
// ±hh:mm, which AppendLastmod writes as they are, or, when the zone-less
// time is read in UTC (utc), YYYY-MM-DD[T ]hh:mm:ss. Else ok is false and
// appendLastmod, which defines the result, decides. It reads digits at known
// places with no loop; FuzzAppendLastmod checks both agree.
func lastmodFast(s []byte, utc bool) (key int64, ok bool) {
	if (len(s) != 10 && len(s) != 19 && len(s) != 20 && len(s) != 25) || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y1, y2, m, d := num2(s, 0), num2(s, 2), num2(s, 5), num2(s, 8)
	year := y1*100 + y2
	if y1 < 0 || y2 < 0 || year == 0 || m < 1 || m > 12 || d < 1 || d > DaysIn(year, m) {
		return 0, false
	}
	days := daysFromCivil(year, m, d)
	if len(s) == 10 {
		return days * secPerDay * usPerSec, true
	}
	if (s[10] != 'T' && (s[10] != ' ' || len(s) != 19)) || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	hh, mm, ss := num2(s, 11), num2(s, 14), num2(s, 17)
	if hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59 {
		return 0, false
	}
	off := 0
	switch len(s) {
	case 19:
		if !utc {
			return 0, false
		}
	case 20:
		if s[19] != 'Z' {
			return 0, false
		}
	default:
		zh, zm := num2(s, 20), num2(s, 23)
		if (s[19] != '+' && s[19] != '-') || s[22] != ':' || zh < 0 || zm < 0 || zm > 59 || zh*3600+zm*60 > maxOffset {
			return 0, false
		}
		if off = zh*3600 + zm*60; s[19] == '-' {
			off = -off
		}
	}
	return (days*secPerDay + int64(hh*3600+mm*60+ss-off)) * usPerSec, true
}

// num2 returns the two-digit number at s[i:i+2], or -1 if those are not digits.
func num2(s []byte, i int) int {
	a, b := int(s[i])-'0', int(s[i+1])-'0'
	if uint(a) > 9 || uint(b) > 9 {
		return -1
	}
	return a*10 + b
}

// appendLastmod is AppendLastmod for a trimmed s, any accepted form; zc,
// when not nil, remembers tz's offsets.
func appendLastmod(dst, s []byte, tz *time.Location, zc *zoneCache) ([]byte, int64, Warning) {
	if len(s) < 4 || !isDigits(s[:4]) {
		return dst, NoLastmod, LastmodInvalid
	}
	year := atoi(s[:4])
	if year == 0 {
		return dst, NoLastmod, LastmodInvalid
	}
	if len(s) == 4 {
		return dst, NoLastmod, LastmodImprecise
	}
	if len(s) < 7 || s[4] != '-' || !isDigits(s[5:7]) {
		return dst, NoLastmod, LastmodInvalid
	}
	month := atoi(s[5:7])
	if month < 1 || month > 12 {
		return dst, NoLastmod, LastmodInvalid
	}
	if len(s) == 7 {
		return dst, NoLastmod, LastmodImprecise
	}
	if len(s) < 10 || s[7] != '-' || !isDigits(s[8:10]) {
		return dst, NoLastmod, LastmodInvalid
	}
	day := atoi(s[8:10])
	if day < 1 || day > DaysIn(year, month) {
		return dst, NoLastmod, LastmodInvalid
	}
	days := daysFromCivil(year, month, day)
	if len(s) == 10 {
		return append(dst, s...), days * secPerDay * usPerSec, 0
	}

	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return dst, NoLastmod, LastmodInvalid
	}
	t := s[11:]
	if len(t) < 5 || !isDigits(t[:2]) || t[2] != ':' || !isDigits(t[3:5]) {
		return dst, NoLastmod, LastmodInvalid
	}
	hh, mm, ss := atoi(t[:2]), atoi(t[3:5]), 0
	if hh > 23 || mm > 59 {
		return dst, NoLastmod, LastmodInvalid
	}
	hhmm, t := t[:5], t[5:]
	var sec, frac []byte
	if len(t) > 0 && t[0] == ':' {
		if len(t) < 3 || !isDigits(t[1:3]) {
			return dst, NoLastmod, LastmodInvalid
		}
		if ss = atoi(t[1:3]); ss > 59 {
			return dst, NoLastmod, LastmodInvalid
		}
		sec, t = t[1:3], t[3:]
	}
	if len(t) > 0 && t[0] == '.' && sec != nil {
		j := 1
		for j < len(t) && isDigit(t[j]) {
			j++
		}
		if j == 1 || j-1 > maxFrac {
			return dst, NoLastmod, LastmodInvalid
		}
		frac, t = t[:j], t[j:]
	}

	// The zone: written as zone (empty for Z), offset off seconds east.
	var zone []byte
	off, zoned := 0, true
	switch {
	case len(t) == 0:
		zoned = false
	case len(t) == 1 && (t[0] == 'Z' || t[0] == 'z'):
	case len(t) == 4 && t[0] == ' ' && lower(t[1]) == 'u' && lower(t[2]) == 't' && lower(t[3]) == 'c':
	case t[0] == '+' || t[0] == '-':
		var zh, zm int
		switch {
		case len(t) == 3 && isDigits(t[1:3]):
			zh = atoi(t[1:3])
		case len(t) == 5 && isDigits(t[1:5]):
			zh, zm = atoi(t[1:3]), atoi(t[3:5])
		case len(t) == 6 && isDigits(t[1:3]) && t[3] == ':' && isDigits(t[4:6]):
			zh, zm = atoi(t[1:3]), atoi(t[4:6])
		default:
			return dst, NoLastmod, LastmodInvalid
		}
		if zm > 59 || zh*3600+zm*60 > maxOffset {
			return dst, NoLastmod, LastmodInvalid
		}
		if off = zh*3600 + zm*60; t[0] == '-' {
			off = -off
		}
		zone = t // re-written as ±hh:mm below
	default:
		return dst, NoLastmod, LastmodInvalid
	}

	local := days*secPerDay + int64(hh*3600+mm*60+ss)
	if !zoned {
		if tz != nil && tz != time.UTC {
			// Not Zone(): in a gap (spring forward) time.Date moves the wall
			// clock on, and the offset must describe the instant it chose.
			var exists bool
			if zc != nil {
				off, exists = zc.offset(tz, local, year, month, day, hh, mm, ss)
			} else {
				off, exists = zoneOffset(tz, local, year, month, day, hh, mm, ss)
			}
			if !exists {
				return dst, NoLastmod, LastmodNonexistent
			}
		}
		if off%60 != 0 || off > maxOffset || off < -maxOffset {
			return appendUTC(dst, local-int64(off), frac)
		}
	}
	key := (local-int64(off))*usPerSec + fracMicros(frac)

	dst = append(dst, s[:10]...)
	dst = append(dst, 'T')
	dst = append(dst, hhmm...)
	dst = append(dst, ':')
	if sec != nil {
		dst = append(dst, sec...)
	} else {
		dst = append(dst, "00"...)
	}
	dst = append(dst, frac...)
	switch {
	case zone != nil: // keep the sign as given, so -00:00 stays
		dst = append(dst, zone[0], zone[1], zone[2], ':')
		if len(zone) == 3 {
			dst = append(dst, '0', '0')
		} else {
			dst = append(dst, zone[len(zone)-2:]...)
		}
	case off == 0:
		dst = append(dst, 'Z')
	default:
		sign, a := byte('+'), off
		if off < 0 {
			sign, a = '-', -off
		}
		dst = append(dst, sign)
		dst = append2(dst, a/3600)
		dst = append(dst, ':')
		dst = append2(dst, a/60%60)
	}
	return dst, key, 0
}

// zoneCache remembers one period of a time zone, [start, end) in Unix
// seconds, during which its offset from UTC is off, so reading zone-less
// times in a zone does not ask package time (~100 ns) for every row: exports
// with naive timestamps list many times within one period.
type zoneCache struct {
	start, end int64
	off        int
	set        bool
}

// offset returns the offset, in seconds east, that time.Date gives the
// wall-clock time y-mo-d h:mi:s in tz, whose seconds since the epoch read as
// UTC are local. time.Date looks up the period holding local and keeps its
// offset when local minus that offset falls in the same period; when both
// fall in the cached period that is the cached offset, and otherwise the
// answer comes from time.Date, and the period holding local is cached.
func (z *zoneCache) offset(tz *time.Location, local int64, y, mo, d, h, mi, s int) (off int, exists bool) {
	if z.set && local >= z.start && local < z.end {
		if utc := local - int64(z.off); utc >= z.start && utc < z.end {
			return z.off, true
		}
	}
	off, exists = zoneOffset(tz, local, y, mo, d, h, mi, s)
	t := time.Unix(local, 0).In(tz)
	_, z.off = t.Zone()
	first, next := t.ZoneBounds()
	z.start, z.end, z.set = math.MinInt64, math.MaxInt64, true
	if !first.IsZero() {
		z.start = first.Unix()
	}
	if !next.IsZero() {
		z.end = next.Unix()
	}
	return off, exists
}

// zoneOffset returns the offset time.Date gives the wall-clock time
// y-mo-d h:mi:s in tz (local: its seconds since the epoch read as UTC), and
// whether that wall-clock time exists: in a gap (spring forward) time.Date
// moves the clock on, so the instant it picks has another offset.
func zoneOffset(tz *time.Location, local int64, y, mo, d, h, mi, s int) (off int, exists bool) {
	utc := time.Date(y, time.Month(mo), d, h, mi, s, 0, tz).Unix()
	off = int(local - utc)
	_, at := time.Unix(utc, 0).In(tz).Zone()
	return off, at == off
}

// appendUTC writes the instant utc (seconds since the epoch) plus the
// fraction frac (with its '.') as YYYY-MM-DDThh:mm:ss[.f]Z.
func appendUTC(dst []byte, utc int64, frac []byte) ([]byte, int64, Warning) {
	days := utc / secPerDay
	sod := int(utc % secPerDay)
	if sod < 0 {
		days, sod = days-1, sod+secPerDay
	}
	y, m, d := civilFromDays(days)
	if y < 1 || y > 9999 {
		return dst, NoLastmod, LastmodInvalid
	}
	dst = append2(dst, y/100)
	dst = append2(dst, y%100)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	dst = append2(dst, d)
	dst = append(dst, 'T')
	dst = append2(dst, sod/3600)
	dst = append(dst, ':')
	dst = append2(dst, sod/60%60)
	dst = append(dst, ':')
	dst = append2(dst, sod%60)
	dst = append(dst, frac...)
	return append(dst, 'Z'), utc*usPerSec + fracMicros(frac), 0
}

// fracMicros returns the microseconds of a fraction ".ddd…" (truncated).
func fracMicros(frac []byte) int64 {
	var us int64
	for i := 1; i <= 6; i++ {
		us *= 10
		if i < len(frac) {
			us += int64(frac[i] - '0')
		}
	}
	return us
}

// daysFromCivil returns the number of days from 1970-01-01 to the proleptic
// Gregorian date y-m-d (y >= 1), after Howard Hinnant's days_from_civil.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400 // y >= 0
	yoe := y - era*400
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := int(z - era*146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + int(era)*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// DaysIn returns the number of days in month m (1..12) of year y in the
// proleptic Gregorian calendar, which xsd:date and W3C Datetime use.
func DaysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// atoi parses a short run of ASCII digits.
func atoi(s []byte) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// append2 appends 0 <= n < 100 as two digits.
func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}
