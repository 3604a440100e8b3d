package pqpage

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// Reader reads the pages of one column chunk. Set Type and Size, then
// Reset it on each chunk; Close releases its decoders and buffers.
//
// A goroutine reads and decompresses the pages of the chunk ahead of their
// decoding (which is about half of a column's decoding time), so that one
// Parquet file is decoded on two cores. It holds at most ahead+1 pages, and
// one alone when a page is over bigPage.
//
// With a Budget, every page is charged to it before it is decompressed,
// and the dictionary until the chunk ends: read ahead when the budget's
// pool for pages read ahead has room, else once the pages before it are
// decoded, as a page the file needs (see saferio.Budget): the pages in use
// of all the columns of a file, and their dictionaries, are bounded
// together, and those of all the files of a run.
type Reader struct {
	Type   format.Type   // the column's physical type
	Size   int           // value size in bytes; 0 for BYTE_ARRAY
	Sync   bool          // read the pages on the caller's goroutine, none ahead
	Budget *saferio.Part // what the file's pages may hold; nil: no bound

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
	want  chan struct{}   // a token while Next waits for a page (see needed)
	stop  chan struct{}
	done  chan struct{} // closed when the reading goroutine has ended
	cur   *page         // the page being decoded
	err   error         // the chunk's error, sticky

	// The dictionary of the chunk: value i is dict[doffs[i]:doffs[i+1]],
	// a BYTE_ARRAY's with its 4-byte length in front.
	dict     []byte
	doffs    []uint32
	hasDict  bool
	dictHeld int64 // what the dictionary holds of the Budget

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

// keepPage is the largest buffer a Reader keeps for its next page once the
// page it held is done with: a page larger than writers cut (about 1 MiB)
// does not keep its memory, which is no longer charged to the Budget. A
// variable for the tests.
var keepPage = 4 << 20

// page is a page of the chunk, read and decompressed.
type page struct {
	h      pageHeader
	levels []byte // V2: the repetition, then the definition levels, as stored
	body   []byte // the values (V1: after the levels), decompressed
	held   int64  // charged to the Budget as needed (Part.Hold)
	ahead  int64  // charged to the Budget as read ahead (Part.TryAhead)
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
	p.releaseDict()
	p.hasDict, p.sawDict, p.err = false, false, nil
	if p.Sync {
		return
	}
	if p.free == nil {
		p.free, p.out = make(chan *page, len(p.pages)), make(chan fetched, len(p.pages))
		p.want = make(chan struct{}, 1)
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
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop, p.left = nil, 0
		for len(p.free) > 0 {
			<-p.free
		}
		for len(p.out) > 0 {
			<-p.out
		}
		for len(p.want) > 0 {
			<-p.want
		}
	}
	p.cur = nil
	for i := range p.pages {
		p.release(&p.pages[i])
	}
}

// release gives back what pg holds of the Budget, and lets its memory go
// when it is over keepPage.
func (p *Reader) release(pg *page) {
	if pg.held > 0 {
		p.Budget.Release(pg.held)
	}
	if pg.ahead > 0 {
		p.Budget.ReleaseAhead(pg.ahead)
	}
	pg.held, pg.ahead = 0, 0
	if cap(pg.body) > keepPage {
		pg.body = nil
	}
	if cap(pg.levels) > keepPage {
		pg.levels = nil
	}
}

// releaseDict gives back what the dictionary holds of the Budget, and lets
// its memory go when it is over keepPage: a new chunk has its own.
func (p *Reader) releaseDict() {
	if p.dictHeld > 0 {
		p.Budget.Release(p.dictHeld)
		p.dictHeld = 0
	}
	if cap(p.dict) > keepPage {
		p.dict = nil
	}
	if 4*cap(p.doffs) > keepPage {
		p.doffs = nil
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
		if h.encoding != encPlain && h.encoding != encPlainDict {
			return fmt.Errorf("dictionary page: dictionary encoding %s not supported", format.Encoding(h.encoding))
		}
		if p.Type == format.Boolean {
			return errors.New("dictionary page: dictionary of BOOLEAN values")
		}
		if int64(h.numValues) > int64(h.uncompressed)/int64(max(p.Size, 4)) {
			return fmt.Errorf("dictionary page: %d values in %d bytes", h.numValues, h.uncompressed)
		}
		// The values' offsets (doffs) are decoded with it: 4 bytes each.
		if err := p.reserve(pg, int64(h.uncompressed)+4*(int64(h.numValues)+1)); err != nil {
			return fmt.Errorf("dictionary page: %w", err)
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
		if err := p.reserve(pg, int64(h.uncompressed)); err != nil {
			return fmt.Errorf("data page: %w", err)
		}
		if err := p.readData(pg); err != nil {
			return fmt.Errorf("data page: %w", err)
		}
		p.rows -= int64(h.numValues)
	}
	if cap(p.raw) > keepPage {
		p.raw = nil // real bytes of the file, but not kept for the next page
	}
	return nil
}

// reserve charges the Budget with cost, what the page pg holds once
// decompressed, before it is: as a page read ahead when it may be read
// ahead and the pool for those has room, else as a page the file needs,
// once the pages before it are decoded. Without a Budget, a page over
// bigPage waits for the pages before it all the same.
func (p *Reader) reserve(pg *page, cost int64) error {
	if p.Budget == nil {
		if int(pg.h.uncompressed) <= bigPage {
			return nil
		}
		return p.big(pg)
	}
	if p.stop != nil && int(pg.h.uncompressed) <= bigPage && p.Budget.TryAhead(cost) {
		pg.ahead = cost
		return nil
	}
	if err := p.needed(pg); err != nil {
		return err
	}
	if err := p.Budget.Hold(cost, p.stop); err != nil {
		if saferio.IsStopped(err) {
			return errStopped
		}
		return err
	}
	pg.held = cost
	return nil
}

// big waits, before a page is decompressed, until the pages before it are
// decoded (none are, on the caller's goroutine): their buffers went when
// they were over keepPage (release).
func (p *Reader) big(pg *page) error {
	if p.stop == nil {
		return nil
	}
	var others [ahead]*page
	n := 0
	defer func() {
		for _, o := range others[:n] {
			p.free <- o
		}
	}()
	for ; n < len(others); n++ {
		select {
		case others[n] = <-p.free:
		case <-p.stop:
			return errStopped
		}
	}
	return nil
}

// needed waits, before a page is charged to the Budget as needed, until
// the pages before it are decoded and the caller waits for it in Next:
// what the file holds then depends on the file alone, not on how far the
// columns' goroutines got.
func (p *Reader) needed(pg *page) error {
	if p.stop == nil {
		return nil
	}
	if err := p.big(pg); err != nil {
		return err
	}
	select {
	case <-p.want:
		return nil
	case <-p.stop:
		return errStopped
	}
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
		// The reading goroutine may charge a page as needed now (see
		// needed); a token left when a page read ahead was there is taken
		// back.
		select {
		case p.want <- struct{}{}:
		default:
		}
		f := <-p.out
		select {
		case <-p.want:
		default:
		}
		return f
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

// Close stops the reading goroutine and releases the decoders the reader
// holds, and its buffers for the next Reader to reuse: nothing it returned
// may be used after.
func (p *Reader) Close() {
	p.halt()
	p.releaseDict()
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

// small returns b emptied for reuse, or nil when it is over keepPage: one
// big page must not keep its memory alive in the pool for the next file.
func small(b []byte) []byte {
	if cap(b) > keepPage {
		return nil
	}
	return b[:0]
}
