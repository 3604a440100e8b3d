package s3obj

import "sort"

// Range is the byte range [Off, Off+Len) of an object.
type Range struct{ Off, Len int64 }

// End returns Off+Len.
func (r Range) End() int64 { return r.Off + r.Len }

// merge returns the union of rs clipped to [0, size): sorted, with no two
// ranges overlapping or touching.
func merge(rs []Range, size int64) []Range {
	out := make([]Range, 0, len(rs))
	for _, r := range rs {
		if r.Off < 0 {
			r.Len, r.Off = r.Len+r.Off, 0
		}
		if r.Off >= size || r.Len <= 0 {
			continue
		}
		r.Len = min(r.Len, size-r.Off)
		out = append(out, r)
	}
	return coalesce(out, 0)
}

// coalesce sorts rs and merges ranges less than gap apart (touching or
// overlapping ones always): one request for several column chunks costs
// less than a request each, as long as the gap read for nothing is small.
func coalesce(rs []Range, gap int64) []Range {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Off < rs[j].Off })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Off-out[n-1].End() <= gap {
			out[n-1].Len = max(out[n-1].End(), r.End()) - out[n-1].Off
			continue
		}
		out = append(out, r)
	}
	return out
}

// split cuts each range into pieces of at most max bytes, of near-equal
// size, so that a large column chunk is fetched by several requests at
// once and released piece by piece.
func split(rs []Range, max int64) []Range {
	var out []Range
	for _, r := range rs {
		n := (r.Len + max - 1) / max
		for i := range n {
			a := r.Off + r.Len*i/n
			b := r.Off + r.Len*(i+1)/n
			out = append(out, Range{a, b - a})
		}
	}
	return out
}

// subtract returns the parts of the sorted, disjoint ranges rs that no
// range of the sorted, disjoint have covers.
func subtract(rs, have []Range) []Range {
	var out []Range
	j := 0
	for _, r := range rs {
		a, b := r.Off, r.End()
		for j < len(have) && have[j].End() <= a {
			j++
		}
		for k := j; k < len(have) && have[k].Off < b; k++ {
			if have[k].Off > a {
				out = append(out, Range{a, have[k].Off - a})
			}
			a = max(a, have[k].End())
		}
		if a < b {
			out = append(out, Range{a, b - a})
		}
	}
	return out
}

// overlap returns how many bytes of r the sorted, disjoint rs cover.
func overlap(r Range, rs []Range) int64 {
	var n int64
	i := sort.Search(len(rs), func(i int) bool { return rs[i].End() > r.Off })
	for ; i < len(rs) && rs[i].Off < r.End(); i++ {
		n += min(r.End(), rs[i].End()) - max(r.Off, rs[i].Off)
	}
	return n
}

// Plan returns the requests Prefetch sends for ranges of an object of size
// bytes, none of it held yet: the ranges clipped to the object, merged
// when less than gap apart, cut in pieces of at most maxBlock bytes.
func Plan(ranges []Range, size, gap, maxBlock int64) []Range {
	return split(coalesce(merge(ranges, size), gap), maxBlock)
}
