package pipeline

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/sitemapgen/sitemapgen/encode"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
	"github.com/sitemapgen/sitemapgen/pipeline/input"
	"github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
	"github.com/sitemapgen/sitemapgen/shard"
	"github.com/sitemapgen/sitemapgen/sink"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/multilingual.parquet from testdata/multilingual.csv")

// allNamespaces are those of the regular shards of an input with every
// extension: news items go to the news sitemaps.
const allNamespaces = encode.NSXhtml | encode.NSMobile | encode.NSImage | encode.NSVideo

// extEntries splits a shard into its entry lines, checking that it starts
// with the header of namespaces ns and ends with the footer.
func extEntries(t *testing.T, raw []byte, ns encode.Namespaces) [][]byte {
	t.Helper()
	body, ok := bytes.CutPrefix(raw, []byte(shard.URLSetHeader(ns)))
	if !ok {
		t.Fatalf("shard does not start with the header of namespaces %b:\n%.400s", ns, raw)
	}
	body, ok = bytes.CutSuffix(body, []byte(shard.Footer))
	if !ok {
		t.Fatalf("shard does not end with the footer")
	}
	return bytes.SplitAfter(body, []byte("\n"))[:bytes.Count(body, []byte("\n"))]
}

// TestExtensionsValidate: a run whose input carries every extension, with
// good and bad values, writes shards valid against the official schemas
// (sitemap-combined.xsd: sitemap.xsd and every extension schema), declares
// exactly the four namespaces of the regular shards (news items go to the
// news sitemap), counts the warnings and keeps every URL.
func TestExtensionsValidate(t *testing.T) {
	in := filepath.Join("..", "testdata", "multilingual.csv")
	// The fixture's articles were published in March 2025: some in the
	// window, some before it, some after it.
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	rep, set, dir := runTo(t, Config{Inputs: []string{in}, MediaQuery: "only screen and (max-width: 480px)", Now: now})
	xmltest.ValidateDir(t, dir)
	if rep.Rows != 120 || rep.URLs != 120 {
		t.Errorf("rows %d, urls %d; want 120, 120", rep.Rows, rep.URLs)
	}
	for _, w := range []string{"alternate_invalid", "image_invalid", "news_invalid", "news_expired", "news_future", "video_field_invalid", "mobile_invalid", "alternate_not_reciprocal"} {
		if rep.Warnings.ByReason[w] == 0 {
			t.Errorf("warning %s not counted: %v", w, rep.Warnings.ByReason)
		}
	}
	raw := set.Shards[0].Raw
	extEntries(t, raw, allNamespaces)
	for _, want := range []string{`<xhtml:link rel="alternate" hreflang="pt-br"`, `media="only screen and (max-width: 480px)"`,
		`<mobile:mobile/>`, `<image:loc>`, `<video:video>`, `%20K%C3%BCche%20&amp;%20Bad.jpg`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("output lacks %s", want)
		}
	}
	if bytes.Contains(raw, []byte("<news:")) {
		t.Error("a regular shard carries a news item")
	}
	if len(set.News) != 1 || rep.News == nil || rep.News.Sitemaps != 1 || int64(len(set.News[0].URLs)) != rep.News.URLs || rep.News.URLs == 0 {
		t.Fatalf("news sitemaps %d, report %+v", len(set.News), rep.News)
	}
	for _, e := range extEntries(t, set.News[0].Raw, encode.NSNews) {
		if !bytes.Contains(e, []byte("<news:news>")) || bytes.Contains(e, []byte("<lastmod>")) {
			t.Errorf("news entry %s", e)
		}
	}

	// Every extension value kind in one row, through the whole pipeline.
	row := "loc,alternate:en,alternate:de,media-alternate,mobile,image," +
		"video:thumbnail_loc,video:title,video:description,video:content_loc,video:player_loc,video:duration,video:expiration_date," +
		"video:rating,video:view_count,video:publication_date,video:tag,video:category,video:family_friendly,video:requires_subscription,video:live," +
		"news:publication_name,news:publication_language,news:publication_date,news:title\n" +
		"https://www.example.com/a?x=1&y='2',https://www.example.com/a?x=1&y='2',https://www.example.de/ä,https://m.example.com/a,1,https://i.example/1.jpg," +
		"https://i.example/t.jpg,\"Title \"\"quoted\"\" <b>\",Desc & more,https://cdn.example/v.mp4,https://www.example.com/p?v=1&a=2,600,2030-01-01T00:00:00+08:00," +
		"4.2,1234,2024-01-01,steak,Food,yes,no,no," +
		"The Times,zh-TW,2024-05-01 10:00,Mergers & <Acquisitions>\n"
	_, set, dir = runTo(t, Config{Inputs: []string{writeText(t, "all.csv", row)}, Now: time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)})
	xmltest.ValidateDir(t, dir)
	for _, want := range []string{"<video:view_count>1234</video:view_count>", "<video:requires_subscription>no</video:requires_subscription>"} {
		if !bytes.Contains(set.Shards[0].Raw, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, set.Shards[0].Raw)
		}
	}
	for _, want := range []string{"<news:language>zh-tw</news:language>", "<news:publication_date>2024-05-01T10:00:00Z</news:publication_date>",
		"<news:title>Mergers &amp; &lt;Acquisitions&gt;</news:title>"} {
		if len(set.News) != 1 || !bytes.Contains(set.News[0].Raw, []byte(want)) {
			t.Errorf("news sitemap lacks %s", want)
		}
	}
}

// TestExtensionNamespacesExact: the shards declare the namespaces of the
// extension columns the inputs carry, and no others, across several inputs
// (the union, known before the first row, also from standard input).
func TestExtensionNamespacesExact(t *testing.T) {
	plain := writeText(t, "plain.csv", "loc\nhttps://www.example.com/a\n")
	images := writeText(t, "images.csv", "loc,image:1\nhttps://www.example.com/b,https://i.example/b.jpg\n")
	news := "loc,news:title\nhttps://www.example.com/c,\n"
	for _, tc := range []struct {
		name   string
		inputs []string
		stdin  string
		ns     encode.Namespaces
	}{
		{"none", []string{plain}, "", 0},
		{"image", []string{images}, "", encode.NSImage},
		{"image later", []string{plain, images}, "", encode.NSImage},
		// News items go to a news sitemap (here an empty one: no value).
		{"stdin news, empty values", []string{plain, "-"}, news, 0},
		{"stdin then image", []string{"-", images}, news, encode.NSImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, set, dir := runTo(t, Config{Inputs: tc.inputs, Stdin: strings.NewReader(tc.stdin)})
			if int(rep.URLs) != len(tc.inputs) {
				t.Fatalf("%d URLs; want %d", rep.URLs, len(tc.inputs))
			}
			for _, s := range set.Shards {
				extEntries(t, s.Raw, tc.ns)
			}
			if wantNews := tc.stdin != ""; len(set.News) != map[bool]int{true: 1}[wantNews] {
				t.Fatalf("%d news sitemaps", len(set.News))
			} else if wantNews && len(extEntries(t, set.News[0].Raw, encode.NSNews)) != 0 {
				t.Fatal("news sitemap not empty")
			}
			xmltest.ValidateDir(t, dir)
		})
	}
}

// TestExtensionsPropertyLimitsTight: rows with random numbers of alternates
// and images under small byte limits: every shard is within both limits and
// valid, closed only when its next entry would not fit, and every row is
// there once, in order, with all its links.
func TestExtensionsPropertyLimitsTight(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	const maxAlt, maxImg = 25, 12
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 6))
		maxBytes := 4096 + rng.IntN(12000)
		maxURLs := 2 + rng.IntN(80)
		rows := 100 + rng.IntN(600)
		t.Run(fmt.Sprintf("seed%d_bytes%d_urls%d_rows%d", seed, maxBytes, maxURLs, rows), func(t *testing.T) {
			var in bytes.Buffer
			in.WriteString("loc")
			for a := range maxAlt {
				fmt.Fprintf(&in, ",alternate:l%c", 'a'+a)
			}
			for i := range maxImg {
				fmt.Fprintf(&in, ",image:%d", i+1)
			}
			in.WriteByte('\n')
			wantLinks := make([]int, rows)
			wantImages := make([]int, rows)
			for r := range rows {
				fmt.Fprintf(&in, "https://www.example.com/p/%d", r)
				na, ni := rng.IntN(maxAlt+1), rng.IntN(maxImg+1)
				if rng.IntN(10) == 0 { // a heavy row
					na, ni = maxAlt, maxImg
				}
				for a := range maxAlt {
					in.WriteByte(',')
					if a < na {
						fmt.Fprintf(&in, "https://www.example.com/l%c/p/%d/%s", 'a'+a, r, strings.Repeat("x", rng.IntN(60)))
					}
				}
				for i := range maxImg {
					in.WriteByte(',')
					if i < ni {
						fmt.Fprintf(&in, "https://img.example.com/%d/%d.jpg", r, i)
					}
				}
				in.WriteByte('\n')
				wantLinks[r], wantImages[r] = na, ni
			}
			rep, set, _ := runTo(t, Config{Inputs: []string{writeText(t, "in.csv", in.String())},
				MaxURLs: maxURLs, MaxBytes: maxBytes, Workers: 1 + rng.IntN(3)})
			if seed < 3 {
				for _, s := range set.Shards[:min(3, len(set.Shards))] {
					xmltest.Validate(t, s.Name, s.Raw)
				}
			}
			next := 0
			for i, s := range set.Shards {
				es := extEntries(t, s.Raw, encode.NSXhtml|encode.NSImage)
				if len(s.Raw) > maxBytes || len(es) > maxURLs || len(es) == 0 {
					t.Fatalf("%s: %d bytes, %d URLs; limits %d, %d", s.Name, len(s.Raw), len(es), maxBytes, maxURLs)
				}
				if i+1 < len(set.Shards) && len(es) < maxURLs {
					first := extEntries(t, set.Shards[i+1].Raw, encode.NSXhtml|encode.NSImage)[0]
					if len(s.Raw)+len(first) <= maxBytes {
						t.Fatalf("%s closed at %d bytes, %d URLs, but the next entry (%d bytes) fits in %d", s.Name, len(s.Raw), len(es), len(first), maxBytes)
					}
				}
				for _, e := range es {
					for rep.Rejected.ByReason["entry_too_large"] > 0 && next < rows && !bytes.Contains(e, fmt.Appendf(nil, "<loc>https://www.example.com/p/%d</loc>", next)) {
						next++ // rejected as too large for any shard
					}
					if !bytes.HasPrefix(e, fmt.Appendf(nil, "<url><loc>https://www.example.com/p/%d</loc>", next)) {
						t.Fatalf("entry %.80s; want row %d", e, next)
					}
					if n := bytes.Count(e, []byte("<xhtml:link ")); n != wantLinks[next] {
						t.Fatalf("row %d: %d links; want %d", next, n, wantLinks[next])
					}
					if n := bytes.Count(e, []byte("<image:image>")); n != wantImages[next] {
						t.Fatalf("row %d: %d images; want %d", next, n, wantImages[next])
					}
					next++
				}
			}
			if int64(next) > int64(rows) || rep.URLs+rep.Rejected.Total != int64(rows) {
				t.Fatalf("rows %d, urls %d, rejected %d", rows, rep.URLs, rep.Rejected.Total)
			}
		})
	}
}

// TestTwentyAlternatesCutByBytes: rows with 20 alternates each (~2.3 KB)
// fill the default 10,485,760 bytes after about 4,500 URLs, long before
// 50,000: the cut is by bytes, header included, and the shards are valid.
func TestTwentyAlternatesCutByBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 25 MB of sitemaps")
	}
	langs := []string{"en", "de", "de-ch", "de-at", "fr", "fr-ch", "fr-be", "it", "it-ch", "es", "es-mx", "pt", "pt-br", "nl", "nl-be", "sv", "da", "fi", "pl", "x-default"}
	var in bytes.Buffer
	in.WriteString("loc")
	for _, l := range langs {
		in.WriteString(",alternate:" + l)
	}
	in.WriteByte('\n')
	const rows = 11000
	for r := range rows {
		fmt.Fprintf(&in, "https://www.example.com/en/catalog/category-%d/product-%d", r%97, r)
		for _, l := range langs {
			fmt.Fprintf(&in, ",https://www.example.com/%s/catalog/category-%d/product-%d", l, r%97, r)
		}
		in.WriteByte('\n')
	}
	rep, set, _ := runTo(t, Config{Inputs: []string{writeText(t, "in.csv", in.String())}})
	if rep.URLs != rows || len(set.Shards) < 3 {
		t.Fatalf("%d URLs in %d shards; want %d in at least 3", rep.URLs, len(set.Shards), rows)
	}
	for i, s := range set.Shards[:len(set.Shards)-1] {
		n := len(extEntries(t, s.Raw, encode.NSXhtml))
		next := extEntries(t, set.Shards[i+1].Raw, encode.NSXhtml)[0]
		if n > 6000 || len(s.Raw) > 10485760 || len(s.Raw)+len(next) <= 10485760 {
			t.Fatalf("%s: %d URLs, %d bytes: want a cut by bytes (the next entry, %d bytes, must not fit)", s.Name, n, len(s.Raw), len(next))
		}
		t.Logf("%s: %d URLs, %d bytes", s.Name, n, len(s.Raw))
	}
	xmltest.Validate(t, set.Shards[0].Name, set.Shards[0].Raw)
}

// TestEncodeBatchExtensionAllocs: the worker's per-row path stays
// allocation-free with extension columns.
func TestEncodeBatchExtensionAllocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "multilingual.csv"))
	if err != nil {
		t.Fatal(err)
	}
	sc := csvscan.NewScanner(bytes.NewReader(data), "m.csv", input.Options{})
	b := new(Batch)
	if err := sc.Fill(&b.Batch, 1<<20); err != nil {
		t.Fatal(err)
	}
	if len(b.Ext) < 20 {
		t.Fatalf("%d extension columns; want the sample's 30", len(b.Ext))
	}
	a := encodeAllocs(t, b, "https://www.example.com/", 20)
	if len(b.Ends) != 120 {
		t.Fatalf("%d accepted; want 120", len(b.Ends))
	}
	if a != 0 {
		t.Fatalf("%v allocations per batch of %d rows with extensions, want 0", a, b.Len())
	}
}

// writeParquetFromCSV writes the CSV file in as Parquet with parquet-go:
// optional string columns of the same names, except mobile and
// video:family_friendly (BOOLEAN) and video:duration (INT32), to read the
// typed extension columns too.
func writeParquetFromCSV(t *testing.T, in, out string) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	fields := make([]reflect.StructField, len(header))
	for i, h := range header {
		typ := reflect.TypeFor[*string]()
		switch h {
		case "mobile", "video:family_friendly":
			typ = reflect.TypeFor[*bool]()
		case "video:duration":
			typ = reflect.TypeFor[*int32]()
		}
		fields[i] = reflect.StructField{Name: fmt.Sprint("F", i), Type: typ, Tag: reflect.StructTag(`parquet:"` + h + `,optional"`)}
	}
	rowType := reflect.StructOf(fields)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.SchemaOf(reflect.New(rowType).Interface()), parquet.PageBufferSize(4096))
	for _, rec := range recs[1:] {
		row := reflect.New(rowType).Elem()
		for i, v := range rec {
			if v == "" {
				continue
			}
			switch fields[i].Type.Elem().Kind() {
			case reflect.Bool:
				b := v == "true" || v == "yes"
				if v == "maybe" { // not a boolean: leave it null
					continue
				}
				row.Field(i).Set(reflect.ValueOf(&b))
			case reflect.Int32:
				n, err := strconv.ParseInt(v, 10, 32)
				if err != nil {
					t.Fatal(err)
				}
				n32 := int32(n)
				row.Field(i).Set(reflect.ValueOf(&n32))
			default:
				row.Field(i).Set(reflect.ValueOf(&v))
			}
		}
		if err := w.Write(row.Interface()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMultilingualParquetSameAsCSV: the multilingual sample as Parquet
// (typed columns included) gives the same sitemap bytes as the CSV, and
// testdata/multilingual.parquet is what the helper writes from the CSV
// (go test ./pipeline -run MultilingualParquet -update-fixtures rewrites it).
func TestMultilingualParquetSameAsCSV(t *testing.T) {
	csvPath := filepath.Join("..", "testdata", "multilingual.csv")
	fixture := filepath.Join("..", "testdata", "multilingual.parquet")
	fresh := filepath.Join(t.TempDir(), "m.parquet")
	writeParquetFromCSV(t, csvPath, fresh)
	if *updateFixtures {
		data, _ := os.ReadFile(fresh)
		if err := os.WriteFile(fixture, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, want, _ := runTo(t, Config{Inputs: []string{csvPath}})
	for _, in := range []string{fresh, fixture} {
		repP, got, dir := runTo(t, Config{Inputs: []string{in}})
		xmltest.ValidateDir(t, dir)
		if len(got.Shards) != len(want.Shards) {
			t.Fatalf("%s: %d shards; want %d", in, len(got.Shards), len(want.Shards))
		}
		for i := range want.Shards {
			if !bytes.Equal(got.Shards[i].Raw, want.Shards[i].Raw) {
				g, w := got.Shards[i].Raw, want.Shards[i].Raw
				k := 0
				for k < min(len(g), len(w)) && g[k] == w[k] {
					k++
				}
				t.Fatalf("%s: shard %d differs from the CSV's at byte %d:\n got %.300s\nwant %.300s", in, i, k, g[max(k-100, 0):], w[max(k-100, 0):])
			}
		}
		// The CSV's "maybe" is a null in Parquet: one mobile_invalid fewer.
		if repP.Warnings.ByReason["mobile_invalid"] != 0 {
			t.Errorf("%s: mobile_invalid %d; want 0", in, repP.Warnings.ByReason["mobile_invalid"])
		}
	}
}

// TestImagesListColumnRefused: a CSV column named images, alternates or
// videos (list columns in Parquet and Arrow) is refused with a message
// naming the flat columns, not read as one value nor ignored: CSV cannot
// hold a list.
func TestImagesListColumnRefused(t *testing.T) {
	for col, want := range map[string]string{"images": "image:1, image:2", "alternates": "alternate:<hreflang>", "videos": "video:thumbnail_loc, video:title"} {
		in := writeText(t, "in.csv", "loc,"+col+"\nhttps://www.example.com/a,https://i.example/a.jpg\n")
		snk, err := sink.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), Config{Inputs: []string{in}, PublicURL: mustScope(t, "https://www.example.com/"), Sink: snk,
			Name: "sm", MaxURLs: 50000, MaxBytes: 10485760, Fanout: 1000, GzipLevel: 1})
		if err == nil || !errors.Is(err, input.ErrColumnType) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CSV cannot hold") {
			t.Fatalf("%s: got %v; want an error naming %s", col, err, want)
		}
	}
}
