package pqpage

// pageHeader is what is read of a Parquet PageHeader.
type pageHeader struct {
	typ              int32
	uncompressed     int32
	compressed       int32
	numValues        int32
	encoding         int32
	defEncoding      int32
	repEncoding      int32
	defLen, repLen   int32 // V2
	compressedV2     bool  // V2: is_compressed (default true)
	hasData, hasDict bool
}

func readPageHeader(b []byte) (h pageHeader, n int, err error) {
	r := thriftReader{b: b}
	h.compressedV2 = true
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil {
			return h, 0, err
		}
		if t == tStop {
			return h, r.p, nil
		}
		switch {
		case id == 1 && t == tI32:
			h.typ, err = r.i32()
		case id == 2 && t == tI32:
			h.uncompressed, err = r.i32()
		case id == 3 && t == tI32:
			h.compressed, err = r.i32()
		case (id == 5 || id == 7 || id == 8) && t == tStruct:
			err = h.readSub(&r, id)
		default:
			err = r.skip(t, 1)
		}
		if err != nil {
			return h, 0, err
		}
	}
}

// readSub reads a DataPageHeader (5), DictionaryPageHeader (7) or
// DataPageHeaderV2 (8).
func (h *pageHeader) readSub(r *thriftReader, which int16) error {
	if which == 7 {
		h.hasDict = true
	} else {
		h.hasData = true
	}
	var last int16
	for {
		id, t, err := r.field(&last)
		if err != nil {
			return err
		}
		if t == tStop {
			return nil
		}
		switch {
		case id == 1 && t == tI32:
			h.numValues, err = r.i32()
		case which == 5 && id == 2 && t == tI32, which == 7 && id == 2 && t == tI32, which == 8 && id == 4 && t == tI32:
			h.encoding, err = r.i32()
		case which == 5 && id == 3 && t == tI32:
			h.defEncoding, err = r.i32()
		case which == 5 && id == 4 && t == tI32:
			h.repEncoding, err = r.i32()
		case which == 8 && id == 5 && t == tI32:
			h.defLen, err = r.i32()
		case which == 8 && id == 6 && t == tI32:
			h.repLen, err = r.i32()
		case which == 8 && id == 7 && (t == tTrue || t == tFalse):
			h.compressedV2 = t == tTrue
		default:
			err = r.skip(t, 2)
		}
		if err != nil {
			return err
		}
	}
}

// decoded reports whether a page of this type is decoded: index pages and
// unknown page types are skipped.
func (h *pageHeader) decoded() bool {
	return h.typ == pageDict || h.typ == pageData || h.typ == pageDataV2
}
