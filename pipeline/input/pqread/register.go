package pqread

import (
	"io"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

func init() {
	input.Register(input.Format{Name: "Parquet", Ext: []string{".parquet"}, OpenAt: func(r io.ReaderAt, size int64, name string, opt input.Options) (input.Source, error) {
		return NewReader(r, size, name, opt)
	}})
}
