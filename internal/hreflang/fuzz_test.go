package hreflang

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/sitemapgen/sitemapgen/internal/runs"
)

// runOf returns a sorter whose only run is data, as if spilled.
func runOf[T any](t testing.TB, data []byte, cmp func(a, b T) int, put func([]byte, T) []byte, get func(*bufio.Reader) (T, error)) *sorter[T] {
	f, err := runs.CreateTemp(t.TempDir(), "run")
	if err != nil {
		t.Fatal(err)
	}
	out := runs.NewAppender(f)
	if _, err := out.Write(data); err != nil {
		t.Fatal(err)
	}
	out.EndRun()
	s := newSorter(t.TempDir(), "fuzz", 16, cmp, put, get)
	s.f, s.out = f, out
	t.Cleanup(s.close)
	return s
}

// readRun merges a run of arbitrary bytes: it yields records in order or
// fails with an error, never panics; what it yields re-encodes to a prefix
// of the run.
func readRun[T any](t *testing.T, data []byte, cmp func(a, b T) int, put func([]byte, T) []byte, get func(*bufio.Reader) (T, error)) {
	s := runOf(t, data, cmp, put, get)
	var got []T
	err := s.merge(func(r T) error {
		got = append(got, r)
		return nil
	})
	if !slices.IsSortedFunc(got, cmp) {
		t.Fatalf("records out of order were yielded")
	}
	var re []byte
	for _, r := range got {
		re = put(re, r)
	}
	if !bytes.HasPrefix(data, re) {
		t.Fatalf("records yielded do not re-encode to the run")
	}
	if err == nil && len(re) != len(data) {
		t.Fatalf("%d bytes of the run were not read, and no error", len(data)-len(re))
	}
	if err != nil && !errors.Is(err, errCorrupt) && !errors.Is(err, errOrder) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("unexpected error kind: %v", err)
	}
}

// FuzzJoinRun: a spilled run of join records, corrupt or truncated, is
// an error, never a panic or a record out of order.
func FuzzJoinRun(f *testing.F) {
	var good []byte
	for _, r := range []joinRec{mkJoin(kindPage, 1, 0, pageHasLinks, 0), mkJoin(kindEdge, 1, 0, 5, 0), mkJoin(kindNeed, 1, 0, 5, 7<<linkBits), mkJoin(kindPage, 2, 9, 0, 0)} {
		good = putJoin(good, r)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append([]byte{numKinds}, good...))
	f.Add([]byte{kindPage, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		readRun(t, data, cmpJoin, putJoin, getJoin)
	})
}

// FuzzProblemRun: the same for a run of problem records.
func FuzzProblemRun(f *testing.F) {
	var good []byte
	for _, r := range []probRec{{pos: 1, kind: byte(NotReciprocal) | probUnlinked}, {pos: 1<<linkBits | selfLink, kind: byte(MissingSelf)}, {pos: 3 << linkBits, kind: byte(TargetMissing)}} {
		good = putProb(good, r)
	}
	f.Add(good)
	f.Add(good[:10])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, byte(MissingSelf) | probUnlinked})
	f.Fuzz(func(t *testing.T, data []byte) {
		readRun(t, data, cmpProb, putProb, getProb)
	})
}

// FuzzJoinRecord: every join record round-trips through its encoding.
func FuzzJoinRecord(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint64(3), uint64(4), byte(kindNeed))
	f.Fuzz(func(t *testing.T, x0, x1, y, pos uint64, kind byte) {
		k := kind % numKinds
		switch k {
		case kindPage:
			y, pos = y&pageHasLinks, 0
		case kindEdge:
			pos = 0
		}
		r := mkJoin(k, x0, x1, y, pos&maxPos)
		b := putJoin(nil, r)
		if len(b) != joinSize[k] {
			t.Fatalf("%d bytes for kind %d, want %d", len(b), k, joinSize[k])
		}
		got, err := getJoin(bufio.NewReader(bytes.NewReader(b)))
		if err != nil || got != r {
			t.Fatalf("round trip of %+v: %+v, %v", r, got, err)
		}
	})
}

// FuzzLogEntry: the text log's entries round-trip, and arbitrary bytes
// read as a log give entries or an error, never a panic; skipping an entry
// agrees with reading it.
func FuzzLogEntry(f *testing.F) {
	f.Add(uint64(7), []byte("https://a.example/"), []byte("de"), []byte("https://a.example/de"), []byte{})
	f.Add(uint64(0), []byte{}, []byte{}, []byte{}, []byte{0, 0, 200, 1})
	f.Add(uint64(1), []byte("x"), []byte("y"), []byte("z"), appendLogEntry(nil, 3, []byte("p"), []Link{{[]byte("l"), []byte("h")}})[:5])
	f.Fuzz(func(t *testing.T, ref uint64, loc, lang, href, junk []byte) {
		links := []Link{{Hreflang: lang, Href: href}, {Hreflang: href, Href: loc}}
		b := appendLogEntry(nil, ref, loc, links)
		var e logEntry
		if err := e.read(bufio.NewReader(bytes.NewReader(b))); err != nil || e.ref != ref || !bytes.Equal(e.loc, loc) || len(e.links) != 2 ||
			!bytes.Equal(e.links[0].Hreflang, lang) || !bytes.Equal(e.links[0].Href, href) || !bytes.Equal(e.links[1].Href, loc) {
			t.Fatalf("round trip: %+v, %v", e, err)
		}
		for _, data := range [][]byte{junk, append(b, junk...)} {
			rr, rs := bufio.NewReader(bytes.NewReader(data)), bufio.NewReader(bytes.NewReader(data))
			for range 100 {
				errRead, errSkip := e.read(rr), skipLogEntry(rs)
				if (errRead == nil) != (errSkip == nil) {
					t.Fatalf("read: %v, skip: %v", errRead, errSkip)
				}
				if errRead != nil {
					if errRead != io.EOF && !errors.Is(errRead, errLogCorrupt) && errRead != io.ErrUnexpectedEOF {
						t.Fatalf("unexpected error: %v", errRead)
					}
					break
				}
			}
		}
	})
}

// TestCorruptSpill: a Checker whose spilled runs are damaged on disk
// reports an error from Finish, not a panic and not a clean result.
func TestCorruptSpill(t *testing.T) {
	for _, damage := range []string{"truncate", "kind"} {
		c := New(Options{TempDir: t.TempDir(), RunRecords: 4})
		for i, p := range fixture {
			if err := c.Add(p.page(uint64(i))); err != nil {
				t.Fatal(err)
			}
		}
		err := c.join.stop()
		if n, _ := c.join.spilled(); err != nil || n < 3 {
			t.Fatalf("want several runs: %d, %v", n, err)
		}
		switch damage {
		case "truncate":
			c.join.f.Truncate(c.join.out.Size() - 5)
		case "kind":
			c.join.f.WriteAt([]byte{0xff}, c.join.out.Runs()[1].Off)
		}
		_, err = c.Finish(func(*Problem) error { return nil })
		if err == nil {
			t.Errorf("%s: Finish found no error", damage)
		}
		c.Close()
	}
	// A damaged text log too.
	c := New(Options{TempDir: t.TempDir()})
	for i, p := range fixture {
		c.Add(p.page(uint64(i)))
	}
	c.logw.Flush()
	c.log.Truncate(10)
	c.log.Seek(10, io.SeekStart)
	if _, err := c.Finish(func(*Problem) error { return nil }); err == nil {
		t.Error("truncated text log: Finish found no error")
	}
}
