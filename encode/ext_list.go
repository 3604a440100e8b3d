package encode

// List extension columns: a columnar reader packs a row's list of images,
// alternates or videos into one value (see AppendPacked). An entry of an
// alternates or videos list is a record: a sequence of fields, each a tag
// byte and a packed value (AppendField, or OpenField and ClosePacked while
// the value is appended in place). A null or empty list is an empty value;
// a null entry, or one whose fields are all null or empty, adds nothing.

// Field tags of an entry of an alternates list (ExtAlternateList). A videos
// list (ExtVideoList) tags its fields with their ExtKind
// (ExtVideoThumbnail..ExtVideoLive), ExtVideoTag once per tag.
const (
	AltHreflang byte = 1 + iota // the hreflang attribute
	AltHref                     // the href
	AltMedia                    // the media attribute
)

// packedHole is the room OpenPacked leaves for a length: a uvarint padded
// to 5 bytes, enough for lengths below 2^35 (NextPacked reads it as any).
const packedHole = 5

// OpenPacked appends room for the length of a packed value and returns
// where it is; the caller appends the value, then calls ClosePacked. Until
// then, dst[:at] drops the value.
func OpenPacked(dst []byte) ([]byte, int) {
	return append(dst, 0x80, 0x80, 0x80, 0x80, 0), len(dst)
}

// ClosePacked writes the length of the value appended since OpenPacked
// returned at.
func ClosePacked(dst []byte, at int) []byte {
	n := uint64(len(dst) - at - packedHole)
	for i := range packedHole - 1 {
		dst[at+i] = byte(n>>(7*i)) | 0x80
	}
	dst[at+packedHole-1] = byte(n >> (7 * (packedHole - 1)) & 0x7f)
	return dst
}

// OpenField appends the tag of a record field and room for its length, as
// OpenPacked; dst[:at-1] drops the field.
func OpenField(dst []byte, tag byte) ([]byte, int) {
	return OpenPacked(append(dst, tag))
}

// AppendField appends a record field: tag, then v packed.
func AppendField(dst []byte, tag byte, v []byte) []byte {
	return AppendPacked(append(dst, tag), v)
}

// NextField splits the first field off a record; ok is false when the
// record is malformed.
func NextField(rec []byte) (tag byte, v, rest []byte, ok bool) {
	if len(rec) == 0 {
		return 0, nil, nil, false
	}
	v, rest, ok = NextPacked(rec[1:])
	return rec[0], v, rest, ok
}

// validRecord reports whether rec is a well-formed record and whether one
// of its fields is not empty or white space.
func validRecord(rec []byte) (ok, some bool) {
	for len(rec) > 0 {
		var v []byte
		if _, v, rec, ok = NextField(rec); !ok {
			return false, false
		}
		some = some || len(trimWhite(v)) > 0
	}
	return true, some
}

// recordFirst returns the first non-empty value of tag in a well-formed
// record, trimmed.
func recordFirst(rec []byte, tag byte) []byte {
	for len(rec) > 0 {
		t, v, rest, ok := NextField(rec)
		if !ok {
			return nil
		}
		rec = rest
		if t == tag {
			if v = trimWhite(v); len(v) > 0 {
				return v
			}
		}
	}
	return nil
}

// equalFoldASCII reports whether a and b are equal, ignoring ASCII case.
func equalFoldASCII[A, B string | []byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(b) {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// dupHreflang reports whether the hreflang key is already taken in the row
// before column j (a non-empty alternate:<key> cell, or an alternates
// entry with a non-empty href), or, when j is an alternates list, before
// byte upto of its value.
func dupHreflang[T string | []byte](f *Fields, key T, j, upto int) bool {
	for i := range j + 1 {
		if i >= len(f.ExtVals) {
			break
		}
		c := f.Ext[i]
		switch {
		case c.Kind == ExtAlternate && i < j:
			if len(trimWhite(f.ExtVals[i])) > 0 && equalFoldASCII(c.Key, key) {
				return true
			}
		case c.Kind == ExtAlternateList:
			list := f.ExtVals[i]
			if i == j {
				if upto < 0 || upto > len(list) {
					break
				}
				list = list[:upto]
			}
			for len(list) > 0 {
				rec, rest, ok := NextPacked(list)
				if !ok {
					break
				}
				list = rest
				if equalFoldASCII(recordFirst(rec, AltHreflang), key) && len(recordFirst(rec, AltHref)) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// appendAltList appends the links of the alternates list in column j:
// an entry with a hreflang is an hreflang alternate (checked like an
// alternate:<hreflang> column, counted in links, self when its href is the
// loc), one with only a media attribute a media alternate; both may be set.
func (e *Encoder) appendAltList(dst []byte, f *Fields, j, locAt, locEnd, links int, self bool, w Warning) ([]byte, int, bool, Warning) {
	if j >= len(f.ExtVals) {
		return dst, links, self, w
	}
	list := f.ExtVals[j]
	for rest := list; len(rest) > 0; {
		at := len(list) - len(rest)
		rec, r, ok := NextPacked(rest)
		if !ok {
			return dst, links, self, w | AlternateInvalid
		}
		rest = r
		ok, some := validRecord(rec)
		if !ok {
			w |= AlternateInvalid
			continue
		}
		if !some {
			continue
		}
		lang, href, media := recordFirst(rec, AltHreflang), recordFirst(rec, AltHref), recordFirst(rec, AltMedia)
		bad := AlternateInvalid
		if len(lang) == 0 {
			bad = MediaAlternateInvalid
		}
		switch {
		case len(lang) == 0 && len(media) == 0:
			w |= HreflangInvalid
			continue
		case len(lang) > 0 && (len(lang) > 16 || !validHreflang(string(lang))):
			w |= HreflangInvalid
			continue
		case len(href) == 0:
			w |= bad
			continue
		case len(media) > 0 && !validText(media, 1, -1):
			w |= MediaAlternateInvalid
			continue
		case len(lang) > 0 && dupHreflang(f, lang, j, at):
			w |= AlternateDuplicate
			continue
		}
		mark := len(dst)
		dst = append(dst, `<xhtml:link rel="alternate"`...)
		if len(lang) > 0 {
			dst = append(dst, ` hreflang="`...)
			dst = append(dst, lang...)
			dst = append(dst, '"')
		}
		if len(media) > 0 {
			dst = append(dst, ` media="`...)
			dst = appendEscaped(dst, media)
			dst = append(dst, '"')
		}
		dst = append(dst, ` href="`...)
		hrefAt := len(dst)
		var rs Reason
		if dst, rs = e.appendHref(dst, href); rs != OK {
			dst = dst[:mark]
			w |= bad
			continue
		}
		if len(lang) > 0 {
			if string(dst[hrefAt:]) == string(dst[locAt:locEnd]) {
				self = true
			}
			links++
		}
		dst = append(dst, `"/>`...)
	}
	return dst, links, self, w
}

// videoSrc is where appendVideo finds a video's parts: the row's flat
// video:* columns, or one record of a videos list.
type videoSrc struct {
	f   *Fields
	rec []byte
}

// first returns the first non-empty value of kind k, trimmed.
func (s videoSrc) first(k ExtKind) []byte {
	if s.f != nil {
		return first(s.f, k)
	}
	return recordFirst(s.rec, byte(k))
}

// nextTag returns the video's next tag from position pos (0 to start) and
// the position after it; ok is false when there are no more.
func (s videoSrc) nextTag(pos int) (v []byte, next int, ok bool) {
	if s.f != nil {
		for j := pos; j < len(s.f.Ext) && j < len(s.f.ExtVals); j++ {
			if s.f.Ext[j].Kind == ExtVideoTag {
				return s.f.ExtVals[j], j + 1, true
			}
		}
		return nil, 0, false
	}
	for pos < len(s.rec) {
		tag, v, rest, ok := NextField(s.rec[pos:])
		if !ok {
			return nil, 0, false
		}
		pos = len(s.rec) - len(rest)
		if ExtKind(tag) == ExtVideoTag {
			return v, pos, true
		}
	}
	return nil, 0, false
}

// appendVideoList appends a <video:video> for each entry of a videos list,
// each checked like the flat video:* columns of a row.
func (e *Encoder) appendVideoList(dst, list []byte, w Warning) ([]byte, Warning) {
	for len(list) > 0 {
		rec, rest, ok := NextPacked(list)
		if !ok {
			return dst, w | VideoInvalid
		}
		list = rest
		ok, some := validRecord(rec)
		if !ok {
			w |= VideoInvalid
			continue
		}
		if some {
			dst, w = e.appendVideo(dst, videoSrc{rec: rec}, w)
		}
	}
	return dst, w
}
