package indexnow

import (
	"bytes"
	"compress/gzip"
	"context"
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
// --max-bytes. A variable so that a test can lower it.
var maxSitemapBytes = 52428800

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

// Entries calls fn with the <loc> and a hash of the whole <url> element of
// every entry of the sitemap in data, gzipped or not, as sitemapgen writes
// them: one "<url><loc>…</loc>…</url>" after another in a <urlset>. A file
// whose content is the same gives the same hashes, under the same seed
// (sitemapgen writes the same content as the same bytes). Data is not
// trusted: it is inflated up to the protocol's largest sitemap, and what is
// not such a sitemap is an error saying where.
func Entries(data []byte, seed maphash.Seed, fn func(loc string, sum uint64) error) error {
	raw, err := inflate(data)
	if err != nil {
		return err
	}
	i := bytes.Index(raw, []byte("<urlset"))
	if i < 0 {
		return errors.New("no <urlset>")
	}
	gt := bytes.IndexByte(raw[i:], '>')
	if gt < 0 {
		return errors.New("<urlset> not closed")
	}
	for i += gt + 1; ; {
		for i < len(raw) && (raw[i] == '\n' || raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r') {
			i++
		}
		rest := raw[i:]
		if bytes.HasPrefix(rest, []byte("</urlset>")) {
			if len(bytes.TrimSpace(rest[len("</urlset>"):])) > 0 {
				return fmt.Errorf("offset %d: data after </urlset>", i+len("</urlset>"))
			}
			return nil
		}
		if !bytes.HasPrefix(rest, []byte("<url><loc>")) {
			return fmt.Errorf("offset %d: want <url><loc> or </urlset>", i)
		}
		end := bytes.Index(rest, []byte("</url>"))
		if end < 0 {
			return fmt.Errorf("offset %d: <url> not closed", i)
		}
		entry := rest[:end]
		locEnd := bytes.Index(entry, []byte("</loc>"))
		if locEnd < 0 {
			return fmt.Errorf("offset %d: <loc> not closed", i)
		}
		loc := string(entry[len("<url><loc>"):locEnd])
		if strings.IndexByte(loc, '&') >= 0 {
			loc = unescape.Replace(loc)
		}
		if err := fn(loc, maphash.Bytes(seed, entry)); err != nil {
			return err
		}
		i += end + len("</url>")
	}
}

// unescape undoes the escaping sitemapgen writes in a <loc>.
var unescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'")

// inflate returns data, gunzipped if it is gzip, refusing more than
// maxSitemapBytes.
func inflate(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		if len(data) > maxSitemapBytes {
			return nil, fmt.Errorf("over %d bytes", maxSitemapBytes)
		}
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	// Grow as the data proves it holds more, never to more than the limit.
	raw, err := io.ReadAll(io.LimitReader(zr, int64(maxSitemapBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSitemapBytes {
		return nil, fmt.Errorf("over %d bytes uncompressed", maxSitemapBytes)
	}
	return raw, nil
}
