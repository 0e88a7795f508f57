package collectives

import "github.com/collsim/collsim/sim"

// bruckAlltoall keeps the blocks in a working buffer W (buffer 2) indexed
// by distance: W[i] is the block that must travel i ranks forward. As
// MPICH's Bruck does with an indexed datatype, each round packs the blocks
// it moves into buffer 3 with one local copy, sends them, and receives the
// blocks coming in straight into their places in W.
type bruckAlltoall struct {
	r, p  int
	c     int64
	dist  int
	stage int
	waits []int32 // what the next round waits for: the last receive into W (or rotation), and the round's send
}

func (s *bruckAlltoall) region(buf uint8, first, count int) sim.Region {
	return sim.Region{Buf: buf, Off: int64(first) * s.c, Count: int64(count) * s.c}
}

// moved returns the blocks of W whose index has bit dist set, in index
// order: runs of dist blocks, 2 dist apart, from dist on (the last run cut
// at p), as one vector region.
func (s *bruckAlltoall) moved(dist int) sim.Region {
	blocks := 0
	for start := dist; start < s.p; start += 2 * dist {
		blocks += min(dist, s.p-start)
	}
	return sim.Region{Buf: 2, Off: int64(dist) * s.c, Count: int64(blocks) * s.c,
		Block: int64(dist) * s.c, Stride: 2 * int64(dist) * s.c}
}

// reversed returns count blocks of buffer buf in descending order from
// block first: first, first-1, ...
func (s *bruckAlltoall) reversed(buf uint8, first, count int) sim.Region {
	return sim.Region{Buf: buf, Off: int64(first) * s.c, Count: int64(count) * s.c, Block: s.c, Stride: -s.c}
}

func (s *bruckAlltoall) step(b *builder) bool {
	switch s.stage {
	case 0: // W[i] = send[r+i]
		last := b.copy(s.region(0, s.r, s.p-s.r), s.region(2, 0, s.p-s.r))
		if s.r > 0 {
			last = b.copy(s.region(0, 0, s.r), s.region(2, s.p-s.r, s.r), last)
		}
		s.waits = []int32{last}
		s.stage, s.dist = 1, 1
	case 1:
		if s.dist >= s.p {
			s.stage = 2
			return true
		}
		moved := s.moved(s.dist)
		packed := sim.Region{Buf: 3, Count: moved.Count}
		// The pack reads W, which the last round's receive wrote.
		pack := b.copy(moved, packed, b.join(s.waits))
		tag := ceilLog2(s.dist + 1)
		// One MPI_Sendrecv: the next round also waits for the send (see
		// exchange), unless the call overlaps them.
		sent := b.send(mod(s.r+s.dist, s.p), tag, packed, pack)
		s.waits = append(s.waits[:0], b.recv(mod(s.r-s.dist, s.p), tag, moved, pack))
		if !b.overlap {
			s.waits = append(s.waits, sent)
		}
		s.dist *= 2
	case 2: // recv[r-i] = W[i]: W[0..r] lands in blocks r..0, W[r+1..p-1] in p-1..r+1
		ready := b.join(s.waits)
		b.copy(s.region(2, 0, s.r+1), s.reversed(1, s.r, s.r+1), ready)
		if s.r < s.p-1 {
			b.copy(s.region(2, s.r+1, s.p-1-s.r), s.reversed(1, s.p-1, s.p-1-s.r), ready)
		}
		s.stage = 3
	default:
		return false
	}
	return true
}

// linearSync is the linear alltoall in batches of window partners.
type linearSync struct {
	r, p, window int
	c            int64
	i            int
	prev         []int32
}

func (s *linearSync) step(b *builder) bool {
	if s.i >= s.p {
		return false
	}
	var batch []int32
	prev := b.join(s.prev) // the batch before must be done
	for end := min(s.i+s.window, s.p); s.i < end; s.i++ {
		// Both libraries receive from r+i and send to r-i (Open MPI's
		// linear_sync, MPICH's scattered; collsim went the other way
		// round: an audit).
		to, from := mod(s.r-s.i, s.p), mod(s.r+s.i, s.p)
		if s.i == 0 { // its own block: a local copy
			batch = append(batch, b.copy(sim.Region{Buf: 0, Off: int64(s.r) * s.c, Count: s.c}, sim.Region{Buf: 1, Off: int64(s.r) * s.c, Count: s.c}, prev))
			continue
		}
		batch = append(batch, b.recv(from, 0, sim.Region{Buf: 1, Off: int64(from) * s.c, Count: s.c}, prev))
		batch = append(batch, b.sendConcurrent(to, 0, sim.Region{Buf: 0, Off: int64(to) * s.c, Count: s.c}, prev))
	}
	s.prev = batch
	return true
}

// allgatherReduce gathers every vector into buffer 1 (vector j at j*n) by a
// ring, then reduces them into buffer 0 locally.
type allgatherReduce struct {
	r, p  int
	n     int64
	k     int
	stage int
	last  stepEnd
}

func (s *allgatherReduce) vec(j int) sim.Region {
	return sim.Region{Buf: 1, Off: int64(j) * s.n, Count: s.n}
}

func (s *allgatherReduce) step(b *builder) bool {
	switch s.stage {
	case 0:
		s.last = only(b.copy(sim.Region{Count: s.n}, s.vec(s.r)))
		s.stage = 1
	case 1:
		if s.k >= s.p-1 {
			s.stage = 2
			return true
		}
		s.last = b.exchange(mod(s.r+1, s.p), mod(s.r-1, s.p), s.k, s.vec(mod(s.r-s.k, s.p)), s.vec(mod(s.r-s.k-1, s.p)), false, s.last[:]...)
		s.k++
	case 2:
		// One reduction after another, as Open MPI's loop of
		// ompi_op_reduce calls runs them: the last one then ends the
		// algorithm, for a phase that follows it to wait on.
		prev := int32(-1)
		for j := range s.p {
			if j != s.r {
				prev = b.reduceLocal(s.vec(j), sim.Region{Count: s.n}, s.last[0], s.last[1], prev)
			}
		}
		s.stage = 3
	default:
		return false
	}
	return true
}

// treeAllreduce reduces a part of the vector up a binary tree and
// broadcasts it down again in segments; real maps tree positions to ranks.
type treeAllreduce struct {
	v, p      int
	real      func(int) int
	part      sim.Region
	seg       int64
	k, nseg   int
	tagBase   int
	red, down int32
	sentUp    int32
	reduced   []int32 // at the tree's root: every reduction of every segment
	// passed are the sends that pass the last segment on, up to the
	// parent (or, at the root, down to the children): the next segment's
	// reductions wait for them, as NCCL's kernel takes a chunk from its
	// children, reduces it and sends it on before the next. Without
	// that, early segments' reductions (their data in early, eagerly) took
	// the CPU before the send of the segment in hand, and with reductions
	// slower than the links each level of the tree waited for all of
	// them: 64 MiB on 64 ranks reducing at 1 GB/s took 160 ms where
	// reducing it once takes 67 (an audit).
	passed []int32
}

// finals are the ops after which this rank's part holds the result: at the
// root every reduction, elsewhere the last segment's broadcast (each
// follows the one before).
func (t *treeAllreduce) finals() []int32 {
	if t.down >= 0 {
		return []int32{t.down}
	}
	return t.reduced
}

func (t *treeAllreduce) step(b *builder) bool {
	if t.k >= t.nseg || t.p == 1 {
		return false
	}
	parent, children := treeOf(t.v, t.p)
	s := segmentOf(0, t.part.Count, t.seg, t.k)
	s.Off += t.part.Off
	var reduced []int32
	for _, c := range children {
		reduced = append(reduced, b.recvReduce(t.real(c), t.tagBase+2*t.k, s, t.passed...))
	}
	ready := reduced
	if parent < 0 {
		t.reduced = append(t.reduced, reduced...)
	}
	if parent >= 0 {
		t.sentUp = b.send(t.real(parent), t.tagBase+2*t.k, s, reduced...)
		t.down = b.recv(t.real(parent), t.tagBase+2*t.k+1, s, t.sentUp, t.down)
		ready = []int32{t.down}
		t.passed = append(t.passed[:0], t.sentUp)
	} else {
		t.passed = t.passed[:0]
	}
	for _, c := range children {
		down := b.send(t.real(c), t.tagBase+2*t.k+1, s, ready...)
		if parent < 0 {
			t.passed = append(t.passed, down)
		}
	}
	t.k++
	return true
}

// doubleTree runs two treeAllreduces, one per half of the vector, the
// second on the mirrored tree, alternating their segments.
type doubleTree struct{ trees [2]*treeAllreduce }

func newDoubleTree(p Params, r int) stepper {
	half := p.Count / 2
	seg := defaultSegment(p)
	parts := [2]sim.Region{{Count: half}, {Off: half, Count: p.Count - half}}
	d := &doubleTree{}
	for i, part := range parts {
		real, v := func(x int) int { return x }, r
		if i == 1 {
			real, v = func(x int) int { return p.Ranks - 1 - x }, p.Ranks-1-r
		}
		d.trees[i] = &treeAllreduce{v: v, p: p.Ranks, real: real, part: part, seg: seg,
			nseg: segments(part.Count, seg), tagBase: i << 20, down: -1, sentUp: -1}
	}
	return d
}

func (d *doubleTree) step(b *builder) bool {
	a := d.trees[0].step(b)
	c := d.trees[1].step(b)
	return a || c
}

// finals: the two halves finish apart, in either order; the last op
// emitted is not the last to complete (what follows the double tree in a
// composite must wait for both).
func (d *doubleTree) finals() []int32 {
	return append(d.trees[0].finals(), d.trees[1].finals()...)
}

// gatherThenBcast is Open MPI's linear allgather: every rank sends its
// block to rank 0, which sends the whole vector back to everyone.
type gatherThenBcast struct {
	r, p int
	n    int64
	done bool
}

func (s *gatherThenBcast) step(b *builder) bool {
	if s.done {
		return false
	}
	s.done = true
	all := sim.Region{Count: s.n}
	if s.r != 0 {
		b.send(0, 0, block(0, s.n, s.p, s.r))
		b.recv(0, 1, all)
		return true
	}
	var got []int32
	for i := 1; i < s.p; i++ {
		got = append(got, b.recv(i, 0, block(0, s.n, s.p, i)))
	}
	for i := 1; i < s.p; i++ {
		b.send(i, 1, all, got...)
	}
	return true
}

// reduceThenScatter is Open MPI's non-overlapping reduce_scatter: a
// binomial reduce of the whole vector to rank 0, then rank 0 sends each
// rank its block.
type reduceThenScatter struct {
	red   binomialReduce
	r, p  int
	n     int64
	stage int
}

func (s *reduceThenScatter) step(b *builder) bool {
	switch s.stage {
	case 0:
		if s.red.step(b) {
			return true
		}
		s.stage = 1
		return true
	case 1:
		s.stage = 2
		if s.r == 0 {
			for i := 1; i < s.p; i++ {
				b.send(i, 1, block(0, s.n, s.p, i), s.red.finals()...)
			}
		} else {
			b.recv(0, 1, block(0, s.n, s.p, s.r), s.red.finals()...)
		}
		return true
	}
	return false
}
