// Package pqpage decodes Parquet's bytes below the schema: the pages of a
// column chunk (page headers, levels, dictionary indexes, PLAIN, RLE and
// DELTA values, every codec) and the Thrift compact protocol of page
// headers and the footer, trusting nothing a file claims before checking it
// against the bytes that are really there.
//
// parquet-go allocates what a page header or a run-length header says (an
// RLE run of 2^31 levels costs it 2 GiB, a few bytes of input each), which
// made a fuzzed 6 KiB file take gigabytes and minutes. Here every page must
// lie inside its column chunk, every count is bounded by the rows of the row
// group, decompressed pages grow with the output really produced, levels and
// dictionary indexes are decoded a block at a time into small buffers, and
// every loop consumes input or delivers a row. It also reads faster: the
// dictionary of a chunk is decoded once, and values go from the page
// straight into the caller's buffer.
package pqpage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// maxPageSize bounds a page's uncompressed size (a whole row group's
// dictionary fits: 1M URLs of 200 bytes).
const maxPageSize = 256 << 20

// maxPageHeader bounds a page header (statistics included).
const maxPageHeader = 1 << 20

// LevelBlock is how many levels or indexes are decoded at a time.
const LevelBlock = 1024

// Parquet encodings and page types (format's numbers).
const (
	Plain                = 0
	encPlainDict         = 2
	encRLE               = 3
	encBitPacked         = 4
	encDeltaBP           = 5
	DeltaLengthByteArray = 6
	encDeltaBA           = 7
	encRLEDict           = 8

	pageData   = 0
	pageIndex  = 1
	pageDict   = 2
	pageDataV2 = 3
)

// pageHeader is what is read of a Parquet PageHeader.
type pageHeader struct {
	typ              int32
	uncompressed     int32
	compressed       int32
	numValues        int32
	encoding         int32
	defEncoding      int32
	repEncoding      int32
	defLen, repLen   int32 // V2
	compressedV2     bool  // V2: is_compressed (default true)
	hasData, hasDict bool
}

func readPageHeader(b []byte) (h pageHeader, n int, err error) {
	r := thriftReader{b: b}
	h.compressedV2 = true
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil {
			return h, 0, err
		}
		if t == tStop {
			return h, r.p, nil
		}
		switch {
		case id == 1 && t == tI32:
			h.typ, err = r.i32()
		case id == 2 && t == tI32:
			h.uncompressed, err = r.i32()
		case id == 3 && t == tI32:
			h.compressed, err = r.i32()
		case (id == 5 || id == 7 || id == 8) && t == tStruct:
			err = h.readSub(&r, id)
		default:
			err = r.skip(t, 1)
		}
		if err != nil {
			return h, 0, err
		}
	}
}

// readSub reads a DataPageHeader (5), DictionaryPageHeader (7) or
// DataPageHeaderV2 (8).
func (h *pageHeader) readSub(r *thriftReader, which int16) error {
	if which == 7 {
		h.hasDict = true
	} else {
		h.hasData = true
	}
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil {
			return err
		}
		if t == tStop {
			return nil
		}
		switch {
		case id == 1 && t == tI32:
			h.numValues, err = r.i32()
		case which == 5 && id == 2 && t == tI32, which == 7 && id == 2 && t == tI32, which == 8 && id == 4 && t == tI32:
			h.encoding, err = r.i32()
		case which == 5 && id == 3 && t == tI32:
			h.defEncoding, err = r.i32()
		case which == 5 && id == 4 && t == tI32:
			h.repEncoding, err = r.i32()
		case which == 8 && id == 5 && t == tI32:
			h.defLen, err = r.i32()
		case which == 8 && id == 6 && t == tI32:
			h.repLen, err = r.i32()
		case which == 8 && id == 7 && (t == tTrue || t == tFalse):
			h.compressedV2 = t == tTrue
		default:
			err = r.skip(t, 2)
		}
		if err != nil {
			return err
		}
	}
}

// Reader reads the pages of one column chunk. Set Type and Size, then
// Reset it on each chunk; Close releases its decoders and buffers.
//
// A goroutine reads and decompresses the pages of the chunk ahead of their
// decoding (which is about half of a column's decoding time), so that one
// Parquet file is decoded on two cores. It holds at most ahead+1 pages, and
// one alone when a page is over bigPage.
type Reader struct {
	Type format.Type // the column's physical type
	Size int         // value size in bytes; 0 for BYTE_ARRAY
	Sync bool        // read the pages on the caller's goroutine, none ahead

	// The reading goroutine's, from Reset until it ends (see fetch).
	ra      io.ReaderAt
	off     int64 // where the rest of the chunk starts in ra
	left    int64 // bytes of the chunk not read yet
	rows    int64 // rows of the row group (level entries of a list leaf) not yet in a page
	codec   format.CompressionCodec
	sawDict bool
	hdr     []byte
	raw     []byte // the compressed page
	gz      *gzip.Reader
	zs      *zstd.Decoder
	br2     *brotli.Reader

	pages [ahead + 1]page // one decoded, the others read ahead
	free  chan *page      // pages done with
	out   chan fetched    // pages read
	stop  chan struct{}
	done  chan struct{} // closed when the reading goroutine has ended
	cur   *page         // the page being decoded
	err   error         // the chunk's error, sticky

	// The dictionary of the chunk: value i is dict[doffs[i]:doffs[i+1]],
	// a BYTE_ARRAY's with its 4-byte length in front.
	dict    []byte
	doffs   []uint32
	hasDict bool

	prev []byte // the last DELTA_BYTE_ARRAY value

	pooled bool // the buffers came from bufferPool (or need not)
}

// ahead is how many pages are read ahead of the one decoded: enough that
// the reading goroutine runs in long stretches on its own core rather than
// handing over each page to a decoder waiting on the same one.
const ahead = 3

// bigPage is the uncompressed size over which a page is not read while the
// ones before it are decoded: a hostile file costs one such page at a time.
// A variable for the tests.
var bigPage = 16 << 20

// decoded reports whether a page of this type is decoded: index pages and
// unknown page types are skipped.
func (h *pageHeader) decoded() bool {
	return h.typ == pageDict || h.typ == pageData || h.typ == pageDataV2
}

// page is a page of the chunk, read and decompressed.
type page struct {
	h      pageHeader
	levels []byte // V2: the repetition, then the definition levels, as stored
	body   []byte // the values (V1: after the levels), decompressed
}

// fetched is a page read ahead, or the error or panic that ends the chunk.
type fetched struct {
	pg       *page
	err      error
	panicked any
}

// errStopped ends a read that Reset or Close called off.
var errStopped = errors.New("pqpage: stopped")

// buffers are what a Reader grows as it reads. A run opens a Reader per
// column of every part file; without reuse each one regrew them, and with
// parts decoded in parallel that garbage made the collector take the
// cores' time from decoding.
type buffers struct {
	hdr, raw, dict, prev []byte
	doffs                []uint32
	pages                [ahead + 1]page
}

var bufferPool sync.Pool // of *buffers

// Reset starts on the column chunk of size bytes at off in ra, holding rows
// rows: the goroutine reading its pages starts.
func (p *Reader) Reset(ra io.ReaderAt, off, size, rows int64, codec format.CompressionCodec) {
	p.halt()
	if !p.pooled {
		p.pooled = true
		if b, ok := bufferPool.Get().(*buffers); ok {
			p.hdr, p.raw, p.dict, p.prev, p.doffs, p.pages = b.hdr, b.raw, b.dict, b.prev, b.doffs, b.pages
		}
	}
	p.ra, p.off, p.left, p.rows, p.codec = ra, off, size, rows, codec
	p.hasDict, p.sawDict, p.err = false, false, nil
	if p.Sync {
		return
	}
	if p.free == nil {
		p.free, p.out = make(chan *page, len(p.pages)), make(chan fetched, len(p.pages))
	}
	for i := range p.pages {
		p.free <- &p.pages[i]
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.fetch()
}

// halt stops the reading goroutine, if there is one, and waits for it; the
// pages are then free for the next chunk.
func (p *Reader) halt() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.stop, p.cur, p.left = nil, nil, 0
	for len(p.free) > 0 {
		<-p.free
	}
	for len(p.out) > 0 {
		<-p.out
	}
}

// fetch reads the pages of the chunk ahead of Next, until the chunk ends,
// a page fails or halt.
func (p *Reader) fetch() {
	defer close(p.done)
	defer func() {
		// A decompressor that panics on a corrupt page must not take the
		// process down from here: Next panics with the value on the
		// caller's goroutine, where it would have been raised in Sync mode.
		if v := recover(); v != nil {
			select {
			case p.out <- fetched{panicked: v}:
			case <-p.stop:
			}
		}
	}()
	for p.left > 0 {
		var pg *page
		select {
		case pg = <-p.free:
		case <-p.stop:
			return
		}
		err := p.read(pg)
		if err == errStopped {
			return
		}
		if err == nil && !pg.h.decoded() {
			p.free <- pg // index pages and unknown page types are skipped
			continue
		}
		select {
		case p.out <- fetched{pg: pg, err: err}:
		case <-p.stop:
			return
		}
		if err != nil {
			return
		}
	}
	select {
	case p.out <- fetched{err: io.EOF}:
	case <-p.stop:
	}
}

// read reads the next page of the chunk into pg, decompressed. It checks
// what can be checked before the page is decoded, in the order Next did
// when it did both.
func (p *Reader) read(pg *page) error {
	// The header, and the start of the page, in one read; a header
	// with large statistics takes another.
	var h pageHeader
	var hn int
	for n := int(min(p.left, 8<<10)); ; n = int(min(p.left, int64(n)*16, maxPageHeader)) {
		p.hdr = growTo(p.hdr, n)
		if err := p.readAt(p.hdr, p.off); err != nil {
			return err
		}
		var err error
		h, hn, err = readPageHeader(p.hdr)
		if err == nil {
			break
		}
		if err != io.ErrUnexpectedEOF || int64(n) == p.left || n == maxPageHeader {
			return fmt.Errorf("page header: %w", err)
		}
	}
	p.off += int64(hn)
	p.left -= int64(hn)
	if h.compressed < 0 || int64(h.compressed) > p.left {
		return fmt.Errorf("page of %d bytes in the %d bytes left of the column chunk", h.compressed, p.left)
	}
	if h.uncompressed < 0 || h.uncompressed > maxPageSize {
		return fmt.Errorf("page of %d bytes uncompressed (the limit is %d)", h.uncompressed, maxPageSize)
	}
	if h.numValues < 0 {
		return fmt.Errorf("page of %d values", h.numValues)
	}
	p.raw = growTo(p.raw, int(h.compressed))
	got := copy(p.raw, p.hdr[hn:])
	if err := p.readAt(p.raw[got:], p.off+int64(got)); err != nil {
		return err
	}
	p.off += int64(h.compressed)
	p.left -= int64(h.compressed)
	pg.h = h
	switch h.typ {
	case pageDict:
		if !h.hasDict || p.sawDict {
			return errors.New("unexpected dictionary page")
		}
		p.sawDict = true
		if h.encoding != Plain && h.encoding != encPlainDict {
			return fmt.Errorf("dictionary page: dictionary encoding %s not supported", format.Encoding(h.encoding))
		}
		if p.Type == format.Boolean {
			return errors.New("dictionary page: dictionary of BOOLEAN values")
		}
		if err := p.big(pg); err != nil {
			return err
		}
		var err error
		if pg.body, err = p.decompress(pg.body, p.raw, int(h.uncompressed)); err != nil {
			return fmt.Errorf("dictionary page: %w", err)
		}
	case pageData, pageDataV2:
		if !h.hasData {
			return errors.New("data page without its header")
		}
		if int64(h.numValues) > p.rows {
			return fmt.Errorf("page of %d values where the column chunk has %d left", h.numValues, p.rows)
		}
		if err := p.big(pg); err != nil {
			return err
		}
		if err := p.readData(pg); err != nil {
			return fmt.Errorf("data page: %w", err)
		}
		p.rows -= int64(h.numValues)
	}
	return nil
}

// big waits, before a page over bigPage is decompressed, until the pages
// before it are decoded, and lets their buffers go.
func (p *Reader) big(pg *page) error {
	if int(pg.h.uncompressed) <= bigPage || p.stop == nil {
		return nil
	}
	var others [ahead]*page
	for i := range others {
		select {
		case others[i] = <-p.free:
			others[i].body, others[i].levels = nil, nil
		case <-p.stop:
			for _, o := range others[:i] {
				p.free <- o
			}
			return errStopped
		}
	}
	for _, o := range others {
		p.free <- o
	}
	return nil
}

// readData decompresses the data page in p.raw into pg.
func (p *Reader) readData(pg *page) error {
	h := &pg.h
	body := p.raw
	if h.typ != pageDataV2 {
		var err error
		pg.body, err = p.decompress(pg.body, body, int(h.uncompressed))
		return err
	}
	if h.defLen < 0 || h.repLen < 0 || int64(h.defLen)+int64(h.repLen) > int64(len(body)) {
		return fmt.Errorf("levels of %d+%d bytes in a page of %d", h.repLen, h.defLen, len(body))
	}
	size := int(h.uncompressed) - int(h.repLen+h.defLen)
	if size < 0 {
		return fmt.Errorf("levels of %d+%d bytes in a page of %d uncompressed", h.repLen, h.defLen, h.uncompressed)
	}
	pg.levels = append(pg.levels[:0], body[:h.repLen+h.defLen]...)
	body = body[h.repLen+h.defLen:]
	if !h.compressedV2 {
		if len(body) != size {
			return fmt.Errorf("page of %d bytes says %d", len(body), size)
		}
		pg.body = append(pg.body[:0], body...)
		return nil
	}
	var err error
	pg.body, err = p.decompress(pg.body, body, size)
	return err
}

// readAt reads len(b) bytes of the chunk at its offset at.
func (p *Reader) readAt(b []byte, at int64) error {
	n, err := p.ra.ReadAt(b, at)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// nextPage returns the next page read: from the reading goroutine, or read
// now when there is none (Sync, or not Reset).
func (p *Reader) nextPage() fetched {
	if p.stop != nil {
		return <-p.out
	}
	for p.left > 0 {
		pg := &p.pages[0]
		if err := p.read(pg); err != nil {
			return fetched{err: err}
		}
		if pg.h.decoded() {
			return fetched{pg: pg}
		}
	}
	return fetched{err: io.EOF}
}

// Page is one decoded data page, read a block at a time: the caller takes
// its rows through Levels, Reps, Idx and Reader.Value, or straight from Vals
// on the hot paths (PLAIN and DELTA_LENGTH_BYTE_ARRAY strings).
type Page struct {
	N, R   int // values (rows; level entries of a list leaf) in the page, taken
	Levels Hybrid
	Reps   Hybrid // repetition levels (list leaves)
	HasDef bool
	Dict   bool
	Idx    Hybrid
	Enc    int32  // encoding of the values
	Vals   []byte // plain values; the bytes of DELTA_(LENGTH_)BYTE_ARRAY
	VP     int    // next of vals
	Lens   Delta  // DELTA_LENGTH_BYTE_ARRAY lengths, DELTA_BYTE_ARRAY suffix lengths
	prefix Delta  // DELTA_BYTE_ARRAY prefix lengths
	ints   Delta  // DELTA_BINARY_PACKED values
	num    [8]byte
	bools  Hybrid // RLE-encoded BOOLEAN values
	bit    [1]uint32
}

// Next reads the next data page into pg, of a column of the given maximum
// definition and repetition levels; it reads the dictionary page first when
// there is one. io.EOF when the chunk has no more pages. What it returned
// before is not valid after: its page goes back to the reading goroutine.
func (p *Reader) Next(pg *Page, maxDef, maxRep byte) error {
	for {
		if p.err != nil {
			return p.err
		}
		if p.cur != nil && p.stop != nil {
			p.free <- p.cur
		}
		p.cur = nil
		f := p.nextPage()
		if f.panicked != nil {
			panic(f.panicked)
		}
		if f.err != nil {
			p.err = f.err
			return f.err
		}
		p.cur = f.pg
		switch f.pg.h.typ {
		case pageDict:
			if err := p.readDict(f.pg); err != nil {
				p.err = fmt.Errorf("dictionary page: %w", err)
				return p.err
			}
		default:
			if err := p.setPage(f.pg, pg, maxDef, maxRep); err != nil {
				p.err = fmt.Errorf("data page: %w", err)
				return p.err
			}
			if pg.N > 0 {
				return nil
			}
		}
	}
}

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

// readDict decodes the PLAIN dictionary page pg into p.dict and p.doffs.
// The page's encoding was checked when it was read.
func (p *Reader) readDict(pg *page) error {
	n := int(pg.h.numValues)
	size := max(p.Size, 4)
	if n > len(pg.body)/size {
		return fmt.Errorf("%d values in %d bytes", n, len(pg.body))
	}
	// The page's memory becomes the dictionary's, which gives its own
	// back to the page: no copy.
	p.dict, pg.body = pg.body, p.dict[:0]
	p.doffs = p.doffs[:0]
	at := 0
	for range n {
		p.doffs = append(p.doffs, uint32(at))
		l := p.Size
		if l == 0 {
			if len(p.dict)-at < 4 {
				return io.ErrUnexpectedEOF
			}
			l = 4 + int(binary.LittleEndian.Uint32(p.dict[at:]))
		}
		if l < 0 || l > len(p.dict)-at {
			return io.ErrUnexpectedEOF
		}
		at += l
	}
	p.doffs = append(p.doffs, uint32(at))
	p.hasDict = true
	return nil
}

// setPage sets pg up to decode the data page read into rd.
func (p *Reader) setPage(rd *page, pg *Page, maxDef, maxRep byte) error {
	h := &rd.h
	*pg = Page{N: int(h.numValues), HasDef: maxDef > 0}
	body := rd.body
	var levels, reps []byte
	if h.typ == pageDataV2 {
		reps = rd.levels[:h.repLen]
		levels = rd.levels[h.repLen : h.repLen+h.defLen]
	} else {
		// Repetition levels, then definition levels, each an RLE/bit-packed
		// hybrid after its 4-byte length.
		var err error
		if maxRep > 0 {
			if h.repEncoding != encRLE {
				return fmt.Errorf("repetition level encoding %s not supported", format.Encoding(h.repEncoding))
			}
			if reps, body, err = levelBytes(body, "repetition levels"); err != nil {
				return err
			}
		}
		if maxDef > 0 {
			if h.defEncoding != encRLE {
				return fmt.Errorf("definition level encoding %s not supported", format.Encoding(h.defEncoding))
			}
			if levels, body, err = levelBytes(body, "definition levels"); err != nil {
				return err
			}
		}
	}
	if maxDef > 0 {
		pg.Levels.reset(levels, bits.Len8(maxDef))
	}
	if maxRep > 0 {
		pg.Reps.reset(reps, bits.Len8(maxRep))
	}
	switch h.encoding {
	case Plain:
		pg.Vals = body
	case encRLE:
		// BOOLEAN values only: a 4-byte length, then the hybrid of width 1.
		if p.Type != format.Boolean {
			return fmt.Errorf("encoding %s for %s values", format.Encoding(h.encoding), p.typeName())
		}
		bools, _, err := levelBytes(body, "BOOLEAN values")
		if err != nil {
			return err
		}
		pg.bools.reset(bools, 1)
	case encPlainDict, encRLEDict:
		if !p.hasDict {
			return errors.New("dictionary-encoded page without a dictionary")
		}
		if len(body) < 1 || body[0] > 32 {
			return errors.New("bad dictionary index bit width")
		}
		pg.Dict = true
		pg.Idx.reset(body[1:], int(body[0]))
	case encDeltaBP:
		if p.Type != format.Int32 && p.Type != format.Int64 {
			return fmt.Errorf("encoding %s for %s values", format.Encoding(h.encoding), p.typeName())
		}
		if _, err := pg.ints.reset(body); err != nil {
			return err
		}
	case DeltaLengthByteArray, encDeltaBA:
		if p.Size > 0 {
			return fmt.Errorf("encoding %s for fixed-size values", format.Encoding(h.encoding))
		}
		rest := body
		if h.encoding == encDeltaBA {
			if _, err := pg.prefix.reset(rest); err != nil {
				return err
			}
			var err error
			if rest, err = skipDelta(rest); err != nil {
				return err
			}
		}
		if _, err := pg.Lens.reset(rest); err != nil {
			return err
		}
		var err error
		if pg.Vals, err = skipDelta(rest); err != nil {
			return err
		}
		p.prev = p.prev[:0]
	default:
		return fmt.Errorf("encoding %s not supported", format.Encoding(h.encoding))
	}
	pg.Enc = h.encoding
	return nil
}

// levelBytes splits the levels (or RLE values) at the start of a V1 page
// body off the rest: a 4-byte length, then that many bytes, which must be in
// the page.
func levelBytes(body []byte, what string) (levels, rest []byte, err error) {
	if len(body) < 4 {
		return nil, nil, io.ErrUnexpectedEOF
	}
	l := binary.LittleEndian.Uint32(body)
	if int64(l) > int64(len(body)-4) {
		return nil, nil, fmt.Errorf("%s of %d bytes in a page of %d", what, l, len(body))
	}
	return body[4 : 4+l], body[4+l:], nil
}

// typeName names the column's values in an error.
func (p *Reader) typeName() string {
	switch p.Type {
	case format.Boolean:
		return "BOOLEAN"
	case format.ByteArray, format.FixedLenByteArray:
		return "BYTE_ARRAY"
	case format.Float, format.Double:
		return "floating-point"
	}
	return p.Type.String()
}

// Close stops the reading goroutine and releases the decoders the reader
// holds, and its buffers for the next Reader to reuse: nothing it returned
// may be used after.
func (p *Reader) Close() {
	p.halt()
	if p.zs != nil {
		p.zs.Close()
		p.zs = nil
	}
	p.ra = nil
	if p.pooled {
		b := &buffers{hdr: small(p.hdr), raw: small(p.raw), dict: small(p.dict), prev: small(p.prev), doffs: p.doffs[:0], pages: p.pages}
		for i := range b.pages {
			b.pages[i].body, b.pages[i].levels = small(b.pages[i].body), small(b.pages[i].levels)
		}
		bufferPool.Put(b)
		p.hdr, p.raw, p.dict, p.prev, p.doffs = nil, nil, nil, nil, nil
		p.pages = [ahead + 1]page{}
		p.pooled, p.hasDict, p.left = false, false, 0
	}
}

// small returns b emptied for reuse, or nil when it is over bigPage: one
// big page must not keep its memory alive in the pool for the next file.
func small(b []byte) []byte {
	if cap(b) > bigPage {
		return nil
	}
	return b[:0]
}

// Value returns the next non-null value of pg, in its PLAIN form (a
// BYTE_ARRAY without its length).
func (p *Reader) Value(pg *Page) ([]byte, error) {
	if p.Type == format.Boolean {
		return p.boolValue(pg)
	}
	switch pg.Enc {
	case encDeltaBP:
		v, err := pg.ints.Next()
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(pg.num[:], uint64(v))
		return pg.num[:p.Size], nil
	case DeltaLengthByteArray:
		l, err := pg.Lens.Next()
		if err != nil {
			return nil, err
		}
		if l < 0 || l > int64(len(pg.Vals)-pg.VP) {
			return nil, errors.New("value longer than its page")
		}
		v := pg.Vals[pg.VP : pg.VP+int(l)]
		pg.VP += int(l)
		return v, nil
	case encDeltaBA:
		pre, err := pg.prefix.Next()
		if err != nil {
			return nil, err
		}
		l, err := pg.Lens.Next()
		if err != nil {
			return nil, err
		}
		if pre < 0 || pre > int64(len(p.prev)) || l < 0 || l > int64(len(pg.Vals)-pg.VP) {
			return nil, errors.New("bad DELTA_BYTE_ARRAY value")
		}
		p.prev = append(p.prev[:pre], pg.Vals[pg.VP:pg.VP+int(l)]...)
		pg.VP += int(l)
		return p.prev, nil
	}
	return p.plainValue(pg)
}

// boolValue returns the next BOOLEAN value of pg as one byte, 0 or 1:
// PLAIN values are bit-packed, RLE ones a hybrid of width 1.
func (p *Reader) boolValue(pg *Page) ([]byte, error) {
	if pg.Enc == encRLE {
		if err := pg.bools.Read(pg.bit[:]); err != nil {
			return nil, err
		}
		pg.num[0] = byte(pg.bit[0] & 1)
		return pg.num[:1], nil
	}
	at := pg.VP >> 3
	if at >= len(pg.Vals) {
		return nil, errors.New("page has fewer values than non-null rows")
	}
	pg.num[0] = pg.Vals[at] >> (pg.VP & 7) & 1
	pg.VP++
	return pg.num[:1], nil
}

// plainValue returns the next plain value of pg (a BYTE_ARRAY without its length).
func (p *Reader) plainValue(pg *Page) ([]byte, error) {
	v := pg.Vals[pg.VP:]
	if p.Size > 0 {
		if len(v) < p.Size {
			return nil, errors.New("page has fewer values than non-null rows")
		}
		pg.VP += p.Size
		return v[:p.Size], nil
	}
	if len(v) < 4 {
		return nil, errors.New("page has fewer values than non-null rows")
	}
	l := binary.LittleEndian.Uint32(v)
	if uint64(l) > uint64(len(v)-4) {
		return nil, errors.New("value longer than its page")
	}
	pg.VP += 4 + int(l)
	return v[4 : 4+l], nil
}

// DictValue returns dictionary value i.
func (p *Reader) DictValue(i uint32) ([]byte, error) {
	if int(i) >= len(p.doffs)-1 {
		return nil, fmt.Errorf("dictionary index %d out of range (%d values)", i, len(p.doffs)-1)
	}
	v := p.dict[p.doffs[i]:p.doffs[i+1]]
	if p.Size == 0 {
		v = v[4:]
	}
	return v, nil
}
