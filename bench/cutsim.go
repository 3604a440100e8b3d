package bench

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/shard"
)

// CutSim measures how many shards change from one night to the next under
// a cut policy, at the cutter alone (no compression, no sink): night 1 is N
// generated URLs, encoded as the pipeline encodes them and in a stable order
// (sorted by loc, as an export with ORDER BY gives them); night 2 is night 1
// with one kind of change. A shard is uploaded on night 2 when its bytes are
// not those of a night-1 shard, as content-hashed names make it.
type CutSim struct {
	MaxURLs, MaxBytes int
	Trials            int // nights 2 per random single change
	Bulk              int // nights 2 per bulk change (churn, block insert)

	pool  [][]byte // encoded entries: night 1 is pool[:n], sorted by loc; spares after
	n     int
	spare int // next spare entry for inserts
	seed  maphash.Seed
	rng   *rand.Rand
	batch shard.Entries
}

// NewCutSim generates n URLs for night 1, and spares to insert, from
// bench's Generator (seed 1).
func NewCutSim(n, maxURLs, maxBytes, trials, bulk int) (*CutSim, error) {
	scope, err := encode.ParseScope("https://www.example.com/")
	if err != nil {
		return nil, err
	}
	enc := encode.NewEncoder(scope, nil)
	g := NewGenerator(1, "https://www.example.com/")
	s := &CutSim{MaxURLs: maxURLs, MaxBytes: maxBytes, Trials: trials, Bulk: bulk, n: n, seed: maphash.MakeSeed(), rng: rand.New(rand.NewPCG(2, 3))}
	spares := n/100*max(bulk, 10) + 1000 // a 1% block per bulk trial
	var row, out []byte
	for len(s.pool) < n+spares {
		var r Row
		row, r = g.AppendRow(row[:0])
		f := encode.Fields{Loc: row[r.Loc[0]:r.Loc[1]], Lastmod: row[r.Lastmod[0]:r.Lastmod[1]],
			Changefreq: row[r.Changefreq[0]:r.Changefreq[1]], Priority: row[r.Priority[0]:r.Priority[1]]}
		var res encode.Result
		out, res = enc.AppendURL(out[:0], f)
		if res.Reason != encode.OK {
			return nil, fmt.Errorf("generated row %q rejected: %v", row[r.Loc[0]:r.Loc[1]], res.Reason)
		}
		s.pool = append(s.pool, bytes.Clone(out))
	}
	slices.SortFunc(s.pool[:n], func(a, b []byte) int { return bytes.Compare(shard.EntryLoc(a), shard.EntryLoc(b)) })
	s.spare = n
	return s, nil
}

// Stat is shards uploaded on night 2, over the trials of one change.
type Stat struct {
	Mean float64
	Max  int
}

func (st Stat) String() string {
	if st.Mean == float64(st.Max) {
		return fmt.Sprintf("%d", st.Max)
	}
	return fmt.Sprintf("%.2f (max %d)", st.Mean, st.Max)
}

// CutSimRow is one cut policy's figures.
type CutSimRow struct {
	Cut        string
	Shards     int     // night 1
	Fill       float64 // mean fill of night 1's shards but the last: the fuller of URLs and bytes
	Insert1    Stat    // one URL inserted at a random place
	Delete1    Stat    // one URL deleted at a random place
	Lastmod1   Stat    // one URL's lastmod changed
	Append1pct Stat    // 1% new URLs appended at the end
	Churn      Stat    // 0.02% of URLs inserted and as many deleted, at random places
	Block1pct  Stat    // 1% new URLs inserted together at one random place
	Time       time.Duration
}

// Run measures one cut policy: tight when cv is nil.
func (s *CutSim) Run(cv *shard.Curve) (CutSimRow, error) {
	t0 := time.Now()
	newCutter := func() (*shard.Cutter, error) {
		if cv == nil {
			return shard.NewCutter(shard.CutterOptions{MaxURLs: s.MaxURLs, MaxBytes: s.MaxBytes})
		}
		return shard.NewCutter(shard.CutterOptions{MaxURLs: s.MaxURLs, MaxBytes: s.MaxBytes, Mode: shard.CutStable, Curve: cv})
	}
	row := CutSimRow{Cut: "tight"}
	if cv != nil {
		row.Cut = cv.String()
	}
	night1 := make([]int32, s.n)
	for i := range night1 {
		night1[i] = int32(i)
	}
	c, err := newCutter()
	if err != nil {
		return row, err
	}
	old, fills := s.cut(c, night1)
	row.Shards = len(old)
	for _, f := range fills[:max(len(fills)-1, 1)] {
		row.Fill += f
	}
	row.Fill /= float64(max(len(fills)-1, 1))
	had := make(map[uint64]bool, len(old))
	for _, h := range old {
		had[h] = true
	}
	measure := func(trials int, change func() []int32) (Stat, error) {
		var st Stat
		for range trials {
			c, err := newCutter()
			if err != nil {
				return st, err
			}
			hs, _ := s.cut(c, change())
			up := 0
			for _, h := range hs {
				if !had[h] {
					up++
				}
			}
			st.Mean += float64(up) / float64(trials)
			st.Max = max(st.Max, up)
		}
		return st, nil
	}
	bulk := max(s.Bulk, 1)
	n := s.n
	for _, m := range []struct {
		to     *Stat
		trials int
		change func() []int32
	}{
		{&row.Insert1, s.Trials, func() []int32 { return slices.Insert(slices.Clone(night1), s.rng.IntN(n+1), s.newEntry()) }},
		{&row.Delete1, s.Trials, func() []int32 {
			i := s.rng.IntN(n)
			return slices.Delete(slices.Clone(night1), i, i+1)
		}},
		{&row.Lastmod1, s.Trials, func() []int32 {
			night := slices.Clone(night1)
			i := s.rng.IntN(n)
			night[i] = s.relastmod(night[i])
			return night
		}},
		{&row.Append1pct, 1, func() []int32 {
			night := slices.Clone(night1)
			for range n / 100 {
				night = append(night, s.newEntry())
			}
			return night
		}},
		{&row.Churn, bulk, func() []int32 {
			night := slices.Clone(night1)
			for range max(n/5000/2, 1) {
				night = slices.Insert(night, s.rng.IntN(len(night)+1), s.newEntry())
				i := s.rng.IntN(len(night))
				night = slices.Delete(night, i, i+1)
			}
			return night
		}},
		{&row.Block1pct, bulk, func() []int32 {
			block := make([]int32, n/100)
			for i := range block {
				block[i] = s.newEntry()
			}
			return slices.Insert(slices.Clone(night1), s.rng.IntN(n+1), block...)
		}},
	} {
		if *m.to, err = measure(m.trials, m.change); err != nil {
			return row, err
		}
		s.spare = n // reuse the spares: every night 2 is against night 1
	}
	row.Time = time.Since(t0)
	return row, nil
}

// newEntry returns the index of an unused spare entry.
func (s *CutSim) newEntry() int32 {
	s.spare++
	return int32(s.spare - 1)
}

// relastmod returns the index of a copy of entry i with another lastmod.
func (s *CutSim) relastmod(i int32) int32 {
	e := s.pool[i]
	const lm = "<lastmod>2026-02-03T04:05:06Z</lastmod>"
	var out []byte
	if a := bytes.Index(e, []byte("<lastmod>")); a >= 0 {
		b := bytes.Index(e, []byte("</lastmod>")) + len("</lastmod>")
		out = slices.Concat(e[:a], []byte(lm), e[b:])
	} else {
		a := bytes.Index(e, []byte("</loc>")) + len("</loc>")
		out = slices.Concat(e[:a], []byte(lm), e[a:])
	}
	s.pool = append(s.pool, out)
	return int32(len(s.pool) - 1)
}

// cut cuts the entries night lists, in batches as the pipeline hands them
// to the cutter, and returns each shard's content hash and fill.
func (s *CutSim) cut(c *shard.Cutter, night []int32) (hashes []uint64, fills []float64) {
	keep := func(sh *shard.Sitemap) {
		if sh != nil {
			hashes = append(hashes, maphash.Bytes(s.seed, sh.Data))
			fills = append(fills, max(float64(sh.URLs)/float64(s.MaxURLs), float64(len(sh.Data))/float64(s.MaxBytes)))
			c.Recycle(sh)
		}
	}
	e := &s.batch
	for len(night) > 0 {
		n := min(len(night), 4096)
		e.Data, e.Ends = e.Data[:0], e.Ends[:0]
		for _, i := range night[:n] {
			e.Data = append(e.Data, s.pool[i]...)
			e.Ends = append(e.Ends, uint32(len(e.Data)))
		}
		for k := 0; k < n; {
			var sh *shard.Sitemap
			k, sh = c.AddEntries(e, k)
			keep(sh)
		}
		night = night[n:]
	}
	keep(c.Flush())
	return hashes, fills
}

// WriteCutSimTable writes rows as a Markdown table, shard counts relative
// to the first row (tight).
func WriteCutSimTable(w io.Writer, rows []CutSimRow) {
	fmt.Fprintln(w, "| cut | shards | vs tight | mean fill | 1 insert | 1 delete | 1 lastmod | 1% appended | 0.02% ins+del | 1% block inserted |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %+.0f%% | %.3f | %v | %v | %v | %v | %v | %v |\n", r.Cut, r.Shards,
			100*(float64(r.Shards)/float64(rows[0].Shards)-1), r.Fill, r.Insert1, r.Delete1, r.Lastmod1, r.Append1pct, r.Churn, r.Block1pct)
	}
}
