package extsort

// arena holds the bytes of the entries in memory in chunks of 1 MiB, so it
// grows without copying (a doubling slice would leave each old copy to the
// garbage collector, up to the budget again) and is reused run after run.
// Offsets are virtual: chunk i starts at i<<chunkBits; an entry never
// straddles two chunks, and one larger than a chunk takes a chunk of its
// own size and the slots it covers.
type arena struct {
	chunks [][]byte
	used   int // virtual offset of the next entry
}

const (
	chunkBits = 20
	chunkSize = 1 << chunkBits
)

// add copies b into the arena and returns its offset.
func (a *arena) add(b []byte) int {
	i, pos := a.used>>chunkBits, a.used&(chunkSize-1)
	if pos > 0 && pos+len(b) > chunkSize {
		i, pos = i+1, 0
	}
	slots := max(1, (len(b)+chunkSize-1)>>chunkBits)
	for len(a.chunks) < i+slots {
		a.chunks = append(a.chunks, nil)
	}
	if len(a.chunks[i]) < max(chunkSize, len(b)) {
		a.chunks[i] = make([]byte, max(chunkSize, len(b)))
	}
	copy(a.chunks[i][pos:], b)
	off := i<<chunkBits | pos
	a.used = off + len(b)
	if len(b) > chunkSize {
		a.used = (i + slots) << chunkBits
	}
	return off
}

// bytes returns the n bytes at off.
func (a *arena) bytes(off, n uint32) []byte {
	pos := off & (chunkSize - 1)
	return a.chunks[off>>chunkBits][pos : pos+n : pos+n]
}

// reset empties the arena, keeping its chunks.
func (a *arena) reset() { a.used = 0 }
