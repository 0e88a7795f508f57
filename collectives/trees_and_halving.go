package collectives

import (
	"fmt"

	"github.com/collsim/collsim/sim"
)

// pow2Only refuses non-powers of two, naming what to use instead.
func pow2Only(alt string) func(p Params) error {
	return func(p Params) error {
		if p.Ranks&(p.Ranks-1) != 0 {
			return &Unsupported{Reason: fmt.Sprintf("this algorithm needs a power-of-two number of ranks, not %d; use %s", p.Ranks, alt)}
		}
		return nil
	}
}

// rdAllgather: partners at distance 1, 2, 4, ... exchange everything they
// have gathered, which doubles each time (for powers of two; Thakur et al.
// 2005).
type rdAllgather struct {
	r, p int
	n    int64
	mask int
	last stepEnd
}

func (s *rdAllgather) step(b *builder) bool {
	if s.mask == 0 {
		s.mask = 1
	}
	if s.mask >= s.p {
		return false
	}
	peer := s.r ^ s.mask
	mine, theirs := s.r&^(s.mask-1), peer&^(s.mask-1)
	tag := ceilLog2(s.mask + 1)
	s.last = b.exchange(peer, peer, tag, blocks(0, s.n, s.p, mine, mine+s.mask), blocks(0, s.n, s.p, theirs, theirs+s.mask), false, s.last[:]...)
	s.mask <<= 1
	return true
}

// rhReduceScatter: recursive halving (Thakur et al. 2005). With pof2 the
// largest power of two <= p and rem = p - pof2, each even rank below 2 rem
// first folds its whole vector into the odd rank above it; the pof2
// remaining ranks (new rank v stands for ranks 2v and 2v+1 if v < rem, else
// for rank v+rem) then halve: at distance pof2/2, ..., 1 partners each keep
// the half of their block range that holds their own blocks, reducing the
// partner's copy of it; last, each odd rank hands its folded partner its
// block. For powers of two there is no fold.
type rhReduceScatter struct {
	foldPhase
	n      int64
	mask   int
	lo, hi int // new ranks whose blocks this rank still holds
	last   stepEnd
	stage  int
}

// firstBlock is the first block that new rank v stands for.
func (s *rhReduceScatter) firstBlock(v int) int {
	if v < s.rem {
		return 2 * v
	}
	return v + s.rem
}

// span returns the region of the blocks that new ranks lo..hi-1 stand for.
func (s *rhReduceScatter) span(lo, hi int) sim.Region {
	return blocks(0, s.n, s.p, s.firstBlock(lo), s.firstBlock(hi))
}

func (s *rhReduceScatter) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		s.last = only(s.pre(b, all))
		s.stage, s.mask, s.lo, s.hi = 1, s.pof2/2, 0, s.pof2
		if s.newrank < 0 {
			s.stage = 2
		}
	case 1:
		if s.mask < 1 {
			s.stage = 2
			return true
		}
		peer := s.real(s.newrank ^ s.mask)
		mid := (s.lo + s.hi) / 2
		keepLo, keepHi, giveLo, giveHi := s.lo, mid, mid, s.hi
		if s.newrank&s.mask != 0 {
			keepLo, keepHi, giveLo, giveHi = mid, s.hi, s.lo, mid
		}
		tag := 1 + ceilLog2(s.mask+1)
		s.last = b.exchange(peer, peer, tag, s.span(giveLo, giveHi), s.span(keepLo, keepHi), true, s.last[:]...)
		s.lo, s.hi = keepLo, keepHi
		s.mask >>= 1
	case 2: // hand the folded rank its block
		s.stage = 3
		mine := block(0, s.n, s.p, s.r)
		switch {
		case s.r >= 2*s.rem:
		case s.newrank < 0:
			b.recv(s.r+1, 100, mine, s.last[:]...)
		default:
			b.send(s.r-1, 100, block(0, s.n, s.p, s.r-1), s.last[:]...)
		}
	default:
		return false
	}
	return true
}

// knomialBcast: a k-ary generalisation of the binomial tree (radix 4): the
// relative rank v receives from v minus its lowest non-zero base-k digit,
// then sends to v + j k^i for every lower digit position i, highest first,
// and j = 1..k-1 (Open MPI's ompi_coll_base_topo_build_kmtree order).
// Fewer levels than binomial (log_k p), more sends each.
type knomialBcast struct {
	r, p, root, k int
	n             int64
	done          bool
}

func (s *knomialBcast) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	v := mod(s.r-s.root, s.p)
	all := sim.Region{Count: s.n}
	got := int32(-1)
	span := 1 // the subtree of v spans k^i ranks below its lowest non-zero digit
	for span < s.p && (v/span)%s.k == 0 {
		span *= s.k
	}
	if v > 0 {
		digit := (v / span) % s.k
		got = b.recv(mod(v-digit*span+s.root, s.p), 0, all)
	}
	for i := span / s.k; i >= 1; i /= s.k {
		for j := 1; j < s.k; j++ {
			if c := v + j*i; c < s.p {
				b.send(mod(c+s.root, s.p), 0, all, got)
			}
		}
	}
	return true
}

// treeOf returns the parent and children of relative rank v in a binary
// tree (heap layout).
func treeOf(v, p int) (parent int, children []int) {
	parent = -1
	if v > 0 {
		parent = (v - 1) / 2
	}
	for _, c := range []int{2*v + 1, 2*v + 2} {
		if c < p {
			children = append(children, c)
		}
	}
	return parent, children
}

// binomialTreeOf returns the parent and children of relative rank v in the
// binomial tree of reduce/binomial (Open MPI's in-order binomial tree,
// ompi_coll_base_topo_build_in_order_bmtree): the parent is v without its
// lowest set bit, the children v+1, v+2, v+4, ... below that bit, in that
// order.
func binomialTreeOf(v, p int) (parent int, children []int) {
	parent = -1
	if v > 0 {
		parent = v & (v - 1)
	}
	for m := 1; m < p && (v == 0 || m < v&-v); m <<= 1 {
		if v+m < p {
			children = append(children, v+m)
		}
	}
	return parent, children
}

// segmentedTree runs a segmented binary-tree bcast or reduce in one of two
// styles (and, lock-step, a segmented binomial-tree reduce). Event-driven (ADAPT, Luo et al. 2018): each segment moves on as
// soon as it arrives (bcast) or as soon as all children's copies are
// reduced (reduce), so a delayed rank delays only what passes through it;
// as Open MPI's ADAPT does, a rank keeps at most adaptRecvs receives posted
// per peer and adaptSends sends in flight per peer (its defaults,
// coll_adapt_ibcast.c and coll_adapt_ireduce.c: max_recv_requests 3,
// max_send_requests 2): segment k's receive from a peer waits for the
// receive of segment k-3 from it, and its send to a peer for the send of
// segment k-2 to it. Lock-step (the classic segmented tree): segment k+1
// starts only once everything of segment k on this rank is done, as with
// an MPI_Waitall per step.
type segmentedTree struct {
	c          Collective
	lockstep   bool
	binomial   bool // the tree is binomialTreeOf's, not the binary heap
	r, p, root int
	n, seg     int64
	k, nseg    int
	prevStep   []int32
	reduced    []int32 // a reduce's root: every reduction of every segment
	// ADAPT's last receives and sends, per peer (parent first, then
	// children): the ops the window of segments in flight waits on.
	recvs, sends [3][]int32
}

// ADAPT's windows: receives posted and sends in flight per peer.
const (
	adaptRecvs = 3
	adaptSends = 2
)

// window returns the op a new one in a window of w on peer i must wait
// for: the one w before it, or -1.
func window(ops *[3][]int32, i, w int) int32 {
	if len(ops[i]) < w {
		return -1
	}
	return ops[i][len(ops[i])-w]
}

// finals names the ops after which all of the rank's are done. A reduce's
// root is done when every segment of every child is in. In lock step the
// last step's ops wait for all before them. ADAPT's receives on a peer wait
// only for the one adaptRecvs before, and its sends for the one adaptSends
// before, so the last few on each peer stand for all; on a leaf of the
// bcast the last receive alone would leave two earlier segments landing
// after what follows the bcast has started.
func (s *segmentedTree) finals() []int32 {
	if len(s.reduced) > 0 {
		return s.reduced
	}
	if s.lockstep {
		return s.prevStep
	}
	var fin []int32
	for i := range s.recvs {
		fin = append(fin, s.recvs[i][max(0, len(s.recvs[i])-adaptRecvs):]...)
		fin = append(fin, s.sends[i][max(0, len(s.sends[i])-adaptSends):]...)
	}
	return fin
}

func (s *segmentedTree) step(b *builder) bool {
	if s.k >= s.nseg || s.p == 1 {
		return false
	}
	v := mod(s.r-s.root, s.p)
	parent, children := treeOf(v, s.p)
	if s.binomial {
		parent, children = binomialTreeOf(v, s.p)
	}
	abs := func(x int) int { return mod(x+s.root, s.p) }
	seg := segmentOf(0, s.n, s.seg, s.k)
	// record keeps an op in ADAPT's window on peer i; lock step keeps
	// none (and a binomial tree has more children than the windows).
	record := func(ops *[3][]int32, i int, op int32) {
		if !s.lockstep {
			ops[i] = append(ops[i], op)
		}
	}
	var after []int32
	if s.lockstep {
		after = s.prevStep
	}
	// recvWait and sendWait: ADAPT's window on peer i (0 the parent, 1 and
	// 2 the children); nothing in lock step, which waits for the step.
	recvWait := func(i int) int32 {
		if s.lockstep {
			return -1
		}
		return window(&s.recvs, i, adaptRecvs)
	}
	sendWait := func(i int) int32 {
		if s.lockstep {
			return -1
		}
		return window(&s.sends, i, adaptSends)
	}
	var step []int32
	if s.c == Bcast {
		got := int32(-1)
		if parent >= 0 {
			got = b.recv(abs(parent), s.k, seg, append([]int32{recvWait(0)}, after...)...)
			step = append(step, got)
			record(&s.recvs, 0, got)
		}
		for i, c := range children {
			sent := b.send(abs(c), s.k, seg, append([]int32{got, sendWait(1 + i)}, after...)...)
			step = append(step, sent)
			record(&s.sends, 1+i, sent)
		}
	} else {
		var reduced []int32
		for i, c := range children {
			rr := b.recvReduce(abs(c), s.k, seg, append([]int32{recvWait(1 + i)}, after...)...)
			reduced = append(reduced, rr)
			step = append(step, rr)
			record(&s.recvs, 1+i, rr)
			if parent < 0 {
				s.reduced = append(s.reduced, rr)
			}
		}
		if parent >= 0 {
			sent := b.send(abs(parent), s.k, seg, append(append(reduced, sendWait(0)), after...)...)
			step = append(step, sent)
			record(&s.sends, 0, sent)
		}
	}
	s.prevStep = step
	s.k++
	return true
}

// groupAligned is the pairwise exchange reordered for a Dragonfly (or any
// machine of equal groups of GroupSize ranks): in step (dg, dl) rank (g, l)
// sends to (g+dg, l+dl) and receives from (g-dg, l-dl), with dg in the
// outer loop, so during a run of GroupSize steps every rank of group g
// talks to group g+dg: the traffic follows the all-to-all wiring of the
// groups instead of spreading over all global links at once (the idea of
// aligning FFT's alltoall with Dragonfly's groups).
type groupAligned struct {
	r, p, gs int
	c        int64
	i        int
	last     stepEnd
}

func (s *groupAligned) step(b *builder) bool {
	if s.i >= s.p {
		return false
	}
	groups := s.p / s.gs
	dg, dl := s.i/s.gs, s.i%s.gs
	g, l := s.r/s.gs, s.r%s.gs
	to := mod(g+dg, groups)*s.gs + mod(l+dl, s.gs)
	from := mod(g-dg, groups)*s.gs + mod(l-dl, s.gs)
	out := sim.Region{Buf: 0, Off: int64(to) * s.c, Count: s.c}
	in := sim.Region{Buf: 1, Off: int64(from) * s.c, Count: s.c}
	if s.i == 0 { // its own block: a local copy, as pairwise's
		s.last = only(b.copy(out, in))
	} else {
		s.last = b.exchange(to, from, s.i, out, in, false, s.last[:]...)
	}
	s.i++
	return true
}

// binomialGatherScatter moves blocks along a binomial tree rooted at the
// root, over relative ranks v = r - root (mod p), as MPICH's
// MPIR_Gather_intra_binomial and MPIR_Scatter_intra_binomial and Open MPI's
// binomial gather and scatter (ompi_coll_base_topo_build_in_order_bmtree:
// the children of v are v+1, v+2, v+4, ... below its lowest set bit) do.
// In gather the rank whose lowest set bit is m sends the blocks of its
// subtree, relative ranks [v, v+m), to v-m once it has received its
// children's, one after another, smallest first; scatter runs the same tree
// the other way, each rank handing its children their subtrees largest
// first.
//
// A subtree's blocks are contiguous in relative order, which wraps around
// the vector when the root is not 0: there, as the libraries do in a
// temporary buffer, the subtrees travel in a scratch buffer holding the
// vector rotated to start at the root's block (rotated), a rank with
// children copies its own block between it and its data, and the root
// copies the vector in (scatter) or out (gather) in two pieces. With root 0
// the rotation is none, and everything moves in place.
type binomialGatherScatter struct {
	c       Collective
	r, p    int
	root, v int
	n       int64
	stage   int
	mask    int
	last    int32
}

func newBinomialGatherScatter(c Collective, p Params, r int) *binomialGatherScatter {
	return &binomialGatherScatter{c: c, r: r, p: p.Ranks, root: p.Root, v: mod(r-p.Root, p.Ranks), n: p.Count, last: -1}
}

// binomialScratch: with a root other than 0, the rotated vector.
func binomialScratch(p Params) []int64 {
	if p.Root == 0 {
		return nil
	}
	return []int64{p.Count}
}

// rotated is relative ranks [lo, hi)'s blocks where the subtrees travel:
// the scratch buffer's rotated vector, or the data itself with root 0.
func (s *binomialGatherScatter) rotated(lo, hi int) sim.Region {
	if s.root == 0 {
		return blocks(0, s.n, s.p, lo, hi)
	}
	at := func(j int) int64 {
		if j == s.p {
			return s.n
		}
		off, rootOff := block(0, s.n, s.p, (j+s.root)%s.p).Off, block(0, s.n, s.p, s.root).Off
		if j < s.p-s.root {
			return off - rootOff // blocks root..p-1 first
		}
		return off + s.n - rootOff // then blocks 0..root-1
	}
	return sim.Region{Buf: 1, Off: at(lo), Count: at(hi) - at(lo)}
}

// abs is relative rank v's rank.
func (s *binomialGatherScatter) abs(v int) int { return (v + s.root) % s.p }

// lowestBit is the lowest set bit of v, or the least power of two not
// below p for the root (v = 0): the size its subtree may have.
func (s *binomialGatherScatter) lowestBit() int {
	m := 1
	for m < s.p && s.v&m == 0 {
		m <<= 1
	}
	return m
}

// wholeVector copies the root's data to the rotated scratch (scatter) or
// back (gather), but for its own block, which stays: blocks root+1..p-1
// and 0..root-1, relative ranks [1, p-root) and [p-root, p).
func (s *binomialGatherScatter) wholeVector(b *builder, toScratch bool) int32 {
	var done []int32
	for _, part := range [][2]int{{1, s.p - s.root}, {s.p - s.root, s.p}} {
		lo, hi := part[0], part[1]
		if lo >= hi {
			continue
		}
		data := blocks(0, s.n, s.p, s.abs(lo), s.abs(hi-1)+1)
		if toScratch {
			done = append(done, b.copy(data, s.rotated(lo, hi), s.last))
		} else {
			done = append(done, b.copy(s.rotated(lo, hi), data, s.last))
		}
	}
	return b.join(done)
}

func (s *binomialGatherScatter) step(b *builder) bool {
	if s.c == Gather {
		return s.gather(b)
	}
	return s.scatter(b)
}

func (s *binomialGatherScatter) gather(b *builder) bool {
	switch s.stage {
	case 0:
		s.stage, s.mask = 1, 1
		if s.root != 0 && s.v != 0 && s.v&1 == 0 {
			// A rank with children gathers its subtree in the scratch
			// buffer, its own block first.
			s.last = b.copy(block(0, s.n, s.p, s.r), s.rotated(s.v, s.v+1))
		}
		return true
	case 1:
		if s.mask >= s.p {
			s.stage = 2
			return true
		}
		tag := ceilLog2(s.mask + 1)
		if s.v&s.mask != 0 {
			out := s.rotated(s.v, min(s.v+s.mask, s.p))
			if s.mask == 1 {
				out = block(0, s.n, s.p, s.r) // a leaf sends its block as it is
			}
			b.send(s.abs(s.v-s.mask), tag, out, s.last)
			s.stage = 3
			return true
		}
		if s.v+s.mask < s.p {
			s.last = b.recv(s.abs(s.v+s.mask), tag, s.rotated(s.v+s.mask, min(s.v+2*s.mask, s.p)), s.last)
		}
		s.mask <<= 1
		return true
	case 2: // the root has every block
		s.stage = 3
		if s.root != 0 {
			s.wholeVector(b, false)
			return true
		}
	}
	return false
}

func (s *binomialGatherScatter) scatter(b *builder) bool {
	switch s.stage {
	case 0:
		s.stage, s.mask = 1, s.lowestBit()
		if s.v == 0 {
			if s.root != 0 {
				s.last = s.wholeVector(b, true)
			}
			return true
		}
		tag := ceilLog2(s.mask + 1)
		if s.mask == 1 { // a leaf receives its block in place
			b.recv(s.abs(s.v-1), tag, block(0, s.n, s.p, s.r))
			s.stage = 2
			return true
		}
		s.last = b.recv(s.abs(s.v-s.mask), tag, s.rotated(s.v, min(s.v+s.mask, s.p)))
		if s.root != 0 {
			b.copy(s.rotated(s.v, s.v+1), block(0, s.n, s.p, s.r), s.last)
		}
		return true
	case 1: // hand each child its subtree, largest first
		for s.mask >>= 1; s.mask >= 1; s.mask >>= 1 {
			if s.v+s.mask < s.p {
				s.last = b.send(s.abs(s.v+s.mask), ceilLog2(s.mask+1), s.rotated(s.v+s.mask, min(s.v+2*s.mask, s.p)), s.last)
				return true
			}
		}
		s.stage = 2
		return true
	}
	return false
}

func newSegmentedTree(c Collective, lockstep bool, p Params, r int) *segmentedTree {
	seg := defaultSegment(p)
	return &segmentedTree{c: c, lockstep: lockstep, r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: seg, nseg: segments(p.Count, seg)}
}

// newSegmentedBinomial is the lock-step segmented reduce up the binomial
// tree.
func newSegmentedBinomial(p Params, r int) *segmentedTree {
	t := newSegmentedTree(Reduce, true, p, r)
	t.binomial = true
	return t
}

// scatterThen: the root scatters one block to each rank (linear), then an
// allgather rebuilds the vector everywhere (van de Geijn's bcast for long
// messages; the ring or recursive-doubling variant).
type scatterThen struct {
	r, p, root int
	n          int64
	stage      int
	gather     afterStepper
}

// afterStepper is a stepper whose first ops can be made to follow an op.
type afterStepper interface {
	stepper
	follow(op int32)
}

func (s *rdAllgather) follow(op int32)   { s.last = only(op) }
func (s *ringAllgather) follow(op int32) { s.last = only(op) }

func (s *scatterThen) step(b *builder) bool {
	if s.stage == 0 {
		s.stage = 1
		if s.r == s.root {
			for i := 1; i < s.p; i++ {
				peer := mod(s.root+i, s.p)
				b.send(peer, 1000, block(0, s.n, s.p, peer))
			}
			return true
		}
		s.gather.follow(b.recv(s.root, 1000, block(0, s.n, s.p, s.r)))
		return true
	}
	return s.gather.step(b)
}

// pipelinedBinary is Open MPI's segmented binary-tree bcast
// (ompi_coll_base_bcast_intra_bintree, which runs
// ompi_coll_base_bcast_intra_generic): a rank with a parent keeps two
// receives posted, posting segment k+1's before it waits for segment k's;
// it sends segment k to its children once it is in and waits for those
// sends (an MPI_Waitall per segment) before it posts the next receive. So
// segment k's receive is posted once the sends of segment k-2 are done (on
// a leaf, once segment k-2 is in), and segment k's sends start once it is
// in and segment k-1's sends are done. Ops come in Open MPI's program
// order: receive k+1, then the sends of k.
type pipelinedBinary struct {
	r, p, root int
	n, seg     int64
	k, nseg    int
	// The receives of the two segments before k, and the sends of the one
	// before k (-1 and nil: none).
	recvs [2]int32 // [k-1, k-2]
	sent  []int32
	next  int32 // segment k's receive, posted a step ahead
}

func newPipelinedBinary(p Params, r int) *pipelinedBinary {
	seg := defaultSegment(p)
	return &pipelinedBinary{r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: seg, nseg: segments(p.Count, seg), recvs: [2]int32{-1, -1}, next: -1}
}

// finals: the last two receives (a leaf's may land in either order) and
// the last sends, which follow every earlier send.
func (s *pipelinedBinary) finals() []int32 {
	return nonNegative(append([]int32{s.recvs[0], s.recvs[1]}, s.sent...)...)
}

func (s *pipelinedBinary) step(b *builder) bool {
	if s.k >= s.nseg || s.p == 1 {
		return false
	}
	v := mod(s.r-s.root, s.p)
	parent, children := treeOf(v, s.p)
	abs := func(x int) int { return mod(x+s.root, s.p) }
	// post returns segment j's receive, posted after the sends of j-2 (a
	// leaf: after receive j-2, here the receive two back from j).
	post := func(j int, twoBack int32, sendsTwoBack []int32) int32 {
		if len(children) == 0 {
			return b.recv(abs(parent), j, segmentOf(0, s.n, s.seg, j), twoBack)
		}
		return b.recv(abs(parent), j, segmentOf(0, s.n, s.seg, j), sendsTwoBack...)
	}
	got := int32(-1)
	if parent >= 0 {
		if s.k == 0 {
			s.next = post(0, -1, nil)
		}
		got = s.next
		if s.k+1 < s.nseg {
			// Segment k+1: two back from it are segment k-1's receive and sends.
			s.next = post(s.k+1, s.recvs[0], s.sent)
		}
	}
	var sent []int32
	for _, c := range children {
		sent = append(sent, b.send(abs(c), s.k, segmentOf(0, s.n, s.seg, s.k), append([]int32{got}, s.sent...)...))
	}
	s.recvs = [2]int32{got, s.recvs[0]}
	s.sent = sent
	s.k++
	return true
}

// pipelinedReduce is Open MPI's segmented binary-tree reduce
// (ompi_coll_base_reduce_intra_binary, which runs
// ompi_coll_base_reduce_generic with no limit on outstanding requests),
// step by step as its loops run. A rank with children takes, for each
// segment, its children one after another: it posts the receive of the
// next (child, segment) pair into one of two scratch buffers, waits for
// the one posted before, reduces it into its vector (ompi_op_reduce), and
// once a segment's last child is reduced sends that segment to its parent
// with a blocking send; each receive is posted once everything before it
// in that loop is done. A leaf sends its segments one blocking send after
// another. Iteration t handles pair t (segment t / children, child t mod
// children) and reduces pair t-1.
type pipelinedReduce struct {
	r, p, root int
	n, seg     int64
	nseg       int
	t          int
	// The ops iteration t waits for before its receive: the receive
	// waited for, the reduction and the send of iteration t-1; the
	// receive posted by iteration t-1.
	before []int32
	posted int32
	last   int32 // the rank's last op: its result or its part is done
}

func newPipelinedReduce(p Params, r int) *pipelinedReduce {
	seg := min(defaultSegment(p), max(p.Count, 1)) // the scratch's halves: pipelinedReduceScratch
	return &pipelinedReduce{r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: seg, nseg: segments(p.Count, seg), posted: -1, last: -1}
}

// pipelinedReduceScratch is the two segments' receive buffers (a segment
// holds at most the vector).
func pipelinedReduceScratch(p Params) []int64 {
	return []int64{2 * min(defaultSegment(p), max(p.Count, 1))}
}

func (s *pipelinedReduce) finals() []int32 { return nonNegative(s.last) }

func (s *pipelinedReduce) step(b *builder) bool {
	if s.p == 1 {
		return false
	}
	v := mod(s.r-s.root, s.p)
	parent, children := treeOf(v, s.p)
	abs := func(x int) int { return mod(x+s.root, s.p) }
	own := func(k int) sim.Region { return segmentOf(0, s.n, s.seg, k) }
	if len(children) == 0 { // a leaf: segment t, after the send of t-1
		if s.t >= s.nseg {
			return false
		}
		s.last = b.send(abs(parent), s.t, own(s.t), s.last)
		s.t++
		return true
	}
	m := len(children)
	if s.t > s.nseg*m {
		return false
	}
	scratch := func(t int) sim.Region {
		k := own(t / m)
		return sim.Region{Buf: 1, Off: int64(t%2) * s.seg, Count: k.Count}
	}
	var next int32 = -1
	if k := s.t / m; k < s.nseg {
		next = b.recv(abs(children[s.t%m]), k, scratch(s.t), s.before...)
	}
	var done []int32
	if t := s.t - 1; t >= 0 {
		k := t / m
		red := b.reduceLocal(scratch(t), own(k), append([]int32{s.posted}, s.before...)...)
		s.last, done = red, []int32{s.posted, red}
		if t%m == m-1 && parent >= 0 { // the segment's last child: up to the parent
			s.last = b.send(abs(parent), k, own(k), red)
			done = append(done, s.last)
		}
	}
	s.before, s.posted = done, next
	s.t++
	return true
}
