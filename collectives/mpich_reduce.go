package collectives

import "github.com/collsim/collsim/sim"

// redScatGather is MPICH's reduce-scatter-and-gather reduce (Rabenseifner
// 2004; src/mpi/coll/reduce/reduce_intra_reduce_scatter_gather.c,
// MPIR_Reduce_intra_reduce_scatter_gather, MPICH 3.3.2 and 4.3.2 alike),
// step for step:
//   - fold: with pof2 the largest power of two <= p and rem = p - pof2,
//     each odd rank below 2 rem sends its vector to the even rank below it,
//     which reduces it and takes new rank r/2; ranks from 2 rem on take new
//     rank r - rem (so rank 0 always takes part);
//   - reduce-scatter over the pof2 new ranks, the vector cut into pof2
//     blocks (the first count mod pof2 one element longer): at distance 1,
//     2, 4, ... the lower new rank of a pair keeps the lower half of its
//     range, each sends the other half and reduces the half it keeps;
//   - if the root was folded out (odd, below 2 rem), new rank 0 hands it
//     its block and the root takes new rank 0's place;
//   - a binomial gather to the root's new rank, distance halving, each
//     rank sending its range once its partner's subtree holds the root's.
type redScatGather struct {
	foldPhase        // the even rank of a pair stays
	root             int
	n                int64
	newroot          int
	stage            int // 0 fold, 1 reduce-scatter, 2 root hand-over, 3 gather, 4 done
	mask, j          int
	sendIdx, recvIdx int
	lastIdx          int
	last             int32
}

func newRedScatGather(p Params, r int) *redScatGather {
	return &redScatGather{foldPhase: newFoldKeeping(r, p.Ranks, 0), root: p.Root, n: p.Count, last: -1}
}

// rootOut reports whether the root was folded out.
func (s *redScatGather) rootOut() bool { return s.root < 2*s.rem && s.root%2 != 0 }

// span is blocks lo..hi-1 of the pof2-way cut.
func (s *redScatGather) span(lo, hi int) sim.Region { return blocks(0, s.n, s.pof2, lo, hi) }

func (s *redScatGather) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		s.stage = 1
		if s.r < 2*s.rem {
			if s.newrank < 0 {
				s.last = b.send(s.r-1, 0, all)
			} else {
				s.last = b.recvReduce(s.r+1, 0, all)
			}
		}
		s.mask, s.lastIdx = 1, s.pof2
		return true
	case 1:
		if s.newrank < 0 || s.mask >= s.pof2 {
			s.stage = 2
			return true
		}
		newdst := s.newrank ^ s.mask
		var send, recv sim.Region
		if s.newrank < newdst {
			s.sendIdx = s.recvIdx + s.pof2/(2*s.mask)
			send, recv = s.span(s.sendIdx, s.lastIdx), s.span(s.recvIdx, s.sendIdx)
		} else {
			s.recvIdx = s.sendIdx + s.pof2/(2*s.mask)
			send, recv = s.span(s.sendIdx, s.recvIdx), s.span(s.recvIdx, s.lastIdx)
		}
		tag := 1 + ceilLog2(s.mask)
		e := b.exchange(s.real(newdst), s.real(newdst), tag, send, recv, true, s.last)
		s.last = b.join(e[:])
		s.sendIdx = s.recvIdx
		s.mask <<= 1
		if s.mask < s.pof2 {
			s.lastIdx = s.recvIdx + s.pof2/s.mask
		}
		return true
	case 2:
		s.stage = 3
		s.newroot = s.root - s.rem
		if s.root < 2*s.rem {
			s.newroot = s.root / 2
		}
		if s.rootOut() {
			s.newroot = 0
			switch {
			case s.r == s.root:
				s.last = b.recv(0, 50, s.span(0, 1), s.last)
				s.newrank, s.sendIdx, s.lastIdx = 0, 0, 2
			case s.newrank == 0:
				s.last = b.send(s.root, 50, s.span(0, 1), s.last)
				s.newrank = -1
			}
		}
		s.mask, s.j = s.pof2/2, ceilLog2(s.pof2)-1
		return true
	case 3:
		if s.newrank < 0 || s.mask == 0 {
			s.stage = 4
			return true
		}
		newdst := s.newrank ^ s.mask
		dst := s.real(newdst)
		if newdst == 0 && s.rootOut() {
			dst = s.root
		}
		var send, recv sim.Region
		if s.newrank < newdst {
			if s.mask != s.pof2/2 {
				s.lastIdx += s.pof2 / (s.mask * 2)
			}
			s.recvIdx = s.sendIdx + s.pof2/(s.mask*2)
			send, recv = s.span(s.sendIdx, s.recvIdx), s.span(s.recvIdx, s.lastIdx)
		} else {
			s.recvIdx = s.sendIdx - s.pof2/(s.mask*2)
			send, recv = s.span(s.sendIdx, s.lastIdx), s.span(s.recvIdx, s.sendIdx)
		}
		tag := 100 + s.j
		if newdst>>s.j<<s.j == s.newroot>>s.j<<s.j {
			b.send(dst, tag, send, s.last)
			s.stage = 4
			return true
		}
		s.last = b.recv(dst, tag, recv, s.last)
		if s.newrank > newdst {
			s.sendIdx = s.recvIdx
		}
		s.mask >>= 1
		s.j--
		return true
	}
	return false
}
