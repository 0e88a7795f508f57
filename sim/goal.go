package sim

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/collsim/collsim/sim/hugepage"
)

// GOAL is a schedule read from GOAL text (the format of LogGOPSim,
// Schedgen and ATLAHS; see shared/reference/goal-and-loggops.md), held
// compactly: 16 bytes per op, and 4 per user and 8 more per op of ops
// whose users are listed (not those whose users are a run: usersOf).
// Dependency lists, and their lengths, are not kept: an op's users say the same; a run counts what
// each op waits for from them, and Schedule, which hands out the lists,
// makes them from the users when first asked.
//
// Ops are numbered (their id) rank by rank, in program order, as they are
// read: the text streams into the tables, which are never reordered. The
// ops themselves are stored where opLayout puts them, by id or, where
// neighbouring ranks have as many ops each, op i of those ranks side by
// side.
type GOAL struct {
	Ranks int
	// CPUs and NICs count the distinct cpu and nic indices the ops use
	// (with 0, the default), numbered 0.. in the order they first appear.
	CPUs, NICs int
	// Rank r's ops, in program order, are ids first[r] .. first[r+1]-1.
	first []uint32
	// Rank r's ops without dependencies are zeros[ready[r]] ..
	// zeros[ready[r+1]-1].
	ready     []uint32
	zeros     chunked[uint32]
	ops       chunked[goalOp] // by slot (lay)
	lay       opLayout        // where each op is stored
	users     []uint32        // the users (slots) of ops with more than one
	usersRoom *hugepage.Arena // holds users once it is large (growUsers)
	nDeps     uint64          // dependencies, each counted once
	big       []int64         // values too large for an op's val
	place     []uint32        // cpu<<16 | nic by id while parsing, then by slot; nil while every op runs on CPU 0 and NIC 0
	hasStarts bool            // some op irequires another
	maxSend   int64           // the largest send, in bytes
	// maxSendLine and maxCalcLine are the lines of the largest send and of
	// the longest calc (maxCalc ns), for errors that name the likely cause.
	maxSendLine, maxCalcLine int
	maxCalc                  int64
	file                     string
	// The dependency lists Schedule hands out, made from the users once
	// (scheduleDeps): rank r's ops' lists (rank-local indices, After then
	// StartAfter) follow one another in deps from depFirst[r].
	// depCounts is, by id, each op's After count | its StartAfter count<<16.
	depsOnce  sync.Once
	deps      chunked[int32]
	depFirst  []uint32
	depCounts chunked[uint32]
}

// Largest returns the largest send (bytes) and the longest calc (ns) and
// where each is written ("file:line"; "" when there is none), for
// naming the op that likely made a run too long.
func (g *GOAL) Largest() (send int64, sendAt string, calc int64, calcAt string) {
	at := func(line int) string {
		if line == 0 {
			return ""
		}
		return fmt.Sprintf("%s:%d", g.file, line)
	}
	return g.maxSend, at(g.maxSendLine), g.maxCalc, at(g.maxCalcLine)
}

// goalOp is one op: 16 bytes, since a schedule holds millions. What it
// waits for is not kept: its users lists say it (dependencyCounts,
// scheduleDeps), and a run needs only the count, made once per run.
type goalOp struct {
	peer int32
	tag  int32
	// val packs the kind (top two bits) with the size in bytes or the calc
	// duration in nanoseconds; with valBig set, the low bits index big.
	// valRun says the users are a run (usersOf).
	val uint32
	// user says who waits for o. For a run (valRun): in its low 30 bits,
	// how many ops after o in its rank's program the first user comes,
	// and in its top two, how many users it has. Else the users are listed
	// in GOAL.users from user on, after two words: at user-2 how many of
	// them require o (the others irequire it), at user-1 where the list
	// ends. (Until the parser lists them, user counts them: those that
	// require o | those that irequire it << 16.)
	user uint32
}

const (
	valKindShift = 30
	valBig       = 1 << 29
	valRun       = 1 << 28
	valMask      = valRun - 1
)

// A run's user holds in its top two bits its number of users, none, one
// or two, all of which require the op, or runStart: one user, which
// irequires it. An op starts as a run of none.
const (
	runShift    = 30
	runNextMask = 1<<runShift - 1
	runStart    = 3
)

// maxRunUsers is the most users a run may have: the collectives' ops
// have one or two (in an exchange, the next step's send and receive), and
// usersOf spells a run out in an array of this many, small enough to be
// inlined.
const maxRunUsers = 2

// runUsersMost is the most users the parser lets a run have: maxRunUsers,
// lowered by tests.
var runUsersMost uint32 = maxRunUsers

// The op must stay small: the schedule holds one per op.
const _ = 16 - unsafe.Sizeof(goalOp{})

func (o *goalOp) kind() OpKind { return OpKind(o.val >> valKindShift) }

// usersOf returns the slots of the ops that wait for the completion of o,
// stored in slot, then those that wait for its start (requirers says how
// many wait for its completion). Where an op's users are ops that follow
// one another in its rank's program, all requiring it, up to maxRunUsers
// of them, or where its one user irequires it (a run: nearly every op of
// the collectives' schedules), they are not listed in GOAL.users
// but spelled out in buf from where the first is: the ring at 1,024 ranks
// keeps 33 MB less, and its parse lists no users.
func (g *GOAL) usersOf(slot uint32, o *goalOp, buf *[maxRunUsers]uint32) []uint32 {
	if o.val&valRun == 0 {
		return g.users[o.user:g.users[o.user-1]]
	}
	step := g.lay.step(slot)
	u := slot + (o.user&runNextMask)*step
	buf[0], buf[1] = u, u+step
	n := o.user >> runShift
	return buf[:"\x00\x01\x02\x01"[n]] // runStart, 3, has one
}

// requirers returns how many ops wait for the completion of o: the first
// of usersOf's.
func (g *GOAL) requirers(o *goalOp) uint32 {
	if o.val&valRun == 0 {
		return g.users[o.user-2]
	}
	if n := o.user >> runShift; n != runStart {
		return n
	}
	return 0
}

// value returns o's size in bytes, or for a calc its duration in ns.
func (g *GOAL) value(o *goalOp) int64 {
	if o.val&valBig != 0 {
		return g.big[o.val&valMask]
	}
	return int64(o.val & valMask)
}

// op returns the op stored in slot (opLayout). A run names its ops by
// their slots: ready lists, users, counts, messages.
func (g *GOAL) op(slot uint32) *goalOp { return g.ops.at(slot) }

// cpuNIC returns the CPU and NIC the op in slot runs on.
func (g *GOAL) cpuNIC(slot uint32) (uint16, uint16) {
	if int(slot) >= len(g.place) {
		return 0, 0
	}
	p := g.place[slot]
	return uint16(p >> 16), uint16(p)
}

// expand returns the op in slot as an Op, without dependency lists.
func (g *GOAL) expand(slot uint32) Op {
	o := g.op(slot)
	op := Op{Kind: o.kind(), Peer: o.peer, Tag: o.tag}
	op.CPU, op.NIC = g.cpuNIC(slot)
	if op.Kind == OpCalc {
		op.Dur = Time(g.value(o)) * Nanosecond
	} else {
		op.Bytes = g.value(o)
	}
	return op
}

// Ops returns the number of ops of every rank together.
func (g *GOAL) Ops() int { return int(g.first[g.Ranks]) }

// idOf returns the id of op index of rank r's program.
func (g *GOAL) idOf(r int, index uint32) uint32 { return g.first[r] + index }

// slotOf returns the slot of op index of rank r's program.
func (g *GOAL) slotOf(r int, index uint32) uint32 { return g.lay.slot(g.idOf(r, index)) }

// index returns the index in rank r's program of the op in slot.
func (g *GOAL) index(r int32, slot uint32) int32 { return int32(g.lay.id(slot) - g.first[r]) }

// dependencyCounts returns, by slot, how many ops each op waits for.
func (g *GOAL) dependencyCounts() []uint16 {
	n := hugepage.Make[uint16](g.Ops())
	g.fillDependencyCounts(n, 0, g.Ranks)
	return n
}

// fillDependencyCounts counts in n, zero there, the dependencies of the
// ops of ranks lo to hi-1: an op's users are of its own rank, and each
// lists it once per dependency. (Parse checked that no op has more than
// 65535.) Ranks in a block are walked op row by op row, in the order
// their ops are stored.
func (g *GOAL) fillDependencyCounts(n []uint16, lo, hi int) {
	var buf [maxRunUsers]uint32
	count := func(slot uint32) {
		for _, u := range g.usersOf(slot, g.op(slot), &buf) {
			n[u]++
		}
	}
	for r := lo; r < hi; {
		if !g.lay.blocked(r) {
			for slot := g.first[r]; slot < g.first[r+1]; slot++ { // by id
				count(slot)
			}
			r++
			continue
		}
		size := 1 << g.lay.shift
		start := r &^ (size - 1) // r's block's first rank
		end := min(start+size, hi)
		base := g.first[start] // its first slot
		for i := range g.lay.n {
			row := base + i<<g.lay.shift // op i of the block's ranks
			for k := r - start; k < end-start; k++ {
				count(row + uint32(k))
			}
		}
		r = end
	}
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
		Rank: func(r int) Source {
			g.depsOnce.Do(g.scheduleDeps)
			return &goalSource{g: g, r: r, n: g.first[r+1] - g.first[r], dep: g.depFirst[r]}
		},
	}
}

// scheduleDeps makes the dependency lists Schedule hands out from the
// users lists. An op's users are ops of its own rank, each listed once, so
// walking a rank's ops in program order and appending each to the lists of
// its users gives every op its dependencies, each once, in program order,
// After then StartAfter (the order they were written in may differ: it
// changes nothing in a run).
func (g *GOAL) scheduleDeps() {
	g.depFirst = make([]uint32, g.Ranks+1)
	var next []uint32 // by op of the rank: its After then StartAfter count, then where its next dependency goes
	for r := range g.Ranks {
		first, n := g.first[r], g.first[r+1]-g.first[r]
		base, stride := g.lay.rankSlots(r, first)
		at := g.deps.len()
		g.depFirst[r] = at
		next = slices.Grow(next[:0], int(2*n))[:2*n]
		clear(next)
		g.eachUser(base, stride, n, func(u, kind uint32, _ uint32) { next[2*u+kind]++ })
		for k := range n {
			na, ns := next[2*k], next[2*k+1]
			g.depCounts.add(na | ns<<16)
			next[2*k], next[2*k+1] = at, at+na
			at += na + ns
		}
		g.deps.extend(at)
		g.eachUser(base, stride, n, func(u, kind uint32, d uint32) {
			w := &next[2*u+kind]
			*g.deps.at(*w) = int32(d)
			*w++
		})
	}
	g.depFirst[g.Ranks] = g.deps.len()
}

// eachUser calls f for each user of the n ops of a rank stored from base
// by stride, the ops in program order: with the user's and the op's
// program indices, and kind 1 when the user irequires the op, else 0.
func (g *GOAL) eachUser(base, stride, n uint32, f func(u, kind, d uint32)) {
	var buf [maxRunUsers]uint32
	for d := range n {
		o := g.op(base + d*stride)
		after := g.requirers(o)
		for j, u := range g.usersOf(base+d*stride, o, &buf) {
			f((u-base)/stride, b2u(uint32(j) >= after), d)
		}
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// HasStartDependencies reports whether some op irequires another.
func (g *GOAL) HasStartDependencies() bool { return g.hasStarts }

// Run returns the GOAL program as a Schedule for execution: its sources are
// reactive (see ReactiveSource), handing out each op only once it is ready
// from dependencies resolved at parse time. It runs exactly as Schedule
// does, faster and in less memory.
func (g *GOAL) Run(name string) Schedule {
	s := g.Schedule(name)
	pending := g.dependencyCounts()
	s.Rank = func(r int) Source { return newReadySource(g, pending, r) }
	return s
}

// readySource hands out a rank's GOAL ops as they become ready.
type readySource struct {
	g       *GOAL
	pending []uint16 // by slot, shared by every rank's source: dependencies not yet met
	n       int      // the rank's ops
	ready   []uint32 // ready ops (slots) not handed out, FIFO from rhead
	readyAt []Time   // and when each may start (0: when handed out)
	rhead   int
	byIdx   []uint32 // the ops handed out, in handout order
	floors  floors   // ops held until a dependency completed ahead of time completes
	// withheld are the ops whose dependencies are all met but whose floor
	// is still ahead, until their event (ReleaseHeld); fresh, the floors
	// of those not yet told to the executor (Held).
	withheld heldQueue
	fresh    []Time
	now      func() Time // the run's clock (SetClock)
}

func newReadySource(g *GOAL, pending []uint16, r int) *readySource {
	s := &readySource{g: g, pending: pending, n: int(g.first[r+1] - g.first[r])}
	for i := g.ready[r]; i < g.ready[r+1]; i++ {
		s.ready = append(s.ready, *g.zeros.at(i))
		s.readyAt = append(s.readyAt, 0)
	}
	return s
}

// Next implements Source: the ready ops, without dependency lists.
func (s *readySource) Next(ops []Op) []Op {
	end := min(s.rhead+256, len(s.ready))
	for i, slot := range s.ready[s.rhead:end] {
		op := s.g.expand(slot)
		op.NotBefore = s.readyAt[s.rhead+i]
		ops = append(ops, op)
		s.byIdx = append(s.byIdx, slot)
	}
	s.rhead = end
	if s.rhead == len(s.ready) {
		s.ready, s.readyAt, s.rhead = s.ready[:0], s.readyAt[:0], 0
	}
	return ops
}

func (s *readySource) release(users []uint32) {
	for _, u := range users {
		if s.pending[u]--; s.pending[u] != 0 {
			continue
		}
		at := s.floors.take(u)
		if at != 0 && s.now != nil && at > s.now() {
			s.withheld.push(opFloor{u, at})
			s.fresh = append(s.fresh, at)
			continue
		}
		s.ready = append(s.ready, u)
		s.readyAt = append(s.readyAt, at)
	}
}

// SetClock implements heldSource.
func (s *readySource) SetClock(now func() Time) { s.now = now }

// Held implements heldSource.
func (s *readySource) Held(floors []Time) []Time {
	floors = append(floors, s.fresh...)
	s.fresh = s.fresh[:0]
	return floors
}

// ReleaseHeld implements heldSource: the withheld op whose event this is
// (the earliest floor, first withheld among equal ones) is ready.
func (s *readySource) ReleaseHeld() {
	f := s.withheld.pop()
	s.ready = append(s.ready, f.op)
	s.readyAt = append(s.readyAt, f.at)
}

// CompletedAt implements ReactiveSource.
func (s *readySource) CompletedAt(idx int32, at Time) bool {
	slot := s.byIdx[idx]
	var buf [maxRunUsers]uint32
	o := s.g.op(slot)
	users, after := s.g.usersOf(slot, o, &buf), s.g.requirers(o)
	return s.floors.holdUsers(s.pending, users[:after], at)
}

// Completed implements ReactiveSource.
func (s *readySource) Completed(idx int32) {
	slot := s.byIdx[idx]
	var buf [maxRunUsers]uint32
	o := s.g.op(slot)
	users, after := s.g.usersOf(slot, o, &buf), s.g.requirers(o)
	s.release(users[:after])
}

// Started implements ReactiveSource.
func (s *readySource) Started(idx int32) {
	slot := s.byIdx[idx]
	var buf [maxRunUsers]uint32
	o := s.g.op(slot)
	users, after := s.g.usersOf(slot, o, &buf), s.g.requirers(o)
	s.release(users[after:])
}

// Ended implements ReactiveSource.
func (s *readySource) Ended() bool { return len(s.byIdx) == s.n }

// Waiting implements ReactiveSource.
func (s *readySource) Waiting() int { return s.n - len(s.byIdx) - (len(s.ready) - s.rhead) }

// Needed implements ReactiveSource.
func (s *readySource) Needed(idx int32) bool { return s.g.requirers(s.g.op(s.byIdx[idx])) > 0 }

// NeedsStarts implements ReactiveSource.
func (s *readySource) NeedsStarts() bool { return s.g.hasStarts }

// goalSource reads a rank's ops in program order, with their dependency
// lists.
type goalSource struct {
	g       *GOAL
	r       int
	next, n uint32 // program indices
	dep     uint32 // where op next's dependency list begins in deps
}

// Len tells the executor the program's length, so it sizes the window once.
func (s *goalSource) Len() int { return int(s.n - s.next) }

func (s *goalSource) Next(ops []Op) []Op {
	stop := min(s.next+256, s.n)
	// The batch's dependency lists, in one slice of their own: the ops
	// handed out may be kept (Materialize keeps them).
	var deps []int32
	for k := s.next; k < stop; k++ {
		c := *s.g.depCounts.at(s.g.idOf(s.r, k))
		for range c&math.MaxUint16 + c>>16 {
			deps = append(deps, *s.g.deps.at(s.dep))
			s.dep++
		}
	}
	at := 0
	for ; s.next < stop; s.next++ {
		c := *s.g.depCounts.at(s.g.idOf(s.r, s.next))
		op := s.g.expand(s.g.slotOf(s.r, s.next))
		na, ns := int(c&math.MaxUint16), int(c>>16)
		op.After, op.StartAfter = deps[at:at+na:at+na], deps[at+na:at+na+ns:at+na+ns]
		at += na + ns
		ops = append(ops, op)
	}
	return ops
}

// chunked is an append-only table in chunks, so that a table of millions
// grows without copying and without the garbage of doubling one slice.
type chunked[T any] struct {
	chunks [][]T
	spare  []T // chunks made but not yet in use, from the last slab
	n      uint32
}

const (
	chunkBits = 16
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
	// maxSlab is the most chunks made at once: chunks come in slabs of
	// as many chunks as the table has, up to this, so that slabs are large
	// enough for huge pages (hugepage.Make) and waste at most half a table.
	maxSlab = 64
)

func (c *chunked[T]) add(v T) {
	if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == chunkLen {
		c.chunks = append(c.chunks, c.newChunk())
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// extend makes the table n long, the new entries zero.
func (c *chunked[T]) extend(n uint32) {
	for c.n < n {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == chunkLen {
			c.chunks = append(c.chunks, c.newChunk())
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(n-c.n, uint32(chunkLen-len(*last)))
		if uint32(cap(*last)-len(*last)) >= k {
			// A chunk's room is zero: made so, or cleared by truncate.
			*last = (*last)[:len(*last)+int(k)]
		} else {
			// The first chunk, grown at once to what is asked: by
			// appends, the ring at 1,024 ranks allocated 6.6 MB on the
			// way to its 1.3 MB, each move into fresh memory.
			*last = slices.Grow(*last, int(k))[:len(*last)+int(k)]
		}
		c.n += k
	}
}

// truncate cuts the table to its first n entries; the room it frees is
// zeroed, for extend, and the chunks it empties are let go, with the
// spare ones, so that the memory follows the table.
func (c *chunked[T]) truncate(n uint32) {
	for c.n > n {
		last := &c.chunks[len(c.chunks)-1]
		k := min(c.n-n, uint32(len(*last)))
		c.n -= k
		if k == uint32(len(*last)) && len(c.chunks) > 1 {
			c.chunks[len(c.chunks)-1] = nil
			c.chunks = c.chunks[:len(c.chunks)-1]
			continue
		}
		clear((*last)[len(*last)-int(k):])
		*last = (*last)[:len(*last)-int(k)]
	}
	c.spare = nil
}

// newChunk returns an empty chunk for c.
func (c *chunked[T]) newChunk() []T {
	if len(c.chunks) == 0 {
		// The first chunk grows as needed, so that a small table stays small.
		return nil
	}
	if len(c.spare) == 0 {
		c.spare = hugepage.Make[T](min(len(c.chunks), maxSlab) * chunkLen)
	}
	chunk := c.spare[:0:chunkLen]
	c.spare = c.spare[chunkLen:]
	return chunk
}

func (c *chunked[T]) at(i uint32) *T { return &c.chunks[i>>chunkBits][i&chunkMask] }

// run returns entries i to i+n, which must lie in one chunk.
func (c *chunked[T]) run(i, n uint32) []T {
	off := i & chunkMask
	return c.chunks[i>>chunkBits][off : off+n]
}

func (c *chunked[T]) len() uint32 { return c.n }

// floors are the ops of a rank that wait, besides their other
// dependencies, for a dependency that completed ahead of time: each starts
// no earlier than its floor. Few are held at once (in an exchange, the
// next step waits for its send and its receive, and the send completes
// ahead of time): one inline, the rest in a short list.
type floors struct {
	one  opFloor // at 0: none
	more []opFloor
}

type opFloor struct {
	op uint32
	at Time
}

// holdUsers decides for an op that completes at at, ahead of time, with
// users users: if one of them waits for it alone it declines (false), and
// the op must complete by an event; else each user counts it as met and is
// held until at.
func (f *floors) holdUsers(pending []uint16, users []uint32, at Time) bool {
	for _, u := range users {
		if pending[u] == 1 {
			return false
		}
	}
	for _, u := range users {
		pending[u]--
		f.hold(u, at)
	}
	return true
}

// hold records that op waits until at, at least. A floor is a time
// ahead, never 0: an inline entry at 0 is empty.
func (f *floors) hold(op uint32, at Time) {
	switch {
	case f.one.at == 0:
		f.one = opFloor{op, at}
		return
	case f.one.op == op:
		f.one.at = max(f.one.at, at)
		return
	}
	for i := range f.more {
		if f.more[i].op == op {
			f.more[i].at = max(f.more[i].at, at)
			return
		}
	}
	f.more = append(f.more, opFloor{op, at})
}

// take returns op's floor (0 if none) and forgets it.
func (f *floors) take(op uint32) Time {
	if f.one.op == op && f.one.at != 0 {
		at := f.one.at
		f.one = opFloor{}
		return at
	}
	for i, e := range f.more {
		if e.op == op {
			f.more[i] = f.more[len(f.more)-1]
			f.more = f.more[:len(f.more)-1]
			return e.at
		}
	}
	return 0
}

// empty reports whether no op is held.
func (f *floors) empty() bool { return f.one.at == 0 && len(f.more) == 0 }

// heldQueue is the ops withheld until their floor, earliest first and, at
// one floor, in the order they were withheld: the order in which the
// engine fires the events scheduled for them.
type heldQueue struct {
	items []heldItem
	seq   uint64
}

type heldItem struct {
	opFloor
	seq uint64
}

func (q *heldQueue) less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (q *heldQueue) push(f opFloor) {
	q.items = append(q.items, heldItem{f, q.seq})
	q.seq++
	for i := len(q.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *heldQueue) pop() opFloor {
	top := q.items[0].opFloor
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < last && q.less(l, m) {
			m = l
		}
		if l+1 < last && q.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}
