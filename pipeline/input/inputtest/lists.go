package inputtest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// ListVideo is a video of a ListRow.
type ListVideo struct {
	ThumbnailLoc    *string    `parquet:"thumbnail_loc,optional"`
	Title           *string    `parquet:"title,optional"`
	Description     *string    `parquet:"description,optional"`
	ContentLoc      *string    `parquet:"content_loc,optional"`
	PlayerLoc       *string    `parquet:"player_loc,optional"`
	Duration        *int32     `parquet:"duration,optional"`
	PublicationDate *time.Time `parquet:"publication_date,optional,timestamp(millisecond:utc)"`
	FamilyFriendly  *bool      `parquet:"family_friendly,optional"`
	Rating          *float64   `parquet:"rating,optional"`
	Tag             []*string  `parquet:"tag,optional,list" parquet-element:",optional"`
	Unknown         *string    `parquet:"studio,optional"`
}

// ListAlt is an alternate of a ListRow.
type ListAlt struct {
	Hreflang *string `parquet:"hreflang,optional"`
	Href     *string `parquet:"href,optional"`
	Media    *string `parquet:"media,optional"`
}

// ListRow is a row of the list test files: a loc and its images,
// alternates and videos lists.
type ListRow struct {
	Loc        string       `parquet:"loc"`
	Images     []*string    `parquet:"images,optional,list" parquet-element:",optional,dict"`
	Alternates []*ListAlt   `parquet:"alternates,optional,list" parquet-element:",optional"`
	Videos     []*ListVideo `parquet:"videos,optional,list" parquet-element:",optional"`
}

func sp(s string) *string { return &s }

// ListRows returns the rows of the list test files and the <url>
// entries sitemapgen must write for them. Rows 0-3 hold the special cases;
// the rest, generated, make pages and row groups.
func ListRows(n int) ([]ListRow, []string) {
	const base = "https://www.example.com/"
	d, ff, rating := int32(600), true, 4.5
	bad := int32(0)
	pub := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	rows := []ListRow{
		{Loc: base + "a",
			Images: []*string{sp("https://img.example.com/a1.jpg"), nil, sp("https://img.example.com/a 2.jpg"), sp("relative.jpg")},
			Alternates: []*ListAlt{{Hreflang: sp("en"), Href: sp(base + "a")}, nil, {Hreflang: sp("de-CH"), Href: sp(base + "de/a?x=1&y=2")},
				{Hreflang: sp("EN"), Href: sp(base + "dup")}, {Hreflang: sp("english"), Href: sp(base + "x")}},
			Videos: []*ListVideo{
				{ThumbnailLoc: sp("https://img.example.com/t1.jpg"), Title: sp("Grill & chill"), Description: sp("How to"), ContentLoc: sp("https://cdn.example.com/v1.mp4"),
					Duration: &d, PublicationDate: &pub, FamilyFriendly: &ff, Rating: &rating, Tag: []*string{sp("bbq"), nil, sp("summer")}, Unknown: sp("ignored")},
				nil,
				{ThumbnailLoc: sp("https://img.example.com/t2.jpg"), Title: sp("Two"), Description: sp("Second"), PlayerLoc: sp("https://www.example.com/player?id=2"), Duration: &bad},
			}},
		{Loc: base + "b"}, // null lists
		{Loc: base + "c", Images: []*string{}, Alternates: []*ListAlt{{Href: sp("https://m.example.com/c"), Media: sp("only screen and (max-width: 640px)")}},
			Videos: []*ListVideo{{Title: sp("no thumbnail"), Description: sp("x"), ContentLoc: sp("https://cdn.example.com/c.mp4")}, {}}},
		{Loc: base + "d", Images: []*string{nil}, Alternates: []*ListAlt{}, Videos: []*ListVideo{}},
	}
	want := []string{
		`<url><loc>https://www.example.com/a</loc>` +
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/a"/><xhtml:link rel="alternate" hreflang="de-CH" href="https://www.example.com/de/a?x=1&amp;y=2"/>` +
			`<image:image><image:loc>https://img.example.com/a1.jpg</image:loc></image:image><image:image><image:loc>https://img.example.com/a%202.jpg</image:loc></image:image>` +
			`<video:video><video:thumbnail_loc>https://img.example.com/t1.jpg</video:thumbnail_loc><video:title>Grill &amp; chill</video:title><video:description>How to</video:description><video:content_loc>https://cdn.example.com/v1.mp4</video:content_loc><video:duration>600</video:duration><video:rating>4.5</video:rating><video:publication_date>2024-05-01T10:00:00Z</video:publication_date><video:tag>bbq</video:tag><video:tag>summer</video:tag><video:family_friendly>yes</video:family_friendly></video:video>` +
			`<video:video><video:thumbnail_loc>https://img.example.com/t2.jpg</video:thumbnail_loc><video:title>Two</video:title><video:description>Second</video:description><video:player_loc>https://www.example.com/player?id=2</video:player_loc></video:video>` +
			`</url>`,
		`<url><loc>https://www.example.com/b</loc></url>`,
		`<url><loc>https://www.example.com/c</loc><xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/c"/></url>`,
		`<url><loc>https://www.example.com/d</loc></url>`,
	}
	for i := len(rows); i < n; i++ {
		loc := fmt.Sprintf("%sp/%d", base, i)
		r := ListRow{Loc: loc, Alternates: []*ListAlt{{Hreflang: sp("en"), Href: sp(loc)}, {Hreflang: sp("fr"), Href: sp(fmt.Sprintf("%sfr/p/%d", base, i))}}}
		w := `<url><loc>` + loc + `</loc><xhtml:link rel="alternate" hreflang="en" href="` + loc + `"/><xhtml:link rel="alternate" hreflang="fr" href="` + fmt.Sprintf("%sfr/p/%d", base, i) + `"/>`
		for k := range i % 4 {
			img := fmt.Sprintf("https://img.example.com/%d.jpg", k) // repeated: dictionary-encoded
			r.Images = append(r.Images, sp(img))
			w += `<image:image><image:loc>` + img + `</image:loc></image:image>`
		}
		for k := range i % 3 {
			r.Videos = append(r.Videos, &ListVideo{ThumbnailLoc: sp("https://img.example.com/t.jpg"), Title: sp(fmt.Sprint("Video ", k)), Description: sp("D"),
				ContentLoc: sp(fmt.Sprintf("https://cdn.example.com/%d/%d.mp4", i, k)), Tag: []*string{sp("t")}})
			w += fmt.Sprintf(`<video:video><video:thumbnail_loc>https://img.example.com/t.jpg</video:thumbnail_loc><video:title>Video %d</video:title><video:description>D</video:description><video:content_loc>https://cdn.example.com/%d/%d.mp4</video:content_loc><video:tag>t</video:tag></video:video>`, k, i, k)
		}
		rows = append(rows, r)
		want = append(want, w+`</url>`)
	}
	return rows, want
}

// WriteParquet writes rows with small pages and row groups.
func WriteParquet[T any](t testing.TB, name string, rows []T, opts ...parquet.WriterOption) string {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, append([]parquet.WriterOption{parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(40)}, opts...)...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return WriteFile(t, name, buf.Bytes())
}

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
	// ArrowListSchema is the schema of ArrowListRecords.
	ArrowListSchema = arrow.NewSchema([]arrow.Field{
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

// ArrowListRecords builds record batches of per rows from the rows of the
// Parquet list test.
func ArrowListRecords(rows []ListRow, per int) []arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	var recs []arrow.RecordBatch
	for len(rows) > 0 {
		chunk := rows[:min(per, len(rows))]
		rows = rows[len(chunk):]
		rb := array.NewRecordBuilder(mem, ArrowListSchema)
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

// WriteArrow writes recs as an Arrow IPC file, or stream, and returns its path.
func WriteArrow(t testing.TB, name string, recs []arrow.RecordBatch, stream bool) string {
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
	return WriteFile(t, name, buf.Bytes())
}
