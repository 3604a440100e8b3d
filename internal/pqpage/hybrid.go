package pqpage

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// hybrid decodes Parquet's RLE / bit-packed hybrid encoding of values of
// width bits, a block at a time. Each call consumes input or fails, so it
// ends; how many values it yields is bounded by what the caller asks for,
// never by what a run header claims.
type hybrid struct {
	src    []byte
	width  int
	run    int    // values left in the current RLE run
	val    uint32 // its value
	packed int    // values left in the current bit-packed run
	bitPos int    // bit offset of the next packed value in src
}

func (h *hybrid) reset(src []byte, width int) {
	*h = hybrid{src: src, width: width}
}

// Read fills dst with the next len(dst) values.
func (h *hybrid) Read(dst []uint32) error {
	for i := 0; i < len(dst); {
		switch {
		case h.run > 0:
			k := min(h.run, len(dst)-i)
			v := h.val
			for j := range dst[i : i+k] {
				dst[i+j] = v
			}
			h.run -= k
			i += k
		case h.packed > 0:
			k := min(h.packed, len(dst)-i)
			w := uint(h.width)
			mask := uint64(1)<<w - 1
			for j := range k {
				byteAt := h.bitPos >> 3
				var word uint64
				if byteAt+8 <= len(h.src) {
					word = binary.LittleEndian.Uint64(h.src[byteAt:])
				} else {
					for b := len(h.src) - 1; b >= byteAt; b-- {
						word = word<<8 | uint64(h.src[b])
					}
				}
				dst[i+j] = uint32(word >> (uint(h.bitPos) & 7) & mask)
				h.bitPos += h.width
			}
			h.packed -= k
			i += k
			if h.packed == 0 {
				h.src = h.src[(h.bitPos+7)>>3:]
				h.bitPos = 0
			}
		default:
			u, n := binary.Uvarint(h.src)
			if n <= 0 {
				return errors.New("levels or indexes end before the page's values")
			}
			h.src = h.src[n:]
			count := u >> 1
			if u&1 == 1 {
				// count groups of 8 values of width bits: count*width bytes.
				hi, lo := bits.Mul64(count, uint64(h.width))
				if hi != 0 || lo > uint64(len(h.src)) {
					// A last group may be cut short; take what is there.
					lo = uint64(len(h.src))
				}
				if h.width == 0 {
					h.run, h.val = int(min(count*8, 1<<31)), 0
					continue
				}
				h.packed = int(lo * 8 / uint64(h.width))
				if h.packed == 0 {
					return errors.New("empty bit-packed run")
				}
				h.bitPos = 0
			} else {
				nb := (h.width + 7) / 8
				if len(h.src) < nb || count == 0 {
					return errors.New("bad run-length run")
				}
				var v uint32
				for b := nb - 1; b >= 0; b-- {
					v = v<<8 | uint32(h.src[b])
				}
				h.src = h.src[nb:]
				h.run, h.val = int(min(count, 1<<31)), v
			}
		}
	}
	return nil
}
