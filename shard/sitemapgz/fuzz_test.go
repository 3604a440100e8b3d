package sitemapgz

import "testing"

// FuzzAppend round-trips random bytes, and sitemap-like lines built from
// them, through every variant: compress/gzip and klauspost must give back
// exactly the input, and the output must depend on the input alone.
func FuzzAppend(f *testing.F) {
	f.Add([]byte(""), uint8(0))
	f.Add([]byte("<url><loc>https://www.example.com/a</loc></url>\n"), uint8(3))
	f.Add([]byte("<url><loc>https://www.example.com/a</loc><lastmod>2024-01-02</lastmod></url>\n<url><loc>https://www.example.com/ab</loc><lastmod>2024-01-02</lastmod></url>\n"), uint8(1))
	f.Add([]byte("\n\n<url><loc>\n<url><loc><"), uint8(7))
	f.Add(sitemap(3, 20), uint8(2))
	encs := make([]*Encoder, len(variants))
	for i, v := range variants {
		encs[i] = v.new()
	}
	f.Fuzz(func(t *testing.T, src []byte, repeat uint8) {
		// Repeating the input gives the match finder something to find,
		// also across blocks and beyond the window.
		in := src
		for range int(repeat % 8) {
			in = append(in, src...)
		}
		for i, e := range encs {
			z := e.Append(nil, in)
			roundTrip(t, in, z)
			if z2 := variants[i].new().Append(nil, in); string(z) != string(z2) {
				t.Fatalf("%s: a new Encoder wrote different bytes", variants[i].name)
			}
		}
	})
}
