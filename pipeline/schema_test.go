package pipeline

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/shard"
)

// TestSchemaLocationValid: with SchemaLocation every file of a run whose
// input carries every extension, shards, intermediate indexes and root,
// declares the schema locations, and every file is valid (xmllint).
func TestSchemaLocationValid(t *testing.T) {
	in := filepath.Join("..", "testdata", "multilingual.csv")
	rep, set, dir := runTo(t, Config{Inputs: []string{in}, SchemaLocation: true, MaxURLs: 10, Fanout: 3,
		Now: time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)}) // some articles fresh: a news sitemap with items
	if len(set.News) != 1 || len(set.News[0].URLs) == 0 || !bytes.HasPrefix(set.News[0].Raw, []byte(shard.URLSetHeaderSchema(encode.NSNews, true))) {
		t.Fatalf("news sitemaps %d: want one with items and the schema location", len(set.News))
	}
	xmltest.ValidateDir(t, dir)
	if rep.URLs != 120 || len(set.Indexes) < 3 {
		t.Fatalf("%d URLs, %d indexes; want 120 URLs and intermediate indexes", rep.URLs, len(set.Indexes))
	}
	for _, s := range set.Shards {
		if !bytes.HasPrefix(s.Raw, []byte(shard.URLSetHeaderSchema(allNamespaces, true))) {
			t.Fatalf("%s: no schema location in %.400s", s.Name, s.Raw)
		}
	}
	ixs := 0
	for _, n := range set.Files {
		if strings.HasSuffix(n, ".xml") {
			raw, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(raw, []byte(shard.IndexHeaderSchema)) {
				t.Fatalf("%s does not start with the index header with the schema location:\n%.300s", n, raw)
			}
			ixs++
		}
	}
	if ixs != len(set.Indexes) {
		t.Fatalf("%d index files checked, the set has %d", ixs, len(set.Indexes))
	}
}

// TestSchemaLocationByteLimitExact: the longer header counts in MaxBytes:
// under random small limits every shard starts with the header with the
// schema locations, stays within MaxBytes and is closed only when the next
// entry would not fit.
func TestSchemaLocationByteLimitExact(t *testing.T) {
	for seed := range 6 {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		maxBytes := 4096 + rng.IntN(6000)
		rows := 200 + rng.IntN(400)
		var in bytes.Buffer
		in.WriteString("loc,alternate:en,alternate:de,image:1\n")
		for r := range rows {
			fmt.Fprintf(&in, "https://www.example.com/p/%d/%s,https://www.example.com/en/p/%d,https://www.example.com/de/p/%d,https://img.example.com/%d.jpg\n",
				r, strings.Repeat("x", rng.IntN(300)), r, r, r)
		}
		ns := encode.NSXhtml | encode.NSImage
		header := []byte(shard.URLSetHeaderSchema(ns, true))
		rep, set, _ := runTo(t, Config{Inputs: []string{writeText(t, "in.csv", in.String())}, MaxBytes: maxBytes, SchemaLocation: true})
		if rep.URLs != int64(rows) || len(set.Shards) < 2 {
			t.Fatalf("seed %d: %d URLs in %d shards; want %d in several", seed, rep.URLs, len(set.Shards), rows)
		}
		for i, s := range set.Shards {
			if !bytes.HasPrefix(s.Raw, header) {
				t.Fatalf("seed %d: %s does not start with the header with schema locations", seed, s.Name)
			}
			if len(s.Raw) > maxBytes {
				t.Fatalf("seed %d: %s is %d bytes; limit %d", seed, s.Name, len(s.Raw), maxBytes)
			}
			if i+1 < len(set.Shards) {
				next := set.Shards[i+1].Raw[len(header):]
				first := next[:bytes.IndexByte(next, '\n')+1]
				if len(s.Raw)+len(first) <= maxBytes {
					t.Fatalf("seed %d: %s closed at %d bytes but the next entry (%d bytes) fits in %d", seed, s.Name, len(s.Raw), len(first), maxBytes)
				}
			}
		}
		if seed == 0 {
			xmltest.Validate(t, set.Shards[0].Name, set.Shards[0].Raw)
		}
	}
}
