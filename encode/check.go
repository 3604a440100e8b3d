package encode

import "bytes"

// This file exports the encoder's rules as checks on text that is already
// in a sitemap, so that a validator shares them instead of restating them.

// LastmodWritten reports whether s is exactly in a form AppendLastmod
// writes: YYYY-MM-DD, or YYYY-MM-DDThh:mm:ss[.f] with Z or ±hh:mm, a real
// date and time. These are the forms both W3C Datetime and sitemap.xsd
// accept. It does not allocate.
func LastmodWritten(s []byte) bool {
	// The longest written form: 2006-01-02T15:04:05.123456789+14:00.
	var buf [40]byte
	if len(s) > len(buf) {
		return false
	}
	out, _, w := AppendLastmod(buf[:0], s, nil)
	return w == 0 && bytes.Equal(out, s)
}

// UnencodedAt returns the index in the URL s (as it reads after XML
// unescaping) of the first byte that AppendLoc would percent-encode or
// convert, or -1 when there is none: a non-ASCII byte or a space anywhere,
// and in the path, query and fragment any byte outside the unreserved,
// sub-delims, ':', '@', '/', '?' set other than a '%' that starts a valid
// escape and the first '#'.
func UnencodedAt(s []byte) int {
	i := 0
	if j := bytes.Index(s, []byte("://")); j >= 0 {
		i = j + len("://")
	}
	for ; i < len(s) && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++ {
		if c := s[i]; c >= 0x80 || c <= ' ' || c == 0x7f {
			return i
		}
	}
	fragment := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case pathClass[c] != pathEncode:
		case c == '%' && i+2 < len(s) && hexVal[s[i+1]] >= 0 && hexVal[s[i+2]] >= 0:
			i += 2
		case c == '#' && !fragment:
			fragment = true
		default:
			return i
		}
	}
	return -1
}
