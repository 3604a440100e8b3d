package pqread

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/internal/columnar"
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

// TestParquetDecimalScale: a DECIMAL column whose scale no decimal can
// have is refused when the file is opened: each of its values would be
// written with a digit per step of the scale (here 16 MiB a row).
func TestParquetDecimalScale(t *testing.T) {
	for scale, ok := range map[int]bool{2: true, -columnar.MaxScale: true, columnar.MaxScale: true, columnar.MaxScale + 1: false, 1 << 24: false, -1 << 24: false} {
		schema := parquet.NewSchema("x", parquet.Group{
			"loc":      parquet.String(),
			"priority": parquet.Decimal(scale, 9, parquet.Int32Type),
		})
		var buf bytes.Buffer
		w := parquet.NewWriter(&buf, schema)
		if _, err := w.WriteRows([]parquet.Row{{
			parquet.ByteArrayValue([]byte("https://www.example.com/")).Level(0, 0, 0),
			parquet.Int32Value(5).Level(0, 0, 1),
		}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		in := inputtest.WriteFile(t, "d.parquet", buf.Bytes())
		r, err := Open(in, input.Options{})
		if ok {
			if err != nil {
				t.Fatalf("scale %d: %v", scale, err)
			}
			if n, err := inputtest.ReadAll(r); n != 1 || err != nil {
				t.Errorf("scale %d: %d rows, %v", scale, n, err)
			}
			r.Close()
			continue
		}
		want := fmt.Sprintf(`column "priority" (priority field): unsupported column type DECIMAL(9,%d) of scale %d; want a scale from -76 to 76`, scale, scale)
		if !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), want) {
			if err == nil {
				r.Close()
			}
			t.Errorf("scale %d: %v\nwant …%s", scale, err, want)
		}
	}
}
