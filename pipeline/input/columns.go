package input

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

// Errors of every input format. They reach the caller wrapped with the
// input's name and, where known, the row, record batch, row group and
// column; test them with errors.Is.
var (
	// ErrEmptyInput reports an input file that holds no data rows. A nightly
	// export that comes out empty is a fault upstream, not a site with no
	// pages.
	ErrEmptyInput = errors.New("no data rows")
	// ErrNoColumn: the header or schema lacks the loc column, or an
	// optional column mapped to a name other than its default.
	ErrNoColumn = errors.New("no such column")
	// ErrDuplicateColumn: the mapping of fields to columns is not one to
	// one: two columns of the header or schema both match the name a field
	// is read from, so which one holds it is a guess (a *DuplicateError), or
	// one column matches the names of two fields (a *SharedColumnError,
	// which wraps ErrSharedColumn too).
	ErrDuplicateColumn = errors.New("duplicate column")
	// ErrSharedColumn: one column is mapped to two fields (--lastmod-column
	// loc): one of them would be read from a column that holds the other,
	// and the column that holds it ignored. A usage error.
	ErrSharedColumn = errors.New("one column mapped to two fields")
	// ErrColumnType: a mapped column has a type sitemapgen cannot read as
	// that field (a nested type, a number for loc, a list in CSV, ...).
	ErrColumnType = errors.New("unsupported column type")
	// ErrCorrupt: a columnar file is truncated, is not of its format, or
	// holds data its format does not allow.
	ErrCorrupt = errors.New("corrupt or truncated file")
)

// Options says how to read the inputs of a run.
type Options struct {
	// Columns is the header or schema name of each field; "" is its default
	// name (DefaultNames).
	Columns [NumColumns]string
	// Lines reads a CSV input as one URL per line (.txt): no CSV parsing,
	// the whole line (minus \r) is the loc, no header. Open sets it from the
	// file name.
	Lines bool
	// ListsInDefaultGroup: a list of URLs (no header, or .txt), which has
	// no column to name a group, is read with an empty group value (its
	// rows go to the run's default group) rather than failing for want of
	// the group column.
	ListsInDefaultGroup bool
	// Sequential decodes a Parquet file on the goroutine that fills its
	// batches alone, without reading its pages ahead on another (as it is
	// when GOMAXPROCS is 1): the one-core baseline of the benchmarks.
	Sequential bool
	// Budget is the input's share of what the inputs of a run may hold
	// of decompressed Parquet pages at once (Parts gives each input its
	// own, in input order); nil: a budget of the input's own.
	Budget *saferio.Part
}

// Mapping is where each field is found among an input's columns.
type Mapping struct {
	Names [NumColumns]string // the column name each field is read from
	Index [NumColumns]int    // the index of its column; -1: absent
}

// Map finds the fields among the columns named have, a header or a
// schema's top-level fields: a field's column is the one named exactly as
// Options.Columns says (spaces around names ignored), else the first whose
// name matches it case-insensitively. A missing loc column is an error, and
// so is a missing optional column mapped to a name other than its default
// (a typo or a changed export: stop rather than drop a field). Errors wrap
// ErrNoColumn and name the columns the input has. A field whose name two
// columns match by the same rule (both exactly, or, with no exact match,
// both case-insensitively: "loc,loc", "URL,url" for "Url") is an error too,
// a *DuplicateError: the mapping would pick one silently. So is one column
// that two of loc, lastmod, changefreq and priority are mapped to (their
// names equal, or matching it case-insensitively), a *SharedColumnError:
// one field would be read from the other's column, and its own ignored.
// (The group column may be a field's too.) Unmapped columns may repeat.
func (o Options) Map(have []string) (Mapping, error) {
	var m Mapping
	for c, n := range o.Columns {
		if n = strings.TrimSpace(n); n == "" {
			n = DefaultNames[c]
		}
		m.Names[c] = n
		m.Index[c] = -1
		if n != "" { // an unnamed Group column is not read
			m.Index[c] = find(have, n)
		}
	}
	for c := range NumColumns {
		if m.Index[c] >= 0 || c != Loc && strings.EqualFold(m.Names[c], DefaultNames[c]) {
			continue
		}
		return m, &ColumnError{Field: c, Name: m.Names[c], Have: have}
	}
	for c := range CoreColumns {
		for d := c + 1; d < CoreColumns; d++ {
			if i := m.Index[c]; i >= 0 && m.Index[d] == i {
				return m, &SharedColumnError{Fields: [2]Column{c, d}, Names: [2]string{m.Names[c], m.Names[d]}, Index: i, Have: have}
			}
		}
	}
	for c := range NumColumns {
		if i := m.Index[c]; i >= 0 {
			if j := findAfter(have, m.Names[c], i); j >= 0 {
				return m, &DuplicateError{Field: c, Name: m.Names[c], First: i, Second: j, Have: have}
			}
		}
	}
	return m, nil
}

// Mapped reports whether column index k holds a mapped field.
func (m *Mapping) Mapped(k int) bool {
	for _, i := range m.Index {
		if i == k {
			return true
		}
	}
	return false
}

func find(have []string, name string) int {
	for i, h := range have {
		if strings.TrimSpace(h) == name {
			return i
		}
	}
	for i, h := range have {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

// findAfter returns the index of a column after have[i], the column find
// chose for name, that matches name by the rule that chose it; -1: none.
func findAfter(have []string, name string, i int) int {
	exact := strings.TrimSpace(have[i]) == name
	for j := i + 1; j < len(have); j++ {
		h := strings.TrimSpace(have[j])
		if h == name || !exact && strings.EqualFold(h, name) {
			return j
		}
	}
	return -1
}

// DuplicateError reports two columns that both match a field's name. It
// wraps ErrDuplicateColumn.
type DuplicateError struct {
	Field         Column   // the field
	Name          string   // the column name it was looked up by
	First, Second int      // the 0-based indexes of the two columns
	Have          []string // the input's column names
}

// Error names the field, both columns (1-based, as a person counts them)
// and what to do.
func (e *DuplicateError) Error() string {
	flag := "--" + FieldName(e.Field) + "-column"
	if e.Field == Group {
		flag = "--group-by"
	}
	return fmt.Sprintf("%v: columns %d (%q) and %d (%q) both match the %s column name %q; rename or drop one, or map another with %s",
		ErrDuplicateColumn, e.First+1, e.Have[e.First], e.Second+1, e.Have[e.Second], FieldName(e.Field), e.Name, flag)
}

// Unwrap returns ErrDuplicateColumn.
func (e *DuplicateError) Unwrap() error { return ErrDuplicateColumn }

// SharedColumnError reports one column that two fields are mapped to. It
// wraps ErrSharedColumn and ErrDuplicateColumn.
type SharedColumnError struct {
	Fields [2]Column // the two fields
	Names  [2]string // the column names they were looked up by
	Index  int       // the 0-based index of the column
	Have   []string  // the input's column names
}

// Error names the column (1-based), both fields with their names and flags,
// and what to do.
func (e *SharedColumnError) Error() string {
	a, b := FieldName(e.Fields[0]), FieldName(e.Fields[1])
	return fmt.Sprintf("%v: column %d (%q) matches both the %s column name %q (--%s-column) and the %s column name %q (--%s-column); a column holds one field: map each to a column of its own",
		ErrSharedColumn, e.Index+1, e.Have[e.Index], a, e.Names[0], a, b, e.Names[1], b)
}

// Unwrap returns ErrSharedColumn and ErrDuplicateColumn.
func (e *SharedColumnError) Unwrap() []error { return []error{ErrSharedColumn, ErrDuplicateColumn} }

// ColumnError reports a field whose column an input lacks. It wraps
// ErrNoColumn.
type ColumnError struct {
	Field Column   // the field
	Name  string   // the column name it was looked up by
	Have  []string // the input's column names
}

// Error names the field, the name looked up and the columns there are.
func (e *ColumnError) Error() string {
	const show = 20
	var cols strings.Builder
	for k, h := range e.Have {
		if k == show {
			fmt.Fprintf(&cols, ", … (%d more)", len(e.Have)-show)
			break
		}
		if k > 0 {
			cols.WriteString(", ")
		}
		fmt.Fprintf(&cols, "%q", h)
	}
	field := FieldName(e.Field)
	if e.Field == Group && len(e.Have) == 0 {
		return fmt.Sprintf("%v: no group column: a list of URLs (no header line, or a .txt file) has no column named %q; give it a header naming its columns, one of them %q (a CSV), or put its rows in --default-group",
			ErrNoColumn, e.Name, e.Name)
	}
	if e.Field == Group {
		return fmt.Sprintf("%v: no group column: none of the columns (%s) is named %q; name the column that holds the groups with --group-by",
			ErrNoColumn, cols.String(), e.Name)
	}
	if e.Field == Loc {
		return fmt.Sprintf("%v: no loc column: none of the columns (%s) is named %q; name the column that holds the URLs with --loc-column",
			ErrNoColumn, cols.String(), e.Name)
	}
	return fmt.Sprintf("%v: no %s column: none of the columns (%s) is named %q; map another with --%s-column",
		ErrNoColumn, field, cols.String(), e.Name, field)
}

// Unwrap returns ErrNoColumn.
func (e *ColumnError) Unwrap() error { return ErrNoColumn }
