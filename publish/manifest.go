package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strconv"
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

// Live reports whether m proves its set was live once without its root
// to show it: a generation after the first, or earlier generations kept.
// A first publish's manifest proves nothing (its run may have died
// between it and the root, the switch), and a nil m nothing either.
func (m *Manifest) Live() bool { return m != nil && (m.Generation > 1 || len(m.Previous) > 0) }

// Generations returns the generations m describes, newest first: the one
// published (its Files), then the kept earlier ones. A nil m has none.
func (m *Manifest) Generations() []Generation {
	if m == nil {
		return nil
	}
	return append([]Generation{{Generation: m.Generation, Time: m.Time, URLs: m.URLs, Files: m.Files}}, m.Previous...)
}

// File is one file of a generation. Size and SHA256 describe its bytes as
// stored (a shard's gzip bytes); Modified is when its content (the XML)
// was first published, what an index lists as the file's <lastmod>.
//
// A gzip file (shard, news sitemap) also records its content: the XML's
// BLAKE3 and size and the compressor that made the stored bytes
// (shard.Compressor.ID). A later run that cuts the same XML for the same
// compressor reuses the file without compressing it (Tx.Reuse), after
// checking the stored file against Size, ETag and Trailer.
type File struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256,omitempty"`
	Modified string `json:"modified,omitempty"` // W3C datetime, UTC

	// XMLBLAKE3 is the BLAKE3-256 of the XML, in hex. BLAKE3, not SHA-256:
	// every run hashes every sitemap's XML, and SHA-256 took 9.5% of a
	// run's CPU at 10M rows, BLAKE3 half that (docs/performance.md).
	XMLBLAKE3 string `json:"xml_blake3,omitempty"`
	// XMLSHA256 is what an earlier sitemapgen recorded instead: kept
	// as read, never matched (a run after the upgrade compresses every
	// sitemap once; their lastmods are carried by their unchanged gzip
	// bytes).
	XMLSHA256 string `json:"xml_sha256,omitempty"`
	XMLSize   int64  `json:"xml_size,omitempty"`
	Codec     string `json:"codec,omitempty"`
	// Trailer is the gzip trailer, the last 8 bytes (CRC-32 and length of
	// the XML), in hex: a folder's file is checked against it.
	Trailer string `json:"gzip_trailer,omitempty"`
	// ETag is what S3 returned for the put: an object's is checked
	// against it.
	ETag string `json:"etag,omitempty"`
	// Verified: a --verify run checked these bytes (generate --verify
	// does not read them again while they are reused).
	Verified bool `json:"verified,omitempty"`
}

// Content identifies a gzip file by what it holds and how it was made:
// equal Contents give equal stored bytes.
type Content struct {
	XMLBLAKE3 [XMLSumSize]byte // BLAKE3-256 of the XML
	XMLSize   int
	Codec     string // shard.Compressor.ID
}

// XMLSumSize is the size of Content.XMLBLAKE3.
const XMLSumSize = 32

// key is c as File records it.
func (c Content) key() string {
	return contentKey(hex.EncodeToString(c.XMLBLAKE3[:]), int64(c.XMLSize)) + " " + c.Codec
}

// contentOf returns the key of f's content, "" when f records none.
func contentOf(f File) string {
	if f.XMLBLAKE3 == "" || f.Codec == "" {
		return ""
	}
	return contentKey(f.XMLBLAKE3, f.XMLSize) + " " + f.Codec
}

// DescribeGzip returns the File of name holding gz, whose SHA-256 is sum,
// the compression of the content c.
func DescribeGzip(name string, gz []byte, sum [sha256.Size]byte, c Content) File {
	f := DescribeSum(name, len(gz), sum)
	f.XMLBLAKE3, f.XMLSize, f.Codec = hex.EncodeToString(c.XMLBLAKE3[:]), int64(c.XMLSize), c.Codec
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
	URLs       int64     `json:"urls,omitempty"` // 0: not recorded (an earlier sitemapgen's)
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

// MaxManifestSize bounds the manifest a run reads: a generation of
// 1,000,000 files (50 billion URLs) describes itself in about 400 MB.
const MaxManifestSize = 1 << 30

// ErrNowBeforeLast reports a run whose time (--now, or the clock) is
// earlier than the published manifest's: the files it changes would be
// dated before the unchanged ones, and a crawler that came in between
// would skip them. Nothing is published unless Options.Force.
var ErrNowBeforeLast = errors.New("the run's time is before the last run's")

// Bounds of the numbers a manifest may hold.
const (
	maxGeneration = 1 << 40
	maxCount      = 1 << 50 // rows, URLs, files
	maxFileSize   = 1 << 34 // a stored file, gzip or not
	maxText       = 256     // an ETag, a compressor ID
)

// sanitize checks every field of m before the run uses it, against the
// set's layout and the run's time: a bad count, generation, time or root
// is an error naming the field; a bad file field (size, sum, date, trailer,
// ETag, compressor) is dropped with a warning, so the file is not trusted
// (it is written again, dated now); a file whose name is not one of the
// set's is dropped with a warning. Nothing unparsed reaches a published
// file: the next manifest copies only what survives.
func (m *Manifest) sanitize(l Layout, now time.Time, force bool, log *slog.Logger) error {
	bad := func(field string, v any) error {
		return fmt.Errorf("read manifest %s: %s %v: out of range (move it away to start a new history)", l.Manifest(), field, v)
	}
	switch {
	case m.Generation < 1 || m.Generation > maxGeneration:
		return bad("generation", m.Generation)
	case m.Time.IsZero() || m.Time.Year() < 2000:
		return bad("time", m.Time.Format(time.RFC3339))
	case m.Rows < 0 || m.Rows > maxCount:
		return bad("rows", m.Rows)
	case m.URLs < 0 || m.URLs > maxCount:
		return bad("urls", m.URLs)
	case m.Rejected < 0 || m.Rejected > maxCount:
		return bad("rejected", m.Rejected)
	case m.Shards < 0 || m.Shards > maxCount, m.News < 0 || m.News > maxCount, m.Indexes < 0 || m.Indexes > maxCount:
		return bad("shards, news or indexes", []int{m.Shards, m.News, m.Indexes})
	case m.Root != l.Root():
		return bad("root", strconv.Quote(m.Root))
	}
	if now.Before(m.Time) && !force {
		return fmt.Errorf("%w: %s is before %s, the time of the published generation %d: its changed sitemaps would be dated before unchanged ones, and a crawler that came in between would skip them; nothing published (fix --now or the clock, or force to publish anyway)",
			ErrNowBeforeLast, now.UTC().Format(time.RFC3339), m.Time.UTC().Format(time.RFC3339), m.Generation)
	}
	m.Files = sanitizeFiles(m.Files, l, now, log, "files")
	submit := m.Submit[:0]
	for _, u := range m.Submit {
		if p, err := url.Parse(u); err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" {
			submit = append(submit, u)
			continue
		}
		log.Warn("manifest: dropped a submit URL that is not an http(s) URL", "value", strconv.Quote(u))
	}
	m.Submit = submit
	prev := m.Previous[:0]
	for i, g := range m.Previous {
		field := fmt.Sprintf("previous[%d]", i)
		if g.Generation < 0 || g.Generation >= m.Generation {
			log.Warn("manifest: dropped a kept generation whose number is out of range", "field", field, "generation", g.Generation)
			continue
		}
		if !g.Time.IsZero() && (g.Time.After(now) || g.Time.Year() < 2000) {
			log.Warn("manifest: dropped a kept generation's time out of range", "field", field, "time", g.Time.Format(time.RFC3339))
			g.Time = time.Time{}
		}
		if g.URLs < 0 || g.URLs > maxCount {
			log.Warn("manifest: dropped a kept generation's URL count out of range", "field", field, "urls", g.URLs)
			g.URLs = 0
		}
		g.Files = sanitizeFiles(g.Files, l, now, log, field+".files")
		prev = append(prev, g)
	}
	m.Previous = prev
	return nil
}

// sanitizeFiles drops the files whose names are not the set's and the
// fields of the others that do not parse or are out of range.
func sanitizeFiles(files []File, l Layout, now time.Time, log *slog.Logger, field string) []File {
	out := files[:0]
	for i, f := range files {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch l.Kind(f.Name) {
		case ShardFile, IndexFile, NewsFile, RootFile, RobotsFile:
		default:
			log.Warn("manifest: dropped a file whose name is not one of the set's", "field", at, "name", strconv.Quote(f.Name))
			continue
		}
		drop := func(name string, v any) {
			log.Warn("manifest: dropped a field out of range; the file is written again", "field", at+"."+name, "file", f.Name, "value", v)
			// Without its sums the file is never trusted: written again.
			f.Size, f.SHA256, f.XMLBLAKE3, f.XMLSHA256, f.XMLSize, f.Codec, f.Trailer, f.ETag = 0, "", "", "", 0, "", "", ""
		}
		switch {
		case f.Size < 0 || f.Size > maxFileSize:
			drop("size", f.Size)
		case !isHex(f.SHA256, sha256.Size*2, true):
			drop("sha256", strconv.Quote(f.SHA256))
		case !isHex(f.XMLBLAKE3, XMLSumSize*2, true):
			drop("xml_blake3", strconv.Quote(f.XMLBLAKE3))
		case !isHex(f.XMLSHA256, sha256.Size*2, true):
			drop("xml_sha256", strconv.Quote(f.XMLSHA256))
		case f.XMLSize < 0 || f.XMLSize > maxFileSize:
			drop("xml_size", f.XMLSize)
		case !isHex(f.Trailer, gzipTrailer*2, true):
			drop("gzip_trailer", strconv.Quote(f.Trailer))
		case !isText(f.Codec):
			drop("codec", strconv.Quote(f.Codec))
		case !isText(f.ETag):
			drop("etag", strconv.Quote(f.ETag))
		}
		if f.Modified != "" {
			t, err := time.Parse(time.RFC3339, f.Modified)
			if err != nil || t.After(now) || t.Year() < 2000 || t.Format(w3cSeconds) != f.Modified {
				log.Warn("manifest: dropped a modified time that is not a W3C datetime up to the run's time; the file is dated now",
					"field", at+".modified", "file", f.Name, "value", strconv.Quote(f.Modified))
				f.Modified = ""
			}
		}
		out = append(out, f)
	}
	return out
}

// w3cSeconds is the form of the manifest's modified times (UTC, whole
// seconds), as the indexes write them.
const w3cSeconds = "2006-01-02T15:04:05Z07:00"

// isHex reports whether s is n lower-case hex digits (or empty, if empty
// may be).
func isHex(s string, n int, empty bool) bool {
	if s == "" {
		return empty
	}
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isText reports whether s is short printable ASCII.
func isText(s string) bool {
	if len(s) > maxText {
		return false
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
