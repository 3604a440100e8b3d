package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// sameAsEncodingJSON fails t unless appendJSON writes m as
// json.MarshalIndent(m, "", " ") does, and fails where it fails.
func sameAsEncodingJSON(t *testing.T, m *Manifest) {
	t.Helper()
	want, werr := json.MarshalIndent(m, "", " ")
	got, gerr := m.appendJSON([]byte("prefix"))
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("error: encoding/json %v, appendJSON %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("appendJSON wrote\n%s\nencoding/json\n%s", got, want)
	}
}

func TestManifestJSON(t *testing.T) {
	now := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	gz := File{Name: "s-000001-0123456789.xml.gz", Size: 260, SHA256: "ab", Modified: "2026-11-19T02:00:00Z",
		XMLBLAKE3: "cd", XMLSHA256: "c0", XMLSize: 318, Codec: "pgzip v1.3.0 level 6", Trailer: "f1e704173e010000", ETag: `"e"`, Verified: true}
	full := &Manifest{Version: 1, Generation: 7, Time: now, Rows: 3, URLs: 2, Rejected: 1, Shards: 1, News: 2, Indexes: 1,
		Root: "s.xml", Files: []File{gz, {Name: "s.xml", Size: 9, SHA256: "ef"}, {Name: "empty"}},
		Submit: []string{"https://example.com/s.xml", "https://example.com/a?b=1&c=2", "https://example.com/<", ">"},
		Previous: []Generation{
			{Generation: 6, Time: now.Add(-time.Hour), URLs: 5, Files: []File{gz}},
			{Generation: 0, Files: nil}, // found without a manifest: the zero time
			{Generation: 5, Time: now.In(time.FixedZone("", -(5*3600 + 30*60))), Files: []File{}},
		},
	}
	cases := map[string]*Manifest{
		"zero":  {},
		"full":  full,
		"empty": {Version: 1, Files: []File{}, Submit: []string{}, Previous: []Generation{}},
		"escapes": {Root: "a\"b\\c\x00\x1f\t\n\r\b\f<>&\u2028\u2029é\xff\xfe", Files: []File{{Name: "\x7f"}, {Name: `a\b`}, {Name: "tab\there"}, {Name: "é"}},
			Submit: []string{"\u00e9t\u00e9", "x\u2029"}},
		"nanoseconds": {Time: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("", 3600))},
		"year 10000":  {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"kept year 0": {Previous: []Generation{{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) { sameAsEncodingJSON(t, m) })
	}
}

// TestManifestJSONEveryField: a manifest with every field of its own and of
// its files and generations set (strings to escape, numbers, true, lists of
// two) is written as encoding/json writes it, so a field added to the
// structs and not to appendJSON fails here, omitempty or not.
func TestManifestJSONEveryField(t *testing.T) {
	var m Manifest
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				v.Set(reflect.ValueOf(time.Date(2026, 11, 20, 2, 0, n, n, time.FixedZone("", 3600))))
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fill(v.Index(0))
			fill(v.Index(1))
		case reflect.String:
			v.SetString(fmt.Sprintf("v%d <&> \u2028", n))
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(n))
		case reflect.Bool:
			v.SetBool(true)
		default:
			t.Fatalf("a field of kind %s: teach this test (and appendJSON) to fill it", v.Kind())
		}
	}
	fill(reflect.ValueOf(&m).Elem())
	sameAsEncodingJSON(t, &m)
}

// FuzzManifestJSON: whatever a manifest holds, appendJSON writes
// encoding/json's bytes.
func FuzzManifestJSON(f *testing.F) {
	f.Add("sitemap.xml", "https://example.com/sitemap.xml", "pgzip v1.3.0", int64(3), int64(1_700_000_000), 0, true, uint8(3))
	f.Add("a<b>&\"\\\x00\u2028", "é\xff", "", int64(-1), int64(-62_135_596_800), -18000, false, uint8(255))
	f.Fuzz(func(t *testing.T, name, url, codec string, n, unix int64, offset int, verified bool, shape uint8) {
		at := time.Unix(unix, n).In(time.FixedZone("", offset%100_000))
		file := File{Name: name, Size: n, SHA256: url, Modified: codec, XMLBLAKE3: url, XMLSHA256: name, XMLSize: -n, Codec: codec,
			Trailer: url, ETag: name + url, Verified: verified}
		m := &Manifest{Version: int(n), Generation: n, Time: at, Rows: n, URLs: -n, Rejected: n, Shards: int(shape),
			News: int(shape & 1), Indexes: int(n), Root: name}
		if shape&2 != 0 {
			m.Files = []File{file, {Name: url}}
		} else if shape&4 != 0 {
			m.Files = []File{}
		}
		if shape&8 != 0 {
			m.Submit = []string{url, name}
		} else if shape&16 != 0 {
			m.Submit = []string{}
		}
		if shape&32 != 0 {
			m.Previous = []Generation{{Generation: n, Time: at, URLs: int64(shape & 64), Files: m.Files}, {}}
		}
		sameAsEncodingJSON(t, m)
	})
}

// BenchmarkManifestJSON: a one-sitemap set's manifest (a group of a long
// tail), by appendJSON and by json.MarshalIndent.
func BenchmarkManifestJSON(b *testing.B) {
	now := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	m := &Manifest{Version: 1, Generation: 1, Time: now, Rows: 1, URLs: 1, Shards: 1, Indexes: 1, Root: "sitemap-brand-0000.xml",
		Files: []File{
			{Name: "sitemap-brand-0000-000001-e25bbd3986.xml.gz", Size: 260, SHA256: "e25bbd39860c54e1dd4f2af2aa1e038e5201e1dc6bd002939238d9487e61a6ea",
				Modified: "2026-01-01T00:00:00Z", XMLBLAKE3: "2468f76bc282c5d941a46c7a1fd1517e811615a3e1bea5a1c8f29cbf992fbbe5", XMLSize: 318,
				Codec: "pgzip v1.3.0 compress v1.20.3 level 6 block 1048576", Trailer: "f1e704173e010000"},
			{Name: "sitemap-brand-0000.xml", Size: 268, SHA256: "3f86992a55d1bdf0a07f49a82d136c72ec2ffa9a0f26d8bb680e91c88733b1e0"},
			{Name: "sitemap-brand-0000-robots.txt", Size: 65, SHA256: "34f9c0ad81bc763039608cefbaaea5464d5e0eaced99d23a952e857d08e54824"},
		},
		Submit: []string{"https://www.example.com/sitemaps/sitemap-brand-0000.xml"},
	}
	b.Run("appendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.appendJSON(make([]byte, 0, m.jsonSize())); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.MarshalIndent(m, "", " "); err != nil {
				b.Fatal(err)
			}
		}
	})
}
