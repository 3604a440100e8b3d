package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sitemapgen/sitemapgen/internal/gunzip"
)

// Open opens f as a Source, or takes the handle Probe held for it (f holds
// it no more after). stdin is read for "-". A stream input is unwrapped
// from gzip, recognised by its magic number rather than by its name, and
// read one URL per line when its name ends in .txt (or .txt.gz).
func Open(f *File, stdin io.Reader, opt Options) (Source, error) {
	if f.format.OpenAt != nil {
		return openAt(f, opt)
	}
	var raw io.ReadCloser
	if h := f.held; h != nil {
		f.held = nil // taken: closing it is now the Source's job
		raw = h
	} else {
		var err error
		if raw, err = f.at(stdin).Open(f.context(), f.ent, 0); err != nil {
			return nil, err
		}
	}
	src, err := newStreamSource(f, raw, opt)
	return f.opened(src, raw, err)
}

// context returns the run's context for reads of f.
func (f *File) context() context.Context {
	if f.ctx == nil {
		return context.Background()
	}
	return f.ctx
}

// openAt opens f, of a format read by position.
func openAt(f *File, opt Options) (Source, error) {
	r, err := f.at(nil).ReaderAt(f.context(), f.ent)
	if err != nil {
		return nil, err
	}
	src, err := f.format.OpenAt(r, r.Size(), f.Path, opt)
	return f.opened(src, r, err)
}

// opened returns src, read from r, as a placeSource; when opening it
// failed (err), the place's error if the place failed, r closed and counted.
func (f *File) opened(src Source, r io.Closer, err error) (Source, error) {
	if err != nil {
		err = explain(err, r)
		r.Close()
		f.count(r)
		return nil, err
	}
	return &placeSource{Source: src, f: f, r: r}, nil
}

// explain returns the error of the place's reader r when reading failed
// because of it (see explainer), else err.
func explain(err error, r any) error {
	if x, ok := r.(explainer); ok {
		return x.explain(err)
	}
	return err
}

// placeSource is a Source over a reader of a place: its errors are the
// place's when the place failed, and closing it closes the reader and
// counts what it fetched.
type placeSource struct {
	Source
	f      *File
	r      io.Closer
	closed bool
}

func (s *placeSource) Fill(b *Batch, chunk int) error {
	return explain(s.Source.Fill(b, chunk), s.r)
}

func (s *placeSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Source.Close()
	if cerr := s.r.Close(); err == nil {
		err = cerr
	}
	s.f.count(s.r)
	return err
}

// newStreamSource reads raw, the bytes of the stream input f.
func newStreamSource(f *File, raw io.Reader, opt Options) (Source, error) {
	name := f.Name()
	lower := strings.TrimSuffix(strings.ToLower(f.Path), ".gz")
	opt.Lines = strings.HasSuffix(lower, ".txt")

	in := &countingReader{r: raw}
	br := bufio.NewReaderSize(in, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var r io.Reader = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gunzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		r = &gzipStream{zr: zr, in: in, br: br}
	}
	return f.format.NewStream(r, name, opt), nil
}

// countingReader counts the bytes read through it and keeps its error.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// gzipStream is the decompressed bytes of a gzip input. A damaged stream's
// error says where in the file the damage was found (the stream format's
// reader adds the line); an error of the input itself is left as it is.
type gzipStream struct {
	zr *gunzip.Reader
	in *countingReader
	br *bufio.Reader // between in and zr
}

func (g *gzipStream) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF && g.in.err == nil {
		off := g.in.n - int64(g.br.Buffered())
		where := fmt.Sprintf("byte %d of the file", off)
		if err == io.ErrUnexpectedEOF {
			where += ": it is cut short"
		}
		if strings.HasPrefix(err.Error(), "gzip: ") { // gzip.ErrChecksum, ErrHeader
			return n, fmt.Errorf("%w (%s)", err, where)
		}
		return n, fmt.Errorf("gzip: %w (%s)", err, where)
	}
	return n, err
}

// openWaiting opens f as a stream, for an input that may block on open, as
// a FIFO does until a writer opens it: it returns when ctx is done, and a
// handle opened after that is closed.
func openWaiting(ctx context.Context, f *File, stdin io.Reader) (io.ReadCloser, error) {
	type opened struct {
		rc  io.ReadCloser
		err error
	}
	done := make(chan opened, 1)
	pl := f.at(stdin)
	go func() {
		rc, err := pl.Open(ctx, f.ent, 0)
		done <- opened{rc, err}
	}()
	select {
	case o := <-done:
		return o.rc, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.err == nil {
				o.rc.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w", f.Path, ctx.Err())
	}
}
