package pqpage

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"
)

// deltaBytes encodes vals as DELTA_BINARY_PACKED: blocks of 128 values in
// 4 miniblocks, each packed 32 bits wide.
func deltaBytes(vals ...int64) []byte {
	b := binary.AppendUvarint(nil, 128)
	b = binary.AppendUvarint(b, 4)
	b = binary.AppendUvarint(b, uint64(len(vals)))
	b = binary.AppendVarint(b, vals[0])
	rest := vals[1:]
	for len(rest) > 0 {
		block := rest[:min(128, len(rest))]
		rest = rest[len(block):]
		minDelta := int64(1 << 62)
		prev := vals[len(vals)-len(rest)-len(block)-1]
		for i, v := range block {
			if i > 0 {
				prev = block[i-1]
			}
			minDelta = min(minDelta, v-prev)
		}
		b = binary.AppendVarint(b, minDelta)
		minis := (len(block) + 31) / 32
		for m := range 4 {
			w := byte(0)
			if m < minis {
				w = 32
			}
			b = append(b, w)
		}
		prev = vals[len(vals)-len(rest)-len(block)-1]
		for i := range minis * 32 {
			var d uint32
			if i < len(block) {
				d = uint32(block[i] - prev - minDelta)
				prev = block[i]
			}
			b = binary.LittleEndian.AppendUint32(b, d)
		}
	}
	return b
}

// deltaLengthPage is a required DELTA_LENGTH_BYTE_ARRAY page of vals.
func deltaLengthPage(t *testing.T, vals ...string) *Page {
	t.Helper()
	var lens []int64
	for _, v := range vals {
		lens = append(lens, int64(len(v)))
	}
	pg := &Page{n: len(vals), enc: encDeltaLBA, str: true, vals: []byte(strings.Join(vals, ""))}
	if _, err := pg.lens.reset(deltaBytes(lens...)); err != nil {
		t.Fatal(err)
	}
	return pg
}

func plainPage(vals ...string) *Page {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return &Page{n: len(vals), vals: b, enc: encPlain, str: true}
}

// TestAppendStringsStops: AppendStrings stops before a value that would
// take the buffer past its budget, leaving it to the next call (or to
// Value: a DELTA_LENGTH_BYTE_ARRAY length already read is not read
// twice), and after a value over max, which it returns uncopied.
func TestAppendStringsStops(t *testing.T) {
	long := strings.Repeat("x", 100)
	for name, page := range map[string]func(...string) *Page{
		"plain": plainPage,
		"delta": func(v ...string) *Page { return deltaLengthPage(t, v...) },
	} {
		take := func(pg *Page, k, budget int) (got []string, gotLong string, err error) {
			buf, ends, l, err := pg.AppendStrings([]byte("head"), nil, k, budget, 50)
			start := uint32(len("head"))
			for _, e := range ends {
				got = append(got, string(buf[start:e]))
				start = e
			}
			if len(buf) > len("head")+budget && budget >= 0 {
				t.Errorf("%s: %d bytes past a budget of %d", name, len(buf), budget)
			}
			return got, string(l), err
		}
		pg := page("ab", "cde", long, "f")
		if got, l, err := take(pg, 4, len("head")+4); !slices.Equal(got, []string{"ab"}) || l != "" || err != nil || pg.Left() != 3 {
			t.Errorf("%s, budget: %q, long %q, %v, %d left; want ab, 3 left", name, got, l, err, pg.Left())
		}
		if got, l, err := take(pg, 4, -1); !slices.Equal(got, []string{"cde"}) || l != long || err != nil || pg.Left() != 1 {
			t.Errorf("%s, long: %q, long %q, %v, %d left; want cde, then the long value, 1 left", name, got, l, err, pg.Left())
		}
		// A long value needs room for max bytes.
		pg = page(long, "f")
		if got, l, err := take(pg, 2, len("head")+49); len(got) != 0 || l != "" || err != nil || pg.Left() != 2 {
			t.Errorf("%s, long value, no room: %q, long %q, %v, %d left", name, got, l, err, pg.Left())
		}
		if got, l, err := take(pg, 2, len("head")+50); len(got) != 0 || l != long || err != nil || pg.Left() != 1 {
			t.Errorf("%s, long value, room: %q, long %q, %v, %d left", name, got, l, err, pg.Left())
		}
	}
	// The length read and held is the next Value's.
	pg := deltaLengthPage(t, "ab", "cde", "f")
	if _, ends, _, _ := pg.AppendStrings(nil, nil, 3, 2, 50); len(ends) != 1 {
		t.Fatalf("%d values; want 1", len(ends))
	}
	p := &Reader{Type: format.ByteArray}
	for _, want := range []string{"cde", "f"} {
		if v, err := p.Value(pg); string(v) != want || err != nil {
			t.Errorf("Value: %q, %v; want %q", v, err, want)
		}
	}
}

// TestMaxLen: the longest value left on a page, of each BYTE_ARRAY
// encoding, and of a dictionary; taking values does not change what is
// left to read.
func TestMaxLen(t *testing.T) {
	p := &Reader{Type: format.ByteArray}
	for name, pg := range map[string]*Page{
		"plain": plainPage("ab", "cdefg", "", "hij"),
		"delta": deltaLengthPage(t, "ab", "cdefg", "", "hij"),
	} {
		if got := p.MaxLen(pg); got != 5 {
			t.Errorf("%s: %d, want 5", name, got)
		}
		if _, ends, _, _ := pg.AppendStrings(nil, nil, 2, -1, 50); len(ends) != 2 {
			t.Fatalf("%s: %d values", name, len(ends))
		}
		if got := p.MaxLen(pg); got != 3 {
			t.Errorf("%s, after 2: %d, want 3", name, got)
		}
		if got := p.MaxLen(pg); got != 3 {
			t.Errorf("%s, again: %d, want 3", name, got)
		}
	}
	// A length read and held counts.
	pg := deltaLengthPage(t, "ab", "cdefg", "hi")
	if _, ends, _, _ := pg.AppendStrings(nil, nil, 3, 2, 50); len(ends) != 1 {
		t.Fatalf("%d values", len(ends))
	}
	if got := p.MaxLen(pg); got != 5 {
		t.Errorf("held: %d, want 5", got)
	}
	// DELTA_BYTE_ARRAY: each value a prefix of the one before and a suffix.
	dba := &Page{n: 3, enc: encDeltaBA, vals: []byte("abcdeXYZ")}
	if _, err := dba.prefix.reset(deltaBytes(0, 2, 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := dba.lens.reset(deltaBytes(3, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if got := p.MaxLen(dba); got != 7 { // abc, abde, abdeXYZ
		t.Errorf("DELTA_BYTE_ARRAY: %d, want 7", got)
	}
	var got []string
	for range 3 {
		v, err := p.Value(dba)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(v))
	}
	if !slices.Equal(got, []string{"abc", "abde", "abdeXYZ"}) {
		t.Errorf("DELTA_BYTE_ARRAY values %q", got)
	}

	d := &Reader{Type: format.ByteArray}
	if d.DictMaxLen() != 0 {
		t.Errorf("no dictionary: %d", d.DictMaxLen())
	}
	dict := plainPage("ab", "cdefgh", "")
	if err := d.readDict(&page{h: pageHeader{numValues: 3}, body: dict.vals}); err != nil {
		t.Fatal(err)
	}
	if got := d.DictMaxLen(); got != 6 {
		t.Errorf("dictionary: %d, want 6", got)
	}
}
