// Command gen writes the Parquet and Arrow IPC fixtures in testdata/columnar:
// the same rows through parquet-go and through Arrow's Parquet writer
// (pqarrow), in several encodings and compressions, plus CSV files of the
// same rows. It is a module of its own so that Arrow's Parquet packages stay
// out of sitemapgen's build: run it with `cd testdata/gen && go run .`.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
)

// row is one input row; nil pointers are nulls.
type row struct {
	loc        *string
	lastmod    *time.Time // an instant in UTC
	changefreq *string
	priority   *float64
}

func s(v string) *string    { return &v }
func f(v float64) *float64  { return &v }
func t(v string) *time.Time { x, err := time.Parse(time.RFC3339Nano, v); must(err); return &x }

const base = "https://www.example.com/"

// rows: 23 rows, so that row groups of 5 leave a short last group.
var rows = []row{
	{s(base + "a"), t("2024-05-01T10:20:30Z"), s("daily"), f(0.5)},
	{s(base + "b?x=1&y=2"), t("2024-05-02T00:00:00Z"), s("Weekly"), f(1)},
	{s(base + "ümlat.html"), nil, nil, nil},
	{s(base + "it's/\"quoted\""), t("2023-12-31T23:59:59.123Z"), s("monthly"), f(0.25)},
	{nil, t("2024-01-01T00:00:00Z"), s("daily"), f(0.5)}, // null loc: rejected
	{s("/relative/path"), t("2020-02-29T12:00:00Z"), s("never"), f(0)},
	{s("https://elsewhere.example.org/x"), nil, s("daily"), nil}, // out of scope: rejected
	{s(base + "c"), t("2024-06-15T08:00:00Z"), s("sometimes"), f(0.75)},
	{s(base + "d"), nil, s("yearly"), f(0.1)},
	{s(base + "e/f/g"), t("2019-07-04T16:45:00.5Z"), nil, f(0.9)},
	{s(base + "h"), t("2024-05-01T10:20:30Z"), s("daily"), f(0.5)},
	{s(base + "i"), t("2001-01-01T00:00:00Z"), s("hourly"), nil},
	{s(base + "j"), nil, nil, f(0.3)},
	{s(base + "k 1"), t("2024-03-10T02:30:00Z"), s("always"), f(0.6)},
	{s(""), t("2024-03-10T02:30:00Z"), nil, nil}, // empty loc: rejected
	{s(base + "l"), t("2024-05-01T10:20:30Z"), s("daily"), f(0.5)},
	{s(base + "m"), t("2024-11-30T23:00:00Z"), s("weekly"), f(0.4)},
	{s(base + "n"), nil, s("daily"), f(0.5)},
	{s(base + "o"), t("2022-08-08T08:08:08Z"), s("monthly"), f(0.8)},
	{s(base + "p"), t("2024-05-01T10:20:30Z"), s("daily"), nil},
	{s(base + "q"), t("2018-01-01T00:00:00Z"), nil, f(0.2)},
	{s(base + "r"), t("2024-05-01T10:20:30Z"), s("daily"), f(0.5)},
	{s(base + "s"), t("2024-12-24T18:00:00Z"), s("yearly"), f(1)},
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

var out = "../columnar"

func main() {
	must(os.MkdirAll(out, 0o755))
	writeCSV("rows_datetime.csv", func(tm time.Time) string { return tm.Format("2006-01-02T15:04:05.999999999Z07:00") })
	writeCSV("rows_date.csv", func(tm time.Time) string { return tm.Format(time.DateOnly) })
	parquetGo()
	arrowParquet()
	arrowIPC()
}

func writeCSV(name string, lastmod func(time.Time) string) {
	var b bytes.Buffer
	b.WriteString("loc,lastmod,changefreq,priority\n")
	for _, r := range rows {
		if r.loc != nil {
			fmt.Fprintf(&b, "%q", *r.loc)
		}
		b.WriteByte(',')
		if r.lastmod != nil {
			b.WriteString(lastmod(*r.lastmod))
		}
		b.WriteByte(',')
		if r.changefreq != nil {
			b.WriteString(*r.changefreq)
		}
		b.WriteByte(',')
		if r.priority != nil {
			fmt.Fprint(&b, *r.priority)
		}
		b.WriteByte('\n')
	}
	// %q writes Go escapes, not CSV: none of the locs need more than quotes.
	must(os.WriteFile(filepath.Join(out, name), bytes.ReplaceAll(b.Bytes(), []byte(`\"`), []byte(`""`)), 0o644))
}

// parquet-go: snappy, plain loc, TIMESTAMP(micros, UTC), dictionary changefreq, row groups of 5.
type pgTimestamp struct {
	Loc        string     `parquet:"loc,snappy,plain"`
	Lastmod    *time.Time `parquet:"lastmod,snappy,optional,timestamp(microsecond)"`
	Changefreq *string    `parquet:"changefreq,snappy,optional,dict"`
	Priority   *float64   `parquet:"priority,snappy,optional"`
}

// parquet-go: zstd, dictionary-encoded nullable loc, DATE, float priority,
// one row group. The schema is explicit: parquet-go v0.32's writer turns a
// *time.Time under a `date` tag into garbage day numbers.
type pgDate struct {
	Loc        *string  `parquet:"loc"`
	Lastmod    *int32   `parquet:"lastmod"`
	Changefreq *string  `parquet:"changefreq"`
	Priority   *float32 `parquet:"priority"`
}

var pgDateSchema = parquet.NewSchema("pgDate", parquet.Group{
	"loc":        parquet.Optional(parquet.Compressed(parquet.Encoded(parquet.String(), &parquet.RLEDictionary), &parquet.Zstd)),
	"lastmod":    parquet.Optional(parquet.Compressed(parquet.Date(), &parquet.Zstd)),
	"changefreq": parquet.Optional(parquet.Compressed(parquet.String(), &parquet.Zstd)),
	"priority":   parquet.Optional(parquet.Compressed(parquet.Leaf(parquet.FloatType), &parquet.Zstd)),
})

func parquetGo() {
	{
		var w bytes.Buffer
		pw := parquet.NewGenericWriter[pgTimestamp](&w, parquet.MaxRowsPerRowGroup(5), parquet.PageBufferSize(64))
		for _, r := range rows {
			loc := ""
			if r.loc != nil {
				loc = *r.loc
			}
			if r.loc == nil {
				continue // this file's loc is required: the null-loc row is left out
			}
			_, err := pw.Write([]pgTimestamp{{Loc: loc, Lastmod: r.lastmod, Changefreq: r.changefreq, Priority: r.priority}})
			must(err)
		}
		must(pw.Close())
		must(os.WriteFile(filepath.Join(out, "parquetgo_snappy_timestamp.parquet"), w.Bytes(), 0o644))
	}
	{
		var w bytes.Buffer
		pw := parquet.NewGenericWriter[pgDate](&w, pgDateSchema)
		for _, r := range rows {
			var p *float32
			if r.priority != nil {
				v := float32(*r.priority)
				p = &v
			}
			var d *int32
			if r.lastmod != nil {
				v := int32(r.lastmod.Unix() / 86400)
				d = &v
			}
			_, err := pw.Write([]pgDate{{Loc: r.loc, Lastmod: d, Changefreq: r.changefreq, Priority: p}})
			must(err)
		}
		must(pw.Close())
		must(os.WriteFile(filepath.Join(out, "parquetgo_zstd_dict_date.parquet"), w.Bytes(), 0o644))
	}
}

// record builds the rows as an Arrow record with the given lastmod and priority types.
func record(lastmodType arrow.DataType, priorityType arrow.DataType, dictChangefreq bool) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	cfType := arrow.DataType(arrow.BinaryTypes.String)
	if dictChangefreq {
		cfType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "loc", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lastmod", Type: lastmodType, Nullable: true},
		{Name: "changefreq", Type: cfType, Nullable: true},
		{Name: "priority", Type: priorityType, Nullable: true},
		{Name: "extra", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, r := range rows {
		if r.loc == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(*r.loc)
		}
		if r.lastmod == nil {
			b.Field(1).AppendNull()
		} else {
			switch lb := b.Field(1).(type) {
			case *array.Date32Builder:
				lb.Append(arrow.Date32FromTime(*r.lastmod))
			case *array.TimestampBuilder:
				unit := lastmodType.(*arrow.TimestampType).Unit
				v, err := arrow.TimestampFromTime(*r.lastmod, unit)
				must(err)
				lb.Append(v)
			}
		}
		if r.changefreq == nil {
			b.Field(2).AppendNull()
		} else if dictChangefreq {
			must(b.Field(2).(*array.BinaryDictionaryBuilder).AppendString(*r.changefreq))
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.changefreq)
		}
		if r.priority == nil {
			b.Field(3).AppendNull()
		} else {
			switch pb := b.Field(3).(type) {
			case *array.Float64Builder:
				pb.Append(*r.priority)
			case *array.Float32Builder:
				pb.Append(float32(*r.priority))
			case *array.Decimal128Builder:
				pb.Append(decimal128.FromI64(int64(*r.priority*100 + 0.5)))
			}
		}
		b.Field(4).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

func arrowParquet() {
	write := func(name string, rec arrow.RecordBatch, props *pq.WriterProperties) {
		var w bytes.Buffer
		tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
		must(pqarrow.WriteTable(tbl, &w, 5, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())))
		must(os.WriteFile(filepath.Join(out, name), w.Bytes(), 0o644))
	}
	// snappy, dictionary (Arrow's default), TIMESTAMP(millis, UTC), double priority, row groups of 5.
	write("arrow_snappy_dict_timestamp.parquet",
		record(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, arrow.PrimitiveTypes.Float64, true),
		pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Snappy), pq.WithMaxRowGroupLength(5)))
	// zstd, plain, DATE, decimal priority, data page v1, row groups of 5.
	write("arrow_zstd_plain_date.parquet",
		record(arrow.FixedWidthTypes.Date32, &arrow.Decimal128Type{Precision: 3, Scale: 2}, false),
		pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Zstd), pq.WithDictionaryDefault(false),
			pq.WithMaxRowGroupLength(5), pq.WithDataPageVersion(pq.DataPageV1)))
	// zstd, TIMESTAMP(nanos, not UTC-adjusted): a wall-clock time, read in --lastmod-tz.
	write("arrow_zstd_local_timestamp.parquet",
		record(&arrow.TimestampType{Unit: arrow.Nanosecond}, arrow.PrimitiveTypes.Float32, false),
		pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Zstd), pq.WithMaxRowGroupLength(5),
			pq.WithVersion(pq.V2_LATEST)))
}

func arrowIPC() {
	rec := record(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Berlin"}, arrow.PrimitiveTypes.Float32, true)
	// Two record batches: rows 0-9 and 10-22.
	parts := []arrow.RecordBatch{rec.NewSlice(0, 10), rec.NewSlice(10, int64(len(rows)))}
	{
		var w bytes.Buffer
		fw, err := ipc.NewFileWriter(&w, ipc.WithSchema(rec.Schema()))
		must(err)
		for _, p := range parts {
			must(fw.Write(p))
		}
		must(fw.Close())
		must(os.WriteFile(filepath.Join(out, "rows.arrow"), w.Bytes(), 0o644))
	}
	{
		var w bytes.Buffer
		sw := ipc.NewWriter(&w, ipc.WithSchema(rec.Schema()))
		for _, p := range parts {
			must(sw.Write(p))
		}
		must(sw.Close())
		must(os.WriteFile(filepath.Join(out, "rows.arrows"), w.Bytes(), 0o644))
	}
}
