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

// NoLastmod is the LastmodKey of a shard none of whose URLs has a lastmod.
const NoLastmod = encode.NoLastmod

// Shard is one sitemap file: the uncompressed bytes of the whole document
// and what an index needs to know about it.
type Shard struct {
	Num        int    // 1-based position in the run
	Data       []byte // the whole file: Header, entries, Footer
	URLs       int    // entries in Data
	LastmodKey int64  // the newest lastmod among the URLs, or NoLastmod
	lastmod    []byte
}

// Lastmod returns the text of the newest lastmod among the shard's URLs, or
// nil when none has one.
func (s *Shard) Lastmod() []byte {
	if s.LastmodKey == NoLastmod {
		return nil
	}
	return s.lastmod
}

// Cutter packs entries into shards of at most MaxURLs entries and MaxBytes
// bytes, and closes a shard only when the next entry would break a limit.
// A Cutter is not safe for concurrent use, except for Recycle.
type Cutter struct {
	maxURLs  int
	maxBytes int
	open     *Shard
	n        int         // shards opened so far
	free     chan *Shard // recycled shards, so buffers are reused
}

// NewCutter returns a Cutter for the given limits. maxBytes must leave room
// for Header and Footer.
func NewCutter(maxURLs, maxBytes int) *Cutter {
	return &Cutter{maxURLs: maxURLs, maxBytes: maxBytes, free: make(chan *Shard, 16)}
}

// MaxEntry is the length of the largest entry that fits an empty shard.
// Callers must reject longer entries before Add.
func (c *Cutter) MaxEntry() int { return c.maxBytes - len(Header) - len(Footer) }

// Add appends entry, whose newest-lastmod key and text are key and lastmod
// (NoLastmod and nil for none). If the open shard cannot take the entry
// without breaking a limit, Add closes that shard and returns it, and the
// entry starts the next one. Otherwise it returns nil.
// len(entry) must not exceed MaxEntry.
func (c *Cutter) Add(entry []byte, key int64, lastmod []byte) (closed *Shard) {
	s := c.open
	if s != nil && (s.URLs == c.maxURLs || len(s.Data)+len(entry)+len(Footer) > c.maxBytes) {
		closed = c.close()
		s = nil
	}
	if s == nil {
		s = c.start()
	}
	s.Data = append(s.Data, entry...)
	s.URLs++
	if key > s.LastmodKey {
		s.LastmodKey = key
		s.lastmod = append(s.lastmod[:0], lastmod...)
	}
	return closed
}

// Flush closes and returns the open shard, or nil when no entry is pending.
func (c *Cutter) Flush() *Shard {
	if c.open == nil {
		return nil
	}
	return c.close()
}

// Recycle hands a shard the caller is done with back for reuse. It is safe
// to call from any goroutine.
func (c *Cutter) Recycle(s *Shard) {
	select {
	case c.free <- s:
	default:
	}
}

func (c *Cutter) start() *Shard {
	var s *Shard
	select {
	case s = <-c.free:
	default:
		s = &Shard{Data: make([]byte, 0, min(c.maxBytes, 16<<20))}
	}
	c.n++
	s.Num = c.n
	s.Data = append(s.Data[:0], Header...)
	s.URLs = 0
	s.LastmodKey = NoLastmod
	s.lastmod = s.lastmod[:0]
	c.open = s
	return s
}

func (c *Cutter) close() *Shard {
	s := c.open
	c.open = nil
	s.Data = append(s.Data, Footer...)
	return s
}
