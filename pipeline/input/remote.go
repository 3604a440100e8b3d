package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

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

	mu    sync.Mutex
	store *s3obj.Store
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

func (r *Remote) open(ctx context.Context) (*s3obj.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store == nil {
		s, err := s3obj.New(ctx, r.S3)
		if err != nil {
			return nil, err
		}
		r.store = s
	}
	return r.store, nil
}

// Expand is ExpandRemote without s3:// arguments' options: the SDK's
// default configuration, no _SUCCESS required.
func Expand(args []string) ([]File, error) {
	return ExpandRemote(context.Background(), args, nil)
}

// expandObjects lists the objects an s3:// argument stands for (see
// s3obj.Store.List). A prefix keeps the formats read by position, as a
// local folder does; ctx bounds every later read of them.
func (r *Remote) expandObjects(ctx context.Context, arg string, i int) ([]File, error) {
	if r == nil {
		r = &Remote{}
	}
	s, err := r.open(ctx)
	if err != nil {
		return nil, err
	}
	objs, err := s.List(ctx, arg, s3obj.ListOptions{
		RequireSuccess: r.RequireSuccess,
		Keep:           func(key string) bool { return formatOf(key).Open != nil },
	})
	if err != nil {
		return nil, err
	}
	files := make([]File, len(objs))
	for k, o := range objs {
		files[k] = File{
			Path: o.String(), Arg: i, Listed: len(objs) > 1 || o.String() != arg,
			Regular: true, // pinned to its ETag, it can be read again
			format:  formatOf(o.Key),
			obj:     &object{Object: o, store: s, ctx: ctx, budget: r.PrefetchBytes},
		}
	}
	return files, nil
}

// checkSuccess refuses the local folder dir when r requires a _SUCCESS
// marker and dir has none.
func (r *Remote) checkSuccess(dir string) error {
	if r == nil || !r.RequireSuccess {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, s3obj.Success)); err != nil {
		return fmt.Errorf("%s: has no _SUCCESS marker (--require-success): the export is not complete", dir)
	}
	return nil
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
	o := f.obj
	if o == nil {
		return ObjectInfo{}, false
	}
	return ObjectInfo{Size: o.Size, ETag: o.ETag, Fetched: o.bytes.Load(), Requests: o.requests.Load()}, true
}

// object is an input in a store, pinned to the version it was listed with.
type object struct {
	s3obj.Object
	store  *s3obj.Store
	ctx    context.Context // the run's: it bounds every read of the object
	budget int64

	bytes, requests atomic.Int64 // of the readers closed so far
}

func (o *object) count(s s3obj.Stats) {
	o.bytes.Add(s.Bytes)
	o.requests.Add(s.Requests)
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

// objectReaderAt is an object's s3obj.ReaderAt that remembers its first
// error: a format reader may wrap it as corrupt input, or lose it in a
// panic, where the store's own one-line error is what people need.
type objectReaderAt struct {
	*s3obj.ReaderAt
	mu  sync.Mutex
	err error
}

func (r *objectReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ReaderAt.ReadAt(p, off)
	if err != nil && err != io.EOF {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *objectReaderAt) Prefetch(rs []ByteRange) {
	out := make([]s3obj.Range, len(rs))
	for i, x := range rs {
		out[i] = s3obj.Range{Off: x.Off, Len: x.Len}
	}
	r.ReaderAt.Prefetch(out)
}

func (r *objectReaderAt) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// objectStream is an object's s3obj.Stream that remembers its error, as
// objectReaderAt does.
type objectStream struct {
	*s3obj.Stream
	err error
}

func (s *objectStream) Read(p []byte) (int, error) {
	n, err := s.Stream.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *objectStream) failure() error { return s.err }

// storeError returns the store's error when the reading failed because of
// one, else err: "s3://bucket/key: the object changed during the run",
// not a corrupt file.
func storeError(err error, failure func() error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var se *s3obj.Error
	if f := failure(); f != nil && (errors.As(f, &se) || !errors.As(err, &se)) {
		return f
	}
	return err
}

// openAt opens an object of a format read by position.
func (o *object) openAt(f *File, opt Options) (Source, error) {
	budget := o.budget
	if budget <= 0 {
		budget = DefaultPrefetchBytes
	}
	r := &objectReaderAt{ReaderAt: o.store.NewReaderAt(o.ctx, o.Object, s3obj.ReaderOptions{MaxBytes: budget})}
	src, err := f.format.OpenAt(r, o.Size, f.Path, opt)
	if err != nil {
		err = storeError(err, r.failure)
		r.Close()
		o.count(r.Stats())
		return nil, err
	}
	return &objectSource{Source: src, o: o, failure: r.failure, stats: r.Stats, close: r.Close}, nil
}

// stream opens an object of the stream format: one GET, resumed where a
// dropped connection left off.
func (o *object) stream() *objectStream {
	return &objectStream{Stream: o.store.NewStream(o.ctx, o.Object)}
}

// objectSource is a Source over an object: its errors are the store's when
// the store failed, and closing it counts what it fetched.
type objectSource struct {
	Source
	o       *object
	failure func() error
	stats   func() s3obj.Stats
	close   func() error
	closed  bool
}

func (s *objectSource) Fill(b *Batch, chunk int) error {
	return storeError(s.Source.Fill(b, chunk), s.failure)
}

func (s *objectSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Source.Close()
	if cerr := s.close(); err == nil {
		err = cerr
	}
	s.o.count(s.stats())
	return err
}

// openObject opens the object f names.
func openObject(f *File, opt Options) (Source, error) {
	o := f.obj
	if f.format.OpenAt != nil {
		return o.openAt(f, opt)
	}
	st := o.stream()
	src, err := newStreamSource(f, st, st.Close, opt)
	if err != nil {
		err = storeError(err, st.failure)
		st.Close()
		o.count(st.Stats())
		return nil, err
	}
	return &objectSource{Source: src, o: o, failure: st.failure, stats: st.Stats, close: func() error { return nil }}, nil
}
