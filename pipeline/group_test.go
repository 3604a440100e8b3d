package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

// groupCSV writes rows (CSV lines after a loc,lastmod,section header) to a
// file.
func groupCSV(t *testing.T, rows []string) string {
	t.Helper()
	return writeText(t, "in.csv", "loc,lastmod,section\n"+strings.Join(rows, "\n")+"\n")
}

// sectionRows are the rows of three sections, interleaved, plus rows with
// no section, with a section that names no file, and out of scope.
func sectionRows() (rows []string, bySection map[string][]string) {
	bySection = map[string][]string{}
	add := func(section, row string) {
		rows = append(rows, row)
		if section != "" {
			bySection[section] = append(bySection[section], row)
		}
	}
	for i := range 900 {
		switch {
		case i%3 != 2:
			add("products", fmt.Sprintf("%sp/%05d,2024-05-%02d,products", testBase, i*7919%100000, 1+i%28))
		case i%9 == 2:
			add("help", fmt.Sprintf("%sh/%d,, Help ", testBase, i)) // "Help" is named help
		default:
			add("blog", fmt.Sprintf("%sblog/%d,2024-06-01T10:00:00Z,blog", testBase, i))
		}
		switch i % 150 {
		case 7:
			add("", fmt.Sprintf("%snone/%d,,", testBase, i))
		case 8:
			add("", fmt.Sprintf("%sbad/%d,,a/b", testBase, i))
		case 9:
			add("products", fmt.Sprintf("https://elsewhere.example/%d,,products", i))
		}
	}
	return rows, bySection
}

// groupRun runs a grouped config over in into dir.
func groupRun(t *testing.T, in, dir string, maxBytes int, edit func(*Config)) (*Report, string, error) {
	t.Helper()
	snk, err := sink.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rejects bytes.Buffer
	cfg := Config{Inputs: []string{in}, PublicURL: mustScope(t, testBase), Sink: snk, Name: "sm",
		MaxURLs: 40, MaxBytes: maxBytes, Fanout: 3, GzipLevel: 1, Cut: shard.CutStable, Now: testNow,
		Columns: [input.NumColumns]string{input.Group: "section"}, Group: &Grouping{}, Rejects: &rejects}
	if edit != nil {
		edit(&cfg)
	}
	rep, err := Run(context.Background(), cfg)
	return rep, rejects.String(), err
}

// TestGroupsSameAsSeparateRuns: every group's files are byte for byte
// those of a run over its rows alone named sm-GROUP, whether the groups
// are cut as their rows come (live), cut after the input (parked) or
// spilled to disk in between; the folder holds those files and no others.
func TestGroupsSameAsSeparateRuns(t *testing.T) {
	rows, bySection := sectionRows()
	in := groupCSV(t, rows)
	for _, tc := range []struct {
		name       string
		maxBytes   int
		live, held int
	}{
		{"parked", 10485760, parkLimits.live, parkLimits.held},
		{"live", 8192, 2 * 8192, parkLimits.held},
		{"spilled", 8192, 0, 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := parkLimits
			parkLimits.live, parkLimits.held = tc.live, tc.held
			defer func() { parkLimits = saved }()
			dir := t.TempDir()
			rep, rejects, err := groupRun(t, in, dir, tc.maxBytes, nil)
			if err != nil {
				t.Fatal(err)
			}
			parkLimits = saved
			got := xmltest.Snapshot(t, dir)
			want := map[string][]byte{}
			for section, rows := range bySection {
				sdir := t.TempDir()
				snk, _ := sink.NewLocal(sdir)
				_, err := Run(context.Background(), Config{Inputs: []string{groupCSV(t, rows)}, PublicURL: mustScope(t, testBase),
					Sink: snk, Name: "sm-" + section, MaxURLs: 40, MaxBytes: tc.maxBytes, Fanout: 3, GzipLevel: 1,
					Cut: shard.CutStable, Now: testNow})
				if err != nil {
					t.Fatal(err)
				}
				maps.Copy(want, xmltest.Snapshot(t, sdir))
			}
			if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
				t.Fatalf("grouped run wrote\n%v\nseparate runs\n%v", g, w)
			}
			for name, w := range want {
				if !bytes.Equal(got[name], w) {
					t.Errorf("%s differs from the separate run's", name)
				}
			}
			checkGroupReport(t, rep, rejects)
		})
	}
}

// checkGroupReport checks the accounts of a run over sectionRows.
func checkGroupReport(t *testing.T, rep *Report, rejects string) {
	t.Helper()
	if rep.Rejected.ByReason["group_empty"] != 6 || rep.Rejected.ByReason["group_unnameable"] != 6 || rep.Rejected.ByReason["out_of_scope"] != 6 {
		t.Errorf("rejected %v", rep.Rejected.ByReason)
	}
	if len(rep.Groups) != 3 {
		t.Fatalf("groups %+v", rep.Groups)
	}
	var rows int64
	for _, g := range rep.Groups {
		if g.Rows != g.URLs+g.Rejected.Total || !g.Published || g.Root != testBase+"sm-"+g.Group+".xml" || len(g.Submit) == 0 {
			t.Errorf("group %+v", g)
		}
		rows += g.Rows
	}
	if rep.Groups[0].Group != "blog" || rep.Groups[1].Group != "help" || rep.Groups[2].Rejected.ByReason["out_of_scope"] != 6 {
		t.Errorf("groups %+v", rep.Groups)
	}
	if rows+12 != rep.Rows || rep.Rows != rep.URLs+rep.Rejected.Total {
		t.Errorf("rows %d, in groups %d, urls %d, rejected %d", rep.Rows, rows, rep.URLs, rep.Rejected.Total)
	}
	if !strings.HasPrefix(rejects, "source,row,reason,value,group\n") || !strings.Contains(rejects, ",out_of_scope,https://elsewhere.example/9,products\n") ||
		!strings.Contains(rejects, ",group_unnameable,"+testBase+"bad/8,\n") {
		t.Errorf("rejects:\n%s", rejects)
	}
}
