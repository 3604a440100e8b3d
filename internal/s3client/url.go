package s3client

import (
	"fmt"
	"strings"
)

// SplitURL splits s3://bucket/rest into the bucket and what follows its
// '/'; it refuses another scheme and an empty bucket name. The callers
// read rest their own way: a key or pattern, or a key prefix.
func SplitURL(arg string) (bucket, rest string, err error) {
	s, ok := strings.CutPrefix(arg, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q: not an s3:// URL", arg)
	}
	bucket, rest, _ = strings.Cut(s, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q: no bucket name", arg)
	}
	return bucket, rest, nil
}
