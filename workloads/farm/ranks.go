package farm

import "github.com/collsim/collsim/sim"

// reactive is what the master and workers share: the ops ready to hand
// out, and the sim.ReactiveSource methods that need nothing of either.
type reactive struct {
	ready   []sim.Op
	started bool
}

// Next implements sim.Source: the ready ops.
func (s *reactive) Next(ops []sim.Op) []sim.Op {
	ops = append(ops, s.ready...)
	s.ready = s.ready[:0]
	return ops
}

// Started implements sim.ReactiveSource.
func (s *reactive) Started(int32) {}

// NeedsStarts implements sim.ReactiveSource.
func (s *reactive) NeedsStarts() bool { return false }

// Needed implements sim.ReactiveSource: every op's completion moves the
// program on.
func (s *reactive) Needed(int32) bool { return true }

// CompletedAt implements sim.ReactiveSource: declined, so that Completed
// comes at the time.
func (s *reactive) CompletedAt(int32, sim.Time) bool { return false }

func (s *reactive) add(op sim.Op) { s.ready = append(s.ready, op) }

// What a master's op is.
const (
	mSubmit = iota // the submit and serialization of a chunk
	mSend          // the chunk's message
	mRecv          // a result from any worker
	mHandle        // handling a result
	mStop          // the message that stops a worker
)

type masterOp struct {
	kind   uint8
	worker int32
}

// master is rank 0: it hands each worker a chunk, and each worker that
// answers the next chunk, or a stop once none is left. It is one loop, as
// a pool's dispatching thread is: it takes one thing to do at a time (a
// worker to give a chunk to, or a result to handle), and carries it
// through (handle, submit and serialize, send) before the next, so a
// chunk leaves as soon as it is ready rather than behind every submit or
// handle queued before it on the CPU (with 16 workers and a 1 ms task the
// first chunks waited for all 16 submits: 1.483 ms where the loop takes
// 1.333; an audit).
type master struct {
	reactive
	j        *Job
	ops      []masterOp // by index handed out
	pending  []masterOp // of the ready ops, in order
	todo     []masterOp // what the loop has still to take up, in order, from todo[head]
	head     int
	busy     bool  // the loop is carrying one through
	next     int   // the next chunk to hand out
	inflight []int // by worker: its chunk
	stopped  int
}

func newMaster(j *Job) *master {
	m := &master{j: j, inflight: make([]int, j.Workers+1)}
	for w := 1; w <= j.Workers; w++ {
		m.todo = append(m.todo, masterOp{mSubmit, int32(w)})
	}
	m.step()
	return m
}

// step takes up the next thing to do once the loop is free: a worker to
// give a chunk to (mSubmit) or a result to handle (mHandle).
func (m *master) step() {
	for !m.busy && m.head < len(m.todo) {
		o := m.todo[m.head]
		if m.head++; 2*m.head >= len(m.todo) {
			// Half or more taken: what is left moves to the front of the
			// array, which then holds no more than twice what waits (it
			// reallocated as slicing from the front moved it along; a
			// master-bound farm never empties its queue).
			n := copy(m.todo, m.todo[m.head:])
			m.todo, m.head = m.todo[:n], 0
		}
		m.busy = true
		if o.kind == mHandle {
			_, n := m.j.span(m.inflight[o.worker])
			m.push(sim.Op{Kind: sim.OpCalc, Dur: m.j.Handle * sim.Time(n)}, mHandle, o.worker)
			continue
		}
		m.assign(o.worker)
	}
}

func (m *master) push(op sim.Op, kind uint8, w int32) {
	m.add(op)
	m.pending = append(m.pending, masterOp{kind, w})
}

// Next implements sim.Source.
func (m *master) Next(ops []sim.Op) []sim.Op {
	m.ops = append(m.ops, m.pending...)
	m.pending = m.pending[:0]
	return m.reactive.Next(ops)
}

// assign gives worker w the next chunk (its submit, then its message
// once the submit completes, and a receive for a result), or stops it.
func (m *master) assign(w int32) {
	if m.next == m.j.Chunks() {
		m.push(sim.Op{Kind: sim.OpSend, Peer: w, Tag: tagStop}, mStop, w)
		m.stopped++
		m.busy = false // the stop is sent; the loop goes on
		return
	}
	c := m.next
	m.next++
	m.inflight[w] = c
	_, n := m.j.span(c)
	m.push(sim.Op{Kind: sim.OpCalc, Dur: m.j.submitCost(n)}, mSubmit, w)
	m.push(sim.Op{Kind: sim.OpRecv, Peer: sim.AnySource, Tag: tagResult, Bytes: int64(m.j.chunk()) * m.j.Result}, mRecv, 0)
}

// Received implements sim.MatchingSource: which worker a result is from.
func (m *master) Received(idx, src, _ int32) { m.ops[idx].worker = src }

// Completed implements sim.ReactiveSource.
func (m *master) Completed(idx int32) {
	o := m.ops[idx]
	switch o.kind {
	case mSubmit:
		c := m.inflight[o.worker]
		_, n := m.j.span(c)
		m.push(sim.Op{Kind: sim.OpSend, Peer: o.worker, Tag: int32(c + 1), Bytes: int64(n) * m.j.Arg}, mSend, o.worker)
		m.busy = false
	case mRecv:
		m.todo = append(m.todo, masterOp{mHandle, o.worker})
	case mHandle:
		m.assign(o.worker)
	}
	m.step()
}

// Ended implements sim.ReactiveSource: every worker has been told to
// stop (after its last result was handled).
func (m *master) Ended() bool { return m.stopped == m.j.Workers && len(m.ready) == 0 }

// Waiting implements sim.ReactiveSource: the workers still to be stopped.
func (m *master) Waiting() int { return m.j.Workers - m.stopped }

// What a worker's op is.
const (
	wRecv = iota // a chunk, or the stop
	wRun         // the chunk's tasks
	wSend        // their results
)

type workerOp struct {
	kind  uint8
	chunk int32
}

// worker runs the chunks it receives until it is told to stop.
type worker struct {
	reactive
	j       *Job
	ops     []workerOp // by index handed out, then the ready ones
	lastTag int32      // the tag of the receive that matched last
	done    bool
}

func (w *worker) push(op sim.Op, kind uint8, chunk int32) {
	w.add(op)
	w.ops = append(w.ops, workerOp{kind, chunk})
}

// Next implements sim.Source.
func (w *worker) Next(ops []sim.Op) []sim.Op {
	if !w.started {
		w.started = true
		w.push(sim.Op{Kind: sim.OpRecv, Peer: 0, Tag: sim.AnyTag, Bytes: int64(w.j.chunk()) * w.j.Arg}, wRecv, -1)
	}
	return w.reactive.Next(ops)
}

// Received implements sim.MatchingSource: which chunk arrived (its tag).
func (w *worker) Received(idx, _, tag int32) { w.ops[idx].chunk = tag - 1 }

// Completed implements sim.ReactiveSource.
func (w *worker) Completed(idx int32) {
	o := w.ops[idx]
	switch {
	case o.kind == wRecv && o.chunk < 0:
		w.done = true // the stop
	case o.kind == wRecv:
		first, n := w.j.span(int(o.chunk))
		var d sim.Time
		for i := first; i < first+n; i++ {
			d += w.j.Duration(i)
		}
		w.push(sim.Op{Kind: sim.OpCalc, Dur: d}, wRun, o.chunk)
	case o.kind == wRun:
		_, n := w.j.span(int(o.chunk))
		w.push(sim.Op{Kind: sim.OpSend, Peer: 0, Tag: tagResult, Bytes: int64(n) * w.j.Result}, wSend, o.chunk)
		w.push(sim.Op{Kind: sim.OpRecv, Peer: 0, Tag: sim.AnyTag, Bytes: int64(w.j.chunk()) * w.j.Arg}, wRecv, -1)
	}
}

// Ended implements sim.ReactiveSource.
func (w *worker) Ended() bool { return w.done && len(w.ready) == 0 }

// Waiting implements sim.ReactiveSource: a worker not yet stopped
// waits for its next chunk.
func (w *worker) Waiting() int {
	if w.done {
		return 0
	}
	return 1
}
