package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
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
type Layout struct {
	stem  string
	owned *regexp.Regexp
	shard *regexp.Regexp
	news  *regexp.Regexp
}

// NewLayout returns the Layout of the set named stem.
func NewLayout(stem string) Layout {
	q := regexp.QuoteMeta(stem)
	return Layout{stem: stem,
		// Content-named index names are those of sitemapgen before fixed
		// index names: still owned, so they are pruned after the grace.
		owned: regexp.MustCompile(`^(?:` + q + `-[0-9]{6,}-[0-9a-f]{10}\.xml\.gz|` +
			q + `-index-[0-9]{4,}(?:-[0-9a-f]{10})?\.xml|` + q + `-news-[0-9]{4,}\.xml\.gz|\.` + q + `[-.][^/]*\.tmp)$`),
		shard: regexp.MustCompile(`^` + q + `-[0-9]{6,}-[0-9a-f]{10}\.xml\.gz$`),
		news:  regexp.MustCompile(`^` + q + `-news-[0-9]{4,}\.xml\.gz$`),
	}
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
func (l Layout) IsShard(name string) bool { return l.shard.MatchString(name) }

// IsNews reports whether name is a news sitemap's.
func (l Layout) IsNews(name string) bool { return l.news.MatchString(name) }

// Owned reports whether name is a file a run with this stem writes that no
// set needs once no kept generation lists it: shards, intermediate indexes,
// news sitemaps, and the temporary files a sink writes while putting one
// (sink.Local's .NAME.*.tmp). The root, the robots lines and the manifest
// are not owned: they are never deleted.
func (l Layout) Owned(name string) bool { return l.owned.MatchString(name) }

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
