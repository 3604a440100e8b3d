package encode

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
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
