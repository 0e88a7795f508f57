package collectives

import "github.com/collsim/collsim/sim"

// butterflyReduceScatter is Open MPI's butterfly reduce_scatter (Traff,
// "An improved algorithm for (non-commutative) reduce-scatter with an
// application", EuroPVM/MPI 2005; ompi/mca/coll/base/coll_base_reduce_scatter.c,
// ompi_coll_base_reduce_scatter_intra_butterfly, v4.1.8 and v5.0.10). The
// surplus ranks fold into a partner first (foldPhase: even ranks below
// 2(p-pof2) hand their vector to the odd rank above). The pof2 remaining
// ranks split the vector into pof2 new blocks (new block v < rem holds the
// blocks of ranks 2v and 2v+1, the others the block of rank v+rem) and, at
// distance 1, 2, 4, ..., keep the lower half of their range of new blocks
// if the distance's bit of their new rank is 0 (the upper half otherwise),
// sending the other half to the partner and reducing the partner's copy of
// the half kept. Distance doubling with the low bit first leaves new rank v
// holding new block mirror(v), v's bits reversed; so each rank swaps with
// new rank mirror(v) (and first sends a folded partner its block), and a
// folded rank receives its block from the rank holding it.
type butterflyReduceScatter struct {
	foldPhase
	n      int64
	stage  int // 0 fold, 1 rounds, 2 results, 3 done
	mask   int
	lo, hi int // new blocks this rank still holds
	last   int32
}

// span is the region of new blocks lo..hi-1.
func (s *butterflyReduceScatter) span(lo, hi int) sim.Region {
	first := func(v int) int {
		if v < s.rem {
			return 2 * v
		}
		return v + s.rem
	}
	return blocks(0, s.n, s.p, first(lo), first(hi))
}

// mirror reverses the low bits of v that count the new ranks.
func (s *butterflyReduceScatter) mirror(v int) int {
	m := 0
	for b := 1; b < s.pof2; b <<= 1 {
		m <<= 1
		if v&b != 0 {
			m |= 1
		}
	}
	return m
}

func (s *butterflyReduceScatter) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		s.last = s.pre(b, all)
		s.stage, s.mask, s.lo, s.hi = 1, 1, 0, s.pof2
		if s.newrank < 0 {
			s.stage = 2
		}
	case 1:
		if s.mask >= s.pof2 {
			s.stage = 2
			return true
		}
		half := (s.hi - s.lo) / 2
		keepLo, keepHi, sendLo, sendHi := s.lo, s.lo+half, s.lo+half, s.hi
		if s.newrank&s.mask != 0 {
			keepLo, keepHi, sendLo, sendHi = s.lo+half, s.hi, s.lo, s.lo+half
		}
		peer := s.real(s.newrank ^ s.mask)
		tag := 1 + ceilLog2(s.mask)
		e := b.exchange(peer, peer, tag, s.span(sendLo, sendHi), s.span(keepLo, keepHi), true, s.last)
		s.last = b.join(e[:])
		s.lo, s.hi = keepLo, keepHi
		s.mask <<= 1
	case 2:
		s.stage = 3
		mine := block(0, s.n, s.p, s.r)
		if s.newrank < 0 { // folded: the rank holding new block r/2 sends it
			b.recv(s.real(s.mirror(s.r/2)), 100, mine, s.last)
			return true
		}
		vpeer := s.mirror(s.newrank) // == s.lo, the new block held
		own := vpeer + s.rem
		if vpeer < s.rem {
			s.last = b.send(2*vpeer, 100, block(0, s.n, s.p, 2*vpeer), s.last)
			own = 2*vpeer + 1
		}
		if vpeer != s.newrank {
			peer := s.real(vpeer)
			b.send(peer, 101, block(0, s.n, s.p, own), s.last)
			b.recv(peer, 101, mine, s.last)
		}
	default:
		return false
	}
	return true
}
