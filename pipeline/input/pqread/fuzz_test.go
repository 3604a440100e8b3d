package pqread

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// FuzzParquetReader: whatever the bytes, NewReader and Fill return rows or
// an error, never panic nor hang, allocate in proportion to the input, and
// the rows keep Fill's promises.
func FuzzParquetReader(f *testing.F) {
	inputtest.Seeds(f, ".parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer inputtest.BoundedCost(t, data)()
		pr, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", input.Options{})
		if err != nil {
			return
		}
		defer pr.Close()
		// The page decoding is ours: it must check, not lean on the recover
		// that turns a panic into ErrCorrupt.
		if err := inputtest.FuzzRead(t, pr); err != nil && strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("Fill panicked: %v", err)
		}
	})
}
