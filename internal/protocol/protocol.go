// Package protocol holds the numbers of the sitemaps.org protocol, and of
// the search engines that read sitemaps, that sitemapgen writes and checks
// against, with the defaults it picks within them: the one place every
// package takes them from.
package protocol

// The sitemaps.org protocol.
const (
	// MaxURLs is the most <url> entries one sitemap file may list.
	MaxURLs = 50000
	// MaxFileBytes is the most bytes one sitemap or index file may hold,
	// uncompressed, counted over the whole file (50 MiB).
	MaxFileBytes = 52428800
	// MaxIndexEntries is the most <sitemap> entries one index file may list.
	MaxIndexEntries = 50000
	// MaxLoc bounds a <loc>: it must be shorter than 2,048 characters
	// (bytes, once percent-encoded: a written loc is ASCII).
	MaxLoc = 2048
	// MinLoc is the shortest loc sitemap.xsd accepts (tLoc's minLength).
	MinLoc = 12
)

// Search engines' rules on top of the protocol.
const (
	// MaxNewsURLs is the most URLs Google reads in one news sitemap.
	MaxNewsURLs = 1000
	// The limits of the extensions, as Google documents them and the XSDs
	// state.
	MaxImages           = 1000  // images per URL
	MaxVideoTags        = 32    // tags per video
	MaxVideoDescription = 2048  // characters
	MaxVideoTitle       = 100   // characters
	MaxVideoCategory    = 256   // characters
	MaxVideoDuration    = 28800 // seconds
	// MaxIndexDepth is how deep indexes may nest above a sitemap: the root
	// lists indexes that list sitemaps, at most (1: the root lists sitemaps).
	MaxIndexDepth = 3
)

// sitemapgen's defaults and bounds within the protocol.
const (
	// DefaultMaxBytes is the default bound of a sitemap file, uncompressed:
	// the protocol's limit before 2016 (10 MiB), which every reader accepts.
	DefaultMaxBytes = 10485760
	// MinMaxBytes is the least --max-bytes: room for the file's frame and
	// a few entries.
	MinMaxBytes = 4096
	// DefaultFanout is the most sitemaps an index lists by default: Search
	// Console asks for at most 1,000.
	DefaultFanout = 1000
	// MaxIndexesPerSite is how many index files Search Console accepts for
	// one site.
	MaxIndexesPerSite = 500
)
