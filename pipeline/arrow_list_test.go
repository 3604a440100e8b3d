package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

var (
	arrowAltType   = arrow.StructOf(arrow.Field{Name: "hreflang", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "href", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "media", Type: arrow.BinaryTypes.String, Nullable: true})
	arrowVideoType = arrow.StructOf(
		arrow.Field{Name: "thumbnail_loc", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "title", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		arrow.Field{Name: "description", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "content_loc", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "player_loc", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "duration", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "publication_date", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		arrow.Field{Name: "family_friendly", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		arrow.Field{Name: "rating", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "tag", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: "studio", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	arrowListSchema = arrow.NewSchema([]arrow.Field{
		{Name: "loc", Type: arrow.BinaryTypes.String},
		{Name: "images", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "alternates", Type: arrow.LargeListOf(arrowAltType), Nullable: true},
		{Name: "videos", Type: arrow.ListOf(arrowVideoType), Nullable: true},
	}, nil)
)

func appendOptString(b array.Builder, s *string) {
	switch b := b.(type) {
	case *array.StringBuilder:
		if s == nil {
			b.AppendNull()
		} else {
			b.Append(*s)
		}
	case *array.LargeStringBuilder:
		if s == nil {
			b.AppendNull()
		} else {
			b.Append(*s)
		}
	}
}

// arrowListRecords builds record batches of per rows from the rows of the
// Parquet list test.
func arrowListRecords(rows []pqTestRow, per int) []arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	var recs []arrow.RecordBatch
	for len(rows) > 0 {
		chunk := rows[:min(per, len(rows))]
		rows = rows[len(chunk):]
		rb := array.NewRecordBuilder(mem, arrowListSchema)
		loc := rb.Field(0).(*array.StringBuilder)
		imgs := rb.Field(1).(*array.ListBuilder)
		alts := rb.Field(2).(*array.LargeListBuilder)
		vids := rb.Field(3).(*array.ListBuilder)
		for _, r := range chunk {
			loc.Append(r.Loc)
			if r.Images == nil {
				imgs.AppendNull()
			} else {
				imgs.Append(true)
				for _, s := range r.Images {
					appendOptString(imgs.ValueBuilder(), s)
				}
			}
			if r.Alternates == nil {
				alts.AppendNull()
			} else {
				alts.Append(true)
				sb := alts.ValueBuilder().(*array.StructBuilder)
				for _, a := range r.Alternates {
					if a == nil {
						sb.AppendNull()
						continue
					}
					sb.Append(true)
					appendOptString(sb.FieldBuilder(0), a.Hreflang)
					appendOptString(sb.FieldBuilder(1), a.Href)
					appendOptString(sb.FieldBuilder(2), a.Media)
				}
			}
			if r.Videos == nil {
				vids.AppendNull()
				continue
			}
			vids.Append(true)
			sb := vids.ValueBuilder().(*array.StructBuilder)
			for _, v := range r.Videos {
				if v == nil {
					sb.AppendNull()
					continue
				}
				sb.Append(true)
				for i, s := range []*string{v.ThumbnailLoc, v.Title, v.Description, v.ContentLoc, v.PlayerLoc} {
					appendOptString(sb.FieldBuilder(i), s)
				}
				if d := sb.FieldBuilder(5).(*array.Int32Builder); v.Duration == nil {
					d.AppendNull()
				} else {
					d.Append(*v.Duration)
				}
				if p := sb.FieldBuilder(6).(*array.TimestampBuilder); v.PublicationDate == nil {
					p.AppendNull()
				} else {
					p.Append(arrow.Timestamp(v.PublicationDate.UnixMilli()))
				}
				if f := sb.FieldBuilder(7).(*array.BooleanBuilder); v.FamilyFriendly == nil {
					f.AppendNull()
				} else {
					f.Append(*v.FamilyFriendly)
				}
				if f := sb.FieldBuilder(8).(*array.Float64Builder); v.Rating == nil {
					f.AppendNull()
				} else {
					f.Append(*v.Rating)
				}
				tags := sb.FieldBuilder(9).(*array.ListBuilder)
				if v.Tag == nil {
					tags.AppendNull()
				} else {
					tags.Append(true)
					for _, s := range v.Tag {
						appendOptString(tags.ValueBuilder(), s)
					}
				}
				appendOptString(sb.FieldBuilder(10), v.Unknown)
			}
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	return recs
}

func writeArrowRecords(t *testing.T, name string, recs []arrow.RecordBatch, stream bool) string {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, ipc.WithSchema(recs[0].Schema()))
	} else {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(recs[0].Schema()))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArrowListColumns(t *testing.T) {
	rows, want := listTestRows(300)
	recs := arrowListRecords(rows, 37)
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "lists.arrow", true: "lists.arrows"}[stream]
		t.Run(name, func(t *testing.T) {
			in := writeArrowRecords(t, name, recs, stream)
			rep, set, dir := runTo(t, Config{Inputs: []string{in}})
			xmltest.ValidateDir(t, dir)
			checkEntries(t, urlEntries(set), want)
			for reason, n := range map[string]int64{"image_invalid": 1, "alternate_duplicate": 1, "hreflang_invalid": 1, "video_field_invalid": 1, "video_invalid": 1} {
				if got := rep.Warnings.ByReason[reason]; got != n {
					t.Errorf("%s: %d; want %d (all: %v)", reason, got, n, rep.Warnings.ByReason)
				}
			}
		})
	}
}

func TestArrowListTypeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		field arrow.Field
		want  string
	}{
		"flat images":           {arrow.Field{Name: "images", Type: arrow.BinaryTypes.String}, "not a list"},
		"int images":            {arrow.Field{Name: "images", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}, "list<item: int64"},
		"no known field":        {arrow.Field{Name: "videos", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String}))}, "no field sitemapgen knows (name)"},
		"bad field":             {arrow.Field{Name: "videos", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "duration", Type: arrow.PrimitiveTypes.Float64}))}, `field "duration"`},
		"alternates of strings": {arrow.Field{Name: "alternates", Type: arrow.ListOf(arrow.BinaryTypes.String)}, "hreflang, href, media"},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "loc", Type: arrow.BinaryTypes.String}, tc.field}, nil)
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		rec := rb.NewRecordBatch()
		in := writeArrowRecords(t, "x.arrow", []arrow.RecordBatch{rec}, false)
		_, err := OpenArrow(in, ColumnOptions{})
		if !errors.Is(err, ErrColumnType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrColumnType mentioning %q", name, err, tc.want)
		}
	}
}

// TestArrowListAllocs: packing a record batch's list columns into a batch
// does not allocate per row.
func TestArrowListAllocs(t *testing.T) {
	rows, _ := listTestRows(1000)
	rec := arrowListRecords(rows, len(rows))[0]
	ar := &ArrowReader{}
	for i, f := range arrowListSchema.Fields()[1:] {
		x, _ := encode.ParseExtColumn(f.Name)
		if err := ar.addList(x, i+1, f); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 0, 4<<20)
	spans := make([]span, 0, len(rows))
	for x, fi := range ar.extCols {
		l := ar.list(x)
		var err error
		if a := testing.AllocsPerRun(20, func() {
			if buf, spans, err = l.take(buf[:0], spans[:0], rec.Column(fi), 0, len(rows)); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per batch of %d rows; want 0", fmt.Sprint(ar.ext[x]), a, len(rows))
		}
		if len(spans) != len(rows) {
			t.Fatalf("%d spans", len(spans))
		}
	}
}
