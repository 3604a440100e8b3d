package pqpage

import (
	"encoding/binary"
	"fmt"
	"io"
)

// CheckFooter reads the footer of the Parquet file of size bytes in r and
// checks, before parquet-go reads it, that its length fits in the file and
// that every length and count in it fits in the footer.
func CheckFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes, too short for Parquet", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return fmt.Errorf("no PAR1 magic at the end (encrypted footers are not supported): %q", tail[4:])
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n+12 > size {
		return fmt.Errorf("footer of %d bytes in a file of %d bytes", n, size)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	tr := thriftReader{b: footer}
	if err := tr.skip(tStruct, 0); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	return nil
}
