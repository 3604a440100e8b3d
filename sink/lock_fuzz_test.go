package sink

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzHolder: a lock's content is read from a store others can write. It
// never panics, and what a refusal prints of it is printable text of a
// bounded length.
func FuzzHolder(f *testing.F) {
	f.Add([]byte(`{"owner":"sitemapgen pid 1 on ctr","token":"0123456789abcdef0123456789abcdef","acquired":"2026-11-24T02:00:03Z","renewed":"2026-11-24T02:06:43Z","expires":"2026-11-24T02:16:43Z"}`))
	f.Add([]byte(`{"owner":"sitemapgen pid 4121 on etl-3 since 2026-11-24T02:00:03Z","expires":"2026-11-24T02:10:03Z"}`)) // before tokens
	f.Add([]byte("sitemapgen pid 4121 on etl-3 since 2026-11-24T02:00:03Z\n"))                                            // a folder's, before JSON
	f.Add([]byte(`{"owner":"\u001b[2J\u0000\ud800","token":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := parseHolder(raw)
		if err != nil {
			h = Holder{Owner: string(raw)} // what a folder's lock of an older version says
		}
		for _, e := range []*LockedError{{Lock: "out/.sitemap.lock", Holder: h}, {Lock: "s3://b/p/.sitemap.lock", Holder: h, Expiry: true}} {
			msg := e.Error()
			if len(msg) > 600 {
				t.Fatalf("refusal of %d bytes: %q", len(msg), msg)
			}
			if i := strings.IndexFunc(msg, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }); i >= 0 {
				t.Fatalf("refusal holds a control or invalid character at %d: %q", i, msg)
			}
		}
	})
}
