package collectives

import "github.com/collsim/collsim/sim"

// segmentOf returns segment k of an n-element vector cut into segments of
// seg elements (the last may be shorter), and the number of segments: at
// least one, so that an empty vector still makes one (empty) message.
func segmentOf(buf uint8, n, seg int64, k int) sim.Region {
	off := int64(k) * seg
	return sim.Region{Buf: buf, Off: min(off, n), Count: max(0, min(seg, n-off))}
}

func segments(n, seg int64) int { return int(max(1, (n+seg-1)/seg)) }

// defaultSegment is the pipeline segment used when Params.Segment is 0:
// 64 KiB worth of elements, the order of the MPI libraries' segments.
func defaultSegment(p Params) int64 {
	if p.Segment > 0 {
		return p.Segment
	}
	return max(1, 65536/p.elemSize())
}

// linearRooted covers the flat algorithms around a root: bcast (the root
// sends the vector to r+1, r+2, ...), reduce (the root reduces everyone's
// vector as it arrives), gather (the root receives block j from rank j),
// scatter (the root sends block j to rank j), and allreduce (a linear
// reduce to rank 0, then a linear bcast from it; Open MPI's basic_linear).
// The bcasts' sends are concurrent, as Open MPI's basic linear bcast posts
// them all at once; a linear scatter's go one after another (its blocking
// sends).
type linearRooted struct {
	c          Collective
	r, p, root int
	n          int64
	done       bool
	reduced    []int32 // at a reduce's root: every child's reduction
	// ompi: a reduce's (or an allreduce's) root receives as Open MPI's
	// basic_linear does: the algorithms named basic_linear.
	ompi bool
}

// finals: a linear reduce's root is done when every rank's vector is in.
func (s *linearRooted) finals() []int32 { return s.reduced }

func (s *linearRooted) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	all := sim.Region{Count: s.n}
	if s.r != s.root {
		switch s.c {
		case Bcast:
			b.recv(s.root, 0, all)
		case Reduce:
			b.send(s.root, 0, all)
		case Gather:
			b.send(s.root, 0, block(0, s.n, s.p, s.r))
		case Scatter:
			b.recv(s.root, 0, block(0, s.n, s.p, s.r))
		case Allreduce:
			b.send(s.root, 0, all)
			b.recv(s.root, 1, all)
		}
		return true
	}
	var reduced []int32
	if s.ompi && (s.c == Reduce || s.c == Allreduce) {
		// Open MPI's root takes one vector at a time, from rank p-1 down,
		// each receive posted once the one before is reduced
		// (ompi_coll_base_reduce_intra_basic_linear; an audit measured
		// the root that posts them all up to 1.3x faster).
		last := int32(-1)
		for peer := s.p - 1; peer >= 0; peer-- {
			if peer != s.root {
				last = b.recvReduce(peer, 0, all, last)
				reduced = append(reduced, last)
			}
		}
		if s.c == Reduce {
			s.reduced = reduced
			return true
		}
		for i := 1; i < s.p; i++ {
			b.sendConcurrent(mod(s.root+i, s.p), 1, all, last)
		}
		return true
	}
	for i := 1; i < s.p; i++ {
		peer := mod(s.root+i, s.p)
		switch s.c {
		case Bcast:
			b.sendConcurrent(peer, 0, all)
		case Reduce:
			s.reduced = append(s.reduced, b.recvReduce(peer, 0, all))
		case Gather:
			b.recv(peer, 0, block(0, s.n, s.p, peer))
		case Scatter:
			b.send(peer, 0, block(0, s.n, s.p, peer))
		case Allreduce:
			reduced = append(reduced, b.recvReduce(peer, 0, all))
		}
	}
	if s.c == Allreduce {
		for i := 1; i < s.p; i++ {
			b.sendConcurrent(mod(s.root+i, s.p), 1, all, reduced...)
		}
	}
	return true
}

// binaryBcast: a binary tree over relative ranks, v's children 2v+1 and
// 2v+2; each rank forwards the whole vector once it has it.
type binaryBcast struct {
	r, p, root int
	n          int64
	done       bool
}

func (s *binaryBcast) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	v := mod(s.r-s.root, s.p)
	all := sim.Region{Count: s.n}
	got := int32(-1)
	if v > 0 {
		got = b.recv(mod((v-1)/2+s.root, s.p), 0, all)
	}
	for _, c := range []int{2*v + 1, 2*v + 2} {
		if c < s.p {
			b.send(mod(c+s.root, s.p), 0, all, got)
		}
	}
	return true
}

// chain pipelines segments along the chain of relative ranks 0, 1, ..., p-1:
// a broadcast flows down it (rank v forwards segment k as soon as it has
// it), a reduce flows up it to relative rank 0 (rank v adds segment k of
// v+1's partial sum to its own, then passes it on), and Linear Pipelining's
// allreduce does both at once: segment k goes down as soon as the root has
// reduced it (Hoefler and Moor; the time stays nearly flat in p for long
// vectors).
type chain struct {
	c          Collective
	r, p, root int
	n, seg     int64
	k, nseg    int
	red, bc    int32 // last reduce receive and broadcast receive
	bcBefore   int32 // the broadcast receive before bc
	sentUp     int32
	// bcAll holds every broadcast receive of the allreduce: they wait on
	// the reduction, not on each other, so the last one to be posted need
	// not be the last to land.
	bcAll []int32
}

// finals names the ops that leave the rank's result in place, for a phase
// that follows the chain (the suara and HAN composites run it inside
// another algorithm): the rank's last op is not enough. Above the eager
// limit the send that forwards the last segment can finish before an
// earlier segment's receive has written the vector.
func (s *chain) finals() []int32 {
	v := mod(s.r-s.root, s.p)
	switch {
	case v == 0 && s.c != Bcast:
		return nonNegative(s.red)
	case s.c == Bcast:
		// segment k's receive waits for segment k-2's: the last two
		// cover them all.
		return nonNegative(s.bcBefore, s.bc)
	case s.c == Allreduce:
		return s.bcAll
	}
	return nil
}

// nonNegative lists the ops of ids that exist (-1 stands for none).
func nonNegative(ids ...int32) []int32 {
	out := ids[:0]
	for _, id := range ids {
		if id >= 0 {
			out = append(out, id)
		}
	}
	return out
}

func newChain(c Collective, p Params, r int) *chain {
	seg := defaultSegment(p)
	return &chain{c: c, r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: seg, nseg: segments(p.Count, seg), red: -1, bc: -1, bcBefore: -1, sentUp: -1}
}

func (s *chain) step(b *builder) bool {
	if s.k >= s.nseg || s.p == 1 {
		return false
	}
	v := mod(s.r-s.root, s.p)
	up, down := mod(v-1+s.root, s.p), mod(v+1+s.root, s.p)
	seg := segmentOf(0, s.n, s.seg, s.k)
	if s.c != Bcast { // the reduction climbs towards relative rank 0
		reduced := int32(-1)
		if v < s.p-1 {
			s.red = b.recvReduce(down, 2*s.k, seg, s.red)
			reduced = s.red
		}
		if v > 0 {
			s.sentUp = b.send(up, 2*s.k, seg, reduced)
		}
		s.bc = reduced // at the root, the broadcast of segment k follows its reduction
	}
	if s.c != Reduce { // the broadcast flows away from it
		if v > 0 {
			// Two receives posted, as Open MPI's pipeline keeps them
			// (ompi_coll_base_bcast_intra_generic posts segment k+1's
			// before it waits for segment k's): above the eager limit the
			// next segment's handshake overlaps this one's data.
			after := s.bcBefore
			if s.c != Bcast {
				after = s.bc // linear_pipeline's allreduce: segment k's receive follows its reduction
			}
			s.bcBefore = s.bc
			s.bc = b.recv(up, 2*s.k+1, seg, after, s.sentUp)
			if s.c == Allreduce {
				s.bcAll = append(s.bcAll, s.bc)
			}
		}
		if v < s.p-1 {
			b.send(down, 2*s.k+1, seg, s.bc)
		}
	}
	s.k++
	return true
}

// bruckAllgather: ceil(log2 p) steps; at distance 2^k every rank sends the
// blocks it has (its own and the next 2^k - 1, counted cyclically) to
// r - 2^k and receives as many from r + 2^k (Bruck et al. 1997). Blocks are
// gathered in a rotated scratch buffer (block r first) and copied home at
// the end: any p, no power of two needed.
type bruckAllgather struct {
	r, p  int
	n     int64
	dist  int
	stage int
	last  stepEnd
}

// span is the length of blocks first, first+1, ..., first+count-1 (mod p)
// of the even split of n.
func span(n int64, p, first, count int) int64 {
	if count == 0 {
		return 0
	}
	a := block(0, n, p, first).Off
	if first+count <= p {
		return block(0, n, p, first+count-1).Off + block(0, n, p, first+count-1).Count - a
	}
	return n - a + block(0, n, p, first+count-p-1).Off + block(0, n, p, first+count-p-1).Count
}

func (s *bruckAllgather) step(b *builder) bool {
	switch s.stage {
	case 0: // own block to the front of the scratch buffer
		own := block(0, s.n, s.p, s.r)
		s.last = only(b.copy(own, sim.Region{Buf: 1, Count: own.Count}))
		s.stage, s.dist = 1, 1
	case 1:
		if s.dist >= s.p {
			s.stage = 2
			return true
		}
		cnt := min(s.dist, s.p-s.dist)
		tag := 1 + ceilLog2(s.dist+1)
		out := sim.Region{Buf: 1, Count: span(s.n, s.p, s.r, cnt)}
		in := sim.Region{Buf: 1, Off: span(s.n, s.p, s.r, s.dist), Count: span(s.n, s.p, (s.r+s.dist)%s.p, cnt)}
		s.last = b.exchange(mod(s.r-s.dist, s.p), mod(s.r+s.dist, s.p), tag, out, in, false, s.last[:]...)
		s.dist *= 2
	case 2: // rotate home: scratch holds blocks r, r+1, ..., r-1
		head := span(s.n, s.p, s.r, s.p-s.r) // blocks r..p-1
		start := block(0, s.n, s.p, s.r).Off
		b.copy(sim.Region{Buf: 1, Count: head}, sim.Region{Buf: 0, Off: start, Count: head}, s.last[:]...)
		if head < s.n {
			b.copy(sim.Region{Buf: 1, Off: head, Count: s.n - head}, sim.Region{Buf: 0, Count: s.n - head}, s.last[:]...)
		}
		s.stage = 3
	default:
		return false
	}
	return true
}

// neighborExchange: for an even number of ranks, pairs first swap their
// blocks, then each step passes the two newest blocks to the neighbour on
// alternate sides (Chen et al. 2005): p/2 steps instead of the ring's p-1.
type neighborExchange struct {
	r, p     int
	n        int64
	i        int
	nb       [2]int
	from     [2]int
	off      [2]int
	sendFrom int
	last     stepEnd
}

func newNeighborExchange(r, p int, n int64) *neighborExchange {
	s := &neighborExchange{r: r, p: p, n: n, last: noEnd}
	if r%2 == 0 {
		s.nb = [2]int{mod(r+1, p), mod(r-1, p)}
		s.from = [2]int{r, r}
		s.off = [2]int{2, -2}
	} else {
		s.nb = [2]int{mod(r-1, p), mod(r+1, p)}
		s.from = [2]int{s.nb[0], s.nb[0]}
		s.off = [2]int{-2, 2}
	}
	return s
}

func (s *neighborExchange) step(b *builder) bool {
	if s.p == 1 || s.i >= s.p/2 {
		return false
	}
	if s.i == 0 {
		s.last = b.exchange(s.nb[0], s.nb[0], 0, block(0, s.n, s.p, s.r), block(0, s.n, s.p, s.nb[0]), false)
		s.sendFrom = min(s.r, s.nb[0]) // the pair's first block
		s.i = 1
		return true
	}
	par := s.i % 2
	s.from[par] = mod(s.from[par]+s.off[par], s.p)
	s.last = b.exchange(s.nb[par], s.nb[par], s.i, blocks(0, s.n, s.p, s.sendFrom, s.sendFrom+2), blocks(0, s.n, s.p, s.from[par], s.from[par]+2), false, s.last[:]...)
	s.sendFrom = s.from[par]
	s.i++
	return true
}

// pairwiseReduceScatter: in step i rank r sends its block r+i to rank r+i
// and reduces block r from rank r-i; each step is an MPI_Sendrecv after
// the last (see exchange).
type pairwiseReduceScatter struct {
	r, p int
	n    int64
	i    int
	last stepEnd
}

func (s *pairwiseReduceScatter) step(b *builder) bool {
	if s.i == 0 {
		s.i = 1
	}
	if s.i >= s.p {
		return false
	}
	to, from := mod(s.r+s.i, s.p), mod(s.r-s.i, s.p)
	s.last = b.exchange(to, from, s.i, block(0, s.n, s.p, to), block(0, s.n, s.p, s.r), true, s.last[:]...)
	s.i++
	return true
}

// segmentedRing is Open MPI's segmented ring allreduce
// (ompi_coll_base_allreduce_intra_ring_segmented, coll_base_allreduce.c,
// v4.0.7 to v5.0.10): the ring's reduce-scatter run phase after phase, each
// phase on one piece of every block (the ring's p blocks, the larger
// first), then one ring allgather of the whole blocks. Segments of seg
// elements (--segment, default 1 MiB worth) make SegmentedRingPhases
// phases, and each block is cut in that many near-equal pieces, the larger
// first; a vector under p segments is one phase: the ring.
type segmentedRing struct {
	r, p   int
	n, seg int64
	phases int
	phase  int // the reduce-scatter phase; phases for the allgather
	k      int
	last   stepEnd
}

// SegmentedRingPhases is how many reduce-scatter phases Open MPI's
// segmented ring allreduce runs for count elements on p ranks in segments
// of seg elements: count / (p seg), one more when the remainder is at
// least p and over half of p seg (num_phases in
// ompi_coll_base_allreduce_intra_ring_segmented); at least 1, which Open
// MPI reaches by running the plain ring instead.
func SegmentedRingPhases(count int64, p int, seg int64) int64 {
	if p < 1 || seg < 1 || seg > count/int64(p) {
		return 1 // fewer than p segments: at most one phase
	}
	ps := int64(p) * seg
	k := count / ps
	if rem := count % ps; rem >= int64(p) && rem > ps/2 {
		k++
	}
	return max(k, 1)
}

func newSegmentedRing(p Params, r int) *segmentedRing {
	seg := p.Segment
	if seg == 0 {
		seg = max(1, (1<<20)/p.elemSize())
	}
	return &segmentedRing{r: r, p: p.Ranks, n: p.Count, seg: seg, phases: int(SegmentedRingPhases(p.Count, p.Ranks, seg)), last: noEnd}
}

// piece is this phase's piece of block i: the block split in phases
// near-equal pieces, the larger first (COLL_BASE_COMPUTE_BLOCKCOUNT).
func (s *segmentedRing) piece(i int) sim.Region {
	b := block(0, s.n, s.p, i)
	pc := block(0, b.Count, s.phases, s.phase)
	return sim.Region{Off: b.Off + pc.Off, Count: pc.Count}
}

func (s *segmentedRing) step(b *builder) bool {
	if s.p == 1 || s.phase > s.phases {
		return false
	}
	right, left := mod(s.r+1, s.p), mod(s.r-1, s.p)
	tag := s.phase*(s.p-1) + s.k
	if s.phase < s.phases {
		// Reduce-scatter step k: this phase's piece of block r-k to the
		// right, of block r-k-1 from the left, reduced.
		s.last = b.exchange(right, left, tag, s.piece(mod(s.r-s.k, s.p)), s.piece(mod(s.r-s.k-1, s.p)), true, s.last[:]...)
	} else {
		// Allgather step k: whole block r+1-k to the right, r-k from the
		// left.
		s.last = b.exchange(right, left, tag, block(0, s.n, s.p, mod(s.r+1-s.k, s.p)), block(0, s.n, s.p, mod(s.r-s.k, s.p)), false, s.last[:]...)
	}
	if s.k++; s.k == s.p-1 {
		s.phase, s.k = s.phase+1, 0
	}
	return true
}
