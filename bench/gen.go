// Package bench generates realistic synthetic inputs and holds the
// end-to-end benchmarks of sitemapgen.
package bench

import (
	"math/rand/v2"
	"strconv"
)

// GeneratorVersion names the rows a Generator writes for a seed; it changes
// whenever they do, so cached inputs (bench/cmd/e2e) are regenerated.
const GeneratorVersion = "g2"

// Generator writes realistic URL rows, each URL once: lengths from 30 to 300 bytes around a
// mean of about 90, varied path depths, query strings with '&', about 2%
// non-ASCII paths, some quotes and apostrophes, lastmods mixing dates and
// datetimes with zones, changefreq and priority. The same seed gives the same rows.
type Generator struct {
	rng  *rand.Rand
	base string // scheme://host/folder/
	row  []byte // AppendCSV's scratch
	n    uint64 // URLs so far: each URL ends its path with it, as real exports list a page once
	// Bad is the share of rows (0..1) that are deliberately wrong: out of
	// scope, not a URL, bad optional fields. Zero for benchmarks.
	Bad float64
	// Sections, when set, gives every row a section (the first segment of
	// its path, and a column of its own) for grouped runs.
	Sections *Sections
	section  string // the current row's section: AppendURL's first segment
}

// Sections shapes the section column of a site split by page type: a few
// large sections that hold most rows and a long tail of small ones.
type Sections struct {
	Large, Small int     // how many of each
	SmallShare   float64 // the share of rows (0..1) that fall in the small ones
}

// DefaultSections is the benchmark's grouped shape: 5 large sections and 990
// small ones holding 5% of the rows between them (about 50 rows each per
// million).
var DefaultSections = Sections{Large: 5, Small: 990, SmallShare: 0.05}

var largeSections = []string{"products", "categories", "articles", "stores", "help", "brands", "offers", "guides"}

// Name returns the name of section i: the large ones first, as large
// sites name their page types (section-N past the eighth), then the small
// ones brand-0000 and on.
func (s Sections) Name(i int) string {
	switch {
	case i < s.Large && i < len(largeSections):
		return largeSections[i]
	case i < s.Large:
		return "section-" + strconv.Itoa(i)
	}
	return "brand-" + strconv.Itoa(10000 + i - s.Large)[1:]
}

// pick draws the section of the next row.
func (s Sections) pick(rng *rand.Rand) int {
	if s.Small > 0 && (s.Large == 0 || rng.Float64() < s.SmallShare) {
		return s.Large + rng.IntN(s.Small)
	}
	return rng.IntN(s.Large)
}

// Header returns the CSV header AppendCSV's rows go under: CSVHeader, with a
// section column when g has Sections.
func (g *Generator) Header() string {
	if g.Sections != nil {
		return "loc,lastmod,changefreq,priority,section\n"
	}
	return CSVHeader
}

// NewGenerator returns a Generator of URLs under base (which ends in '/').
func NewGenerator(seed uint64, base string) *Generator {
	return &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), base: base}
}

// CSVHeader is the header row AppendCSV's rows go under.
const CSVHeader = "loc,lastmod,changefreq,priority\n"

var (
	words = []string{"products", "catalog", "shoes", "men", "women", "kids", "sale", "new", "blue", "red",
		"running", "trail", "leather", "summer", "winter", "jackets", "outdoor", "home", "garden", "kitchen",
		"article", "news", "2024", "guide", "how-to", "reviews", "best", "cheap", "premium", "size-42"}
	unicodeWords = []string{"über", "café", "niño", "straße", "日本語", "ümlaut", "crème-brûlée", "москва"}
	odd          = []string{"it's", `the "best"`, "a&b", "100%", "x<y>z", "c++", "a b"}
	freqs        = []string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never", "Daily", "WEEKLY"}
	zones        = []string{"Z", "+02:00", "-05:00", "+05:30", ""}
)

func (g *Generator) pick(s []string) string { return s[g.rng.IntN(len(s))] }

// AppendURL appends one URL.
func (g *Generator) AppendURL(dst []byte) []byte {
	dst = append(dst, g.base...)
	if g.section != "" {
		dst = append(dst, g.section...)
		dst = append(dst, '/')
	}
	depth := 1 + g.rng.IntN(4)
	if g.rng.IntN(10) == 0 {
		depth += 4 + g.rng.IntN(8) // the long tail of deep URLs
	}
	for i := range depth {
		if i > 0 {
			dst = append(dst, '/')
		}
		switch r := g.rng.IntN(100); {
		case r < 2:
			dst = append(dst, g.pick(unicodeWords)...)
		case r < 3:
			dst = append(dst, g.pick(odd)...)
		default:
			dst = append(dst, g.pick(words)...)
			if g.rng.IntN(3) == 0 {
				dst = append(dst, '-')
				dst = strconv.AppendInt(dst, int64(g.rng.IntN(100000)), 10)
			}
		}
	}
	g.n++
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, g.n, 10)
	if g.rng.IntN(4) == 0 {
		dst = append(dst, "?id="...)
		dst = strconv.AppendInt(dst, int64(g.rng.IntN(1000000)), 10)
		for range g.rng.IntN(3) {
			dst = append(dst, '&')
			dst = append(dst, g.pick(words)...)
			dst = append(dst, '=')
			dst = append(dst, g.pick(words)...)
		}
	} else if g.rng.IntN(3) == 0 {
		dst = append(dst, ".html"...)
	}
	return dst
}

// AppendLastmod appends a lastmod in one of the forms exports carry.
func (g *Generator) AppendLastmod(dst []byte) []byte {
	y, m, d := 2015+g.rng.IntN(11), 1+g.rng.IntN(12), 1+g.rng.IntN(28)
	dst = strconv.AppendInt(dst, int64(y), 10)
	dst = append(dst, '-')
	dst = pad2(dst, m)
	dst = append(dst, '-')
	dst = pad2(dst, d)
	switch g.rng.IntN(4) {
	case 0: // date only
	case 1: // SQL form, read in --lastmod-tz
		dst = append(dst, ' ')
		dst = clock(dst, g)
	default:
		dst = append(dst, 'T')
		dst = clock(dst, g)
		dst = append(dst, g.pick(zones)...)
	}
	return dst
}

func clock(dst []byte, g *Generator) []byte {
	dst = pad2(dst, g.rng.IntN(24))
	dst = append(dst, ':')
	dst = pad2(dst, g.rng.IntN(60))
	dst = append(dst, ':')
	return pad2(dst, g.rng.IntN(60))
}

func pad2(dst []byte, n int) []byte {
	if n < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(n), 10)
}

// Row is one generated row: its fields are dst[Loc[0]:Loc[1]] and so on, in
// the buffer AppendRow returned; an absent field is empty.
type Row struct {
	Loc, Lastmod, Changefreq, Priority [2]int
	Section                            [2]int // empty unless the Generator has Sections
}

// AppendRow appends the fields of one row to dst, back to back, and
// returns where they are. AppendCSV writes the same rows as CSV, so a
// Generator of the same seed gives the same rows in both forms.
func (g *Generator) AppendRow(dst []byte) ([]byte, Row) {
	var r Row
	if g.Sections != nil {
		g.section = g.Sections.Name(g.Sections.pick(g.rng))
	}
	bad := g.Bad > 0 && g.rng.Float64() < g.Bad
	kind := -1
	if bad {
		kind = g.rng.IntN(8)
	}
	r.Loc[0] = len(dst)
	switch kind {
	case 0:
		dst = append(dst, "https://elsewhere.example.org/page"...)
	case 1:
		dst = append(dst, "mailto:someone@example.com"...)
	case 2:
		dst = append(dst, "/relative/path/"...)
		dst = strconv.AppendInt(dst, int64(g.rng.IntN(1000)), 10)
		g.n++
		dst = append(dst, '-')
		dst = strconv.AppendUint(dst, g.n, 10)
	case 3:
		dst = g.AppendURL(dst)
		dst = append(dst, "\x01tab"...)
	default:
		dst = g.AppendURL(dst)
	}
	r.Loc[1] = len(dst)
	r.Lastmod[0] = len(dst)
	switch {
	case kind == 4:
		dst = append(dst, "2024-02-30"...)
	case kind == 5:
		dst = append(dst, "2024-06"...)
	case g.rng.IntN(5) > 0:
		dst = g.AppendLastmod(dst)
	}
	r.Lastmod[1] = len(dst)
	r.Changefreq[0] = len(dst)
	if kind == 6 {
		dst = append(dst, "sometimes"...)
	} else if g.rng.IntN(3) > 0 {
		dst = append(dst, g.pick(freqs)...)
	}
	r.Changefreq[1] = len(dst)
	r.Priority[0] = len(dst)
	if kind == 7 {
		dst = append(dst, "1.5"...)
	} else if g.rng.IntN(3) > 0 {
		dst = append(dst, '0', '.')
		dst = strconv.AppendInt(dst, int64(g.rng.IntN(10)), 10)
	}
	r.Priority[1] = len(dst)
	r.Section[0] = len(dst)
	dst = append(dst, g.section...)
	r.Section[1] = len(dst)
	return dst, r
}

// AppendCSV appends one CSV row (loc,lastmod,changefreq,priority, and
// section when g has Sections) with a newline, quoting the loc when it needs it.
func (g *Generator) AppendCSV(dst []byte) []byte {
	start := len(dst)
	dst, r := g.AppendRow(dst)
	g.row = append(g.row[:0], dst[start:]...)
	f := g.row
	dst = append(dst[:start], f[r.Loc[0]-start:r.Loc[1]-start]...)
	dst = quoteCSV(dst, start)
	dst = append(dst, ',')
	dst = append(dst, f[r.Lastmod[0]-start:r.Lastmod[1]-start]...)
	dst = append(dst, ',')
	dst = append(dst, f[r.Changefreq[0]-start:r.Changefreq[1]-start]...)
	dst = append(dst, ',')
	dst = append(dst, f[r.Priority[0]-start:r.Priority[1]-start]...)
	if g.Sections != nil {
		dst = append(dst, ',')
		dst = append(dst, f[r.Section[0]-start:r.Section[1]-start]...)
	}
	return append(dst, '\n')
}

// quoteCSV quotes dst[start:] in place when it holds a comma or a quote.
func quoteCSV(dst []byte, start int) []byte {
	need := false
	for _, c := range dst[start:] {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return dst
	}
	field := append([]byte(nil), dst[start:]...)
	dst = append(dst[:start], '"')
	for _, c := range field {
		if c == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}
