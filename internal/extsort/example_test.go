package extsort_test

import (
	"fmt"
	"log"

	"github.com/sitemapgen/sitemapgen/internal/extsort"
	"github.com/sitemapgen/sitemapgen/shard"
)

// Example: the --sort --dedup path: encoded entries go into the sorter in
// input order, come back in loc order, repeats are rejected, and the rest
// are handed to the cutter in batches as the pipeline does.
func Example() {
	s := extsort.New(extsort.Options{Memory: 64 << 20, Dir: "", Dedup: true})
	defer s.Close()
	for i, loc := range []string{"c", "a", "b", "a"} {
		entry := []byte("<url><loc>https://example.com/" + loc + "</loc></url>\n")
		key := shard.EntryLoc(entry)
		if err := s.Add(extsort.Entry{Data: entry, KeyAt: 10, KeyLen: uint32(len(key)), Line: int64(i + 1)}); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Sort(); err != nil {
		log.Fatal(err)
	}
	c, _ := shard.NewCutter(shard.CutterOptions{MaxURLs: 2, MaxBytes: 1 << 20})
	var batch shard.Entries
	flush := func() {
		for k := 0; k < len(batch.Ends); {
			var sh *shard.Sitemap
			if k, sh = c.AddEntries(&batch, k); sh != nil {
				fmt.Println("shard", sh.Num, sh.URLs, "URLs")
				c.Recycle(sh)
			}
		}
		batch = shard.Entries{Data: batch.Data[:0], Ends: batch.Ends[:0]}
	}
	for s.Next() {
		e := s.Entry()
		if s.Duplicate() {
			fmt.Printf("reject row %d: duplicate %s\n", e.Line, e.Key())
			continue
		}
		batch.Data = append(batch.Data, e.Data...)
		batch.Ends = append(batch.Ends, uint32(len(batch.Data)))
		if len(batch.Ends) == 4096 {
			flush()
		}
	}
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	flush()
	if sh := c.Flush(); sh != nil {
		fmt.Println("shard", sh.Num, sh.URLs, "URLs")
	}
	// Output:
	// reject row 4: duplicate https://example.com/a
	// shard 1 2 URLs
	// shard 2 1 URLs
}
