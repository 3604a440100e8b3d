package pqpage

import "encoding/binary"

// MaxLen returns the length of the longest value left in pg, a page of
// BYTE_ARRAY values that are not dictionary indexes (PLAIN,
// DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY), without taking any: what
// a caller taking them may need room for. It reads their lengths only, at
// most one per entry left. A length the page cannot hold ends the scan
// (taking that value fails); so do the values' bytes, which bound the
// lengths of PLAIN and DELTA_LENGTH_BYTE_ARRAY values.
func (p *Reader) MaxLen(pg *Page) int {
	left := pg.n - pg.r
	longest := 0
	switch pg.enc {
	case encPlain:
		vals := pg.vals
		for at := pg.vp; left > 0 && len(vals)-at >= 4; left-- {
			l := int64(binary.LittleEndian.Uint32(vals[at:]))
			if l > int64(len(vals)-at-4) {
				break
			}
			longest = max(longest, int(l))
			at += 4 + int(l)
		}
	case encDeltaLBA:
		room := int64(len(pg.vals) - pg.vp)
		if pg.hasHeld {
			longest = int(min(max(pg.held, 0), room))
		}
		lens := pg.lens
		for ; left > 0 && lens.total > 0; left-- {
			l, err := lens.Next()
			if err != nil || l < 0 || l > room {
				break
			}
			longest = max(longest, int(l))
		}
	case encDeltaBA:
		// Each value is a prefix of the one before and a suffix: its length
		// is at most the one before's and its suffix's.
		room := int64(len(pg.vals) - pg.vp)
		prefix, lens := pg.prefix, pg.lens
		prev := int64(len(p.prev))
		for ; left > 0 && lens.total > 0 && prefix.total > 0; left-- {
			pre, err := prefix.Next()
			if err != nil {
				break
			}
			l, err := lens.Next()
			if err != nil || pre < 0 || pre > prev || l < 0 || l > room {
				break
			}
			room -= l
			prev = pre + l
			longest = max(longest, int(prev))
		}
	}
	return longest
}

// DictMaxLen returns the length of the longest value of the chunk's
// dictionary (0 without one): a BYTE_ARRAY's without its length.
func (p *Reader) DictMaxLen() int {
	if !p.hasDict {
		return 0
	}
	longest := 0
	for i := 1; i < len(p.doffs); i++ {
		longest = max(longest, int(p.doffs[i]-p.doffs[i-1]))
	}
	if p.Size == 0 {
		longest = max(longest-4, 0)
	}
	return longest
}
