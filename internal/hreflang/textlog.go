package hreflang

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// The text log keeps the text of every page that lists alternates, in the
// order they were added, so problems found by fingerprint are reported
// with their URLs: the problems are sorted by the page's sequence number
// and the log read once, in step. An entry is
//
//	uvarint ref, uvarint len, loc, uvarint links,
//	links × (uvarint len, hreflang, uvarint len, href)
//
// Lengths are capped when read back (maxText, maxLinks) so that a corrupt
// log is an error, never a huge allocation.

// maxText bounds a URL or hreflang read back from the log.
const maxText = 1 << 20

func appendText(dst, s []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// appendLogEntry appends the entry of a page.
func appendLogEntry(dst []byte, ref uint64, loc []byte, links []Link) []byte {
	dst = binary.AppendUvarint(dst, ref)
	dst = appendText(dst, loc)
	dst = binary.AppendUvarint(dst, uint64(len(links)))
	for _, l := range links {
		dst = appendText(dst, l.Hreflang)
		dst = appendText(dst, l.Href)
	}
	return dst
}

// logEntry is an entry read back; its slices point into buf and are valid
// until the next read.
type logEntry struct {
	ref   uint64
	loc   []byte
	links []Link
	buf   []byte
	at    []int // offsets of the strings in buf while reading
}

var errLogCorrupt = errors.New("corrupt text log entry")

// read reads the next entry: io.EOF at a clean end, an error wrapping
// errLogCorrupt or io.ErrUnexpectedEOF otherwise.
func (e *logEntry) read(r *bufio.Reader) error {
	ref, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return corruptLog(err)
	}
	e.ref = ref
	e.buf, e.at = e.buf[:0], e.at[:0]
	if err := readTexts(r, e.text); err != nil {
		return err
	}
	e.loc = e.buf[e.at[0]:e.at[1]]
	e.links = e.links[:0]
	for i := range (len(e.at) - 2) / 2 { // the loc, then two texts a link
		j := 1 + 2*i
		e.links = append(e.links, Link{Hreflang: e.buf[e.at[j]:e.at[j+1]], Href: e.buf[e.at[j+1]:e.at[j+2]]})
	}
	return nil
}

// text reads one string into buf, recording where it starts and ends.
func (e *logEntry) text(r *bufio.Reader) error {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return corruptLog(err)
	}
	if n > maxText {
		return errLogCorrupt
	}
	if len(e.at) == 0 {
		e.at = append(e.at, 0)
	}
	for n > 0 {
		// Grow as the bytes arrive: a corrupt length costs what the log holds.
		chunk := min(int(n), 4096)
		e.buf = append(e.buf, make([]byte, chunk)...)
		if _, err := io.ReadFull(r, e.buf[len(e.buf)-chunk:]); err != nil {
			return io.ErrUnexpectedEOF
		}
		n -= uint64(chunk)
	}
	e.at = append(e.at, len(e.buf))
	return nil
}

func corruptLog(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return io.ErrUnexpectedEOF
	}
	return errLogCorrupt
}

// skipLogEntry passes over one entry without keeping it: io.EOF at a clean
// end, an error wrapping errLogCorrupt or io.ErrUnexpectedEOF otherwise.
func skipLogEntry(r *bufio.Reader) error {
	if _, err := binary.ReadUvarint(r); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return corruptLog(err)
	}
	return readTexts(r, skipText)
}

// readTexts reads an entry's texts with text: its loc, the count of its
// links, and their hreflang and href.
func readTexts(r *bufio.Reader, text func(*bufio.Reader) error) error {
	if err := text(r); err != nil {
		return err
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return corruptLog(err)
	}
	if n > maxLinks {
		return errLogCorrupt
	}
	for range 2 * n {
		if err := text(r); err != nil {
			return err
		}
	}
	return nil
}

func skipText(r *bufio.Reader) error {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return corruptLog(err)
	}
	if n > maxText {
		return errLogCorrupt
	}
	if _, err := r.Discard(int(n)); err != nil {
		return io.ErrUnexpectedEOF
	}
	return nil
}
