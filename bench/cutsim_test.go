package bench

import (
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/shard"
)

// TestCutSim: on a small set, night 2 after one inserted, deleted or
// re-dated URL uploads at most 2 shards with stable cuts (the bar),
// 1% appended at most the last shard and the new ones, while tight cuts
// re-upload the shards after an insert; stable cuts cost at most 60% more
// shards.
func TestCutSim(t *testing.T) {
	const n, maxURLs = 60_000, 2000
	sim, err := NewCutSim(n, maxURLs, 10485760, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	tight, err := sim.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	stable, err := sim.Run(&shard.DefaultCurve)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	WriteCutSimTable(&table, []CutSimRow{tight, stable})
	t.Logf("\n%s", table.String())
	if tight.Shards != n/maxURLs || tight.Insert1.Mean < 3 {
		t.Errorf("tight: %d shards, %.1f uploaded after an insert: want %d shards and a cascade", tight.Shards, tight.Insert1.Mean, n/maxURLs)
	}
	newShards := (n/100)/maxURLs + 1
	for what, st := range map[string]Stat{"insert": stable.Insert1, "delete": stable.Delete1, "lastmod": stable.Lastmod1} {
		if st.Max > 2 {
			t.Errorf("stable: one %s uploads up to %d shards, want at most 2", what, st.Max)
		}
	}
	if stable.Lastmod1.Max != 1 || stable.Append1pct.Max > newShards+1 {
		t.Errorf("stable: a lastmod change uploads %d shards (want 1), 1%% appended %d (want at most %d)", stable.Lastmod1.Max, stable.Append1pct.Max, newShards+1)
	}
	if float64(stable.Shards) > 1.6*float64(tight.Shards) {
		t.Errorf("stable: %d shards for tight's %d", stable.Shards, tight.Shards)
	}
}
