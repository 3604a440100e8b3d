// Package sitemapgz is issue 27's experiment: a gzip encoder for sitemap
// files that tries to use their shape instead of rediscovering it at every
// byte. It is measured against klauspost gzip level 6 in docs/performance.md
// and bench/README.md, missed the kill rule, and is not used by the
// pipeline; it is kept so the measurement can be rerun.
//
// A sitemap is a header, one <url> entry per line and a footer. Each entry
// repeats the previous one's skeleton, so at the start of a line and at the
// end of its loc the encoder first tries the distance back to the same point
// of the previous entry, and a hash-table match finder codes the rest. The
// tokens are coded as dynamic-Huffman deflate blocks in one gzip member
// (RFC 1951 in RFC 1952) that every inflater reads. Nothing depends on the
// input being a sitemap: any bytes give correct gzip, only smaller or larger.
package sitemapgz

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

const (
	maxMatch  = 258
	window    = 1 << 15
	hashBits  = 16
	blockSize = 1 << 16 // tokens per deflate block
)

// Encoder writes gzip members. It reuses its tables and buffers from one
// call to the next, so an Encoder is not safe for concurrent use.
type Encoder struct {
	// table holds, per hash of 4 bytes, position+1 of their last two
	// occurrences, side by side so one lookup touches one cache line.
	table  [1 << hashBits][2]int32
	tokens []token
	blocks blockWriter

	// The variants measured (BenchmarkCompress). lazy is the match length
	// from which the match finder takes a match without looking one byte
	// further (0: greedy). shape stops every match at a line's end and at a
	// loc's end, so each entry is coded from its known points, as issue 27
	// proposed; otherwise matches run on and those points are tried only
	// where a match happens to end on them.
	lazy  int
	shape bool
	// oneWay keeps one position per hash instead of two.
	oneWay bool
}

// NewEncoder returns an Encoder of the default variant: two positions per
// hash, lazy matching below 8 bytes, known points tried where a match ends
// on a line start (the middle of bench/README.md's table).
func NewEncoder() *Encoder {
	return &Encoder{tokens: make([]token, 0, blockSize), lazy: 8}
}

// gzipHeader has no name and no time, so equal input gives equal output.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// Append appends the gzip encoding of src, one member, to dst and returns
// the extended slice. The output depends only on src.
func (e *Encoder) Append(dst, src []byte) []byte {
	dst = append(dst, gzipHeader...)
	e.blocks.bw = bitWriter{out: dst}
	e.deflate(src)
	e.blocks.bw.flush()
	dst = e.blocks.bw.out
	e.blocks.bw.out = nil
	dst = binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(src))
	return binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }

func hash4(u uint32) uint32 { return (u * 2654435761) >> (32 - hashBits) }

// matchLen returns how many bytes a[i:] and a[j:] (j < i) share, at most
// max.
func matchLen(a []byte, j, i, max int) int {
	n := 0
	for n+8 <= max {
		x := binary.LittleEndian.Uint64(a[i+n:]) ^ binary.LittleEndian.Uint64(a[j+n:])
		if x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < max && a[i+n] == a[j+n] {
		n++
	}
	return n
}

// deflate writes src as deflate blocks. At every line start the match
// finder reaches (each one when e.shape), the line's known points are tried
// first.
func (e *Encoder) deflate(src []byte) {
	clear(e.table[:])
	e.tokens = e.tokens[:0]
	n := len(src)
	for p := 0; p < n; {
		if p > 0 && src[p-1] == '\n' {
			p = e.line(src, p)
		}
		end := n
		if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
			end = p + i + 1
		}
		p = e.search(src, p, end)
	}
	e.flushBlock(true)
}

// line codes the start of the line at p from the line before it: the bytes
// up to the loc's first difference at the distance between the two line
// starts, and, for an entry, the bytes after its loc at the distance between
// the two loc ends. It returns the position after what it coded.
func (e *Encoder) line(src []byte, p int) int {
	prev := bytes.LastIndexByte(src[:p-1], '\n') + 1
	start := p
	stop := len(src)
	if e.shape {
		if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
			stop = p + i + 1
		}
	}
	p = e.known(src, p, p-prev, stop)
	end := locEnd(src, start)
	if end < 0 || p > end {
		return p
	}
	if p < end {
		p = e.search(src, p, end)
	}
	if prevEnd := locEnd(src, prev); p == end && prevEnd >= 0 {
		p = e.known(src, p, p-prevEnd, stop)
	}
	return p
}

// locEnd returns the position of "</loc>" in the entry starting at p, or -1
// if the line at p does not start with "<url><loc>".
func locEnd(src []byte, p int) int {
	if !bytes.HasPrefix(src[p:], urlLoc) {
		return -1
	}
	p += len(urlLoc)
	// An escaped loc holds no '<'.
	if i := bytes.IndexByte(src[p:min(len(src), p+maxLoc)], '<'); i >= 0 {
		return p + i
	}
	return -1
}

// maxLoc bounds the search for a loc's end: the protocol's locs are shorter
// than 2,048 characters, escaping makes them at most 6 times longer.
const maxLoc = 6 * 2048

var urlLoc = []byte("<url><loc>")

// known codes a match at distance d from p if there is one of at least 3
// bytes before stop, and returns the position after it.
func (e *Encoder) known(src []byte, p, d, stop int) int {
	if d <= 0 || d > window {
		return p
	}
	for p < stop {
		l := matchLen(src, p-d, p, min(maxMatch, stop-p))
		if l < 3 {
			break
		}
		e.emit(match(l, d))
		p += l
		if l < maxMatch {
			break
		}
	}
	return p
}

// search codes src[p:end] with the hash-table match finder and returns the
// position after the last token: a match may run past end unless e.shape.
func (e *Encoder) search(src []byte, p, end int) int {
	stop := len(src)
	if e.shape {
		stop = end
	}
	lim := stop - 4 // load32 needs 4 bytes
	for p < end {
		if p > lim {
			e.emit(literal(src[p]))
			p++
			continue
		}
		l, d := e.best(src, p, stop)
		if l == 0 {
			e.emit(literal(src[p]))
			p++
			continue
		}
		// Lazy matching: a longer match one byte on is worth a literal.
		if l < e.lazy && p+1 <= lim {
			if l1, d1 := e.best(src, p+1, stop); l1 > l {
				e.emit(literal(src[p]))
				p++
				l, d = l1, d1
			}
		}
		e.emit(match(l, d))
		// Index the match's last position, so the next search can find
		// what follows it.
		if q := p + l - 1; q <= lim {
			e.insert(src, q)
		}
		p += l
	}
	return p
}

// insert records position p in the hash table.
func (e *Encoder) insert(src []byte, p int) {
	t := &e.table[hash4(load32(src, p))]
	t[1], t[0] = t[0], int32(p+1)
}

// best returns the longest match at p among the two last positions with
// the same hash (length 0 if none), and records p.
func (e *Encoder) best(src []byte, p, stop int) (length, dist int) {
	u := load32(src, p)
	t := &e.table[hash4(u)]
	c1, c2 := int(t[0])-1, int(t[1])-1
	if e.oneWay {
		c2 = -1
	}
	t[1], t[0] = t[0], int32(p+1)
	max := min(maxMatch, stop-p)
	if c1 >= 0 && p-c1 <= window && load32(src, c1) == u {
		length, dist = 4+matchLen(src, c1+4, p+4, max-4), p-c1
	}
	if c2 >= 0 && p-c2 <= window && load32(src, c2) == u {
		if l := 4 + matchLen(src, c2+4, p+4, max-4); l > length {
			length, dist = l, p-c2
		}
	}
	return length, dist
}

func (e *Encoder) emit(t token) {
	e.tokens = append(e.tokens, t)
	if len(e.tokens) == blockSize {
		e.flushBlock(false)
	}
}

func (e *Encoder) flushBlock(final bool) {
	if len(e.tokens) == 0 && !final {
		return
	}
	e.blocks.writeBlock(e.tokens, final)
	e.tokens = e.tokens[:0]
}
