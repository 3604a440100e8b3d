package input

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// s3Place is an S3 bucket or an S3-compatible store: s3://bucket/key
// objects, prefixes ending in '/' (or named without it when no object has
// that name) and patterns (see s3obj.Store.Glob). Every object is pinned to
// the ETag it was listed with.
type s3Place struct {
	store  *s3obj.Store
	budget int64 // prefetch bytes of one object read by position
}

func s3Entry(o s3obj.Object) entry {
	return entry{name: o.String(), size: o.Size, regular: true, etag: o.ETag, sys: o}
}

func (p *s3Place) Stat(ctx context.Context, name string) (entry, error) {
	bucket, key, err := s3obj.ParseURL(name)
	switch {
	case err != nil:
		return entry{}, err
	case s3obj.IsPattern(key):
		return entry{}, &noInput{name, "a pattern, not an object"}
	case key == "" || strings.HasSuffix(key, "/"):
		return entry{name: name, dir: true}, nil
	}
	o, err := p.store.Stat(ctx, bucket, key)
	if errors.Is(err, s3obj.ErrNotExist) {
		// A "folder" named without its slash, as a local folder may be.
		if dir, lerr := p.store.IsFolder(ctx, bucket, key+"/"); lerr != nil || dir {
			return entry{name: name + "/", dir: true}, lerr
		}
	}
	if err != nil {
		return entry{}, err
	}
	return s3Entry(o), nil
}

func (p *s3Place) List(ctx context.Context, folder string, keep func(string) bool) ([]entry, error) {
	bucket, prefix, err := s3obj.ParseURL(folder)
	if err != nil {
		return nil, err
	}
	objs, err := p.store.ListFolder(ctx, bucket, prefix, keep)
	return s3Entries(objs), err
}

func (p *s3Place) Glob(ctx context.Context, pattern string) ([]entry, error) {
	bucket, key, err := s3obj.ParseURL(pattern)
	if err != nil {
		return nil, err
	}
	objs, err := p.store.Glob(ctx, bucket, key)
	return s3Entries(objs), err
}

func s3Entries(objs []s3obj.Object) []entry {
	ents := make([]entry, len(objs))
	for i, o := range objs {
		ents[i] = s3Entry(o)
	}
	return ents
}

func (p *s3Place) Success(ctx context.Context, folder string) (bool, error) {
	bucket, prefix, err := s3obj.ParseURL(folder)
	if err != nil {
		return false, err
	}
	return p.store.HasSuccess(ctx, bucket, prefix)
}

// Open returns one GET of the object, resumed where a dropped connection
// left off.
func (p *s3Place) Open(ctx context.Context, e entry, off int64) (io.ReadCloser, error) {
	return &objectStream{Stream: p.store.NewStreamAt(ctx, e.sys.(s3obj.Object), off)}, nil
}

// ReaderAt returns a reader by ranged GETs that prefetches what a format
// announces (a Parquet reader's next column chunks) within the budget.
func (p *s3Place) ReaderAt(ctx context.Context, e entry) (readerAt, error) {
	budget := p.budget
	if budget <= 0 {
		budget = DefaultPrefetchBytes
	}
	o := e.sys.(s3obj.Object)
	return &objectReaderAt{ReaderAt: p.store.NewReaderAt(ctx, o, s3obj.ReaderOptions{MaxBytes: budget})}, nil
}

// objectReaderAt is an object's s3obj.ReaderAt that remembers its first
// error (an explainer) and counts what it fetched (a counter).
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

func (r *objectReaderAt) explain(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return storeError(err, r.err)
}

func (r *objectReaderAt) fetched() (int64, int64) {
	st := r.Stats()
	return st.Bytes, st.Requests
}

// objectStream is an object's s3obj.Stream that remembers its error and
// counts what it fetched, as objectReaderAt does.
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

func (s *objectStream) explain(err error) error { return storeError(err, s.err) }

func (s *objectStream) fetched() (int64, int64) {
	st := s.Stats()
	return st.Bytes, st.Requests
}

// storeError returns the store's error when the reading failed because of
// one, else err: "s3://bucket/key: the object changed during the run",
// not a corrupt file.
func storeError(err, failure error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var se *s3obj.Error
	if failure != nil && (errors.As(failure, &se) || !errors.As(err, &se)) {
		return failure
	}
	return err
}
