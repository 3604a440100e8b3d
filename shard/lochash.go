package shard

import (
	"encoding/binary"
	"math/bits"
)

// LocHash is the 64-bit hash stable cuts are decided by. It is a fixed
// function, the same in every process, on every machine and in every
// release: changing it moves every content-defined cut and so re-uploads
// every shard of every user's set on their next run (TestLocHashGolden pins
// it). hash/maphash is not usable here: its seeds are random per process.
//
// It is wyhash (final version 4, public domain, by Wang Yi) with its default
// secret and seed 0: a multiply-mix hash that reads 8 bytes per step, so a
// 90-byte loc costs a few nanoseconds, and whose bits are uniform enough
// that comparing it to a threshold is a fair coin of that bias.
func LocHash(b []byte) uint64 { return wyhash(b, 0) }

// wyhash is wyhash final 4 with its default secret.
func wyhash(b []byte, seed uint64) uint64 {
	const (
		s0 = 0xa0761d6478bd642f
		s1 = 0xe7037ed1a0b428db
		s2 = 0x8ebc6af09c88c6e3
		s3 = 0x589965cc75374cc3
	)
	n := len(b)
	seed ^= mix(seed^s0, s1)
	var a, c uint64
	switch {
	case n <= 16:
		switch {
		case n >= 4:
			q := (n >> 3) << 2
			a = uint64(binary.LittleEndian.Uint32(b))<<32 | uint64(binary.LittleEndian.Uint32(b[q:]))
			c = uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32 | uint64(binary.LittleEndian.Uint32(b[n-4-q:]))
		case n > 0:
			a = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
		}
	default:
		p := b
		if len(p) > 48 {
			see1, see2 := seed, seed
			for len(p) > 48 {
				seed = mix(le64(p)^s1, le64(p[8:])^seed)
				see1 = mix(le64(p[16:])^s2, le64(p[24:])^see1)
				see2 = mix(le64(p[32:])^s3, le64(p[40:])^see2)
				p = p[48:]
			}
			seed ^= see1 ^ see2
		}
		for len(p) > 16 {
			seed = mix(le64(p)^s1, le64(p[8:])^seed)
			p = p[16:]
		}
		// The last 16 bytes of b, which may overlap what was mixed above.
		a, c = le64(b[n-16:]), le64(b[n-8:])
	}
	a ^= s1
	c ^= seed
	hi, lo := bits.Mul64(a, c)
	return mix(lo^s0^uint64(n), hi^s1)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
