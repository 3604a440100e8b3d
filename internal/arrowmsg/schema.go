package arrowmsg

import (
	"fmt"
)

// checkSchema checks a Schema table: what arrow-go sizes from it (the
// fields and their children, key-value metadata, union type ids, strings)
// is in the flatbuffer, and fields nest at most maxDepth deep.
// It counts in views the variadic buffer counts batches must list.
func checkSchema(t fbTable, views *viewCounts) error {
	views.dict = map[int64]int{}
	if err := checkFields(t, 1, 0, &views.batch, views.dict); err != nil {
		return err
	}
	if err := checkKeyValues(t, 2); err != nil {
		return err
	}
	_, _, err := t.vector(3, 8) // features
	return err
}

// Type union members whose tables hold a vector (Schema.fbs), and the view
// types, whose batches list a count of variadic buffers.
const (
	arrowTypeTimestamp  = 10 // timezone: string
	arrowTypeUnion      = 14 // typeIds: [int]
	arrowTypeBinaryView = 23
	arrowTypeUtf8View   = 24
)

// viewCounts counts the BinaryView and Utf8View fields whose batches list a
// variadic buffer count each: those of a record batch, and those of each
// dictionary's batches. arrow-go reads one count per such field without
// checking the list is that long: beyond it, it reads whatever bytes follow.
type viewCounts struct {
	batch int
	dict  map[int64]int // by dictionary id
}

// checkFields checks the fields of t's vector slot, counting their
// view fields in views; a dictionary-encoded field holds only indices, and
// its values count in dicts under its dictionary id.
func checkFields(t fbTable, slot, depth int, views *int, dicts map[int64]int) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	if n > 0 && depth >= maxDepth {
		return fmt.Errorf("schema fields nested more than %d deep", maxDepth)
	}
	for i := range n {
		f, err := t.f.elem(start, i)
		if err != nil {
			return err
		}
		if _, _, err := f.vector(0, 1); err != nil { // name
			return err
		}
		typ, err := f.int(2, 1)
		if err != nil {
			return err
		}
		tt, ok, err := f.sub(3)
		if err != nil {
			return err
		}
		if ok && typ == arrowTypeTimestamp {
			_, _, err = tt.vector(1, 1) // its time zone
		} else if ok && typ == arrowTypeUnion {
			_, _, err = tt.vector(1, 4) // its type ids
		}
		if err != nil {
			return err
		}
		count, dict, id := views, 0, int64(-1)
		if d, ok, err := f.sub(4); err != nil { // dictionary encoding
			return err
		} else if ok {
			if _, _, err := d.sub(1); err != nil { // its index type
				return err
			}
			if id, err = d.int(0, 8); err != nil {
				return err
			}
			count = &dict
		}
		if typ == arrowTypeBinaryView || typ == arrowTypeUtf8View {
			*count++
		}
		if err := checkFields(f, 5, depth+1, count, dicts); err != nil {
			return err
		}
		if count == &dict {
			dicts[id] = max(dicts[id], dict)
		}
		if err := checkKeyValues(f, 6); err != nil {
			return err
		}
	}
	return nil
}

func checkKeyValues(t fbTable, slot int) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		kv, err := t.f.elem(start, i)
		if err != nil {
			return err
		}
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		if _, _, err := kv.vector(1, 1); err != nil {
			return err
		}
	}
	return nil
}
