package pipeline

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/publish"
)

const numWarnings = encode.NumWarnings

// Reject is one rejected input row.
type Reject struct {
	Line       int64         // as Batch.Line
	Reason     encode.Reason // why
	Group      int32         // the index of the row's group; -1: none (no groups, or the row has none)
	start, end uint32        // the raw loc in Batch.RejectBuf
}

// Progress holds live counters a caller may read while a run goes on.
type Progress struct {
	Rows     atomic.Int64 // input rows encoded or rejected
	URLs     atomic.Int64 // entries placed in shards
	Rejected atomic.Int64
	Shards   atomic.Int64 // shards written to the sink
}

// Counts is a total and its split by reason.
type Counts struct {
	Total    int64            `json:"total"`
	ByReason map[string]int64 `json:"by_reason"`
}

func (c *Counts) add(reason string, n int64) {
	if c.ByReason == nil {
		c.ByReason = map[string]int64{}
	}
	if n == 0 {
		return
	}
	c.ByReason[reason] += n
	c.Total += n
}

// Report is what a run did, for machines. rows = urls + rejected.total +
// unfinished.
type Report struct {
	shardBuffers int // uncompressed shard buffers the run allocated (tests bound it)
	shardBlocks  int // the blocks of the run's pool that hold them (tests bound it)

	Rows              int64              `json:"rows"`
	URLs              int64              `json:"urls"`
	Rejected          Counts             `json:"rejected"`
	Unfinished        int64              `json:"unfinished"` // rows read but not yet encoded or rejected when the run failed
	Warnings          Counts             `json:"warnings"`
	Shards            int                `json:"shards"`
	News              *NewsReport        `json:"news,omitempty"`     // runs whose input carries news columns
	ShardsNew         int                `json:"shards_new"`         // not in the published set
	ShardsUnchanged   int                `json:"shards_unchanged"`   // in it, same bytes
	ShardsRemoved     int                `json:"shards_removed"`     // only in the published set
	RobotsChanged     bool               `json:"robots_changed"`     // the Sitemap: lines differ from the published ones
	Sort              *SortReport        `json:"sort,omitempty"`     // --sort / --dedup only
	Hreflang          *HreflangReport    `json:"hreflang,omitempty"` // runs whose input carries hreflang alternates
	Indexes           int                `json:"indexes"`
	GzipLevel         int                `json:"gzip_level"`
	BytesUncompressed int64              `json:"bytes_uncompressed"`
	BytesCompressed   int64              `json:"bytes_compressed"`
	Seconds           float64            `json:"seconds"`
	Inputs            []InputReport      `json:"inputs"`
	BytesFetched      int64              `json:"bytes_fetched,omitempty"` // object bytes received from the input store, listings excluded
	Requests          int64              `json:"requests,omitempty"`      // requests to the input store (LIST, HEAD, GET)
	Published         bool               `json:"published"`               // the new root index is in place
	Root              string             `json:"root,omitempty"`          // URL of the root index
	Submit            []string           `json:"submit,omitempty"`        // index URLs for robots.txt / Search Console
	Files             []string           `json:"files,omitempty"`         // files published, root last
	Deleted           []string           `json:"deleted"`
	StageSeconds      map[string]float64 `json:"stage_seconds"`        // busy time per stage, summed over its goroutines
	Generation        int64              `json:"generation,omitempty"` // the manifest's generation now published
	Uploaded          publish.Transfer   `json:"uploaded"`             // files written to the sink (or, dry run, to be written)
	Skipped           publish.Transfer   `json:"skipped"`              // unchanged files already in the sink
	Reused            int                `json:"reused"`               // of those, sitemaps not even compressed: their content was published
	DryRun            bool               `json:"dry_run,omitempty"`
	Plan              *Plan              `json:"plan,omitempty"` // dry run only
	// Groups are the sets of a grouped run (--group-by), by name; the
	// fields above add them up (rows and rejected also count the rows of
	// no group).
	Groups []GroupReport `json:"groups,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// GroupReport is one group's set in a grouped run.
type GroupReport struct {
	Group           string   `json:"group"`
	Name            string   `json:"name"`        // its file name stem
	PublicURL       string   `json:"public_url"`  // where its files are served from
	Destination     string   `json:"destination"` // where they are published
	Rows            int64    `json:"rows"`        // rows of the group: urls + rejected
	URLs            int64    `json:"urls"`
	Rejected        Counts   `json:"rejected"`
	Shards          int      `json:"shards"`
	Indexes         int      `json:"indexes"`
	News            int      `json:"news_sitemaps,omitempty"`
	ShardsNew       int      `json:"shards_new"`
	ShardsUnchanged int      `json:"shards_unchanged"`
	ShardsRemoved   int      `json:"shards_removed"`
	Published       bool     `json:"published"`
	Generation      int64    `json:"generation,omitempty"` // its manifest's generation now published
	Root            string   `json:"root,omitempty"`
	Submit          []string `json:"submit,omitempty"` // its robots lines: the index URLs to submit
	RobotsChanged   bool     `json:"robots_changed"`
	Files           []string `json:"files,omitempty"`
	Deleted         []string `json:"deleted,omitempty"`
	// Vanished: published before, no row in this input; left as it was.
	Vanished bool `json:"vanished,omitempty"`
}

// NewReport returns the empty report of a run at gzipLevel: what a run that
// fails before reading anything reports.
func NewReport(gzipLevel int) *Report {
	return &Report{GzipLevel: gzipLevel,
		Rejected: Counts{ByReason: map[string]int64{}}, Warnings: Counts{ByReason: map[string]int64{}}}
}

// NewsReport counts the news sitemaps of a run. The news items left out
// (invalid, expired, in the future) are counted in Report.Warnings.
type NewsReport struct {
	Sitemaps int   `json:"sitemaps"` // news sitemaps published (one, empty, when no article is fresh)
	URLs     int64 `json:"urls"`     // news items written
	// Window is the news window the run used, from Oldest to Newest
	// (W3C datetimes, UTC).
	Oldest string `json:"oldest"`
	Newest string `json:"newest"`
}

// Plan is what a dry run would do: files to upload, files already in place
// (skipped), and files the prune after the switch would delete.
type Plan struct {
	Upload []string `json:"upload"`
	Skip   []string `json:"skip"`
	Delete []string `json:"delete"`
}

// InputReport is the share of one input file; an object in a store also
// says its size, ETag (the version read) and what reading it cost.
type InputReport struct {
	Name     string `json:"name"`
	Rows     int64  `json:"rows"`
	Size     int64  `json:"size,omitempty"`
	ETag     string `json:"etag,omitempty"`
	Fetched  int64  `json:"bytes_fetched,omitempty"` // object bytes received, the probe's included
	Requests int64  `json:"requests,omitempty"`
}

func inputReport(f *input.File, rows int64) InputReport {
	ir := InputReport{Name: f.Name(), Rows: rows}
	if o, ok := f.Object(); ok {
		ir.Size, ir.ETag, ir.Fetched, ir.Requests = o.Size, o.ETag, o.Fetched, o.Requests
	}
	return ir
}

// stage timers, in nanoseconds.
type stageTimes struct {
	read, encode, cut, hash, compress, write atomic.Int64
}

func (t *stageTimes) seconds() map[string]float64 {
	return map[string]float64{
		"read":     float64(t.read.Load()) / 1e9,
		"encode":   float64(t.encode.Load()) / 1e9,
		"cut":      float64(t.cut.Load()) / 1e9,
		"hash":     float64(t.hash.Load()) / 1e9,
		"compress": float64(t.compress.Load()) / 1e9,
		"write":    float64(t.write.Load()) / 1e9,
	}
}

// FolderFileSkipped is the report's warning reason of a CSV or text file in
// a folder (or s3:// prefix) named as an input: a folder stands for its
// Parquet and Arrow files, so the file is not read. Counted per file.
const FolderFileSkipped = "folder_file_skipped"

// MaxRejectValue is the most bytes of a rejected value the rejects file
// holds; a longer value is cut there and marked "…[cut: N bytes]".
const MaxRejectValue = 4 << 10

// rejectWriter writes the rejects CSV (source,row,reason,value) through one
// reused buffer: a file of bad rows must not cost an allocation each.
type rejectWriter struct {
	w       io.Writer
	grouped bool
	buf     []byte
	cut     []byte // a value cut to MaxRejectValue, reused
}

// newRejectWriter returns the writer of w, its header buffered; grouped,
// each row also names its group (a fifth column, empty when the row has
// none).
func newRejectWriter(w io.Writer, grouped bool) *rejectWriter {
	return &rejectWriter{w: w, grouped: grouped, buf: append(make([]byte, 0, 64<<10), RejectsHeader(grouped)...)}
}

// RejectsHeader is the first line of a rejects file: its column names,
// with the group's when the run is grouped.
func RejectsHeader(grouped bool) string {
	if grouped {
		return "source,row,reason,value,group\n"
	}
	return "source,row,reason,value\n"
}

func (rw *rejectWriter) write(source string, row int64, reason encode.Reason, value []byte, group string) error {
	rw.buf = appendCSVField(rw.buf, source)
	rw.buf = append(rw.buf, ',')
	rw.buf = strconv.AppendInt(rw.buf, row, 10)
	rw.buf = append(rw.buf, ',')
	rw.buf = append(rw.buf, reason.String()...)
	rw.buf = append(rw.buf, ',')
	if len(value) > MaxRejectValue {
		// A rejects file is read by people and spreadsheets: a 15 MB value
		// helps neither. Cut at a character boundary and say so.
		n := MaxRejectValue
		for n > 0 && !utf8.RuneStart(value[n]) {
			n--
		}
		cut := append(rw.cut[:0], value[:n]...)
		cut = append(cut, "…[cut: "...)
		cut = strconv.AppendInt(cut, int64(len(value)), 10)
		cut = append(cut, " bytes]"...)
		rw.cut, value = cut, cut
	}
	rw.buf = appendCSVField(rw.buf, value)
	if rw.grouped {
		rw.buf = append(append(rw.buf, ','), group...) // a group name needs no quotes
	}
	rw.buf = append(rw.buf, '\n')
	if len(rw.buf) >= 64<<10 {
		return rw.flush()
	}
	return nil
}

func (rw *rejectWriter) flush() error {
	if len(rw.buf) == 0 {
		return nil
	}
	_, err := rw.w.Write(rw.buf)
	rw.buf = rw.buf[:0]
	if err != nil {
		return fmt.Errorf("rejects: %w", err)
	}
	return nil
}

// appendCSVField appends s as one CSV field, quoted when it needs quoting.
func appendCSVField[T string | []byte](dst []byte, s T) []byte {
	quote := len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == ' ')
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			quote = true
		}
	}
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}
