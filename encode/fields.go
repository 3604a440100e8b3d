package encode

// xmlSpecial holds the bytes AppendEscaped replaces with an entity.
var xmlSpecial = makeSet("&'\"<>")

// AppendEscaped appends s to dst with the XML specials & ' " < > replaced by
// &amp; &apos; &quot; &lt; &gt; and returns the extended buffer.
func AppendEscaped(dst, s []byte) []byte { return appendEscaped(dst, s) }

func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && !xmlSpecial[s[j]] {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		switch s[j] {
		case '&':
			dst = append(dst, "&amp;"...)
		case '\'':
			dst = append(dst, "&apos;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		}
		i = j + 1
	}
	return dst
}

// AppendChangefreq appends the changefreq raw, trimmed of white space and
// matched case-insensitively against always, hourly, daily, weekly, monthly,
// yearly and never, in lower case. Any other value returns dst unchanged and
// ChangefreqInvalid.
func AppendChangefreq(dst, raw []byte) ([]byte, Warning) {
	s := trimWhite(raw)
	if len(s) <= len("monthly") {
		var b [len("monthly")]byte
		for i, c := range s {
			b[i] = lower(c)
		}
		switch string(b[:len(s)]) {
		case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
			return append(dst, b[:len(s)]...), 0
		}
	}
	return dst, ChangefreqInvalid
}

// AppendPriority appends the priority raw, trimmed of white space: a decimal
// number from 0.0 to 1.0 inclusive, with an optional sign, optional leading
// and trailing zeros, and digits on at least one side of an optional point
// ("1", ".5", "1.", "+0.500"). It is written canonically: one integer digit,
// a point, and the fraction without trailing zeros but with at least one
// digit ("1.0", "0.5", "0.55"). A negative zero ("-0", "-0.0") is 0.0.
// Exponents, other negatives, values above 1 and anything else return dst
// unchanged and PriorityInvalid.
func AppendPriority(dst, raw []byte) ([]byte, Warning) {
	s := trimWhite(raw)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	ip, frac := s[:i], s[i:]
	if len(frac) > 0 {
		if frac[0] != '.' {
			return dst, PriorityInvalid
		}
		frac = frac[1:]
		for _, c := range frac {
			if !isDigit(c) {
				return dst, PriorityInvalid
			}
		}
	}
	if len(ip) == 0 && len(frac) == 0 {
		return dst, PriorityInvalid
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	d := byte('0')
	switch {
	case len(ip) == 0:
	case len(ip) == 1 && ip[0] == '1' && len(frac) == 0:
		d = '1'
	default:
		return dst, PriorityInvalid
	}
	if neg && (d != '0' || len(frac) > 0) {
		return dst, PriorityInvalid
	}
	dst = append(dst, d, '.')
	if len(frac) == 0 {
		return append(dst, '0'), 0
	}
	return append(dst, frac...), 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
