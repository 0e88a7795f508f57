package collectives

import (
	"slices"

	"github.com/collsim/collsim/sim"
)

// builder emits one rank's ops during a call to Source.Next and tracks the
// program index of every op, so that steps can name earlier ops as
// dependencies.
type builder struct {
	ops      []sim.Op
	deps     []int32 // backing store for After lists, reused every call
	next     int32   // program index of the next op emitted
	elemSize int64
	// A sub-communicator (see sub): peers are members' positions (nil
	// members: the ranks themselves), tags are offset, and every op also
	// waits for floor (-1: nothing).
	inSub   bool
	members []int
	tagBase int
	floor   []int32
	offset  int64 // added to every data region's offset (a segment of the vector)
	// scratchOff, when not 0, is added instead to the regions of buffers 1
	// and up (scratch, in an allreduce): a segment's own part of them.
	scratchOff int64
	// overlap relaxes exchanges (Params.Overlap): a step waits for the
	// previous step's receive only, not its send.
	overlap bool
	// In a composition (compose.go): the lane's CPU, where the call's
	// buffers lie in the rank's (nil: as they are), and the tag past the
	// call's context, which its tags must stay below (0: no limit);
	// tagErr records a tag that did not.
	cpu    uint16
	places []Place
	// subFirst is the first op of the innermost sub being emitted.
	subFirst int32
	tagCeil  int64
	tagErr   bool
}

func (b *builder) emit(op sim.Op, after []int32) int32 {
	start := len(b.deps)
	for _, d := range after {
		if d >= 0 { // -1 stands for "no dependency"
			b.deps = append(b.deps, d)
		}
	}
	if b.inSub {
		if op.Kind != sim.OpCalc && b.members != nil {
			op.Peer = int32(b.members[op.Peer])
		}
		if op.Kind != sim.OpCalc {
			tag := int64(op.Tag) + int64(b.tagBase)
			if b.tagCeil > 0 && tag >= b.tagCeil {
				b.tagErr = true
			}
			op.Tag = int32(tag)
		}
		op.Data = b.inSubRegion(op.Data)
		if op.Src.Count > 0 {
			op.Src = b.inSubRegion(op.Src)
		}
		// An op that waits for an earlier op of its sub waits for the
		// floor through it: only the sub's first ops need the floor's
		// edges (a third of all edges in a large composition).
		inner := false
		for _, d := range b.deps[start:] {
			inner = inner || d >= b.subFirst
		}
		if !inner {
			b.deps = append(b.deps, b.floor...)
		}
	}
	if b.places != nil {
		op.Data = b.placed(op.Data)
		if op.Src.Count > 0 {
			op.Src = b.placed(op.Src)
		}
	}
	op.CPU = b.cpu
	op.After = b.deps[start:len(b.deps):len(b.deps)]
	b.ops = append(b.ops, op)
	b.next++
	return b.next - 1
}

// inSubRegion is where region, of the innermost sub's buffers, lies in
// the call's: its scratch buffers past scratchOff, its data past offset.
func (b *builder) inSubRegion(region sim.Region) sim.Region {
	if region.Buf > 0 && b.scratchOff != 0 {
		region.Off += b.scratchOff
	} else {
		region.Off += b.offset
	}
	return region
}

// placed is where region, of the call's buffers, lies in the rank's.
func (b *builder) placed(region sim.Region) sim.Region {
	pl := b.places[region.Buf]
	region.Buf, region.Off = pl.Buf, region.Off+pl.Off
	return region
}

// copy emits a local copy of src to dst (same count), as MPI libraries
// make one (Open MPI's sendrecv to oneself is a datatype copy): a free
// computation that copies when it starts, not a message to oneself,
// which the LogGOPS model would charge o, g, L and G like any other.
func (b *builder) copy(src, dst sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpCalc, Src: src, Data: dst}, after)
}

// reduceLocal emits a local reduction of src into dst (same count), as
// an MPI library's ompi_op_reduce: a computation charged at the host's
// reduction rate, combining when it starts.
func (b *builder) reduceLocal(src, dst sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpCalc, Src: src, Data: dst, Reduce: true, Bytes: dst.Count * b.elemSize}, after)
}

// send emits a send of the elements in region to peer.
func (b *builder) send(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpSend, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
}

// sendConcurrent emits a send that leaves alongside the rank's other sends
// (sim.Op.Concurrent), as the non-blocking sends of an algorithm that posts
// them all at once do.
func (b *builder) sendConcurrent(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpSend, Concurrent: true, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
}

// recv emits a receive into region from peer, overwriting it.
func (b *builder) recv(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpRecv, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
}

// join emits, when after has more than one op, a free computation that
// waits for all of them, and returns it; ops that all wait for the same
// set then wait for the join alone, so that k ops waiting for m cost k + m
// dependency edges rather than k x m. With one op or none it returns that
// op (or -1) and emits nothing.
func (b *builder) join(after []int32) int32 {
	var live []int32
	for _, d := range after {
		if d >= 0 {
			live = append(live, d)
		}
	}
	switch len(live) {
	case 0:
		return -1
	case 1:
		return live[0]
	}
	return b.emit(sim.Op{Kind: sim.OpCalc}, live)
}

// stepEnd is what a step leaves for the next one to wait for: one or two
// ops (-1 for none), such as an exchange's send and receive.
type stepEnd [2]int32

// noEnd waits for nothing.
var noEnd = stepEnd{-1, -1}

// only is the stepEnd of one op.
func only(op int32) stepEnd { return stepEnd{-1, op} }

// exchange emits one step written as MPI_Sendrecv: a send of out to dst and
// a receive into in from src (reduced into place if reduce), both after the
// ops in after. MPI_Sendrecv returns only when both halves are complete,
// so the step it returns ends with both; with Params.Overlap it ends with
// the receive alone, as if the send were an MPI_Isend waited for later (a
// send still leaving then holds up nothing but the end of the collective).
func (b *builder) exchange(dst, src, tag int, out, in sim.Region, reduce bool, after ...int32) stepEnd {
	sent := b.send(dst, tag, out, after...)
	var got int32
	if reduce {
		got = b.recvReduce(src, tag, in, after...)
	} else {
		got = b.recv(src, tag, in, after...)
	}
	if b.overlap {
		return only(got)
	}
	return stepEnd{sent, got}
}

// recvReduce emits a receive from peer combined into region.
func (b *builder) recvReduce(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpRecv, Reduce: true, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
}

// stepper is an algorithm's per-rank state machine: each call to step emits
// the ops of the rank's next step and reports whether there was one.
type stepper interface {
	step(b *builder) bool
}

// stream adapts a stepper to sim.Source.
type stream struct {
	b  builder
	st stepper
}

func newStream(st stepper, elemSize int64, overlap bool) *stream {
	return &stream{b: builder{elemSize: elemSize, overlap: overlap}, st: st}
}

// finisher is a stepper whose result is not simply its last op: it names
// the ops that must complete before its result is in place (a binomial
// reduce's root, whose children arrive in any order).
type finisher interface {
	finals() []int32
}

// sub runs an algorithm's stepper on a subset of the ranks, as MPI runs a
// collective on a sub-communicator: the inner stepper numbers its peers
// 0..len(members)-1, and its ops go to members[peer], with tags offset by
// tagBase (so that phases never match each other's messages), each after
// the ops in floor. nil members stand for all ranks, numbered as they are
// (no table of p entries per rank). done reports the ops that complete
// the inner program, for what follows to wait on.
type sub struct {
	inner   stepper
	members []int
	tagBase int
	floor   []int32
	offset  int64 // the inner vector starts here in the rank's buffer
	// scratchOff, when not 0, places the inner algorithm's scratch (buffers
	// 1 and up) apart from offset: where parts of the vector run at once,
	// their scratch must not overlap.
	scratchOff int64
	last       int32
	// first is the sub's first op (-1: none yet); sinks are its ops that
	// no later op of it waits for. When the inner program ends with more
	// than one, a join waits for them all, so that what follows waits
	// for every op of the sub (an MPI call returns when all of its
	// operations are complete), not only its last.
	first int32
	sinks opSet
	ended bool
}

func newSub(inner stepper, members []int, tagBase int, floor []int32, offset int64) *sub {
	return &sub{inner: inner, members: members, tagBase: tagBase, floor: floor, offset: offset, last: -1, first: -1}
}

// done returns the ops after which every op of the inner program is
// complete: its one sink (a join of them, see step), or, if it emitted
// nothing, what it waited for.
func (s *sub) done() []int32 {
	if s.last >= 0 {
		return []int32{s.last}
	}
	return s.floor
}

func (s *sub) step(b *builder) bool {
	saveIn, saveM, saveT, saveF, saveO, saveS := b.inSub, b.members, b.tagBase, b.floor, b.offset, b.scratchOff
	b.inSub, b.members, b.tagBase, b.floor, b.offset, b.scratchOff = true, s.members, s.tagBase, s.floor, s.offset, s.scratchOff
	if saveIn { // nested: compose the mappings
		inner := saveM
		if s.members != nil && saveM != nil {
			inner = make([]int, len(s.members))
			for i, m := range s.members {
				inner[i] = saveM[m]
			}
		} else if s.members != nil {
			inner = s.members
		}
		b.members, b.tagBase, b.offset = inner, saveT+s.tagBase, saveO+s.offset
		if s.scratchOff != 0 || saveS != 0 {
			b.scratchOff = saveS + s.scratchOff
		}
		b.floor = append(append([]int32(nil), saveF...), s.floor...)
	}
	before := b.next
	saveFirst := b.subFirst
	b.subFirst = before
	if s.first >= 0 {
		b.subFirst = s.first
	}
	more := s.inner.step(b)
	if !more && !s.ended {
		s.ended = true
		if s.sinks.len() > 1 {
			s.track(b, before)
			b.join(s.sinks.sorted())
			more = true // the join is this step's op; the next step ends
		}
	}
	s.track(b, before)
	b.inSub, b.members, b.tagBase, b.floor, b.offset, b.scratchOff = saveIn, saveM, saveT, saveF, saveO, saveS
	b.subFirst = saveFirst
	return more
}

// track records the ops emitted since op before as the sub's, updating
// its sinks and last op.
func (s *sub) track(b *builder, before int32) {
	if b.next == before {
		return
	}
	if s.first < 0 {
		s.first = before
	}
	base := b.next - int32(len(b.ops))
	for i := max(before, base); i < b.next; i++ {
		for _, d := range b.ops[i-base].After {
			if d >= s.first {
				s.sinks.remove(d)
			}
		}
		s.sinks.add(i)
	}
	s.last = b.next - 1
}

// phases runs steppers one after another; each phase's ops wait for the
// last op of the phase before (sub.floor is set when it starts).
type phases struct {
	list []*sub
	i    int
}

func (s *phases) step(b *builder) bool {
	for s.i < len(s.list) {
		if s.list[s.i].step(b) {
			return true
		}
		s.i++
		if s.i < len(s.list) {
			s.list[s.i].floor = s.list[s.i-1].done()
		}
	}
	return false
}

// Next runs steps until one emits ops or the program ends.
func (s *stream) Next(ops []sim.Op) []sim.Op {
	s.b.ops, s.b.deps = ops, s.b.deps[:0]
	for len(s.b.ops) == len(ops) {
		if !s.st.step(&s.b) {
			break
		}
	}
	return s.b.ops
}

// block returns the region of block i when n elements are split into p
// blocks as evenly as possible (the first n mod p blocks are one longer).
func block(buf uint8, n int64, p, i int) sim.Region {
	q, rem := n/int64(p), n%int64(p)
	ii := int64(i)
	return sim.Region{Buf: buf, Off: ii*q + min(ii, rem), Count: q + b2i(ii < rem)}
}

// blocks returns the region spanning blocks lo..hi-1 of the same split.
func blocks(buf uint8, n int64, p, lo, hi int) sim.Region {
	if lo == hi {
		return sim.Region{Buf: buf, Off: block(buf, n, p, lo%p).Off}
	}
	first, last := block(buf, n, p, lo), block(buf, n, p, hi-1)
	return sim.Region{Buf: buf, Off: first.Off, Count: last.Off + last.Count - first.Off}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func mod(a, p int) int { return ((a % p) + p) % p }

// floorPow2 is the largest power of two <= p (p >= 1).
func floorPow2(p int) int {
	k := 1
	for k*2 <= p {
		k *= 2
	}
	return k
}

// ceilLog2 is the number of doublings from 1 to reach >= p.
func ceilLog2(p int) int {
	k := 0
	for 1<<k < p {
		k++
	}
	return k
}

// opSet is a set of op indices: a short slice while small (a sub's
// frontier usually is), a map once large (a linear alltoall's p sends and
// receives).
type opSet struct {
	small []int32
	large map[int32]struct{}
}

func (o *opSet) len() int {
	if o.large != nil {
		return len(o.large)
	}
	return len(o.small)
}

func (o *opSet) add(op int32) {
	if o.large != nil {
		o.large[op] = struct{}{}
		return
	}
	o.small = append(o.small, op)
	if len(o.small) > 32 {
		o.large = make(map[int32]struct{}, 64)
		for _, x := range o.small {
			o.large[x] = struct{}{}
		}
		o.small = nil
	}
}

func (o *opSet) remove(op int32) {
	if o.large != nil {
		delete(o.large, op)
		return
	}
	for i := len(o.small) - 1; i >= 0; i-- { // recent ops are removed most
		if o.small[i] == op {
			o.small = append(o.small[:i], o.small[i+1:]...)
			return
		}
	}
}

// sorted returns the set's ops in increasing order.
func (o *opSet) sorted() []int32 {
	out := slices.Clone(o.small)
	for op := range o.large {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}
