package sim

import (
	"math"
	"unsafe"
)

// GOAL is a schedule read from GOAL text (the format of LogGOPSim,
// Schedgen and ATLAHS; see shared/reference/goal-and-loggops.md), held
// compactly: 24 bytes per op, plus 4 per dependency and 4 per user of ops
// that more than one op waits for. Ops are numbered rank by rank; an op's
// number is its id.
type GOAL struct {
	Ranks      int
	CPUs, NICs int
	first      []uint32   // rank r's ops are ids first[r] .. first[r+1]-1
	chunks     [][]goalOp // op id i is chunks[i>>goalChunkBits][i&goalChunkMask]
	deps       []int32    // every op's After then StartAfter list (rank-local indices), op after op
	depFirst   []uint32   // where rank r's ops' lists begin in deps
	users      []uint32   // the users (ids) of ops with more than one
	big        []int64    // values too large for an op's val
	place      []uint32   // cpu<<16 | nic per op id; nil while every op runs on CPU 0 and NIC 0
	hasStarts  bool       // some op irequires another
}

// Ops live in chunks, so that a large schedule grows without copying and
// without the garbage of doubling one slice.
const (
	goalChunkBits = 16
	goalChunk     = 1 << goalChunkBits
	goalChunkMask = goalChunk - 1
)

// goalOp is one op: 24 bytes, since a schedule holds millions.
type goalOp struct {
	peer int32
	tag  int32
	// val packs the kind (top two bits) with the size in bytes or the calc
	// duration in nanoseconds; with valBig set, the low bits index big.
	val             uint32
	user            uint32 // the only user when there is one, else the first position in GOAL.users
	nUsers, nSUsers uint16 // ops that require it, and that irequire it
	nAfter, nStart  uint16 // ops it requires, and irequires
}

const (
	valKindShift = 30
	valBig       = 1 << 29
	valMask      = valBig - 1
)

// The op must stay small: the schedule holds one per op.
const _ = 24 - unsafe.Sizeof(goalOp{})

func (o *goalOp) kind() OpKind { return OpKind(o.val >> valKindShift) }

// users returns the ids of the ops that wait for o's completion, then
// those that wait for its start.
func (g *GOAL) usersOf(o *goalOp) []uint32 {
	n := uint32(o.nUsers) + uint32(o.nSUsers)
	if n == 1 {
		return unsafe.Slice(&o.user, 1)
	}
	return g.users[o.user : o.user+n]
}

// value returns o's size in bytes, or for a calc its duration in ns.
func (g *GOAL) value(o *goalOp) int64 {
	if o.val&valBig != 0 {
		return g.big[o.val&valMask]
	}
	return int64(o.val & valMask)
}

// op returns op id.
func (g *GOAL) op(id uint32) *goalOp {
	return &g.chunks[id>>goalChunkBits][id&goalChunkMask]
}

// cpuNIC returns the CPU and NIC op id runs on.
func (g *GOAL) cpuNIC(id uint32) (uint16, uint16) {
	if int(id) >= len(g.place) {
		return 0, 0
	}
	p := g.place[id]
	return uint16(p >> 16), uint16(p)
}

// expand returns op id as an Op, without dependency lists.
func (g *GOAL) expand(id uint32) Op {
	o := g.op(id)
	op := Op{Kind: o.kind(), Peer: o.peer, Tag: o.tag}
	op.CPU, op.NIC = g.cpuNIC(id)
	if op.Kind == OpCalc {
		op.Dur = Time(g.value(o)) * Nanosecond
	} else {
		op.Bytes = g.value(o)
	}
	return op
}

// Ops returns the number of ops of every rank together.
func (g *GOAL) Ops() int { return int(g.first[g.Ranks]) }

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
		Rank: func(r int) Source {
			return &goalSource{g: g, next: g.first[r], end: g.first[r+1], dep: g.depFirst[r]}
		},
	}
}

// Run returns the GOAL program as a Schedule for execution: its sources are
// reactive (see ReactiveSource), handing out each op only once it is ready
// from dependencies resolved at parse time. It runs exactly as Schedule
// does, faster and in less memory.
func (g *GOAL) Run(name string) Schedule {
	s := g.Schedule(name)
	s.Rank = func(r int) Source { return newReadySource(g, r) }
	return s
}

// readySource hands out a rank's GOAL ops as they become ready.
type readySource struct {
	g       *GOAL
	first   uint32   // id of the rank's first op
	n       int      // the rank's ops
	pending []int32  // per op: dependencies not yet met
	ready   []uint32 // ready ops (ids) not handed out, FIFO from rhead
	rhead   int
	byIdx   []uint32 // the ops handed out, in handout order
}

func newReadySource(g *GOAL, r int) *readySource {
	s := &readySource{g: g, first: g.first[r], n: int(g.first[r+1] - g.first[r])}
	s.pending = make([]int32, s.n)
	for i := range s.pending {
		id := s.first + uint32(i)
		o := g.op(id)
		s.pending[i] = int32(o.nAfter) + int32(o.nStart)
		if s.pending[i] == 0 {
			s.ready = append(s.ready, id)
		}
	}
	return s
}

// Next implements Source: the ready ops, without dependency lists.
func (s *readySource) Next(ops []Op) []Op {
	end := min(s.rhead+256, len(s.ready))
	for _, id := range s.ready[s.rhead:end] {
		ops = append(ops, s.g.expand(id))
		s.byIdx = append(s.byIdx, id)
	}
	s.rhead = end
	if s.rhead == len(s.ready) {
		s.ready, s.rhead = s.ready[:0], 0
	}
	return ops
}

func (s *readySource) release(users []uint32) {
	for _, u := range users {
		p := &s.pending[u-s.first]
		if *p--; *p == 0 {
			s.ready = append(s.ready, u)
		}
	}
}

// Completed implements ReactiveSource.
func (s *readySource) Completed(idx int32) {
	o := s.g.op(s.byIdx[idx])
	s.release(s.g.usersOf(o)[:o.nUsers])
}

// Started implements ReactiveSource.
func (s *readySource) Started(idx int32) {
	o := s.g.op(s.byIdx[idx])
	s.release(s.g.usersOf(o)[o.nUsers:])
}

// Ended implements ReactiveSource.
func (s *readySource) Ended() bool { return len(s.byIdx) == s.n }

// Waiting implements ReactiveSource.
func (s *readySource) Waiting() int { return s.n - len(s.byIdx) - (len(s.ready) - s.rhead) }

// Needed implements ReactiveSource.
func (s *readySource) Needed(idx int32) bool { return s.g.op(s.byIdx[idx]).nUsers > 0 }

// NeedsStarts implements ReactiveSource.
func (s *readySource) NeedsStarts() bool { return s.g.hasStarts }

// goalSource reads a rank's ops in program order, with their dependency
// lists.
type goalSource struct {
	g         *GOAL
	next, end uint32 // ids
	dep       uint32 // where op next's dependency list begins
}

// Len tells the executor the program's length, so it sizes the window once.
func (s *goalSource) Len() int { return int(s.end - s.next) }

func (s *goalSource) Next(ops []Op) []Op {
	stop := min(s.next+256, s.end)
	for ; s.next < stop; s.next++ {
		o := s.g.op(s.next)
		op := s.g.expand(s.next)
		na, ns := uint32(o.nAfter), uint32(o.nStart)
		d := s.g.deps[s.dep : s.dep+na+ns]
		op.After, op.StartAfter = d[:na:na], d[na:]
		s.dep += na + ns
		ops = append(ops, op)
	}
	return ops
}
