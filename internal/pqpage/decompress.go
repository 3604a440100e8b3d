package pqpage

import (
	"bytes"
	"fmt"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// growTo returns b resized to n bytes, its contents not kept. It grows by
// a quarter at least, so pages a little larger each time do not each cost
// a new buffer.
func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, max(n, cap(b)+cap(b)/4))
	}
	return b[:n]
}

// decompress returns src uncompressed, of size bytes, in dst's memory
// (grown if need be).
func (p *Reader) decompress(dst, src []byte, size int) ([]byte, error) {
	var err error
	buf := dst
	dst = dst[:0]
	switch p.codec {
	case format.Uncompressed:
		if len(src) != size {
			return nil, fmt.Errorf("page of %d bytes says %d uncompressed", len(src), size)
		}
		return append(dst, src...), nil
	case format.Snappy:
		n, derr := snappy.DecodedLen(src)
		if derr != nil || n != size {
			return nil, fmt.Errorf("snappy: %d bytes, want %d: %v", n, size, derr)
		}
		dst = growTo(buf, n)
		dst, err = snappy.Decode(dst, src)
	case format.Lz4Raw:
		// An LZ4 block expands at most 255 times.
		if int64(size) > 255*int64(len(src))+64 {
			return nil, fmt.Errorf("lz4: %d bytes cannot hold %d", len(src), size)
		}
		dst = growTo(buf, size)
		var n int
		n, err = lz4.UncompressBlock(src, dst)
		dst = dst[:n]
	case format.Gzip:
		// DEFLATE expands at most 1032 times: a page that says more lies,
		// and one that says less may have its memory at once (it is
		// charged to the Budget already), rather than grown to it.
		if int64(size) > 1032*int64(len(src))+64 {
			return nil, fmt.Errorf("gzip: %d bytes cannot hold %d", len(src), size)
		}
		if cap(dst) < size {
			dst = make([]byte, 0, size)
		}
		if p.gz == nil {
			p.gz, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = p.gz.Reset(bytes.NewReader(src))
		}
		if err == nil {
			dst, err = saferio.ReadUpTo(dst, p.gz, size)
		}
	case format.Brotli:
		if p.br2 == nil {
			p.br2 = brotli.NewReader(bytes.NewReader(src))
		} else {
			err = p.br2.Reset(bytes.NewReader(src))
		}
		if err == nil {
			dst, err = saferio.ReadUpTo(dst, p.br2, size)
		}
	case format.Zstd:
		if p.zs == nil {
			if p.zs, err = saferio.NewZstd(maxPageSize); err != nil {
				return nil, err
			}
		}
		if err = saferio.ResetZstd(p.zs, src, size); err == nil {
			dst, err = saferio.ReadUpTo(dst, p.zs, size)
		}
	default:
		return nil, fmt.Errorf("compression %s not supported", p.codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.codec, err)
	}
	if len(dst) != size {
		return nil, fmt.Errorf("%s: %d bytes uncompressed, the page says %d", p.codec, len(dst), size)
	}
	return dst, nil
}
