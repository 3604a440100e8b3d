// Package saferio reads untrusted input without trusting what it claims:
// a buffer grows with the bytes really read, never with a length or count
// the input states, so a damaged file costs memory in proportion to its
// size. Like Go's internal/saferio, for the decoders of the columnar
// inputs (Parquet pages, Arrow IPC buffers).
package saferio

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// MaxRowsPerByte bounds the rows (or values) a columnar file may claim per
// byte of file. Run-length encodings let a few bytes stand for millions of
// rows; a URL list holds distinct URLs, which cost bytes. A file claiming
// more is refused rather than read for hours.
const MaxRowsPerByte = 1024

// ReadUpTo appends what r yields to dst, failing when it is more than size
// bytes; dst grows with what is read, not with what the input claims,
// doubling up to size, never past it. It never asks r for more than size
// bytes and then one, so what it returns does not depend on dst's
// capacity.
func ReadUpTo(dst []byte, r io.Reader, size int) ([]byte, error) {
	if size < 0 {
		return dst, fmt.Errorf("a page of %d bytes", size)
	}
	for {
		if len(dst) > size {
			return dst, fmt.Errorf("more than the %d bytes the page says", size)
		}
		if len(dst) == size {
			return dst, expectEOF(r, size)
		}
		if len(dst) == cap(dst) {
			grown := make([]byte, len(dst), min(size, max(2*cap(dst), 64<<10)))
			dst = grown[:copy(grown, dst)]
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), size)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// expectEOF returns nil when r has nothing more to give, and an error when
// it yields another byte beyond the size bytes already read.
func expectEOF(r io.Reader, size int) error {
	var b [1]byte
	for range 100 {
		n, err := r.Read(b[:])
		switch {
		case n > 0:
			return fmt.Errorf("more than the %d bytes the page says", size)
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}

// zstdMaxWindow bounds the history a zstd frame may ask for, which the
// decoder allocates before it reads any data: a few bytes of header could
// otherwise claim hundreds of MiB. zstd levels up to 20 use at most 32 MiB;
// frames of levels 21 and 22 over large inputs are refused.
const zstdMaxWindow = 32 << 20

// NewZstd returns a zstd decoder for pages or buffers of at most maxOut
// bytes, with its window bounded: see ResetZstd.
func NewZstd(maxOut uint64) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxOut),
		zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
}

// ResetZstd points d at the zstd data src, which must decode to size bytes:
// a first frame that says it holds more is refused before d allocates for it.
func ResetZstd(d *zstd.Decoder, src []byte, size int) error {
	var h zstd.Header
	if err := h.Decode(src); err == nil && h.HasFCS && h.FrameContentSize > uint64(size) {
		return fmt.Errorf("zstd frame of %d bytes, more than the %d claimed", h.FrameContentSize, size)
	}
	return d.Reset(bytes.NewReader(src))
}
