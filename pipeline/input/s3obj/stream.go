package s3obj

import (
	"context"
	"io"
)

// Stream is an object read from start to end with one GET pinned to its
// ETag (CSV, text, .gz, Arrow streams). When the connection drops in the
// middle of the body it resumes with a Range GET from the last byte
// received (pinned too), with backoff, at most Options.Resumes times
// without ResumeProgress bytes received in between, so the reader sees one uninterrupted byte stream of exactly
// the listed size. It is not safe for concurrent use.
type Stream struct {
	s       *Store
	ctx     context.Context
	o       Object
	b       io.ReadCloser
	pos     int64
	resumes int   // since ResumeProgress bytes were last received
	since   int64 // bytes received since the last resume
	err     error
	c       Counter
}

// ResumeProgress is the progress after which a Stream's count of resumes
// starts again: a connection that keeps dropping before it delivers that
// much fails after Options.Resumes resumes; one that drops now and then in
// a long object is resumed each time.
const ResumeProgress = 1 << 20

// NewStream returns a Stream of o; the first Read sends the GET.
func (s *Store) NewStream(ctx context.Context, o Object) *Stream {
	return &Stream{s: s, ctx: ctx, o: o}
}

// NewStreamAt returns a Stream of o from byte off on (0 <= off <= o.Size).
func (s *Store) NewStreamAt(ctx context.Context, o Object, off int64) *Stream {
	return &Stream{s: s, ctx: ctx, o: o, pos: min(max(off, 0), o.Size)}
}

// Read reads the next bytes of the object. Errors name it and are sticky.
func (r *Stream) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if r.b == nil {
			if r.pos == r.o.Size {
				r.err = io.EOF
				return 0, io.EOF
			}
			b, err := r.s.get(r.ctx, r.o, r.pos, -1, &r.c)
			if err != nil {
				r.err = err
				return 0, err
			}
			r.b = b
		}
		n, err := r.b.Read(p)
		r.pos += int64(n)
		if r.since += int64(n); r.since >= ResumeProgress {
			r.resumes = 0
		}
		if err == nil || err == io.EOF && n > 0 {
			return n, nil
		}
		r.b.Close()
		r.b = nil
		if err == io.EOF {
			continue // the end, checked above against the listed size
		}
		if !resumable(r.ctx, err) || r.resumes >= r.s.resumes {
			r.err = r.s.readErr(r.ctx, r.o, err)
			return n, r.err
		}
		r.resumes++
		r.since = 0
		if err := backoff(r.ctx, r.resumes); err != nil {
			r.err = r.s.readErr(r.ctx, r.o, err)
			return n, r.err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// Object returns the object read.
func (r *Stream) Object() Object { return r.o }

// Stats returns the requests made and the bytes received so far.
func (r *Stream) Stats() Stats { return r.c.Load() }

// Close releases the connection; reads after it fail.
func (r *Stream) Close() error {
	if r.b != nil {
		r.b.Close()
		r.b = nil
	}
	if r.err == nil {
		r.err = io.ErrClosedPipe
	}
	return nil
}
