// Package indexnow tells search engines which URLs changed, by the IndexNow
// protocol (https://www.indexnow.org/documentation): the URLs whose sitemap
// entry was added, changed or removed between two published generations,
// found by reading back only the sitemaps that changed, posted as JSON at
// most 10,000 URLs and one host per request.
package indexnow

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DefaultEndpoint is the shared endpoint, which passes each submission on
// to every participating search engine.
const DefaultEndpoint = "https://api.indexnow.org/indexnow"

// MaxURLsPerRequest is the protocol's limit of URLs in one request.
const MaxURLsPerRequest = 10000

// CheckKey reports whether key is a valid IndexNow key: 8 to 128 of
// a-z, A-Z, 0-9 and '-'.
func CheckKey(key string) error {
	if len(key) < 8 || len(key) > 128 {
		return fmt.Errorf("key of %d characters: want 8 to 128", len(key))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("key holds %q at %d: want only a-z, A-Z, 0-9 and '-'", c, i)
		}
	}
	return nil
}

// KeyFolder returns the folder a key file at location vouches for: the
// protocol accepts only URLs under it. location must be an absolute http(s)
// URL of a file.
func KeyFolder(location string) (string, error) {
	u, err := url.Parse(location)
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("want an http(s) URL of the key file, without query or fragment")
	}
	if u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return "", errors.New("want the URL of the key file, not of a folder")
	}
	dir := u.EscapedPath()[:strings.LastIndexByte(u.EscapedPath(), '/')+1]
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + dir, nil
}

// Under reports whether rawURL lies under folder (as KeyFolder returns it):
// same scheme and host, ignoring case, and a path starting with folder's.
func Under(rawURL, folder string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.HasPrefix(strings.ToLower(u.Scheme)+"://"+strings.ToLower(u.Host)+u.EscapedPath(), folder)
}
