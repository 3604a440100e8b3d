package pqpage

import (
	"encoding/binary"
	"errors"
)

// delta decodes DELTA_BINARY_PACKED values one at a time. Like hybrid, it
// yields no more values than the stream's header says and the caller asks
// for, and each step reads input or fails.
type delta struct {
	src       []byte
	total     int   // values left
	prev      int64 // the last value
	first     bool  // the first value is not yet given
	perMini   int   // values per miniblock
	minis     int   // miniblocks per block
	minDelta  int64
	widths    []byte // bit widths of the block's miniblocks
	mini      int    // current miniblock of the block
	left      int    // values left in it
	width     int
	bitPos    int
	blockSize int
}

// errDelta reports a malformed DELTA_BINARY_PACKED stream.
var errDelta = errors.New("bad DELTA_BINARY_PACKED values")

// reset starts on src; it reports the values in the stream.
func (d *delta) reset(src []byte) (int, error) {
	*d = delta{src: src}
	blockSize, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	minis, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	total, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	first, n := binary.Varint(d.src)
	if n <= 0 {
		return 0, errDelta
	}
	d.src = d.src[n:]
	if blockSize == 0 || blockSize%128 != 0 || blockSize > 1<<20 || minis == 0 || blockSize%minis != 0 || (blockSize/minis)%32 != 0 || total > 1<<31 {
		return 0, errDelta
	}
	d.blockSize, d.minis, d.perMini, d.total = int(blockSize), int(minis), int(blockSize/minis), int(total)
	d.prev, d.first = first, true
	d.mini = d.minis
	return d.total, nil
}

func (d *delta) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.src)
	if n <= 0 {
		return 0, errDelta
	}
	d.src = d.src[n:]
	return v, nil
}

// Next returns the Next value.
func (d *delta) Next() (int64, error) {
	if d.total == 0 {
		return 0, errors.New("page has fewer values than rows")
	}
	d.total--
	if d.first {
		d.first = false
		return d.prev, nil
	}
	if d.left == 0 {
		if err := d.nextMini(); err != nil {
			return 0, err
		}
	}
	var v uint64
	if d.width > 0 {
		at := d.bitPos >> 3
		var word uint64
		if at+8 <= len(d.src) {
			word = binary.LittleEndian.Uint64(d.src[at:])
		} else {
			for b := len(d.src) - 1; b >= at; b-- {
				word = word<<8 | uint64(d.src[b])
			}
		}
		sh := uint(d.bitPos) & 7
		v = word >> sh
		if d.width+int(sh) > 64 {
			v |= uint64(d.src[at+8]) << (64 - sh)
		}
		if d.width < 64 {
			v &= 1<<uint(d.width) - 1
		}
		d.bitPos += d.width
	}
	d.left--
	if d.left == 0 {
		d.src = d.src[d.width*d.perMini/8:]
		d.bitPos = 0
	}
	d.prev += d.minDelta + int64(v)
	return d.prev, nil
}

// nextMini moves to the next miniblock, reading a block header when needed.
func (d *delta) nextMini() error {
	if d.mini == d.minis {
		md, n := binary.Varint(d.src)
		if n <= 0 || len(d.src)-n < d.minis {
			return errDelta
		}
		d.minDelta = md
		d.widths = d.src[n : n+d.minis]
		d.src = d.src[n+d.minis:]
		d.mini = 0
	}
	d.width = int(d.widths[d.mini])
	d.mini++
	if d.width > 64 || d.width*d.perMini/8 > len(d.src) {
		return errDelta
	}
	d.left, d.bitPos = d.perMini, 0
	return nil
}

// skipDelta returns what follows the DELTA_BINARY_PACKED stream at the
// start of src, reading its headers only.
func skipDelta(src []byte) ([]byte, error) {
	var d delta
	total, err := d.reset(src)
	if err != nil {
		return nil, err
	}
	left := total - 1 // after the first value
	for left > 0 {
		md, n := binary.Varint(d.src)
		_ = md
		if n <= 0 || len(d.src)-n < d.minis {
			return nil, errDelta
		}
		widths := d.src[n : n+d.minis]
		d.src = d.src[n+d.minis:]
		for _, w := range widths {
			if left <= 0 {
				break
			}
			size := int(w) * d.perMini / 8
			if w > 64 || size > len(d.src) {
				return nil, errDelta
			}
			d.src = d.src[size:]
			left -= d.perMini
		}
	}
	return d.src, nil
}
