package encode

import (
	"strings"
	"testing"
	"time"
)

// TestNewsWindow: with a news window the news item leaves the <url> entry
// for an entry of its own; items published before the window or after its
// end (plus NewsSkew) are left out with their warning, and the URL stays.
func TestNewsWindow(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cols := []ExtColumn{{Kind: ExtNewsName}, {Kind: ExtNewsLanguage}, {Kind: ExtNewsDate}, {Kind: ExtNewsTitle}, {Kind: ExtImage}}
	row := func(date string) Fields {
		return Fields{Loc: []byte("https://www.example.com/a?b=1&c=2"), Lastmod: []byte("2026-11-01"), Ext: cols,
			ExtVals: [][]byte{[]byte("Daily & Co"), []byte("EN"), []byte(date), []byte("Title <1>"), []byte("https://i.example/1.jpg")}}
	}
	e := NewEncoder(nil, nil)
	e.SetNewsWindow(now.Add(-48*time.Hour), now)
	const regular = "<url><loc>https://www.example.com/a?b=1&amp;c=2</loc><lastmod>2026-11-01</lastmod>" +
		"<image:image><image:loc>https://i.example/1.jpg</image:loc></image:image></url>\n"
	for _, tc := range []struct {
		date string
		news string // "" for none
		warn Warning
	}{
		{"2026-11-24T11:00:00Z", "2026-11-24T11:00:00Z", 0},
		{"2026-11-22T12:00:00Z", "2026-11-22T12:00:00Z", 0},           // the window's first instant
		{"2026-11-24T14:00:00+02:00", "2026-11-24T14:00:00+02:00", 0}, // 12:00 UTC
		{"2026-11-24T12:14:59Z", "2026-11-24T12:14:59Z", 0},           // within the skew
		{"2026-11-22T11:59:59Z", "", NewsExpired},
		{"2026-11-21", "", NewsExpired},
		{"2026-11-24T12:15:01Z", "", NewsFuture},
		{"2026-11-25", "", NewsFuture},
		{"2026-11", "", NewsInvalid},
	} {
		out, res := e.AppendURL([]byte("<kept/>"), row(tc.date))
		if res.Reason != OK || res.Warnings != tc.warn {
			t.Errorf("%s: reason %v, warnings %b; want OK, %b", tc.date, res.Reason, res.Warnings, tc.warn)
		}
		got := string(out[len("<kept/>"):])
		want := regular
		if tc.news != "" {
			if res.NewsAt != len("<kept/>")+len(regular) {
				t.Errorf("%s: NewsAt %d", tc.date, res.NewsAt)
			}
			want += "<url><loc>https://www.example.com/a?b=1&amp;c=2</loc><news:news><news:publication><news:name>Daily &amp; Co</news:name>" +
				"<news:language>en</news:language></news:publication><news:publication_date>" + tc.news +
				"</news:publication_date><news:title>Title &lt;1&gt;</news:title></news:news></url>\n"
		} else if res.NewsAt != 0 {
			t.Errorf("%s: NewsAt %d without a news entry", tc.date, res.NewsAt)
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.date, got, want)
		}
	}
	// Without a news window the item stays in the entry, whatever its date.
	out, res := NewEncoder(nil, nil).AppendURL(nil, row("2001-01-01"))
	if res.NewsAt != 0 || !strings.Contains(string(out), "<news:publication_date>2001-01-01</news:publication_date>") {
		t.Errorf("no window: %s", out)
	}
	// Splitting allocates nothing.
	f := row("2026-11-24T11:00:00Z")
	buf := make([]byte, 0, 4096)
	if a := testing.AllocsPerRun(100, func() { buf, _ = e.AppendURL(buf[:0], f) }); a != 0 {
		t.Errorf("%v allocations per row", a)
	}
}
