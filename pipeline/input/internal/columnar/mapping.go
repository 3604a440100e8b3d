package columnar

import (
	"errors"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
)

// Opener opens the columns of one input as Map finds them, by the index of
// their top-level field; an error stops Map and is returned as it is.
type Opener struct {
	Core func(c input.Column, field int) error     // a mapped core field's column
	Ext  func(x encode.ExtColumn, field int) error // an extension column of one value a row
	List func(x encode.ExtColumn, field int) error // an extension column of a list (images, alternates, videos)
}

// Map finds the core fields among the top-level fields named names as
// opt.Map says, and opens each, in field order: loc, lastmod, changefreq,
// priority. It fails on two columns matching one name, and on a missing
// column Options.Map refuses (loc, or one mapped by name), when its turn
// comes. Then it opens the other fields named like an extension column
// (encode.ParseExtColumn), in the input's order.
func Map(names []string, opt input.Options, o Opener) error {
	m, merr := opt.Map(names)
	if errors.Is(merr, input.ErrDuplicateColumn) {
		return merr
	}
	mapped := make(map[int]bool, input.NumColumns)
	for c := range input.NumColumns {
		i := m.Index[c]
		if i < 0 {
			if e, ok := merr.(*input.ColumnError); ok && e.Field == c {
				return merr
			}
			continue
		}
		if err := o.Core(c, i); err != nil {
			return err
		}
		mapped[i] = true
	}
	for i, name := range names {
		if mapped[i] {
			continue
		}
		x, ok := encode.ParseExtColumn(name)
		switch {
		case !ok:
			continue
		case IsListKind(x.Kind):
			if err := o.List(x, i); err != nil {
				return err
			}
		default:
			if err := o.Ext(x, i); err != nil {
				return err
			}
		}
	}
	return nil
}
