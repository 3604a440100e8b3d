package shard

import (
	"bytes"
	"strings"
	"testing"
)

// TestCompressorID: the ID names everything that changes the bytes (the
// level, the implementation, the module versions) and nothing that does
// not (pgzip's goroutines).
func TestCompressorID(t *testing.T) {
	data := bytes.Repeat([]byte("<url><loc>https://example.com/a</loc></url>\n"), 100_000)
	id := func(level, procs int) (string, []byte) {
		c, err := NewCompressor(level, procs)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := c.Compress(data)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID(), bytes.Clone(gz)
	}
	p2, gz2 := id(6, 2)
	p4, gz4 := id(6, 4)
	if p2 != p4 || !bytes.Equal(gz2, gz4) {
		t.Errorf("pgzip on 2 and 4 goroutines: IDs %q, %q, same bytes %v: want the same ID and bytes", p2, p4, bytes.Equal(gz2, gz4))
	}
	single, gzs := id(6, 1)
	l9, _ := id(9, 2)
	if single == p2 || l9 == p2 || bytes.Equal(gzs, gz2) {
		t.Errorf("IDs %q (single), %q (pgzip), %q (level 9): want all different", single, p2, l9)
	}
	// A test binary carries no module versions; a built sitemapgen does.
	for _, s := range []string{p2, single} {
		if !strings.Contains(s, "level 6") || !strings.Contains(s, moduleVersion("github.com/klauspost/compress")) {
			t.Errorf("ID %q: want the module versions and the level", s)
		}
	}
}
