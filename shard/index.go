package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/sitemapgen/sitemapgen/encode"
)

// The bytes around the entries of every index file.
const (
	IndexHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	IndexFooter = "</sitemapindex>\n"
)

// Listed is a file as an index lists it.
type Listed struct {
	Name       string // file name, relative to the public folder
	LastmodKey int64  // orders Lastmod; NoLastmod when there is none
	Lastmod    []byte // newest lastmod of the URLs below the file, or nil
}

// Index is one sitemap index file.
type Index struct {
	Listed        // the index itself, as its parent lists it
	Data   []byte // the whole file
	Direct bool   // it lists sitemaps, not other indexes
	Count  int    // entries
}

// ErrFanout reports a fanout too small to ever reach a single root.
var ErrFanout = errors.New("index fanout 1 cannot list more than one sitemap")

// ContentName returns stem-kind-NNNN-HASH.ext: a name that changes whenever
// data changes, so a new run never overwrites a file that a published index
// lists with different bytes. width pads the number.
func ContentName(stem, kind string, num, width int, data []byte, ext string) string {
	return SumName(stem, kind, num, width, sha256.Sum256(data), ext)
}

// SumName is ContentName for a caller that already has data's SHA-256.
func SumName(stem, kind string, num, width int, sum [sha256.Size]byte, ext string) string {
	b := make([]byte, 0, len(stem)+len(kind)+width+len(ext)+16)
	b = append(b, stem...)
	b = append(b, '-')
	if kind != "" {
		b = append(b, kind...)
		b = append(b, '-')
	}
	n := strconv.Itoa(num)
	for i := len(n); i < width; i++ {
		b = append(b, '0')
	}
	b = append(b, n...)
	b = append(b, '-')
	b = hex.AppendEncode(b, sum[:5])
	b = append(b, ext...)
	return string(b)
}

// Plan builds the index files that list sitemaps, at most fanout entries
// each: one root named root when fanout allows, otherwise levels of
// intermediate indexes with the root above them. The <loc>s are the names
// under base, the public folder. The result is in publishing order: deepest
// level first, root last.
func Plan(sitemaps []Listed, fanout int, base *encode.Scope, stem, root string) ([]Index, error) {
	if len(sitemaps) == 0 {
		return nil, errors.New("no sitemaps to index")
	}
	if fanout < 1 {
		return nil, fmt.Errorf("index fanout %d: must be at least 1", fanout)
	}
	if fanout == 1 && len(sitemaps) > 1 {
		return nil, ErrFanout
	}
	var out []Index
	level, direct, num := sitemaps, true, 0
	for len(level) > fanout {
		var next []Listed
		for i := 0; i < len(level); i += fanout {
			num++
			ix := build(level[i:min(i+fanout, len(level))], base, direct)
			ix.Name = ContentName(stem, "index", num, 4, ix.Data, ".xml")
			out = append(out, ix)
			next = append(next, ix.Listed)
		}
		level, direct = next, false
	}
	ix := build(level, base, direct)
	ix.Name = root
	return append(out, ix), nil
}

func build(entries []Listed, base *encode.Scope, direct bool) Index {
	ix := Index{Direct: direct, Count: len(entries)}
	ix.LastmodKey = NoLastmod
	b := append([]byte(nil), IndexHeader...)
	for _, e := range entries {
		b = append(b, "<sitemap><loc>"...)
		b = base.AppendURL(b, e.Name)
		b = append(b, "</loc>"...)
		if e.LastmodKey != NoLastmod {
			b = append(b, "<lastmod>"...)
			b = append(b, e.Lastmod...)
			b = append(b, "</lastmod>"...)
			if e.LastmodKey > ix.LastmodKey {
				ix.LastmodKey, ix.Lastmod = e.LastmodKey, e.Lastmod
			}
		}
		b = append(b, "</sitemap>\n"...)
	}
	ix.Data = append(b, IndexFooter...)
	return ix
}
