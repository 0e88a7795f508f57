package sim

// The message protocol: how a send meets its receive. Every executor
// (Execute for programs, GOAL.RunLogGOPS for GOAL schedules) hands its
// sends and receives to one protocol, and learns from it when its ops
// start and complete; no rule below is written anywhere else.
//
// Common to every model:
//   - Matching is MPI's: a receive takes the oldest unmatched message (or,
//     under rendezvous, request) from its source with its tag; a message
//     takes the oldest posted receive that accepts it.
//   - Each rank has one send queue per NIC. Sends enter it in the order
//     the rank issues them, and it lets their data out one message at a
//     time in that order, as an MPI library's blocking sends go: a
//     rendezvous send's data once its reply is back, and data issued after
//     it wait for it even if their own replies came back first (from a
//     nearer rank). A send marked Concurrent (an algorithm that really
//     posts its non-blocking sends at once) leaves as soon as it reaches
//     the front, alongside the others; a send behind it waits until every
//     message ahead of it has left. On a network whose NICs send one
//     message at a time (SinglePort: the analytic model), Concurrent data
//     also goes in the order the sends were issued, waiting for an
//     earlier send's reply as other data does: handed to its port in the
//     order replies came back from routes of different lengths, a linear
//     alltoall's ranks each sent first to their nearest peer, and the
//     ports' queues made of its p-1 conflict-free rounds a schedule up to
//     twice as long (the closed form's a + (p-1)cb on a fat-tree's two
//     leaves took 1.97 times it; the flow model, whose NICs share, took
//     it).
//
// With a Network (the analytic, flow and test networks):
//   - A send costs its CPU the host overhead o when it is issued; then it
//     enters its send queue.
//   - Eager (bytes <= the eager limit): the data goes as soon as the queue
//     lets it; the send completes when its last byte has left.
//   - Rendezvous (above the limit): a request (no data) goes through the
//     queue in order, reaches the receiver a route's latency later and is
//     matched there like a message; once a receive takes it, a reply goes
//     back (a latency), and only then does the data enter the sender's
//     queue. The send completes when its last byte has left; no data moves
//     before the receive is posted.
//   - A receive completes when its data has arrived, after o and its
//     reduction on its CPU.
//
// In the LogGOPS model (Hoefler et al., see loggops.go for the costs):
//   - A send leaves its queue when its NIC's gap has passed; it then asks
//     for its CPU, and starts once the CPU is free: o (and O per byte) of
//     CPU, g (and G per byte) of NIC from then. While it waits for its NIC
//     its CPU is free for other work (messages arriving meanwhile are taken
//     in). The message reaches the receiver o+L after the send starts.
//   - An eager send completes when its CPU part ends; a rendezvous send
//     when the receiver matches it (LogGOPS charges no handshake).
//   - Arriving messages wait at their NIC in arrival order (the NIC of the
//     posted receive they would match, else NIC 0; a message whose
//     sender's earlier messages still wait at a NIC waits behind them,
//     so that it cannot be matched first); the oldest asks,
//     once the NIC's receive gap has passed, for the CPU of the posted
//     receive it would match (CPU 0 if none is posted), and is taken in
//     when it gets it: o + max((s-1)O, (s-1)G) of CPU, g + (s-1)G of NIC. It
//     matches then.
//   - A CPU serves one request at a time, and when it frees, the oldest
//     waiting request first (as LogGOPSim does): a calc and a send are as
//     old as the moment they became ready, an arriving message as the
//     moment its send started; of equal moments, an op before a message,
//     then the lower rank's, then the one its rank made first. A calc asks when it is ready, a send when
//     its NIC lets it go, an arriving message when its NIC takes it in; a
//     request that finds the CPU free and nobody waiting starts at once.

import (
	"github.com/collsim/collsim/sim/hugepage"
)

// opSide is what the protocol needs of an executor: the effects, on the
// executor's own op records, of what the protocol decides. Ops are named
// by the executor's own numbers (a program index, a GOAL op id).
type opSide interface {
	// opStarted reports that send op of rank r occupies its resources
	// from at (>= now), for ops that wait for it to start.
	opStarted(r int32, op uint32, at Time)
	// opDone completes op of rank r at at (>= now).
	opDone(r int32, op uint32, at Time)
	// recvPlace returns the CPU and NIC of receive op of rank r.
	recvPlace(r int32, op uint32) (cpu, nic uint16)
	// accept hands message id to receive op of rank r: it checks the sizes
	// and moves the data, and returns the CPU time of the receive's
	// reduction (0 if it reduces nothing), or false if the run failed.
	accept(r int32, op uint32, id uint32) (reduce Time, ok bool)
	// reduced says how long the reduction of receive op of rank r took,
	// stretched by noise, for the trace.
	reduced(r int32, op uint32, took Time)
}

// done, started and accept call the executor: directly when it is the
// GOAL executor (the fast path, which the compiler can then inline), else
// through opSide.
func (p *protocol) done(r int32, op uint32, at Time) {
	if g, ok := p.x.(*goalRun); ok {
		g.completeAt(r, op, at)
		return
	}
	p.x.opDone(r, op, at)
}

func (p *protocol) started(r int32, op uint32, at Time) {
	if g, ok := p.x.(*goalRun); ok {
		if g.g.hasStarts {
			g.startedWaited(r, op, at)
		}
		return
	}
	p.x.opStarted(r, op, at)
}

func (p *protocol) accept(r int32, op uint32, id uint32) (Time, bool) {
	if g, ok := p.x.(*goalRun); ok {
		return g.accept(r, op, id)
	}
	return p.x.accept(r, op, id)
}

// A message's state on its way (the network protocol's; LogGOPS uses the
// first three).
const (
	msgQueued     uint8 = iota // in its send queue, waiting to leave
	msgSent                    // data on its way or arrived
	msgSelf                    // a message to oneself, which never leaves
	msgRequest                 // rendezvous: the request waits in the send queue
	msgRequestOut              // rendezvous: the request is on its way
	msgRequestIn               // rendezvous: the request arrived, unmatched
	msgReplyOut                // rendezvous: matched; the reply is on its way back
	msgData                    // rendezvous: the data waits in the send queue
)

// message is one send in flight: 64 bytes, since a linear alltoall holds
// a million.
type message struct {
	src, dst int32
	tag      int32
	send     uint32 // the send op
	recv     uint32 // the receive that matched a rendezvous request
	// LogGOPS: the sender's count of requests at the send's, then the
	// message's, age. With a Network: the data's place in its queue's
	// program order (see txQueue.turn), for a send not Concurrent.
	seq   uint32
	next  uint32 // in a send or receive queue, or the free list
	bytes int64
	// LogGOPS: when the send became ready (its age) until it starts, then
	// when the sender's CPU part ends.
	localAt Time
	// LogGOPS: when the send started (the message's age) until the
	// message is taken in, then when the receiving CPU is done with it.
	intakeEnd Time
	cpu, nic  uint16
	state     uint8
	conc      bool // leaves alongside the rank's other sends
	matched   bool // the receive side is done with it
	sendDone  bool
}

// sendAge is a LogGOPS send's age, before it starts.
func (m *message) sendAge() age { return age{at: m.localAt, rank: m.src, seq: m.seq} }

// txQueue is one NIC's send queue: messages that may move data, oldest
// first, linked through their records.
type txQueue struct {
	head, tail uint32
	// With a Network: data messages let out whose last byte has not been
	// reported gone. LogGOPS: 1 while a send it let out waits for its CPU.
	out    int32
	armed  bool // an evTx is pending for it
	trying bool // txTry is running on it
	free   Time // with a Network: when the data reported gone has all left
	// With a Network, the program order of data: each send that is not
	// Concurrent takes the next number when it enters the queue (issued).
	// A rendezvous send's data enters the queue when its reply comes back,
	// which on routes of different lengths may be after the data of a send
	// issued later; it is put back in its place (insertInOrder), and
	// later data waits for it while its reply is on the way (replying: the
	// numbers of the sends whose replies are, less those in replied, whose
	// replies are back). Data does not wait for an earlier send whose
	// receive is not posted yet: a library's progress engine cannot send
	// that one either, and waiting could deadlock algorithms whose sends
	// feed independent streams (two trees).
	issued            uint32
	replying, replied seqHeap
}

// seqHeap is a min-heap of send numbers, in the order of their issue
// (numbers wrap: a before b when int32(a-b) < 0). The send queue's
// replying and replied make a heap with deletion: the earliest send whose
// reply is on the way is found in O(log n), where a linear alltoall's
// rank on a single-port network waits for up to p-1 replies at once (a
// scan of them per message made 1,024 ranks 25% slower).
type seqHeap []uint32

func seqBefore(a, b uint32) bool { return int32(a-b) < 0 }

func (h *seqHeap) push(s uint32) {
	*h = append(*h, s)
	a := *h
	for i := len(a) - 1; i > 0; {
		up := (i - 1) / 2
		if !seqBefore(a[i], a[up]) {
			break
		}
		a[i], a[up] = a[up], a[i]
		i = up
	}
}

func (h *seqHeap) pop() {
	a := *h
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		m, l := i, 2*i+1
		if l < len(a) && seqBefore(a[l], a[m]) {
			m = l
		}
		if l+1 < len(a) && seqBefore(a[l+1], a[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
}

// replyBack takes send seq's reply off those on the way.
func (tq *txQueue) replyBack(seq uint32) { tq.replied.push(seq) }

// matching is one rank's two MPI queues.
type matching struct {
	posted matchQueue // posted, unmatched receives (op numbers)
	unexp  matchQueue // arrived, unmatched messages and requests (message IDs)
}

// protocol is the state of the message protocol of one run.
type protocol struct {
	eng      *Engine
	id       HandlerID // the executor's: protocol events come back through its Handle
	x        opSide
	h        hosts
	net      Network // nil in the LogGOPS model
	ordered  bool    // net's NICs send one at a time (SinglePort): Concurrent data keeps its program order too
	eager    int64   // the largest eager message
	overhead Time    // with a Network: o per send and per received message
	// freeHosts picks the messages (by tag) whose o and reduction are
	// free (Config.FreeHosts).
	freeHosts func(tag int32) bool
	msgs      []message
	freeMsg   uint32
	// arena, when not nil, holds the queues of the run's ranks and, once
	// large, its message table (see grow), until the run frees it; room
	// is the entries its large tables are reserved for.
	arena  *hugepage.Arena
	room   int
	match  []matching // by rank
	tx     []txQueue  // by rank and NIC
	rxHead []uint32   // LogGOPS, by rank and NIC: the oldest message waiting to be taken in
	rxTail []uint32   // and the newest
	rxBusy []bool     // LogGOPS, by rank and NIC: a message it let in waits for its CPU
	// rxFrom (LogGOPS with several NICs), by receiver and sender: the
	// NIC where the sender's messages not yet taken in wait, and how
	// many, so that a later one queues behind them (MPI's non-overtaking
	// rule; see arrive).
	rxFrom   map[[2]int32]rxPending
	cpuWait  [][]cpuRequest // LogGOPS, by rank and CPU: waiting requests, a heap by age
	cpuArmed []bool         // LogGOPS, by rank and CPU: an evCPU is pending
	seqs     []uint32       // LogGOPS, by rank: requests and messages made, for ages
	// LogGOPS: reductions waiting for their messages to be in (see
	// deferReduction), and the free places among them.
	deferred     []deferredReduction
	freeDeferred []int32
	messages     uint64 // data messages sent
	bytes        uint64
	// rendezvous counts the messages to other ranks above the eager limit,
	// each held back by a request and a reply before its data left.
	rendezvous uint64
	// A partition of a parallel GOAL run simulates ranks lo..hi-1; its
	// messages to other ranks go to remote, when they reach them.
	lo, hi int32
	remote func(at Time, m *message)
}

// newProtocol returns the protocol of a run of ranks ranks on hosts h,
// reporting to x through events of handler id.
func newProtocol(eng *Engine, id HandlerID, x opSide, h hosts, ranks int) protocol {
	p := protocol{eng: eng, id: id, x: x, h: h, freeMsg: noMsg, hi: int32(ranks),
		match: hugepage.Make[matching](ranks), tx: hugepage.Make[txQueue](ranks * h.nics)}
	for q := range p.tx {
		p.tx[q].head, p.tx[q].tail = noMsg, noMsg
	}
	if h.lg != nil {
		p.eager = h.lg.S
		p.rxHead = make([]uint32, ranks*h.nics)
		p.rxTail = make([]uint32, ranks*h.nics)
		p.rxBusy = make([]bool, ranks*h.nics)
		for q := range p.rxHead {
			p.rxHead[q] = noMsg
		}
		p.cpuWait = hugepage.Make[[]cpuRequest](ranks * h.cpus)
		p.cpuArmed = make([]bool, ranks*h.cpus)
		p.seqs = make([]uint32, ranks)
	}
	return p
}

// age orders LogGOPS requests for a CPU: when the op became ready or the
// message's send started, ops before messages of the same moment, then the
// rank that made it, then its count of what it made. (LogGOPSim orders them by one counter of creation, whose
// ties follow its event order; this order is the same but for such ties,
// and is the same in a parallel run, whose partitions count apart.)
type age struct {
	at   Time
	msg  bool // a message: younger than an op of the same moment
	rank int32
	seq  uint32
}

func (a age) before(b age) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.msg != b.msg {
		return b.msg
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.seq < b.seq
}

// newAge is the age of something rank r makes now.
func (p *protocol) newAge(r int32) age {
	a := age{at: p.eng.Now(), rank: r, seq: p.seqs[r]}
	p.seqs[r]++
	return a
}

// cpuRequest is a LogGOPS request for a CPU.
type cpuRequest struct {
	age  age
	at   Time   // a reduction may not start before its message is in
	d    Time   // a calc's or a reduction's CPU time
	ref  uint32 // the op (calc, reduction) or the message (send, intake)
	nic  uint16 // an intake's NIC
	kind uint8
}

// The kinds of CPU request.
const (
	reqCalc   = iota // a calc op
	reqReduce        // a matched receive's reduction
	reqSend          // a send whose NIC let it go
	reqIntake        // an arriving message its NIC let in
)

// The protocol's events, packed like the executors' (see pack).
const (
	evArrive = 4 // LogGOPS: a message reaches its receiver (idx: the message)
	evIntake = 5 // LogGOPS: a NIC may take in its next message (idx: the NIC)
	evTx     = 6 // a send queue may let its next message out (idx: the NIC)
	evPost   = 7 // a send's CPU overhead is over: it enters its queue (idx: the message)
	evCPU    = 8 // LogGOPS: a CPU is free for its oldest waiting request (idx: the CPU)
	// 9 is the executor's.
	evReduce = 10 // LogGOPS: a reducing receive's message is in (idx: its deferred reduction)
)

// handle runs a protocol event; it reports false for an executor's own.
func (p *protocol) handle(kind uint64, r, idx int32) bool {
	switch kind {
	case evArrive:
		p.arrive(uint32(idx))
	case evIntake:
		p.intake(r, uint16(idx))
	case evTx:
		p.tx[p.h.nic(r, uint16(idx))].armed = false
		p.txTry(r, uint16(idx))
	case evPost:
		p.post(uint32(idx))
	case evCPU:
		p.cpuFree(r, uint16(idx))
	case evReduce:
		d := p.deferred[idx]
		p.freeDeferred = append(p.freeDeferred, idx)
		d.rq.age = p.newAge(r)
		p.request(r, d.cpu, d.rq)
	default:
		return false
	}
	return true
}

func (p *protocol) newMsg() uint32 {
	if id := p.freeMsg; id != noMsg {
		p.freeMsg = p.msgs[id].next
		return id
	}
	return p.addMsg()
}

// addMsg grows the table of messages, out of the way of the inlined path
// that reuses freed entries. A linear alltoall has every message in flight
// at once, a million on 1,024 ranks: doubling keeps its copies few.
func (p *protocol) addMsg() uint32 {
	if uint64(len(p.msgs)) == noMsg {
		panic("sim: too many messages in flight")
	}
	p.msgs = append(grow(p.msgs, p.arena, p.room), message{})
	return uint32(len(p.msgs) - 1)
}

func (p *protocol) releaseMsg(id uint32) {
	p.msgs[id].next = p.freeMsg
	p.freeMsg = id
}

// send makes the message of send op of rank r to peer and returns it; the
// caller sets its data (if any) and then calls start (LogGOPS) or, once
// the send's CPU overhead is over, post.
func (p *protocol) send(r int32, op uint32, cpu, nic uint16, peer, tag int32, bytes int64, conc bool) uint32 {
	id := p.newMsg()
	m := &p.msgs[id] // set in place: a literal is built aside and copied
	m.src, m.dst, m.tag, m.send, m.recv, m.next = r, peer, tag, op, noMsg, noMsg
	m.bytes, m.localAt, m.intakeEnd = bytes, 0, 0
	m.cpu, m.nic, m.state, m.conc = cpu, nic, msgQueued, conc
	m.matched, m.sendDone = false, false
	if p.seqs != nil {
		a := p.newAge(r)
		m.localAt, m.seq = a.at, a.seq
	}
	return id
}

// calc runs calc op of rank r on its CPU for d: at once with a Network
// (after what the CPU is doing); in the LogGOPS model as a request.
func (p *protocol) calc(r int32, op uint32, cpu uint16, d Time) {
	if p.net != nil {
		start, end := p.h.occupy(r, cpu, p.eng.Now(), d)
		p.started(r, op, start)
		p.done(r, op, end)
		return
	}
	p.request(r, cpu, cpuRequest{age: p.newAge(r), d: d, ref: op, kind: reqCalc})
}

// request asks for CPU cpu of rank r: granted now if the CPU is free and
// nobody waits, else queued by age until the CPU frees.
func (p *protocol) request(r int32, cpu uint16, rq cpuRequest) {
	c := p.h.cpu(r, cpu)
	now := p.eng.Now()
	if len(p.cpuWait[c]) == 0 && p.h.cpuFree[c] <= now {
		p.grant(r, cpu, rq, now)
		return
	}
	p.cpuWait[c] = pushRequest(p.cpuWait[c], rq)
	if !p.cpuArmed[c] {
		p.cpuArmed[c] = true
		p.eng.At(max(now, p.h.cpuFree[c]), p.id, pack(evCPU, r, int32(cpu)))
	}
}

// cpuFree serves CPU cpu of rank r's oldest waiting request, now that the
// CPU is free, and comes back when it is free again.
func (p *protocol) cpuFree(r int32, cpu uint16) {
	c := p.h.cpu(r, cpu)
	p.cpuArmed[c] = false
	now := p.eng.Now()
	if len(p.cpuWait[c]) == 0 {
		return
	}
	if free := p.h.cpuFree[c]; free > now {
		p.cpuArmed[c] = true
		p.eng.At(free, p.id, pack(evCPU, r, int32(cpu)))
		return
	}
	var rq cpuRequest
	p.cpuWait[c], rq = popRequest(p.cpuWait[c])
	p.grant(r, cpu, rq, now)
	if len(p.cpuWait[c]) > 0 && !p.cpuArmed[c] {
		p.cpuArmed[c] = true
		p.eng.At(max(now, p.h.cpuFree[c]), p.id, pack(evCPU, r, int32(cpu)))
	}
}

// deferredReduction is a reduction's CPU request, made once its message
// is in.
type deferredReduction struct {
	rq  cpuRequest
	cpu uint16
}

// deferReduction asks for CPU cpu of rank r for reduction rq once its
// message is in (rq.at), as the calc that collsim schedule writes for it
// into GOAL asks once the receive it requires completes: the same age, in
// the same order among the requests of that moment. Asked for at once, it
// was older than the requests made while the message was taken in, and
// the export of a 7-rank Rabenseifner allreduce took one reduction longer
// than the run (a new user's trial).
func (p *protocol) deferReduction(r int32, cpu uint16, rq cpuRequest) {
	var i int32
	if n := len(p.freeDeferred); n > 0 {
		i, p.freeDeferred = p.freeDeferred[n-1], p.freeDeferred[:n-1]
	} else {
		i = int32(len(p.deferred))
		p.deferred = append(p.deferred, deferredReduction{})
	}
	p.deferred[i] = deferredReduction{rq: rq, cpu: cpu}
	p.eng.At(rq.at, p.id, pack(evReduce, r, i))
}

// grant gives CPU cpu of rank r, free at now, to request rq.
func (p *protocol) grant(r int32, cpu uint16, rq cpuRequest, now Time) {
	switch rq.kind {
	case reqCalc:
		start, end := p.h.occupy(r, cpu, now, rq.d)
		p.started(r, rq.ref, start)
		p.done(r, rq.ref, end)
	case reqReduce:
		start, end := p.h.occupy(r, cpu, max(now, rq.at), rq.d)
		p.x.reduced(r, rq.ref, end-start)
		p.done(r, rq.ref, end)
	case reqSend:
		p.startLogGOPS(rq.ref)
	case reqIntake:
		p.takeIn(r, cpu, rq.nic, rq.ref)
	}
}

// pushRequest adds rq to the heap h (by age).
func pushRequest(h []cpuRequest, rq cpuRequest) []cpuRequest {
	h = append(h, rq)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if !h[i].age.before(h[up].age) {
			break
		}
		h[i], h[up] = h[up], h[i]
		i = up
	}
	return h
}

// popRequest takes the oldest request off the heap h.
func popRequest(h []cpuRequest) ([]cpuRequest, cpuRequest) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l].age.before(h[m].age) {
			m = l
		}
		if l+1 < len(h) && h[l+1].age.before(h[m].age) {
			m = l + 1
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return h, top
}

// recv posts receive op of rank r: it takes the oldest message (or
// request) that arrived for it, or waits for one.
func (p *protocol) recv(r int32, op uint32, peer, tag int32) {
	q := &p.match[r]
	if id, ok := q.unexp.takeMatching(peer, tag); ok {
		p.matched(r, op, id)
		return
	}
	q.posted.push(peer, tag, op)
}

// push appends message id to send queue q.
func (p *protocol) push(q int, id uint32) {
	tq := &p.tx[q]
	p.msgs[id].next = noMsg
	if tq.head == noMsg {
		tq.head = id
	} else {
		p.msgs[tq.tail].next = id
	}
	tq.tail = id
}

// inOrder reports whether message m's data keeps its place in its send
// queue's program order (txQueue.issued): data not Concurrent, and all
// data on a SinglePort network.
func (p *protocol) inOrder(m *message) bool { return !m.conc || p.ordered }

// waitsForReply reports whether a send issued before number seq has its
// reply on the way.
func (tq *txQueue) waitsForReply(seq uint32) bool {
	for len(tq.replied) > 0 && tq.replying[0] == tq.replied[0] {
		tq.replying.pop()
		tq.replied.pop()
	}
	return len(tq.replying) > 0 && seqBefore(tq.replying[0], seq)
}

// insertInOrder puts the data of rendezvous send id into send queue q
// before the first data issued after it (see txQueue.issued).
func (p *protocol) insertInOrder(q int, id uint32) {
	tq := &p.tx[q]
	seq := p.msgs[id].seq
	prev := uint32(noMsg)
	for at := tq.head; at != noMsg; prev, at = at, p.msgs[at].next {
		if o := &p.msgs[at]; o.state != msgRequest && p.inOrder(o) && seqBefore(seq, o.seq) {
			p.msgs[id].next = at
			if prev == noMsg {
				tq.head = id
			} else {
				p.msgs[prev].next = id
			}
			return
		}
	}
	p.push(q, id)
}

// pop takes the front of send queue q.
func (p *protocol) pop(q int) uint32 {
	tq := &p.tx[q]
	id := tq.head
	tq.head = p.msgs[id].next
	if tq.head == noMsg {
		tq.tail = noMsg
	}
	return id
}

// arm schedules an evTx for send queue (r, nic) at at, unless one is
// pending.
func (p *protocol) arm(r int32, nic uint16, at Time) {
	tq := &p.tx[p.h.nic(r, nic)]
	if !tq.armed {
		tq.armed = true
		p.eng.At(at, p.id, pack(evTx, r, int32(nic)))
	}
}

// start issues LogGOPS send id, whose op's dependencies are met: now if
// its queue is empty and its NIC free, else once the messages ahead of it
// have gone and the NIC is free.
func (p *protocol) start(id uint32) {
	m := &p.msgs[id]
	q := p.h.nic(m.src, m.nic)
	if tq := &p.tx[q]; tq.head == noMsg && tq.out == 0 && p.h.nicTx[q] <= p.eng.Now() {
		if c := p.h.cpu(m.src, m.cpu); len(p.cpuWait[c]) == 0 && p.h.cpuFree[c] <= p.eng.Now() {
			p.startLogGOPS(id) // the request would be granted at once
			return
		}
		tq.out = 1
		p.request(m.src, m.cpu, cpuRequest{age: m.sendAge(), ref: id, kind: reqSend})
		return
	}
	p.push(q, id)
	p.txTry(m.src, m.nic)
}

// txTry lets out what send queue (r, nic) may let out now, and arms an
// evTx for when it may let out more.
func (p *protocol) txTry(r int32, nic uint16) {
	q := p.h.nic(r, nic)
	if p.net == nil {
		// The front send asks for its CPU once the NIC is free, and holds
		// the NIC until it gets it.
		tq := &p.tx[q]
		if tq.head == noMsg || tq.out > 0 {
			return
		}
		if free := p.h.nicTx[q]; free > p.eng.Now() {
			p.arm(r, nic, free)
			return
		}
		id := p.pop(q)
		tq.out = 1
		p.request(r, p.msgs[id].cpu, cpuRequest{age: p.msgs[id].sendAge(), ref: id, kind: reqSend})
		return
	}
	tq := &p.tx[q]
	if tq.trying { // an Injected reported inside Inject below: the loop goes on
		return
	}
	tq.trying = true
	for tq.head != noMsg {
		id := tq.head
		m := &p.msgs[id]
		if m.state != msgRequest && p.inOrder(m) && tq.waitsForReply(m.seq) {
			break // data issued before it will be back with its reply
		}
		if m.state != msgRequest && !m.conc {
			if tq.out > 0 || tq.free > p.eng.Now() {
				if tq.out == 0 {
					p.arm(r, nic, tq.free)
				}
				break // data waits for the data ahead of it to leave
			}
		}
		p.pop(q)
		if m.state == msgRequest {
			m.state = msgRequestOut
			p.net.Inject(Transfer{ID: id, Src: m.src, Dst: m.dst, Tag: m.tag, Control: ControlRequest})
			continue
		}
		m.state = msgSent
		tq.out++
		p.net.Inject(Transfer{ID: id, Src: m.src, Dst: m.dst, Tag: m.tag, Bytes: m.bytes})
		tq = &p.tx[q]
	}
	tq.trying = false
}

// startLogGOPS starts LogGOPS send id now: its NIC and CPU are free. Its
// queue may let the next send ask for the CPU once the NIC is free again.
func (p *protocol) startLogGOPS(id uint32) {
	m := &p.msgs[id]
	t, leaves, cpuEnd := p.h.send(m.src, m.cpu, m.nic, m.bytes, p.eng.Now())
	lg := p.h.lg
	q := p.h.nic(m.src, m.nic)
	p.tx[q].out = 0
	if p.tx[q].head != noMsg {
		p.arm(m.src, m.nic, p.h.nicTx[q])
	}
	p.started(m.src, m.send, t)
	p.messages++
	p.bytes += uint64(m.bytes)
	a := p.newAge(m.src)
	m = &p.msgs[id]
	m.localAt, m.state = cpuEnd, msgSent
	m.intakeEnd, m.seq = a.at, a.seq
	if m.dst < p.lo || m.dst >= p.hi {
		// To another partition of a parallel run, whose sends are all
		// eager: the send is done.
		m.sendDone = true
		p.done(m.src, m.send, cpuEnd)
		p.remote(leaves.Plus(lg.L), &p.msgs[id])
		p.releaseMsg(id)
		return
	}
	if m.bytes <= p.eager {
		// Not yet matched: the message record stays until it is.
		m.sendDone = true
		p.done(m.src, m.send, cpuEnd)
	} else if m.dst != m.src {
		p.rendezvous++ // (a message to oneself never crosses)
	}
	p.eng.At(leaves.Plus(lg.L), p.id, pack(evArrive, 0, int32(id)))
}

// rxPending is where a sender's messages wait to be taken in at a
// receiver with several NICs (protocol.rxFrom).
type rxPending struct {
	nic     uint16
	waiting int32
}

// arrive queues LogGOPS message id at its receiving NIC: the NIC of the
// posted receive it would match, or NIC 0; but behind the sender's
// earlier messages where they still wait to be taken in. Taken in first
// through another NIC, a later message matched a receive its sender's
// earlier message matched too, against MPI's non-overtaking rule (an 8 B
// message queued behind a 1 MiB one at NIC 0 while the next, 16 B, took
// an any-tag 8 B receive at NIC 1 and was truncated: an audit).
func (p *protocol) arrive(id uint32) {
	m := &p.msgs[id]
	nic := uint16(0)
	if p.h.nics > 1 {
		key := [2]int32{m.dst, m.src}
		if w, ok := p.rxFrom[key]; ok {
			nic = w.nic
		} else if pos, ok := p.match[m.dst].posted.findFor(m.src, m.tag); ok {
			_, nic = p.x.recvPlace(m.dst, p.match[m.dst].posted.items[pos].val)
		}
		if p.rxFrom == nil {
			p.rxFrom = map[[2]int32]rxPending{}
		}
		p.rxFrom[key] = rxPending{nic: nic, waiting: p.rxFrom[key].waiting + 1}
	}
	m.next = noMsg
	q := p.h.nic(m.dst, nic)
	if p.rxHead[q] == noMsg {
		now := p.eng.Now()
		if !p.rxBusy[q] && p.h.nicRx[q] <= now && p.h.cpus == 1 {
			if c := p.h.cpu(m.dst, 0); len(p.cpuWait[c]) == 0 && p.h.cpuFree[c] <= now {
				// The request would be granted at once: take it in now.
				p.rxBusy[q] = true
				p.takeIn(m.dst, 0, nic, id)
				return
			}
		}
		p.rxHead[q], p.rxTail[q] = id, id
		p.intake(m.dst, nic)
		return
	}
	p.msgs[p.rxTail[q]].next = id
	p.rxTail[q] = id
}

// intake lets the oldest message waiting at NIC nic of rank r ask for its
// CPU, once the NIC is free (and no message it let in still waits for a
// CPU); when the NIC is busy it comes back when it will be free.
func (p *protocol) intake(r int32, nic uint16) {
	q := p.h.nic(r, nic)
	id := p.rxHead[q]
	if id == noMsg || p.rxBusy[q] {
		return
	}
	if free := p.h.nicRx[q]; free > p.eng.Now() {
		p.eng.At(free, p.id, pack(evIntake, r, int32(nic)))
		return
	}
	m := &p.msgs[id]
	p.rxHead[q] = m.next
	p.rxBusy[q] = true
	cpu := uint16(0)
	if p.h.cpus > 1 {
		if pos, ok := p.match[r].posted.findFor(m.src, m.tag); ok {
			cpu, _ = p.x.recvPlace(r, p.match[r].posted.items[pos].val)
		}
	}
	p.request(r, cpu, cpuRequest{age: age{at: m.intakeEnd, msg: true, rank: m.src, seq: m.seq}, ref: id, nic: nic, kind: reqIntake})
}

// takeIn takes message id in through NIC nic on CPU cpu of rank r, both
// free now, and matches it.
func (p *protocol) takeIn(r int32, cpu, nic uint16, id uint32) {
	m := &p.msgs[id]
	q := p.h.nic(r, nic)
	p.rxBusy[q] = false
	if p.h.nics > 1 {
		key := [2]int32{r, m.src}
		if w := p.rxFrom[key]; w.waiting > 1 {
			p.rxFrom[key] = rxPending{nic: w.nic, waiting: w.waiting - 1}
		} else {
			delete(p.rxFrom, key)
		}
	}
	_, m.intakeEnd = p.h.intake(r, cpu, nic, m.bytes, p.eng.Now())
	mq := &p.match[r]
	if pos, ok := mq.posted.findFor(m.src, m.tag); ok {
		p.matched(r, mq.posted.remove(pos), id)
	} else {
		mq.unexp.push(m.src, m.tag, id)
	}
	p.intake(r, nic)
}

// post puts send id, whose CPU overhead is over, on its way (with a
// Network).
func (p *protocol) post(id uint32) {
	m := &p.msgs[id]
	p.messages++
	p.bytes += uint64(m.bytes)
	if m.dst == m.src {
		// A message to oneself never leaves the rank: its receive takes it
		// at once. An eager send is done now, a rendezvous send when the
		// receive takes it.
		m.state = msgSelf
		if m.bytes <= p.eager {
			m.sendDone = true
			p.done(m.src, m.send, p.eng.Now())
		}
		p.envelope(id)
		return
	}
	if m.bytes > p.eager {
		m.state = msgRequest
		p.rendezvous++
	}
	q := p.h.nic(m.src, m.nic)
	if p.inOrder(m) {
		tq := &p.tx[q]
		m.seq = tq.issued
		tq.issued++
	}
	p.push(q, id)
	p.txTry(m.src, m.nic)
}

// Injected reports that the last byte of data message id has left (or
// will have at at): its send completes then, and its queue may let out
// the next message from then.
func (p *protocol) Injected(id uint32, at Time) {
	m := &p.msgs[id]
	tq := &p.tx[p.h.nic(m.src, m.nic)]
	tq.out--
	tq.free = max(tq.free, at)
	m.sendDone = true
	p.done(m.src, m.send, at)
	if m := &p.msgs[id]; m.matched {
		p.releaseMsg(id)
	}
	p.txTry(m.src, m.nic)
}

// Delivered reports that transfer id reached its destination: a request
// at the receiver, a reply back at the sender, or the data.
func (p *protocol) Delivered(id uint32) {
	m := &p.msgs[id]
	switch {
	case m.state == msgRequestOut:
		m.state = msgRequestIn
		p.envelope(id)
	case m.state == msgReplyOut:
		// The receiver is ready: the data joins the sender's queue, in its
		// program order.
		m.state = msgData
		q := p.h.nic(m.src, m.nic)
		if !p.inOrder(m) {
			p.push(q, id)
		} else {
			tq := &p.tx[q]
			tq.replyBack(m.seq)
			p.insertInOrder(q, id)
		}
		p.txTry(m.src, m.nic)
	case m.bytes > p.eager:
		// Rendezvous data, for the receive that took the request.
		p.finishRecv(m.dst, m.recv, id)
	default:
		p.envelope(id)
	}
}

// envelope matches message (or request) id at its receiver, or leaves it
// unexpected.
func (p *protocol) envelope(id uint32) {
	m := &p.msgs[id]
	mq := &p.match[m.dst]
	if recv, ok := mq.posted.takeFor(m.src, m.tag); ok {
		p.matched(m.dst, recv, id)
	} else {
		mq.unexp.push(m.src, m.tag, id)
	}
}

// matched pairs receive op recv of rank r with message (or request) id.
func (p *protocol) matched(r int32, recv uint32, id uint32) {
	m := &p.msgs[id]
	if p.net == nil {
		// LogGOPS: taken in already (at intake). The receive completes when
		// the intake ends, plus any reduction after it; a rendezvous send
		// now.
		reduce, ok := p.accept(r, recv, id)
		if !ok {
			return
		}
		now := p.eng.Now()
		if end := max(now, p.msgs[id].intakeEnd); reduce > 0 {
			cpu, _ := p.x.recvPlace(r, recv)
			rq := cpuRequest{at: end, d: reduce, ref: recv, kind: reqReduce}
			if end > now {
				p.deferReduction(r, cpu, rq)
			} else {
				rq.age = p.newAge(r)
				p.request(r, cpu, rq)
			}
		} else {
			p.done(r, recv, end)
		}
		m = &p.msgs[id]
		m.matched = true
		if m.sendDone {
			p.releaseMsg(id)
			return
		}
		m.sendDone = true
		p.done(m.src, m.send, max(now, m.localAt))
		p.releaseMsg(id)
		return
	}
	if m.state == msgRequestIn {
		// Rendezvous: the receive is posted; the reply tells the sender.
		m.recv, m.state = recv, msgReplyOut
		if p.inOrder(m) {
			tq := &p.tx[p.h.nic(m.src, m.nic)]
			tq.replying.push(m.seq)
		}
		p.net.Inject(Transfer{ID: id, Src: m.dst, Dst: m.src, Tag: m.tag, Control: ControlReply})
		return
	}
	p.finishRecv(r, recv, id)
	if m := &p.msgs[id]; m.state == msgSelf && !m.sendDone {
		m.sendDone = true
		p.done(m.src, m.send, p.eng.Now())
		p.releaseMsg(id)
	}
}

// finishRecv completes receive op recv of rank r with the data of message
// id, now here: o and its reduction on its CPU (with a Network).
func (p *protocol) finishRecv(r int32, recv uint32, id uint32) {
	reduce, ok := p.accept(r, recv, id)
	if !ok {
		return
	}
	cpu, _ := p.x.recvPlace(r, recv)
	work := p.overhead + reduce
	if p.freeHosts != nil && p.freeHosts(p.msgs[id].tag) {
		work = 0
	}
	start, end := p.h.occupy(r, cpu, p.eng.Now(), work)
	if took := end - start; reduce > 0 && work > 0 {
		if took != work {
			// The reduction's share of the work, as noise stretched it (o
			// and the reduction run as one stretch of the CPU; a
			// straggler's share is exact).
			took = Time(float64(took) * float64(reduce) / float64(work))
		} else {
			took = reduce
		}
		p.x.reduced(r, recv, took)
	}
	p.done(r, recv, end)
	m := &p.msgs[id]
	m.matched = true
	if m.sendDone {
		p.releaseMsg(id)
	}
}

// waiting describes, for a deadlock report, why send message id has not
// completed.
func (p *protocol) waiting(id uint32) string {
	switch p.msgs[id].state {
	case msgRequestOut, msgRequestIn:
		return "rendezvous request sent; no matching receive was posted"
	case msgSent:
		if p.net == nil {
			return "sent (rendezvous); the receiver never matched it"
		}
	}
	return "in progress"
}
