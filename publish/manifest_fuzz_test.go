package publish

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"
)

// FuzzManifestSanitize: whatever a manifest holds, what survives sanitize
// is in range: names of the set's, sums in hex, sizes bounded, dates W3C
// up to the run's time.
func FuzzManifestSanitize(f *testing.F) {
	f.Add([]byte(`{"version":1,"generation":3,"time":"2026-11-20T02:00:00Z","root":"sitemap.xml","files":[{"name":"sitemap-000001-0123456789.xml.gz","size":10,"sha256":"` +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `","modified":"2026-11-19T02:00:00Z"}],"previous":[{"generation":2,"time":"2026-11-19T02:00:00Z","files":[{"name":"x","modified":"2099-01-01T00:00:00Z"}]}]}`))
	f.Add([]byte(`{"version":1,"generation":1,"time":"2026-11-20T02:00:00Z","root":"sitemap.xml","files":[{"name":"sitemap.xml","modified":"not-a-time","size":-1}]}`))
	l := NewLayout("sitemap")
	now := time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m Manifest
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		if m.sanitize(l, now, false, log) != nil {
			return
		}
		check := func(files []File) {
			for _, f := range files {
				if l.Kind(f.Name) == Foreign || l.Kind(f.Name) == TempFile || f.Size < 0 || f.Size > maxFileSize ||
					!isHex(f.SHA256, 64, true) || !isHex(f.XMLBLAKE3, 64, true) || !isHex(f.XMLSHA256, 64, true) || !isHex(f.Trailer, 16, true) ||
					!isText(f.Codec) || !isText(f.ETag) {
					t.Fatalf("kept %+v", f)
				}
				if f.Modified != "" {
					d, err := time.Parse(time.RFC3339, f.Modified)
					if err != nil || d.After(now) {
						t.Fatalf("kept modified %q", f.Modified)
					}
				}
			}
		}
		check(m.Files)
		for _, g := range m.Previous {
			if g.Time.After(now) {
				t.Fatalf("kept a generation of %v", g.Time)
			}
			check(g.Files)
		}
	})
}
