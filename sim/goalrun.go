package sim

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/collsim/collsim/sim/hugepage"
)

// RunLogGOPS simulates g in the LogGOPS model with parameters p, with OS
// noise when noise is not nil (its offsets drawn from seed).
//
// It is the executor of loggops.go and exec.go cut down to what a GOAL
// schedule needs: ops handed out as they become ready (as GOAL.Run's
// sources do), no data, no trace, no network but LogGOPS's. It runs the
// same events in the same order, so its result equals, bit for bit,
// Execute(New(seed), g.Run(name), Config{LogGOPS: &p, Noise: noise})
// (TestRunLogGOPSEqualsExecute); it differs in how it holds its state. The
// op table is read in place; every per-op and per-message record is a
// slot in a flat table reused through free lists, so that the hot loop
// allocates nothing; waiting messages queue through their records, not
// through slices. A deadlock is reported with each rank's program indices.
func (g *GOAL) RunLogGOPS(p LogGOPS, noise *Noise, seed uint64) (*Result, error) {
	return g.RunLogGOPSProgress(p, noise, seed, nil)
}

// RunLogGOPSProgress is RunLogGOPS telling progress, when not nil, how far
// the run has got every ProgressEvents events (or every window of a
// parallel run); it only observes.
func (g *GOAL) RunLogGOPSProgress(p LogGOPS, noise *Noise, seed uint64, progress func(Progress)) (*Result, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if g.CPUs > 1<<16 || g.NICs > 1<<16 {
		return nil, fmt.Errorf("%d CPUs and %d NICs per rank; at most 65536 each", g.CPUs, g.NICs)
	}
	if parts := g.partitions(p, noise, runtime.GOMAXPROCS(0)); parts > 1 {
		if res, ok := g.runParallel(p, seed, parts, progress); ok {
			return res, nil
		}
	}
	x := g.newRun(p, noise, seed)
	defer x.p.arena.Free() // after the deadlock report, which reads the queues
	if err := x.p.h.noise.start(x.eng, g.Ranks); err != nil {
		return nil, err
	}
	x.start()
	// The run owns the engine: it takes its events itself.
	for n := 1; x.err == nil && x.eng.Err() == nil; n++ {
		ev, ok := x.eng.next()
		if !ok {
			break
		}
		x.Handle(ev.arg)
		if progress != nil && n%ProgressEvents == 0 {
			progress(Progress{Now: x.eng.Now(), Events: x.eng.Events(), Ops: x.ops, OpsTotal: uint64(g.Ops()), Messages: x.p.messages})
		}
	}
	res := x.result([]*goalRun{x})
	if x.err == nil {
		x.err = x.eng.Err()
	}
	if x.err != nil {
		return res, x.err
	}
	if err := x.deadlock(); err != nil {
		return res, err
	}
	return res, nil
}

// newRun returns a run of g over all its ranks, ready to start.
func (g *GOAL) newRun(p LogGOPS, noise *Noise, seed uint64) *goalRun {
	x := g.newTables(p, noise)
	x.pending = g.dependencyCounts()
	x.hi = int32(g.Ranks)
	x.clearRanks()
	x.setEngine(seed)
	return x
}

// newTables returns a run of g with its tables by rank made but not yet
// set (a parallel run's partitions set their shares), and none by op.
func (g *GOAL) newTables(p LogGOPS, noise *Noise) *goalRun {
	x := &goalRun{
		g:     g,
		lg:    p,
		ranks: hugepage.Make[goalRank](g.Ranks),
	}
	x.p = newProtocol(nil, 0, nil, newHosts(g.Ranks, max(g.CPUs, 1), max(g.NICs, 1), noise, &x.lg), g.Ranks)
	return x
}

// clearRanks empties the ready lists of x's ranks.
func (x *goalRun) clearRanks() {
	for r := x.lo; r < x.hi; r++ {
		x.ranks[r].head, x.ranks[r].tail = noMsg, noMsg
	}
}

// setEngine gives x an engine of its own and empty tables of messages and
// ready ops; its protocol reports to it. Those tables, once large, and the
// queues of x's ranks go to an arena of x's own (huge pages from the
// first touch; a partition's memory apart from the others'), which the run
// frees when it ends (see grow and matchQueue.push). A run holds at most
// one ready entry per op of its ranks, and as many messages in the
// schedules that match each send with a receive (its ranks' sends, and
// messages to them); a table that needs more grows on the heap as before.
func (x *goalRun) setEngine(seed uint64) {
	x.eng = New(seed)
	x.id = x.eng.Register(x)
	x.p.eng, x.p.id, x.p.x = x.eng, x.id, x
	x.p.arena, x.p.room = hugepage.NewArena(), int(x.g.first[x.hi]-x.g.first[x.lo])
	for r := x.lo; r < x.hi; r++ {
		m := &x.p.match[r]
		m.posted.arena, m.unexp.arena = x.p.arena, x.p.arena
	}
	x.p.msgs, x.p.freeMsg = nil, noMsg
	x.p.lo, x.p.hi = x.lo, x.hi
	x.rdy, x.freeRdy = nil, noMsg
}

// start issues the ops of x's ranks that wait for nothing, at time 0.
func (x *goalRun) start() {
	g := x.g
	for r := x.lo; r < x.hi; r++ {
		rk := &x.ranks[r]
		for i := g.ready[r]; i < g.ready[r+1]; i++ {
			x.makeReady(rk, *g.zeros.at(i))
		}
	}
	for r := x.lo; r < x.hi; r++ {
		x.refill(r)
		x.finishIfDone(r)
	}
	x.drain()
}

// result collects the figures of the runs that shared the ranks between
// them (one, unless the run was parallel).
func (x *goalRun) result(parts []*goalRun) *Result {
	res := &Result{Finish: make([]Time, x.g.Ranks)}
	if len(parts) > 1 {
		res.Partitions = len(parts)
	}
	for _, px := range parts {
		res.Ops += px.ops
		res.Messages += px.p.messages
		res.Bytes += px.p.bytes
		res.Rendezvous += px.p.rendezvous
		res.Events += px.eng.Events()
	}
	for r := range x.ranks {
		rk := &x.ranks[r]
		rk.finish = max(rk.finish, x.p.h.idle(r))
		res.Finish[r] = rk.finish
		res.Makespan = max(res.Makespan, rk.finish)
	}
	return res
}

// goalRun is one LogGOPS run of a GOAL schedule.
type goalRun struct {
	g   *GOAL
	eng *Engine
	id  HandlerID
	lg  LogGOPS
	// p is the message protocol, with the hosts' CPUs and NICs. Its
	// tables by rank are shared by every partition of a parallel run.
	p protocol
	// The run simulates ranks lo to hi-1 (all, unless it is one partition
	// of a parallel run); the tables by rank and by op below are shared by
	// every partition, each using its ranks' entries only.
	lo, hi  int32
	ranks   []goalRank
	direct  []uint32 // release's ops to issue, a stack for nested releases
	pending []uint16 // by slot: dependencies not yet met
	// work holds completions and refills found while handling an event,
	// run in order once it is handled, as the executor's queue does.
	work    []uint64
	rdy     []readyNode // the ranks' ready ops, linked FIFO per rank
	freeRdy uint32
	ops     uint64 // ops completed
	err     error
	par     *parallelRun // nil unless the run is partition part of a parallel run
	part    int
	outCopy int // the copy of par's outboxes its messages go to this round
}

// goalRank is one rank's state.
type goalRank struct {
	head, tail uint32 // its ready ops not yet issued (in rdy), oldest first
	handed     uint32 // ops issued
	open       int32  // ops issued and not complete
	ended      bool   // every op issued
	finished   bool
	finish     Time
	lastDone   Time   // latest completion of ops completed ahead of time
	floors     floors // ops held until a dependency completed ahead of time completes
}

// grow doubles a full table before an append, where append would grow a
// large one by a quarter: a table that reaches n entries has then copied
// about n, not 4n, and the garbage of its old copies stays below n. In a
// run with an arena, a table that reaches arenaFrom entries moves instead
// to room for room entries reserved there, its worst case: it never moves
// again, and its pages are huge ones from their first touch. (Small tables
// stay on the heap: in a benchmark's loop, reserving both tables at every
// run, and touching their fresh mappings, cost a few percent more than the
// heap memory a previous run had touched.)
func grow[T any](s []T, a *hugepage.Arena, room int) []T {
	if len(s) < cap(s) || len(s) < 256 {
		return s
	}
	if a != nil && len(s) >= arenaFrom && room > len(s) {
		if t := hugepage.Reserve[T](a, room); cap(t) > len(s) {
			return append(t, s...)
		}
	}
	return hugepage.Grow(s, len(s))
}

// arenaFrom is the length from which a run's table of messages or of ready
// ops moves to its arena (a variable for tests).
var arenaFrom = 1 << 14

// readyNode links a ready op into its rank's FIFO, or a free node into the
// free list.
type readyNode struct{ op, next uint32 }

// Work items: a completion (op) or a refill of a rank.
const (
	workComplete = 0
	workRefill   = 1
)

func (x *goalRun) makeReady(rk *goalRank, id uint32) {
	n := x.freeRdy
	if n != noMsg {
		x.freeRdy = x.rdy[n].next
		x.rdy[n] = readyNode{op: id, next: noMsg}
	} else {
		n = uint32(len(x.rdy))
		x.rdy = append(grow(x.rdy, x.p.arena, x.p.room), readyNode{op: id, next: noMsg})
	}
	if rk.tail == noMsg {
		rk.head = n
	} else {
		x.rdy[rk.tail].next = n
	}
	rk.tail = n
}

// Handle runs the run's events; completions and refills they cause run
// after them, in order.
func (x *goalRun) Handle(arg uint64) {
	kind, r, idx := unpack(arg)
	switch kind {
	case evDone:
		x.finishOp(r, uint32(idx)) // as the work queue, empty now, would
	case evIssue: // its floor has come
		x.makeReady(&x.ranks[r], uint32(idx))
		x.work = append(x.work, pack(workRefill, r, 0))
	case evStarted:
		x.releaseStarts(r, uint32(idx))
	default:
		x.p.handle(kind, r, idx)
	}
	if len(x.work) > 0 {
		x.drain()
	}
}

func (x *goalRun) drain() {
	for i := 0; i < len(x.work); i++ {
		kind, r, idx := unpack(x.work[i])
		if kind == workRefill {
			x.refill(r)
			x.finishIfDone(r)
			continue
		}
		x.finishOp(r, uint32(idx))
	}
	x.work = x.work[:0]
}

func (x *goalRun) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

// refill issues rank r's ready ops, oldest first, including those that
// become ready meanwhile.
func (x *goalRun) refill(r int32) {
	rk := &x.ranks[r]
	for !rk.ended && x.err == nil {
		n := rk.head
		if n == noMsg {
			x.checkEnded(r, rk)
			return
		}
		id := x.rdy[n].op
		rk.head = x.rdy[n].next
		if rk.head == noMsg {
			rk.tail = noMsg
		}
		x.rdy[n].next = x.freeRdy
		x.freeRdy = n
		rk.handed++
		rk.open++
		x.issue(r, id)
	}
}

// checkEnded marks rank r ended when it has issued its whole program.
func (x *goalRun) checkEnded(r int32, rk *goalRank) {
	if rk.handed == x.g.first[r+1]-x.g.first[r] {
		rk.ended = true
	}
}

// release makes ready the users whose last dependency this was. When the
// rank has no ready op waiting and the schedule no irequires, it issues
// each at once instead, as refill would right after: an op issued then
// makes no other op of its rank ready (its completions wait in the work
// queue), so they issue in the ready list's order without it.
func (x *goalRun) release(r int32, users []uint32) {
	rk := &x.ranks[r]
	direct := !x.g.hasStarts && rk.head == noMsg
	start := len(x.direct) // a release inside an issue below stacks above
	for _, u := range users {
		if x.pending[u]--; x.pending[u] != 0 {
			continue
		}
		if !rk.floors.empty() {
			if at := rk.floors.take(u); at > x.eng.Now() {
				x.eng.At(at, x.id, pack(evIssue, r, int32(u)))
				continue
			}
		}
		if direct {
			x.direct = append(x.direct, u)
		} else {
			x.makeReady(rk, u)
		}
	}
	// Every user is counted down before any is issued, as a reactive
	// source does before the executor reads what it hands out: an op
	// issued here may complete ahead of time, and whether its own users
	// are then held (or it gets an event) depends on their counts.
	end := len(x.direct)
	for i := start; i < end; i++ {
		if x.err == nil {
			rk.handed++
			rk.open++
			x.issue(r, x.direct[i])
		}
	}
	x.direct = x.direct[:start]
}

// releaseStarts makes ready the ops that irequire op id, and refills.
func (x *goalRun) releaseStarts(r int32, id uint32) {
	var buf [maxRunUsers]uint32
	o := x.g.op(id)
	users, after := x.g.usersOf(id, o, &buf), x.g.requirers(o)
	x.release(r, users[after:])
	x.work = append(x.work, pack(workRefill, r, 0))
}

// issue starts op id of rank r, whose dependencies are met.
func (x *goalRun) issue(r int32, id uint32) {
	g := x.g
	o := g.op(id)
	cpu, nic := g.cpuNIC(id)
	now := x.eng.Now()
	switch o.kind() {
	case OpCalc:
		x.p.calc(r, id, cpu, Time(g.value(o))*Nanosecond)
	case OpSend:
		x.p.start(x.p.send(r, id, cpu, nic, o.peer, o.tag, g.value(o), false))
	case OpRecv:
		x.started(r, id, now)
		x.p.recv(r, id, o.peer, o.tag)
	}
}

// started: op id occupies its resources at at; the ops that irequire it
// may start then.
func (x *goalRun) started(r int32, id uint32, at Time) {
	if x.g.hasStarts {
		x.startedWaited(r, id, at)
	}
}

func (x *goalRun) startedWaited(r int32, id uint32, at Time) {
	if at == x.eng.Now() {
		x.releaseStarts(r, id)
		return
	}
	x.eng.At(at, x.id, pack(evStarted, r, int32(id)))
}

// completeAt completes op id of rank r at at >= now: now through the work
// queue, later by an event if some op waits for it, else ahead of time
// without one.
func (x *goalRun) completeAt(r int32, id uint32, at Time) {
	x.completeOpAt(r, id, x.g.op(id), at)
}

// completeOpAt is completeAt of op id, o, for callers that hold it. An op
// completing later, whose users all wait for something else too, holds
// them until then and completes ahead of time (floors.holdUsers), as the
// program executor does.
func (x *goalRun) completeOpAt(r int32, id uint32, o *goalOp, at Time) {
	if x.eng.pastLimit(at) {
		return
	}
	if at == x.eng.Now() {
		x.work = append(x.work, pack(workComplete, r, int32(id)))
		return
	}
	rk := &x.ranks[r]
	var buf [maxRunUsers]uint32
	if after := x.g.requirers(o); after > 0 && !rk.floors.holdUsers(x.pending, x.g.usersOf(id, o, &buf)[:after], at) {
		x.eng.At(at, x.id, pack(evDone, r, int32(id)))
		return
	}
	rk.open--
	rk.lastDone = max(rk.lastDone, at)
	x.ops++
	x.finishIfDone(r)
}

func (x *goalRun) finishOp(r int32, id uint32) {
	rk := &x.ranks[r]
	rk.open--
	x.ops++
	var buf [maxRunUsers]uint32
	o := x.g.op(id)
	users, after := x.g.usersOf(id, o, &buf), x.g.requirers(o)
	x.release(r, users[:after])
	if rk.finished {
		return
	}
	if rk.head != noMsg || x.err != nil {
		x.refill(r)
	} else if !rk.ended {
		x.checkEnded(r, rk) // all refill would do, without its call
	}
	x.finishIfDone(r)
}

func (x *goalRun) finishIfDone(r int32) {
	rk := &x.ranks[r]
	if rk.ended && rk.open == 0 && !rk.finished {
		rk.finished = true
		rk.finish = max(x.eng.Now(), rk.lastDone)
	}
}

// opStarted implements opSide.
func (x *goalRun) opStarted(r int32, op uint32, at Time) { x.started(r, op, at) }

// opDone implements opSide.
func (x *goalRun) opDone(r int32, op uint32, at Time) { x.completeAt(r, op, at) }

// recvPlace implements opSide.
func (x *goalRun) recvPlace(r int32, op uint32) (cpu, nic uint16) { return x.g.cpuNIC(op) }

// reduced implements opSide: a GOAL receive reduces nothing.
func (x *goalRun) reduced(r int32, op uint32, took Time) {}

// accept implements opSide: receive rid of rank r takes message id if the
// sizes agree.
func (x *goalRun) accept(r int32, rid uint32, id uint32) (Time, bool) {
	m := &x.p.msgs[id]
	if size := x.g.value(x.g.op(rid)); m.bytes > size {
		recv := x.g.expand(rid)
		x.fail(truncated(r, x.index(r, rid), recv.String(), m.bytes, m.src, x.index(m.src, m.send)))
		return 0, false
	}
	return 0, true
}

// truncated is the error of a receive matched by a larger message: MPI
// fails it with MPI_ERR_TRUNCATE. A smaller message is fine: a receive's
// size is the room it has, and the message is the send's size.
func truncated(r, op int32, recv string, bytes int64, src, send int32) error {
	return &TruncationError{Rank: r, Op: op, Recv: recv, Bytes: bytes, Src: src, Send: send}
}

// TruncationError is a receive matched by a message larger than it, which
// MPI reports as MPI_ERR_TRUNCATE: the schedule's mistake, as a deadlock
// is.
type TruncationError struct {
	Rank, Op  int32  // the receive
	Recv      string // the receive, described
	Bytes     int64  // the message's size
	Src, Send int32  // the send's rank and op
	// RecvWhere and SendWhere are "file:line" of the two ops, where a
	// file wrote them (GOAL.Locate); else "".
	RecvWhere, SendWhere string
}

func (e *TruncationError) Error() string {
	recv, send := e.Recv, ""
	if e.RecvWhere != "" {
		recv += ", " + e.RecvWhere
	}
	if e.SendWhere != "" {
		send = " (" + e.SendWhere + ")"
	}
	return fmt.Sprintf("rank %d op %d (%s) matched a message of %d bytes from rank %d op %d%s: larger than the receive (MPI_ERR_TRUNCATE)",
		e.Rank, e.Op, recv, e.Bytes, e.Src, e.Send, send)
}

// index is the index in rank r's program of the op in slot.
func (x *goalRun) index(r int32, slot uint32) int32 { return x.g.index(r, slot) }

// deadlock reports what is left when events ran out: the ranks that did
// not finish, and for each its ops that wait for dependencies, its posted
// receives and its rendezvous sends never matched, and the messages that
// arrived and were never received.
func (x *goalRun) deadlock() error {
	g := x.g
	stuck := false
	for r := range x.ranks {
		stuck = stuck || !x.ranks[r].finished || x.p.match[r].unexp.live > 0
	}
	if !stuck {
		return nil
	}
	de := &DeadlockError{At: x.eng.Now(), Ranks: g.Ranks}
	pendingOp := func(r int32, slot uint32, state string) PendingOp {
		op := g.expand(slot)
		return PendingOp{Rank: r, Index: g.index(r, slot), Op: op.String(), State: state}
	}
	var pend []PendingOp
	for r := range x.ranks {
		rk := &x.ranks[r]
		r32 := int32(r)
		pend = pend[:0]
		if !rk.finished {
			de.Blocked = append(de.Blocked, r32)
			for k := range g.first[r+1] - g.first[r] {
				if slot := g.slotOf(r, k); x.pending[slot] > 0 {
					n := x.pending[slot]
					pend = append(pend, pendingOp(r32, slot, fmt.Sprintf("waits for %d other ops", n)))
				}
			}
			x.p.match[r].posted.each(func(it *matchItem) {
				pend = append(pend, pendingOp(r32, it.val, "posted; no matching send arrived"))
			})
		}
		x.p.match[r].unexp.each(func(it *matchItem) {
			m := &x.p.msgs[it.val]
			if !m.sendDone {
				pend = append(pend, pendingOp(m.src, m.send, "sent (rendezvous); the receiver never matched it"))
			}
			pend = append(pend, PendingOp{Rank: r32, Index: -1, State: "arrived; no receive matched it",
				Op: fmt.Sprintf("message of %dB from rank %d tag %d (its op %d)", m.bytes, m.src, m.tag, g.index(m.src, m.send))})
		})
		slices.SortStableFunc(pend, func(a, b PendingOp) int {
			if a.Rank != b.Rank {
				return int(a.Rank - b.Rank)
			}
			return int(a.Index - b.Index)
		})
		for _, p := range pend {
			if len(de.Pending) < maxPendingReported {
				de.Pending = append(de.Pending, p)
			} else {
				de.Omitted++
			}
		}
	}
	if len(de.Blocked) == 0 && len(de.Pending) == 0 {
		return nil
	}
	return de
}
