package sim

import (
	"math"
)

// GOAL is a schedule read from GOAL text (the format of LogGOPSim,
// Schedgen and ATLAHS; see shared/reference/goal-and-loggops.md), held
// compactly: about 40 bytes per op plus 4 per dependency.
type GOAL struct {
	Ranks      int
	CPUs, NICs int
	ops        [][]goalOp
	deps       []int32 // After and StartAfter lists of every op, back to back
	users      []int32 // the inverse: ops waiting for each op's completion, then for its start
	hasStarts  bool    // some op irequires another
}

type goalOp struct {
	kind     OpKind
	cpu, nic uint16
	peer     int32
	tag      int32
	size     int64 // bytes, or for calc the duration in picoseconds
	dep      uint32
	nAfter   uint16
	nStart   uint16
	user     uint32 // first of its users in GOAL.users
	nUsers   uint32 // ops that require it (at most 65535)
	nSUsers  uint32 // ops that irequire it (at most 65535)
}

// Ops returns the number of ops of every rank together.
func (g *GOAL) Ops() int {
	n := 0
	for _, ops := range g.ops {
		n += len(ops)
	}
	return n
}

// Schedule returns the GOAL program as a Schedule. Every op issues as soon
// as its dependencies are met, wherever it stands in its rank's list (GOAL
// semantics: unbounded lookahead).
func (g *GOAL) Schedule(name string) Schedule {
	return Schedule{
		Name:      name,
		Ranks:     g.Ranks,
		Lookahead: math.MaxInt32,
		CPUs:      g.CPUs,
		NICs:      g.NICs,
		Rank:      func(r int) Source { return &goalSource{g: g, ops: g.ops[r]} },
	}
}

// Run returns the GOAL program as a Schedule for execution: its sources are
// reactive (see ReactiveSource), handing out each op only once it is ready
// from dependencies resolved at parse time. It runs exactly as Schedule
// does, faster and in less memory.
func (g *GOAL) Run(name string) Schedule {
	s := g.Schedule(name)
	s.Rank = func(r int) Source { return newReadySource(g, g.ops[r]) }
	return s
}

// readySource hands out a rank's GOAL ops as they become ready.
type readySource struct {
	g       *GOAL
	ops     []goalOp
	pending []int32 // per op: dependencies not yet met
	ready   []int32 // ready ops not handed out, FIFO from rhead
	rhead   int
	byIdx   []handed // what Completed and Started need of each op handed out
}

// handed is what is left to know of an op once handed out: its users. It
// sits in handout order, so progress reads it sequentially instead of
// jumping back into the op table.
type handed struct {
	user           uint32
	nUsers, nSUser uint16
}

func newReadySource(g *GOAL, ops []goalOp) *readySource {
	s := &readySource{g: g, ops: ops, pending: make([]int32, len(ops))}
	for i, o := range ops {
		s.pending[i] = int32(o.nAfter) + int32(o.nStart)
		if s.pending[i] == 0 {
			s.ready = append(s.ready, int32(i))
		}
	}
	return s
}

// Next implements Source: the ready ops, without dependency lists.
func (s *readySource) Next(ops []Op) []Op {
	end := min(s.rhead+256, len(s.ready))
	for _, i := range s.ready[s.rhead:end] {
		o := &s.ops[i]
		op := Op{Kind: o.kind, CPU: o.cpu, NIC: o.nic, Peer: o.peer, Tag: o.tag}
		if o.kind == OpCalc {
			op.Dur = Time(o.size)
		} else {
			op.Bytes = o.size
		}
		ops = append(ops, op)
		s.byIdx = append(s.byIdx, handed{user: o.user, nUsers: uint16(o.nUsers), nSUser: uint16(o.nSUsers)})
	}
	s.rhead = end
	if s.rhead == len(s.ready) {
		s.ready, s.rhead = s.ready[:0], 0
	}
	return ops
}

func (s *readySource) release(users []int32) {
	for _, u := range users {
		if s.pending[u]--; s.pending[u] == 0 {
			s.ready = append(s.ready, u)
		}
	}
}

// Completed implements ReactiveSource.
func (s *readySource) Completed(idx int32) {
	h := s.byIdx[idx]
	s.release(s.g.users[h.user : h.user+uint32(h.nUsers)])
}

// Started implements ReactiveSource.
func (s *readySource) Started(idx int32) {
	h := s.byIdx[idx]
	first := h.user + uint32(h.nUsers)
	s.release(s.g.users[first : first+uint32(h.nSUser)])
}

// Ended implements ReactiveSource.
func (s *readySource) Ended() bool { return len(s.byIdx) == len(s.ops) }

// Waiting implements ReactiveSource.
func (s *readySource) Waiting() int { return len(s.ops) - len(s.byIdx) - (len(s.ready) - s.rhead) }

// Needed implements ReactiveSource.
func (s *readySource) Needed(idx int32) bool { return s.byIdx[idx].nUsers > 0 }

// NeedsStarts implements ReactiveSource.
func (s *readySource) NeedsStarts() bool { return s.g.hasStarts }

type goalSource struct {
	g    *GOAL
	ops  []goalOp
	next int
}

// Len tells the executor the program's length, so it sizes the window once.
func (s *goalSource) Len() int { return len(s.ops) }

func (s *goalSource) Next(ops []Op) []Op {
	end := min(s.next+256, len(s.ops))
	for _, o := range s.ops[s.next:end] {
		op := Op{Kind: o.kind, CPU: o.cpu, NIC: o.nic, Peer: o.peer, Tag: o.tag}
		if o.kind == OpCalc {
			op.Dur = Time(o.size)
		} else {
			op.Bytes = o.size
		}
		d := s.g.deps[o.dep : o.dep+uint32(o.nAfter)+uint32(o.nStart)]
		op.After, op.StartAfter = d[:o.nAfter:o.nAfter], d[o.nAfter:]
		ops = append(ops, op)
	}
	s.next = end
	return ops
}
