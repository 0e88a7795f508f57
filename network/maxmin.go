package network

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Rates are integers in units of 2^-16 bytes per second. Integer sums do
// not depend on the order of their terms, so a link's capacity left after
// some flows are frozen is the same whichever solve computes it: the
// incremental solver can re-solve a part of the network and get the whole
// solve's rates bit for bit. A unit is 15 µB/s: a flow's rate is at most
// one unit below its exact max-min share.
const (
	rateUnitsPerByte = 1 << 16
	// maxLinkUnits bounds a link's capacity in units so that no sum of
	// rates overflows: about 70 TB/s.
	maxLinkUnits = 1 << 62
	// minLinkUnits is the slowest link it takes, 1 B/s: a capacity is
	// rounded down to whole units, which below that lost a share that
	// grows as the bandwidth falls (a link of 3e-5 B/s, 1.97 units, ran
	// at half its speed; a new user's trial). From 1 B/s the rounding
	// costs at most 1/65536 of it.
	minLinkUnits = rateUnitsPerByte
)

// capacityUnits converts a link's bandwidth in bytes per second to rate
// units, rounding down.
func capacityUnits(bandwidth float64) (int64, error) {
	u := math.Floor(bandwidth * rateUnitsPerByte)
	if !(u >= minLinkUnits) || u >= maxLinkUnits {
		return 0, &BandwidthRangeError{Bandwidth: bandwidth}
	}
	return int64(u), nil
}

// BandwidthRangeError is a link bandwidth the flow model cannot hold:
// below 1 B/s, or so high that sums of rates could overflow.
type BandwidthRangeError struct {
	Bandwidth float64 // B/s
}

func (e *BandwidthRangeError) Error() string {
	return fmt.Sprintf("bandwidth %g B/s is outside the flow model's range, %.3g to %.3g B/s", e.Bandwidth, float64(minLinkUnits)/rateUnitsPerByte, float64(maxLinkUnits)/rateUnitsPerByte)
}

// unitsRate converts a rate in units to bytes per second (exactly).
func unitsRate(u int64) float64 { return float64(u) / rateUnitsPerByte }

// share is a link's fair share when it is filled: its capacity left over
// its flows not yet frozen, an exact fraction. Shares compare exactly
// (128-bit cross products), ties going to the lower link index: the order
// in which progressive filling fills links.
type share struct {
	left  int64 // capacity left, in rate units
	users int32 // flows (route crossings) not frozen yet
	link  int32
}

// rate is the share rounded down to a whole unit: what each of the link's
// flows gets.
func (s share) rate() int64 { return s.left / int64(s.users) }

// cmp orders shares by value, then by link.
func (s share) cmp(t share) int {
	h1, l1 := bits.Mul64(uint64(s.left), uint64(t.users))
	h2, l2 := bits.Mul64(uint64(t.left), uint64(s.users))
	switch {
	case h1 != h2:
		return cmpUint(h1, h2)
	case l1 != l2:
		return cmpUint(l1, l2)
	case s.link < t.link:
		return -1
	case s.link > t.link:
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// MaxMin returns the max-min fair rates, in bytes per second, of flows on
// the given routes over links of the given capacities (see MaxMinSolver).
func MaxMin(capacity []float64, routes [][]int32) ([]float64, error) {
	units := make([]int64, len(capacity))
	for e, c := range capacity {
		u, err := capacityUnits(c)
		if err != nil {
			return nil, fmt.Errorf("link %d: %w", e, err)
		}
		units[e] = u
	}
	var s MaxMinSolver
	rates := make([]float64, len(routes))
	for i, r := range s.Solve(units, routes) {
		rates[i] = unitsRate(r)
		if len(routes[i]) == 0 {
			rates[i] = math.Inf(1)
		}
	}
	return rates, nil
}

// MaxMinSolver computes max-min fair rates by progressive filling, as
// SimGrid's LMM does: repeatedly take the link whose remaining capacity
// per unfrozen flow is least, give each of its unfrozen flows that share,
// freeze them, and take their share off every link of their routes. Links
// wait in a heap keyed by their current share (stale entries are skipped
// when popped), so a solve costs O(flows x route length x log links),
// whatever the size of the network: only the links the routes use are
// touched. Capacities and rates are integers in rate units, and shares are
// exact fractions, so no link's share ever falls below one already filled
// and every result is the same however the flows are listed. Ties go to
// the lower link index. It is the whole-network solve the flow model's
// incremental solver is tested against. Its scratch memory is reused from
// one Solve to the next.
type MaxMinSolver struct {
	left    []int64 // per link; valid for touched links
	users   []int32 // per link: unfrozen flows on it; all 0 between solves
	start   []int32 // per link: its flows are flowsOf[start[e]:start[e]+count[e]]
	count   []int32
	touched []int32 // links used by some route, in first-use order
	flowsOf []int32
	frozen  []bool
	rates   []int64
	heap    shareHeap
}

// Solve returns the rates in units of the flows on routes over links of
// the given capacities in units (valid until the next Solve). A flow on no
// link gets 0.
func (s *MaxMinSolver) Solve(capacity []int64, routes [][]int32) []int64 {
	n, links := len(routes), len(capacity)
	if len(s.users) != links {
		s.left, s.users = make([]int64, links), make([]int32, links)
		s.start, s.count = make([]int32, links), make([]int32, links)
	}
	s.rates = append(s.rates[:0], make([]int64, n)...)
	s.frozen = append(s.frozen[:0], make([]bool, n)...)
	s.touched = s.touched[:0]
	for _, route := range routes {
		for _, e := range route {
			if s.users[e] == 0 {
				s.touched = append(s.touched, e)
				s.left[e] = capacity[e]
			}
			s.users[e]++
		}
	}
	total := int32(0)
	for _, e := range s.touched {
		s.start[e], s.count[e] = total, 0
		total += s.users[e]
	}
	s.flowsOf = append(s.flowsOf[:0], make([]int32, total)...)
	for i, route := range routes {
		for _, e := range route {
			s.flowsOf[s.start[e]+s.count[e]] = int32(i)
			s.count[e]++
		}
	}
	s.heap.reset()
	for _, e := range s.touched {
		s.heap.push(heapEntry{share: share{s.left[e], s.users[e], e}})
	}
	for s.heap.len() > 0 {
		top := s.heap.pop().share
		e := top.link
		if s.users[e] == 0 || top.users != s.users[e] {
			continue // stale: the link's share changed since it was pushed
		}
		rate := top.rate()
		for _, f := range s.flowsOf[s.start[e] : s.start[e]+s.count[e]] {
			if s.frozen[f] {
				continue
			}
			s.rates[f], s.frozen[f] = rate, true
			for _, e2 := range routes[f] {
				s.left[e2] -= rate
				s.users[e2]--
				if e2 != e && s.users[e2] > 0 {
					s.heap.push(heapEntry{share: share{s.left[e2], s.users[e2], e2}})
				}
			}
		}
	}
	return s.rates
}

// heapEntry is a share waiting in a heap: a link's fill, or one of the
// incremental solver's other events (see incremental.go), which come after
// a fill at an equal share.
type heapEntry struct {
	share
	approx float64 // left/users in floating point, set by push: most comparisons need no more
	// kindOn is the kind in the top two bits, and for entryFreeze the
	// dirty link the flow leaves (32 bytes an entry: a heap moves them).
	kindOn uint32
	flow   int32 // entryFreeze: the flow
}

// entry returns a heap entry of the given kind at share s.
func entry(s share, kind entryKind, flow, on int32) heapEntry {
	return heapEntry{share: s, kindOn: uint32(kind)<<30 | uint32(on), flow: flow}
}

func (e *heapEntry) kind() entryKind { return entryKind(e.kindOn >> 30) }

// maxLinks bounds the links of a network: an entry holds a link in 30 bits.
const maxLinks = 1 << 30

// A heap moves its entries: they must stay small.
const _ = 32 - unsafe.Sizeof(heapEntry{})

// on is the dirty link an entryFreeze's flow leaves.
func (e *heapEntry) on() int32 { return int32(e.kindOn & (1<<30 - 1)) }

type entryKind uint8

const (
	entryFill   entryKind = iota // the link fills if its share is still this
	entryCheck                   // the sweep passes the link's old fill
	entryFreeze                  // a flow freezes on a clean link (share.link), off a dirty one (on)
)

// less orders entries by share, then link, then kind. Written so, it is
// within the inliner's budget (as two ifs it was one over): the heap's
// loops compare without a call where approx decides, as it most often
// does (3.6% fewer instructions on the 512-rank Valiant benchmark, built
// without a profile; cmd/collsim's profile inlined it already).
func (a *heapEntry) less(b *heapEntry) bool {
	// approx is within 4e-16 of the exact share, relatively: shares
	// further apart than that compare by it.
	const sure = 1 - 1e-14
	if a.approx < b.approx*sure {
		return true
	}
	return !(b.approx < a.approx*sure) && a.lessTied(b)
}

// lessTied is less for entries whose approximate shares are too close to
// tell apart.
func (a *heapEntry) lessTied(b *heapEntry) bool {
	if a.left != b.left || a.users != b.users { // equal shares are common on a symmetric network
		if c := a.share.cmp(b.share); c != 0 {
			return c < 0
		}
	}
	if a.link != b.link {
		return a.link < b.link
	}
	return a.kindOn>>30 < b.kindOn>>30
}

// shareHeap is a 4-ary min-heap of entries (shallower than a binary one:
// fewer entries move per pop). Unindexed, a link whose share changes is
// pushed anew, and the stale entry skipped when popped. Indexed (at set,
// one slot a link), it holds at most one fill entry a link, which setFill
// moves when the link's share changes: in the incremental solver's sweeps
// of a 256-rank pairwise alltoall, three pops in four had been of stale
// entries (the dragonfly alltoalls' benchmarks, 512 ranks: 11% faster
// with minimal routing, 6% with Valiant's, 2% with UGAL's).
type shareHeap struct {
	a  []heapEntry
	at []int32 // per link: 1 + the index in a of its fill entry, 0: none
}

func (h *shareHeap) len() int { return len(h.a) }

// reset empties the heap.
func (h *shareHeap) reset() {
	if h.at != nil {
		for i := range h.a {
			if h.a[i].kind() == entryFill {
				h.at[h.a[i].link] = 0
			}
		}
	}
	h.a = h.a[:0]
}

// put stores x at index i.
func (h *shareHeap) put(i int, x heapEntry) {
	h.a[i] = x
	if h.at != nil && x.kindOn>>30 == uint32(entryFill) {
		h.at[x.link] = int32(i) + 1
	}
}

func (h *shareHeap) push(x heapEntry) {
	x.approx = float64(x.left) / float64(x.users)
	h.a = append(h.a, x)
	h.up(len(h.a)-1, x)
}

// setFill queues the fill of link x.link at x's share, in an indexed
// heap: its entry moves there, if it has one.
func (h *shareHeap) setFill(x heapEntry) {
	i := h.at[x.link] - 1
	if i < 0 {
		h.push(x)
		return
	}
	x.approx = float64(x.left) / float64(x.users)
	h.fix(int(i), x)
}

// fix stores x at hole i, whose entry it replaces, or wherever above or
// below it heap order puts x.
func (h *shareHeap) fix(i int, x heapEntry) {
	if x.less(&h.a[i]) {
		h.up(i, x)
	} else {
		h.down(i, x)
	}
}

// dropFill takes link l's fill entry out of an indexed heap, if it has
// one: a link whose flows are all frozen fills no more, and its entry,
// left in, would cost a pop from the root (a removal starts where the
// entry is, most often near the leaves). In a sweep of a 256-rank pairwise
// alltoall three links in four end so.
func (h *shareHeap) dropFill(l int32) {
	i := int(h.at[l]) - 1
	if i < 0 {
		return
	}
	h.at[l] = 0
	last := len(h.a) - 1
	x := h.a[last]
	h.a = h.a[:last]
	if i != last {
		h.fix(i, x)
	}
}

// up stores x at hole i or above it.
func (h *shareHeap) up(i int, x heapEntry) {
	a := h.a
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&a[p]) {
			break
		}
		h.put(i, a[p])
		i = p
	}
	h.put(i, x)
}

// down stores x at hole i or below it.
func (h *shareHeap) down(i int, x heapEntry) {
	a := h.a
	for {
		c := 4*i + 1
		if c >= len(a) {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, len(a)); j++ {
			if a[j].less(&a[m]) {
				m = j
			}
		}
		if !a[m].less(&x) {
			break
		}
		h.put(i, a[m])
		i = m
	}
	h.put(i, x)
}

func (h *shareHeap) pop() heapEntry {
	top := h.a[0]
	if h.at != nil && top.kind() == entryFill {
		h.at[top.link] = 0
	}
	last := len(h.a) - 1
	x := h.a[last]
	h.a = h.a[:last]
	if last > 0 {
		h.down(0, x)
	}
	return top
}
