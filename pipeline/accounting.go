package pipeline

import (
	"sync/atomic"

	"github.com/sitemapgen/sitemapgen/encode"
)

const numWarnings = encode.NumWarnings

// Reject is one rejected input row.
type Reject struct {
	Line       int64         // as Batch.Line
	Reason     encode.Reason // why
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
	if n == 0 {
		return
	}
	if c.ByReason == nil {
		c.ByReason = map[string]int64{}
	}
	c.ByReason[reason] += n
	c.Total += n
}

// Report is what a run did, for machines. rows = urls + rejected.total.
type Report struct {
	Rows              int64              `json:"rows"`
	URLs              int64              `json:"urls"`
	Rejected          Counts             `json:"rejected"`
	Warnings          Counts             `json:"warnings"`
	Shards            int                `json:"shards"`
	Indexes           int                `json:"indexes"`
	GzipLevel         int                `json:"gzip_level"`
	BytesUncompressed int64              `json:"bytes_uncompressed"`
	BytesCompressed   int64              `json:"bytes_compressed"`
	Seconds           float64            `json:"seconds"`
	Inputs            []InputReport      `json:"inputs"`
	Root              string             `json:"root,omitempty"`   // URL of the root index
	Submit            []string           `json:"submit,omitempty"` // index URLs for robots.txt / Search Console
	Files             []string           `json:"files,omitempty"`  // files published, root last
	Deleted           []string           `json:"deleted,omitempty"`
	StageSeconds      map[string]float64 `json:"stage_seconds"`        // busy time per stage, summed over its goroutines
	Generation        int64              `json:"generation,omitempty"` // the manifest's generation now published
	Uploaded          Transfer           `json:"uploaded"`             // files written to the sink (or, dry run, to be written)
	Skipped           Transfer           `json:"skipped"`              // unchanged files already in the sink
	DryRun            bool               `json:"dry_run,omitempty"`
	Plan              *Plan              `json:"plan,omitempty"` // dry run only
	Error             string             `json:"error,omitempty"`
}

// Transfer counts files and bytes, and the shards among them.
type Transfer struct {
	Files      int   `json:"files"`
	Bytes      int64 `json:"bytes"`
	Shards     int   `json:"shards"`
	ShardBytes int64 `json:"shard_bytes"`
}

func (t *Transfer) add(size int64, isShard bool) {
	t.Files++
	t.Bytes += size
	if isShard {
		t.Shards++
		t.ShardBytes += size
	}
}

// Plan is what a dry run would do: files to upload, files already in place
// (skipped), and files the prune after the switch would delete.
type Plan struct {
	Upload []string `json:"upload"`
	Skip   []string `json:"skip"`
	Delete []string `json:"delete"`
}

// InputReport is the share of one input file.
type InputReport struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
}

// stage timers, in nanoseconds.
type stageTimes struct {
	read, encode, cut, compress, write atomic.Int64
}

func (t *stageTimes) seconds() map[string]float64 {
	return map[string]float64{
		"read":     float64(t.read.Load()) / 1e9,
		"encode":   float64(t.encode.Load()) / 1e9,
		"cut":      float64(t.cut.Load()) / 1e9,
		"compress": float64(t.compress.Load()) / 1e9,
		"write":    float64(t.write.Load()) / 1e9,
	}
}
