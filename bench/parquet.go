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
	pw := parquet.NewGenericWriter[ParquetRow](w, parquet.MaxRowsPerRowGroup(int64(rowGroup)))
	const chunk = 4096
	buf := make([]ParquetRow, 0, chunk)
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
		buf = append(buf, pr)
		if len(buf) == chunk || i == rows-1 {
			if _, err := pw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return pw.Close()
}
