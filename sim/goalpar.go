package sim

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/collsim/collsim/sim/workers"
)

// A parallel LogGOPS run splits the ranks into partitions, each simulated
// by its own goroutine with its own engine, in windows of simulated time
// (conservative synchronisation, as in YAWNS): a message sent at s reaches
// its receiver no earlier than s+o+L, so every partition can run all its
// events before (earliest pending event anywhere)+o+L without hearing from
// the others; messages to other partitions wait in outboxes until the
// window ends.
//
// The result must equal the sequential run's bit for bit, and the two
// order events differently: the sequential run takes events of equal time
// in the order they were scheduled, across all ranks. That order matters
// only between events of the same host (rank): events of different hosts
// touch different state, provided that no event reaches into another host
// at once, which only a rendezvous send's completion does; so a run is
// parallel only while every send is eager. A host's events are then
// scheduled by the host itself, except the arrivals of messages, which
// other hosts schedule. Two events that a host scheduled itself run in the
// order it scheduled them in both runs, provided that its earlier events
// ran in the same order (by induction). An arrival at the time of another
// event of the host may run in another order than the sequential run's
// (it was scheduled on another host, and from another partition it is
// scheduled only once its window is over). The parallel run checks for
// this as it goes: at the first host with an arrival and another event at
// one time, or at any error or deadlock (whose report names ranks across
// partitions), it gives up and the run is done again sequentially. Such a
// tie exists in the sequential run exactly when it exists in the parallel
// one, by induction over time: events at t come from events before t, or
// from the same host at t, which are the same in both.

// Thresholds of a parallel run: below them the windows are too small to
// pay for the synchronisation. A window's barrier costs about as much as
// a few dozen events: a run whose first probeWindows windows average
// fewer than minWindowEvents events per partition (long calcs, few
// ranks) goes back to the sequential run.
const (
	minParallelOps   = 1 << 17 // ops in the schedule
	minRanksPerPart  = 16
	maxParallelParts = 8
	probeWindows     = 256
	minWindowEvents  = 32
)

// partitions returns how many partitions a LogGOPS run of g would use on
// procs processors: 1 (sequential) unless the schedule is large, every send
// is eager, messages take time (o+L > 0) and there is no noise (whose
// co-scheduled form is shared by all hosts).
func (g *GOAL) partitions(p LogGOPS, noise *Noise, procs int) int {
	if !g.parallelizable(p, noise) || g.Ops() < minParallelOps {
		return 1
	}
	return max(1, min(procs, g.Ranks/minRanksPerPart, maxParallelParts))
}

// parallelizable reports whether a LogGOPS run of g can be parallel at
// all: every send eager, messages that take time, and no noise.
func (g *GOAL) parallelizable(p LogGOPS, noise *Noise) bool {
	return noise == nil && p.O+p.L > 0 && g.maxSend <= p.S
}

// parallelRun is the shared state of a parallel run.
type parallelRun struct {
	parts []*goalRun
	// bounds[k] is partition k's first rank; bounds[len(parts)] = Ranks.
	bounds    []int32
	lookahead Time
	// A round of the run is a barrier and a window. Each of the following
	// exists twice, for even and odd rounds: a round reads what the
	// previous round wrote, while partitions that are already ahead write
	// the other copy. (One barrier a round rather than two, since the
	// windows of a ring are a few microseconds long.)
	//
	// out[from*len(parts)+to] holds the messages partition from sent to
	// partition to in a window.
	out [2][]([]crossMsg)
	// next[k] is the earliest event partition k has pending or has sent
	// (maxTime if none); stop[k] says it gave up; events[k] is how many
	// events it has run, ops[k] how many ops it has completed and
	// messages[k] sent.
	next     [2][]Time
	stop     [2][]bool
	events   [2][]uint64
	ops      [2][]uint64
	messages [2][]uint64
	last     []lastEvent // by rank
	bar      barrier
	// progress, when not nil, is told after each round, by partition 0,
	// how far the run has got.
	progress func(Progress)
	lastTold uint64 // the events progress was last told of
}

// lastEvent is when a rank's latest event ran, and whether it was an
// arrival.
type lastEvent struct {
	at      Time
	arrival bool
}

// crossMsg is a message bound for another partition, and when it arrives.
type crossMsg struct {
	at  Time
	msg message
}

const maxTime = Time(math.MaxInt64)

// runParallel runs g, parallelizable, in parts partitions (at most one
// per rank). It reports false, with no result, when the run must be done
// sequentially instead.
func (g *GOAL) runParallel(p LogGOPS, seed uint64, parts int, progress func(Progress)) (*Result, bool) {
	base := g.newTables(p, nil)
	base.pending = make([]uint16, g.Ops())
	base.p.remote = func(at Time, m *message) { panic("sim: a partition's message before its run") }
	pr := &parallelRun{
		bounds:    g.splitRanks(parts),
		lookahead: p.O + p.L,
		last:      make([]lastEvent, g.Ranks),
		bar:       barrier{n: int32(parts)},
		progress:  progress,
	}
	pr.bar.woken.L = &pr.bar.mu
	pr.parts = make([]*goalRun, parts)
	for b := range 2 {
		pr.out[b] = make([][]crossMsg, parts*parts)
		pr.next[b] = make([]Time, parts)
		pr.stop[b] = make([]bool, parts)
		pr.events[b] = make([]uint64, parts)
		pr.ops[b] = make([]uint64, parts)
		pr.messages[b] = make([]uint64, parts)
	}
	var wg workers.Group
	for k := 1; k < parts; k++ {
		wg.Go(func() { pr.work(k, base, seed) })
	}
	ok := pr.work(0, base, seed)
	wg.Wait()
	defer func() {
		for _, x := range pr.parts {
			x.p.arena.Free()
		}
	}()
	if !ok {
		return nil, false
	}
	for r := range g.Ranks {
		if !base.ranks[r].finished || base.p.match[r].unexp.live > 0 {
			return nil, false // a deadlock: the sequential run reports it
		}
	}
	return base.result(pr.parts), true
}

// splitRanks returns the first rank of each of parts partitions, and
// Ranks: contiguous ranks (neighbours talk most in most schedules) with
// about as many ops each.
func (g *GOAL) splitRanks(parts int) []int32 {
	bounds := make([]int32, parts+1)
	ops := g.first[g.Ranks]
	for k := 1; k < parts; k++ {
		want := uint32(uint64(ops) * uint64(k) / uint64(parts))
		r := sort.Search(g.Ranks, func(r int) bool { return g.first[r] >= want })
		bounds[k] = min(max(bounds[k-1]+1, int32(r)), int32(g.Ranks))
	}
	bounds[parts] = int32(g.Ranks)
	return bounds
}

// work is partition k's share of the run; it reports false when the run
// must be done sequentially (all partitions agree). It makes its own copy
// of base and its engine on its own goroutine, so that they are not
// allocated beside another partition's.
func (pr *parallelRun) work(k int, base *goalRun, seed uint64) bool {
	x := new(goalRun)
	*x = *base // shares the tables by rank and op; its own host price memo
	x.lo, x.hi = pr.bounds[k], pr.bounds[k+1]
	x.par, x.part = pr, k
	x.setEngine(seed)
	x.p.remote = func(at Time, m *message) { pr.send(x, at, *m) }
	pr.parts[k] = x
	parts := len(pr.parts)
	// Each partition sets its share of the tables by op and by rank: its
	// ranks' entries.
	x.g.fillDependencyCounts(x.pending, int(x.lo), int(x.hi))
	x.clearRanks()
	for r := x.lo; r < x.hi; r++ {
		pr.last[r].at = -1
	}
	pr.bar.wait() // the tables are filled
	x.start()
	pr.publish(x, 0, x.err != nil)
	for round := 0; ; round++ {
		pr.bar.wait()
		b := round % 2
		earliest := maxTime
		events := uint64(0)
		for j := range parts {
			if pr.stop[b][j] {
				return false
			}
			earliest = min(earliest, pr.next[b][j])
			events += pr.events[b][j]
		}
		if earliest == maxTime {
			return true
		}
		if k == 0 && pr.progress != nil && events-pr.lastTold >= ProgressEvents {
			pr.lastTold = events
			s := Progress{Now: earliest, Events: events, OpsTotal: uint64(x.g.Ops())}
			for j := range parts {
				s.Ops += pr.ops[b][j]
				s.Messages += pr.messages[b][j]
			}
			pr.progress(s)
		}
		if round == probeWindows && events < probeWindows*uint64(parts)*minWindowEvents {
			return false // windows too sparse to pay for their barriers
		}
		for from := range parts {
			for _, c := range pr.out[b][from*parts+k] {
				id := x.p.newMsg()
				x.p.msgs[id] = c.msg
				x.p.msgs[id].next = noMsg
				x.eng.At(c.at, x.id, pack(evArrive, 0, int32(id)))
			}
		}
		for to := range parts {
			pr.out[1-b][k*parts+to] = pr.out[1-b][k*parts+to][:0]
		}
		x.outCopy = 1 - b
		ok := pr.window(x, earliest+pr.lookahead)
		pr.publish(x, 1-b, !ok)
	}
}

// publish records for the next round, in copy b, partition x's earliest
// event and message, and whether it gave up.
func (pr *parallelRun) publish(x *goalRun, b int, stop bool) {
	parts := len(pr.parts)
	next := maxTime
	if at, ok := x.eng.peek(); ok {
		next = at
	}
	for to := range parts {
		for _, c := range pr.out[b][x.part*parts+to] {
			next = min(next, c.at)
		}
	}
	pr.next[b][x.part] = next
	pr.stop[b][x.part] = stop
	pr.events[b][x.part] = x.eng.Events()
	pr.ops[b][x.part] = x.ops
	pr.messages[b][x.part] = x.p.messages
}

// window runs partition x's events before end. It reports false when the
// run must be done sequentially: a host had an arrival and another event
// at one time, or an op failed.
func (pr *parallelRun) window(x *goalRun, end Time) bool {
	for {
		at, ok := x.eng.peek()
		if !ok || at >= end {
			return true
		}
		ev, _ := x.eng.next()
		kind, r, idx := unpack(ev.arg)
		if kind == evArrive {
			r = x.p.msgs[idx].dst
		}
		arrival := kind == evArrive
		if last := &pr.last[r]; last.at == at && (arrival || last.arrival) {
			return false
		}
		pr.last[r] = lastEvent{at, arrival}
		x.Handle(ev.arg)
		if x.err == nil {
			x.err = x.eng.Err() // the clock's limit
		}
		if x.err != nil {
			return false
		}
	}
}

// send posts message m, arriving at at, to the partition of its receiver.
func (pr *parallelRun) send(x *goalRun, at Time, m message) {
	to := sort.Search(len(pr.parts), func(k int) bool { return pr.bounds[k+1] > m.dst })
	out := &pr.out[x.outCopy][x.part*len(pr.parts)+to]
	*out = append(*out, crossMsg{at: at, msg: m})
}

// barrier holds each of n goroutines until all have reached it. It spins
// first, since a window's work is a few microseconds, too short to sleep
// on; then it yields; and after a while it sleeps, so that partitions that
// outnumber the processors (GOMAXPROCS above the cores there are) do not
// spin away the time the others need.
type barrier struct {
	n       int32
	arrived atomic.Int32
	round   atomic.Uint32
	mu      sync.Mutex
	woken   sync.Cond // on mu: round moved
}

// Spinning then yielding before a barrier sleeps: about 50 µs.
const (
	barrierSpins  = 100
	barrierYields = 1000
)

func (b *barrier) wait() {
	round := b.round.Load()
	if b.arrived.Add(1) == b.n {
		b.arrived.Store(0)
		b.mu.Lock()
		b.round.Add(1)
		b.mu.Unlock()
		b.woken.Broadcast()
		return
	}
	for spins := 0; spins < barrierSpins+barrierYields; spins++ {
		if b.round.Load() != round {
			return
		}
		if spins >= barrierSpins {
			runtime.Gosched()
		}
	}
	b.mu.Lock()
	for b.round.Load() == round {
		b.woken.Wait()
	}
	b.mu.Unlock()
}
