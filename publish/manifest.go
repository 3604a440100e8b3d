package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// ManifestVersion is the format version of the manifest this code writes.
const ManifestVersion = 1

// Manifest is STEM.manifest.json: what one publish put in place, and the
// file lists of the generations before it that are still kept for crawlers
// that fetched an older root. The next run reads it to skip unchanged files,
// to check the URL count and to know which files it may delete.
type Manifest struct {
	Version    int          `json:"version"`
	Generation int64        `json:"generation"` // 1 for the first publish, +1 each publish
	Time       time.Time    `json:"time"`       // the run's time (--now, or when it started), UTC
	Rows       int64        `json:"rows"`
	URLs       int64        `json:"urls"`
	Rejected   int64        `json:"rejected"`
	Shards     int          `json:"shards"`
	News       int          `json:"news,omitempty"` // news sitemaps
	Indexes    int          `json:"indexes"`
	Root       string       `json:"root"`
	Files      []File       `json:"files"`              // shards in order, news sitemaps, intermediate indexes, root, robots
	Submit     []string     `json:"submit,omitempty"`   // the URLs the robots lines name
	Previous   []Generation `json:"previous,omitempty"` // newest first, at most the kept generations
}

// Generations returns the generations m describes, newest first: the one
// published (its Files), then the kept earlier ones. A nil m has none.
func (m *Manifest) Generations() []Generation {
	if m == nil {
		return nil
	}
	return append([]Generation{{Generation: m.Generation, Time: m.Time, Files: m.Files}}, m.Previous...)
}

// File is one file of a generation. Size and SHA256 describe its bytes as
// stored (a shard's gzip bytes); Modified is when its content (the XML)
// was first published, what an index lists as the file's <lastmod>.
//
// A gzip file (shard, news sitemap) also records its content: the XML's
// SHA-256 and size and the compressor that made the stored bytes
// (shard.Compressor.ID). A later run that cuts the same XML for the same
// compressor reuses the file without compressing it (Tx.Reuse), after
// checking the stored file against Size, ETag and Trailer.
type File struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256,omitempty"`
	Modified string `json:"modified,omitempty"` // W3C datetime, UTC

	XMLSHA256 string `json:"xml_sha256,omitempty"`
	XMLSize   int64  `json:"xml_size,omitempty"`
	Codec     string `json:"codec,omitempty"`
	// Trailer is the gzip trailer, the last 8 bytes (CRC-32 and length of
	// the XML), in hex: a folder's file is checked against it.
	Trailer string `json:"gzip_trailer,omitempty"`
	// ETag is what S3 returned for the put: an object's is checked
	// against it.
	ETag string `json:"etag,omitempty"`
}

// Content identifies a gzip file by what it holds and how it was made:
// equal Contents give equal stored bytes.
type Content struct {
	XMLSHA256 [sha256.Size]byte
	XMLSize   int
	Codec     string // shard.Compressor.ID
}

// key is c as File records it.
func (c Content) key() string {
	return contentKey(hex.EncodeToString(c.XMLSHA256[:]), int64(c.XMLSize)) + " " + c.Codec
}

// contentOf returns the key of f's content, "" when f records none.
func contentOf(f File) string {
	if f.XMLSHA256 == "" || f.Codec == "" {
		return ""
	}
	return contentKey(f.XMLSHA256, f.XMLSize) + " " + f.Codec
}

// DescribeGzip returns the File of name holding gz, whose SHA-256 is sum,
// the compression of the content c.
func DescribeGzip(name string, gz []byte, sum [sha256.Size]byte, c Content) File {
	f := DescribeSum(name, len(gz), sum)
	f.XMLSHA256, f.XMLSize, f.Codec = hex.EncodeToString(c.XMLSHA256[:]), int64(c.XMLSize), c.Codec
	if len(gz) >= gzipTrailer {
		f.Trailer = hex.EncodeToString(gz[len(gz)-gzipTrailer:])
	}
	return f
}

// gzipTrailer is the size of a gzip member's trailer: CRC-32 and ISIZE.
const gzipTrailer = 8

// Generation is an earlier publish, kept for the grace period.
type Generation struct {
	Generation int64     `json:"generation"` // 0: files found without a manifest
	Time       time.Time `json:"time"`
	Files      []File    `json:"files"`
}

// Describe returns the File of name holding data.
func Describe(name string, data []byte) File {
	return DescribeSum(name, len(data), sha256.Sum256(data))
}

// DescribeSum is Describe for a caller that already has the SHA-256.
func DescribeSum(name string, size int, sum [sha256.Size]byte) File {
	return File{Name: name, Size: int64(size), SHA256: hex.EncodeToString(sum[:])}
}

// ReadManifest returns the manifest published in r under l's name, and its
// bytes, or nil, nil, nil when there is none.
func ReadManifest(ctx context.Context, r interface {
	Get(context.Context, string) ([]byte, error)
}, l Layout) (*Manifest, []byte, error) {
	name := l.Manifest()
	raw, err := r.Get(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("read manifest %s: %w (move it away to start a new history)", name, err)
	}
	if m.Version != ManifestVersion {
		return nil, nil, fmt.Errorf("read manifest %s: version %d, this sitemapgen writes %d", name, m.Version, ManifestVersion)
	}
	return &m, raw, nil
}
