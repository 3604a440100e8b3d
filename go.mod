module github.com/sitemapgen/sitemapgen

go 1.26.0

require (
	github.com/klauspost/compress v1.20.3
	github.com/klauspost/pgzip v1.3.0
	golang.org/x/net v0.62.0
	golang.org/x/sync v0.24.0
	golang.org/x/term v0.47.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
