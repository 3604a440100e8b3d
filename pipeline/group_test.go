package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/publish"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
			checkSeparateRuns(t, dir, bySection, "loc,lastmod,section\n", func(c *Config) { c.MaxBytes = tc.maxBytes })
			checkGroupReport(t, rep, rejects)
		})
	}
}

// checkSeparateRuns checks that the folder dir holds exactly the files of
// runs over each section's rows alone (CSV rows after header), named
// sm-SECTION, with groupRun's flags as edit changes them.
func checkSeparateRuns(t *testing.T, dir string, bySection map[string][]string, header string, edit func(*Config)) {
	t.Helper()
	got := xmltest.Snapshot(t, dir)
	want := map[string][]byte{}
	for section, rows := range bySection {
		sdir := t.TempDir()
		snk, _ := sink.NewLocal(sdir)
		cfg := Config{Inputs: []string{writeText(t, "in.csv", header+strings.Join(rows, "\n")+"\n")}, PublicURL: mustScope(t, testBase),
			Sink: snk, Name: "sm-" + section, MaxURLs: 40, MaxBytes: 10485760, Fanout: 3, GzipLevel: 1,
			Cut: shard.CutStable, Now: testNow}
		edit(&cfg)
		if _, err := Run(context.Background(), cfg); err != nil {
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
}

// newsLines returns the header of newsInput's CSV with a section column
// added, and its lines, the header first (fresh and old as newsInput's).
func newsLines(t *testing.T, now time.Time, fresh, old int) (header string, lines []string) {
	t.Helper()
	raw, err := os.ReadFile(newsInput(t, now, 0, fresh, old))
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSpace(string(raw)), "\n")
	return lines[0] + ",section\n", lines
}

// TestGroupsNews: news sitemaps too are cut per group, as separate runs
// cut them, an empty one for a group with no fresh article.
func TestGroupsNews(t *testing.T) {
	now := testNow.AddDate(0, 0, 1)
	header, lines := newsLines(t, now, 1500, 30)
	bySection := map[string][]string{}
	var rows []string
	for i, l := range lines[1:] {
		section := []string{"world", "sport", "world", "local"}[i%4]
		if strings.Contains(l, "/o") {
			section = "archive" // old articles only: an empty news sitemap
		}
		rows = append(rows, l+","+section)
		bySection[section] = append(bySection[section], l+","+section)
	}
	dir := t.TempDir()
	edit := func(c *Config) { c.Now, c.MaxURLs = now, 500 }
	in := writeText(t, "in.csv", header+strings.Join(rows, "\n")+"\n")
	if _, _, err := groupRun(t, in, dir, 10485760, edit); err != nil {
		t.Fatal(err)
	}
	checkSeparateRuns(t, dir, bySection, header, edit)
	if news := xmltest.Snapshot(t, dir)["sm-archive-news-0001.xml.gz"]; len(news) == 0 {
		t.Error("no news sitemap for the group without fresh articles")
	}
}

// TestGroupsSorted: with --sort and --dedup each group is sorted and
// deduplicated on its own, as a run over its rows alone: a loc repeated in
// another group is no duplicate.
func TestGroupsSorted(t *testing.T) {
	_, bySection := sectionRows()
	var rows []string
	for _, s := range slices.Sorted(maps.Keys(bySection)) {
		r := bySection[s]
		r = append(r, r[:7]...) // repeats within the group
		slices.Reverse(r)       // and no order
		bySection[s] = r
		rows = append(rows, r...)
	}

	rows = append(rows, testBase+"blog/5,, Help ") // a loc of blog again, in help: no duplicate
	bySection["help"] = append(bySection["help"], testBase+"blog/5,, Help ")
	dir := t.TempDir()
	edit := func(c *Config) { c.Sort, c.Dedup, c.TmpDir, c.SortMemory = true, true, t.TempDir(), 64<<10 }
	rep, rejects, err := groupRun(t, groupCSV(t, rows), dir, 10485760, edit)
	if err != nil {
		t.Fatal(err)
	}
	checkSeparateRuns(t, dir, bySection, "loc,lastmod,section\n", edit)
	if rep.Rejected.ByReason["duplicate"] != 21 || rep.Sort == nil || rep.Sort.Runs < 2 || strings.Count(rejects, ",duplicate,") != 21 ||
		!strings.Contains(rejects, ",duplicate,"+testBase+"blog/") {
		t.Errorf("rejected %v, sort %+v; rejects:\n%s", rep.Rejected.ByReason, rep.Sort, rejects)
	}
	for _, g := range rep.Groups {
		if g.Rejected.ByReason["duplicate"] != 7 || g.Rows != g.URLs+g.Rejected.Total {
			t.Errorf("group %s: rows %d, urls %d, rejected %v", g.Group, g.Rows, g.URLs, g.Rejected.ByReason)
		}
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

// TestGroupsErrors: a run that cannot name its groups fails before
// publishing anything.
func TestGroupsErrors(t *testing.T) {
	rows, _ := sectionRows()
	for _, tc := range []struct {
		name string
		rows []string
		edit func(*Config)
		want error
	}{
		{"too many groups", rows, func(c *Config) { c.Group.Max = 2 }, ErrTooManyGroups},
		{"two values one name", []string{testBase + "a,,Shop", testBase + "b,,shop"}, nil, ErrGroupCollision},
		{"no group column", rows, func(c *Config) { c.Columns[input.Group] = "kind" }, input.ErrNoColumn},
		// Lists have no column names: their rows cannot be in a group,
		// alone or beside a CSV that has the column.
		{"a list without a header", rows, func(c *Config) { c.Inputs = []string{writeText(t, "list.csv", testBase+"a\n")} }, input.ErrNoColumn},
		{"a .txt list", rows, func(c *Config) { c.Inputs = []string{writeText(t, "list.txt", testBase+"a\n")} }, input.ErrNoColumn},
		{"a .txt list beside a CSV", rows, func(c *Config) { c.Inputs = append(c.Inputs, writeText(t, "list.txt", testBase+"a\n")) }, input.ErrNoColumn},
		{"a .txt list beside a CSV, a default group", rows, func(c *Config) {
			c.Inputs, c.Group.Default = append(c.Inputs, writeText(t, "list.txt", testBase+"a\n")), "misc"
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rep, _, err := groupRun(t, groupCSV(t, tc.rows), dir, 10485760, tc.edit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v; want %v", err, tc.want)
			}
			if tc.want == nil {
				if _, err := os.Stat(filepath.Join(dir, "sm-misc.xml")); err != nil || rep.Rejected.ByReason["group_empty"] != 0 {
					t.Errorf("the list's rows are not in the default group: %v, %v", err, rep.Rejected.ByReason)
				}
				return
			}
			if files := xmltest.Snapshot(t, dir); len(files) != 0 {
				t.Errorf("a failed run left %d files", len(files))
			}
		})
	}
}

// TestGroupsAllRejected: groups whose every row is rejected publish
// nothing and leave the run to finish: more of them than the compressors
// have room for once hung it (each took room for a shard it never sent).
func TestGroupsAllRejected(t *testing.T) {
	rows, bySection := sectionRows()
	for g := range 8 {
		for i := range 3 {
			rows = append(rows, fmt.Sprintf("https://elsewhere.example/%d/%d,,lost%d", g, i, g))
		}
	}
	in := groupCSV(t, rows)
	for _, tc := range []struct {
		name     string
		maxBytes int
		live     int
	}{
		{"parked", 10485760, parkLimits.live},
		{"live", 8192, 2 * 8192},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := parkLimits
			parkLimits.live = tc.live
			defer func() { parkLimits = saved }()
			dir := t.TempDir()
			type result struct {
				rep *Report
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, _, err := groupRun(t, in, dir, tc.maxBytes, nil)
				done <- result{rep, err}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("a run with groups of rejected rows alone did not end")
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			parkLimits = saved
			if n := res.rep.Rejected.ByReason["out_of_scope"]; n < 24 {
				t.Errorf("%d rows rejected out of scope, want the 24 of the lost groups at least", n)
			}
			checkSeparateRuns(t, dir, bySection, "loc,lastmod,section\n", func(c *Config) { c.MaxBytes = tc.maxBytes })
		})
	}
}

// TestDefaultGroup: rows of no group go to --default-group's set.
func TestDefaultGroup(t *testing.T) {
	rows, _ := sectionRows()
	dir := t.TempDir()
	rep, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, func(c *Config) { c.Group.Default = "misc" })
	if err != nil {
		t.Fatal(err)
	}
	set := xmltest.ReadSet(t, dir, testBase, "sm-misc.xml", "sm-misc-robots.txt")
	if len(set.Shards) != 1 || len(set.Shards[0].URLs) != 6 || rep.Rejected.ByReason["group_empty"] != 0 || rep.Rejected.ByReason["group_unnameable"] != 6 {
		t.Errorf("misc: %d shards; rejected %v", len(set.Shards), rep.Rejected.ByReason)
	}

	// Rows that name the default group are its rows too, whichever comes
	// first: the default is that value, not another value of its name.
	for _, first := range []string{"misc", ""} {
		other := map[string]string{"misc": "", "": "misc"}[first]
		rows := []string{testBase + "a,," + first, testBase + "b,," + other, testBase + "c,, misc ", testBase + "d,,products"}
		dir := t.TempDir()
		rep, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, func(c *Config) { c.Group.Default = "misc" })
		if err != nil {
			t.Fatalf("first %q: %v", first, err)
		}
		set := xmltest.ReadSet(t, dir, testBase, "sm-misc.xml", "sm-misc-robots.txt")
		if len(rep.Groups) != 2 || len(set.Shards) != 1 || len(set.Shards[0].URLs) != 3 {
			t.Errorf("first %q: %d groups, misc has %d shards", first, len(rep.Groups), len(set.Shards))
		}
	}
	// A value of another case is another value of that name, as always.
	rows = []string{testBase + "a,,", testBase + "b,,Misc"}
	if _, _, err := groupRun(t, groupCSV(t, rows), t.TempDir(), 10485760, func(c *Config) { c.Group.Default = "misc" }); !errors.Is(err, ErrGroupCollision) {
		t.Errorf("Misc beside the default misc: %v, want %v", err, ErrGroupCollision)
	}
}

// twoNights publishes sectionRows into a folder and returns it with the
// rows by section.
func twoNights(t *testing.T) (dir string, bySection map[string][]string) {
	t.Helper()
	rows, bySection := sectionRows()
	dir = t.TempDir()
	if _, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, nil); err != nil {
		t.Fatal(err)
	}
	return dir, bySection
}

// nightRows joins the sections' rows, one changed by edit.
func nightRows(bySection map[string][]string, section string, edit func([]string) []string) []string {
	var rows []string
	for _, s := range slices.Sorted(maps.Keys(bySection)) {
		r := bySection[s]
		if s == section {
			r = edit(slices.Clone(r))
		}
		rows = append(rows, r...)
	}
	return rows
}

// TestGroupsSecondNight: a night that changes one group's rows uploads only
// that group's changed sitemaps; the others' are skipped. Of the unchanged
// groups' fixed files only the manifests are written: their roots and
// robots lines are the same files as before.
func TestGroupsSecondNight(t *testing.T) {
	dir, bySection := twoNights(t)
	before := stats(t, dir)
	rows := nightRows(bySection, "blog", func(r []string) []string {
		r[10] = strings.Replace(r[10], "2024-06-01", "2024-07-01", 1)
		return r
	})
	rep, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, func(c *Config) { c.Now = testNow.AddDate(0, 0, 1) })
	if err != nil {
		t.Fatal(err)
	}
	after := stats(t, dir)
	for _, g := range rep.Groups {
		l := publish.NewLayout("sm-" + g.Group)
		for name, same := range map[string]bool{l.Root(): g.Group != "blog", l.Robots(): true, l.Manifest(): false} {
			if b, a := before[name], after[name]; b == nil || a == nil || os.SameFile(b, a) != same {
				t.Errorf("%s: the same file as the first night's: %v; want %v", name, !same, same)
			}
		}
	}
	for _, g := range rep.Groups {
		changed := g.ShardsNew + g.ShardsRemoved
		if g.Group == "blog" && changed == 0 || g.Group != "blog" && changed != 0 || !g.Published {
			t.Errorf("group %s: %d new, %d removed, %d unchanged", g.Group, g.ShardsNew, g.ShardsRemoved, g.ShardsUnchanged)
		}
		if g.Group == "blog" && rep.Uploaded.Shards != g.ShardsNew {
			t.Errorf("uploaded %d shards; blog has %d new", rep.Uploaded.Shards, g.ShardsNew)
		}
	}
}

// TestGroupsSecondNightShardGone: a sitemap a group's manifest lists that
// is gone from the shared folder is written again on the next night, the
// same bytes under the same name; every other group's are skipped. (Each
// set finds its files in the listing the groups share.)
func TestGroupsSecondNightShardGone(t *testing.T) {
	dir, bySection := twoNights(t)
	gone := ""
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "sm-help-") && strings.HasSuffix(e.Name(), ".xml.gz") {
			gone = e.Name()
			break
		}
	}
	if gone == "" {
		t.Fatal("no sitemap of group help")
	}
	data, err := os.ReadFile(filepath.Join(dir, gone))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, gone)); err != nil {
		t.Fatal(err)
	}
	rep, _, err := groupRun(t, groupCSV(t, nightRows(bySection, "", nil)), dir, 10485760, func(c *Config) { c.Now = testNow.AddDate(0, 0, 1) })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Uploaded.Shards != 1 {
		t.Errorf("uploaded %d shards; want 1, %s", rep.Uploaded.Shards, gone)
	}
	if again, err := os.ReadFile(filepath.Join(dir, gone)); err != nil || !bytes.Equal(again, data) {
		t.Errorf("%s written again: %v, the same bytes: %v", gone, err, bytes.Equal(again, data))
	}
	for _, g := range rep.Groups {
		if g.ShardsNew != 0 || g.ShardsRemoved != 0 {
			t.Errorf("group %s: %d new, %d removed; want none", g.Group, g.ShardsNew, g.ShardsRemoved)
		}
	}
}

// stats returns the files of dir by name.
func stats(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fis := map[string]os.FileInfo{}
	for _, e := range ents {
		if fis[e.Name()], err = os.Stat(dir + "/" + e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	return fis
}

// TestGroupVanished: a published group missing from the input is a shrink
// of 100%, refused with nothing changed unless forced; forced, its set is
// left as it was.
func TestGroupVanished(t *testing.T) {
	dir, bySection := twoNights(t)
	before := xmltest.Snapshot(t, dir)
	delete(bySection, "help")
	in := groupCSV(t, nightRows(bySection, "", nil))
	later := func(c *Config) { c.Now = testNow.AddDate(0, 0, 1) }
	if _, _, err := groupRun(t, in, dir, 10485760, later); !errors.Is(err, ErrGroupVanished) {
		t.Fatalf("error %v; want ErrGroupVanished", err)
	}
	if after := xmltest.Snapshot(t, dir); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("a refused run changed the folder")
	}
	rep, _, err := groupRun(t, in, dir, 10485760, func(c *Config) { later(c); c.Force = true })
	if err != nil {
		t.Fatal(err)
	}
	after := xmltest.Snapshot(t, dir)
	for name, data := range before {
		if strings.HasPrefix(name, "sm-help") && !bytes.Equal(after[name], data) {
			t.Errorf("%s of the vanished group changed", name)
		}
	}
	if len(rep.Groups) != 3 || !rep.Groups[1].Vanished || rep.Groups[1].Group != "help" || rep.Groups[1].Name != "sm-help" ||
		rep.Groups[1].PublicURL != testBase || rep.Groups[1].Destination == "" {
		t.Errorf("groups %+v", rep.Groups)
	}
}

// TestGroupsShrink: --max-shrink holds per group.
func TestGroupsShrink(t *testing.T) {
	dir, bySection := twoNights(t)
	rows := nightRows(bySection, "products", func(r []string) []string { return r[:len(r)/3] })
	_, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, func(c *Config) { c.MaxShrink = 0.5 })
	if !errors.Is(err, publish.ErrShrink) || !strings.Contains(err.Error(), `group "products"`) {
		t.Fatalf("error %v; want a shrink of group products", err)
	}
}

// TestGroupsFailMidPublish: a failure at any write of the second night,
// the switch phase included (after other groups' roots were switched),
// leaves every group's previous set in place, byte for byte.
func TestGroupsFailMidPublish(t *testing.T) {
	dir, bySection := twoNights(t)
	before := xmltest.Snapshot(t, dir)
	rows := nightRows(bySection, "blog", func(r []string) []string { return append(r, testBase+"blog/new,,blog") })
	rows = nightRows(map[string][]string{"a": rows}, "a", func(r []string) []string {
		return append(r, testBase+"p/new,,products")
	})
	// help is unchanged: its root and robots lines are not written (a
	// switch that needs no undoing), the others' robots lines neither.
	in := groupCSV(t, rows)
	night := func(store sink.Store) func(*Config) {
		return func(c *Config) { c.Sink, c.Now = store, testNow.AddDate(0, 0, 1) }
	}
	// A folder as it is (the switch in batches) and a store that takes
	// one file at a time.
	for _, batches := range []bool{true, false} {
		store := func(dir string, n int) (sink.Store, *failingSink) {
			if batches {
				f := newFailingFolder(t, dir, n)
				return f, f.failingSink
			}
			local, _ := sink.NewLocal(dir)
			f := &failingSink{Store: local, n: n}
			return f, f
		}
		// Count the night's writes on a copy of the folder.
		scratch := t.TempDir()
		if err := os.CopyFS(scratch, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		counter, count := store(scratch, 1<<30)
		if _, _, err := groupRun(t, in, scratch, 10485760, night(counter)); err != nil {
			t.Fatal(err)
		}
		puts := 1<<30 - count.n
		// The switch: the 3 groups' manifests, then the roots of blog and
		// products; no robots lines follow (the same lines).
		switchAt := puts - 5 + 1
		if f, ok := counter.(*failingFolder); ok {
			want := []string{"batch sm-blog.manifest.json sm-help.manifest.json sm-products.manifest.json", "batch sm-blog.xml sm-products.xml"}
			if ops := f.ops; len(ops) < 2 || !slices.Equal(ops[len(ops)-2:], want) {
				t.Fatalf("the night's last writes %q; want %q", ops, want)
			}
		}
		for _, at := range []int{1, switchAt - 1, switchAt, switchAt + 1, switchAt + 2, switchAt + 3, switchAt + 4} {
			t.Run(fmt.Sprint("batches=", batches, "/put", at), func(t *testing.T) {
				fs, _ := store(dir, at)
				rep, _, err := groupRun(t, in, dir, 10485760, night(fs))
				if !errors.Is(err, errInjected) {
					t.Fatalf("error %v; want the injected one", err)
				}
				if rep.Published {
					t.Error("report says published")
				}
				if after := xmltest.Snapshot(t, dir); !maps.EqualFunc(before, after, bytes.Equal) {
					t.Fatalf("the folder changed: %d files before, %d after", len(before), len(after))
				}
			})
		}
	}
}

// TestGroupsSwitchInBatches: in a folder, the groups' new shards are made
// durable by one sync before any index names them, and their manifests,
// roots and robots lines are each written in one batch (one sync for all,
// not one per file), manifests before roots.
func TestGroupsSwitchInBatches(t *testing.T) {
	rows, _ := sectionRows()
	dir := t.TempDir()
	f := newFailingFolder(t, dir, 1<<30)
	rep, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, func(c *Config) { c.Sink = f })
	if err != nil {
		t.Fatal(err)
	}
	var deferred, synced bool
	var batches []string
	for _, op := range f.ops {
		kind, names, _ := strings.Cut(op, " ")
		switch kind {
		case "deferred":
			if !strings.HasSuffix(names, ".xml.gz") || len(batches) > 0 {
				t.Errorf("%s: only shards are deferred, before the switch", op)
			}
			deferred, synced = true, false
		case "sync":
			synced = true
		case "put": // an intermediate index: rewritten in place, set by set
			if !strings.Contains(names, "-index-") || !synced {
				t.Errorf("%s: a file put on its own (or before the shards' sync)", op)
			}
		case "batch":
			if !synced {
				t.Errorf("%s before a sync of the shards deferred", op)
			}
			batches = append(batches, names)
		}
	}
	if !deferred {
		t.Error("no shard deferred")
	}
	want := []string{".manifest.json", ".xml", "-robots.txt"}
	if len(batches) != len(want) {
		t.Fatalf("%d batches %q; want manifests, roots, robots", len(batches), batches)
	}
	for i, b := range batches {
		names := strings.Fields(b)
		if len(names) != len(rep.Groups) {
			t.Errorf("batch %q: %d files for %d groups", b, len(names), len(rep.Groups))
		}
		for _, n := range names {
			if !strings.HasSuffix(n, want[i]) {
				t.Errorf("batch %d holds %s; want *%s", i, n, want[i])
			}
		}
	}
}

// TestGroupsColumnar: the group column of a Parquet or an Arrow file
// gives the sets the same rows as CSV give.
func TestGroupsColumnar(t *testing.T) {
	rows, _ := sectionRows()
	in := groupCSV(t, rows)
	csvDir := t.TempDir()
	if _, _, err := groupRun(t, in, csvDir, 10485760, nil); err != nil {
		t.Fatal(err)
	}
	want := xmltest.Snapshot(t, csvDir)

	pq := inputtest.WriteFile(t, "in.parquet", nil)
	writeParquetFromCSV(t, in, pq)
	schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lastmod", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "section", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for _, row := range rows {
		for i, v := range strings.SplitN(row, ",", 3) {
			if v == "" {
				b.Field(i).AppendNull()
			} else {
				b.Field(i).(*array.StringBuilder).Append(v)
			}
		}
	}
	arrowPath := inputtest.WriteArrow(t, "in.arrow", []arrow.RecordBatch{b.NewRecordBatch()}, false)
	for _, path := range []string{pq, arrowPath} {
		dir := t.TempDir()
		if _, _, err := groupRun(t, path, dir, 10485760, nil); err != nil {
			t.Fatal(err)
		}
		if got := xmltest.Snapshot(t, dir); !maps.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("%s: the sets differ from the CSV's", path)
		}
	}
}

// TestEncodeGroupedAllocs: finding each row's group, by a column or by
// host, allocates nothing once the groups are known.
func TestEncodeGroupedAllocs(t *testing.T) {
	rows, _ := sectionRows()
	for _, byHost := range []bool{false, true} {
		cols := [input.NumColumns]string{input.Group: "section"}
		if byHost {
			cols = [input.NumColumns]string{}
		}
		sc := csvscan.NewScanner(strings.NewReader("loc,lastmod,section\n"+strings.Join(rows, "\n")+"\n"), "t.csv", input.Options{Columns: cols})
		b := newBatch(1 << 20)
		if err := sc.Fill(&b.Batch, 1<<20); err != nil {
			t.Fatal(err)
		}
		r, enc := encodingRun(t, cols, &Grouping{ByHost: byHost})
		g := r.newGrouper(enc)
		encode := func() {
			b.Out, b.Ends, b.EntryGroup = b.Out[:0], b.Ends[:0], b.EntryGroup[:0]
			b.EntryLine, b.EntryLastmod, b.EntryNews = b.EntryLine[:0], b.EntryLastmod[:0], b.EntryNews[:0]
			b.Rejects, b.RejectBuf = b.Rejects[:0], b.RejectBuf[:0]
			if err := encodeRows(enc, g, b, 1<<20, 0); err != nil {
				t.Fatal(err)
			}
		}
		encode()
		r.begins.Wait() // the groups' transactions begin in the background, allocating
		if groups := len(r.groups.all()); len(b.EntryGroup) != len(b.Ends) || groups != map[bool]int{false: 3, true: 2}[byHost] {
			t.Fatalf("by host %v: %d groups, %d entries with a group of %d", byHost, groups, len(b.EntryGroup), len(b.Ends))
		}
		if allocs := testing.AllocsPerRun(20, encode); allocs != 0 {
			t.Errorf("by host %v: %v allocations per batch of %d rows, want 0", byHost, allocs, b.Len())
		}
	}
}

// encodingRun returns a run begun for a test of the encoding of grouped
// rows (columns cols, grouping gr) under testBase, and its encoder; the
// test's cleanup ends it.
func encodingRun(t testing.TB, cols [input.NumColumns]string, gr *Grouping) (*run, *encode.Encoder) {
	t.Helper()
	snk, err := sink.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Inputs: []string{"t.csv"}, PublicURL: mustScope(t, testBase), Sink: snk, Name: "sm", MaxURLs: 50000,
		MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1, Columns: cols, Group: gr}
	r := &run{cfg: cfg.withDefaults(testNow), rep: NewReport(1)}
	if err := r.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.begins.Wait()
		r.closeDestinations(context.Background())
	})
	return r, r.newEncoder(cfg.PublicURL)
}

// FuzzGroupName: any value maps to a name that can follow "NAME-" in a
// file name, is its own name, and is lower case; or to a reject reason.
func FuzzGroupName(f *testing.F) {
	for _, s := range []string{"products", " Help ", "", "a/b", "Shop", "x-index-0001", "www.example.com", "ü", "\x00", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		name, r := GroupName(nil, []byte(value))
		switch {
		case r == encode.GroupEmpty:
			if strings.TrimSpace(value) != "" {
				t.Fatalf("%q: empty", value)
			}
			return
		case r != encode.OK:
			if r != encode.GroupUnnameable || len(name) != 0 {
				t.Fatalf("%q: %v, %q", value, r, name)
			}
			return
		}
		if len(name) == 0 || len(name) > MaxGroupName || strings.ToLower(string(name)) != string(name) {
			t.Fatalf("%q: name %q", value, name)
		}
		if again, r := GroupName(nil, name); r != encode.OK || !bytes.Equal(again, name) {
			t.Fatalf("%q: name %q names %q (%v)", value, name, again, r)
		}
		if err := publish.ValidStem("sitemap-" + string(name)); err != nil {
			t.Fatalf("%q: name %q: %v", value, name, err)
		}
	})
}

// TestGroupsOneLock: a grouped run takes the destination's lock, that of
// set NAME, once for all its groups: it fails while another run holds it.
func TestGroupsOneLock(t *testing.T) {
	rows, _ := sectionRows()
	dir := t.TempDir()
	snk, _ := sink.NewLocal(dir)
	held, err := publish.OpenDestination(context.Background(), snk, publish.NewLayout("sm"), publish.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = groupRun(t, groupCSV(t, rows), dir, 10485760, nil)
	if !errors.Is(err, sink.ErrLocked) {
		t.Fatalf("error %v; want the destination locked", err)
	}
	held.Close(context.Background())
	if _, _, err := groupRun(t, groupCSV(t, rows), dir, 10485760, nil); err != nil {
		t.Fatal(err)
	}
}

// TestGrouperRecent: the workers' cache of recent values (grouper.recent)
// gives every row the group its value names, whatever values share a
// slot: hundreds of values, short and long (past the slot's 31 bytes),
// empty and unnameable ones among them, met in any order and again. The
// entries come group by group, each group's in input order, and the
// rejects (of the group or of the loc) in input order.
func TestGrouperRecent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var values []string
	for i := range 400 {
		values = append(values, strings.Repeat("x", i%40)+strconv.Itoa(i))
	}
	values = append(values, "", " ", "a/b", "products", "products ", strings.Repeat("k", 31), strings.Repeat("k", 32))
	// Values that differ only between their first and last 8 bytes: each
	// pair shares a slot, and only the bytes in between tell them apart.
	for k := 1; k <= 15; k++ {
		for _, c := range []string{"A", "B"} {
			values = append(values, "section-"+strings.Repeat("m", k-1)+c+"-archive")
		}
	}
	var csv strings.Builder
	csv.WriteString("loc,section\n")
	var rowValue []string
	for i := range 20000 {
		v := values[rng.IntN(len(values))]
		if i%3 == 0 {
			v = values[len(values)-1-i%7] // the special ones, often
		}
		base := testBase
		if i%11 == 0 {
			base = "https://elsewhere.example/" // out of scope: rejected as encoded
		}
		fmt.Fprintf(&csv, "%sp%d,%q\n", base, i, v)
		rowValue = append(rowValue, v)
	}
	cols := [input.NumColumns]string{input.Group: "section"}
	sc := csvscan.NewScanner(strings.NewReader(csv.String()), "t.csv", input.Options{Columns: cols})
	b := newBatch(4 << 20)
	if err := sc.Fill(&b.Batch, 4<<20); err != nil {
		t.Fatal(err)
	}
	if b.Len() != len(rowValue) {
		t.Fatalf("%d rows read, want %d", b.Len(), len(rowValue))
	}
	// Rows the reader refused itself, in every window and at the edges
	// of some (groupWindow rows each): rejects of no group.
	refused := func(i int) bool { return i%97 == 5 || i%groupWindow == 0 || i%groupWindow == groupWindow-1 }
	for i := range rowValue {
		if refused(i) {
			b.Rejected = append(b.Rejected, input.RowReject{Row: i, Reason: encode.RecordTooLong})
		}
	}
	r, enc := encodingRun(t, cols, &Grouping{})
	g := r.newGrouper(enc)
	for pass := range 2 {
		b.Out, b.Ends, b.EntryGroup = b.Out[:0], b.Ends[:0], b.EntryGroup[:0]
		b.EntryLine, b.EntryLastmod, b.EntryNews = b.EntryLine[:0], b.EntryLastmod[:0], b.EntryNews[:0]
		b.Rejects, b.RejectBuf = b.Rejects[:0], b.RejectBuf[:0]
		if err := encodeRows(enc, g, b, 1<<20, 0); err != nil {
			t.Fatal(err)
		}
		sets := r.groups.all()
		byIndex := map[int32]string{}
		for _, s := range sets {
			byIndex[int32(s.index)] = s.group
		}
		// Entries come a window of rows at a time, group by group within
		// a window (each group's in input order): find each row's by its
		// line.
		if err := windowRuns(b); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		entryGroup := map[int64]int32{}
		for k, line := range b.EntryLine {
			entryGroup[line] = b.EntryGroup[k]
		}
		rej := 0
		for i, v := range rowValue {
			if refused(i) {
				if rej >= len(b.Rejects) || b.Rejects[rej].Line != b.Line[i] || b.Rejects[rej].Reason != encode.RecordTooLong || b.Rejects[rej].Group != -1 {
					t.Fatalf("pass %d: row %d: want the reader's reject, of no group", pass, i)
				}
				rej++
				continue
			}
			want, reason := GroupName(nil, []byte(v))
			if reason != encode.OK {
				if rej >= len(b.Rejects) || b.Rejects[rej].Line != b.Line[i] || b.Rejects[rej].Reason != reason {
					t.Fatalf("pass %d: row %d (%q): want the reject %v", pass, i, v, reason)
				}
				rej++
				continue
			}
			if i%11 == 0 {
				if rej >= len(b.Rejects) || b.Rejects[rej].Line != b.Line[i] || b.Rejects[rej].Group < 0 ||
					byIndex[b.Rejects[rej].Group] != string(want) {
					t.Fatalf("pass %d: row %d (%q), out of scope: want its reject, in group %q, in input order", pass, i, v, want)
				}
				rej++
				continue
			}
			group, ok := entryGroup[b.Line[i]]
			if !ok {
				t.Fatalf("pass %d: row %d (%q): no entry", pass, i, v)
			}
			if got := byIndex[group]; got != string(want) {
				t.Fatalf("pass %d: row %d (%q): group %q, want %q", pass, i, v, got, want)
			}
		}
		if len(entryGroup) != len(b.Ends) || rej != len(b.Rejects) {
			t.Fatalf("pass %d: %d entries and %d rejects checked, of %d and %d", pass, len(entryGroup), rej, len(b.Ends), len(b.Rejects))
		}
	}
}

// TestGroupsRecordTooLong: a record the reader refuses (longer than
// csvscan.MaxRecordBytes, its group column never read) is a reject of no
// group, whatever group the row before it had; the groups count only
// their own rows.
func TestGroupsRecordTooLong(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("loc,section\n")
	fmt.Fprintf(&csv, "%sa,products\n", testBase)
	fmt.Fprintf(&csv, "%s%s,products\n", testBase, strings.Repeat("x", csvscan.MaxRecordBytes))
	fmt.Fprintf(&csv, "%sb,help\n", testBase)
	rep, rejects, err := groupRun(t, writeText(t, "in.csv", csv.String()), t.TempDir(), 10485760, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rejects), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[1], ",") || !strings.Contains(lines[1], ",3,") {
		t.Fatalf("rejects:\n%.300s\nwant the header and line 3's, of no group", rejects)
	}
	for _, g := range rep.Groups {
		if g.Rows != 1 || g.URLs != 1 {
			t.Errorf("group %s: %d rows, %d URLs; want 1 and 1", g.Group, g.Rows, g.URLs)
		}
	}
}

// windowRuns reports the first entry of b, a grouped batch, out of the
// order encodeRows promises: windows of groupWindow rows one after another,
// a group's entries one run within a window, each group's in input order.
func windowRuns(b *Batch) error {
	window := map[int64]int{} // line -> its window
	for i, line := range b.Line {
		window[line] = i / groupWindow
	}
	type run struct {
		window int
		group  int32
	}
	last := map[int32]int64{} // group -> line of its last entry
	runs := map[run]bool{}
	for k, line := range b.EntryLine {
		g := b.EntryGroup[k]
		if l, ok := last[g]; ok && line <= l {
			return fmt.Errorf("entry %d (line %d, group %d): the group's entries are not in input order", k, line, g)
		}
		if k > 0 && window[line] < window[b.EntryLine[k-1]] {
			return fmt.Errorf("entry %d (line %d): its window comes before the entry before's", k, line)
		}
		rn := run{window[line], g}
		if runs[rn] && b.EntryGroup[k-1] != g {
			return fmt.Errorf("entry %d (line %d, group %d): the group's entries of window %d are not one run", k, line, g, rn.window)
		}
		last[g], runs[rn] = line, true
	}
	return nil
}

// FuzzEncodeGrouped: whatever the rows and their group values, a grouped
// batch holds, for every row with a group, the very entry an ungrouped
// encoding gives it, the entries come as windowRuns says, and the rejects
// (of the group or of the row) come in input order, each row an entry or a
// reject.
func FuzzEncodeGrouped(f *testing.F) {
	f.Add([]byte("a/1,products\nb,help\n,\nhttps://x.example/,products\nc,a/b\nd, Help \n"), uint8(3))
	f.Add([]byte("p\x00,products\nq,\"x,y\"\nr,products\n"), uint8(0))
	var long strings.Builder // rows of several windows, the groups' runs crossing them
	for i := range 3*groupWindow + 7 {
		fmt.Fprintf(&long, "p%d,%s\n", i, []string{"products", "help", "", "a/b", "articles", "products"}[i*i%6])
	}
	f.Add([]byte(long.String()), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint8) {
		var csv strings.Builder
		csv.WriteString("loc,section\n")
		for i, line := range strings.Split(string(data), "\n") {
			if i >= 500 {
				break
			}
			loc, section, _ := strings.Cut(line, ",")
			if i%(int(seed%5)+2) == 0 {
				loc = testBase + loc // in scope, mostly
			}
			q := func(v string) string { return `"` + strings.ReplaceAll(v, `"`, `""`) + `"` }
			csv.WriteString(q(loc) + "," + q(section) + "\n")
		}
		cols := [input.NumColumns]string{input.Group: "section"}
		read := func() *Batch {
			sc := csvscan.NewScanner(strings.NewReader(csv.String()), "t.csv", input.Options{Columns: cols})
			b := newBatch(1 << 20)
			if err := sc.Fill(&b.Batch, 1<<20); err != nil && err != io.EOF {
				t.Skip(err) // not CSV the scanner takes: the grouping is not what is tested
			}
			return b
		}
		plain, grouped := read(), read()
		r, enc := encodingRun(t, cols, &Grouping{})
		encodeBatch(enc, plain, 1<<20, 0)
		if err := encodeRows(enc, r.newGrouper(enc), grouped, 1<<20, 0); err != nil {
			if errors.Is(err, ErrGroupCollision) {
				return // two values of one name: the run stops, nothing to compare
			}
			t.Fatal(err)
		}
		entryOf := func(b *Batch, k int) string {
			from := uint32(0)
			if k > 0 {
				from = b.Ends[k-1]
			}
			return string(b.Out[from:b.Ends[k]])
		}
		plainEntry := map[int64]string{}
		for k, line := range plain.EntryLine {
			plainEntry[line] = entryOf(plain, k)
		}
		if err := windowRuns(grouped); err != nil {
			t.Fatal(err)
		}
		for k, line := range grouped.EntryLine {
			if want, ok := plainEntry[line]; !ok || want != entryOf(grouped, k) {
				t.Fatalf("line %d: grouped entry %q, ungrouped %q", line, entryOf(grouped, k), want)
			}
		}
		for i := 1; i < len(grouped.Rejects); i++ {
			if grouped.Rejects[i].Line <= grouped.Rejects[i-1].Line {
				t.Fatalf("rejects out of input order: line %d after %d", grouped.Rejects[i].Line, grouped.Rejects[i-1].Line)
			}
		}
		if n := len(grouped.Ends) + len(grouped.Rejects); n != grouped.Len() {
			t.Fatalf("%d entries and %d rejects for %d rows", len(grouped.Ends), len(grouped.Rejects), grouped.Len())
		}
	})
}

// TestGroupNoURLNewsUntouched: a group whose every row is rejected is not
// published, and that holds for its news sitemap too, which has a fixed
// name and is written in place: forced past the group's 100% shrink, its
// live news sitemap keeps its bytes; a new group with no URL leaves no
// file, forced or not.
func TestGroupNoURLNewsUntouched(t *testing.T) {
	now := testNow.AddDate(0, 0, 1)
	header, lines := newsLines(t, now, 40, 0)
	lost := "https://elsewhere.example/x,2026-01-01,,,,,lost\n" // a new group, out of scope
	var night1, night2 strings.Builder
	for i, l := range lines[1:] {
		section := []string{"world", "sport"}[i%2]
		fmt.Fprintf(&night1, "%s,%s\n", l, section)
		if section == "sport" {
			l = strings.Replace(l, testBase, "https://elsewhere.example/", 1) // every sport row out of scope
		}
		fmt.Fprintf(&night2, "%s,%s\n", l, section)
	}
	for _, force := range []bool{true, false} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			dir := t.TempDir()
			in1 := writeText(t, "in1.csv", header+night1.String())
			if _, _, err := groupRun(t, in1, dir, 10485760, func(c *Config) { c.Now = now }); err != nil {
				t.Fatal(err)
			}
			before := xmltest.Snapshot(t, dir)
			if _, ok := before["sm-sport-news-0001.xml.gz"]; !ok {
				t.Fatalf("night 1 wrote no news sitemap for sport: %v", slices.Sorted(maps.Keys(before)))
			}
			in2 := night1.String() // every group keeps its rows
			if force {
				in2 = night2.String() // sport loses every row: -100%, forced
			}
			rep, _, err := groupRun(t, writeText(t, "in2.csv", header+in2+lost), dir, 10485760,
				func(c *Config) { c.Now = now.Add(time.Hour); c.Force = force })
			if err != nil {
				t.Fatal(err)
			}
			after := xmltest.Snapshot(t, dir)
			for _, g := range rep.Groups {
				if (g.Group == "lost" || (force && g.Group == "sport")) && (g.URLs != 0 || g.Published) {
					t.Errorf("group %s: %d URLs, published %v", g.Group, g.URLs, g.Published)
				}
			}
			for name, data := range before {
				if force && strings.HasPrefix(name, "sm-sport") && !bytes.Equal(after[name], data) {
					t.Errorf("%s of the group left as it was changed: %d bytes -> %d", name, len(data), len(after[name]))
				}
			}
			for name := range after {
				if strings.HasPrefix(name, "sm-lost") {
					t.Errorf("%s written for a group with no URL", name)
				}
			}
			xmltest.ValidateDir(t, dir)
		})
	}
}
