package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// Config is a run's whole configuration.
type Config struct {
	Inputs    []string      // files in order; "-" is Stdin
	Stdin     io.Reader     // read for "-"
	Remote    *input.Remote // how s3:// inputs are read (nil: the SDK's defaults)
	PublicURL *encode.Scope // the folder the files are served from
	Scope     *encode.Scope // listed URLs must fall under it (nil: PublicURL)
	Sink      sink.Store    // where the files go
	Name      string        // file name stem
	MaxURLs   int           // per shard
	MaxBytes  int           // per shard, uncompressed, whole file
	Fanout    int           // entries per index
	// MaxNewsURLs bounds the URLs of a news sitemap (1..1000; 0: 1000).
	// Rows with a news item are also written, without it, to the regular
	// sitemaps.
	MaxNewsURLs int
	// NewsWindow is how old a news item may be, against Now, to be written
	// (0: DefaultNewsWindow); older ones lose their news item, not the URL.
	NewsWindow time.Duration
	Cut        shard.CutMode // where shards end: tight (the zero value) or stable
	// Sort orders the entries by their normalised loc before they are cut,
	// in bounded memory (spilling sorted runs to TmpDir), so that an export
	// in no stable order still gives stable shards.
	Sort bool
	// Dedup (implies Sort) keeps one row of each normalised loc, the first
	// in the order Ties sets, and rejects the others as encode.Duplicate.
	Dedup bool
	// Ties orders rows with equal locs under Sort, and so chooses the row
	// Dedup keeps: TieContent (the zero value) or TieInput.
	Ties TieOrder
	// TmpDir holds the sorted runs ("": os.TempDir()); SortMemory bounds
	// the entries held in memory (0: DefaultSortMemory).
	TmpDir     string
	SortMemory int
	Workers    int // encoding goroutines (0: GOMAXPROCS)
	GzipLevel  int // 1..9
	GzipProcs  int // goroutines per shard: 0 spreads each shard over all cores (pgzip), 1 compresses one shard per core
	// CompressAll compresses every sitemap, reusing no published file of
	// the same content: the same bytes, at the cost of a first night.
	CompressAll bool
	LastmodTZ   *time.Location
	Columns     [input.NumColumns]string // input column names ("" = default)
	// MediaQuery is the media attribute of media-alternate links
	// ("": encode.DefaultMediaQuery).
	MediaQuery string
	// SchemaLocation adds xmlns:xsi and xsi:schemaLocation (sitemap.xsd or
	// siteindex.xsd, and the schema of each extension namespace declared)
	// to the start tag of every file; the bytes count in MaxBytes.
	SchemaLocation bool
	Rejects        io.Writer // CSV of rejected rows (nil: none)
	// HreflangReport receives, as CSV, every hreflang alternate Google
	// would ignore (see internal/hreflang), when the run's input carries
	// alternates (nil: counted in Report.Hreflang only).
	HreflangReport io.Writer
	Log            *slog.Logger // nil: discard
	Progress       *Progress    // live counters (nil: none)

	// KeepGenerations is how many earlier generations (per the manifest)
	// stay in place after the switch, so that crawlers that fetched an older
	// root moments ago still find its files. 0 deletes them at once.
	KeepGenerations int
	// MaxShrink is the fraction (0..1) by which the URL count may fall
	// against the published manifest; a larger fall is refused
	// (publish.ErrShrink).
	MaxShrink float64
	Force     bool // publish despite MaxShrink
	// LockTTL is how long the destination's lock outlives a run that died
	// without releasing it, where the store cannot see it die (S3); 0:
	// publish.DefaultLockTTL.
	LockTTL time.Duration
	// LockWait is how long a run that finds the destination locked waits
	// for the lock (publish.Options.LockWait; 0: it fails at once).
	LockWait time.Duration
	// Now is the run's time: the index <lastmod> of every file whose content
	// changes, and the manifest's time (zero: the clock). Fixing it makes
	// runs reproducible.
	Now     time.Time
	DryRun  bool // everything but the writes; Report.Plan says what would happen (a Sink that is a *sink.DryRun is used as it is)
	Uploads int  // concurrent uploads to the sink (0: the sink's Connections)
	// SmallUploads is how many compressed files of at most sink.SmallFile
	// bytes are uploaded at once beside Uploads (0: the sink's
	// SmallConnections when it has them and Uploads is 0, else none; the
	// small files then share Uploads). A long tail of groups' sitemaps
	// are a few kilobytes each, one round trip apiece on S3.
	SmallUploads int
	// Verify, when set, is called with the root index's name and bytes after
	// every other file is written and before the root is published; an
	// error fails the run and nothing new is published. trusted reports
	// the files it need not read again (publish.Options.Verify).
	Verify func(ctx context.Context, root string, pending map[string][]byte, trusted func(name string) bool) error
	// Switched is publish.Options.Switched, told which set switched: it is
	// called after each set's switch, before its prune, with the set's
	// Place (its name, its store, its URLs) and its manifests before and
	// after. A grouped run calls it for several sets at once.
	Switched func(ctx context.Context, set Place, prev, next *publish.Manifest)
	// Group, when set, splits the rows into sitemap sets, one per group,
	// in the same pass (see Grouping).
	Group *Grouping
}

// DefaultNewsWindow is Config.NewsWindow's default: Google's news sitemaps
// list only articles "created in the last two days".
const DefaultNewsWindow = 48 * time.Hour

// MaxNewsURLs is the most URLs Google reads in one news sitemap.
const MaxNewsURLs = protocol.MaxNewsURLs

// ConfigError is a Config field whose value breaks the rule of its range.
type ConfigError struct {
	Field string // the Config field, e.g. "MaxURLs"
	Name  string // the field in words, e.g. "max URLs"
	Value any
	Rule  string // e.g. "must be 1..50000"
}

// Error returns "NAME VALUE: RULE".
func (e *ConfigError) Error() string { return fmt.Sprintf("%s %v: %s", e.Name, e.Value, e.Rule) }

// Validate checks c against the protocol and the contract. A value out of
// its range is a *ConfigError. The zero values that mean a default (see
// the fields) are valid.
func (c *Config) Validate() error {
	bad := func(field, name string, value any, rule string) error {
		return &ConfigError{Field: field, Name: name, Value: value, Rule: rule}
	}
	switch {
	case len(c.Inputs) == 0:
		return errors.New("no input files")
	case c.PublicURL == nil:
		return errors.New("public URL is required")
	case publish.ValidStem(c.Name) != nil:
		return publish.ValidStem(c.Name)
	case c.MaxURLs < 1 || c.MaxURLs > protocol.MaxURLs:
		return bad("MaxURLs", "max URLs", c.MaxURLs, fmt.Sprintf("must be 1..%d", protocol.MaxURLs))
	case c.MaxBytes < protocol.MinMaxBytes || c.MaxBytes > protocol.MaxFileBytes:
		return bad("MaxBytes", "max bytes", c.MaxBytes, fmt.Sprintf("must be %d..%d", protocol.MinMaxBytes, protocol.MaxFileBytes))
	case c.Fanout < 1 || c.Fanout > protocol.MaxIndexEntries:
		return bad("Fanout", "index fanout", c.Fanout, fmt.Sprintf("must be 1..%d", protocol.MaxIndexEntries))
	case c.MaxNewsURLs < 0 || c.MaxNewsURLs > protocol.MaxNewsURLs:
		return bad("MaxNewsURLs", "max news URLs", c.MaxNewsURLs, fmt.Sprintf("must be 1..%d", protocol.MaxNewsURLs))
	case c.NewsWindow < 0:
		return bad("NewsWindow", "news window", c.NewsWindow, "must be positive")
	case c.GzipLevel < 1 || c.GzipLevel > 9:
		return bad("GzipLevel", "gzip level", c.GzipLevel, "must be 1..9")
	case c.KeepGenerations < 0:
		return bad("KeepGenerations", "keep generations", c.KeepGenerations, "must be 0 or more")
	case !(c.MaxShrink >= 0 && c.MaxShrink <= 1):
		return bad("MaxShrink", "max shrink", c.MaxShrink, "must be 0..1 (0%..100%)")
	case c.Uploads < 0:
		return bad("Uploads", "uploads", c.Uploads, "must be 0 (the sink's connections) or more")
	case c.SmallUploads < 0:
		return bad("SmallUploads", "small uploads", c.SmallUploads, "must be 0 or more")
	case c.Workers < 0:
		return bad("Workers", "workers", c.Workers, "must be 0 (all cores) or more")
	case c.LockTTL < 0 || c.LockTTL > 0 && c.LockTTL < time.Second:
		return bad("LockTTL", "lock TTL", c.LockTTL, "must be at least 1s")
	case c.LockWait < 0:
		return bad("LockWait", "lock wait", c.LockWait, "must be 0 or more")
	case c.MediaQuery != "" && !encode.ValidMediaQuery(c.MediaQuery):
		return bad("MediaQuery", "media query", strconv.Quote(c.MediaQuery), "must be 1..1024 characters of valid UTF-8 without control characters (it is written into every media alternate)")
	}
	if err := c.validateGroup(); err != nil {
		return err
	}
	// Index <loc>s are the public URL plus a file name: both must fit the
	// protocol's 2,048 characters, and a full index its 50 MiB.
	longest := len(c.PublicURL.String()) + len(c.Name) + len("-index-0001-0123456789.xml") + 8
	if longest >= protocol.MaxLoc {
		return fmt.Errorf("public URL %s is too long: index <loc>s would reach %d characters (limit %d)", c.PublicURL, longest, protocol.MaxLoc-1)
	}
	frame := len(shard.IndexHeaderOf(c.SchemaLocation)) + len(shard.IndexFooter)
	if perEntry := longest + len("<sitemap><loc></loc><lastmod>2006-01-02T15:04:05.000000000+00:00</lastmod></sitemap>\n"); c.Fanout*perEntry > protocol.MaxFileBytes-frame {
		return bad("Fanout", "index fanout", c.Fanout, fmt.Sprintf("with this public URL an index could exceed %d bytes; use at most %d", protocol.MaxFileBytes, (protocol.MaxFileBytes-frame)/perEntry))
	}
	return nil
}

// withDefaults returns c with its zero values that mean a default set, the
// clock read as now.
func (c Config) withDefaults(now time.Time) Config {
	if c.Scope == nil {
		c.Scope = c.PublicURL
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.LastmodTZ == nil {
		c.LastmodTZ = time.UTC
	}
	if c.Uploads == 0 && c.Sink != nil {
		c.Uploads = c.Sink.Connections()
		if sp, ok := c.Sink.(sink.SmallPutter); ok && c.SmallUploads == 0 {
			c.SmallUploads = sp.SmallConnections()
		}
	}
	if c.Uploads == 0 { // groups with sinks of their own (Grouping.Place)
		c.Uploads = sink.LocalConnections
	}
	if c.Now.IsZero() {
		c.Now = now // one clock reading: the news window and the manifest agree
	}
	if c.MaxNewsURLs == 0 {
		c.MaxNewsURLs = MaxNewsURLs
	}
	if c.NewsWindow == 0 {
		c.NewsWindow = DefaultNewsWindow
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = new(Progress)
	}
	return c
}
