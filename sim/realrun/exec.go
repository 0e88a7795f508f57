package realrun

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/collsim/collsim/sim"
)

// Rank runs schedules as one rank over its Mesh, one call (an epoch) at a
// time. Messages of a later call that arrive early wait for it.
type Rank struct {
	mesh *Mesh
	// Timeout is how long the rank waits without any progress (no message,
	// no completed send) before it gives up and reports what it waits for.
	Timeout time.Duration
	// Trace, when set, is told when each op starts and completes.
	Trace func(OpEvent)

	epoch uint32
	// probeCalls are the first calls, the single-copy probe's
	// (probeSingleCopy); probing: the probe runs. Reports number calls
	// after them.
	probeCalls uint32
	probing    bool
	early      []event            // data frames of later epochs
	barriers   map[[2]uint32]bool // (epoch, round) barrier frames arrived
	msgs       []arrival          // arrived messages by ID
	freeMsg    []uint32           // free IDs in msgs
	data       [][]uint64         // the current call's buffers (nil: no data)
	reduce     sim.ReduceOp       // the current call's reduction
	in         *sim.Interp        // the current call's interpreter
	interp     *sim.Interp        // the interpreter, reset for each call

	// Single copies straight out of the rank's buffers (singlecopy.go): a
	// send of a contiguous region lends it to the receiver, which copies it
	// out later, and writes into a lent region wait until it is returned,
	// so that the send still carries what the region held when it started.
	lent     []lentRegion
	deferred []deferredWrite
	// selfLent holds the IDs of messages to the rank itself that wait for
	// their receive still in the region they were sent from (view): a
	// write there captures them first (unlendSelf).
	selfLent []uint32
}

// lentRegion is a run of elements a single-copy send lent to its receiver.
type lentRegion struct {
	buf    uint8
	lo, hi int64
	op     int32 // the send, completed when the receiver has copied
}

// deferredWrite is a receive or a local copy whose write into the rank's
// buffers waits for a lent region to come back.
type deferredWrite struct {
	idx   int32
	dst   sim.Region
	elems []uint64 // a receive's elements (pool buffer); nil for a calc's copy
}

// OpEvent is one op of a real run starting or completing, for timelines.
type OpEvent struct {
	At        time.Time
	Epoch     uint32
	Index     int32
	Completed bool
	Op        sim.Op
}

type arrival struct {
	from    int32
	h       header
	payload []uint64
	desc    getDesc // a get frame's: where its elements are
	// view: payload is the rank's own region src, sent to itself and
	// matched at once (see sendToSelf), not a pool buffer.
	view bool
	src  sim.Region
}

// NewRank returns rank m.rank's executor over m.
func NewRank(m *Mesh) *Rank {
	r := &Rank{mesh: m, Timeout: time.Minute, barriers: map[[2]uint32]bool{}}
	m.landing, m.completeLanded = r.landing, r.complete
	return r
}

// Fail ends whatever the rank waits for with err: the rendezvous uses it
// when another rank reports a failure.
func (r *Rank) Fail(err error) { r.mesh.post(event{kind: evError, from: -1, err: err}) }

// Execute runs this rank's program of s to completion. data, when not nil,
// holds the rank's buffers: sends carry real elements and reducing
// receives apply s.ReduceOp, so the caller can check the result.
func (r *Rank) Execute(s sim.Schedule, data [][]uint64) (err error) {
	if s.Ranks != r.mesh.size {
		return fmt.Errorf("schedule %q has %d ranks but the run has %d", s.Name, s.Ranks, r.mesh.size)
	}
	r.epoch++
	if r.interp == nil {
		r.interp = new(sim.Interp)
	}
	in := r.interp
	if err := in.Reset(s, r.mesh.rank); err != nil {
		return err
	}
	r.in, r.data, r.reduce = in, data, s.ReduceOp
	r.lent, r.deferred, r.selfLent = r.lent[:0], r.deferred[:0], r.selfLent[:0]
	defer func() {
		if err != nil {
			r.mesh.abandonLandings()
		}
		r.in, r.data = nil, nil
	}()
	early := r.early
	r.early = nil
	for _, e := range early {
		if err := r.handle(e); err != nil {
			return err
		}
	}
	for {
		if err := r.issueReady(); err != nil {
			return err
		}
		if in.Done() {
			return nil
		}
		e, ok := r.mesh.nextWithin(r.Timeout)
		if !ok {
			return r.stalled(s.Name)
		}
		if err := r.handle(e); err != nil {
			return err
		}
	}
}

// issueReady starts every ready op; ops that complete at once may make
// more ready.
func (r *Rank) issueReady() error {
	for {
		idx, op, ok := r.in.Start()
		if !ok {
			return r.in.Err()
		}
		r.traceOp(idx, op, false)
		switch op.Kind {
		case sim.OpCalc:
			if r.data != nil && op.Src.Count > 0 && r.writeWaits(op.Data) {
				r.deferred = append(r.deferred, deferredWrite{idx: idx, dst: op.Data})
				continue
			}
			if err := r.calc(idx, op); err != nil {
				return err
			}
		case sim.OpSend:
			if err := r.send(idx, op); err != nil {
				return err
			}
		case sim.OpRecv:
			if id, ok := r.in.Post(idx); ok {
				if err := r.deliver(idx, id); err != nil {
					return err
				}
			}
		}
	}
}

// calc runs calc op idx: its local copy, its compute time, its completion.
func (r *Rank) calc(idx int32, op *sim.Op) error {
	if err := r.copyLocal(idx, op); err != nil {
		return err
	}
	if op.Dur > 0 {
		spin(time.Duration(op.Dur / sim.Nanosecond))
	}
	r.complete(idx)
	return nil
}

// writeWaits reports whether a write into dst must wait: dst overlaps a
// lent region, or a write waiting before it.
func (r *Rank) writeWaits(dst sim.Region) bool {
	if len(r.lent) == 0 && len(r.deferred) == 0 {
		return false
	}
	lo, hi := dst.Span()
	for _, l := range r.lent {
		if l.buf == dst.Buf && l.lo < hi && lo < l.hi {
			return true
		}
	}
	for _, d := range r.deferred {
		if dlo, dhi := d.dst.Span(); d.dst.Buf == dst.Buf && dlo < hi && lo < dhi {
			return true
		}
	}
	return false
}

// returned takes back the region send op lent, if it lent one, and makes
// the writes that waited for it, in the order they came.
func (r *Rank) returned(op int32) error {
	i := slices.IndexFunc(r.lent, func(l lentRegion) bool { return l.op == op })
	if i < 0 {
		return nil
	}
	r.lent = slices.Delete(r.lent, i, i+1)
	waiting := r.deferred
	r.deferred = nil
	for _, d := range waiting {
		if r.writeWaits(d.dst) {
			r.deferred = append(r.deferred, d)
			continue
		}
		op := r.in.Op(d.idx)
		if d.elems == nil {
			if err := r.calc(d.idx, op); err != nil {
				return err
			}
			continue
		}
		r.apply(op, d.elems)
		r.complete(d.idx)
	}
	return nil
}

func (r *Rank) complete(idx int32) {
	if r.Trace != nil {
		r.traceOp(idx, r.in.Op(idx), true)
	}
	r.in.Complete(idx)
}

func (r *Rank) traceOp(idx int32, op *sim.Op, completed bool) {
	if r.Trace == nil {
		return
	}
	o := *op
	o.After, o.StartAfter = nil, nil
	r.Trace(OpEvent{At: time.Now(), Epoch: r.epoch, Index: idx, Completed: completed, Op: o})
}

// spin busy-waits for d: a calc op occupies its CPU, and sleeping would
// round short durations up to the scheduler's tick.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// checkRegion reports reg, a region of op idx, if it does not lie in the
// rank's buffers.
func (r *Rank) checkRegion(idx int32, op *sim.Op, reg sim.Region) error {
	if _, hi := reg.Span(); int(reg.Buf) >= len(r.data) || hi > int64(len(r.data[reg.Buf])) {
		return fmt.Errorf("rank %d op %d (%v): data region %+v outside the rank's buffers", r.mesh.rank, idx, op, reg)
	}
	return nil
}

// copyLocal runs calc idx's local copy (a pack or an unpack), if it has one.
func (r *Rank) copyLocal(idx int32, op *sim.Op) error {
	if r.data == nil || op.Src.Count == 0 {
		return nil
	}
	src, dst := op.Src, op.Data
	if err := r.checkRegion(idx, op, src); err != nil {
		return err
	}
	if err := r.checkRegion(idx, op, dst); err != nil {
		return err
	}
	r.unlendSelf(dst)
	var apply func(dst, src []uint64)
	if op.Reduce {
		apply = r.reduce.Apply
	}
	if src.Runs() == 1 && !overlap(src, dst) {
		dst.Scatter(r.data[dst.Buf], r.data[src.Buf][src.Off:src.Off+src.Count], apply)
		return nil
	}
	// Through a scratch copy: the two regions may interleave in one buffer.
	tmp := src.Gather(r.mesh.pool.get(int(src.Count))[:0], r.data[src.Buf])
	dst.Scatter(r.data[dst.Buf], tmp, apply)
	r.mesh.pool.put(tmp)
	return nil
}

// send starts send idx: its data is captured now, as the simulator does.
func (r *Rank) send(idx int32, op *sim.Op) error {
	h := header{kind: kindData, epoch: r.epoch, tag: op.Tag, bytes: op.Bytes, payload: op.Bytes}
	var payload []uint64
	if r.data != nil {
		src := op.Data
		if err := r.checkRegion(idx, op, src); err != nil {
			return err
		}
		if peer := int(op.Peer); peer != r.mesh.rank && src.Runs() == 1 && 8*src.Count > r.mesh.inPlaceAbove {
			// Large and contiguous: sent straight from the buffer, which
			// is lent until the peer has copied it or it is written.
			h.kind |= flagElements
			h.payload = 8 * src.Count
			elems := r.data[src.Buf][src.Off : src.Off+src.Count]
			lent := lentRegion{buf: src.Buf, lo: src.Off, hi: src.Off + src.Count, op: idx}
			if r.mesh.sendsAsGet(peer, src.Count) {
				r.lent = append(r.lent, lent)
				return r.mesh.lend(peer, h, elems, idx)
			}
			written, err := r.mesh.sendInPlace(peer, h, elems, idx)
			if written {
				r.complete(idx)
			} else if err == nil {
				r.lent = append(r.lent, lent)
			}
			return err
		}
		if int(op.Peer) == r.mesh.rank && src.Runs() == 1 {
			return r.sendToSelf(idx, op)
		}
		h.kind |= flagElements
		h.payload = 8 * src.Count
		if p := r.mesh.served(int(op.Peer)); p != nil && h.payload <= wholeBytes && !r.mesh.sendsAsGet(p.peer, src.Count) {
			written, err := r.mesh.sendGathered(p, h, src, r.data[src.Buf], idx)
			if written {
				r.complete(idx)
			}
			return err
		}
		payload = src.Gather(r.mesh.pool.get(int(src.Count))[:0], r.data[src.Buf])
	}
	if int(op.Peer) == r.mesh.rank {
		self := op.Peer // op is not to be read once it completes
		r.complete(idx)
		return r.arrive(event{kind: evFrame, from: self, h: h, payload: payload})
	}
	written, err := r.mesh.send(int(op.Peer), h, payload, idx)
	if written {
		r.complete(idx)
	}
	return err
}

// call names call epoch for a report: counted after the single-copy
// probe's calls, which are named as such.
func (r *Rank) call(epoch uint32) string {
	if r.probing || epoch <= r.probeCalls && epoch > 0 {
		return fmt.Sprintf("the single-copy probe's call %d", epoch)
	}
	return fmt.Sprintf("call %d", epoch-r.probeCalls)
}

// handle takes one event of the mesh.
func (r *Rank) handle(e event) error {
	switch e.kind {
	case evCompleted:
		return nil
	case evError:
		return e.err
	case evSent:
		if r.in == nil || e.epoch != r.epoch {
			return fmt.Errorf("rank %d: a send of %s completed during %s", r.mesh.rank, r.call(e.epoch), r.call(r.epoch))
		}
		r.complete(e.op)
		return r.returned(e.op)
	}
	switch e.h.kind &^ flagElements {
	case kindBarrier:
		r.barriers[[2]uint32{e.h.epoch, uint32(e.h.tag)}] = true
		return nil
	case kindBye:
		return nil
	}
	// Data and get frames.
	switch {
	case r.in == nil || e.h.epoch > r.epoch:
		r.early = append(r.early, e)
		return nil
	case e.h.epoch < r.epoch:
		return fmt.Errorf("rank %d: a message from rank %d of finished %s arrived during %s: the ranks' programs disagree", r.mesh.rank, e.from, r.call(e.h.epoch), r.call(r.epoch))
	}
	return r.arrive(e)
}

// arrive matches a data frame of the current call with a posted receive,
// or keeps it until one is posted.
func (r *Rank) arrive(e event) error {
	if e.landed { // matched at its header, its elements in place
		r.complete(e.op)
		return nil
	}
	switch withData := e.h.kind&flagElements != 0 || e.h.kind == kindGet; {
	case r.data != nil && !withData:
		return fmt.Errorf("rank %d: rank %d sent a message without data in a run that checks data: the ranks run different jobs", r.mesh.rank, e.from)
	case r.data == nil && e.h.kind == kindGet:
		return fmt.Errorf("rank %d: rank %d sent a message with data in a run that carries none: the ranks run different jobs", r.mesh.rank, e.from)
	}
	id := r.keep(arrival{from: e.from, h: e.h, payload: e.payload, desc: e.desc})
	if recv, ok := r.in.Arrived(e.from, e.h.tag, id); ok {
		return r.deliver(recv, id)
	}
	return nil
}

// landing is asked by the mesh, when a data frame's header has come from
// rank from and before its elements are read, where they may go: straight
// into the region of the posted receive that the message matches (or, if
// that receive reduces, a piece at a time through a scratch buffer into
// it), when the receive takes them as they are (one run of elements, room
// for them, no lent region or waiting write in the way). The receive is
// then matched at once and completes when the last element is read
// (Rank.arrive); otherwise the spot is empty and the frame comes as any
// other.
//
// This spares the copy through a pool buffer: a 512 KiB message through
// shared memory was copied into the ring, out into a buffer, then into its
// region, where Open MPI's vader copies it once; over TCP the kernel's
// copy now lands in the region; a reducing receive reduces pieces that
// are still in the core's cache. Matching at the header is what MPI
// libraries do (Open MPI's ob1 matches a fragment's match header as it
// comes). Elements land before the receive completes, which no schedule
// can see: none reads or writes a pending receive's region (checked for
// every algorithm by sim's interpreter tests), as MPI forbids.
func (r *Rank) landing(from int32, h header) landingSpot {
	if r.in == nil || r.data == nil || h.epoch != r.epoch {
		return landingSpot{}
	}
	idx, ok := r.in.Accepting(from, h.tag)
	if !ok {
		return landingSpot{}
	}
	op, n := r.in.Op(idx), h.payload/8
	reg := op.Data
	// An empty message has nothing to land (and an empty region may be a
	// nil buffer's, which would read as "not landing").
	if n == 0 || reg.Runs() != 1 || h.bytes > op.Bytes || n > reg.Count || r.checkRegion(idx, op, reg) != nil || r.writeWaits(reg) {
		return landingSpot{}
	}
	if got, _ := r.in.Arrived(from, h.tag, 0); got != idx {
		panic(fmt.Sprintf("realrun: receive %d accepted a message from rank %d, but it matched receive %d", idx, from, got))
	}
	r.unlendSelf(reg)
	return landingSpot{dst: r.data[reg.Buf][reg.Off : reg.Off+n], recv: idx, reduces: op.Reduce, op: r.reduce}
}

// keep files an arrived message under a free ID.
func (r *Rank) keep(a arrival) uint32 {
	if n := len(r.freeMsg); n > 0 {
		id := r.freeMsg[n-1]
		r.freeMsg = r.freeMsg[:n-1]
		r.msgs[id] = a
		return id
	}
	r.msgs = append(r.msgs, a)
	return uint32(len(r.msgs) - 1)
}

// sendToSelf runs send idx to the rank itself, of a contiguous region:
// its elements go straight from the region into the receive's (one copy,
// as Open MPI's self transport makes), now if a receive is posted for it,
// or when one is; until then a write into the region captures them first,
// so the message still carries what the region held when it was sent.
func (r *Rank) sendToSelf(idx int32, op *sim.Op) error {
	src, self, tag := op.Data, op.Peer, op.Tag
	h := header{kind: kindData | flagElements, epoch: r.epoch, tag: tag, bytes: op.Bytes, payload: 8 * src.Count}
	r.complete(idx) // op is not to be read from here on: its slot takes a later op
	id := r.keep(arrival{from: self, h: h, payload: r.data[src.Buf][src.Off : src.Off+src.Count], view: true, src: src})
	if recv, ok := r.in.Arrived(self, tag, id); ok {
		return r.deliver(recv, id)
	}
	r.selfLent = append(r.selfLent, id)
	return nil
}

// unlendSelf captures the messages to the rank itself that still lie in
// regions overlapping dst, which is about to be written.
func (r *Rank) unlendSelf(dst sim.Region) {
	if len(r.selfLent) == 0 {
		return
	}
	kept := r.selfLent[:0]
	for _, id := range r.selfLent {
		if m := &r.msgs[id]; overlap(m.src, dst) {
			m.payload = m.src.Gather(r.mesh.pool.get(int(m.src.Count))[:0], r.data[m.src.Buf])
			m.view = false
			continue
		}
		kept = append(kept, id)
	}
	r.selfLent = kept
}

// overlap reports whether two regions may share elements: the same buffer
// and intersecting spans.
func overlap(a, b sim.Region) bool {
	alo, ahi := a.Span()
	blo, bhi := b.Span()
	return a.Buf == b.Buf && alo < bhi && blo < ahi
}

// deliver completes receive idx with message id.
func (r *Rank) deliver(idx int32, id uint32) error {
	m := r.msgs[id]
	r.msgs[id] = arrival{}
	r.freeMsg = append(r.freeMsg, id)
	op := r.in.Op(idx)
	if m.h.bytes > op.Bytes {
		return fmt.Errorf("rank %d op %d (%v) matched a message of %d bytes from rank %d: larger than the receive (MPI_ERR_TRUNCATE)", r.mesh.rank, idx, op, m.h.bytes, m.from)
	}
	if r.data != nil {
		dst := op.Data
		if err := r.checkRegion(idx, op, dst); err != nil {
			return err
		}
		elems := int64(len(m.payload))
		if m.h.kind == kindGet {
			if m.desc[1] > MaxMessageBytes/8 { // a corrupt frame: int64 would wrap
				return fmt.Errorf("rank %d op %d (%v): rank %d offered a message of %d elements, beyond the %d-byte limit: corrupted data", r.mesh.rank, idx, op, m.from, m.desc[1], int64(MaxMessageBytes))
			}
			elems = int64(m.desc[1])
		}
		if dst.Count < elems {
			return fmt.Errorf("rank %d op %d (%v) has room for %d elements but rank %d sent %d", r.mesh.rank, idx, op, dst.Count, m.from, elems)
		}
		if m.view {
			if i := slices.Index(r.selfLent, id); i >= 0 {
				r.selfLent = slices.Delete(r.selfLent, i, i+1)
			}
		}
		waits := r.writeWaits(dst)
		if m.view && (waits || overlap(m.src, dst)) { // capture it first
			m.payload = m.src.Gather(r.mesh.pool.get(int(m.src.Count))[:0], r.data[m.src.Buf])
			m.view = false
		}
		switch {
		case m.view:
			r.lay(op, m.payload)
		case m.h.kind == kindGet:
			if err := r.fetch(idx, op, m, waits); err != nil || waits {
				return err
			}
		case waits:
			r.deferred = append(r.deferred, deferredWrite{idx: idx, dst: dst, elems: m.payload})
			return nil
		default:
			r.apply(op, m.payload)
		}
	}
	r.complete(idx)
	return nil
}

// apply lays a message's elements into receive op's region: a shorter
// message fills the start, as in MPI.
func (r *Rank) apply(op *sim.Op, elems []uint64) {
	r.lay(op, elems)
	r.mesh.pool.put(elems)
}

// lay lays elements into receive op's region, reducing if it reduces.
func (r *Rank) lay(op *sim.Op, elems []uint64) {
	r.unlendSelf(op.Data)
	var reduce func(dst, src []uint64)
	if op.Reduce {
		reduce = r.reduce.Apply
	}
	op.Data.Scatter(r.data[op.Data.Buf], elems, reduce)
}

// fetch reads get frame m's elements out of the sender's memory into
// receive idx's region, straight into it when it is one run of elements
// that the receive does not reduce into, and tells the sender. When the
// write waits for a lent region, the elements wait with it, read: the
// sender gets its region back at once (two ranks that swap lent regions
// would otherwise wait for each other).
func (r *Rank) fetch(idx int32, op *sim.Op, m arrival, waits bool) error {
	dst, n := op.Data, int64(m.desc[1])
	if !waits && !op.Reduce && dst.Runs() == 1 {
		r.unlendSelf(dst)
		if err := r.mesh.fetch(int(m.from), m.desc, r.data[dst.Buf][dst.Off:dst.Off+n]); err != nil {
			return err
		}
	} else {
		tmp := r.mesh.pool.get(int(n))
		if err := r.mesh.fetch(int(m.from), m.desc, tmp); err != nil {
			r.mesh.pool.put(tmp)
			return err
		}
		if waits {
			r.deferred = append(r.deferred, deferredWrite{idx: idx, dst: dst, elems: tmp})
		} else {
			r.apply(op, tmp)
		}
	}
	return r.mesh.got(int(m.from), m.h.epoch, m.desc)
}

// stalled reports a call that made no progress for the timeout.
func (r *Rank) stalled(name string) error {
	pending := r.in.Pending(func(id uint32) string {
		m := r.msgs[id]
		return fmt.Sprintf("message of %dB from rank %d tag %d", m.h.bytes, m.from, m.h.tag)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d: %s made no progress for %v (a peer stalled, or the schedule deadlocks)", r.mesh.rank, name, r.Timeout)
	for i, p := range pending {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more", len(pending)-i)
			break
		}
		if p.Index >= 0 {
			fmt.Fprintf(&b, "; op %d %s: %s", p.Index, p.Op, p.State)
		} else {
			fmt.Fprintf(&b, "; %s: %s", p.Op, p.State)
		}
	}
	return errors.New(b.String())
}

// Barrier waits until every rank has reached the barrier of the current
// epoch (a dissemination barrier: ceil(log2 P) rounds of one message).
// Timed loops put one between iterations, as the OSU benchmarks do.
func (r *Rank) Barrier() error {
	p, me := r.mesh.size, r.mesh.rank
	for k, round := 1, uint32(0); k < p; k, round = k*2, round+1 {
		if _, err := r.mesh.send((me+k)%p, header{kind: kindBarrier, epoch: r.epoch, tag: int32(round)}, nil, -1); err != nil {
			return err
		}
		key := [2]uint32{r.epoch, round}
		// Later rounds wait a little longer, so that when a rank stalls,
		// the rank waiting for it in round 0 gives up first and names it,
		// rather than a rank waiting for a rank that waits for it.
		wait := r.Timeout + r.Timeout/10*time.Duration(round)
		deadline := time.Now().Add(wait)
		for !r.barriers[key] {
			e, ok := r.mesh.next(deadline)
			if !ok {
				if round == 0 {
					// A rank still in the call, waiting for one that
					// stalled there, sends no barrier message either: it
					// is named only as likely (a healthy rank was blamed
					// alone: a new user's trial).
					return fmt.Errorf("rank %d: barrier after %s: no word from rank %d for %v: it stalled (or is still in the call, waiting for a rank that did)", me, r.call(r.epoch), (me-k+p)%p, wait)
				}
				return fmt.Errorf("rank %d: barrier after %s: no word from rank %d (round %d) for %v: it, or a rank it waits for, stalled", me, r.call(r.epoch), (me-k+p)%p, round, wait)
			}
			if err := r.handle(e); err != nil {
				return err
			}
		}
		delete(r.barriers, key)
	}
	return nil
}
