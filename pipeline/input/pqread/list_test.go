package pqread

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
)

// TestParquetListAllocs: packing a row's list columns does not allocate
// once the pages are loaded.
func TestParquetListAllocs(t *testing.T) {
	rows, _ := inputtest.ListRows(2000)
	in := inputtest.WriteParquet(t, "lists.parquet", rows, parquet.PageBufferSize(64<<20), parquet.MaxRowsPerRowGroup(1<<20))
	pr, err := Open(in, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if err := pr.nextRowGroup(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1<<20)
	for x, pl := range pr.lists {
		for range 10 { // the first rows load the pages
			if buf, err = pl.takeRow(buf[:0]); err != nil {
				t.Fatal(err)
			}
		}
		if a := testing.AllocsPerRun(200, func() {
			if buf, err = pl.takeRow(buf[:0]); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per row; want 0", pr.fill.Ext[x].Kind.Namespace().AppendDecls(nil), a)
		}
	}
}

func TestParquetListTypeErrors(t *testing.T) {
	type flatImages struct {
		Loc    string `parquet:"loc"`
		Images string `parquet:"images"`
	}
	type intImages struct {
		Loc    string  `parquet:"loc"`
		Images []int64 `parquet:"images,list"`
	}
	type noFields struct {
		Loc    string `parquet:"loc"`
		Videos []struct {
			Name string `parquet:"name"`
		} `parquet:"videos,list"`
	}
	type badField struct {
		Loc    string `parquet:"loc"`
		Videos []struct {
			Title    string  `parquet:"title"`
			Duration float64 `parquet:"duration"`
		} `parquet:"videos,list"`
	}
	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"flat images":    {inputtest.WriteParquet(t, "a.parquet", []flatImages{{"https://www.example.com/", "x"}}), "not a list"},
		"int images":     {inputtest.WriteParquet(t, "b.parquet", []intImages{{"https://www.example.com/", []int64{1}}}), "a list of INT(64"},
		"no known field": {inputtest.WriteParquet(t, "c.parquet", []noFields{{Loc: "https://www.example.com/"}}), "no field sitemapgen knows (name)"},
		"bad field":      {inputtest.WriteParquet(t, "d.parquet", []badField{{Loc: "https://www.example.com/"}}), `field "duration"`},
	} {
		_, err := Open(tc.path, input.Options{})
		if !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want input.ErrColumnType mentioning %q", name, err, tc.want)
		}
	}
}

// TestParquetListBounded: a row's list is bounded (maxListBytes) whatever
// the file repeats; here one dictionary value of 4 KiB, 1,100 times, in a
// file of a few KiB.
func TestParquetListBounded(t *testing.T) {
	type row struct {
		Loc    string    `parquet:"loc"`
		Images []*string `parquet:"images,optional,list" parquet-element:",optional,dict"`
	}
	big := "https://www.example.com/" + strings.Repeat("a", 4<<10)
	r := row{Loc: "https://www.example.com/"}
	for range 1100 {
		r.Images = append(r.Images, &big)
	}
	in := inputtest.WriteParquet(t, "big.parquet", []row{r}, parquet.Compression(&parquet.Zstd))
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Fatalf("file of %d bytes; want a small one", len(data))
	}
	pr, err := NewReader(bytes.NewReader(data), int64(len(data)), "big.parquet", input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var b input.Batch
	err = pr.Fill(&b, 0)
	if !errors.Is(err, input.ErrCorrupt) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Fill: %v; want a list longer than %d bytes refused", err, maxListBytes)
	}
}
