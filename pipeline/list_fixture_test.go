package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/arrowread"
	"github.com/sitemapgen/sitemapgen/pipeline/input/inputtest"
	"github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)

// The list fixtures are seeds of FuzzParquetReader and FuzzArrowReader
// too; -update-fixtures rewrites them from inputtest.ListRows.
const (
	listParquetFixture = fixtures + "lists.parquet"
	listArrowFixture   = fixtures + "lists.arrow"
)

func TestListFixtures(t *testing.T) {
	rows, want := inputtest.ListRows(30)
	if *updateFixtures {
		p := inputtest.WriteParquet(t, "lists.parquet", rows, parquet.PageBufferSize(256), parquet.MaxRowsPerRowGroup(8))
		a := inputtest.WriteArrow(t, "lists.arrow", inputtest.ArrowListRecords(rows, 7), false)
		for src, dst := range map[string]string{p: listParquetFixture, a: listArrowFixture} {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, in := range []string{listParquetFixture, listArrowFixture} {
		_, set, _ := runTo(t, Config{Inputs: []string{in}})
		checkEntries(t, urlEntries(set), want)
	}
}

// TestListCorrupt: truncated and damaged files with list columns fail
// with input.ErrCorrupt (or read), never panic nor loop.
func TestListCorrupt(t *testing.T) {
	pq, err := os.ReadFile(listParquetFixture)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := os.ReadFile(listArrowFixture)
	if err != nil {
		t.Fatal(err)
	}
	// from, to: the part of the file damaged. For Arrow, the record
	// batches only: a damaged schema can make arrow-go's ipc reader
	// allocate without bound (a flatbuffer vector length is trusted), a
	// limitation of the library for every Arrow input, not of list columns.
	variants := func(data []byte, from, to int) [][]byte {
		var out [][]byte
		for n := 0; n < len(data); n += max(len(data)/97, 1) {
			out = append(out, data[:n])
		}
		for i := from; i < to; i += max(len(data)/211, 1) {
			for _, x := range []byte{0xff, 0x01, 0x80} {
				bad := bytes.Clone(data)
				bad[i] ^= x
				out = append(out, bad)
			}
		}
		return out
	}
	for i, data := range variants(pq, 4, len(pq)) {
		t.Run(fmt.Sprint("parquet ", i), func(t *testing.T) {
			pr, err := pqread.NewReader(bytes.NewReader(data), int64(len(data)), "bad.parquet", input.Options{})
			if err != nil {
				return
			}
			defer pr.Close()
			inputtest.FuzzRead(t, pr)
		})
	}
	for i, data := range variants(ar, len(ar)/4, len(ar)*3/4) {
		t.Run(fmt.Sprint("arrow ", i), func(t *testing.T) {
			r, err := arrowread.NewReader(bytes.NewReader(data), int64(len(data)), "bad.arrow", input.Options{})
			if err != nil {
				return
			}
			defer r.Close()
			inputtest.FuzzRead(t, r)
		})
	}
}
