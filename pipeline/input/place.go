package input

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// A place is where inputs live: the local file system, standard input, an
// object store. Expanding the arguments, probing and opening the inputs are
// written once over it (expand.go, probe.go, open.go), in the manner of
// io/fs, so that a new place (GCS, Azure, HTTP) is one file implementing it.
// Names are the place's own: a path, an s3:// URL.
type place interface {
	// Stat returns the entry name stands for: an input, or a folder whose
	// inputs List gives. An error wrapping fs.ErrNotExist when there is
	// none, and for a name the place reads as a pattern.
	Stat(ctx context.Context, name string) (entry, error)
	// List returns the files below the folder, Hive key=value/ sub-folders
	// included, that keep accepts, in lexical order; names with a segment
	// starting with '_' or '.' (_SUCCESS, _delta_log/, .crc files) are
	// skipped.
	List(ctx context.Context, folder string, keep func(name string) bool) ([]entry, error)
	// Glob returns the files that match pattern, in lexical order.
	Glob(ctx context.Context, pattern string) ([]entry, error)
	// Success reports whether folder holds the _SUCCESS marker Spark and
	// Hadoop write last.
	Success(ctx context.Context, folder string) (bool, error)
	// Open returns the bytes of e from offset off on.
	Open(ctx context.Context, e entry, off int64) (io.ReadCloser, error)
	// ReaderAt returns e opened for reading by position.
	ReaderAt(ctx context.Context, e entry) (readerAt, error)
}

// entry is a file or folder of a place, as Stat or List found it.
type entry struct {
	name    string // as messages say it: a path, an s3:// URL
	dir     bool
	size    int64
	regular bool   // can be opened and read again (not a pipe or device)
	etag    string // the version every read is pinned to; "" for none
	sys     any    // the place's own: an os.FileInfo, an s3obj.Object
}

// readerAt is an input opened for reading by position. The one of an
// object in a store may also be a Prefetcher, an explainer and a counter.
type readerAt interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// An explainer is a reader of a place that remembers its first failure: a
// format reader may wrap it as corrupt input, or lose it in a panic, where
// the place's own one-line error is what people need. explain returns that
// error when reading failed because of it, else err.
type explainer interface{ explain(err error) error }

// A counter is a reader of a remote place that counts what it fetched.
type counter interface {
	fetched() (bytes, requests int64)
}

// placeOf returns the place of an argument; rem says how remote ones are
// read.
func (r *Remote) placeOf(ctx context.Context, arg string) (place, error) {
	switch {
	case arg == "-":
		return stdinPlace{}, nil
	case strings.HasPrefix(arg, "s3://"):
		return r.s3(ctx)
	}
	return localPlace{}, nil
}

// successMarker is the file Spark and Hadoop write last in an export.
const successMarker = "_SUCCESS"

// hasGlob reports whether name holds a filepath.Match meta character.
func hasGlob(name string) bool { return strings.ContainsAny(name, "*?[") }

// globFolder returns the folder of the first segment of pattern that holds
// a meta character, ending in '/' ("" for the current one).
func globFolder(pattern string) string {
	literal := pattern[:strings.IndexAny(pattern, `*?[\`)]
	return literal[:strings.LastIndex(literal, "/")+1]
}

// noInput is an argument that stands for no input file.
type noInput struct{ name, why string }

func (e *noInput) Error() string { return e.name + ": " + e.why }

// Is makes errors.Is(err, fs.ErrNotExist) hold.
func (e *noInput) Is(target error) bool { return target == fs.ErrNotExist }

// stdinPlace is standard input, the argument "-": one stream, read once.
// Open reads the stdin given to Probe and Open (see File.at).
type stdinPlace struct{ r io.Reader }

func (stdinPlace) Stat(context.Context, string) (entry, error) {
	return entry{name: "-"}, nil
}

func (stdinPlace) List(context.Context, string, func(string) bool) ([]entry, error) {
	return nil, errors.ErrUnsupported
}

func (stdinPlace) Glob(context.Context, string) ([]entry, error) { return nil, errors.ErrUnsupported }

func (stdinPlace) Success(context.Context, string) (bool, error) { return false, errors.ErrUnsupported }

func (p stdinPlace) Open(_ context.Context, _ entry, off int64) (io.ReadCloser, error) {
	if off != 0 {
		return nil, errors.ErrUnsupported
	}
	r := p.r
	if r == nil {
		r = os.Stdin
	}
	return io.NopCloser(r), nil
}

func (stdinPlace) ReaderAt(context.Context, entry) (readerAt, error) {
	return nil, errors.New("stdin: a format read by position cannot be read from stdin")
}
