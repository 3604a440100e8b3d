package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	f, err := os.Open(filepath.Join(string(d), filepath.FromSlash(name)))
	if err != nil {
		return nil, err // *fs.PathError, wrapping fs.ErrNotExist when missing
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a folder", name)
	}
	return f, nil
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
