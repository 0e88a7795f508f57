package sim

import (
	"fmt"
	"math"
)

// Interp interprets one rank's program without a clock, for executors that
// run ranks for real (over sockets, one process per rank) rather than on
// the engine. It follows the rules the simulated executor follows:
//   - ops are read from the rank's Source while fewer than the schedule's
//     Lookahead of them wait for dependencies (MPI program order by
//     default);
//   - an op is ready once every op in its After list has completed and
//     every op in its StartAfter list has started; ops become ready in
//     program order when released together;
//   - receives match messages oldest first per (source, tag), wildcards
//     included, with the same matching queues.
//
// The driver takes ready ops with Start, reports completions with Complete,
// and reports arriving messages with Arrived (and posts receives with
// Post). It owns message payloads; Interp only sees their IDs.
type Interp struct {
	rank, ranks int32
	src         Source
	reactive    ReactiveSource
	lookahead   int32
	// ops base..next-1 are the window, op idx at ops[idx&(len(ops)-1)]: a
	// ring, so that a slot is reused once its op has completed and been
	// forgotten, and the window allocates only when it grows.
	ops        []iop
	base, next int32
	waiting    int32 // read ops waiting for dependencies
	open       int32 // read ops not complete
	ended      bool
	ready      []int32 // ready ops not yet started, FIFO
	rhead      int
	posted     matchQueue // posted receives (program indices)
	unexp      matchQueue // arrived, unmatched messages (driver's IDs)
	scratch    []Op
	err        error
	// spare holds emptied waiters and starts lists for reuse, so that
	// steady progress allocates nothing per op.
	spare [][]int32
}

type iop struct {
	op      Op // After and StartAfter are not kept
	state   uint8
	pending int32
	waiters []int32 // ops waiting for this one to complete
	starts  []int32 // ops waiting for this one to start
}

const (
	iWaiting uint8 = iota
	iReady
	iStarted
	iDone
)

// NewInterp returns the interpreter of rank r of s, with its first ready
// ops already read.
func NewInterp(s Schedule, r int) (*Interp, error) {
	in := new(Interp)
	if err := in.Reset(s, r); err != nil {
		return nil, err
	}
	return in, nil
}

// Reset makes in the interpreter of rank r of s, as NewInterp makes one,
// keeping the memory it has grown (its window, lists and queues): a driver
// that runs call after call then allocates little for each (a real run's
// 8-byte ping-pong once collected its garbage 390 times in 3,000 calls).
func (in *Interp) Reset(s Schedule, r int) error {
	if r < 0 || r >= s.Ranks {
		return fmt.Errorf("schedule %q: rank %d outside 0..%d", s.Name, r, s.Ranks-1)
	}
	for idx := in.base; idx < in.next; idx++ { // a call that stopped short
		o := in.at(idx)
		in.recycle(o.waiters)
		in.recycle(o.starts)
		o.waiters, o.starts = nil, nil
	}
	in.posted.reset()
	in.unexp.reset()
	*in = Interp{
		rank: int32(r), ranks: int32(s.Ranks), src: s.Rank(r), lookahead: int32(max(s.Lookahead, 1)),
		ops: in.ops, ready: in.ready[:0], posted: in.posted, unexp: in.unexp, scratch: in.scratch[:0], spare: in.spare,
	}
	in.reactive, _ = in.src.(ReactiveSource)
	in.refill()
	return in.err
}

// Err returns the first invalid op read, if any.
func (in *Interp) Err() error { return in.err }

// Done reports whether every op of the program has completed.
func (in *Interp) Done() bool { return in.ended && in.open == 0 && in.err == nil }

// Op returns op idx, which must be started and not yet complete. The *Op
// (here and from Start) is not to be read once the op completes: Complete
// overwrites its peer and tag (with completedPeer), and its slot later
// holds another op.
func (in *Interp) Op(idx int32) *Op { return &in.at(idx).op }

// at is op idx of the window.
func (in *Interp) at(idx int32) *iop { return &in.ops[int(idx)&(len(in.ops)-1)] }

// Start returns the next ready op, now started: ops waiting for it to start
// become ready. ok is false when no op is ready.
func (in *Interp) Start() (idx int32, op *Op, ok bool) {
	if in.rhead == len(in.ready) {
		in.ready, in.rhead = in.ready[:0], 0
		return 0, nil, false
	}
	idx = in.ready[in.rhead]
	in.rhead++
	o := in.at(idx)
	o.state = iStarted
	starts := o.starts
	o.starts = nil
	for _, w := range starts {
		in.release(w)
	}
	in.recycle(starts)
	if in.reactive != nil {
		in.reactive.Started(idx)
		in.refill()
	}
	return idx, &in.at(idx).op, true
}

// Complete records that started op idx has completed, releasing the ops
// that wait for it and reading further ops.
func (in *Interp) Complete(idx int32) {
	o := in.at(idx)
	if o.state != iStarted {
		panic(fmt.Sprintf("sim: Interp.Complete of op %d, which is not started", idx))
	}
	o.state = iDone
	// A driver that read the op after this would get a later op once the
	// slot is reused, and only then: make the mistake show at once.
	o.op.Peer, o.op.Tag = completedPeer, completedPeer
	in.open--
	waiters := o.waiters
	o.waiters = nil
	for _, w := range waiters {
		in.release(w)
	}
	in.recycle(waiters)
	if in.reactive != nil {
		in.reactive.Completed(idx)
	}
	// Forget the completed prefix: its slots take later ops.
	for in.base < in.next && in.at(in.base).state == iDone {
		in.base++
	}
	in.refill()
}

// Post posts started receive idx. If a message that it accepts has already
// arrived, Post removes and returns that message's ID; the driver then
// completes the receive with it.
func (in *Interp) Post(idx int32) (msg uint32, matched bool) {
	op := in.Op(idx)
	if id, ok := in.unexp.takeMatching(op.Peer, op.Tag); ok {
		return id, true
	}
	in.posted.push(op.Peer, op.Tag, uint32(idx))
	return 0, false
}

// Arrived takes in message msg from rank src with tag. If a posted receive
// accepts it, Arrived returns that receive; otherwise the message waits,
// unexpected, for a later Post.
func (in *Interp) Arrived(src, tag int32, msg uint32) (recv int32, matched bool) {
	if idx, ok := in.posted.takeFor(src, tag); ok {
		return int32(idx), true
	}
	in.unexp.push(src, tag, msg)
	return 0, false
}

// Accepting returns the posted receive that a message from rank src with
// tag would match now, as Arrived would, without matching it: a driver
// that can land a message straight in its receive's buffer asks before the
// message's data is read, then calls Arrived.
func (in *Interp) Accepting(src, tag int32) (recv int32, ok bool) {
	pos, ok := in.posted.findFor(src, tag)
	if !ok {
		return 0, false
	}
	return int32(in.posted.items[pos].val), true
}

// Pending describes the ops that have not completed and the messages that
// arrived but were not received, for reports of runs that stall. describe
// names an unexpected message by its ID.
func (in *Interp) Pending(describe func(msg uint32) string) []PendingOp {
	var out []PendingOp
	for idx := in.base; idx < in.next; idx++ {
		o := in.at(idx)
		var state string
		switch o.state {
		case iDone:
			continue
		case iWaiting:
			state = fmt.Sprintf("waits for %d earlier ops", o.pending)
		case iReady:
			state = "ready"
		default:
			state = "in progress"
			if o.op.Kind == OpRecv {
				state = "posted; no matching message arrived"
			}
		}
		out = append(out, PendingOp{Rank: in.rank, Index: idx, Op: o.op.String(), State: state})
	}
	if !in.ended {
		out = append(out, PendingOp{Rank: in.rank, Index: in.next, Op: "(rest of program)", State: "not reached"})
	}
	in.unexp.each(func(it *matchItem) {
		out = append(out, PendingOp{Rank: in.rank, Index: -1, Op: describe(it.val), State: "arrived; no receive matched it"})
	})
	return out
}

// list returns l, or a spare empty list when l is nil.
func (in *Interp) list(l []int32) []int32 {
	if l != nil || len(in.spare) == 0 {
		return l
	}
	l = in.spare[len(in.spare)-1]
	in.spare = in.spare[:len(in.spare)-1]
	return l
}

// recycle keeps the emptied list l for reuse.
func (in *Interp) recycle(l []int32) {
	if cap(l) > 0 {
		in.spare = append(in.spare, l[:0])
	}
}

func (in *Interp) release(idx int32) {
	o := in.at(idx)
	o.pending--
	if o.pending == 0 {
		in.waiting--
		in.makeReady(idx)
	}
}

func (in *Interp) makeReady(idx int32) {
	in.at(idx).state = iReady
	in.ready = append(in.ready, idx)
}

// refill reads ops while fewer than lookahead of them wait (a reactive
// source: until it has nothing ready).
func (in *Interp) refill() {
	for !in.ended && in.waiting < in.lookahead && in.err == nil {
		var ops []Op
		ops, in.scratch = nextOps(in.src, in.scratch, in.lookahead-in.waiting)
		if len(ops) == 0 {
			if fs, ok := in.src.(FailingSource); ok && fs.Err() != nil {
				in.err = fs.Err()
				return
			}
			if in.reactive == nil || in.reactive.Ended() {
				in.ended = true
			}
			return
		}
		for i := range ops {
			in.read(&ops[i])
		}
	}
}

// completedPeer is the peer and tag of an op that has completed, as its
// *Op shows them: no rank or tag, so that a driver that reads an op after
// completing it fails rather than reading another op's fields.
const completedPeer = math.MinInt32 + 1

// minWindow is the window's first size, a power of two.
const minWindow = 32

// grow doubles the full window. The old ring is left as it is: the driver
// may hold *Ops into it.
func (in *Interp) grow() {
	old := in.ops
	in.ops = make([]iop, max(2*len(old), minWindow))
	for idx := in.base; idx < in.next; idx++ {
		*in.at(idx) = old[int(idx)&(len(old)-1)]
	}
}

func (in *Interp) read(op *Op) {
	idx := in.next
	if idx == math.MaxInt32 {
		in.err = fmt.Errorf("rank %d: more than %d ops", in.rank, math.MaxInt32)
		return
	}
	if err := checkOp(in.rank, idx, op, in.ranks); err != nil {
		in.err = err
		return
	}
	if int(in.next-in.base) == len(in.ops) {
		in.grow()
	}
	o := in.at(idx)
	// Field by field: a composite literal was built whole and then
	// copied, and a run reads a program 64 ops at a time (programSource),
	// on a real run's way from a receive to the send it makes ready (64
	// ops took 0.98 us so, 0.82 us field by field).
	o.op = *op
	o.op.After, o.op.StartAfter = nil, nil
	o.state, o.pending, o.waiters, o.starts = iWaiting, 0, nil, nil
	for _, d := range op.StartAfter {
		if d >= in.base {
			if ds := in.at(d); ds.state < iStarted {
				ds.starts = append(in.list(ds.starts), idx)
				o.pending++
			}
		}
	}
	for _, d := range op.After {
		if d >= in.base {
			if ds := in.at(d); ds.state != iDone {
				ds.waiters = append(in.list(ds.waiters), idx)
				o.pending++
			}
		}
	}
	in.next++
	in.open++
	if o.pending > 0 {
		in.waiting++
		return
	}
	in.makeReady(idx)
}
