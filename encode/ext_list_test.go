package encode

import (
	"strings"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/protocol"
	"github.com/sitemapgen/sitemapgen/internal/xmltest"
)

// altList packs alternates entries, each hreflang, href, media ("" leaves
// the field out; "-" for all three is a null entry).
func altList(entries ...[3]string) []byte {
	var list, rec []byte
	for _, e := range entries {
		rec = rec[:0]
		if e != [3]string{"-", "-", "-"} {
			for i, tag := range []byte{AltHreflang, AltHref, AltMedia} {
				if e[i] != "" {
					rec = AppendField(rec, tag, []byte(e[i]))
				}
			}
		}
		list = AppendPacked(list, rec)
	}
	return list
}

// videoRec packs one video record from kind, value pairs.
func videoRec(kv ...any) []byte {
	var rec []byte
	for i := 0; i < len(kv); i += 2 {
		rec = AppendField(rec, byte(kv[i].(ExtKind)), []byte(kv[i+1].(string)))
	}
	return rec
}

func TestAlternateList(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ext   []ExtColumn
		vals  [][]byte
		want  string
		warns Warning
	}{
		{"hreflang and media",
			[]ExtColumn{{Kind: ExtAlternateList}},
			[][]byte{altList([3]string{"en", loc, ""}, [3]string{"de-CH", "https://www.example.com/de/page?a=1&b=2", ""},
				[3]string{"", "https://m.example.com/en/page", "only screen and (max-width: 640px)"},
				[3]string{"fr", "https://www.example.com/fr/page", "print & <screen>"})},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>` +
				`<xhtml:link rel="alternate" hreflang="de-CH" href="https://www.example.com/de/page?a=1&amp;b=2"/>` +
				`<xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/en/page"/>` +
				`<xhtml:link rel="alternate" hreflang="fr" media="print &amp; &lt;screen&gt;" href="https://www.example.com/fr/page"/>`,
			0},
		{"nulls and empty entries add nothing",
			[]ExtColumn{{Kind: ExtAlternateList}},
			[][]byte{altList([3]string{"-", "-", "-"}, [3]string{"en", loc, ""}, [3]string{" ", " ", ""})},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>`, 0},
		{"empty list", []ExtColumn{{Kind: ExtAlternateList}}, [][]byte{nil}, "", 0},
		{"bad entries",
			[]ExtColumn{{Kind: ExtAlternateList}},
			[][]byte{altList([3]string{"english", "https://www.example.com/x", ""}, [3]string{"", "https://www.example.com/x", ""},
				[3]string{"de", "/relative", ""}, [3]string{"", "/relative", "screen"}, [3]string{"it", "", ""},
				[3]string{"en", loc, ""}, [3]string{"EN", "https://www.example.com/other", ""})},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>`,
			HreflangInvalid | AlternateInvalid | MediaAlternateInvalid | AlternateDuplicate},
		{"not reciprocal",
			[]ExtColumn{{Kind: ExtAlternateList}},
			[][]byte{altList([3]string{"de", "https://www.example.com/de/page", ""})},
			`<xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/page"/>`, AlternateNotReciprocal},
		{"flat and list: both written, duplicates across them dropped",
			[]ExtColumn{{Kind: ExtAlternate, Key: "en"}, {Kind: ExtAlternateList}, {Kind: ExtAlternate, Key: "de"}},
			[][]byte{[]byte(loc), altList([3]string{"en", "https://www.example.com/x", ""}, [3]string{"de", "https://www.example.com/de/page", ""}), []byte("https://www.example.com/de2")},
			`<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/page"/>` +
				`<xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/page"/>`,
			AlternateDuplicate},
		{"malformed list", []ExtColumn{{Kind: ExtAlternateList}}, [][]byte{{0x85, 0x01, 'x'}}, "", AlternateInvalid},
		{"malformed record", []ExtColumn{{Kind: ExtAlternateList}}, [][]byte{AppendPacked(nil, []byte{AltHref, 9, 'x'})}, "", AlternateInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Fields{Loc: []byte(loc), Ext: tc.ext, ExtVals: tc.vals}
			out, res := NewEncoder(nil, nil).AppendURL(nil, f)
			want := "<url><loc>" + loc + "</loc>" + tc.want + "</url>\n"
			if string(out) != want || res.Warnings != tc.warns {
				t.Errorf("got %s warnings %b\nwant %s warnings %b", out, res.Warnings, want, tc.warns)
			}
		})
	}
}

func TestVideoList(t *testing.T) {
	good := videoRec(ExtVideoThumbnail, "https://img.example.com/t1.jpg", ExtVideoTitle, "Grill & chill", ExtVideoDescription, "How to",
		ExtVideoContentLoc, "https://cdn.example.com/v1.mp4", ExtVideoDuration, "600", ExtVideoTag, "bbq", ExtVideoTag, " ", ExtVideoTag, "summer",
		ExtVideoFamilyFriendly, "true", ExtVideoPublicationDate, "2024-05-01T10:00:00Z")
	second := videoRec(ExtVideoPlayerLoc, "https://www.example.com/player?id=2", ExtVideoTitle, "Two", ExtVideoThumbnail, "https://img.example.com/t2.jpg",
		ExtVideoDescription, "Second", ExtVideoDuration, "99999")
	noTitle := videoRec(ExtVideoThumbnail, "https://img.example.com/t3.jpg", ExtVideoDescription, "x", ExtVideoContentLoc, "https://cdn.example.com/v3.mp4")
	var list []byte
	for _, r := range [][]byte{good, nil, second, noTitle} {
		list = AppendPacked(list, r)
	}
	flat := []string{"video:thumbnail_loc", "https://img.example.com/t0.jpg", "video:title", "Zero", "video:description", "Flat", "video:player_loc", "https://www.example.com/p0"}
	f := extRow(t, loc, flat...)
	f.Ext = append(f.Ext, ExtColumn{Kind: ExtVideoList})
	f.ExtVals = append(f.ExtVals, list)
	out, res := NewEncoder(nil, nil).AppendURL(nil, f)
	want := "<url><loc>" + loc + "</loc>" +
		"<video:video><video:thumbnail_loc>https://img.example.com/t0.jpg</video:thumbnail_loc><video:title>Zero</video:title><video:description>Flat</video:description><video:player_loc>https://www.example.com/p0</video:player_loc></video:video>" +
		"<video:video><video:thumbnail_loc>https://img.example.com/t1.jpg</video:thumbnail_loc><video:title>Grill &amp; chill</video:title><video:description>How to</video:description><video:content_loc>https://cdn.example.com/v1.mp4</video:content_loc><video:duration>600</video:duration><video:publication_date>2024-05-01T10:00:00Z</video:publication_date><video:tag>bbq</video:tag><video:tag>summer</video:tag><video:family_friendly>yes</video:family_friendly></video:video>" +
		"<video:video><video:thumbnail_loc>https://img.example.com/t2.jpg</video:thumbnail_loc><video:title>Two</video:title><video:description>Second</video:description><video:player_loc>https://www.example.com/player?id=2</video:player_loc></video:video>" +
		"</url>\n"
	if string(out) != want || res.Warnings != VideoInvalid|VideoFieldInvalid {
		t.Errorf("got %s warnings %b\nwant %s warnings %b", out, res.Warnings, want, VideoInvalid|VideoFieldInvalid)
	}
	doc := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset" + ` xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"` +
		string(NamespacesOf(f.Ext).AppendDecls(nil)) + ">\n" + string(out) + "</urlset>\n"
	xmltest.Validate(t, "videos", []byte(doc))

	// More than 32 tags in one listed video: the rest dropped.
	var many []byte
	many = append(many, videoRec(ExtVideoThumbnail, "https://img.example.com/t.jpg", ExtVideoTitle, "T", ExtVideoDescription, "D", ExtVideoContentLoc, "https://cdn.example.com/v.mp4")...)
	for range 40 {
		many = AppendField(many, byte(ExtVideoTag), []byte("t"))
	}
	f = Fields{Loc: []byte(loc), Ext: []ExtColumn{{Kind: ExtVideoList}}, ExtVals: [][]byte{AppendPacked(nil, many)}}
	out, res = NewEncoder(nil, nil).AppendURL(nil, f)
	if n := strings.Count(string(out), "<video:tag>"); n != protocol.MaxVideoTags || res.Warnings != VideoTagLimit {
		t.Errorf("%d tags, warnings %b; want %d and VideoTagLimit", n, res.Warnings, protocol.MaxVideoTags)
	}
	f.ExtVals[0] = []byte{0x85, 0x01, 'x'}
	if out, res = NewEncoder(nil, nil).AppendURL(nil, f); strings.Contains(string(out), "video") || res.Warnings != VideoInvalid {
		t.Errorf("malformed list: got %s, warnings %b", out, res.Warnings)
	}
}

func TestOpenClosePacked(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 70000} {
		dst, at := OpenField([]byte("x"), byte(ExtVideoTitle))
		dst = append(dst, strings.Repeat("a", n)...)
		dst = ClosePacked(dst, at)
		tag, v, rest, ok := NextField(dst[1:])
		if !ok || tag != byte(ExtVideoTitle) || len(v) != n || len(rest) != 0 {
			t.Errorf("n=%d: tag %d, %d bytes, rest %d, ok %v", n, tag, len(v), len(rest), ok)
		}
	}
}

func TestListAllocs(t *testing.T) {
	vid := videoRec(ExtVideoThumbnail, "https://img.example.com/t1.jpg", ExtVideoTitle, "Grill", ExtVideoDescription, "How to",
		ExtVideoContentLoc, "https://cdn.example.com/v1.mp4", ExtVideoDuration, "600", ExtVideoTag, "bbq", ExtVideoPublicationDate, "2024-05-01T10:00")
	f := Fields{Loc: []byte(loc), Ext: []ExtColumn{{Kind: ExtAlternate, Key: "fr"}, {Kind: ExtAlternateList}, {Kind: ExtVideoList}, {Kind: ExtImageList}},
		ExtVals: [][]byte{[]byte("https://www.example.com/fr/page"),
			altList([3]string{"en", loc, ""}, [3]string{"de", "https://www.example.com/de/page", ""}, [3]string{"english", "x", ""},
				[3]string{"de", "https://www.example.com/de/2", ""}, [3]string{"", "https://m.example.com/", "screen"}),
			AppendPacked(AppendPacked(nil, vid), vid),
			AppendPacked(AppendPacked(nil, []byte("https://img.example.com/a é.jpg")), []byte("bad"))}}
	e := NewEncoder(newTestScope(t, "https://www.example.com/"), berlin)
	dst := make([]byte, 0, 16<<10)
	e.AppendURL(dst, f)
	if a := testing.AllocsPerRun(100, func() { dst, _ = e.AppendURL(dst[:0], f) }); a != 0 {
		t.Errorf("%v allocations per row; want 0", a)
	}
}

// TestReadmeListExample: the README's list columns example.
func TestReadmeListExample(t *testing.T) {
	const l = "https://www.example.com/en/a"
	vid := videoRec(ExtVideoThumbnail, "https://img.example.com/t.jpg", ExtVideoTitle, "Grill", ExtVideoDescription, "How to",
		ExtVideoContentLoc, "https://cdn.example.com/v.mp4", ExtVideoDuration, "600", ExtVideoTag, "bbq", ExtVideoTag, "summer")
	f := Fields{Loc: []byte(l), Ext: []ExtColumn{{Kind: ExtImageList}, {Kind: ExtAlternateList}, {Kind: ExtVideoList}},
		ExtVals: [][]byte{AppendPacked(nil, []byte("https://img.example.com/a.jpg")),
			altList([3]string{"en", l, ""}, [3]string{"de", "https://www.example.com/de/a", ""}, [3]string{"", "https://m.example.com/en/a", "only screen and (max-width: 640px)"}),
			AppendPacked(nil, vid)}}
	out, res := NewEncoder(nil, nil).AppendURL(nil, f)
	want := `<url><loc>https://www.example.com/en/a</loc><xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/a"/><xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/a"/><xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/en/a"/><image:image><image:loc>https://img.example.com/a.jpg</image:loc></image:image><video:video><video:thumbnail_loc>https://img.example.com/t.jpg</video:thumbnail_loc><video:title>Grill</video:title><video:description>How to</video:description><video:content_loc>https://cdn.example.com/v.mp4</video:content_loc><video:duration>600</video:duration><video:tag>bbq</video:tag><video:tag>summer</video:tag></video:video></url>` + "\n"
	if string(out) != want || res.Warnings != 0 {
		t.Errorf("got %s warnings %b", out, res.Warnings)
	}
}
