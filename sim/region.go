package sim

import (
	"math"
	"slices"
)

// strided reports whether r is a vector of several blocks.
func (r Region) strided() bool { return r.Block > 0 && r.Block < r.Count }

// Runs returns how many runs of consecutive elements r has (1 when it is
// contiguous, even if empty).
func (r Region) Runs() int64 {
	if !r.strided() {
		return 1
	}
	return (r.Count-1)/r.Block + 1 // not (Count+Block-1)/Block: that sum can wrap
}

// Run returns the first element and the length of r's run i, 0 <= i <
// Runs().
func (r Region) Run(i int64) (off, n int64) {
	if !r.strided() {
		return r.Off, r.Count
	}
	return r.Off + i*r.Stride, min(r.Block, r.Count-i*r.Block)
}

// Span returns the lowest element r touches and one past its highest
// (Off, Off when r is empty). Only for regions that are not invalid.
func (r Region) Span() (lo, hi int64) {
	if !r.strided() {
		// Contiguous (or empty: Off, Off), the common case, answered
		// here without calling Runs and Run: a real run checks a region
		// this way before every message it sends or lands, and those
		// calls took 10-15 ns of each. (Span itself is not inlined.)
		return r.Off, r.Off + r.Count
	}
	return r.vectorSpan()
}

// vectorSpan is Span of a vector.
func (r Region) vectorSpan() (lo, hi int64) {
	last := r.Runs() - 1
	lastOff, lastN := r.Run(last)
	firstOff, firstN := r.Run(0)
	return min(firstOff, lastOff), max(firstOff+firstN, lastOff+lastN)
}

// invalid says why r is not a region of any buffer ("" when it is).
func (r Region) invalid() string {
	switch {
	case r.Count < 0:
		return "negative count"
	case r.Block < 0:
		return "negative block"
	case !r.strided():
		if r.Off < 0 || r.Off > math.MaxInt64-r.Count {
			return "offset outside the buffers"
		}
		return ""
	case r.Stride > -r.Block && r.Stride < r.Block:
		return "blocks that overlap (stride shorter than a block)"
	}
	// Every run must start at 0 or after, and end by MaxInt64: check the
	// first and the last without overflowing.
	last := r.Runs() - 1
	if r.Off < 0 || r.Off > math.MaxInt64-r.Block {
		return "offset outside the buffers"
	}
	lastLen := r.Count - last*r.Block // the last block, perhaps short
	if r.Stride > 0 && last > (math.MaxInt64-r.Off-lastLen)/r.Stride ||
		r.Stride < 0 && last > r.Off/-r.Stride {
		return "blocks outside the buffers"
	}
	return ""
}

// Gather appends r's elements of buf to dst, in the region's order.
func (r Region) Gather(dst, buf []uint64) []uint64 {
	for i, n := int64(0), r.Runs(); i < n; i++ {
		off, k := r.Run(i)
		at := len(dst)
		dst = slices.Grow(dst, int(k))[:at+int(k)]
		CopyWords(dst[at:], buf[off:off+k])
	}
	return dst
}

// Scatter writes src into r's first len(src) elements of buf, in the
// region's order; apply, when not nil, combines them instead (a
// reduction: apply(dst, src)).
func (r Region) Scatter(buf, src []uint64, apply func(dst, src []uint64)) {
	for i, n := int64(0), r.Runs(); i < n && len(src) > 0; i++ {
		off, k := r.Run(i)
		k = min(k, int64(len(src)))
		if apply != nil {
			apply(buf[off:off+k], src[:k])
		} else {
			CopyWords(buf[off:off+k], src[:k])
		}
		src = src[k:]
	}
}
