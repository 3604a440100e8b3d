package csvscan

import (
	"io"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// CSV is the stream format, read for every name no other format claims:
// .csv, .txt (one URL per line), either gzipped, and stdin.
func init() {
	input.Register(input.Format{Name: "CSV", NewStream: func(r io.Reader, name string, opt input.Options) input.Source {
		return NewScanner(r, name, opt)
	}})
}
