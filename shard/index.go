package shard

import (
	"errors"
	"fmt"

	"github.com/sitemapgen/sitemapgen/encode"
)

// The bytes around the entries of every index file.
const (
	IndexHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	IndexFooter = "</sitemapindex>\n"

	// IndexHeaderSchema is IndexHeader whose start tag also declares
	// xmlns:xsi and the xsi:schemaLocation of siteindex.xsd.
	IndexHeaderSchema = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"` + xsiDecl +
		` xsi:schemaLocation="` + IndexSchemaLocation + `">` + "\n"
)

// IndexHeaderOf returns IndexHeaderSchema when schemaLocation is true, else
// IndexHeader: the bytes an index file starts with.
func IndexHeaderOf(schemaLocation bool) string {
	if schemaLocation {
		return IndexHeaderSchema
	}
	return IndexHeader
}

// Listed is a file as an index lists it.
type Listed struct {
	Name    string // file name, relative to the public folder
	Lastmod string // when the file's content last changed (W3C datetime); "" for none
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

// IndexOptions configure Indexes.
type IndexOptions struct {
	Fanout int    // entries per index, at least 1
	Base   string // the public folder URL: a <loc> is Base followed by a file name
	// Header starts every index, root and intermediate (IndexHeaderOf):
	// with IndexHeaderSchema they declare siteindex.xsd. "" is IndexHeader.
	Header string
	Root   string // the root index's name
	// Describe names and dates intermediate index num (numbered from 1)
	// given its bytes.
	Describe func(num int, data []byte) Listed
}

// Indexes builds the index files that list sitemaps, at most o.Fanout
// entries each: one root named o.Root when the fanout allows, otherwise
// levels of intermediate indexes with the root above them. The result is in
// publishing order: deepest level first, root last.
func Indexes(sitemaps []Listed, o IndexOptions) ([]Index, error) {
	fanout, base, header, describe, root := o.Fanout, o.Base, o.Header, o.Describe, o.Root
	if header == "" {
		header = IndexHeader
	}
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
			ix := build(level[i:min(i+fanout, len(level))], base, header, direct)
			ix.Listed = describe(num, ix.Data)
			out = append(out, ix)
			next = append(next, ix.Listed)
		}
		level, direct = next, false
	}
	ix := build(level, base, header, direct)
	ix.Name = root
	return append(out, ix), nil
}

// IndexDepth is how many index levels Indexes puts above n sitemaps with
// fanout entries an index (1: the root lists the sitemaps).
func IndexDepth(n, fanout int) int {
	d := 1
	for fanout > 1 && n > fanout {
		n, d = (n+fanout-1)/fanout, d+1
	}
	return d
}

func build(entries []Listed, base, header string, direct bool) Index {
	ix := Index{Direct: direct, Count: len(entries)}
	b := append([]byte(nil), header...)
	escBase := encode.AppendEscaped(nil, []byte(base))
	for _, e := range entries {
		b = append(b, "<sitemap><loc>"...)
		b = append(b, escBase...)
		b = encode.AppendEscaped(b, []byte(e.Name))
		b = append(b, "</loc>"...)
		if e.Lastmod != "" {
			b = append(b, "<lastmod>"...)
			b = encode.AppendEscaped(b, []byte(e.Lastmod))
			b = append(b, "</lastmod>"...)
		}
		b = append(b, "</sitemap>\n"...)
	}
	ix.Data = append(b, IndexFooter...)
	return ix
}
