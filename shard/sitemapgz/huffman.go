package sitemapgz

import (
	"math/bits"
	"slices"
)

// The alphabets of RFC 1951, section 3.2.5.
const (
	endBlock    = 256
	numLitLen   = 286 // 0-255 literals, 256 end of block, 257-285 lengths
	numDist     = 30
	numCodeLen  = 19
	maxCodeBits = 15 // literal/length and distance codes
	maxCLBits   = 7  // the code-length code
)

// codeLenOrder is the order in which a dynamic block header lists the
// lengths of the code-length code.
var codeLenOrder = [numCodeLen]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// lengthSym returns the literal/length symbol of a match length l-3 (0..255)
// with the number and value of its extra bits.
func lengthSym(l uint32) (sym, nExtra, extra uint32) {
	if l < 8 {
		return 257 + l, 0, 0
	}
	if l == 255 { // length 258 has a code of its own
		return 285, 0, 0
	}
	nb := uint32(bits.Len32(l)) - 1 // 3..7
	return 257 + 4*(nb-1) + (l>>(nb-2))&3, nb - 2, l & (1<<(nb-2) - 1)
}

// distSym returns the distance symbol of d = distance-1 (0..32767) with the
// number and value of its extra bits.
func distSym(d uint32) (sym, nExtra, extra uint32) {
	if d < 4 {
		return d, 0, 0
	}
	nb := uint32(bits.Len32(d)) - 1 // 2..14
	return 2*nb + (d>>(nb-1))&1, nb - 1, d & (1<<(nb-1) - 1)
}

// lengthSyms and distSyms cache lengthSym for every length and distSym for
// the short distances: the block writer looks each match up twice.
var (
	lengthSyms [256]symbol
	distSyms   [1024]symbol
)

// symbol is a deflate symbol with its extra bits.
type symbol struct {
	sym    uint16
	nExtra uint8
	extra  uint16
}

func init() {
	for l := range lengthSyms {
		s, n, e := lengthSym(uint32(l))
		lengthSyms[l] = symbol{uint16(s), uint8(n), uint16(e)}
	}
	for d := range distSyms {
		s, n, e := distSym(uint32(d))
		distSyms[d] = symbol{uint16(s), uint8(n), uint16(e)}
	}
}

func distSymbol(d uint32) symbol {
	if d < uint32(len(distSyms)) {
		return distSyms[d]
	}
	s, n, e := distSym(d)
	return symbol{uint16(s), uint8(n), uint16(e)}
}

// huffman builds length-limited canonical Huffman codes. Its slices are
// reused from block to block.
type huffman struct {
	nodes []node
	leafs []node
	depth []uint8
}

type node struct {
	freq   uint32
	sym    int32 // a leaf's symbol; -1 for an internal node
	left   int32 // internal node: children indexes in nodes
	right  int32
	parent int32
}

// lengths sets lens[i] to the code length of symbol i for frequencies freq,
// no code longer than maxBits. Every symbol with a frequency gets a code;
// at least two symbols get one, so the code is complete, which every
// inflater accepts (a lone code of length 1 is a special case some reject).
func (h *huffman) lengths(freq []uint32, lens []uint8, maxBits int) {
	clear(lens)
	scale := uint32(0)
	for {
		h.leafs = h.leafs[:0]
		for s, n := range freq {
			if n > 0 {
				// Halving the frequencies flattens the tree when it is too
				// deep; +1 keeps every used symbol.
				h.leafs = append(h.leafs, node{freq: n>>scale + 1, sym: int32(s)})
			}
		}
		for s := 0; len(h.leafs) < 2; s++ {
			if freq[s] == 0 {
				h.leafs = append(h.leafs, node{freq: 1, sym: int32(s)})
			}
		}
		slices.SortFunc(h.leafs, func(a, b node) int {
			if a.freq != b.freq {
				if a.freq < b.freq {
					return -1
				}
				return 1
			}
			return int(a.sym - b.sym)
		})
		if h.build(lens, maxBits) {
			return
		}
		scale++
	}
}

// build makes the Huffman tree of h.leafs (sorted by frequency) with the
// two-queue method and writes the leaves' depths to lens. It reports false,
// leaving lens unspecified, when a depth exceeds maxBits.
func (h *huffman) build(lens []uint8, maxBits int) bool {
	n := len(h.leafs)
	h.nodes = append(h.nodes[:0], h.leafs...)
	for i := range h.nodes {
		h.nodes[i].left, h.nodes[i].right, h.nodes[i].parent = -1, -1, -1
	}
	// Leaves are taken from h.nodes[li:n], internal nodes from h.nodes[qi:].
	li, qi := 0, n
	pick := func() int32 {
		if li < n && (qi >= len(h.nodes) || h.nodes[li].freq <= h.nodes[qi].freq) {
			li++
			return int32(li - 1)
		}
		qi++
		return int32(qi - 1)
	}
	for k := 0; k < n-1; k++ {
		a := pick()
		b := pick()
		h.nodes = append(h.nodes, node{freq: h.nodes[a].freq + h.nodes[b].freq, sym: -1, left: a, right: b, parent: -1})
		h.nodes[a].parent = int32(len(h.nodes) - 1)
		h.nodes[b].parent = int32(len(h.nodes) - 1)
	}
	// Depths: parents come after their children, so walk from the root down.
	depth := slices.Grow(h.depth[:0], len(h.nodes))[:len(h.nodes)]
	h.depth = depth
	depth[len(depth)-1] = 0
	for i := len(h.nodes) - 2; i >= 0; i-- {
		depth[i] = depth[h.nodes[i].parent] + 1
		if int(depth[i]) > maxBits {
			return false
		}
	}
	for i := 0; i < n; i++ {
		lens[h.nodes[i].sym] = depth[i]
	}
	return true
}

// canonical sets codes[i] to the canonical code of length lens[i], bit
// reversed, as deflate writes codes from their most significant bit into a
// stream filled from the least significant one.
func canonical(lens []uint8, codes []uint16) {
	var count [maxCodeBits + 1]uint16
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [maxCodeBits + 1]uint16
	code := uint16(0)
	for b := 1; b <= maxCodeBits; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	for i, l := range lens {
		if l == 0 {
			codes[i] = 0
			continue
		}
		codes[i] = bits.Reverse16(next[l]) >> (16 - l)
		next[l]++
	}
}
