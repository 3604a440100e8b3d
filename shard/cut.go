package shard

import (
	"bytes"
	"fmt"
	"math/bits"
)

// CutMode selects where a Cutter ends its shards.
type CutMode uint8

const (
	// CutTight closes a shard only when its next entry would break a
	// limit: the fewest shards, but one inserted URL moves every later
	// boundary, so every later shard changes.
	CutTight CutMode = iota
	// CutStable ends a shard after an entry when a hash of the entry's loc
	// says so, with a probability set by the shard's fill (see Curve), so
	// the same URLs give the same shards night after night and an insert
	// or a delete changes O(1) shards. A shard is still closed early when
	// its next entry would break a limit.
	CutStable
)

// String returns the flag spelling of m: "tight" or "stable".
func (m CutMode) String() string {
	switch m {
	case CutTight:
		return "tight"
	case CutStable:
		return "stable"
	}
	return fmt.Sprintf("CutMode(%d)", uint8(m))
}

// ParseCutMode reads the --cut flag's value: "stable" or "tight".
func ParseCutMode(s string) (CutMode, error) {
	switch s {
	case "stable":
		return CutStable, nil
	case "tight":
		return CutTight, nil
	}
	return 0, fmt.Errorf("cut mode %q: want stable or tight", s)
}

// Curve is the stable cut policy: how likely a shard is to end after an
// entry, given how full the shard is. Fill is the fuller of URLs/maxURLs and
// bytes/maxBytes (the whole file, header and footer included), so the same
// curve serves URL-bound and byte-bound sets.
//
// At or below Min no shard ends; at or above Max every shard ends; in
// between, the chance that the shard ends by the time it reaches fill f is
// 1 - exp(-Λ(f)), with the cumulative hazard Λ(f) = Hazard·t^Shape, t =
// (f-Min)/(Max-Min): an entry that takes the fill from f0 to f1 ends the
// shard when its loc hash, read as a fraction of 2^64, is below
// Λ(f1)-Λ(f0). Shape 1 is a constant hazard (geometric, like FastCDC's
// normal region), higher shapes concentrate the cuts towards Max (a Weibull
// distribution of shard sizes, like Dolt's prolly-tree chunker). A shard
// reaches Max uncut with probability exp(-Hazard).
//
// The arithmetic is in fixed point: floating point may be fused differently
// on another architecture, and a cut must be the same on every machine.
type Curve struct {
	Min, Max float64 // fills: 0 <= Min < Max <= 1, Max-Min >= 0.01
	Shape    int     // 1..4
	Hazard   float64 // total hazard between Min and Max: 0 < Hazard <= 64
}

// DefaultCurve is the curve of CutStable, chosen from the measurements of
// bench/cmd/cutsim (bench/README.md, "Stable cuts"): shards end between 60%
// and 98% full, about 77% on average (about 30% more shards than
// CutTight). The hazard is constant, so two runs whose shards started at
// different places cut at the same URL as soon as both are past Min: one
// inserted, deleted or re-dated URL changes one shard (two at most), and a
// block of 1% new URLs in the middle about five, where narrower windows
// (fuller shards) re-upload every later shard as tight cuts do.
var DefaultCurve = Curve{Min: 0.60, Max: 0.98, Shape: 1, Hazard: 2}

// Check reports whether cv is a usable curve.
func (cv Curve) Check() error {
	if !(cv.Min >= 0 && cv.Max <= 1 && cv.Max-cv.Min >= 0.01) ||
		cv.Shape < 1 || cv.Shape > 4 || !(cv.Hazard > 0 && cv.Hazard <= 64) {
		return fmt.Errorf("cut curve %+v: want 0 <= Min < Max <= 1 (at least 0.01 apart), Shape 1..4, 0 < Hazard <= 64", cv)
	}
	return nil
}

// String returns a short form of cv for tables and logs.
func (cv Curve) String() string {
	return fmt.Sprintf("[%.2f,%.2f] t^%d·%g", cv.Min, cv.Max, cv.Shape, cv.Hazard)
}

// Fills are fixed-point fractions of a full shard: 1<<fillBits is full.
const fillBits = 32

// stable is a Curve compiled for one Cutter's limits.
type stable struct {
	perURL, perByte uint64 // fill of one URL and of one byte, in units of 2^-48
	lo, hi          uint64 // Min and Max as fills
	perFill         uint64 // 2^64/(hi-lo): scales a fill above lo to t in units of 2^-32
	shape           int
	hazard          uint64 // Hazard in units of 2^-16
}

func newStable(cv Curve, maxURLs, maxBytes int) *stable {
	p := &stable{
		perURL:  (1 << 48) / uint64(maxURLs),
		perByte: (1 << 48) / uint64(maxBytes),
		// Each conversion is one rounded multiplication: no fused operation
		// can make them differ between machines.
		lo:     uint64(cv.Min * (1 << fillBits)),
		hi:     uint64(cv.Max * (1 << fillBits)),
		shape:  cv.Shape,
		hazard: uint64(cv.Hazard * (1 << 16)),
	}
	p.perFill, _ = bits.Div64(1, 0, p.hi-p.lo)
	return p
}

// fill is the fill of a shard of urls entries and a file of size bytes.
// urls <= maxURLs and size <= maxBytes, so neither product overflows.
func (p *stable) fill(urls, size int) uint64 {
	return max(uint64(urls)*p.perURL, uint64(size)*p.perByte) >> (48 - fillBits)
}

// hazardAt is Λ at fill f, lo < f < hi, in units of 2^-48.
func (p *stable) hazardAt(f uint64) uint64 {
	hi, lo := bits.Mul64(f-p.lo, p.perFill)
	t := hi<<32 | lo>>32 // (f-lo)/(hi-lo) in units of 2^-32, below 2^32
	x := t
	for range p.shape - 1 {
		x = x * t >> 32
	}
	return p.hazard * x
}

// cut reports whether a shard ends after an entry that took its fill from
// f0 to f1 and whose loc hashes to h.
func (p *stable) cut(f0, f1, h uint64) bool {
	switch {
	case f1 >= p.hi:
		return true
	case f1 <= p.lo:
		return false
	}
	d := p.hazardAt(f1)
	if f0 > p.lo {
		d -= p.hazardAt(f0)
	}
	return d >= 1<<48 || h < d<<16
}

// EntryLoc returns the loc of an encoded entry, the key stable cuts hash
// and --sort orders by: the text between its leading <url><loc> and the
// next '<' (the encoder escapes '<' in a loc, so that is </loc>), which is
// the loc as normalised and escaped by the encoder. An entry not in that
// form is its own key.
func EntryLoc(entry []byte) []byte {
	const open = "<url><loc>"
	if len(entry) < len(open) || string(entry[:len(open)]) != open {
		return entry
	}
	rest := entry[len(open):]
	if i := bytes.IndexByte(rest, '<'); i >= 0 {
		return rest[:i]
	}
	return entry
}
