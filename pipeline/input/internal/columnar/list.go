package columnar

import (
	"fmt"
	"strings"

	"github.com/sitemapgen/sitemapgen/encode"
)

// The list extension columns of the columnar inputs: images (a list of
// strings), alternates and videos (lists of structs). A reader packs a
// row's list into one value in Batch.Buf (see encode.AppendPacked and
// encode.OpenField); the encoder unpacks it.

// MaxListBytes bounds one row's packed list: a corrupt file can repeat a
// dictionary value (or, in Arrow, a range of list values) millions of
// times in a few bytes. A sitemap file holds at most 50 MB; no URL's
// images, alternates or videos come near. A longer list is an error, found
// before an element that would pass the bound alone is copied.
const MaxListBytes = 4 << 20

// ErrListTooLong is the error of a row's list over MaxListBytes.
var ErrListTooLong = fmt.Errorf("a row's list is longer than %d bytes", MaxListBytes)

// IsListKind reports whether k is read from a list column.
func IsListKind(k encode.ExtKind) bool {
	return k == encode.ExtImageList || k == encode.ExtAlternateList || k == encode.ExtVideoList
}

// ListShape describes the list a kind wants, for errors.
func ListShape(k encode.ExtKind) string {
	switch k {
	case encode.ExtImageList:
		return "a list of strings (Parquet LIST<STRING>, Arrow list<string>)"
	case encode.ExtAlternateList:
		return "a list of structs with string fields hreflang, href, media"
	}
	return "a list of structs with fields named like the video:* columns (thumbnail_loc, title, description, content_loc, player_loc, duration, …, tag as a list of strings)"
}

// StructFieldTag returns the record tag of a struct field of a list of
// kind k (alternates: hreflang, href, media; videos: a video element name
// without the video: prefix), and the extension kind whose column types it
// accepts; ok is false for a field sitemapgen does not know (ignored).
func StructFieldTag(k encode.ExtKind, name string) (tag byte, like encode.ExtKind, ok bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch k {
	case encode.ExtAlternateList:
		switch n {
		case "hreflang":
			return encode.AltHreflang, encode.ExtAlternate, true
		case "href":
			return encode.AltHref, encode.ExtAlternate, true
		case "media":
			return encode.AltMedia, encode.ExtAlternate, true
		}
	case encode.ExtVideoList:
		if x, ok := encode.ParseExtColumn("video:" + n); ok && x.Kind >= encode.ExtVideoThumbnail && !strings.HasPrefix(n, "tag:") {
			return byte(x.Kind), x.Kind, true
		}
	}
	return 0, 0, false
}
