package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

type pqTestVideo struct {
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

type pqTestAlt struct {
	Hreflang *string `parquet:"hreflang,optional"`
	Href     *string `parquet:"href,optional"`
	Media    *string `parquet:"media,optional"`
}

type pqTestRow struct {
	Loc        string         `parquet:"loc"`
	Images     []*string      `parquet:"images,optional,list" parquet-element:",optional,dict"`
	Alternates []*pqTestAlt   `parquet:"alternates,optional,list" parquet-element:",optional"`
	Videos     []*pqTestVideo `parquet:"videos,optional,list" parquet-element:",optional"`
}

func sp(s string) *string { return &s }

// listTestRows returns the rows of the list test files and the <url>
// entries sitemapgen must write for them. Rows 0-3 hold the special cases;
// the rest, generated, make pages and row groups.
func listTestRows(n int) ([]pqTestRow, []string) {
	const base = "https://www.example.com/"
	d, ff, rating := int32(600), true, 4.5
	bad := int32(0)
	pub := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	rows := []pqTestRow{
		{Loc: base + "a",
			Images: []*string{sp("https://img.example.com/a1.jpg"), nil, sp("https://img.example.com/a 2.jpg"), sp("relative.jpg")},
			Alternates: []*pqTestAlt{{Hreflang: sp("en"), Href: sp(base + "a")}, nil, {Hreflang: sp("de-CH"), Href: sp(base + "de/a?x=1&y=2")},
				{Hreflang: sp("EN"), Href: sp(base + "dup")}, {Hreflang: sp("english"), Href: sp(base + "x")}},
			Videos: []*pqTestVideo{
				{ThumbnailLoc: sp("https://img.example.com/t1.jpg"), Title: sp("Grill & chill"), Description: sp("How to"), ContentLoc: sp("https://cdn.example.com/v1.mp4"),
					Duration: &d, PublicationDate: &pub, FamilyFriendly: &ff, Rating: &rating, Tag: []*string{sp("bbq"), nil, sp("summer")}, Unknown: sp("ignored")},
				nil,
				{ThumbnailLoc: sp("https://img.example.com/t2.jpg"), Title: sp("Two"), Description: sp("Second"), PlayerLoc: sp("https://www.example.com/player?id=2"), Duration: &bad},
			}},
		{Loc: base + "b"}, // null lists
		{Loc: base + "c", Images: []*string{}, Alternates: []*pqTestAlt{{Href: sp("https://m.example.com/c"), Media: sp("only screen and (max-width: 640px)")}},
			Videos: []*pqTestVideo{{Title: sp("no thumbnail"), Description: sp("x"), ContentLoc: sp("https://cdn.example.com/c.mp4")}, {}}},
		{Loc: base + "d", Images: []*string{nil}, Alternates: []*pqTestAlt{}, Videos: []*pqTestVideo{}},
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
		r := pqTestRow{Loc: loc, Alternates: []*pqTestAlt{{Hreflang: sp("en"), Href: sp(loc)}, {Hreflang: sp("fr"), Href: sp(fmt.Sprintf("%sfr/p/%d", base, i))}}}
		w := `<url><loc>` + loc + `</loc><xhtml:link rel="alternate" hreflang="en" href="` + loc + `"/><xhtml:link rel="alternate" hreflang="fr" href="` + fmt.Sprintf("%sfr/p/%d", base, i) + `"/>`
		for k := range i % 4 {
			img := fmt.Sprintf("https://img.example.com/%d.jpg", k) // repeated: dictionary-encoded
			r.Images = append(r.Images, sp(img))
			w += `<image:image><image:loc>` + img + `</image:loc></image:image>`
		}
		for k := range i % 3 {
			r.Videos = append(r.Videos, &pqTestVideo{ThumbnailLoc: sp("https://img.example.com/t.jpg"), Title: sp(fmt.Sprint("Video ", k)), Description: sp("D"),
				ContentLoc: sp(fmt.Sprintf("https://cdn.example.com/%d/%d.mp4", i, k)), Tag: []*string{sp("t")}})
			w += fmt.Sprintf(`<video:video><video:thumbnail_loc>https://img.example.com/t.jpg</video:thumbnail_loc><video:title>Video %d</video:title><video:description>D</video:description><video:content_loc>https://cdn.example.com/%d/%d.mp4</video:content_loc><video:tag>t</video:tag></video:video>`, k, i, k)
		}
		rows = append(rows, r)
		want = append(want, w+`</url>`)
	}
	return rows, want
}

// writeListParquet writes rows with small pages and row groups.
func writeListParquet[T any](t *testing.T, name string, rows []T, opts ...parquet.WriterOption) string {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, append([]parquet.WriterOption{parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(40)}, opts...)...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
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

// urlEntries returns the <url> lines of a set's shards, in order.
func urlEntries(set *xmltest.Set) []string {
	var got []string
	for _, s := range set.Shards {
		for _, line := range strings.Split(string(s.Raw), "\n") {
			if strings.HasPrefix(line, "<url>") {
				got = append(got, line)
			}
		}
	}
	return got
}

func checkEntries(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries; want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestParquetListColumns(t *testing.T) {
	rows, want := listTestRows(300)
	for _, v := range []int{1, 2} {
		t.Run(fmt.Sprint("data page v", v), func(t *testing.T) {
			in := writeListParquet(t, "lists.parquet", rows, parquet.DataPageVersion(v))
			pf := openPF(t, in)
			if len(pf.RowGroups()) < 5 {
				t.Fatalf("%d row groups; want several", len(pf.RowGroups()))
			}
			// The file exercises what the reader must handle: several
			// pages per column chunk, dictionary pages.
			pages, dict := 0, false
			for _, g := range pf.RowGroups() {
				for _, c := range g.ColumnChunks() {
					ps := c.Pages()
					for {
						p, err := ps.ReadPage()
						if err != nil {
							break
						}
						pages++
						dict = dict || p.Dictionary() != nil
						parquet.Release(p)
					}
					ps.Close()
				}
			}
			if pages < 3*len(pf.RowGroups())*len(pf.Root().Columns()) || !dict {
				t.Fatalf("%d pages in %d row groups, dictionary %v; want several pages per chunk and a dictionary", pages, len(pf.RowGroups()), dict)
			}
			rep, set, dir := runTo(t, Config{Inputs: []string{in}})
			xmltest.ValidateDir(t, dir)
			checkEntries(t, urlEntries(set), want)
			if !strings.Contains(string(set.Shards[0].Raw), `xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">`) {
				t.Errorf("namespaces: %.400s", set.Shards[0].Raw)
			}
			for reason, n := range map[string]int64{"image_invalid": 1, "alternate_duplicate": 1, "hreflang_invalid": 1, "video_field_invalid": 1, "video_invalid": 1} {
				if got := rep.Warnings.ByReason[reason]; got != n {
					t.Errorf("%s: %d; want %d (all: %v)", reason, got, n, rep.Warnings.ByReason)
				}
			}
		})
	}
}

func openPF(t *testing.T, name string) *parquet.File {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestParquetListLegacy: the 2-level layout (a repeated field, as
// parquet-go writes a slice without the list tag), required elements, and
// a struct without the list annotation.
func TestParquetListLegacy(t *testing.T) {
	type alt struct {
		Hreflang string `parquet:"hreflang"`
		Href     string `parquet:"href"`
	}
	type row struct {
		Loc        string   `parquet:"loc"`
		Images     []string `parquet:"images"`
		Alternates []alt    `parquet:"alternates"`
	}
	var rows []row
	var want []string
	for i := range 200 {
		loc := fmt.Sprintf("https://www.example.com/%d", i)
		r := row{Loc: loc}
		w := "<url><loc>" + loc + "</loc>"
		if i%2 == 0 {
			r.Alternates = []alt{{"x-default", loc}}
			w += `<xhtml:link rel="alternate" hreflang="x-default" href="` + loc + `"/>`
		}
		for k := range i % 3 {
			img := fmt.Sprintf("https://img.example.com/%d/%d.jpg", i, k)
			r.Images = append(r.Images, img)
			w += "<image:image><image:loc>" + img + "</image:loc></image:image>"
		}
		rows = append(rows, r)
		want = append(want, w+"</url>")
	}
	in := writeListParquet(t, "legacy.parquet", rows)
	_, set, dir := runTo(t, Config{Inputs: []string{in}})
	xmltest.ValidateDir(t, dir)
	checkEntries(t, urlEntries(set), want)
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
		"flat images":    {writeListParquet(t, "a.parquet", []flatImages{{"https://www.example.com/", "x"}}), "not a list"},
		"int images":     {writeListParquet(t, "b.parquet", []intImages{{"https://www.example.com/", []int64{1}}}), "a list of INT(64"},
		"no known field": {writeListParquet(t, "c.parquet", []noFields{{Loc: "https://www.example.com/"}}), "no field sitemapgen knows (name)"},
		"bad field":      {writeListParquet(t, "d.parquet", []badField{{Loc: "https://www.example.com/"}}), `field "duration"`},
	} {
		_, err := OpenParquet(tc.path, ColumnOptions{})
		if !errors.Is(err, ErrColumnType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrColumnType mentioning %q", name, err, tc.want)
		}
	}
}

// TestParquetListAllocs: reading a row of list columns out of a decoded
// page, and encoding a batch with list columns, do not allocate.
func TestParquetListAllocs(t *testing.T) {
	rows, _ := listTestRows(2000)
	in := writeListParquet(t, "lists.parquet", rows, parquet.PageBufferSize(64<<20), parquet.MaxRowsPerRowGroup(1<<20))
	pr, err := OpenParquet(in, ColumnOptions{})
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
			t.Errorf("%s: %v allocations per row; want 0", pr.ext[x].Kind.Namespace().AppendDecls(nil), a)
		}
	}

	pr2, err := OpenParquet(in, ColumnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr2.Close()
	b := new(Batch)
	if err := pr2.Fill(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	enc := encode.NewEncoder(mustScope(t, "https://www.example.com/"), nil)
	reset := func() {
		b.Out, b.Ends, b.LmKey, b.LmAt, b.LmLen = b.Out[:0], b.Ends[:0], b.LmKey[:0], b.LmAt[:0], b.LmLen[:0]
		b.Rejects, b.RejectBuf = b.Rejects[:0], b.RejectBuf[:0]
	}
	encodeBatch(enc, b, 1<<20)
	if len(b.Ends) != b.Len() || b.Len() < 1000 {
		t.Fatalf("%d of %d accepted", len(b.Ends), b.Len())
	}
	if a := testing.AllocsPerRun(10, func() { reset(); encodeBatch(enc, b, 1<<20) }); a != 0 {
		t.Fatalf("%v allocations per batch of %d rows with list columns, want 0", a, b.Len())
	}
}

// TestParquetListEncodingsCodecs reads the list columns through the page
// decoder under other encodings and codecs than the writer's defaults:
// DELTA_BYTE_ARRAY / DELTA_LENGTH_BYTE_ARRAY strings, DELTA_BINARY_PACKED
// integers, RLE booleans, compressed pages, both data page versions. The
// sitemap must be the same.
func TestParquetListEncodingsCodecs(t *testing.T) {
	rows, want := listTestRows(120)
	for _, v := range []int{1, 2} {
		for _, c := range []struct {
			name string
			opts []parquet.WriterOption
		}{
			{"delta strings, snappy", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaByteArray), parquet.Compression(&parquet.Snappy)}},
			{"delta length strings, RLE booleans, zstd", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaLengthByteArray), parquet.DefaultEncodingFor(parquet.Boolean, &parquet.RLE), parquet.Compression(&parquet.Zstd)}},
			{"delta integers, gzip", []parquet.WriterOption{parquet.DefaultEncodingFor(parquet.Int32, &parquet.DeltaBinaryPacked), parquet.DefaultEncodingFor(parquet.Int64, &parquet.DeltaBinaryPacked), parquet.Compression(&parquet.Gzip)}},
		} {
			t.Run(fmt.Sprintf("v%d %s", v, c.name), func(t *testing.T) {
				in := writeListParquet(t, "lists.parquet", rows, append(c.opts, parquet.DataPageVersion(v))...)
				_, set, dir := runTo(t, Config{Inputs: []string{in}})
				xmltest.ValidateDir(t, dir)
				checkEntries(t, urlEntries(set), want)
			})
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
	in := writeListParquet(t, "big.parquet", []row{r}, parquet.Compression(&parquet.Zstd))
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Fatalf("file of %d bytes; want a small one", len(data))
	}
	pr, err := NewParquetReader(bytes.NewReader(data), int64(len(data)), "big.parquet", ColumnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var b Batch
	err = pr.Fill(&b, 0)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Fill: %v; want a list longer than %d bytes refused", err, maxListBytes)
	}
}
