// Package sitemapgz is an experiment: a gzip encoder for sitemap files that
// uses their shape instead of rediscovering it at every byte.
//
// A sitemap is a header, one <url> entry per line and a footer. Each entry
// repeats the previous one's skeleton, so the encoder tries, at the start of
// every line and at the end of every loc, the distance back to the same
// point of the previous entry before it looks anywhere else, and runs its
// hash-table match finder only over the bytes those references leave. The
// tokens are coded as dynamic-Huffman deflate blocks in one gzip member
// (RFC 1951 in RFC 1952) that every inflater reads. Nothing depends on the
// input being a sitemap: any bytes give correct gzip, only smaller or larger.
//
// It is measured against klauspost gzip level 6 in docs/performance.md and
// is not used by the pipeline.
package sitemapgz

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

const (
	minMatch  = 4 // the hash table's matches; known distances take 3
	maxMatch  = 258
	window    = 1 << 15
	hashBits  = 16
	blockSize = 1 << 16 // tokens per deflate block
)

// Encoder writes gzip members. It reuses its tables and buffers from one
// call to the next, so an Encoder is not safe for concurrent use.
type Encoder struct {
	table  [1 << hashBits]int32 // position+1 of the last 4 bytes with this hash
	tokens []token
	blocks blockWriter
}

// NewEncoder returns an Encoder.
func NewEncoder() *Encoder {
	return &Encoder{tokens: make([]token, 0, blockSize)}
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

// deflate writes src as deflate blocks.
func (e *Encoder) deflate(src []byte) {
	clear(e.table[:])
	e.tokens = e.tokens[:0]
	n := len(src)
	p := 0
	// The known points of the previous line: its start and its loc's end.
	prevLine, prevLocEnd := -1, -1
	for p < n {
		// One line (one entry) at a time: [start, end).
		start := p
		end := n
		if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
			end = p + i + 1
		}
		locEnd := -1
		if bytes.HasPrefix(src[start:end], urlLoc) {
			if i := bytes.IndexByte(src[start+len(urlLoc):end], '<'); i >= 0 {
				locEnd = start + len(urlLoc) + i
			}
		}
		if prevLine >= 0 {
			p = e.known(src, p, p-prevLine)
		}
		if locEnd >= 0 {
			if p < locEnd {
				p = e.search(src, p, locEnd, 0)
			}
			if p == locEnd && prevLocEnd >= 0 {
				p = e.known(src, p, p-prevLocEnd)
			}
			prevLocEnd = locEnd
		}
		if p < end {
			p = e.search(src, p, end, 0)
		}
		prevLine = start
		// A match may have run past this line: the next starts after it.
		for p > end && end < n {
			start = end
			if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = n
			}
			prevLine = start
		}
		if p < end {
			p = e.search(src, p, end, 0)
		}
	}
	e.flushBlock(true)
}

var urlLoc = []byte("<url><loc>")

// known codes a match at distance d from p if there is one of at least 3
// bytes, and returns the position after it.
func (e *Encoder) known(src []byte, p, d int) int {
	if d <= 0 || d > window {
		return p
	}
	for p < len(src) {
		l := matchLen(src, p-d, p, min(maxMatch, len(src)-p))
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

// search codes src[p:end] with the hash-table match finder; a match may run
// past end. It returns the position after the last token.
func (e *Encoder) search(src []byte, p, end, _ int) int {
	lim := len(src) - 4 // load32 needs 4 bytes
	for p < end {
		if p > lim {
			e.emit(literal(src[p]))
			p++
			continue
		}
		u := load32(src, p)
		h := hash4(u)
		cand := int(e.table[h]) - 1
		e.table[h] = int32(p + 1)
		if cand >= 0 && p-cand <= window && load32(src, cand) == u {
			l := 4 + matchLen(src, cand+4, p+4, min(maxMatch, len(src)-p)-4)
			e.emit(match(l, p-cand))
			// Index the match's last position, so the next search can
			// find what follows it.
			if q := p + l - 1; q <= lim {
				e.table[hash4(load32(src, q))] = int32(q + 1)
			}
			p += l
			continue
		}
		e.emit(literal(src[p]))
		p++
	}
	return p
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
