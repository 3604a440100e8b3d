// Package input is the input stage of a run: it finds the files the
// arguments name (files, folders, globs, stdin), learns the extension
// namespaces of all of them before the first row is encoded, and opens each
// as a Source that fills Batches of rows. The formats themselves are read by
// the packages below it (csvscan, pqread, arrowread), which register here;
// nothing outside pipeline/input/... parses input bytes.
package input

import (
	"io"
	"strings"
	"sync"

	"github.com/sitemapgen/sitemapgen/encode"
)

// Source is an opened input that fills batches: CSV, Parquet or Arrow IPC.
// It is called once per batch, never per row.
type Source interface {
	// Fill appends rows to b, about chunk bytes of input (chunk <= 0:
	// DefaultChunk); io.EOF when the source is exhausted and no row was
	// added. Errors are sticky.
	Fill(b *Batch, chunk int) error
	// Rows reports the data rows handed out so far.
	Rows() int64
	// Extensions returns the extension columns of the input; for CSV they
	// are known after the first Fill.
	Extensions() []encode.ExtColumn
	// Close releases the input.
	Close() error
}

// DefaultChunk is the input a batch holds when Fill is given chunk <= 0:
// big enough that per-batch costs vanish (some 6,000 rows), small enough
// that the batches in flight stay a small part of the heap. At 1 MiB a
// batch with its views and encoded output took ~5 MB, and the dozen a
// 2-core run keeps in flight made up a third of its live heap.
const DefaultChunk = 512 << 10

// MaxBatchRows caps the rows of one columnar batch, whatever their size, so
// a column of tiny values cannot make a batch's row slices huge.
const MaxBatchRows = 64 << 10

// Format is a kind of input file, registered by the package that reads it.
// A format read by position (Parquet, Arrow IPC) has OpenAt; the stream
// format (CSV, the default for names no other format claims) has NewStream.
type Format struct {
	Name string   // for messages: "Parquet"
	Ext  []string // lower-case file name suffixes that select it: ".parquet"

	// OpenAt reads the input of size bytes in r, named name: a local file,
	// or an object in a store, whose r may be a Prefetcher. Closing r is
	// the caller's job.
	OpenAt func(r io.ReaderAt, size int64, name string, opt Options) (Source, error)
	// NewStream reads the input r, named name (gzip already unwrapped);
	// closing it is the caller's job.
	NewStream func(r io.Reader, name string, opt Options) Source
}

var (
	formatsMu sync.Mutex
	formats   []*Format // by position
	stream    *Format   // the stream format
)

// Register makes a format known to Open and Expand. It is called from the
// init function of the package that reads the format; a second stream
// format, or a format with neither OpenAt nor NewStream, panics.
func Register(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	switch {
	case f.NewStream != nil && stream == nil:
		stream = &f
	case f.OpenAt != nil && f.NewStream == nil:
		formats = append(formats, &f)
	default:
		panic("input: bad Register of format " + f.Name)
	}
}

// formatOf returns the format of the file name: the one that claims its
// suffix, else the stream format.
func formatOf(name string) *Format {
	n := strings.ToLower(name)
	formatsMu.Lock()
	defer formatsMu.Unlock()
	for _, f := range formats {
		for _, ext := range f.Ext {
			if strings.HasSuffix(n, ext) {
				return f
			}
		}
	}
	if stream == nil {
		panic("input: no stream format registered (import pipeline/input/csvscan)")
	}
	return stream
}
