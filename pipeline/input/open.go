package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Name returns the name the file goes by in messages and rejects: its path,
// or "stdin" for "-".
func (f *File) Name() string {
	if f.Path == "-" {
		return "stdin"
	}
	return f.Path
}

// openFile opens an input file; tests replace it to count opens.
var openFile = os.Open

// Open opens f as a Source, or takes the handle Probe held for it (f holds
// it no more after). stdin is read for "-". A stream input is unwrapped
// from gzip, recognised by its magic number rather than by its name, and
// read one URL per line when its name ends in .txt (or .txt.gz).
func Open(f *File, stdin io.Reader, opt Options) (Source, error) {
	if f.obj != nil {
		return openObject(f, opt)
	}
	if f.format.Open != nil {
		return f.format.Open(f.Path, opt)
	}
	var raw io.Reader
	var closeRaw func() error
	if h := f.held; h != nil {
		f.held = nil // taken: closing it is now the Source's job
		raw, closeRaw = h.r, h.close
	} else {
		var err error
		if raw, closeRaw, err = openRaw(f.Path, stdin); err != nil {
			return nil, err
		}
	}
	return newStreamSource(f, raw, closeRaw, opt)
}

// newStreamSource reads raw, the bytes of the stream input f, which closeRaw
// releases.
func newStreamSource(f *File, raw io.Reader, closeRaw func() error, opt Options) (Source, error) {
	name := f.Name()
	lower := strings.TrimSuffix(strings.ToLower(f.Path), ".gz")
	opt.Lines = strings.HasSuffix(lower, ".txt")

	br := bufio.NewReaderSize(raw, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		closeRaw()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var r io.Reader = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			closeRaw()
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		r = zr
	}
	return &streamSource{f.format.NewStream(r, name, opt), closeRaw}, nil
}

// streamSource is a stream format's reader over a file it does not own.
type streamSource struct {
	Source
	close func() error
}

func (s *streamSource) Close() error { return s.close() }

// openRaw opens the input path ("-" is stdin).
func openRaw(path string, stdin io.Reader) (io.Reader, func() error, error) {
	if path == "-" {
		return stdin, func() error { return nil }, nil
	}
	f, err := openFile(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// openWaiting is openRaw for an input that may block on open, as a FIFO
// does until a writer opens it: it returns when ctx is done, and a handle
// opened after that is closed.
func openWaiting(ctx context.Context, path string, stdin io.Reader) (io.Reader, func() error, error) {
	type opened struct {
		r     io.Reader
		close func() error
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		r, c, err := openRaw(path, stdin)
		done <- opened{r, c, err}
	}()
	select {
	case o := <-done:
		return o.r, o.close, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.err == nil {
				o.close()
			}
		}()
		return nil, nil, fmt.Errorf("%s: %w", path, ctx.Err())
	}
}
