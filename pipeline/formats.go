package pipeline

// The input formats a run reads: each registers with package input.
import (
	_ "github.com/sitemapgen/sitemapgen/pipeline/input/arrowread"
	_ "github.com/sitemapgen/sitemapgen/pipeline/input/csvscan"
	_ "github.com/sitemapgen/sitemapgen/pipeline/input/pqread"
)
