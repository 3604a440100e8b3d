package encode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/protocol"
)

// extRow builds Fields for loc from name=value pairs of extension columns.
func extRow(t testing.TB, loc string, kv ...string) Fields {
	t.Helper()
	f := Fields{Loc: []byte(loc)}
	for i := 0; i < len(kv); i += 2 {
		c, ok := ParseExtColumn(kv[i])
		if !ok {
			t.Fatalf("ParseExtColumn(%q): not an extension column", kv[i])
		}
		f.Ext = append(f.Ext, c)
		f.ExtVals = append(f.ExtVals, []byte(kv[i+1]))
	}
	return f
}

func TestParseExtColumn(t *testing.T) {
	for _, tt := range []struct {
		name string
		want ExtColumn
		ok   bool
	}{
		{"alternate:de-CH", ExtColumn{ExtAlternate, "de-CH"}, true},
		{" Alternate:x-default ", ExtColumn{ExtAlternate, "x-default"}, true},
		{"alternate:", ExtColumn{}, false},
		{"media-alternate", ExtColumn{Kind: ExtMediaAlternate}, true},
		{"MOBILE", ExtColumn{Kind: ExtMobile}, true},
		{"image", ExtColumn{Kind: ExtImage}, true},
		{"image:12", ExtColumn{Kind: ExtImage}, true},
		{"image:x", ExtColumn{}, false},
		{"images", ExtColumn{Kind: ExtImageList}, true},
		{"news:title", ExtColumn{Kind: ExtNewsTitle}, true},
		{"video:tag:3", ExtColumn{Kind: ExtVideoTag}, true},
		{"video:duration", ExtColumn{Kind: ExtVideoDuration}, true},
		{"video:nonsense", ExtColumn{}, false},
		{"loc", ExtColumn{}, false},
	} {
		got, ok := ParseExtColumn(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseExtColumn(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestValidHreflang(t *testing.T) {
	for s, want := range map[string]bool{
		"en": true, "de-ch": true, "de-CH": true, "x-default": true, "X-Default": true, "zh-Hant": true,
		"zh-Hant-TW": true, "es-419": true, "fil": true, "en-": false, "": false, "english": false,
		"e": false, "en-USA": false, "en-1": false, "en_US": false, "en-US-x": false, "-en": false, "en--US": false,
	} {
		if got := validHreflang(s); got != want {
			t.Errorf("validHreflang(%q) = %v; want %v", s, got, want)
		}
	}
}

const loc = "https://www.example.com/en/page"

func TestAppendURLExtensions(t *testing.T) {
	long := strings.Repeat("é", protocol.MaxVideoDescription+1)
	video := []string{"video:thumbnail_loc", "https://img.example.com/t.jpg", "video:title", "Grill & <chill>",
		"video:description", "How to", "video:content_loc", "https://cdn.example.com/v.mp4"}
	news := []string{"news:publication_name", "The Times", "news:publication_language", "EN",
		"news:publication_date", "2024-05-01T10:00Z", "news:title", "A & B"}
	for _, tt := range []struct {
		name string
		kv   []string
		want string // the extension elements, between </loc> and </url>
		warn Warning
	}{
		{"alternates",
			[]string{"alternate:en", loc, "alternate:de-CH", "https://www.example.de/seite?a=1&b='x'", "alternate:x-default", ""},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>` +
				`<xhtml:link rel="alternate" hreflang="de-CH" href="https://www.example.de/seite?a=1&amp;b=&apos;x&apos;"/>`, 0},
		{"alternate normalised like loc",
			[]string{"alternate:en", "HTTPS://WWW.Example.com/en/page", "alternate:fr", "https://www.example.com/fr/été page"},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>` +
				`<xhtml:link rel="alternate" hreflang="fr" href="https://www.example.com/fr/%C3%A9t%C3%A9%20page"/>`, 0},
		{"not reciprocal",
			[]string{"alternate:de", "https://www.example.de/seite"},
			`<xhtml:link rel="alternate" hreflang="de" href="https://www.example.de/seite"/>`, AlternateNotReciprocal},
		{"bad hreflang and bad href dropped",
			[]string{"alternate:en", loc, "alternate:english", "https://a.example/", "alternate:de", "/relative", "alternate:fr", "ftp://x.example/"},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>`, HreflangInvalid | AlternateInvalid},
		{"duplicate hreflang",
			[]string{"alternate:en", loc, "alternate:EN", "https://b.example/"},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>`, AlternateDuplicate},
		{"media alternate",
			[]string{"media-alternate", "https://m.example.com/en/page"},
			`<xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/en/page"/>`, 0},
		{"media alternate bad", []string{"media-alternate", "m.example.com"}, ``, MediaAlternateInvalid},
		{"mobile", []string{"mobile", "Yes"}, `<mobile:mobile/>`, 0},
		{"mobile false", []string{"mobile", "0"}, ``, 0},
		{"mobile bad", []string{"mobile", "maybe"}, ``, MobileInvalid},
		{"images",
			[]string{"image", "https://img.example.com/a b.jpg", "image:2", "", "image:3", "not a url", "image:4", "http://img.example.com/c.png"},
			`<image:image><image:loc>https://img.example.com/a%20b.jpg</image:loc></image:image>` +
				`<image:image><image:loc>http://img.example.com/c.png</image:loc></image:image>`, ImageInvalid},
		{"video", append(append([]string{}, video...), "video:duration", "600", "video:rating", "4.5", "video:view_count", "12",
			"video:publication_date", "2024-05-01", "video:tag", "a", "video:tag:2", "b<", "video:family_friendly", "no", "video:live", "TRUE"),
			`<video:video><video:thumbnail_loc>https://img.example.com/t.jpg</video:thumbnail_loc><video:title>Grill &amp; &lt;chill&gt;</video:title>` +
				`<video:description>How to</video:description><video:content_loc>https://cdn.example.com/v.mp4</video:content_loc>` +
				`<video:duration>600</video:duration><video:rating>4.5</video:rating><video:view_count>12</video:view_count>` +
				`<video:publication_date>2024-05-01</video:publication_date><video:tag>a</video:tag><video:tag>b&lt;</video:tag>` +
				`<video:family_friendly>no</video:family_friendly><video:live>yes</video:live></video:video>`, 0},
		{"video bad optional parts dropped", append(append([]string{}, video...), "video:duration", "28801", "video:rating", "5.5", "video:expiration_date", "2024-13-01"),
			`<video:video><video:thumbnail_loc>https://img.example.com/t.jpg</video:thumbnail_loc><video:title>Grill &amp; &lt;chill&gt;</video:title>` +
				`<video:description>How to</video:description><video:content_loc>https://cdn.example.com/v.mp4</video:content_loc></video:video>`, VideoFieldInvalid},
		{"video without title", []string{"video:thumbnail_loc", "https://img.example.com/t.jpg", "video:description", "d", "video:player_loc", "https://p.example/"}, ``, VideoInvalid},
		{"video without content or player", video[:6], ``, VideoInvalid},
		{"video bad thumbnail", append([]string{"video:thumbnail_loc", "/t.jpg"}, video[2:]...), ``, VideoInvalid},
		{"video description too long", append(append([]string{}, video[:4]...), "video:description", long, "video:player_loc", "https://p.example/"), ``, VideoDescriptionLong},
		{"news", news,
			`<news:news><news:publication><news:name>The Times</news:name><news:language>en</news:language></news:publication>` +
				`<news:publication_date>2024-05-01T10:00:00Z</news:publication_date><news:title>A &amp; B</news:title></news:news>`, 0},
		{"news without title", news[:6], ``, NewsInvalid},
		{"news bad date", append(append([]string{}, news[:4]...), "news:publication_date", "2024-05", "news:title", "t"), ``, NewsInvalid},
		{"news bad language", append(append([]string{}, news[2:]...), "news:publication_language", "english"), ``, NewsInvalid},
		{"all in order", []string{"mobile", "1", "news:publication_name", "N", "news:publication_language", "zh-TW", "news:publication_date", "2024-05-01",
			"news:title", "T", "image", "https://i.example/x", "alternate:en", loc},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>` +
				`<image:image><image:loc>https://i.example/x</image:loc></image:image>` +
				`<news:news><news:publication><news:name>N</news:name><news:language>zh-tw</news:language></news:publication>` +
				`<news:publication_date>2024-05-01</news:publication_date><news:title>T</news:title></news:news><mobile:mobile/>`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEncoder(newTestScope(t, "https://www.example.com/"), nil)
			f := extRow(t, loc, tt.kv...)
			out, res := e.AppendURL(nil, f)
			if res.Reason != OK {
				t.Fatalf("rejected: %v", res.Reason)
			}
			prefix := "<url><loc>" + loc + "</loc>"
			got := strings.TrimSuffix(strings.TrimPrefix(string(out), prefix), "</url>\n")
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if res.Warnings != tt.warn {
				t.Errorf("warnings %b; want %b", res.Warnings, tt.warn)
			}
		})
	}
}

func TestMediaQuery(t *testing.T) {
	e := NewEncoder(nil, nil)
	e.SetMediaQuery(`handheld & "small"`)
	out, _ := e.AppendURL(nil, extRow(t, loc, "media-alternate", "https://m.example.com/"))
	if want := `media="handheld &amp; &quot;small&quot;" href="https://m.example.com/"`; !bytes.Contains(out, []byte(want)) {
		t.Errorf("got %s; want it to hold %s", out, want)
	}
}

func TestImageLimit(t *testing.T) {
	var kv []string
	for i := range protocol.MaxImages + 5 {
		kv = append(kv, fmt.Sprintf("image:%d", i), fmt.Sprintf("https://i.example/%d.jpg", i))
	}
	checkLimit(t, kv, "<image:image>", protocol.MaxImages, ImageLimit)
}

// checkLimit encodes the extension columns kv, more elements than the
// protocol's limit allows, and checks that limit elements (open tag) are
// written, with the warning w alone.
func checkLimit(t *testing.T, kv []string, open string, limit int, w Warning) {
	t.Helper()
	out, res := NewEncoder(nil, nil).AppendURL(nil, extRow(t, loc, kv...))
	if n := bytes.Count(out, []byte(open)); n != limit {
		t.Errorf("%d %s written; want %d", n, open, limit)
	}
	if res.Warnings != w {
		t.Errorf("warnings %b; want %b", res.Warnings, w)
	}
}

func TestVideoTagLimit(t *testing.T) {
	kv := []string{"video:thumbnail_loc", "https://i.example/t.jpg", "video:title", "t", "video:description", "d", "video:player_loc", "https://p.example/"}
	for i := range protocol.MaxVideoTags + 1 {
		kv = append(kv, fmt.Sprintf("video:tag:%d", i), fmt.Sprint("tag", i))
	}
	checkLimit(t, kv, "<video:tag>", protocol.MaxVideoTags, VideoTagLimit)
}

func TestImageList(t *testing.T) {
	var list []byte
	for _, u := range []string{"https://i.example/a.jpg", "", "bad", "https://i.example/b.jpg"} {
		list = AppendPacked(list, []byte(u))
	}
	f := Fields{Loc: []byte(loc), Ext: []ExtColumn{{Kind: ExtImageList}}, ExtVals: [][]byte{list}}
	out, res := NewEncoder(nil, nil).AppendURL(nil, f)
	if n := bytes.Count(out, []byte("<image:image>")); n != 2 || res.Warnings != ImageInvalid {
		t.Errorf("got %s, warnings %b; want 2 images and ImageInvalid", out, res.Warnings)
	}
	f.ExtVals[0] = []byte{0x85, 0x01, 'x'} // claims 133 bytes
	if out, res = NewEncoder(nil, nil).AppendURL(nil, f); bytes.Contains(out, []byte("image")) || res.Warnings != ImageInvalid {
		t.Errorf("malformed list: got %s, warnings %b", out, res.Warnings)
	}
}

func TestNamespaces(t *testing.T) {
	f := extRow(t, loc, "alternate:en", "", "media-alternate", "", "video:title", "", "image:1", "")
	ns := NamespacesOf(f.Ext)
	got := string(ns.AppendDecls(nil))
	want := ` xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"` +
		` xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"`
	if got != want {
		t.Errorf("got %s; want %s", got, want)
	}
	if NamespacesOf(nil) != 0 {
		t.Error("no columns: want no namespaces")
	}
}

// ExtRow10x3 is the benchmark row: 10 alternates (one the loc itself) and 3 images.
func ExtRow10x3(t testing.TB) Fields {
	kv := []string{"alternate:en", loc}
	for _, l := range []string{"de", "de-ch", "fr", "fr-ch", "it", "es", "pt-br", "nl", "x-default"} {
		kv = append(kv, "alternate:"+l, "https://www.example.com/"+l+"/page?ref=sitemap&v=2")
	}
	for i := range 3 {
		kv = append(kv, fmt.Sprint("image:", i+1), fmt.Sprintf("https://img.example.com/photos/%d/large é.jpg", i))
	}
	return extRow(t, loc, kv...)
}

func TestAppendURLExtensionAllocs(t *testing.T) {
	video := []string{"video:thumbnail_loc", "https://img.example.com/t.jpg", "video:title", "Grill", "video:description", "How to",
		"video:content_loc", "https://cdn.example.com/v.mp4", "video:duration", "600", "video:publication_date", "2024-05-01T10:00",
		"video:tag", "a", "video:family_friendly", "yes", "video:rating", "4.2"}
	news := []string{"news:publication_name", "The Times", "news:publication_language", "en", "news:publication_date", "2024-05-01T10:00Z", "news:title", "A & B"}
	rows := map[string]Fields{
		"10 alternates 3 images": ExtRow10x3(t),
		"video news mobile":      extRow(t, loc, append(append(video, news...), "mobile", "yes", "media-alternate", "https://m.example.com/x")...),
		"bad values":             extRow(t, loc, "alternate:english", "x", "alternate:de", "/rel", "image", "bad", "video:title", "t", "news:title", "t", "mobile", "perhaps"),
	}
	for name, f := range rows {
		e := NewEncoder(newTestScope(t, "https://www.example.com/"), berlin)
		dst := make([]byte, 0, 16<<10)
		e.AppendURL(dst, f)
		if a := testing.AllocsPerRun(100, func() { dst, _ = e.AppendURL(dst[:0], f) }); a != 0 {
			t.Errorf("%s: %v allocations per row; want 0", name, a)
		}
	}
}

func BenchmarkAppendURLExtensions(b *testing.B) {
	f := ExtRow10x3(b)
	e := NewEncoder(newTestScope(b, "https://www.example.com/"), nil)
	dst, _ := e.AppendURL(make([]byte, 0, 16<<10), f)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = e.AppendURL(dst[:0], f)
	}
}
