package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Files is where a sitemap set lives: a flat namespace of named files that
// can be opened and listed. A local folder is Dir; an object store (S3)
// implements the same two methods.
type Files interface {
	// Open opens the named file (a slash-separated path relative to the
	// set's folder). A missing file is an error wrapping fs.ErrNotExist.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// List returns the names of the files directly in the folder.
	List(ctx context.Context) ([]string, error)
	// String describes the location for people.
	String() string
}

// ErrNotRegular is the error of opening a name that is not a regular file
// inside the folder: a FIFO (reading it could block for ever), a device
// (/dev/zero never ends), a folder, or a symbolic link that leaves the folder.
var ErrNotRegular = errors.New("not a regular file inside the folder: not read")

// Dir is a local folder holding a sitemap set.
type Dir string

// String returns the folder's path.
func (d Dir) String() string { return string(d) }

// Open opens name under the folder. Names that leave the folder are refused.
func (d Dir) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) || strings.Contains(name, `\`) {
		return nil, fmt.Errorf("open %q: not a name inside %s", name, d)
	}
	full := filepath.Join(string(d), filepath.FromSlash(name))
	fi, err := os.Lstat(full)
	if err != nil {
		return nil, err // *fs.PathError, wrapping fs.ErrNotExist when missing
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// A link is followed only to a file inside the folder.
		target, err := filepath.EvalSymlinks(full)
		if err != nil {
			return nil, err
		}
		dir, err := filepath.EvalSymlinks(string(d))
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(dir, target); err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("open %s: %w: a symbolic link to %s", name, ErrNotRegular, target)
		}
		if fi, err = os.Stat(target); err != nil {
			return nil, err
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: %w: %s", name, ErrNotRegular, kindOf(fi.Mode()))
	}
	// O_NONBLOCK: should the name have become a FIFO since, opening it does
	// not wait for a writer; the Stat below then refuses it.
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", name, ErrNotRegular)
	}
	return f, nil
}

// kindOf names a file mode's type for people.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// List returns the names of the regular files in the folder.
func (d Dir) List(ctx context.Context) ([]string, error) {
	ents, err := os.ReadDir(string(d))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d, err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// WithFile returns files with name served from data: the view of a set
// whose root is about to be published, as generate --verify checks it.
func WithFile(files Files, name string, data []byte) Files {
	return &withFile{files, name, data}
}

// WithFiles is files with the files of pending (name to bytes) in place of
// what it holds under those names: a set checked before they are written.
func WithFiles(files Files, pending map[string][]byte) Files {
	return &withFiles{files, pending}
}

type withFiles struct {
	Files
	pending map[string][]byte
}

func (w *withFiles) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if data, ok := w.pending[name]; ok {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return w.Files.Open(ctx, name)
}

type withFile struct {
	Files
	name string
	data []byte
}

func (w *withFile) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == w.name {
		return io.NopCloser(bytes.NewReader(w.data)), nil
	}
	return w.Files.Open(ctx, name)
}
