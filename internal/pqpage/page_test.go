package pqpage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sitemapgen/sitemapgen/internal/saferio"
)

type locRow struct {
	Loc string `parquet:"loc,plain,snappy"`
}

// chunk writes rows as a one-column Parquet file of pages of about
// pageSize bytes and returns a Reader set to read its first column chunk.
func chunk(t *testing.T, rows []string, pageSize int) (*Reader, func()) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[locRow](&buf, parquet.PageBufferSize(pageSize))
	for _, r := range rows {
		if _, err := w.Write([]locRow{{r}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.Metadata().RowGroups); n != 1 {
		t.Fatalf("%d row groups, want 1", n)
	}
	md := &pf.Metadata().RowGroups[0].Columns[0].MetaData
	r := &Reader{Type: format.ByteArray}
	return r, func() {
		r.Reset(bytes.NewReader(data), md.DataPageOffset, md.TotalCompressedSize, int64(len(rows)), md.Codec)
	}
}

// readAll reads every value of the chunk r was reset on, and the pages.
func readAll(t *testing.T, r *Reader) (vals []string, pages int) {
	t.Helper()
	var pg Page
	for {
		err := r.Next(&pg, 0, 0)
		if errors.Is(err, io.EOF) {
			return vals, pages
		}
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for range pg.Left() {
			v, err := r.Value(&pg)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, string(v))
		}
	}
}

func rows(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		s := fmt.Sprintf("https://www.example.com/%d/", i)
		out[i] = s + strings.Repeat("x", max(0, size-len(s)))
	}
	return out
}

// TestReadAhead: pages read ahead on another goroutine give the values
// read on one, page after page.
func TestReadAhead(t *testing.T) {
	want := rows(20000, 60)
	for _, sync := range []bool{false, true} {
		r, reset := chunk(t, want, 8<<10)
		r.Sync = sync
		reset()
		got, pages := readAll(t, r)
		r.Close()
		if pages < 50 {
			t.Fatalf("%d pages; the test wants many", pages)
		}
		if len(got) != len(want) {
			t.Fatalf("sync=%v: %d values, want %d", sync, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("sync=%v: value %d is %q, want %q", sync, i, got[i], want[i])
			}
		}
	}
}

// TestBigPagesOneAtATime: a page over bigPage is not read while the pages
// before it are held, so a run of big pages costs one of them, not
// ahead+1.
func TestBigPagesOneAtATime(t *testing.T) {
	defer func(b, k int) { bigPage, keepPage = b, k }(bigPage, keepPage)
	bigPage, keepPage = 32<<10, 32<<10
	want := rows(600, 1000) // pages of ~64 KiB: 9 of them
	r, reset := chunk(t, want, 64<<10)
	reset()
	got, pages := readAll(t, r)
	if pages < ahead+2 || len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Fatalf("%d pages, %d values; want %d values over more than %d pages", pages, len(got), len(want), ahead+1)
	}
	// The reading goroutine has ended (it sent io.EOF last): its pages
	// can be looked at.
	big := 0
	for i := range r.pages {
		if cap(r.pages[i].body) > bigPage {
			big++
		}
	}
	if big > 1 {
		t.Errorf("%d page buffers over bigPage held at once, want 1", big)
	}
	r.Close()
	// What Close gave the pool keeps no big page's memory for the next file
	// (sync.Pool may drop it, the race detector at random: then there is
	// nothing to look at).
	if b, ok := bufferPool.Get().(*buffers); ok {
		for i, pg := range b.pages {
			if cap(pg.body) > bigPage {
				t.Errorf("page %d of the pool holds %d bytes", i, cap(pg.body))
			}
		}
		if cap(b.raw) > bigPage {
			t.Errorf("the pool holds a compressed page of %d bytes", cap(b.raw))
		}
	}
}

// panicky is a ReaderAt that panics, as a decompressor may on a corrupt
// page.
type panicky struct{}

func (panicky) ReadAt([]byte, int64) (int, error) { panic("boom") }

// TestPanicReachesTheCaller: a panic while a page is read ahead is raised
// by Next on the caller's goroutine, where the reader's recover turns it
// into an error, as in Sync mode; it does not take the process down.
func TestPanicReachesTheCaller(t *testing.T) {
	for _, sync := range []bool{false, true} {
		func() {
			r := &Reader{Type: format.ByteArray, Sync: sync}
			r.Reset(panicky{}, 4, 1000, 10, format.Snappy)
			defer r.Close()
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("sync=%v: recovered %v, want the panic's value", sync, v)
				}
			}()
			var pg Page
			r.Next(&pg, 0, 0)
			t.Errorf("sync=%v: Next returned", sync)
		}()
	}
}

// TestCloseStopsReading: Close in the middle of a chunk stops the reading
// goroutine, however far ahead it is, and Next then reports io.EOF.
func TestCloseStopsReading(t *testing.T) {
	r, reset := chunk(t, rows(20000, 60), 8<<10)
	reset()
	var pg Page
	if err := r.Next(&pg, 0, 0); err != nil {
		t.Fatal(err)
	}
	done := r.done
	time.Sleep(10 * time.Millisecond) // let it fill what it may
	r.Close()
	select {
	case <-done:
	default:
		t.Fatal("the reading goroutine still runs after Close")
	}
	if err := r.Next(&pg, 0, 0); err != io.EOF {
		t.Fatalf("Next after Close: %v, want io.EOF", err)
	}
	r.Close() // twice: no buffer given back twice
	if r.pooled || r.raw != nil {
		t.Fatal("a second Close gave the buffers back again")
	}
}

// TestPageBounds: the page's own methods check what they read against it:
// a block beyond the page, a value longer than the page, fewer values than
// rows are errors, and what was taken before stays taken.
func TestPageBounds(t *testing.T) {
	plain := func(vals ...string) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		}
		return b
	}
	for _, tt := range []struct {
		name string
		vals []byte
		n, k int
		want []string
		err  string
	}{
		{"whole", plain("ab", "", "cde"), 3, 5, []string{"ab", "", "cde"}, ""},
		{"k rows", plain("ab", "", "cde"), 3, 2, []string{"ab", ""}, ""},
		{"longer than the page", append(plain("ab"), 9, 0, 0, 0, 'x'), 2, 2, []string{"ab"}, "value longer than its page"},
		{"fewer values than rows", plain("ab"), 2, 2, []string{"ab"}, "fewer values than rows"},
	} {
		pg := Page{n: tt.n, vals: tt.vals, enc: encPlain, str: true}
		buf, ends, _, err := pg.AppendStrings([]byte("head"), nil, tt.k, -1, 1<<10)
		var got []string
		start := uint32(len("head"))
		for _, e := range ends {
			got = append(got, string(buf[start:e]))
			start = e
		}
		if !slices.Equal(got, tt.want) || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %q, %v; want %q, %q", tt.name, got, err, tt.want, tt.err)
		}
		if pg.Left() != tt.n-len(tt.want) {
			t.Errorf("%s: %d left, want %d", tt.name, pg.Left(), tt.n-len(tt.want))
		}
	}
	pg := Page{n: 3, vals: plain("a", "b", "c"), enc: encPlain, str: true}
	if buf, ends, _, _ := pg.AppendStrings(nil, nil, 3, 1, 1<<10); len(ends) != 1 || string(buf) != "a" {
		t.Errorf("budget 1: %q, %d values; want one", buf, len(ends))
	}
	if _, err := pg.Block(nil, make([]uint32, 3), nil, 0); err == nil || pg.Left() != 2 {
		t.Errorf("a block of 3 with 2 left: %v, %d left", err, pg.Left())
	}
	if k, err := pg.Block(nil, make([]uint32, 2), nil, 0); err != nil || k != 2 || pg.Left() != 0 {
		t.Errorf("a block of 2 with 2 left: %d, %v, %d left", k, err, pg.Left())
	}
}

// readColumns reads the chunks of rs in step, a value of each in turn, as
// pqread reads a file's columns, and returns the first column's values
// and the error that ended the read.
func readColumns(rs []*Reader) (vals []string, err error) {
	pgs := make([]Page, len(rs))
	for {
		for i, r := range rs {
			if pgs[i].Left() == 0 {
				if err := r.Next(&pgs[i], 0, 0); err != nil {
					if err == io.EOF {
						return vals, nil
					}
					return vals, err
				}
			}
			var def [1]uint32
			if _, err := pgs[i].Block(nil, def[:], nil, 0); err != nil {
				return vals, err
			}
			v, err := r.Value(&pgs[i])
			if err != nil {
				return vals, err
			}
			if i == 0 {
				vals = append(vals, string(v))
			}
		}
	}
}

// TestPagesBudget: the pages a file's columns decode at once, read ahead
// or not, are bounded together by its part of a Budget: a file whose
// columns need more fail at the same page with the same error, whether
// pages are read ahead or not; one that needs less reads every value,
// and gives back all it held when closed.
func TestPagesBudget(t *testing.T) {
	want := rows(3000, 100) // pages of ~64 KiB
	for _, tc := range []struct {
		turn, ahead int64
		fails       bool
	}{
		{turn: 1 << 20, ahead: 1 << 20},
		{turn: 1 << 20, ahead: 0},
		{turn: 200 << 10, ahead: 64 << 10},
		{turn: 100 << 10, ahead: 1 << 20, fails: true},
		{turn: 100 << 10, ahead: 0, fails: true},
	} {
		var errs []string
		for _, sync := range []bool{false, true} {
			part := saferio.NewBudget(tc.turn, 0, tc.ahead).Part()
			var rs []*Reader
			for range 3 {
				r, reset := chunk(t, want, 64<<10)
				r.Sync, r.Budget = sync, part
				reset()
				rs = append(rs, r)
			}
			got, err := readColumns(rs)
			for _, r := range rs {
				r.Close()
			}
			if held, ahead := part.Holds(); held != 0 || ahead != 0 {
				t.Errorf("%+v sync=%v: %d bytes held and %d read ahead after Close", tc, sync, held, ahead)
			}
			if !tc.fails {
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("%+v sync=%v: %d values, %v", tc, sync, len(got), err)
				}
				continue
			}
			var over *saferio.OverBudget
			if !errors.As(err, &over) || over.Limit != tc.turn {
				t.Fatalf("%+v sync=%v: %v, want over the budget", tc, sync, err)
			}
			errs = append(errs, fmt.Sprint(len(got), err))
			t.Logf("%+v sync=%v: after %d values: %v", tc, sync, len(got), err)
		}
		if len(errs) == 2 && errs[0] != errs[1] {
			t.Errorf("%+v: pages read ahead: %s; on one goroutine: %s", tc, errs[0], errs[1])
		}
	}
}
