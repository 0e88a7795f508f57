package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// HostParams are the CPU costs the executor charges on each rank.
type HostParams struct {
	// Overhead is the CPU time to start a send and to take in a received
	// message (LogP's o).
	Overhead Time
	// ReducePsPerByte is the CPU time per byte of reduction, in picoseconds
	// (the gamma of the alpha-beta-gamma model).
	ReducePsPerByte float64
	// EagerLimit is the largest message sent eagerly: such a send completes
	// once its data has left. A larger message uses rendezvous: its send
	// also waits until the receiver has matched it.
	EagerLimit int64
}

// Config says how to execute a schedule.
type Config struct {
	Host HostParams
	// Network moves messages. Leave it nil when LogGOPS is set.
	Network NetworkFactory
	// LogGOPS, when set, replaces Host's costs and Network by the LogGOPS
	// model of hosts and network (see loggops.go). Host.ReducePsPerByte
	// still prices reducing receives.
	LogGOPS *LogGOPS
	// Noise, when set, stretches CPU intervals by OS-noise detours.
	Noise *Noise
	// Trace, when set, is told when every op starts and completes (for
	// explanations and timelines). It costs nothing when nil.
	Trace func(TraceEvent)
	// Data, when not nil, holds every rank's buffers (Data[rank][buffer]);
	// the run then carries real elements in messages and applies the
	// schedule's ReduceOp, so the final buffers can be checked.
	Data [][][]uint64
	// Progress, when set, is told how far the run has got every
	// ProgressEvents events, for a progress display. It only observes: a
	// run gives the same result with it as without.
	Progress func(Progress)
	// FreeHosts, when set, picks by tag the messages whose hosts' costs
	// are free: no overhead to send or take them in, no reduction of
	// them (with a Network; Instant frees their network time). A
	// breakdown that makes one kind of message free makes it free
	// everywhere, as when every message is.
	FreeHosts func(tag int32) bool
}

// ProgressEvents is how many events a run takes between two calls of
// Config.Progress: few enough that a slow flow-model run (a max-min solve
// per event) reports several times a second, many enough that the calls
// cost nothing measurable.
const ProgressEvents = 4096

// Progress is how far a running execution has got.
type Progress struct {
	Now      Time   // the simulated time reached
	Events   uint64 // engine events run
	Ops      uint64 // ops completed
	OpsTotal uint64 // ops in the whole run, where known (a GOAL schedule); else 0
	Messages uint64 // messages sent
}

// TraceEvent is one op starting or completing.
type TraceEvent struct {
	At        Time
	Rank      int32
	Index     int32 // program index of the op
	Completed bool  // false: the op started
	Op        Op    // kind, peer, tag, bytes; Data, and a starting copy's Src, only in data mode
}

// Result is what an execution measured.
type Result struct {
	Finish   []Time // when each rank completed its last op
	Makespan Time   // the latest finish
	Ops      uint64 // ops completed
	Messages uint64 // messages sent
	Bytes    uint64 // message bytes sent
	// Rendezvous counts the messages to other ranks above the eager limit
	// (Config.Host.EagerLimit, or LogGOPS's S): with a Network each waited
	// for its receive's reply before its data left; in the LogGOPS model
	// (LogGOPSim's rule) its send completed only once the receiver took it.
	Rendezvous uint64
	Events     uint64 // engine events run
	// Partitions is how many partitions of ranks ran in parallel (see
	// GOAL.RunLogGOPS); 0 when the run was sequential.
	Partitions int
}

// MaxRanks is the largest number of ranks an execution supports.
const MaxRanks = 1 << 28

// Execute runs schedule s on eng under cfg until every rank has finished,
// and returns per-rank finish times. A schedule that cannot finish returns a
// *DeadlockError naming the blocked ranks and their pending ops.
//
// Memory grows with ranks and with ops in flight, not with the length of
// the programs: ops are read from each rank's Source as the rank advances
// and forgotten once complete.
func Execute(eng *Engine, s Schedule, cfg Config) (*Result, error) {
	if s.Ranks < 1 || s.Ranks > MaxRanks {
		return nil, fmt.Errorf("schedule %q: %d ranks; need 1..%d", s.Name, s.Ranks, MaxRanks)
	}
	if cfg.Host.ReducePsPerByte < 0 || math.IsNaN(cfg.Host.ReducePsPerByte) || cfg.Host.Overhead < 0 {
		return nil, errors.New("host parameters must not be negative")
	}
	x := &executor{
		eng:       eng,
		host:      cfg.Host,
		data:      cfg.Data,
		reduce:    s.ReduceOp,
		lookahead: int32(max(s.Lookahead, 1)),
		ranks:     make([]rank, s.Ranks),
		freeEdge:  -1,
		trace:     cfg.Trace,
	}
	if x.data != nil && len(x.data) != s.Ranks {
		return nil, fmt.Errorf("data mode: %d rank buffers for %d ranks", len(x.data), s.Ranks)
	}
	cpus, nics := max(s.CPUs, 1), max(s.NICs, 1)
	if cpus > 1<<16 || nics > 1<<16 {
		return nil, fmt.Errorf("schedule %q: %d CPUs and %d NICs per rank; at most 65536 each", s.Name, cpus, nics)
	}
	x.id = eng.Register(x)
	x.p = newProtocol(eng, x.id, x, newHosts(s.Ranks, cpus, nics, cfg.Noise, cfg.LogGOPS), s.Ranks)
	if err := x.p.h.noise.start(eng, s.Ranks); err != nil {
		return nil, err
	}
	if lg := x.p.h.lg; lg != nil {
		if cfg.Network != nil {
			return nil, errors.New("LogGOPS mode models the network itself: give no Network")
		}
		if err := lg.check(); err != nil {
			return nil, err
		}
		x.host.EagerLimit = lg.S
	} else {
		if cfg.Network == nil {
			return nil, errors.New("no network: give a Network or LogGOPS")
		}
		net, err := cfg.Network(eng, x, s.Ranks)
		if err != nil {
			return nil, err
		}
		x.p.net, x.p.eager, x.p.overhead = net, cfg.Host.EagerLimit, cfg.Host.Overhead
		if sp, ok := net.(SinglePort); ok {
			x.p.ordered = sp.OneAtATime()
		}
		x.p.freeHosts = cfg.FreeHosts
	}
	for r := range x.ranks {
		rk := &x.ranks[r]
		rk.src = s.Rank(r)
		rk.reactive, _ = rk.src.(ReactiveSource)
		rk.matching, _ = rk.src.(MatchingSource)
		if rk.held, _ = rk.src.(heldSource); rk.held != nil {
			rk.held.SetClock(x.eng.Now)
		}
	}
	x.draining = true
	for r := range x.ranks {
		x.refill(int32(r))
		x.finishIfDone(int32(r))
	}
	x.drainQueue()
	x.draining = false
	if cfg.Progress == nil {
		eng.Run()
	} else {
		for eng.RunFor(ProgressEvents) {
			cfg.Progress(Progress{Now: eng.Now(), Events: eng.Events(), Ops: x.ops, Messages: x.p.messages})
		}
	}
	res := &Result{
		Finish:     make([]Time, len(x.ranks)),
		Ops:        x.ops,
		Messages:   x.p.messages,
		Bytes:      x.p.bytes,
		Rendezvous: x.p.rendezvous,
		Events:     eng.Events(),
	}
	for r := range x.ranks {
		// A CPU may stay busy after a rank's last op completes (taking in a
		// message nobody waits for yet): the rank is done when it is idle.
		x.ranks[r].finish = max(x.ranks[r].finish, x.p.h.idle(r))
		res.Finish[r] = x.ranks[r].finish
		res.Makespan = max(res.Makespan, x.ranks[r].finish)
	}
	if x.err == nil {
		x.err = eng.Err()
	}
	if x.err != nil {
		return res, x.err
	}
	if err := x.deadlock(); err != nil {
		return res, err
	}
	return res, nil
}

const (
	slotWaiting   uint8 = iota // read; some dependency not complete
	slotIssued                 // started
	slotDone                   // complete
	slotDoneLater              // will be complete at doneAt; nothing waits on it yet
)

// slot is one read, not yet forgotten op of a rank.
type slot struct {
	kind     OpKind
	reduce   bool
	conc     bool // a concurrent send
	state    uint8
	startEv  bool // an event is scheduled for its start
	cpu, nic uint16
	peer     int32
	tag      int32
	pending  int32  // dependencies (of either kind) not yet met
	deps     int32  // head of the list of ops waiting for this one to complete; -1 if none
	last     int32  // tail of that list, so that waiters issue in program order
	sdeps    int32  // head of the list of ops waiting for this one to start; -1 if none
	slast    int32  // its tail
	msg      uint32 // send: its message
	bytes    int64
	dur      Time
	doneAt   Time // slotDoneLater: when it completes
	startAt  Time // issued: when it occupies its resources (may be later than issue)
	// notBefore is when the latest of its dependencies that completed
	// ahead of time completes: it starts no earlier.
	notBefore Time
}

// rank is one rank's interpreter state.
type rank struct {
	src      Source
	reactive ReactiveSource   // src, if it is reactive
	matching MatchingSource   // src, if it is told what its receives match
	held     heldSource       // src, if it withholds ops
	win      []slot           // ring buffer of ops base..next-1, indexed by program index
	data     []Region         // data mode only: each slot's region, same indexing
	copies   map[int32]Region // data mode only: the Src of copying calcs not yet issued
	base     int32            // oldest op not yet complete (all before it are)
	next     int32            // program index of the next op to read
	waiting  int32            // read ops waiting for dependencies
	open     int32            // read ops not complete
	ended    bool             // the source has no more ops
	finished bool
	finish   Time
	lastDone Time // latest completion time of ops completed ahead of time
}

// edge says that op waits for the op whose list it is in.
type edge struct{ op, next int32 }

const noMsg = math.MaxUint32

// Event kinds, packed into the top bits of an event's argument (the
// protocol's follow, in protocol.go).
const (
	evDone    = 1 // the op's CPU work ends: it completes
	evIssue   = 2 // the time an op's dependencies hold it until has come: it starts
	evStarted = 3 // the op occupies its resources: ops that irequire it may start
	evHeld    = 9 // a reactive source's withheld op may start (heldSource); 4..8 are the protocol's
)

func pack(kind uint64, r, idx int32) uint64 {
	return kind<<60 | uint64(r)<<32 | uint64(uint32(idx))
}

func unpack(arg uint64) (kind uint64, r, idx int32) {
	return arg >> 60, int32(arg >> 32 & (1<<28 - 1)), int32(uint32(arg))
}

type executor struct {
	eng       *Engine
	id        HandlerID
	host      HostParams
	data      [][][]uint64
	payloads  [][]uint64 // data mode: each message's elements, by message ID
	copyBuf   []uint64   // data mode: a copying calc's elements on their way
	reduce    ReduceOp
	lookahead int32
	ranks     []rank
	edges     []edge
	freeEdge  int32
	queue     []uint64 // ops completed but not yet processed, FIFO
	floorBuf  []Time   // announceHeld's scratch
	qhead     int
	draining  bool
	scratch   []Op
	p         protocol
	trace     func(TraceEvent)
	finished  int
	ops       uint64
	err       error
}

func (x *executor) slot(r, idx int32) *slot {
	w := x.ranks[r].win
	return &w[int(idx)&(len(w)-1)]
}

// Handle runs the executor's own events.
func (x *executor) Handle(arg uint64) {
	kind, r, idx := unpack(arg)
	nested := x.enter()
	switch kind {
	case evDone:
		x.complete(r, idx)
	case evIssue:
		x.ranks[r].waiting--
		x.issue(r, idx)
		x.refillLater(r)
	case evStarted:
		x.fireStarts(r, idx)
	case evHeld:
		x.ranks[r].held.ReleaseHeld()
		x.refillLater(r)
	default:
		x.p.handle(kind, r, idx)
	}
	x.leave(nested)
}

// occupy runs rank r's CPU for d, after whatever it is doing, stretched by
// OS noise; it returns when the CPU starts and when it is free again.
func (x *executor) occupy(r int32, cpu uint16, d Time) (start, end Time) {
	return x.p.h.occupy(r, cpu, x.eng.Now(), d)
}

// started records that op idx occupies its resources at time at; ops that
// irequire it may start then.
func (x *executor) started(r, idx int32, at Time) {
	s := x.slot(r, idx)
	s.startAt = at
	if x.trace != nil {
		x.emitTrace(r, idx, at, false)
	}
	if x.data != nil && s.kind == OpCalc {
		delete(x.ranks[r].copies, idx) // its trace had its source
	}
	if rk := &x.ranks[r]; rk.reactive != nil && rk.reactive.NeedsStarts() {
		if at == x.eng.Now() {
			rk.reactive.Started(idx)
			x.announceHeld(r)
			x.refillLater(r)
		} else {
			x.eng.At(at, x.id, pack(evStarted, r, idx))
		}
		return
	}
	if s.sdeps < 0 {
		return
	}
	if at == x.eng.Now() {
		x.fireStarts(r, idx)
		return
	}
	s.startEv = true
	x.eng.At(at, x.id, pack(evStarted, r, idx))
}

// fireStarts releases the ops waiting for op idx to start.
func (x *executor) fireStarts(r, idx int32) {
	if rk := &x.ranks[r]; rk.reactive != nil {
		rk.reactive.Started(idx)
		x.announceHeld(r)
		x.refillLater(r)
		return
	}
	s := x.slot(r, idx)
	e := s.sdeps
	s.sdeps, s.startEv = -1, false
	x.release(r, e, x.eng.Now())
}

func (x *executor) emitTrace(r, idx int32, at Time, completed bool) {
	s := x.slot(r, idx)
	op := Op{Kind: s.kind, Reduce: s.reduce, Peer: s.peer, Tag: s.tag, Bytes: s.bytes, Dur: s.dur, CPU: s.cpu, NIC: s.nic}
	if x.data != nil {
		op.Data = x.region(r, idx)
		if s.kind == OpCalc && !completed {
			op.Src = x.ranks[r].copies[idx] // a local copy's source
		}
	}
	x.trace(TraceEvent{At: at, Rank: r, Index: idx, Completed: completed, Op: op})
}

// heldSource is a reactive source that withholds an op whose dependencies
// are met while a dependency that completed ahead of time (CompletedAt)
// still holds it until a time ahead of the clock given to SetClock: Held
// appends the floors of the ops it began to withhold since the last call,
// and ReleaseHeld makes ready the withheld op whose event fires (the
// earliest floor, first withheld among equal ones). The executor schedules
// that event the moment the op's dependencies are met, as the GOAL
// executor schedules its start, so that it keeps its place among the
// events of its instant (a message arriving then finds it posted or not by
// that place).
type heldSource interface {
	SetClock(now func() Time)
	Held(floors []Time) []Time
	ReleaseHeld()
}

// announceHeld schedules an event at the floor of each op rank r's source
// began to withhold.
func (x *executor) announceHeld(r int32) {
	hs := x.ranks[r].held
	if hs == nil {
		return
	}
	x.floorBuf = hs.Held(x.floorBuf[:0])
	for _, at := range x.floorBuf {
		x.eng.At(at, x.id, pack(evHeld, r, 0))
	}
}

// refillLater reads a reactive rank's newly ready ops once the current
// completion work is done (it is queued like a completion, so that it runs
// in order and never inside the walk of an edge list).
func (x *executor) refillLater(r int32) {
	x.queue = append(x.queue, pack(1, r, 0))
}

// release walks an edge list of ops waiting for one that completes at
// at (now, or later for an op completed ahead of time), issuing the ops
// whose last dependency it was (when the latest of their dependencies
// completes), and frees the edges.
func (x *executor) release(r int32, e int32, at Time) {
	now := x.eng.Now()
	for e >= 0 {
		ed := x.edges[e]
		d := x.slot(r, ed.op)
		d.notBefore = max(d.notBefore, at)
		d.pending--
		if d.pending == 0 {
			x.ready(r, ed.op, d, now)
		}
		x.edges[e].next = x.freeEdge
		x.freeEdge = e
		e = ed.next
	}
}

// ready issues op idx (slot d), whose dependencies are all met or will
// be: now, or by an event when the latest completes. Until then it still
// counts as waiting (for the lookahead, as MPI's program order has it).
func (x *executor) ready(r, idx int32, d *slot, now Time) {
	if d.notBefore > now {
		x.eng.At(d.notBefore, x.id, pack(evIssue, r, idx))
		return
	}
	x.ranks[r].waiting--
	x.issue(r, idx)
}

// lastFor reports whether some op on edge list e waits for nothing but
// the op the list belongs to.
func (x *executor) lastFor(r int32, e int32) bool {
	for ; e >= 0; e = x.edges[e].next {
		if x.slot(r, x.edges[e].op).pending == 1 {
			return true
		}
	}
	return false
}

// Injected implements Sink.
func (x *executor) Injected(id uint32, at Time) {
	nested := x.enter()
	x.p.Injected(id, at)
	x.leave(nested)
}

// Delivered implements Sink.
func (x *executor) Delivered(id uint32) {
	nested := x.enter()
	x.p.Delivered(id)
	x.leave(nested)
}

// enter and leave bracket every entry point; completions found inside are
// processed in FIFO order by the outermost one, so that long chains of
// zero-cost ops neither recurse nor depend on call depth.
func (x *executor) enter() bool {
	was := x.draining
	x.draining = true
	return was
}

func (x *executor) leave(nested bool) {
	if nested {
		return
	}
	x.drainQueue()
	x.draining = false
}

func (x *executor) drainQueue() {
	for x.qhead < len(x.queue) {
		kind, r, idx := unpack(x.queue[x.qhead])
		x.qhead++
		if kind == 1 {
			x.refill(r)
			x.finishIfDone(r)
			continue
		}
		x.finishOp(r, idx)
	}
	x.queue = x.queue[:0]
	x.qhead = 0
}

func (x *executor) fail(err error) {
	if x.err == nil {
		x.err = err
	}
	x.eng.Stop()
}

// refill reads rank r's next ops while fewer than lookahead of them wait.
// A reactive source is read until it has nothing ready.
func (x *executor) refill(r int32) {
	rk := &x.ranks[r]
	for !rk.ended && rk.waiting < x.lookahead && x.err == nil {
		var ops []Op
		ops, x.scratch = nextOps(rk.src, x.scratch, x.lookahead-rk.waiting)
		if len(ops) == 0 {
			if fs, ok := rk.src.(FailingSource); ok && fs.Err() != nil {
				x.fail(fs.Err())
				break
			}
			if rk.reactive == nil || rk.reactive.Ended() {
				rk.ended = true
			}
			break
		}
		for i := range ops {
			x.read(r, &ops[i])
		}
	}
}

func (x *executor) read(r int32, op *Op) {
	rk := &x.ranks[r]
	idx := rk.next
	if idx == math.MaxInt32 {
		x.fail(fmt.Errorf("rank %d: more than %d ops", r, math.MaxInt32))
		return
	}
	if err := checkOp(r, idx, op, int32(len(x.ranks))); err != nil {
		x.fail(err)
		return
	}
	if x.data != nil && (op.Kind != OpCalc || op.Src.Count > 0) {
		bufs := x.data[r]
		regions := []Region{op.Data}
		if op.Kind == OpCalc {
			regions = append(regions, op.Src)
		}
		for _, reg := range regions {
			if _, hi := reg.Span(); int(reg.Buf) >= len(bufs) || hi > int64(len(bufs[reg.Buf])) {
				x.fail(fmt.Errorf("rank %d op %d (%v): data region %+v outside the rank's buffers", r, idx, op, reg))
				return
			}
		}
		if op.Kind == OpCalc {
			if rk.copies == nil {
				rk.copies = map[int32]Region{}
			}
			rk.copies[idx] = op.Src
		}
	}
	if int(idx-rk.base) == len(rk.win) {
		x.grow(rk)
	}
	if h := &x.p.h; int(op.CPU) >= h.cpus || int(op.NIC) >= h.nics {
		x.fail(fmt.Errorf("rank %d op %d (%v): CPU %d, NIC %d; the schedule declares %d CPUs and %d NICs", r, idx, op, op.CPU, op.NIC, h.cpus, h.nics))
		return
	}
	s := x.slot(r, idx)
	*s = slot{notBefore: op.NotBefore, kind: op.Kind, reduce: op.Reduce, conc: op.Concurrent, cpu: op.CPU, nic: op.NIC, peer: op.Peer, tag: op.Tag, bytes: op.Bytes, dur: op.Dur, deps: -1, sdeps: -1, msg: noMsg}
	if x.data != nil {
		rk.data[int(idx)&(len(rk.data)-1)] = op.Data
	}
	now := x.eng.Now()
	for _, d := range op.StartAfter {
		if d < rk.base {
			continue
		}
		ds := x.slot(r, d)
		if ds.state != slotWaiting && ds.startAt <= now {
			continue
		}
		if ds.state != slotWaiting && !ds.startEv {
			ds.startEv = true
			x.eng.At(ds.startAt, x.id, pack(evStarted, r, d))
		}
		x.appendEdge(&ds.sdeps, &ds.slast, idx)
		s.pending++
	}
	for _, d := range op.After {
		if d < rk.base {
			continue
		}
		ds := x.slot(r, d)
		if ds.state == slotDone {
			continue
		}
		if ds.state == slotDoneLater {
			// Done ahead of time: this op starts no earlier than then.
			s.notBefore = max(s.notBefore, ds.doneAt)
			continue
		}
		x.appendEdge(&ds.deps, &ds.last, idx)
		s.pending++
	}
	rk.next++
	rk.open++
	rk.waiting++
	if s.pending == 0 {
		x.ready(r, idx, s, now)
	}
}

// grow doubles a rank's window, keeping every op at its program index. A
// source that knows its length (a materialized program) gets a window of
// that size at once.
func (x *executor) grow(rk *rank) {
	n := max(2*len(rk.win), 2)
	if len(rk.win) == 0 {
		if sized, ok := rk.src.(interface{ Len() int }); ok {
			n = max(n, pow2(min(sized.Len(), 1<<16)))
		}
	}
	win := make([]slot, n)
	for i := rk.base; i < rk.next; i++ {
		win[int(i)&(n-1)] = rk.win[int(i)&(len(rk.win)-1)]
	}
	rk.win = win
	if x.data != nil {
		data := make([]Region, n)
		for i := rk.base; i < rk.next; i++ {
			data[int(i)&(n-1)] = rk.data[int(i)&(len(rk.data)-1)]
		}
		rk.data = data
	}
}

// pow2 is the least power of two >= n (n >= 1).
func pow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// region returns op idx's data region (data mode).
func (x *executor) region(r, idx int32) Region {
	d := x.ranks[r].data
	return d[int(idx)&(len(d)-1)]
}

// appendEdge adds op at the tail of the edge list (head, tail), so that
// waiters are released in program order.
func (x *executor) appendEdge(head, tail *int32, op int32) {
	e := x.newEdge(op)
	if *head < 0 {
		*head = e
	} else {
		x.edges[*tail].next = e
	}
	*tail = e
}

func (x *executor) newEdge(op int32) int32 {
	if x.freeEdge >= 0 {
		i := x.freeEdge
		x.freeEdge = x.edges[i].next
		x.edges[i] = edge{op: op, next: -1}
		return i
	}
	x.edges = append(x.edges, edge{op: op, next: -1})
	return int32(len(x.edges) - 1)
}

// issue starts an op whose dependencies are met.
func (x *executor) issue(r, idx int32) {
	s := x.slot(r, idx)
	s.state = slotIssued
	now := x.eng.Now()
	switch s.kind {
	case OpCalc:
		if x.data != nil {
			if src, ok := x.ranks[r].copies[idx]; ok { // forgotten once started (started)
				dst := x.region(r, idx)
				bufs := x.data[r]
				// Through a scratch copy: a pack or unpack's regions may
				// interleave in one buffer.
				x.copyBuf = src.Gather(x.copyBuf[:0], bufs[src.Buf])
				var apply func(dst, src []uint64)
				if s.reduce {
					apply = x.reduce.Apply
				}
				dst.Scatter(bufs[dst.Buf], x.copyBuf, apply)
			}
		}
		x.p.calc(r, uint32(idx), s.cpu, s.dur+x.reduceCost(s.bytes))
	case OpSend:
		id := x.p.send(r, uint32(idx), s.cpu, s.nic, s.peer, s.tag, s.bytes, s.conc)
		s.msg = id
		if x.data != nil {
			if int(id) >= len(x.payloads) {
				x.payloads = append(x.payloads, make([][]uint64, int(id)+1-len(x.payloads))...)
			}
			reg := x.region(r, idx)
			buf := x.data[r][reg.Buf]
			x.payloads[id] = reg.Gather(x.payloads[id][:0], buf)
		}
		if x.p.net == nil {
			x.p.start(id)
			return
		}
		o := x.host.Overhead
		if x.p.freeHosts != nil && x.p.freeHosts(s.tag) {
			o = 0
		}
		start, end := x.occupy(r, s.cpu, o)
		x.started(r, idx, start)
		if end == now {
			x.p.post(id)
		} else {
			x.eng.At(end, x.id, pack(evPost, r, int32(id)))
		}
	case OpRecv:
		x.started(r, idx, now)
		x.p.recv(r, uint32(idx), s.peer, s.tag)
	}
}

func (x *executor) reduceCost(bytes int64) Time {
	if bytes == 0 || x.host.ReducePsPerByte == 0 {
		return 0
	}
	return FromPicoseconds(float64(bytes) * x.host.ReducePsPerByte)
}

// opStarted implements opSide.
func (x *executor) opStarted(r int32, op uint32, at Time) { x.started(r, int32(op), at) }

// opDone implements opSide.
func (x *executor) opDone(r int32, op uint32, at Time) { x.completeAt(r, int32(op), at) }

// recvPlace implements opSide.
func (x *executor) recvPlace(r int32, op uint32) (cpu, nic uint16) {
	s := x.slot(r, int32(op))
	return s.cpu, s.nic
}

// accept implements opSide: receive idx of rank r takes message id.
func (x *executor) accept(r int32, op uint32, id uint32) (Time, bool) {
	idx := int32(op)
	s := x.slot(r, idx)
	m := &x.p.msgs[id]
	if m.bytes > s.bytes {
		x.fail(truncated(r, idx, opString(s), m.bytes, m.src, int32(m.send)))
		return 0, false
	}
	if ms := x.ranks[r].matching; ms != nil {
		ms.Received(idx, m.src, m.tag)
	}
	if x.data != nil {
		reg := x.region(r, idx)
		payload := x.payloads[id]
		if int64(len(payload)) > reg.Count {
			x.fail(fmt.Errorf("rank %d op %d (%s) has room for %d elements but rank %d op %d sent %d",
				r, idx, opString(s), reg.Count, m.src, m.send, len(payload)))
			return 0, false
		}
		// A shorter message fills the start of the receive, as in MPI.
		var apply func(dst, src []uint64)
		if s.reduce {
			apply = x.reduce.Apply
		}
		reg.Scatter(x.data[r][reg.Buf], payload, apply)
	}
	if s.reduce {
		return x.reduceCost(m.bytes), true
	}
	return 0, true
}

// reduced implements opSide: the op's completion tells the trace how long
// its reduction, at its end, took (Op.Dur of a TraceEvent).
func (x *executor) reduced(r int32, op uint32, took Time) { x.slot(r, int32(op)).dur = took }

// completeAt completes op idx of rank r at time at >= now. An op completing
// later is marked done ahead of time, without an event, unless it is the
// last dependency of an op waiting for it (that op then starts at its
// event): the ops waiting for it are released now, to start no earlier
// than at once their other dependencies complete (a send's and a receive's
// of one exchange: the receive's, later, issues the next step), and an op
// read later that depends on it starts no earlier than at (see read). A
// reactive source is told ahead of time (CompletedAt) and holds the ops it
// hands out later by the same rule, or declines, and the op gets its event.
func (x *executor) completeAt(r, idx int32, at Time) {
	if x.eng.pastLimit(at) {
		return
	}
	if at == x.eng.Now() {
		x.complete(r, idx)
		return
	}
	s := x.slot(r, idx)
	if re := x.ranks[r].reactive; re != nil && re.Needed(idx) && !re.CompletedAt(idx, at) || x.lastFor(r, s.deps) {
		x.eng.At(at, x.id, pack(evDone, r, idx))
		return
	}
	if e := s.deps; e >= 0 {
		s.deps = -1
		x.release(r, e, at)
	}
	rk := &x.ranks[r]
	if x.trace != nil {
		x.emitTrace(r, idx, at, true)
	}
	s.state, s.doneAt = slotDoneLater, at
	rk.open--
	rk.lastDone = max(rk.lastDone, at)
	x.ops++
	x.finishIfDone(r)
}

// complete queues op idx of rank r as complete.
func (x *executor) complete(r, idx int32) {
	x.queue = append(x.queue, pack(0, r, idx))
}

func (x *executor) finishOp(r, idx int32) {
	rk := &x.ranks[r]
	s := x.slot(r, idx)
	if x.trace != nil && s.state != slotDoneLater {
		x.emitTrace(r, idx, x.eng.Now(), true)
	}
	s.state = slotDone
	rk.open--
	x.ops++
	e := s.deps
	s.deps = -1
	x.release(r, e, x.eng.Now())
	if rk.reactive != nil {
		rk.reactive.Completed(idx)
		x.announceHeld(r)
	}
	if rk.finished {
		// Releasing issued the rank's last ops, which completed ahead of
		// time and finished the rank: its window is gone.
		return
	}
	now := x.eng.Now()
	for rk.base < rk.next {
		if b := x.slot(r, rk.base); b.state != slotDone && (b.state != slotDoneLater || b.doneAt > now) {
			break
		}
		rk.base++
	}
	x.refill(r)
	x.finishIfDone(r)
}

func (x *executor) finishIfDone(r int32) {
	rk := &x.ranks[r]
	if rk.ended && rk.open == 0 && !rk.finished {
		rk.finished = true
		rk.finish = max(x.eng.Now(), rk.lastDone)
		x.finished++
		rk.win, rk.data = nil, nil // a finished rank keeps no window
	}
}

func opString(s *slot) string {
	op := Op{Kind: s.kind, Reduce: s.reduce, Peer: s.peer, Tag: s.tag, Bytes: s.bytes, Dur: s.dur}
	return op.String()
}

// PendingOp is an op that could not complete, as a DeadlockError reports it.
type PendingOp struct {
	Rank  int32
	Index int32 // program index; -1 for a message nobody received
	Op    string
	State string
	Where string // "file:line" of the op, where a file wrote it (GOAL.Locate); else ""
}

// DeadlockError reports a schedule that cannot finish: the blocked ranks and
// every op they wait on (up to maxPendingReported), and messages that were
// sent but never received.
type DeadlockError struct {
	At      Time
	Ranks   int
	Blocked []int32
	Pending []PendingOp
	Omitted int // pending ops left out of Pending
}

const maxPendingReported = 1000

// pendingShown is how many pending ops a DeadlockError's message names.
const pendingShown = 8

// Error lists the blocked ranks and the first pending ops, one clause each.
func (e *DeadlockError) Error() string {
	var b strings.Builder
	if len(e.Blocked) > 0 {
		fmt.Fprintf(&b, "deadlock at %v: %d of %d ranks cannot finish (ranks %s)", e.At, len(e.Blocked), e.Ranks, rankList(e.Blocked))
	} else {
		fmt.Fprintf(&b, "unmatched messages at %v: every rank finished but messages were never received", e.At)
	}
	for i, p := range e.Pending {
		if i == pendingShown {
			fmt.Fprintf(&b, "; and %d more", len(e.Pending)-pendingShown+e.Omitted)
			break
		}
		if p.Index >= 0 && p.Where != "" {
			fmt.Fprintf(&b, "; rank %d op %d (%s) %s: %s", p.Rank, p.Index, p.Where, p.Op, p.State)
		} else if p.Index >= 0 {
			fmt.Fprintf(&b, "; rank %d op %d %s: %s", p.Rank, p.Index, p.Op, p.State)
		} else {
			fmt.Fprintf(&b, "; at rank %d, %s: %s", p.Rank, p.Op, p.State)
		}
	}
	return b.String()
}

func rankList(ranks []int32) string {
	var parts []string
	for i, r := range ranks {
		if i == 16 {
			parts = append(parts, fmt.Sprintf("... %d more", len(ranks)-16))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	return strings.Join(parts, ",")
}

// deadlock returns the DeadlockError describing what is left, or nil.
func (x *executor) deadlock() error {
	de := &DeadlockError{At: x.eng.Now(), Ranks: len(x.ranks)}
	add := func(p PendingOp) {
		if len(de.Pending) < maxPendingReported {
			de.Pending = append(de.Pending, p)
		} else {
			de.Omitted++
		}
	}
	for r := range x.ranks {
		rk := &x.ranks[r]
		r := int32(r)
		if !rk.finished {
			de.Blocked = append(de.Blocked, r)
			for idx := rk.base; idx < rk.next; idx++ {
				s := x.slot(r, idx)
				var state string
				switch {
				case s.state == slotDone || s.state == slotDoneLater:
					continue
				case s.state == slotWaiting:
					state = fmt.Sprintf("waits for %d earlier ops", s.pending)
				case s.kind == OpRecv:
					state = "posted; no matching send arrived"
				case s.kind == OpSend && s.msg != noMsg:
					state = x.p.waiting(s.msg)
				default:
					state = "in progress"
				}
				add(PendingOp{Rank: r, Index: idx, Op: opString(s), State: state})
			}
			switch {
			case rk.reactive != nil && rk.reactive.Waiting() > 0:
				add(PendingOp{Rank: r, Index: rk.next, Op: fmt.Sprintf("(%d more ops)", rk.reactive.Waiting()), State: "wait for dependencies that never complete"})
			case !rk.ended:
				add(PendingOp{Rank: r, Index: rk.next, Op: "(rest of program)", State: "not reached"})
			}
		}
		x.p.match[r].unexp.each(func(it *matchItem) {
			m := &x.p.msgs[it.val]
			what := "message"
			if m.state == msgRequestIn {
				what = "rendezvous request for a message"
			}
			add(PendingOp{Rank: r, Index: -1, State: "arrived; no receive matched it",
				Op: fmt.Sprintf("%s of %dB from rank %d tag %d (its op %d)", what, m.bytes, m.src, m.tag, m.send)})
		})
	}
	if len(de.Blocked) == 0 && len(de.Pending) == 0 {
		return nil
	}
	return de
}
