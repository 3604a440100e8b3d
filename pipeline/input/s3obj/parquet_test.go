package s3obj_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

// exportRow is a row of a warehouse export: the two columns a run reads
// and a wide one (~200 bytes) it does not.
type exportRow struct {
	Loc     string `parquet:"loc"`
	Lastmod string `parquet:"lastmod"`
	Wide    string `parquet:"payload"`
}

// exportParquet writes rows rows in row groups of group rows, Snappy
// compressed, as Spark would.
func exportParquet(t testing.TB, rows, group int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[exportRow](&buf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(int64(group)))
	batch := make([]exportRow, 0, 1024)
	for i := range rows {
		h := sha256.Sum256(binary.LittleEndian.AppendUint64(nil, uint64(i)))
		wide := hex.EncodeToString(h[:]) + hex.EncodeToString(h[:]) + hex.EncodeToString(h[:16]) + hex.EncodeToString(h[16:])
		wide += wide[:72] // 200 hex digits: hardly compressible
		batch = append(batch, exportRow{
			Loc:     fmt.Sprintf("https://www.example.com/catalog/item/%d/%s", i, hex.EncodeToString(h[:4])),
			Lastmod: fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28),
			Wide:    wide,
		})
		if len(batch) == cap(batch) || i == rows-1 {
			if _, err := w.Write(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chunkRanges returns the byte ranges of the column chunks of columns in
// row group g: what the lead's Parquet reader prefetches.
func chunkRanges(pf *parquet.File, g int, columns ...string) []s3obj.Range {
	var rs []s3obj.Range
	for _, c := range pf.Metadata().RowGroups[g].Columns {
		md := c.MetaData
		for _, name := range columns {
			if len(md.PathInSchema) == 1 && md.PathInSchema[0] == name {
				off := md.DataPageOffset
				if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < off {
					off = md.DictionaryPageOffset
				}
				rs = append(rs, s3obj.Range{Off: off, Len: md.TotalCompressedSize})
			}
		}
	}
	return rs
}

// readColumns reads the values of columns from every row group of the
// Parquet file in r, prefetching the next row group's chunks while the
// current one is read when prefetch is set. It returns a digest of the
// values and the rows.
func readColumns(t testing.TB, r io.ReaderAt, size int64, prefetch func([]s3obj.Range), columns ...string) ([32]byte, int64) {
	t.Helper()
	if prefetch != nil {
		prefetch([]s3obj.Range{{Off: max(0, size-64<<10), Len: 64 << 10}}) // the footer, in one request
	}
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var rows int64
	vals := make([]parquet.Value, 4096)
	groups := pf.RowGroups()
	if prefetch != nil {
		prefetch(chunkRanges(pf, 0, columns...))
	}
	for g, rg := range groups {
		if prefetch != nil && g+1 < len(groups) {
			prefetch(chunkRanges(pf, g+1, columns...))
		}
		rows += rg.NumRows()
		for _, cc := range rg.ColumnChunks() {
			name := pf.Schema().Columns()[cc.Column()][0]
			want := false
			for _, c := range columns {
				want = want || c == name
			}
			if !want {
				continue
			}
			pages := cc.Pages()
			for {
				p, err := pages.ReadPage()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				vr := p.Values()
				for {
					n, err := vr.ReadValues(vals)
					for _, v := range vals[:n] {
						h.Write(v.ByteArray())
					}
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				parquet.Release(p)
			}
			pages.Close()
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, rows
}

// TestParquetColumnsOnly: a Parquet export read over ranged GETs with the
// next row group prefetched gives the values a local read gives, and
// fetches the chunks of the columns read and the footer, never the wide
// column.
func TestParquetColumnsOnly(t *testing.T) {
	e := newEnv(t)
	data := exportParquet(t, 200_000, 50_000)
	e.put(t, "export/part-00000.snappy.parquet", data)
	s := e.store(t, e.ep)
	o := e.stat(t, s, "export/part-00000.snappy.parquet")
	size := int64(len(data))

	local, localRows := readColumns(t, bytes.NewReader(data), size, nil, "loc", "lastmod")
	r := s.NewReaderAt(context.Background(), o, s3obj.ReaderOptions{})
	defer r.Close()
	remote, remoteRows := readColumns(t, r, size, r.Prefetch, "loc", "lastmod")
	if local != remote || localRows != remoteRows || localRows != 200_000 {
		t.Fatalf("remote read: %d rows, digest %x; local: %d rows, %x", remoteRows, remote, localRows, local)
	}

	pf, err := parquet.OpenFile(bytes.NewReader(data), size)
	if err != nil {
		t.Fatal(err)
	}
	footer := int64(binary.LittleEndian.Uint32(data[size-8:])) + 8
	var needed, wide int64
	for g := range pf.Metadata().RowGroups {
		for _, rg := range chunkRanges(pf, g, "loc", "lastmod") {
			needed += rg.Len
		}
		for _, rg := range chunkRanges(pf, g, "payload") {
			wide += rg.Len
		}
	}
	st := r.Stats()
	ratio := float64(st.Bytes) / float64(needed+footer)
	t.Logf("file %d bytes; chunks read %d + footer %d; wide column %d; fetched %d bytes in %d requests (%.3fx); peak held %d",
		size, needed, footer, wide, st.Bytes, st.Requests, ratio, r.PeakHeld())
	if ratio > 1.1 {
		t.Errorf("fetched %d bytes, %.2fx the %d needed", st.Bytes, ratio, needed+footer)
	}
	if r.PeakHeld() > s3obj.DefaultMaxBytes {
		t.Errorf("peak held %d", r.PeakHeld())
	}
}
