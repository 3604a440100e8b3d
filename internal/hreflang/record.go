package hreflang

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"io"
)

// The join records, sorted by (x, page first, y, kind, pos) so that one
// pass over the merged runs sees, for each URL x: whether the set lists x
// as a page, then the links x makes and the links made to x, each link to
// or from y in turn, x's own link to y (an edge) just before the links
// from y that need it (needs).
const (
	kindPage byte = iota // x is a page of the set; y: pageHasLinks when it lists alternates
	kindEdge             // page x links to y (y: the first half of the target's fingerprint)
	kindNeed             // page y links to x, so x must link back to y; pos says where the link is
	numKinds
)

// pageHasLinks in a page record's y: the page lists hreflang alternates.
const pageHasLinks = 1

// joinRec is a record of the join, 32 bytes in memory. x is the 128-bit
// fingerprint of the URL the record is grouped under, y the first 64 bits
// of the other end's fingerprint (within one x group, 64 bits tell its few
// links apart). kp holds the kind (top 2 bits) and the link's place, pos:
// the page's sequence number among the pages with alternates (38 bits) and
// the link's index in the page (low 24), so that comparing kp compares
// the kind, then pos.
type joinRec struct {
	x0, x1 uint64
	y      uint64
	kp     uint64
}

const kindShift = 62

func mkJoin(kind byte, x0, x1, y, pos uint64) joinRec {
	return joinRec{x0: x0, x1: x1, y: y, kp: uint64(kind)<<kindShift | pos}
}

func (r joinRec) kind() byte  { return byte(r.kp >> kindShift) }
func (r joinRec) pos() uint64 { return r.kp & (1<<kindShift - 1) }

func cmpJoin(a, b joinRec) int {
	if a.x0 != b.x0 {
		return cmp.Compare(a.x0, b.x0)
	}
	if a.x1 != b.x1 {
		return cmp.Compare(a.x1, b.x1)
	}
	if ap, bp := a.kind() == kindPage, b.kind() == kindPage; ap != bp {
		if ap {
			return -1
		}
		return 1
	}
	if a.y != b.y {
		return cmp.Compare(a.y, b.y)
	}
	return cmp.Compare(a.kp, b.kp)
}

// Sizes of a join record on disk, by kind: kind, x, then y (one byte for a
// page) and, for a need, pos.
var joinSize = [numKinds]int{kindPage: 1 + 16 + 1, kindEdge: 1 + 16 + 8, kindNeed: 1 + 16 + 8 + 8}

func putJoin(dst []byte, r joinRec) []byte {
	dst = append(dst, r.kind())
	dst = binary.BigEndian.AppendUint64(dst, r.x0)
	dst = binary.BigEndian.AppendUint64(dst, r.x1)
	switch r.kind() {
	case kindPage:
		dst = append(dst, byte(r.y))
	case kindEdge:
		dst = binary.BigEndian.AppendUint64(dst, r.y)
	default:
		dst = binary.BigEndian.AppendUint64(dst, r.y)
		dst = binary.BigEndian.AppendUint64(dst, r.pos())
	}
	return dst
}

// getJoin reads one join record: io.EOF at a clean end, io.ErrUnexpectedEOF
// when the run ends inside a record, errCorrupt for an unknown kind or
// page flag.
func getJoin(r *bufio.Reader) (joinRec, error) {
	k, err := r.ReadByte()
	if err != nil {
		return joinRec{}, err // io.EOF: the run ends between records
	}
	if k >= numKinds {
		return joinRec{}, errCorrupt
	}
	var b [32]byte
	n := joinSize[k] - 1
	if _, err := io.ReadFull(r, b[:n]); err != nil {
		return joinRec{}, io.ErrUnexpectedEOF
	}
	rec := mkJoin(k, binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:]), 0, 0)
	switch k {
	case kindPage:
		if b[16] > pageHasLinks {
			return joinRec{}, errCorrupt
		}
		rec.y = uint64(b[16])
	case kindEdge:
		rec.y = binary.BigEndian.Uint64(b[16:])
	default:
		rec.y = binary.BigEndian.Uint64(b[16:])
		pos := binary.BigEndian.Uint64(b[24:])
		if pos > maxPos {
			return joinRec{}, errCorrupt
		}
		rec.kp |= pos
	}
	return rec, nil
}

// A problem record: where the link is (pos, as in joinRec; a page's
// missing self link has link index selfLink) and what is wrong.
type probRec struct {
	pos  uint64
	kind byte // Kind, with probUnlinked for a NotReciprocal whose target lists no alternates
}

// probUnlinked flags a NotReciprocal problem whose target lists no
// alternates at all.
const probUnlinked = 0x80

const (
	linkBits = 24
	maxLinks = 1<<linkBits - 1 // links per page that are checked; selfLink marks the page itself
	selfLink = maxLinks
	maxPos   = 1<<kindShift - 1
	maxPages = maxPos >> linkBits
)

func cmpProb(a, b probRec) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.kind, b.kind)) }

const probSize = 9

func putProb(dst []byte, r probRec) []byte {
	return append(binary.BigEndian.AppendUint64(dst, r.pos), r.kind)
}

func getProb(r *bufio.Reader) (probRec, error) {
	var b [probSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if err == io.EOF {
			return probRec{}, io.EOF
		}
		return probRec{}, io.ErrUnexpectedEOF
	}
	p := probRec{pos: binary.BigEndian.Uint64(b[:]), kind: b[8]}
	if k := Kind(p.kind &^ probUnlinked); k < NotReciprocal || k > TargetMissing || p.kind&probUnlinked != 0 && k != NotReciprocal {
		return probRec{}, errCorrupt
	}
	return p, nil
}
