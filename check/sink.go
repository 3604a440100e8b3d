package check

import (
	"bytes"
	"context"
	"io"

	"github.com/sitemapgen/sitemapgen/sink"
)

// SinkFiles reads a set where generate published it: a local folder or an
// S3 prefix. A missing file's error wraps fs.ErrNotExist, as every Sink's Get does.
type SinkFiles struct {
	Sink sink.Store
}

// Open returns the named file's bytes. Sitemap files are at most 50 MiB
// uncompressed and far less compressed, so reading one whole is bounded.
func (s SinkFiles) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	b, err := s.Sink.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// List returns the names of the files under the sink's folder or prefix.
func (s SinkFiles) List(ctx context.Context) ([]string, error) { return s.Sink.List(ctx) }

// String describes the location.
func (s SinkFiles) String() string { return s.Sink.String() }
