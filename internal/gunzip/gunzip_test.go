package gunzip

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func member(t testing.TB, s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readAll(data []byte, size int) ([]byte, error) {
	r, err := NewReader(bufio.NewReaderSize(bytes.NewReader(data), size))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestReader(t *testing.T) {
	a, b := member(t, "hello, "), member(t, "world")
	zeros := make([]byte, 100)
	for _, tc := range []struct {
		name string
		data []byte
		want string
		err  error
	}{
		{"one member", a, "hello, ", nil},
		{"two members", cat(a, b), "hello, world", nil},
		{"zero padding", cat(a, b, zeros), "hello, world", nil},
		{"one zero", cat(a, []byte{0}), "hello, ", nil},
		{"padding then data", cat(a, zeros, []byte("x")), "hello, ", ErrTrailingGarbage},
		{"padding then a member", cat(a, zeros, b), "hello, ", ErrTrailingGarbage},
		{"garbage", cat(a, []byte("junk")), "hello, ", ErrTrailingGarbage},
		{"half a magic", cat(a, []byte{0x1f}), "hello, ", ErrTrailingGarbage},
		{"a bad second header", cat(a, []byte{0x1f, 0x8b, 0}), "hello, ", io.ErrUnexpectedEOF},
		{"cut short", a[:len(a)-3], "hello, ", io.ErrUnexpectedEOF},
		{"a second header cut short", cat(a, b[:5]), "hello, ", io.ErrUnexpectedEOF},
		{"a second header's name cut short", cat(a, []byte{0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0, 'n'}), "hello, ", io.ErrUnexpectedEOF},
	} {
		// 16 is bufio's smallest buffer: padding that spans many fills.
		for _, size := range []int{16, 4096} {
			got, err := readAll(tc.data, size)
			if string(got) != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("%s (buffer %d): %q, %v; want %q, %v", tc.name, size, got, err, tc.want, tc.err)
			}
		}
	}
	if _, err := readAll([]byte("plain text, not gzip"), 16); !errors.Is(err, gzip.ErrHeader) {
		t.Errorf("not gzip: %v, want gzip.ErrHeader", err)
	}
}

// FuzzReader: never a panic; a file the multistream reader of the
// compress package reads whole reads the same here (or, where that reader
// takes a member header cut short for the end, fails unexpected EOF), and
// so does that file padded with zeros.
func FuzzReader(f *testing.F) {
	f.Add(member(f, "a"), uint8(0))
	f.Add(cat(member(f, "a"), member(f, "b")), uint8(3))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pad uint8) {
		got, err := readAll(data, 16)
		zr, zerr := gzip.NewReader(bytes.NewReader(data))
		if zerr != nil {
			return
		}
		want, werr := io.ReadAll(zr)
		if werr != nil {
			return
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && bytes.HasPrefix(want, got) {
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("got %q, %v; the compress package read %q", got, err, want)
		}
		got, err = readAll(cat(data, make([]byte, pad)), 16)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("padded with %d zeros: got %q, %v; want %q", pad, got, err, want)
		}
	})
}
