package bench

import (
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// ParquetRow is the schema of WriteParquet's files, as a warehouse exports
// it: a required string loc, nullable string lastmod and dictionary-encoded
// changefreq, a nullable double priority; snappy throughout.
type ParquetRow struct {
	Loc        string   `parquet:"loc,snappy"`
	Lastmod    *string  `parquet:"lastmod,snappy,optional"`
	Changefreq *string  `parquet:"changefreq,snappy,optional,dict"`
	Priority   *float64 `parquet:"priority,snappy,optional"`
}

// WriteParquet writes rows rows of g to w as Parquet, rowGroup rows per row
// group: the same rows AppendCSV writes for a Generator of the same seed
// (an absent field is a null; priority is a double).
func WriteParquet(w io.Writer, g *Generator, rows, rowGroup int) error {
	return writeParquet(w, g, rows, rowGroup, 0)
}

// WideParquetRow is ParquetRow with a column no run maps (payload), as
// warehouse exports carry many: what reading only the mapped columns of a
// remote file saves.
type WideParquetRow struct {
	ParquetRow
	Payload string `parquet:"payload,snappy"`
}

// WriteWideParquet is WriteParquet with a payload column of wide hardly
// compressible bytes per row.
func WriteWideParquet(w io.Writer, g *Generator, rows, rowGroup, wide int) error {
	return writeParquet(w, g, rows, rowGroup, wide)
}

func writeParquet(w io.Writer, g *Generator, rows, rowGroup, wide int) error {
	if wide > 0 {
		pw := parquet.NewGenericWriter[WideParquetRow](w, parquet.MaxRowsPerRowGroup(int64(rowGroup)))
		buf := make([]WideParquetRow, 0, 4096)
		var noise [32]byte
		h := uint64(0x9e3779b97f4a7c15) // not from g: the same rows as WriteParquet
		err := eachParquetRow(g, rows, func(pr ParquetRow, last bool) error {
			p := make([]byte, 0, wide)
			for len(p) < wide {
				for i := range noise {
					h ^= h << 13
					h ^= h >> 7
					h ^= h << 17
					noise[i] = "0123456789abcdef"[h&15]
				}
				p = append(p, noise[:min(len(noise), wide-len(p))]...)
			}
			return writeBuffered(pw, &buf, WideParquetRow{ParquetRow: pr, Payload: string(p)}, last)
		})
		if err != nil {
			return err
		}
		return pw.Close()
	}
	pw := parquet.NewGenericWriter[ParquetRow](w, parquet.MaxRowsPerRowGroup(int64(rowGroup)))
	buf := make([]ParquetRow, 0, 4096)
	err := eachParquetRow(g, rows, func(pr ParquetRow, last bool) error {
		return writeBuffered(pw, &buf, pr, last)
	})
	if err != nil {
		return err
	}
	return pw.Close()
}

// writeBuffered adds r to *buf and writes the buffer through pw when it is
// full or r is the last row.
func writeBuffered[T any](pw *parquet.GenericWriter[T], buf *[]T, r T, last bool) error {
	*buf = append(*buf, r)
	if len(*buf) == cap(*buf) || last {
		if _, err := pw.Write(*buf); err != nil {
			return err
		}
		*buf = (*buf)[:0]
	}
	return nil
}

// eachParquetRow calls fn with each of the rows rows of g.
func eachParquetRow(g *Generator, rows int, fn func(pr ParquetRow, last bool) error) error {
	var raw []byte
	for i := 0; i < rows; i++ {
		var r Row
		raw, r = g.AppendRow(raw[:0])
		pr := ParquetRow{Loc: string(raw[r.Loc[0]:r.Loc[1]])}
		if r.Lastmod[1] > r.Lastmod[0] {
			s := string(raw[r.Lastmod[0]:r.Lastmod[1]])
			pr.Lastmod = &s
		}
		if r.Changefreq[1] > r.Changefreq[0] {
			s := string(raw[r.Changefreq[0]:r.Changefreq[1]])
			pr.Changefreq = &s
		}
		if r.Priority[1] > r.Priority[0] {
			if f, err := strconv.ParseFloat(string(raw[r.Priority[0]:r.Priority[1]]), 64); err == nil {
				pr.Priority = &f
			}
		}
		if err := fn(pr, i == rows-1); err != nil {
			return err
		}
	}
	return nil
}
