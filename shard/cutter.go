// Package shard packs encoded <url> entries into sitemap files that respect
// the protocol limits exactly, compresses them, and plans the index files
// that list them.
package shard

import "github.com/sitemapgen/sitemapgen/encode"

// The bytes around the entries of every sitemap file. They count towards the
// byte limit: the limit is on the whole file.
const (
	Header = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	Footer = "</urlset>\n"
)

// URLSetHeader returns the bytes before the entries of a sitemap whose
// entries use the extension namespaces ns: Header when ns is empty, else
// Header's urlset start tag with an xmlns:PREFIX attribute for each of ns
// (xhtml, mobile, image, video, news), so a run's sitemaps declare exactly
// the extensions its input carries.
func URLSetHeader(ns encode.Namespaces) string {
	if ns == 0 {
		return Header
	}
	b := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`)
	b = ns.AppendDecls(b)
	return string(append(b, ">\n"...))
}

// The attributes that point a validator at the schemas: the xsi namespace
// and the sitemap schema locations the protocol shows.
const (
	xsiDecl = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	// SitemapSchemaLocation is the xsi:schemaLocation pair of a <urlset>.
	SitemapSchemaLocation = "http://www.sitemaps.org/schemas/sitemap/0.9 http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd"
	// IndexSchemaLocation is the xsi:schemaLocation pair of a <sitemapindex>.
	IndexSchemaLocation = "http://www.sitemaps.org/schemas/sitemap/0.9 http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd"
)

// URLSetHeaderSchema returns URLSetHeader(ns) when schemaLocation is false.
// Otherwise the urlset start tag also declares xmlns:xsi and an
// xsi:schemaLocation listing sitemap.xsd and, for each namespace of ns, its
// schema (see encode.Namespaces.AppendSchemaLocations), "to validate the
// file against the schema" as the protocol shows. Like the namespaces,
// these bytes are part of the header and count towards the byte limit of a
// Cutter made with it.
func URLSetHeaderSchema(ns encode.Namespaces, schemaLocation bool) string {
	if !schemaLocation {
		return URLSetHeader(ns)
	}
	b := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`)
	b = ns.AppendDecls(b)
	b = append(b, xsiDecl+` xsi:schemaLocation="`+SitemapSchemaLocation...)
	b = ns.AppendSchemaLocations(b)
	return string(append(b, "\">\n"...))
}

// Sitemap is one sitemap file: the uncompressed bytes of the whole document
// and what an index needs to know about it.
type Sitemap struct {
	Num int // 1-based position in the run
	// Data is the whole file: the Cutter's header, entries, Footer. A
	// Cutter with Blocks leaves it nil and holds the file in blocks:
	// Parts and Len read either.
	Data []byte
	URLs int // entries in the file

	parts  [][]byte  // the file in blocks, each full but the last
	size   int       // the bytes in parts
	blocks *Blocks   // of parts
	one    [1][]byte // Parts of Data, without an allocation
}

// Len returns the length of the file.
func (s *Sitemap) Len() int {
	if s.blocks == nil {
		return len(s.Data)
	}
	return s.size
}

// Parts returns the file as consecutive pieces: Data alone, or its
// blocks. They are valid until s is recycled.
func (s *Sitemap) Parts() [][]byte {
	if s.blocks == nil {
		s.one[0] = s.Data
		return s.one[:]
	}
	return s.parts
}

// write appends p to the file.
func (s *Sitemap) write(p []byte) {
	if s.blocks == nil {
		s.Data = append(s.Data, p...)
		return
	}
	s.size += len(p)
	for len(p) > 0 {
		last := len(s.parts) - 1
		if last < 0 || len(s.parts[last]) == cap(s.parts[last]) {
			s.parts = append(s.parts, s.blocks.Get())
			last++
		}
		b := s.parts[last]
		n := copy(b[len(b):cap(b)], p)
		s.parts[last] = b[:len(b)+n]
		p = p[n:]
	}
}

// Cutter packs entries into shards of at most MaxURLs entries and MaxBytes
// bytes. In CutTight mode it closes a shard only when the next entry would
// break a limit; in CutStable mode also after an entry its Curve picks.
// A Cutter is not safe for concurrent use, except for Recycle.
type Cutter struct {
	header   []byte // every shard's first bytes
	maxURLs  int
	maxBytes int
	open     *Sitemap
	n        int           // shards opened so far
	buffers  int           // shard buffers allocated so far
	free     chan *Sitemap // recycled shards, so buffers are reused
	stable   *stable       // the curve of CutStable; nil for CutTight
	cutNext  bool          // Add found a content-defined cut after the last entry: close before the next
	capacity int           // of a new shard buffer
	blocks   *Blocks       // nil: a buffer of capacity each
}

var footer = []byte(Footer)

// Buffers reports how many shard buffers c has allocated: the most shards
// that were ever open or closed and not yet recycled at once, when the
// caller recycles every shard.
func (c *Cutter) Buffers() int { return c.buffers }

// CutterOptions configure a Cutter.
type CutterOptions struct {
	MaxURLs  int // entries per sitemap
	MaxBytes int // bytes per sitemap, whole file: room for Header, Footer and at least one entry
	// Header starts every sitemap (URLSetHeader, URLSetHeaderSchema); its
	// bytes count towards MaxBytes. "" is Header.
	Header string
	Mode   CutMode // CutTight (the zero value) or CutStable
	// Curve is where CutStable cuts (nil: DefaultCurve).
	Curve *Curve
	// Free, when set, holds the recycled shards of several Cutters of the
	// same MaxBytes (the groups of a run), so that their buffers go round
	// instead of each Cutter keeping its own (nil: its own, of 16).
	Free chan *Sitemap
	// Capacity is the capacity of a new shard buffer, which grows as
	// entries come (0: MaxBytes, at most 16 MiB): small for the many
	// Cutters of a grouped run, most of whose shards are small.
	Capacity int
	// Blocks, when set, holds the sitemaps' bytes instead of one buffer
	// each (Sitemap.Parts); Capacity is then unused.
	Blocks *Blocks
}

// NewCutter returns a Cutter with the options o. It fails only on a Curve
// that Check refuses.
func NewCutter(o CutterOptions) (*Cutter, error) {
	if o.Header == "" {
		o.Header = Header
	}
	c := &Cutter{header: []byte(o.Header), maxURLs: o.MaxURLs, maxBytes: o.MaxBytes,
		free: o.Free, capacity: o.Capacity, blocks: o.Blocks}
	if c.free == nil {
		c.free = make(chan *Sitemap, 16)
	}
	if c.capacity <= 0 {
		c.capacity = min(c.maxBytes, 16<<20)
	}
	if o.Mode == CutStable {
		cv := DefaultCurve
		if o.Curve != nil {
			if err := o.Curve.Check(); err != nil {
				return nil, err
			}
			cv = *o.Curve
		}
		c.stable = newStable(cv, o.MaxURLs, o.MaxBytes)
	}
	return c, nil
}

// Mode reports how c cuts.
func (c *Cutter) Mode() CutMode {
	if c.stable != nil {
		return CutStable
	}
	return CutTight
}

// Header returns the bytes every shard of c starts with.
func (c *Cutter) Header() string { return string(c.header) }

// MaxEntry is the length of the largest entry that fits an empty shard.
// Callers must reject longer entries before Add.
func (c *Cutter) MaxEntry() int { return c.maxBytes - len(c.header) - len(Footer) }

// Add appends entry. If the open shard cannot take the entry
// without breaking a limit, or (CutStable) the previous entry ended it,
// Add closes that shard and returns it, and the entry starts the next one.
// Otherwise it returns nil. len(entry) must not exceed MaxEntry.
func (c *Cutter) Add(entry []byte) (closed *Sitemap) {
	s := c.open
	if s != nil && (c.cutNext || s.URLs == c.maxURLs || s.Len()+len(entry)+len(Footer) > c.maxBytes) {
		closed = c.close()
		s = nil
	}
	if s == nil {
		s = c.start()
	}
	if p := c.stable; p != nil {
		// The cut after this entry is decided now and made at the next
		// Add or Flush, so that Add never closes two shards at once.
		f0 := p.fill(s.URLs, s.Len()+len(Footer))
		f1 := p.fill(s.URLs+1, s.Len()+len(entry)+len(Footer))
		c.cutNext = p.cut(f0, f1, LocHash(EntryLoc(entry)))
	}
	s.write(entry)
	s.URLs++
	return closed
}

// Entries is a run of encoded entries held back to back, as an encode
// stage produces them: entry k is Data[Ends[k-1]:Ends[k]] (entry 0 starts
// at 0).
type Entries struct {
	Data []byte
	Ends []uint32
}

// AddEntries adds e's entries from entry k on, as successive calls to Add
// would, copying every entry that fits the open shard in one go. It stops
// after the first shard it closes and returns that shard and the next entry
// to add, so the caller can hand the shard on before the cutter opens
// another; it returns nil and len(e.Ends) once every entry is in. (A
// CutStable Cutter closes a shard as soon as an entry ends it, so it may
// return a shard with len(e.Ends).) No entry may exceed MaxEntry.
func (c *Cutter) AddEntries(e *Entries, k int) (next int, closed *Sitemap) {
	if c.stable != nil {
		return c.addStable(e, k)
	}
	if k >= len(e.Ends) {
		return len(e.Ends), nil
	}
	s := c.open
	if s == nil {
		s = c.start()
	}
	start, to := c.fit(s, e, k)
	c.take(s, e, k, to, start)
	if to == len(e.Ends) {
		return to, nil
	}
	// Entry to does not fit: the open shard is done, as Add would find.
	return to, c.close()
}

// take appends e's entries [k, to), which start at byte start, to s in
// one copy, and keeps the newest lastmod among them.
// fit returns where entry k starts in e.Data, and the end of the entries
// [k, to) that fit in s: at most the URLs left, then the longest run within
// the bytes left (ends grow, so search them). An empty s takes entry k
// whatever its size, as Add does: never loop.
func (c *Cutter) fit(s *Sitemap, e *Entries, k int) (start, to int) {
	if k > 0 {
		start = int(e.Ends[k-1])
	}
	room := c.maxBytes - len(Footer) - s.Len()
	lo, hi := k, min(len(e.Ends), k+c.maxURLs-s.URLs)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); int(e.Ends[m])-start <= room {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == k && s.URLs == 0 {
		lo++
	}
	return start, lo
}

func (c *Cutter) take(s *Sitemap, e *Entries, k, to, start int) {
	if to <= k {
		return
	}
	end := int(e.Ends[to-1])
	s.write(e.Data[start:end])
	s.URLs += to - k
}

// addStable is AddEntries for CutStable. Entries that leave the shard at
// most Min full cannot end it, so they are found by a binary search and
// copied without hashing; only entries past Min are hashed, up to the
// first that ends the shard.
func (c *Cutter) addStable(e *Entries, k int) (next int, closed *Sitemap) {
	if c.cutNext { // Add decided the cut after the last entry
		return k, c.close()
	}
	if k >= len(e.Ends) {
		return len(e.Ends), nil
	}
	p, s := c.stable, c.open
	if s == nil {
		s = c.start()
	}
	start, fit := c.fit(s, e, k)
	// The file size after entry i is base + e.Ends[i].
	base := s.Len() + len(Footer) - start
	// The entries [k, quiet) leave the fill at most Min.
	lo, hi := k, fit
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); p.fill(s.URLs+m-k+1, base+int(e.Ends[m])) <= p.lo {
			lo = m + 1
		} else {
			hi = m
		}
	}
	to, cut := fit, false
	from := start
	if lo > k {
		from = int(e.Ends[lo-1])
	}
	f0 := p.fill(s.URLs+lo-k, base+from)
	for i := lo; i < fit; i++ {
		end := int(e.Ends[i])
		f1 := p.fill(s.URLs+i-k+1, base+end)
		if p.cut(f0, f1, LocHash(EntryLoc(e.Data[from:end]))) {
			to, cut = i+1, true
			break
		}
		f0, from = f1, end
	}
	c.take(s, e, k, to, start)
	if !cut && to == len(e.Ends) {
		return to, nil
	}
	// Entry to-1 ended the shard, or entry to does not fit.
	return to, c.close()
}

// Flush closes and returns the open shard, or nil when no entry is pending.
func (c *Cutter) Flush() *Sitemap {
	if c.open == nil {
		return nil
	}
	return c.close()
}

// Recycle hands a shard the caller is done with back for reuse. It is safe
// to call from any goroutine.
func (c *Cutter) Recycle(s *Sitemap) {
	if s.blocks != nil {
		s.blocks.Put(s.parts...)
		clear(s.parts) // the pool's now
		s.parts, s.size = s.parts[:0], 0
	}
	select {
	case c.free <- s:
	default:
	}
}

func (c *Cutter) start() *Sitemap {
	var s *Sitemap
	select {
	case s = <-c.free:
	default:
		s = &Sitemap{}
		c.buffers++
	}
	c.n++
	s.Num = c.n
	s.blocks = c.blocks
	if c.blocks == nil && s.Data == nil {
		s.Data = make([]byte, 0, c.capacity)
	}
	s.Data = s.Data[:0]
	s.write(c.header)
	s.URLs = 0
	c.open = s
	return s
}

func (c *Cutter) close() *Sitemap {
	s := c.open
	c.open, c.cutNext = nil, false
	s.write(footer)
	return s
}
