package shard

import "sync"

// Blocks is a pool of equal blocks of memory that the open and closed
// sitemaps of Cutters fill in turn (CutterOptions.Blocks): a sitemap takes
// blocks as it grows and gives them back when it is recycled, so the memory
// the sitemaps touch is the most they ever hold at once, not the largest
// file each buffer ever held. A grouped run's few large groups each keep an
// open sitemap: with a 10 MiB buffer each, every buffer in turn was filled
// to its group's largest sitemap and stayed so (49 MB touched at 1M rows
// against 32 MB ever held at once), and on a virtual machine a first touch
// of a 4 KiB page costs about 10 µs (docs/performance.md, round 11).
// It is safe for concurrent use.
type Blocks struct {
	size int
	mu   sync.Mutex
	free [][]byte
	made int
}

// NewBlocks returns a pool of blocks of size bytes.
func NewBlocks(size int) *Blocks { return &Blocks{size: size} }

// Made reports how many blocks the pool has allocated: the most that were
// ever taken at once.
func (b *Blocks) Made() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made
}

// Size returns the size of the pool's blocks.
func (b *Blocks) Size() int { return b.size }

// Get returns an empty block: length 0, capacity Size.
func (b *Blocks) Get() []byte {
	b.mu.Lock()
	if n := len(b.free); n > 0 {
		p := b.free[n-1]
		b.free = b.free[:n-1]
		b.mu.Unlock()
		return p
	}
	b.made++
	b.mu.Unlock()
	return make([]byte, 0, b.size)
}

// Put takes back blocks from Get, the caller done with them; the most
// recently used are handed out first, while they are in the cache.
func (b *Blocks) Put(parts ...[]byte) {
	b.mu.Lock()
	for _, p := range parts {
		b.free = append(b.free, p[:0])
	}
	b.mu.Unlock()
}
