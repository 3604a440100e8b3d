package pipeline

import (
	"encoding/binary"

	"github.com/sitemapgen/sitemapgen/internal/extsort"
	"github.com/sitemapgen/sitemapgen/shard"
)

// DefaultSortMemory bounds the entries --sort holds in memory before it
// spills a sorted run to disk.
const DefaultSortMemory = 64 << 20

// TieOrder is Config.Ties: how rows with equal normalised locs are ordered
// under Sort, and so which one Dedup keeps.
type TieOrder = extsort.TieOrder

const (
	// TieContent orders them by content: the newest lastmod first, then
	// the smallest encoded entry. The output is a function of the rows,
	// not of their order in the export.
	TieContent = extsort.TieContent
	// TieInput keeps them in input order (Dedup keeps the first).
	TieInput = extsort.TieInput
)

// SortReport is what --sort did.
type SortReport struct {
	Entries    int64 `json:"entries"`
	Runs       int   `json:"runs"`        // sorted runs spilled to disk
	SpillBytes int64 `json:"spill_bytes"` // compressed bytes written to them
	PeakDisk   int64 `json:"peak_disk"`   // the most disk they held at once
	Duplicates int64 `json:"duplicates"`  // entries --dedup rejected
}

// sorter holds the cut stage's entries for --sort and --dedup: they go in
// in input order and come back in loc order, to be cut.
type sorter struct {
	s       *extsort.Sorter
	sources []string // by extsort.Entry.Source
	source  map[string]uint32
	joined  []byte // an entry and its news entry, back to back (grouped: after the group's index)
	grouped bool   // the entries carry their group's index (groupKey)
}

func newSorter(cfg Config) *sorter {
	mem := cfg.SortMemory
	if mem <= 0 {
		mem = DefaultSortMemory
	}
	return &sorter{
		s:       extsort.New(extsort.Options{Memory: mem, Dir: cfg.TmpDir, Dedup: cfg.Dedup, Ties: cfg.Ties}),
		source:  map[string]uint32{},
		grouped: cfg.Group != nil,
	}
}

// add adds the accepted entries of b, each with its news entry if it has
// one: the news item goes where its row goes (dropped with a duplicate),
// and the news sitemaps too are in an order of the rows alone.
func (st *sorter) add(b *Batch) error {
	src, ok := st.source[b.Source]
	if !ok {
		src = uint32(len(st.sources))
		st.sources = append(st.sources, b.Source)
		st.source[b.Source] = src
	}
	grouped := st.grouped
	start := uint32(0)
	for k, end := range b.Ends {
		entry := b.Out[start:end]
		e := extsort.Entry{Data: entry, KeyAt: uint32(len("<url><loc>")), KeyLen: uint32(len(shard.EntryLoc(entry))),
			LmKey: b.EntryLastmod[k], Source: src, Line: b.EntryLine[k]}
		n := b.EntryNews[k]
		if grouped {
			// The group's index before the entry, in the key: the entries
			// come out group by group, each group's in loc order, and only
			// a group's own rows are its duplicates.
			st.joined = binary.BigEndian.AppendUint32(st.joined[:0], uint32(b.EntryGroup[k]))
			st.joined = append(st.joined, entry...)
			e.Data, e.KeyAt, e.KeyLen = st.joined, 0, groupKey+e.KeyAt+e.KeyLen
		}
		if n >= 0 {
			ns := uint32(0)
			if n > 0 {
				ns = b.NewsEnds[n-1]
			}
			if !grouped {
				st.joined = append(st.joined[:0], entry...)
			}
			e.Split = uint32(len(st.joined))
			st.joined = append(st.joined, b.NewsOut[ns:b.NewsEnds[n]]...)
			e.Data = st.joined
		}
		if err := st.s.Add(e); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// groupKey is the bytes of a group's index before a grouped entry.
const groupKey = 4

// drain sorts the entries and hands them to place in loc order, a chunk at
// a time, and their news entries to placeNews; with Dedup the repeats go to
// duplicate instead. It returns how many repeats there were. In a grouped
// run the entries come group by group, each chunk of one group (its index;
// -1 without groups).
func (st *sorter) drain(place, placeNews func(group int32, ents *shard.Entries) error, duplicate func(group int32, source string, line int64, loc []byte) error) (dups int64, err error) {
	if err := st.s.Sort(); err != nil {
		return 0, err
	}
	var ents, news shard.Entries
	group := int32(-1)
	flush := func() error {
		err := place(group, &ents)
		ents = shard.Entries{Data: ents.Data[:0], Ends: ents.Ends[:0]}
		if err == nil && len(news.Ends) > 0 {
			err = placeNews(group, &news)
			news = shard.Entries{Data: news.Data[:0], Ends: news.Ends[:0]}
		}
		return err
	}
	for st.s.Next() {
		e := st.s.Entry()
		data, key, g := e.Data, e.Key(), int32(-1)
		if st.grouped {
			g = int32(binary.BigEndian.Uint32(data))
			data, key = data[groupKey:], key[groupKey+len("<url><loc>"):]
		}
		if g != group && len(ents.Ends) > 0 {
			if err := flush(); err != nil {
				return dups, err
			}
		}
		group = g
		if st.s.Duplicate() {
			dups++
			if err := duplicate(g, st.sources[e.Source], e.Line, key); err != nil {
				return dups, err
			}
			continue
		}
		if e.Split > 0 {
			split := int(e.Split) - (len(e.Data) - len(data))
			news.Data = append(news.Data, data[split:]...)
			news.Ends = append(news.Ends, uint32(len(news.Data)))
			data = data[:split]
		}
		ents.Data = append(ents.Data, data...)
		ents.Ends = append(ents.Ends, uint32(len(ents.Data)))
		if len(ents.Data) >= 1<<20 {
			if err := flush(); err != nil {
				return dups, err
			}
		}
	}
	if err := st.s.Err(); err != nil {
		return dups, err
	}
	return dups, flush()
}

func (st *sorter) report() *SortReport {
	s := st.s.Stats()
	return &SortReport{Entries: s.Entries, Runs: s.Runs, SpillBytes: s.SpillBytes, PeakDisk: s.PeakDisk, Duplicates: s.Duplicates}
}

func (st *sorter) close() { st.s.Close() }
