package arrowmsg_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/arrowread"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// FuzzArrowReader: whatever the bytes, an Arrow IPC file or stream read
// through the checked messages returns rows or an error, never panics nor
// hangs, allocates in proportion to the input, and the rows keep Fill's
// promises. Seeded with the fixtures, compressed ones and the damaged
// inputs of TestArrowClaimsBounded.
func FuzzArrowReader(f *testing.F) {
	inputtest.Seeds(f, ".arrow")
	inputtest.Seeds(f, ".arrows")
	good, err := os.ReadFile(inputtest.Fixtures + "rows.arrow")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rewriteArrow(f, good, false, ipc.WithZstd()))
	f.Add(rewriteArrow(f, good, true, ipc.WithLZ4()))
	f.Add(stringViewStream(f))
	for _, c := range arrowClaims(f) {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer inputtest.BoundedCost(t, data)()
		ar, err := arrowread.NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.arrow", input.Options{})
		if err != nil {
			return
		}
		defer ar.Close()
		inputtest.FuzzRead(t, ar)
	})
}
