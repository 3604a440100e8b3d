package saferio

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadUpToExact: output that fills its buffer exactly is not copied
// into a bigger one to find the end, and one byte more is an error.
func TestReadUpToExact(t *testing.T) {
	const n = 1 << 20
	src := bytes.Repeat([]byte("sitemap!"), n/8)
	for _, r := range []func() io.Reader{
		func() io.Reader { return bytes.NewReader(src) },
		func() io.Reader { return iotest.OneByteReader(bytes.NewReader(src)) },
		func() io.Reader { return iotest.DataErrReader(bytes.NewReader(src)) },
	} {
		dst := make([]byte, 0, n)
		out, err := ReadUpTo(dst, r(), n)
		if err != nil || len(out) != n || cap(out) != n || &out[0] != &dst[:1][0] {
			t.Fatalf("ReadUpTo: %d bytes, cap %d, same buffer %v, err %v; want %d in place", len(out), cap(out), cap(out) == n, err, n)
		}
		if _, err := ReadUpTo(make([]byte, 0, n-1), r(), n-1); err == nil || !strings.Contains(err.Error(), "more than") {
			t.Fatalf("one byte too many: err %v", err)
		}
	}
}
