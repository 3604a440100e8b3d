package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// publishedLocs runs generate on one CSV file and returns the published
// locs (relative to base) and the report; the run must exit 0 and its
// report add up.
func publishedLocs(t *testing.T, csv string, flags ...string) ([]string, reportView) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, report := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	args := append([]string{"generate", "--public-url", base, "--out", out, "--report", report}, flags...)
	code, _, stderr := sitemapgen(t, "", append(args, in)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := readReport(t, report)
	if r.Rows != r.URLs+r.Rejected.Total+r.Unfinished {
		t.Fatalf("rows %d != urls %d + rejected %d + unfinished %d", r.Rows, r.URLs, r.Rejected.Total, r.Unfinished)
	}
	set := xmltest.ReadSet(t, out, base, "sitemap.xml", "")
	var locs []string
	for _, s := range set.Shards {
		for _, u := range s.URLs {
			locs = append(locs, strings.TrimPrefix(u.Loc, base)+"|"+u.Lastmod+"|"+u.Priority)
		}
	}
	return locs, reportView{rows: r.Rows, urls: r.URLs, rejected: r.Rejected.Total, warnings: r.Warnings.Total}
}

type reportView struct{ rows, urls, rejected, warnings int64 }

// TestLoneCRIsALineEnd: a lone CR (old Mac exports, some warehouse unloads)
// ends a row. It used to hide the next row in the previous row's last field,
// with only a priority warning: rows=2, urls=2, the row lost.
func TestLoneCRIsALineEnd(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"one lone CR", base + "a,2024-01-01,daily,0.5\r" + base + "b,2024-01-02,daily,0.6\n" + base + "c,2024-01-03,daily,0.7\n",
			[]string{"a|2024-01-01|0.5", "b|2024-01-02|0.6", "c|2024-01-03|0.7"}},
		{"CR line ends only, with a header", "loc,lastmod,priority\r/a,2024-01-01,0.5\r\r/b,,\r\"/c\",2024-01-03,\r",
			[]string{"a|2024-01-01|0.5", "b||", "c|2024-01-03|"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, r := publishedLocs(t, tt.in)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("published:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if want := (reportView{rows: int64(len(tt.want)), urls: int64(len(tt.want))}); r != want {
				t.Errorf("report %+v, want %+v", r, want)
			}
		})
	}
}
