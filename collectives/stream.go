package collectives

import "github.com/collsim/collsim/sim"

// builder emits one rank's ops during a call to Source.Next and tracks the
// program index of every op, so that steps can name earlier ops as
// dependencies.
type builder struct {
	ops      []sim.Op
	deps     []int32 // backing store for After lists, reused every call
	next     int32   // program index of the next op emitted
	elemSize int64
}

func (b *builder) emit(op sim.Op, after []int32) int32 {
	start := len(b.deps)
	for _, d := range after {
		if d >= 0 { // -1 stands for "no dependency"
			b.deps = append(b.deps, d)
		}
	}
	op.After = b.deps[start:len(b.deps):len(b.deps)]
	b.ops = append(b.ops, op)
	b.next++
	return b.next - 1
}

// send emits a send of the elements in region to peer.
func (b *builder) send(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpSend, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
}

// recv emits a receive into region from peer, overwriting it.
func (b *builder) recv(peer, tag int, region sim.Region, after ...int32) int32 {
	return b.emit(sim.Op{Kind: sim.OpRecv, Peer: int32(peer), Tag: int32(tag),
		Bytes: region.Count * b.elemSize, Data: region}, after)
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

func newStream(st stepper, elemSize int64) *stream {
	return &stream{b: builder{elemSize: elemSize}, st: st}
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
