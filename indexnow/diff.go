package indexnow

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"

	"github.com/sitemapgen/sitemapgen/publish"
)

// ErrTooMany reports a change larger than the limit it was read with.
var ErrTooMany = errors.New("more URLs than the limit")

// maxSitemapBytes bounds a sitemap read back, uncompressed: the largest
// --max-bytes.
const maxSitemapBytes = 52428800

// Getter reads a file of the destination.
type Getter interface {
	Get(ctx context.Context, name string) ([]byte, error)
}

// Change is what changed between two generations.
type Change struct {
	URLs                    []string // added and changed, in the new set's order, then removed, in the old one's
	Added, Changed, Removed int
	Read                    int // sitemaps read back
}

// Changes returns the URLs whose entry (any field) was added, changed or
// removed between the published generation prev and next, reading back
// from store only the shards (isShard) one lists and the other does not:
// a shard's name carries its content's hash, so those both list are the
// same bytes. With prev nil every URL of next is added. It holds at most
// limit URLs (those of the replaced shards, then the change) and returns
// ErrTooMany beyond that.
func Changes(ctx context.Context, store Getter, isShard func(string) bool, prev, next *publish.Manifest, limit int) (*Change, error) {
	in := func(m *publish.Manifest) map[string]bool {
		set := map[string]bool{}
		if m != nil {
			for _, f := range m.Files {
				if isShard(f.Name) {
					set[f.Name] = true
				}
			}
		}
		return set
	}
	was, is := in(prev), in(next)
	ch := &Change{}
	seed := maphash.MakeSeed()
	old := map[string]uint64{} // loc -> entry hash, of the replaced shards
	var oldNames []string
	if prev != nil {
		for _, f := range prev.Files {
			if !was[f.Name] || is[f.Name] {
				continue
			}
			oldNames = append(oldNames, f.Name)
			err := ch.read(ctx, store, f.Name, seed, func(loc string, sum uint64) error {
				if len(old) >= limit {
					return ErrTooMany
				}
				old[loc] = sum
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for _, f := range next.Files {
		if !is[f.Name] || was[f.Name] {
			continue
		}
		err := ch.read(ctx, store, f.Name, seed, func(loc string, sum uint64) error {
			was, ok := old[loc]
			switch {
			case !ok:
				ch.Added++
			case was != sum:
				ch.Changed++
			default:
				delete(old, loc) // moved to another shard, unchanged
				return nil
			}
			delete(old, loc)
			if len(ch.URLs)+len(old) >= limit {
				return ErrTooMany
			}
			ch.URLs = append(ch.URLs, loc)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(old) > 0 {
		// The URLs left are gone: read their shards again for their order.
		for _, name := range oldNames {
			err := ch.read(ctx, store, name, seed, func(loc string, _ uint64) error {
				if _, ok := old[loc]; ok {
					delete(old, loc)
					ch.Removed++
					ch.URLs = append(ch.URLs, loc)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return ch, nil
}

func (ch *Change) read(ctx context.Context, store Getter, name string, seed maphash.Seed, fn func(loc string, sum uint64) error) error {
	data, err := store.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("read back %s: %w", name, err)
	}
	ch.Read++
	if err := Entries(data, seed, fn); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Entries calls fn with the <loc> and a hash of the whole <url> element
// (its elements, attributes and text) of every entry of the sitemap in
// data, gzipped or not. The hashes of two entries are equal when their
// content is, under the same seed. Data is not trusted: it is read up to
// the protocol's largest sitemap, uncompressed, and an error says where it
// is not a sitemap.
func Entries(data []byte, seed maphash.Seed, fn func(loc string, sum uint64) error) error {
	var r io.Reader = bytes.NewReader(data)
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	}
	lr := &io.LimitedReader{R: r, N: maxSitemapBytes + 1}
	dec := xml.NewDecoder(lr)
	var h maphash.Hash
	h.SetSeed(seed)
	var loc strings.Builder
	depth, inLoc, locs, roots := 0, false, 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return fmt.Errorf("over %d bytes uncompressed", maxSitemapBytes)
			}
			return fmt.Errorf("line %d: %w", line(dec), err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				roots++
				if t.Name.Local != "urlset" || roots > 1 {
					return fmt.Errorf("line %d: root <%s>, want <urlset>", line(dec), t.Name.Local)
				}
			case depth == 2:
				if t.Name.Local != "url" {
					return fmt.Errorf("line %d: <%s> in <urlset>, want <url>", line(dec), t.Name.Local)
				}
				h.Reset()
				loc.Reset()
				locs = 0
			default:
				h.WriteString("<" + t.Name.Space + " " + t.Name.Local)
				for _, a := range t.Attr {
					h.WriteString(" " + a.Name.Space + " " + a.Name.Local + "=" + a.Value)
				}
				h.WriteByte('>')
				if depth == 3 && t.Name.Local == "loc" {
					inLoc = true
					locs++
				}
			}
		case xml.EndElement:
			if depth == 2 {
				if locs != 1 {
					return fmt.Errorf("line %d: <url> with %d <loc>", line(dec), locs)
				}
				if err := fn(strings.TrimSpace(loc.String()), h.Sum64()); err != nil {
					return err
				}
			} else if depth > 2 {
				h.WriteString("</>")
			}
			inLoc = false
			depth--
		case xml.CharData:
			if depth > 2 {
				h.Write(t)
			}
			if inLoc {
				loc.Write(t)
			}
		}
	}
	if lr.N <= 0 {
		return fmt.Errorf("over %d bytes uncompressed", maxSitemapBytes)
	}
	if roots != 1 {
		return errors.New("no <urlset>")
	}
	return nil
}

func line(dec *xml.Decoder) int {
	l, _ := dec.InputPos()
	return l
}
