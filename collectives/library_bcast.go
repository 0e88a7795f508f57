package collectives

import "github.com/collsim/collsim/sim"

// binomialScatterAllgather is the scatter-allgather broadcast both MPI
// libraries run (van de Geijn's; MPICH 3.3.2 and 4.x:
// src/mpi/coll/bcast/bcast_intra_scatter_recursive_doubling_allgather.c and
// bcast_intra_scatter_ring_allgather.c, with the scatter of
// bcast_utils.c MPII_Scatter_for_bcast; Open MPI 4.1/5.0:
// ompi/mca/coll/base/coll_base_bcast.c
// ompi_coll_base_bcast_intra_scatter_allgather and
// ompi_coll_base_bcast_intra_scatter_allgather_ring, Open MPI's port of
// MPICH's).
//
// The vector is cut into blocks of ss = ceil(n/p) elements; relative rank
// v = (r - root) mod p owns block v (the last blocks may be short or
// empty). A binomial scatter hands every relative rank the blocks of its
// subtree: v, whose lowest set bit is m, receives blocks v..v+m-1 from
// v-m, then sends blocks c..c+m'-1 to each child c = v+m' (m' = m/2, ...,
// 1, largest first), skipping empty messages. The allgather is then either
// recursive doubling over relative ranks, for any p: at distance 1, 2, 4,
// ... partners swap the blocks of their subtrees, and where a partner's
// subtree runs past p the ranks that received it pass it on, by recursive
// halving inside their own subtree, to those that had no partner; or a
// ring: p-1 steps, each sending the newest block to rank r+1 and receiving
// one from r-1. Every step is a blocking call (MPI_Send, MPI_Recv,
// MPI_Sendrecv), so each rank's ops run one after another.
//
// MPICH cuts the blocks in bytes (ceil(bytes/p)) where this cuts them in
// elements; for element sizes that do not divide the block, MPICH's
// messages differ from these by less than one element.
type binomialScatterAllgather struct {
	r, p, root, v int
	n, ss         int64
	ring          bool
	stage         int // 0 scatter, 1 allgather, 2 done
	mask          int
	last          int32
}

func newBinomialScatterAllgather(p Params, r int, ring bool) *binomialScatterAllgather {
	ss := int64(0)
	if p.Ranks > 0 {
		ss = (p.Count + int64(p.Ranks) - 1) / int64(p.Ranks)
	}
	return &binomialScatterAllgather{r: r, p: p.Ranks, root: p.Root, v: mod(r-p.Root, p.Ranks),
		n: p.Count, ss: ss, ring: ring, last: -1}
}

// blk is blocks lo..hi-1 of relative ranks, clipped to the vector.
func (s *binomialScatterAllgather) blk(lo, hi int) sim.Region {
	off := min(int64(lo)*s.ss, s.n)
	end := min(int64(hi)*s.ss, s.n)
	return sim.Region{Off: off, Count: max(0, end-off)}
}

func (s *binomialScatterAllgather) real(v int) int { return mod(v+s.root, s.p) }

// sendrecv emits MPI_Sendrecv (builder.exchange): a send and a receive
// that both follow the rank's last call, and what the next call follows.
func (s *binomialScatterAllgather) sendrecv(b *builder, to int, out sim.Region, from int, in sim.Region, tag int) {
	e := b.exchange(to, from, tag, out, in, false, s.last)
	s.last = b.join(e[:])
}

func (s *binomialScatterAllgather) step(b *builder) bool {
	if s.p == 1 || s.stage == 2 {
		return false
	}
	if s.stage == 0 {
		// Receive from the parent (the root has none), then send to the
		// children, the largest subtree first.
		m := 1
		for m < s.p && s.v&m == 0 {
			m <<= 1
		}
		if s.v != 0 {
			if in := s.blk(s.v, s.v+m); in.Count > 0 {
				s.last = b.recv(s.real(s.v-m), 0, in, s.last)
			}
		}
		for c := m >> 1; c > 0; c >>= 1 {
			if s.v+c >= s.p {
				continue
			}
			if out := s.blk(s.v+c, s.v+2*c); out.Count > 0 {
				s.last = b.send(s.real(s.v+c), 0, out, s.last)
			}
		}
		s.stage, s.mask = 1, 1
		return true
	}
	if s.ring {
		// Step mask (1..p-1): send block v-mask+1, receive block v-mask.
		if s.mask >= s.p {
			s.stage = 2
			return true
		}
		sendBlock, recvBlock := mod(s.v-s.mask+1, s.p), mod(s.v-s.mask, s.p)
		s.sendrecv(b, mod(s.r+1, s.p), s.blk(sendBlock, sendBlock+1), mod(s.r-1, s.p), s.blk(recvBlock, recvBlock+1), s.mask)
		s.mask++
		return true
	}
	if s.mask >= s.p {
		s.stage = 2
		return true
	}
	m := s.mask
	tag := 1 + ceilLog2(m)
	tr := s.v &^ (m - 1)
	vr := s.v ^ m
	rtr := vr &^ (m - 1)
	if vr < s.p {
		s.sendrecv(b, s.real(vr), s.blk(tr, tr+m), s.real(vr), s.blk(rtr, rtr+m), tag)
	}
	if rtr+m > s.p {
		// The partner subtree runs past p: within this subtree the ranks
		// that had a partner (the first have of them) pass its blocks on.
		have := s.p - tr - m
		region := s.blk(tr+m, tr+2*m)
		for h := m >> 1; h > 0; h >>= 1 {
			other := s.v ^ h
			root := s.v &^ (2*h - 1)
			ftag := 64 + 64*ceilLog2(m) + ceilLog2(h)
			switch {
			case other > s.v && s.v < root+have && other >= root+have:
				s.last = b.send(s.real(other), ftag, region, s.last)
			case other < s.v && other < root+have && s.v >= root+have:
				s.last = b.recv(s.real(other), ftag, region, s.last)
			}
		}
	}
	s.mask <<= 1
	return true
}
