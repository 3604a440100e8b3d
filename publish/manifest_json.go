package publish

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// appendJSON appends m as json.MarshalIndent(m, "", " ") writes it, byte
// for byte, and an error where it would fail (a time it cannot write).
//
// A grouped run writes a manifest per group: json.MarshalIndent took 14 µs
// for a one-sitemap set's (1 KB), two thirds of it in the indenting pass,
// about 20 ms of a first night of a thousand groups. This takes about 1 µs.
// TestManifestJSON and FuzzManifestJSON hold it to encoding/json's bytes.
func (m *Manifest) appendJSON(b []byte) ([]byte, error) {
	w := jsonWriter{b: b}
	w.open('{')
	w.int("version", int64(m.Version))
	w.int("generation", m.Generation)
	w.time("time", m.Time)
	w.int("rows", m.Rows)
	w.int("urls", m.URLs)
	w.int("rejected", m.Rejected)
	w.int("shards", int64(m.Shards))
	if m.News != 0 {
		w.int("news", int64(m.News))
	}
	w.int("indexes", int64(m.Indexes))
	w.str("root", m.Root)
	w.files(m.Files)
	if len(m.Submit) > 0 {
		w.key("submit")
		w.open('[')
		for _, s := range m.Submit {
			w.elem()
			w.quote(s)
		}
		w.close(']')
	}
	if len(m.Previous) > 0 {
		w.key("previous")
		w.open('[')
		for _, g := range m.Previous {
			w.elem()
			w.open('{')
			w.int("generation", g.Generation)
			w.time("time", g.Time)
			if g.URLs != 0 {
				w.int("urls", g.URLs)
			}
			w.files(g.Files)
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
	return w.b, w.err
}

// jsonSize is about the length of m's JSON: room enough, most of the
// time, for appendJSON to fill without growing.
func (m *Manifest) jsonSize() int {
	n := len(m.Files)
	for _, g := range m.Previous {
		n += len(g.Files)
	}
	return 512 + 384*n
}

// jsonWriter writes JSON indented one space a level, as json.MarshalIndent
// with prefix "" and indent " " does.
type jsonWriter struct {
	b     []byte
	depth int
	first bool // no member or element yet at this depth
	err   error
}

func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *jsonWriter) close(c byte) {
	w.depth--
	if !w.first { // an empty object or array stays "{}" or "[]"
		w.newline()
	}
	w.b = append(w.b, c)
	w.first = false
}

func (w *jsonWriter) newline() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ')
	}
}

// elem starts a member or an element.
func (w *jsonWriter) elem() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.newline()
}

func (w *jsonWriter) key(k string) {
	w.elem()
	w.quote(k)
	w.b = append(w.b, ':', ' ')
}

func (w *jsonWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jsonWriter) str(k, v string) {
	w.key(k)
	w.quote(v)
}

// strOmit is str, for a member tagged omitempty: nothing when v is "".
func (w *jsonWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *jsonWriter) time(k string, t time.Time) {
	w.key(k)
	w.b = append(w.b, '"')
	b, err := t.AppendText(w.b) // what time.Time.MarshalJSON writes, unquoted
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
	w.b = append(b, '"')
}

// files writes a files member: null for nil, as a slice without omitempty.
func (w *jsonWriter) files(files []File) {
	w.key("files")
	if files == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for i := range files {
		f := &files[i]
		w.elem()
		w.open('{')
		w.str("name", f.Name)
		w.int("size", f.Size)
		w.strOmit("sha256", f.SHA256)
		w.strOmit("modified", f.Modified)
		w.strOmit("xml_blake3", f.XMLBLAKE3)
		w.strOmit("xml_sha256", f.XMLSHA256)
		if f.XMLSize != 0 {
			w.int("xml_size", f.XMLSize)
		}
		w.strOmit("codec", f.Codec)
		w.strOmit("gzip_trailer", f.Trailer)
		w.strOmit("etag", f.ETag)
		if f.Verified {
			w.key("verified")
			w.b = append(w.b, "true"...)
		}
		w.close('}')
	}
	w.close(']')
}

// quote writes s as a JSON string. Printable ASCII that encoding/json
// writes as it is (all but '"', '\\' and its HTML escapes '<', '>', '&')
// is copied; any other string, rare in a manifest, is left to
// encoding/json, so that its escapes are encoding/json's own.
func (w *jsonWriter) quote(s string) {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			q, err := json.Marshal(s)
			if err != nil && w.err == nil {
				w.err = err
			}
			w.b = append(w.b, q...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// plainJSON holds the bytes encoding/json writes as they are.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
