package input_test

import (
	"errors"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

func TestMap(t *testing.T) {
	tests := []struct {
		have    []string
		columns [input.NumColumns]string // Options.Columns
		want    [input.NumColumns]int    // the mapping, when no error
		err     error
		msg     string // the error's text, when err is set
	}{
		{have: []string{"loc"}, want: [...]int{0, -1, -1, -1, -1}},
		{have: []string{"priority", " LOC ", "lastmod", "x", "changefreq"}, want: [...]int{1, 2, 4, 0, -1}},
		{have: []string{"LOC", "loc"}, want: [...]int{1, -1, -1, -1, -1}},              // exact wins: no guess
		{have: []string{"loc", "x", "x", "lastmod"}, want: [...]int{0, 3, -1, -1, -1}}, // unmapped columns may repeat
		{have: []string{"url", "Url"}, columns: [input.NumColumns]string{"URL"}, want: [...]int{-1, -1, -1, -1, -1}, err: input.ErrDuplicateColumn,
			msg: `duplicate column: columns 1 ("url") and 2 ("Url") both match the loc column name "URL"; rename or drop one, or map another with --loc-column`},
		{have: []string{"loc", "lastmod", "loc"}, err: input.ErrDuplicateColumn,
			msg: `duplicate column: columns 1 ("loc") and 3 ("loc") both match the loc column name "loc"; rename or drop one, or map another with --loc-column`},
		{have: []string{"loc", " loc"}, err: input.ErrDuplicateColumn},
		{have: []string{"Loc", "LOC"}, err: input.ErrDuplicateColumn},
		{have: []string{"loc", "LastMod", "lastmod", "lastmod"}, err: input.ErrDuplicateColumn,
			msg: `duplicate column: columns 3 ("lastmod") and 4 ("lastmod") both match the lastmod column name "lastmod"; rename or drop one, or map another with --lastmod-column`},
		{have: []string{"loc", "when", "when"}, columns: [input.NumColumns]string{"", "when"}, err: input.ErrDuplicateColumn},
		{have: []string{"loc", "priority", "Priority"}, err: nil, want: [...]int{0, -1, -1, 1, -1}},
		{have: []string{"url", "url"}, err: input.ErrNoColumn}, // no loc: that is the error to fix first
		// The group column: read only when named (--group-by), never by a default name.
		{have: []string{"loc", "", "group"}, want: [...]int{0, -1, -1, -1, -1}},
		{have: []string{"loc", "Section"}, columns: [input.NumColumns]string{input.Group: "section"}, want: [...]int{0, -1, -1, -1, 1}},
		{have: []string{"loc", "kind"}, columns: [input.NumColumns]string{input.Group: "section"}, err: input.ErrNoColumn,
			msg: `no such column: no group column: none of the columns ("loc", "kind") is named "section"; name the column that holds the groups with --group-by`},
		{have: []string{"loc", "section", "section"}, columns: [input.NumColumns]string{input.Group: "section"}, err: input.ErrDuplicateColumn,
			msg: `duplicate column: columns 2 ("section") and 3 ("section") both match the group column name "section"; rename or drop one, or map another with --group-by`},
		// One column, two fields: refused (--lastmod-column loc read no lastmod).
		{have: []string{"loc", "lastmod"}, columns: [input.NumColumns]string{"", "loc"}, err: input.ErrSharedColumn,
			msg: `one column mapped to two fields: column 1 ("loc") matches both the loc column name "loc" (--loc-column) and the lastmod column name "loc" (--lastmod-column); a column holds one field: map each to a column of its own`},
		{have: []string{"loc", "lastmod"}, columns: [input.NumColumns]string{"", "LOC"}, err: input.ErrSharedColumn},
		{have: []string{"x", "Url"}, columns: [input.NumColumns]string{"url", "", "", "URL"}, err: input.ErrSharedColumn,
			msg: `one column mapped to two fields: column 2 ("Url") matches both the loc column name "url" (--loc-column) and the priority column name "URL" (--priority-column); a column holds one field: map each to a column of its own`},
		{have: []string{"loc", "lastmod", "changefreq"}, columns: [input.NumColumns]string{"", "", "Lastmod"}, err: input.ErrSharedColumn},
		{have: []string{"loc", "LOC"}, columns: [input.NumColumns]string{"", "LOC"}, want: [...]int{0, 1, -1, -1, -1}},   // each named exactly
		{have: []string{"loc"}, columns: [input.NumColumns]string{input.Group: "loc"}, want: [...]int{0, -1, -1, -1, 0}}, // the group may be a field's
	}
	for _, tt := range tests {
		m, err := input.Options{Columns: tt.columns}.Map(tt.have)
		if tt.err == nil {
			if err != nil || m.Index != tt.want {
				t.Errorf("Map(%q) = %v, %v; want %v", tt.have, m.Index, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("Map(%q): error %v; want %v", tt.have, err, tt.err)
			continue
		}
		if tt.err == input.ErrSharedColumn && !errors.Is(err, input.ErrDuplicateColumn) {
			// The columnar readers stop on ErrDuplicateColumn.
			t.Errorf("Map(%q): error %v is not an ErrDuplicateColumn", tt.have, err)
		}
		if tt.msg != "" && err.Error() != tt.msg {
			t.Errorf("Map(%q): error\n%s\nwant\n%s", tt.have, err, tt.msg)
		}
	}
}
