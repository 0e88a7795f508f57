package collectives

import "github.com/collsim/collsim/sim"

// Each algorithm below is a stepper: per-rank state plus a step method that
// emits the rank's next ops. Tags are distinct per step, so matching never
// depends on the order in which independent ops are issued.

// ringAllreduce: reduce-scatter then allgather around a ring (Patarasuk and
// Yuan 2009). At reduce-scatter step k rank r sends block r-k to r+1 and
// reduces block r-k-1 from r-1; afterwards it owns block r+1 and circulates
// it for p-1 allgather steps.
type ringAllreduce struct {
	r, p int
	n    int64
	k    int
	last stepEnd
}

func (s *ringAllreduce) step(b *builder) bool {
	if s.k >= 2*(s.p-1) {
		return false
	}
	right, left := mod(s.r+1, s.p), mod(s.r-1, s.p)
	if s.k < s.p-1 {
		s.last = b.exchange(right, left, s.k, block(0, s.n, s.p, mod(s.r-s.k, s.p)), block(0, s.n, s.p, mod(s.r-s.k-1, s.p)), true, s.last[:]...)
	} else {
		j := s.k - (s.p - 1)
		s.last = b.exchange(right, left, s.k, block(0, s.n, s.p, mod(s.r+1-j, s.p)), block(0, s.n, s.p, mod(s.r-j, s.p)), false, s.last[:]...)
	}
	s.k++
	return true
}

// foldPhase is the non-power-of-two fold used by recursive doubling and
// Rabenseifner (Thakur, Rabenseifner, Gropp 2005): with pof2 the largest
// power of two <= p and rem = p-pof2, each even rank below 2*rem hands its
// vector to the odd rank above it and sits out; the others take new ranks
// 0..pof2-1. At the end the odd ranks send the result back.
type foldPhase struct {
	r, p, pof2, rem int
	newrank         int // -1 for a rank that sits out
	kept            int // the parity of the ranks below 2*rem that stay: 1 odd, 0 even
}

func newFold(r, p int) foldPhase { return newFoldKeeping(r, p, 1) }

// newFoldKeeping is the fold in which, of each pair below 2*rem, the rank
// of parity kept stays (MPICH's reduce keeps the even one, 0).
func newFoldKeeping(r, p, kept int) foldPhase {
	f := foldPhase{r: r, p: p, pof2: floorPow2(p), kept: kept}
	f.rem = p - f.pof2
	switch {
	case r < 2*f.rem && r%2 != kept:
		f.newrank = -1
	case r < 2*f.rem:
		f.newrank = r / 2
	default:
		f.newrank = r - f.rem
	}
	return f
}

// real maps a new rank back to its rank.
func (f *foldPhase) real(newrank int) int {
	if newrank < f.rem {
		return 2*newrank + f.kept
	}
	return newrank + f.rem
}

// pre emits the fold of the whole vector (tag 0) and returns the op the
// rest of the rank's program must follow.
func (f *foldPhase) pre(b *builder, all sim.Region) int32 {
	if f.r >= 2*f.rem {
		return -1
	}
	if f.newrank < 0 {
		return b.send(f.r+1, 0, all)
	}
	return b.recvReduce(f.r-1, 0, all)
}

// post emits the return of the result to the ranks that sat out, after
// the ops in after.
func (f *foldPhase) post(b *builder, tag int, all sim.Region, after ...int32) {
	switch {
	case f.r >= 2*f.rem:
	case f.newrank < 0:
		b.recv(f.r+1, tag, all, after...)
	default:
		b.send(f.r-1, tag, all, after...)
	}
}

// recursiveDoubling: after the fold, log2(pof2) rounds in which partners at
// distance 1, 2, 4, ... exchange whole vectors and reduce.
type recursiveDoubling struct {
	foldPhase
	n     int64
	stage int // 0 fold, 1 exchange rounds, 2 unfold, 3 done
	mask  int
	last  stepEnd
}

func (s *recursiveDoubling) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		s.last = only(s.pre(b, all))
		s.stage, s.mask = 1, 1
	case 1:
		if s.newrank < 0 || s.mask >= s.pof2 {
			s.stage = 2
			return true
		}
		peer := s.real(s.newrank ^ s.mask)
		tag := 1 + ceilLog2(s.mask)
		s.last = b.exchange(peer, peer, tag, all, all, true, s.last[:]...)
		s.mask <<= 1
	case 2:
		s.post(b, 1+ceilLog2(s.pof2), all, s.last[:]...)
		s.stage = 3
	default:
		return false
	}
	return true
}

// rabenseifner: after the fold, a reduce-scatter by recursive halving over
// pof2 blocks, then an allgather by recursive doubling (Rabenseifner 2004;
// Thakur, Rabenseifner, Gropp 2005).
type rabenseifner struct {
	foldPhase
	n      int64
	stage  int // 0 fold, 1 halving, 2 doubling, 3 unfold, 4 done
	mask   int
	lo, hi int // blocks this rank is responsible for
	round  int
	last   stepEnd
	// ompi folds as Open MPI's ompi_coll_base_allreduce_intra_redscat_allgather
	// does (Params.Library ompiBase): of each pair below 2*rem the even rank
	// sends its right half and the odd its left, each reduces the half it
	// keeps, the odd returns its reduced right half, and the even rank goes
	// on; at the end it sends the result to the odd one. (collsim ran
	// MPICH's fold for -a ompi: the even rank's whole vector to the odd
	// one; an audit.)
	ompi bool
}

// OpenMPIBase reports whether the call runs as Open MPI's coll/base
// function does where that differs from MPICH's (see ompiBase): the
// closed forms price MPICH's.
func (p Params) OpenMPIBase() bool { return p.Library == ompiBase }

func newRabenseifner(p Params, r int) *rabenseifner {
	if p.OpenMPIBase() {
		return &rabenseifner{foldPhase: newFoldKeeping(r, p.Ranks, 0), n: p.Count, last: noEnd, ompi: true}
	}
	return &rabenseifner{foldPhase: newFold(r, p.Ranks), n: p.Count, last: noEnd}
}

// ompiFold is Open MPI's fold (see rabenseifner.ompi): the step the rank's
// rounds follow.
func (s *rabenseifner) ompiFold(b *builder) stepEnd {
	if s.r >= 2*s.rem {
		return noEnd
	}
	left := sim.Region{Count: s.n / 2}
	right := sim.Region{Off: s.n / 2, Count: s.n - s.n/2}
	back := 2 + 2*ceilLog2(s.pof2) // past the rounds' and the unfold's tags
	if s.r%2 == 0 {
		ex := b.exchange(s.r+1, s.r+1, 0, right, left, true)
		return only(b.recv(s.r+1, back, right, ex[:]...))
	}
	ex := b.exchange(s.r-1, s.r-1, 0, left, right, true)
	return only(b.send(s.r-1, back, right, ex[:]...))
}

func (s *rabenseifner) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		if s.ompi {
			s.last = s.ompiFold(b)
		} else {
			s.last = only(s.pre(b, all))
		}
		s.stage, s.mask, s.lo, s.hi = 1, 1, 0, s.pof2
		if s.newrank < 0 {
			s.stage = 3
		}
	case 1:
		if s.mask >= s.pof2 {
			s.stage, s.mask = 2, s.pof2/2
			return true
		}
		peer := s.real(s.newrank ^ s.mask)
		half := (s.hi - s.lo) / 2
		keepLo, keepHi, sendLo, sendHi := s.lo, s.lo+half, s.lo+half, s.hi
		if s.newrank&s.mask != 0 {
			keepLo, keepHi, sendLo, sendHi = s.lo+half, s.hi, s.lo, s.lo+half
		}
		s.round++
		s.last = b.exchange(peer, peer, s.round, blocks(0, s.n, s.pof2, sendLo, sendHi), blocks(0, s.n, s.pof2, keepLo, keepHi), true, s.last[:]...)
		s.lo, s.hi = keepLo, keepHi
		s.mask <<= 1
	case 2:
		if s.mask < 1 {
			s.stage = 3
			return true
		}
		peer := s.real(s.newrank ^ s.mask)
		width := s.hi - s.lo
		otherLo := s.hi
		if s.newrank&s.mask != 0 {
			otherLo = s.lo - width
		}
		s.round++
		s.last = b.exchange(peer, peer, s.round, blocks(0, s.n, s.pof2, s.lo, s.hi), blocks(0, s.n, s.pof2, otherLo, otherLo+width), false, s.last[:]...)
		s.lo, s.hi = min(s.lo, otherLo), max(s.hi, otherLo+width)
		s.mask >>= 1
	case 3:
		// Ranks that sat out did no rounds, so the tag comes from p alone.
		tag := 1 + 2*ceilLog2(s.pof2)
		switch {
		case !s.ompi:
			s.post(b, tag, all, s.last[:]...)
		case s.r >= 2*s.rem:
		case s.newrank < 0:
			b.recv(s.r-1, tag, all, s.last[:]...)
		default:
			b.send(s.r+1, tag, all, s.last[:]...)
		}
		s.stage = 4
	default:
		return false
	}
	return true
}

// binomialReduce sends each rank's vector, combined with its subtree's, to
// its parent in a binomial tree rooted at root: the relative rank v
// receives from v+1, v+2, v+4, ... below its lowest set bit, in that order
// (each receive after the one before is reduced), then sends to v minus
// that bit (MPICH's binomial reduce).
type binomialReduce struct {
	r, p, root int
	n          int64
	tag        int
	mask       int
	children   []int32
	done       bool
	sent       int32 // the send to the parent, or -1 at the root
}

func newBinomialReduce(r, p, root int, n int64, tag int) binomialReduce {
	return binomialReduce{r: r, p: p, root: root, n: n, tag: tag, mask: 1, sent: -1}
}

func (s *binomialReduce) step(b *builder) bool {
	if s.done {
		return false
	}
	v := mod(s.r-s.root, s.p)
	all := sim.Region{Count: s.n}
	for s.mask < s.p {
		m := s.mask
		s.mask <<= 1
		if v&m != 0 {
			s.sent = b.send(mod(v-m+s.root, s.p), s.tag, all, s.children...)
			s.done = true
			return true
		}
		if v+m < s.p {
			// One child after another, each received and reduced before
			// the next receive is posted, as MPICH's blocking MPIC_Recv
			// and MPIR_Reduce_local do (and Open MPI's generic tree takes
			// its children in order): a child whose message arrives first
			// still waits its turn. (They were reduced in arrival order,
			// which on 5 ranks finished a reduction sooner than MPICH.)
			var prev []int32 // the child before (those before it are before it)
			if k := len(s.children); k > 0 {
				prev = s.children[k-1:]
			}
			s.children = append(s.children, b.recvReduce(mod(v+m+s.root, s.p), s.tag, all, prev...))
			return true
		}
	}
	s.done = true
	return false
}

// finals: the root's result is in place once every child is reduced.
func (s *binomialReduce) finals() []int32 { return s.last() }

// last returns the ops that end the rank's part: the send to the parent,
// or at the root every child's reduction.
func (s *binomialReduce) last() []int32 {
	if s.sent >= 0 {
		return []int32{s.sent}
	}
	return s.children
}

// binomialBcast: the relative rank v receives from v minus its lowest set
// bit, then sends to v+m for every lower power of two m, largest first
// (MPICH's binomial broadcast).
type binomialBcast struct {
	r, p, root int
	n          int64
	tag        int
	after      []int32 // ops the receive (at the root: the sends) must follow
	mask       int
	stage      int // 0 receive, 1 send, 2 done
}

func newBinomialBcast(r, p, root int, n int64, tag int, after []int32) binomialBcast {
	return binomialBcast{r: r, p: p, root: root, n: n, tag: tag, after: after, mask: 1}
}

func (s *binomialBcast) step(b *builder) bool {
	v := mod(s.r-s.root, s.p)
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		for s.mask < s.p {
			if v&s.mask != 0 {
				s.after = []int32{b.recv(mod(v-s.mask+s.root, s.p), s.tag, all, s.after...)}
				break
			}
			s.mask <<= 1
		}
		s.mask >>= 1
		s.stage = 1
		return true
	case 1:
		for ; s.mask > 0; s.mask >>= 1 {
			if v+s.mask < s.p {
				b.send(mod(v+s.mask+s.root, s.p), s.tag, all, s.after...)
				s.mask >>= 1
				return true
			}
		}
		s.stage = 2
		return true
	}
	return false
}

// reduceBcast: allreduce as a binomial reduce to rank 0 followed by a
// binomial broadcast from rank 0.
type reduceBcast struct {
	red   binomialReduce
	bc    binomialBcast
	stage int
}

func (s *reduceBcast) step(b *builder) bool {
	if s.stage == 0 {
		if s.red.step(b) {
			return true
		}
		s.bc = newBinomialBcast(s.red.r, s.red.p, 0, s.red.n, 1, s.red.last())
		s.stage = 1
	}
	return s.bc.step(b)
}

// ringAllgather: at step k rank r passes block r-k to r+1 and receives
// block r-k-1 from r-1.
type ringAllgather struct {
	r, p int
	n    int64
	k    int
	last stepEnd
}

func (s *ringAllgather) step(b *builder) bool {
	if s.k >= s.p-1 {
		return false
	}
	s.last = b.exchange(mod(s.r+1, s.p), mod(s.r-1, s.p), s.k, block(0, s.n, s.p, mod(s.r-s.k, s.p)), block(0, s.n, s.p, mod(s.r-s.k-1, s.p)), false, s.last[:]...)
	s.k++
	return true
}

// ringReduceScatter: at step k rank r sends its partial block r-k-1 to r+1
// and reduces block r-k-2 from r-1, so that after p-1 steps it holds the
// full sum of block r.
type ringReduceScatter struct {
	r, p int
	n    int64
	k    int
	last stepEnd
}

func (s *ringReduceScatter) step(b *builder) bool {
	if s.k >= s.p-1 {
		return false
	}
	s.last = b.exchange(mod(s.r+1, s.p), mod(s.r-1, s.p), s.k, block(0, s.n, s.p, mod(s.r-s.k-1, s.p)), block(0, s.n, s.p, mod(s.r-s.k-2, s.p)), true, s.last[:]...)
	s.k++
	return true
}

// pairwiseAlltoall: rank r first copies its own block, then at step i
// exchanges with one partner: r XOR i when p is a power of two, otherwise
// it sends to r+i and receives from r-i (MPICH's pairwise exchange,
// alltoall_intra_pairwise.c). Open MPI's (shift: Params.Library
// ompiBase, as its selectors run it) sends to r+i and receives from
// r-i at every p, and copies its own block last (step p of
// ompi_coll_base_alltoall_intra_pairwise, a sendrecv with itself; collsim
// ran MPICH's XOR partners for Open MPI: an audit). Each step is an
// MPI_Sendrecv, after the previous one (see exchange).
type pairwiseAlltoall struct {
	r, p  int
	c     int64 // elements per pair
	i     int
	shift bool
	last  stepEnd
}

// ompiBase is the Params.Library with which an algorithm runs as Open
// MPI's coll/base function of that name does where it differs from
// MPICH's (pairwise's partners, Rabenseifner's fold); Open MPI's
// selectors set it.
const ompiBase = "ompi"

func newPairwiseAlltoall(p Params, r int) *pairwiseAlltoall {
	return &pairwiseAlltoall{r: r, p: p.Ranks, c: p.Count, last: noEnd, shift: p.OpenMPIBase()}
}

func (s *pairwiseAlltoall) step(b *builder) bool {
	if s.i >= s.p {
		return false
	}
	k := s.i // the partner's distance: 0 is the rank itself
	if s.shift {
		k = (s.i + 1) % s.p // 1, 2, ..., p-1, then itself
	}
	to, from := mod(s.r+k, s.p), mod(s.r-k, s.p)
	if !s.shift && s.p&(s.p-1) == 0 {
		to, from = s.r^k, s.r^k
	}
	out := sim.Region{Buf: 0, Off: int64(to) * s.c, Count: s.c}
	in := sim.Region{Buf: 1, Off: int64(from) * s.c, Count: s.c}
	if k == 0 {
		// Its own block: a local copy, as the libraries' sendrecv to
		// oneself is (Open MPI's after the exchanges).
		s.last = only(b.copy(out, in, s.last[:]...))
	} else {
		s.last = b.exchange(to, from, k, out, in, false, s.last[:]...)
	}
	s.i++
	return true
}

// twoProcsAlltoall is Open MPI's alltoall for two ranks
// (ompi_coll_base_alltoall_intra_two_procs, which its fixed rules pick on
// 2 ranks: 4.0's at every size, 4.1's at some): one MPI_Sendrecv with the
// other rank, then the
// rank's own block copied locally. Pairwise on 2 ranks moves the same, the
// copy first.
type twoProcsAlltoall struct {
	r    int
	c    int64 // elements per pair
	done bool
}

func (s *twoProcsAlltoall) step(b *builder) bool {
	if s.done {
		return false
	}
	other := s.r ^ 1
	block := func(buf uint8, owner int) sim.Region {
		return sim.Region{Buf: buf, Off: int64(owner) * s.c, Count: s.c}
	}
	end := b.exchange(other, other, 0, block(0, other), block(1, other), false)
	b.copy(block(0, s.r), block(1, s.r), end[:]...)
	s.done = true
	return true
}

// linearAlltoall posts every receive, from r+1, r+2, ..., then every send,
// to r-1, r-2, ... (Open MPI's basic linear,
// ompi_coll_base_alltoall_intra_basic_linear; collsim sent to r+1, r+2,
// ...: an audit): no step waits for another, and the sends are
// concurrent (sim.Op.Concurrent): they share the NIC rather than leave
// one after another. Rank r's own block is copied first, locally, as Open
// MPI does.
type linearAlltoall struct {
	r, p int
	c    int64
	done bool
}

func (s *linearAlltoall) step(b *builder) bool {
	if s.done {
		return false
	}
	b.copy(sim.Region{Buf: 0, Off: int64(s.r) * s.c, Count: s.c}, sim.Region{Buf: 1, Off: int64(s.r) * s.c, Count: s.c})
	for i := 1; i < s.p; i++ {
		from := mod(s.r+i, s.p)
		b.recv(from, 0, sim.Region{Buf: 1, Off: int64(from) * s.c, Count: s.c})
	}
	for i := 1; i < s.p; i++ {
		to := mod(s.r-i, s.p)
		b.sendConcurrent(to, 0, sim.Region{Buf: 0, Off: int64(to) * s.c, Count: s.c})
	}
	s.done = true
	return true
}

// disseminationBarrier: in round k every rank signals r+2^k and waits for
// r-2^k (Hensgen, Finkel, Manber 1988); after ceil(log2 p) rounds every
// rank has heard, directly or not, from every other.
type disseminationBarrier struct {
	r, p int
	dist int
	last stepEnd
}

func (s *disseminationBarrier) step(b *builder) bool {
	if s.dist >= s.p {
		return false
	}
	tag := ceilLog2(s.dist + 1)
	// Barrier messages are empty; in data mode they carry the sender's
	// knowledge vector (Count p, Bytes 0) so the check can prove the barrier.
	know := sim.Region{Count: int64(s.p)}
	s.last = b.exchange(mod(s.r+s.dist, s.p), mod(s.r-s.dist, s.p), tag, know, know, true, s.last[:]...)
	s.dist *= 2
	return true
}

// ompiBarrierRD is Open MPI's recursive-doubling barrier
// (coll_base_barrier.c, ompi_coll_base_barrier_intra_recursivedoubling,
// the same in 4.0.7, 4.1.8 and 5.0.10). With adj the largest power of two
// up to p, a rank r >= adj sends to r-adj and receives from it in one
// MPI_Sendrecv; a rank r < p-adj first receives that message, then the
// ranks below adj exchange with r XOR 1, 2, ..., and r < p-adj ends with a
// synchronous send to r+adj, the message that rank's receive waits for.
// The synchronous send completes once the receiver has matched it and its
// acknowledgement is back: collsim sends that acknowledgement as an empty
// message after the receive, so the send's rank waits a latency more. (It
// ran MPICH's fold instead, even ranks below 2(p-adj) into r+1, which
// pairs 0 with 1 where Open MPI pairs adj with 0: an audit.)
type ompiBarrierRD struct {
	r, p, adj int
	stage     int // 0 the fold, 1 the rounds, 2 the hand-back, 3 done
	mask      int
	last      stepEnd
}

func newOmpiBarrierRD(r, p int) *ompiBarrierRD {
	return &ompiBarrierRD{r: r, p: p, adj: floorPow2(p), last: noEnd}
}

func (s *ompiBarrierRD) step(b *builder) bool {
	// Every message carries the sender's knowledge vector in data mode
	// (Count p, no bytes), by which the check proves the barrier.
	know := sim.Region{Count: int64(s.p)}
	final := 1 + ceilLog2(s.adj) // the hand-back's tag; its acknowledgement's is final+1
	switch s.stage {
	case 0:
		s.stage, s.mask = 1, 1
		switch {
		case s.r >= s.adj:
			low := s.r - s.adj
			b.send(low, 0, know)
			got := b.recvReduce(low, final, know)
			b.send(low, final+1, know, got) // the acknowledgement
			s.stage = 3
		case s.r < s.p-s.adj:
			s.last = only(b.recvReduce(s.r+s.adj, 0, know))
		}
	case 1:
		if s.mask >= s.adj {
			s.stage = 2
			return true
		}
		peer := s.r ^ s.mask
		s.last = b.exchange(peer, peer, 1+ceilLog2(s.mask), know, know, true, s.last[:]...)
		s.mask <<= 1
	case 2:
		if s.r < s.p-s.adj {
			high := s.r + s.adj
			sent := b.send(high, final, know, s.last[:]...)
			b.recvReduce(high, final+1, know, sent)
		}
		s.stage = 3
	default:
		return false
	}
	return true
}
