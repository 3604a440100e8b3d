package input

import (
	"context"
	"log/slog"
	"sync"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// Remote says how s3:// inputs are found and read. The zero value reads
// them with the SDK's default configuration; the store is made at the first
// s3:// argument, so a run of local files loads no AWS configuration.
type Remote struct {
	S3 s3obj.Options
	// RequireSuccess refuses a prefix (or a local folder) without a
	// _SUCCESS marker: Spark and Hadoop write it last.
	RequireSuccess bool
	// PrefetchBytes bounds the prefetched data, held or in flight, of one
	// Parquet or Arrow object (0: DefaultPrefetchBytes).
	PrefetchBytes int64
	// Log receives the warnings of ExpandRemote (nil: slog.Default()).
	Log *slog.Logger

	mu      sync.Mutex
	store   *s3obj.Store
	skipped []string // see SkippedFiles
}

// DefaultPrefetchBytes is the prefetch budget of one object read by
// position: room for a row group's mapped column chunks and the next one's
// in flight, small enough that several parts decoded at once stay far
// below the run's memory bound.
const DefaultPrefetchBytes = 32 << 20

// Fetched returns the requests made and the object bytes received from the
// store so far (zero before the first s3:// argument).
func (r *Remote) Fetched() s3obj.Stats {
	if r == nil {
		return s3obj.Stats{}
	}
	r.mu.Lock()
	s := r.store
	r.mu.Unlock()
	if s == nil {
		return s3obj.Stats{}
	}
	return s.Totals()
}

// s3 returns the S3 place, making its store at the first call.
func (r *Remote) s3(ctx context.Context) (place, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store == nil {
		s, err := s3obj.New(ctx, r.S3)
		if err != nil {
			return nil, err
		}
		r.store = s
	}
	return &s3Place{store: r.store, budget: r.PrefetchBytes}, nil
}

// log returns where ExpandRemote's warnings go.
func (r *Remote) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

// ObjectInfo is what the report says of an input read from a store.
type ObjectInfo struct {
	Size     int64
	ETag     string
	Fetched  int64 // object bytes received, the probe's included
	Requests int64
}

// Object returns what is known of f when it is an object in a store.
func (f *File) Object() (ObjectInfo, bool) {
	if f.ent.etag == "" {
		return ObjectInfo{}, false
	}
	return ObjectInfo{Size: f.ent.size, ETag: f.ent.etag, Fetched: f.got.bytes.Load(), Requests: f.got.requests.Load()}, true
}

// ByteRange is the byte range [Off, Off+Len) of an input.
type ByteRange struct{ Off, Len int64 }

// Prefetcher is implemented by the io.ReaderAt a format's OpenAt gets for an
// object in a store: Prefetch starts fetching ranges the reader will read
// soon (a Parquet reader's next column chunks), in memory bounded by the
// store's reader, and returns at once. Each range is meant to be read once.
type Prefetcher interface {
	Prefetch([]ByteRange)
}
