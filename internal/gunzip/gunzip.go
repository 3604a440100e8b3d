// Package gunzip reads a gzip file as gzip(1) does: its members one after
// another, and zero bytes after the last one ignored. Tape and block
// writers pad a file so, and gzip -t passes it; a reader that takes only
// members would call such a file corrupt.
package gunzip

import (
	"bufio"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"
)

// ErrTrailingGarbage is returned for bytes after a member that neither start
// another member nor are zero padding.
var ErrTrailingGarbage = errors.New("gzip: trailing garbage after the last member")

// Reader is the decompressed bytes of every member of a gzip file.
type Reader struct {
	br   *bufio.Reader
	zr   gzip.Reader
	done bool
}

// NewReader reads the header of the first member from br. A bufio.Reader
// is a byte reader, so no member is read past its trailer.
func NewReader(br *bufio.Reader) (*Reader, error) {
	r := &Reader{br: br}
	if err := r.zr.Reset(br); err != nil {
		return nil, err
	}
	r.zr.Multistream(false)
	return r, nil
}

// Read reads the members in turn; it returns io.EOF after the last member
// and any zero padding, and ErrTrailingGarbage for anything else.
func (r *Reader) Read(p []byte) (int, error) {
	for !r.done {
		n, err := r.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil // the member's end comes back on the next call
		}
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	return 0, io.EOF
}

// Close closes the member being read.
func (r *Reader) Close() error { return r.zr.Close() }

// next starts the member after the one that ended, or reads the zero
// padding to the end and marks the file done.
func (r *Reader) next() error {
	b, err := r.br.Peek(2)
	switch {
	case len(b) == 0 && err == io.EOF:
		r.done = true
		return nil
	case len(b) == 0:
		return err
	case b[0] == 0:
		return r.padding()
	case len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b:
		if err := r.zr.Reset(r.br); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a member's header, cut short
			}
			return err
		}
		r.zr.Multistream(false)
		return nil
	}
	return ErrTrailingGarbage
}

// padding reads the rest of the file, which must be zero bytes.
func (r *Reader) padding() error {
	for {
		if _, err := r.br.Peek(1); err != nil {
			if err == io.EOF {
				r.done = true
				return nil
			}
			return err
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		for _, c := range buf {
			if c != 0 {
				return ErrTrailingGarbage
			}
		}
		r.br.Discard(len(buf))
	}
}
