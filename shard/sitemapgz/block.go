package sitemapgz

// A token is a literal byte (below 1<<31) or a match: 1<<31 | (length-3)<<15
// | (distance-1).
type token uint32

const matchFlag = 1 << 31

func literal(c byte) token { return token(c) }

func match(length, dist int) token {
	return matchFlag | token(length-3)<<15 | token(dist-1)
}

// bitWriter appends a deflate bit stream to a byte slice, least
// significant bit first.
type bitWriter struct {
	out   []byte
	bits  uint64
	nbits uint
}

// write appends the n (at most 32) low bits of b.
func (w *bitWriter) write(b uint64, n uint) {
	w.bits |= b << w.nbits
	w.nbits += n
	if w.nbits >= 32 {
		w.out = append(w.out, byte(w.bits), byte(w.bits>>8), byte(w.bits>>16), byte(w.bits>>24))
		w.bits >>= 32
		w.nbits -= 32
	}
}

// flush writes the last partial byte, padded with zero bits.
func (w *bitWriter) flush() {
	for w.nbits > 0 {
		w.out = append(w.out, byte(w.bits))
		w.bits >>= 8
		if w.nbits < 8 {
			w.nbits = 0
		} else {
			w.nbits -= 8
		}
	}
	w.bits = 0
}

// blockWriter codes tokens as dynamic-Huffman deflate blocks.
type blockWriter struct {
	bw bitWriter
	h  huffman

	litFreq  [numLitLen]uint32
	distFreq [numDist]uint32
	litLens  [numLitLen]uint8
	distLens [numDist]uint8
	litCodes [numLitLen]uint16
	distCode [numDist]uint16

	all    [numLitLen + numDist]uint8 // both code lengths, back to back
	clFreq [numCodeLen]uint32
	clLens [numCodeLen]uint8
	clCode [numCodeLen]uint16
	rle    []uint16 // code-length symbols: sym | extra<<8
}

// writeBlock writes tokens as one dynamic-Huffman block, the stream's last
// when final.
func (b *blockWriter) writeBlock(tokens []token, final bool) {
	clear(b.litFreq[:])
	clear(b.distFreq[:])
	for _, t := range tokens {
		if t < matchFlag {
			b.litFreq[t]++
			continue
		}
		b.litFreq[lengthSyms[(t>>15)&0xff].sym]++
		b.distFreq[distSymbol(uint32(t)&0x7fff).sym]++
	}
	b.litFreq[endBlock] = 1
	b.h.lengths(b.litFreq[:], b.litLens[:], maxCodeBits)
	b.h.lengths(b.distFreq[:], b.distLens[:], maxCodeBits)
	canonical(b.litLens[:], b.litCodes[:])
	canonical(b.distLens[:], b.distCode[:])

	nLit := numLitLen
	for nLit > 257 && b.litLens[nLit-1] == 0 {
		nLit--
	}
	nDist := numDist
	for nDist > 1 && b.distLens[nDist-1] == 0 {
		nDist--
	}
	b.header(nLit, nDist, final)

	w := &b.bw
	for _, t := range tokens {
		if t < matchFlag {
			w.write(uint64(b.litCodes[t]), uint(b.litLens[t]))
			continue
		}
		ls := lengthSyms[(t>>15)&0xff]
		ds := distSymbol(uint32(t) & 0x7fff)
		// At most 15+5+15+13 = 48 bits: two writes.
		w.write(uint64(b.litCodes[ls.sym])|uint64(ls.extra)<<b.litLens[ls.sym], uint(b.litLens[ls.sym])+uint(ls.nExtra))
		w.write(uint64(b.distCode[ds.sym])|uint64(ds.extra)<<b.distLens[ds.sym], uint(b.distLens[ds.sym])+uint(ds.nExtra))
	}
	w.write(uint64(b.litCodes[endBlock]), uint(b.litLens[endBlock]))
}

// header writes a dynamic block's header: BFINAL, BTYPE 10, the counts and
// the run-length coded code lengths (RFC 1951, 3.2.7).
func (b *blockWriter) header(nLit, nDist int, final bool) {
	all := b.all[:0]
	all = append(all, b.litLens[:nLit]...)
	all = append(all, b.distLens[:nDist]...)

	b.rle = b.rle[:0]
	for i := 0; i < len(all); {
		l := all[i]
		run := 1
		for i+run < len(all) && all[i+run] == l {
			run++
		}
		i += run
		if l == 0 {
			for run >= 11 {
				n := min(run, 138)
				b.rle = append(b.rle, 18|uint16(n-11)<<8)
				run -= n
			}
			if run >= 3 {
				b.rle = append(b.rle, 17|uint16(run-3)<<8)
				run = 0
			}
		} else {
			b.rle = append(b.rle, uint16(l))
			run--
			for run >= 3 {
				n := min(run, 6)
				b.rle = append(b.rle, 16|uint16(n-3)<<8)
				run -= n
			}
		}
		for ; run > 0; run-- {
			b.rle = append(b.rle, uint16(l))
		}
	}

	clear(b.clFreq[:])
	for _, r := range b.rle {
		b.clFreq[r&0xff]++
	}
	b.h.lengths(b.clFreq[:], b.clLens[:], maxCLBits)
	canonical(b.clLens[:], b.clCode[:])
	nCL := numCodeLen
	for nCL > 4 && b.clLens[codeLenOrder[nCL-1]] == 0 {
		nCL--
	}

	w := &b.bw
	fin := uint64(0)
	if final {
		fin = 1
	}
	w.write(fin|2<<1, 3)
	w.write(uint64(nLit-257)|uint64(nDist-1)<<5|uint64(nCL-4)<<10, 14)
	for _, s := range codeLenOrder[:nCL] {
		w.write(uint64(b.clLens[s]), 3)
	}
	for _, r := range b.rle {
		s := r & 0xff
		w.write(uint64(b.clCode[s]), uint(b.clLens[s]))
		switch s {
		case 16:
			w.write(uint64(r>>8), 2)
		case 17:
			w.write(uint64(r>>8), 3)
		case 18:
			w.write(uint64(r>>8), 7)
		}
	}
}
