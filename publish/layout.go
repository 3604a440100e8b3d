package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sitemapgen/sitemapgen/sink"
)

// Layout owns every file name of the set with one stem: nothing else makes
// or parses them.
//
//	STEM.xml                        root index (fixed name: the switch)
//	STEM-robots.txt                 the Sitemap: lines to submit (fixed name)
//	STEM.manifest.json              what is published and kept (fixed name)
//	STEM-000001-HASH.xml.gz         shards, numbered in input order
//	STEM-index-0001.xml             intermediate indexes (fixed names: rewritten in place)
//	STEM-news-0001.xml.gz           news sitemaps (fixed names: rewritten in place)
//	.STEM.lock                      held by the run publishing (see sink.Locker)
//
// HASH is the first 10 hex digits of the file's SHA-256: a new run never
// overwrites a shard that a published index lists with other bytes. The
// intermediate indexes keep their names from night to night, so the robots
// lines that name them stay put; they are rewritten in place (and restored
// if the publish fails). So are the news sitemaps: Google asks that a news
// sitemap be updated, not replaced by a new one.
//
// Every name is told from every other set's: Kind reads a name back exactly,
// and ValidStem refuses the one kind of stem whose root another set could
// take for its own file (a stem ending in -index-NNNN). Temporary files
// carry the whole name they are for (sink.TempOf), so one set's are never
// another's.
type Layout struct {
	stem string
}

// NewLayout returns the Layout of the set named stem (see ValidStem).
func NewLayout(stem string) Layout { return Layout{stem: stem} }

// The names after "STEM-" of the content files. Content-named index names
// (-index-0001-HASH.xml) are those of sitemapgen before fixed index names:
// still read as indexes, so they are pruned after the grace.
var (
	shardRest = regexp.MustCompile(`^[0-9]{6,}-[0-9a-f]{10}\.xml\.gz$`)
	indexRest = regexp.MustCompile(`^index-[0-9]{4,}(?:-[0-9a-f]{10})?\.xml$`)
	newsRest  = regexp.MustCompile(`^news-[0-9]{4,}\.xml\.gz$`)
	// badStem: the root STEM.xml of such a stem is an intermediate index's
	// name of the set named by what comes before -index-.
	badStem = regexp.MustCompile(`-index-[0-9]{4,}(?:-[0-9a-f]{10})?$`)
)

// ValidStem reports whether stem can name a set: letters, digits, '-', '_'
// and '.', not starting with '.', and not ending like an intermediate
// index's name (-index-0001): the root of "a-index-0001" would be the file
// a-index-0001.xml, index 1 of set "a", which that set may rewrite or prune.
func ValidStem(stem string) error {
	if stem == "" || stem[0] == '.' {
		return fmt.Errorf("name %q: use letters, digits, '-', '_' and '.', not starting with '.'", stem)
	}
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("name %q: use letters, digits, '-', '_' and '.', not starting with '.'", stem)
		}
	}
	if m := badStem.FindStringIndex(stem); m != nil {
		return fmt.Errorf("name %q ends like an intermediate index's name: its root %s.xml is index file %s of set %q; choose another name",
			stem, stem, stem[m[0]+len("-index-"):], stem[:m[0]])
	}
	return nil
}

// Kind is what a file name is to a set.
type Kind uint8

// The kinds of names, Foreign for every name the set does not write.
const (
	Foreign      Kind = iota // another set's file, or no set's
	RootFile                 // STEM.xml
	RobotsFile               // STEM-robots.txt
	ManifestFile             // STEM.manifest.json
	LockFile                 // .STEM.lock
	ShardFile                // STEM-000001-HASH.xml.gz
	IndexFile                // STEM-index-0001.xml (or an earlier version's STEM-index-0001-HASH.xml)
	NewsFile                 // STEM-news-0001.xml.gz
	TempFile                 // a sink's temporary file for one of the names above
)

// Kind reads name back: which of the set's files it is, or Foreign.
func (l Layout) Kind(name string) Kind {
	// Every name of the set starts with the stem, or with dots and the
	// stem (the lock, a folder's temporary files, sink.TempOf): the rest are another
	// set's, found without building a name (a folder of a thousand sets
	// asks a thousand layouts about every file).
	if !strings.HasPrefix(strings.TrimLeft(name, "."), l.stem) {
		return Foreign
	}
	if target, ok := sink.TempOf(name); ok {
		if l.Kind(target) != Foreign {
			return TempFile
		}
		return Foreign
	}
	switch name {
	case l.Root():
		return RootFile
	case l.Robots():
		return RobotsFile
	case l.Manifest():
		return ManifestFile
	case l.Lock():
		return LockFile
	}
	rest, ok := strings.CutPrefix(name, l.stem+"-")
	switch {
	case !ok:
		return Foreign
	case shardRest.MatchString(rest):
		return ShardFile
	case indexRest.MatchString(rest):
		return IndexFile
	case newsRest.MatchString(rest):
		return NewsFile
	}
	return Foreign
}

// restOf matches the part after "STEM-" of a shard's, index's or news
// sitemap's name (StemOf).
var restOf = regexp.MustCompile(`-(?:[0-9]{6,}-[0-9a-f]{10}\.xml\.gz|index-[0-9]{4,}(?:-[0-9a-f]{10})?\.xml|news-[0-9]{4,}\.xml\.gz)$`)

// StemOf reads back the stem of the set whose root, robots lines,
// manifest, shard, intermediate index or news sitemap name is (not its
// lock or temporary files): "", false for any other name. Every name has
// one set (see Layout), so the stem is the one whose Kind is not Foreign.
func StemOf(name string) (string, bool) {
	var stem string
	switch {
	case strings.HasSuffix(name, ".manifest.json"):
		stem = strings.TrimSuffix(name, ".manifest.json")
	case strings.HasSuffix(name, "-robots.txt"):
		stem = strings.TrimSuffix(name, "-robots.txt")
	default:
		if m := restOf.FindStringIndex(name); m != nil {
			stem = name[:m[0]]
		} else {
			stem = strings.TrimSuffix(name, ".xml")
		}
	}
	if ValidStem(stem) != nil || NewLayout(stem).Kind(name) == Foreign {
		return "", false
	}
	return stem, true
}

// Stem returns the stem the names start with.
func (l Layout) Stem() string { return l.stem }

// Root returns the root index's name.
func (l Layout) Root() string { return l.stem + ".xml" }

// Robots returns the name of the file of Sitemap: lines.
func (l Layout) Robots() string { return l.stem + "-robots.txt" }

// Manifest returns the manifest's name.
func (l Layout) Manifest() string { return l.stem + ".manifest.json" }

// Lock returns the name of the lock a publishing run holds.
func (l Layout) Lock() string { return "." + l.stem + ".lock" }

// Shard returns the name of shard num (1-based) whose stored bytes have
// the SHA-256 sum.
func (l Layout) Shard(num int, sum [sha256.Size]byte) string {
	return l.name("", num, 6, sum, ".xml.gz")
}

// Index returns the name of intermediate index num (1-based).
func (l Layout) Index(num int) string { return l.stem + "-index-" + pad4(num) + ".xml" }

// News returns the name of news sitemap num (1-based).
func (l Layout) News(num int) string { return l.stem + "-news-" + pad4(num) + ".xml.gz" }

func pad4(num int) string {
	n := strconv.Itoa(num)
	for len(n) < 4 {
		n = "0" + n
	}
	return n
}

// IsShard reports whether name is a shard's.
func (l Layout) IsShard(name string) bool { return l.Kind(name) == ShardFile }

// IsNews reports whether name is a news sitemap's.
func (l Layout) IsNews(name string) bool { return l.Kind(name) == NewsFile }

// Owned reports whether name is a file a run with this stem writes that no
// set needs once no kept generation lists it: shards, intermediate indexes,
// news sitemaps, and the temporary files a sink writes while putting any
// file of the set (sink.TempOf). The root, the robots lines and the
// manifest are not owned: they are never deleted.
func (l Layout) Owned(name string) bool {
	switch l.Kind(name) {
	case ShardFile, IndexFile, NewsFile, TempFile:
		return true
	}
	return false
}

func (l Layout) name(kind string, num, width int, sum [sha256.Size]byte, ext string) string {
	b := make([]byte, 0, len(l.stem)+len(kind)+width+len(ext)+16)
	b = append(b, l.stem...)
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

// State is what a store holds of one set.
type State uint8

// The states of a set in a store.
const (
	// Absent: no file of the set, or a root without a manifest (no set
	// of sitemapgen's).
	Absent State = iota
	// Published: its root and manifest; or a manifest that shows the set
	// was live (Manifest.Live: a root lost is no first publish's), or one
	// that cannot be read: not a set to delete.
	Published
	// Unrooted: files of the set but not its root, and at most a first
	// manifest: what a first publish left that died before its switch.
	// Nothing lists those files, and no crawler was ever given them.
	Unrooted
)

// StateOf tells the State of the set l names in a store whose names held
// reports, files saying whether it holds any of the set's. The manifest
// is read, through r, only when the root is missing.
func StateOf(ctx context.Context, r interface {
	Get(context.Context, string) ([]byte, error)
}, l Layout, held func(name string) bool, files bool) (State, error) {
	switch {
	case held(l.Root()):
		if held(l.Manifest()) {
			return Published, nil
		}
		return Absent, nil
	case !files:
		return Absent, nil
	case !held(l.Manifest()):
		return Unrooted, nil
	}
	m, _, err := ReadManifest(ctx, r, l)
	switch {
	case err == nil && m == nil: // gone since the listing
		return Unrooted, nil
	case err != nil && ctx.Err() != nil:
		return Absent, err
	case err != nil, m.Live():
		return Published, nil
	}
	return Unrooted, nil
}
