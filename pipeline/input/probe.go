package input

import (
	"bytes"
	"context"
	"io"

	"github.com/sitemapgen/sitemapgen/encode"
)

// probeBytes is the input a probe of a stream reads to find the header.
const probeBytes = 64 << 10

// Probe finds the extension namespaces of all files before the first row
// is encoded, from each CSV header and columnar schema: every shard of the
// run declares them, and their bytes count in the limit. A regular file is
// opened again by Open; any other input (stdin, a pipe, a FIFO, a process
// substitution) can be read only once, so its handle is held in files[i]
// with the probed bytes replayed before the rest, for Open to take. Errors
// are left to the real read, which reports them with their place, except
// that an input that cannot be opened fails now. On error, every held
// handle is released; Release releases those no Open took.
func Probe(ctx context.Context, files []File, stdin io.Reader, opt Options) (ns encode.Namespaces, err error) {
	defer func() {
		if err != nil {
			Release(files)
		}
	}()
	for i := range files {
		f := &files[i]
		var rec *recorder
		if f.format.OpenAt == nil && !f.Regular {
			raw, err := openWaiting(ctx, f, stdin)
			if err != nil {
				return 0, err
			}
			rec = &recorder{r: raw}
			f.held = &heldInput{r: rec, c: raw}
		}
		held := f.held
		src, err := Open(f, stdin, opt)
		f.held = held // the probe only borrows it
		if err != nil {
			return 0, err
		}
		if f.format.OpenAt == nil {
			var b Batch
			src.Fill(&b, probeBytes) // errors come again, in place, from the real read
		}
		ns |= encode.NamespacesOf(src.Extensions())
		if rec != nil {
			// The replay starts from the raw bytes, before any gzip: the
			// real read decodes them again from the start.
			f.held.r = io.MultiReader(bytes.NewReader(rec.buf.Bytes()), rec.r)
		} else {
			src.Close()
		}
	}
	return ns, nil
}

// Release closes the inputs Probe held and that no Open took.
func Release(files []File) {
	for i := range files {
		if h := files[i].held; h != nil {
			h.Close()
			files[i].held = nil
		}
	}
}

// heldInput is an input that can be read only once, opened by the probe and
// handed to the read: r replays what the probe read, then goes on.
type heldInput struct {
	r io.Reader
	c io.Closer
}

func (h *heldInput) Read(p []byte) (int, error) { return h.r.Read(p) }
func (h *heldInput) Close() error               { return h.c.Close() }

// recorder keeps what is read through it, so it can be read again.
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf.Write(p[:max(n, 0)])
	return n, err
}
