package pipeline

import (
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

func TestArrowListColumns(t *testing.T) {
	rows, want := inputtest.ListRows(300)
	recs := inputtest.ArrowListRecords(rows, 37)
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "lists.arrow", true: "lists.arrows"}[stream]
		t.Run(name, func(t *testing.T) {
			in := inputtest.WriteArrow(t, name, recs, stream)
			rep, set, dir := runTo(t, Config{Inputs: []string{in}})
			xmltest.ValidateDir(t, dir)
			checkEntries(t, urlEntries(set), want)
			for reason, n := range map[string]int64{"image_invalid": 1, "alternate_duplicate": 1, "hreflang_invalid": 1, "video_field_invalid": 1, "video_invalid": 1} {
				if got := rep.Warnings.ByReason[reason]; got != n {
					t.Errorf("%s: %d; want %d (all: %v)", reason, got, n, rep.Warnings.ByReason)
				}
			}
		})
	}
}
