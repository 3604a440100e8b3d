package pipeline

import (
	"fmt"
	"strings"

	"github.com/sitemapgen/sitemapgen/encode"
)

// List extension columns of the columnar inputs: images (a list of
// strings), alternates and videos (lists of structs). A reader packs a
// row's list into one value in Batch.Buf (see encode.AppendPacked and
// encode.OpenField); the encoder unpacks it.

var (
	errAlternateList = fmt.Errorf("%w: an %q column is a list, which CSV cannot hold: name the alternate columns alternate:<hreflang> (and media-alternate)", ErrColumnType, "alternates")
	errVideoList     = fmt.Errorf("%w: a %q column is a list, which CSV cannot hold: give one video per row in video:thumbnail_loc, video:title, … columns", ErrColumnType, "videos")
)

// isListKind reports whether k is read from a list column.
func isListKind(k encode.ExtKind) bool {
	return k == encode.ExtImageList || k == encode.ExtAlternateList || k == encode.ExtVideoList
}

// csvListError is the error for a list column in a CSV header, or nil.
func csvListError(k encode.ExtKind) error {
	switch k {
	case encode.ExtImageList:
		return errImageList
	case encode.ExtAlternateList:
		return errAlternateList
	case encode.ExtVideoList:
		return errVideoList
	}
	return nil
}

// listShape describes the list a kind wants, for errors.
func listShape(k encode.ExtKind) string {
	switch k {
	case encode.ExtImageList:
		return "a list of strings (Parquet LIST<STRING>, Arrow list<string>)"
	case encode.ExtAlternateList:
		return "a list of structs with string fields hreflang, href, media"
	}
	return "a list of structs with fields named like the video:* columns (thumbnail_loc, title, description, content_loc, player_loc, duration, …, tag as a list of strings)"
}

// structFieldTag returns the record tag of a struct field of a list of
// kind k (alternates: hreflang, href, media; videos: a video element name
// without the video: prefix), and the extension kind whose column types it
// accepts; ok is false for a field sitemapgen does not know (ignored).
func structFieldTag(k encode.ExtKind, name string) (tag byte, like encode.ExtKind, ok bool) {
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
