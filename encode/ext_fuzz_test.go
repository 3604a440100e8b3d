package encode

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzAppendURLExtensions feeds random extension columns and values: the
// encoder must not panic, must keep what dst held, must not reject a row
// for its extensions, and must write well-formed XML whose extension
// elements are all in the namespaces their columns declare.
func FuzzAppendURLExtensions(f *testing.F) {
	f.Add("alternate:en,alternate:de,image,mobile", "https://www.example.com/a\x00https://www.example.de/ä\x00https://i.example/x y.jpg\x00yes")
	f.Add("video:thumbnail_loc,video:title,video:description,video:player_loc,video:duration,video:tag,video:rating",
		"https://i.example/t.jpg\x00T<&>\x00D\"'\x00https://p.example/?a=1&b=2\x0028800\x00x\x005.0")
	f.Add("news:publication_name,news:publication_language,news:publication_date,news:title", "N\x00zh-cn\x002024-01-01T10:00+01:00\x00T")
	f.Add("images,media-alternate,alternate:x-default", "\x05http:/\x00https://m.example/\x00//x")
	f.Fuzz(func(t *testing.T, names, values string) {
		var fs Fields
		fs.Loc = []byte("https://www.example.com/a")
		vals := strings.Split(values, "\x00")
		for i, n := range strings.Split(names, ",") {
			c, ok := ParseExtColumn(n)
			if !ok {
				continue
			}
			fs.Ext = append(fs.Ext, c)
			v := ""
			if i < len(vals) {
				v = vals[i]
			}
			fs.ExtVals = append(fs.ExtVals, []byte(v))
		}
		e := NewEncoder(nil, nil)
		prefix := []byte("<kept/>")
		out, res := e.AppendURL(append([]byte(nil), prefix...), fs)
		if res.Reason != OK {
			t.Fatalf("rejected for its extensions: %v", res.Reason)
		}
		if !bytes.HasPrefix(out, prefix) {
			t.Fatal("dst prefix changed")
		}
		doc := []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`)
		doc = NamespacesOf(fs.Ext).AppendDecls(doc)
		doc = append(doc, '>')
		doc = append(doc, out[len(prefix):]...)
		doc = append(doc, "</urlset>"...)
		checkSplitNews(t, fs, out[len(prefix):])
		d := xml.NewDecoder(bytes.NewReader(doc))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("not well-formed: %v\n%s", err, doc)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Space == "" {
				t.Fatalf("element %s in no namespace:\n%s", se.Name.Local, doc)
			}
		}
	})
}

// checkSplitNews checks that an encoder with a news window wide enough for
// any date writes the row as inline (its output without a news window) with
// the <news:news> element moved to a news entry of its own.
func checkSplitNews(t *testing.T, fs Fields, inline []byte) {
	t.Helper()
	e := NewEncoder(nil, nil)
	e.SetNewsWindow(time.Date(-9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	out, res := e.AppendURL(nil, fs)
	regular, news := out, []byte(nil)
	if res.NewsAt > 0 {
		regular, news = out[:res.NewsAt], out[res.NewsAt:]
	}
	var item []byte
	if i := bytes.Index(inline, []byte("<news:news>")); i >= 0 {
		j := bytes.Index(inline, []byte("</news:news>")) + len("</news:news>")
		item = inline[i:j]
		inline = append(inline[:i:i], inline[j:]...)
	}
	if !bytes.Equal(regular, inline) {
		t.Fatalf("split regular entry\n%s\nwant\n%s", regular, inline)
	}
	loc := inline[len("<url><loc>"):bytes.Index(inline, []byte("</loc>"))]
	if want := fmt.Sprintf("<url><loc>%s</loc>%s</url>\n", loc, item); item != nil && string(news) != want || item == nil && news != nil {
		t.Fatalf("news entry %q, want it for item %q", news, item)
	}
}
