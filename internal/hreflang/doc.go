// Package hreflang checks one rule across a whole sitemap set, in bounded
// memory: every hreflang alternate must be returned. Google ignores an
// alternate link that its target does not return, and asks each page to
// list itself:
//
//   - "Each language version must list itself as well as all other
//     language versions."
//   - "If two pages don't both point to each other, the tags will be
//     ignored."
//   - "Missing return links: If page X links to page Y, page Y must link
//     back to page X."
//
// (Google Search Central, "Tell Google about localized versions of your
// page", https://developers.google.com/search/docs/specialty/international/localized-versions.)
//
// The rule checked is the one Google states: a link from page A to B
// (under any hreflang) is reciprocal when B lists A's URL among its own
// hreflang alternates, under any hreflang; the codes are not compared.
// A page need not list every page of its cluster: Google "will still
// process the ones that point to each other". URLs are compared after the
// encoder's normalisation (scheme and host case, default port, dot
// segments, percent-encoding), so generate and validate agree.
//
// Method. Each page yields fixed-size records: the page itself (keyed by
// the 128-bit fingerprint of its loc), and for each link A→B other than a
// self link an edge (A, B) and a need (B, A) that B's edge (B, A) must meet.
// The records are sorted externally (runs of Options.RunRecords records
// spilled to one unlinked temporary file, then a heap merge) so that each
// URL's records meet: a need with no page record is TargetMissing, one
// with no matching edge NotReciprocal. A self link is checked in the page
// itself. Problems carry the page's sequence number and the link's index;
// they are sorted the same way, and the text of the pages with alternates,
// written once to a sequential text log as they are added, is read back in
// step to report URLs without ever holding them in memory.
//
// Costs, for P pages, Q of them with alternates, L links (self links
// included) and S self links: memory is 2 × RunRecords × 32 bytes (32 MiB
// by default) plus 16 KiB per spilled run at the end (one run per
// RunRecords records); disk is 18 bytes per page, 58 bytes per link that
// is not a self link, and the text of the Q pages (their locs, hreflangs
// and hrefs, about their share of the sitemap's bytes). A fingerprint
// collision (probability about n²/2¹²⁹ for n URLs) could only hide a
// problem, never invent one.
//
// Measured (TestScale, SITEMAPGEN_HREFLANG_PAGES=10000000: 10M pages × 5
// alternates in clusters of five, on 2 shared cores, median of 3): peak
// RSS 90 MB (81 MB at 1M pages), 48 s of CPU (user+sys) in all, about
// 1 µs per link, 60 s wall, 5.6 GB of temporary disk, freed at the end.
package hreflang
