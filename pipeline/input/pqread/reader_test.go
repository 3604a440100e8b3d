package pqread

import (
	"errors"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// TestParquetDuplicateColumn: a schema with two columns matching a mapped
// name by the same rule (Parquet names are unique, so here two that match
// "loc" case-insensitively, neither exactly) is refused, naming the file and
// both columns.
func TestParquetDuplicateColumn(t *testing.T) {
	type twoLocs struct {
		A string `parquet:"Loc"`
		B string `parquet:"LOC"`
	}
	in := inputtest.WriteParquet(t, "x.parquet", []twoLocs{{"https://www.example.com/a", "https://www.example.com/b"}})
	_, err := Open(in, input.Options{})
	want := in + `: duplicate column: columns 1 ("Loc") and 2 ("LOC") both match the loc column name "loc"`
	if !errors.Is(err, input.ErrDuplicateColumn) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%v\nwant %s…", err, want)
	}

	// An exact match is no guess.
	type exact struct {
		A string `parquet:"loc"`
		B string `parquet:"LOC"`
	}
	in = inputtest.WriteParquet(t, "y.parquet", []exact{{"https://www.example.com/a", "https://www.example.com/b"}})
	r, err := Open(in, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := inputtest.ReadAll(r); n != 1 || err != nil {
		t.Fatalf("%d rows, %v", n, err)
	}
}
