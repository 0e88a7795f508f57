package realrun

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collsim/collsim/sim"
)

// A rank serves its shared-memory channels, and up to maxServedTCP TCP
// connections, from its own goroutine, as an MPI library's progress loop
// serves its transports: while it waits for an event, it copies what it
// has queued for each peer into that peer's ring or socket and what each
// peer has written out of its own, as far as each allows, without ever
// waiting on one, and so without a hand-over between threads per message.
// (With a reader goroutine per peer handing frames over, an 8-byte one-way
// ping-pong took 5.5-18 us against Open MPI's 0.44 us over its shared
// memory.) When the machine has fewer cores than ranks, the rank yields
// its core between looks (see Mesh.serveChannels).
//
// After shmPoll with nothing moved (yieldPoll when it yields), the rank
// sleeps, and hands each channel to watcher goroutines that sleep on the
// channel's futex words (or the socket's readiness) and wake the rank when
// the peer writes, or frees room the rank waits for; they never read or
// write. Other TCP peers keep a reader and a writer goroutine each (see
// Mesh.read and Mesh.write). With fewer cores than ranks the TCP ones kept
// theirs too until 2a2c5b3: four ranks on two cores that polled their
// sockets had run 16 MiB collectives 5-35% slower. Once a socket's reads
// and writes stopped handing the processor over (rawIO) and allocating,
// and timed calls stopped overlapping other ranks' checks (Bench), polling
// was faster: the 1 MiB allreduce, bcast and alltoall of the comparison
// with Open MPI 1.26-1.7x, the 16 MiB bcast and alltoall 1.1x, the 16 MiB
// allreduce 7% slower (medians of 5 alternated runs of each, `collsim
// real --np 4 --transport tcp -c C -a ompi -s S --iterations 10`).

// polling is a Mesh's state for the channels its goroutine serves.
type polling struct {
	polled      []*polledPeer
	polledPeers []*polledPeer // by peer; nil for the others
	asleep      atomic.Bool   // the rank's goroutine sleeps: the watchers watch
	quit        chan struct{}
	quitOnce    sync.Once
	discard     []byte   // where filler payloads are read to
	whole       []uint64 // a small frame laid out in one piece (wholeFrame, sendGathered)
	// yield: the machine has fewer cores than ranks, so the rank gives its
	// core up between looks, and sleeps only after yieldPoll idle.
	yield bool
	// own holds the events of the frames the rank's goroutine read itself,
	// from own[ownHead] on: only that goroutine touches it, so the frames
	// it reads reach it without the lock, counter and signal of the
	// events other goroutines post (Mesh.post). next takes them first.
	// A polled peer's frames are all here, in order; the completions of
	// sends to it and the failure of its channel go on the shared queue
	// and may be taken after frames that came later, which changes
	// nothing: a call ends only once its sends complete, a write into a
	// region a send lent waits for it, and a failure ends the stream.
	own     []event
	ownHead int
	// landing, when set, is asked at each data frame's header where its
	// elements may go instead of a pool buffer: the region of the receive
	// it matches (Rank.landing), or none.
	landing func(from int32, h header) landingSpot
	// completeLanded, when set, completes a receive whose elements have
	// all landed (Rank.complete): a polled peer's landed frame completes
	// it as soon as it is read, rather than as an event that the rank's
	// loop takes back out of own (a small message's way through the rank
	// was about 20-30 ns shorter so, measured in an 8-byte ping-pong).
	// completed says one has since the rank's loop last looked.
	completeLanded func(recv int32)
	completed      bool
	// landed and pooled count the data frames with elements read straight
	// into their receive's region and into pool buffers, fromRing the
	// landed ones read where they lay in a shared ring (landWhole), and
	// inPlace the landed ones whose receive completeLanded completed, for
	// tests.
	landed, pooled, fromRing, inPlace int
}

// postOwn queues an event of the rank's own goroutine.
func (m *Mesh) postOwn(e event) { m.own = append(m.own, e) }

// popOwn takes the oldest event of the rank's own goroutine, if any.
func (m *Mesh) popOwn() (event, bool) {
	if m.ownHead == len(m.own) {
		return event{}, false
	}
	e := m.own[m.ownHead]
	m.own[m.ownHead] = event{}
	if m.ownHead++; m.ownHead == len(m.own) {
		m.own, m.ownHead = m.own[:0], 0
	}
	return e, true
}

// yieldPoll is how long a rank that yields between looks polls before it
// sleeps (Open MPI's never sleep). Measured once with the limit made a
// setting for the purpose, four ranks on two cores ran 1 MiB allreduces in
// 2.4-2.6 ms with 20 ms, 3.2-3.3 ms with 2 ms, 3.4-6.3 ms with 200 us.
const yieldPoll = 20 * time.Millisecond

// servedConn is a channel the rank's goroutine can serve: reads and
// writes that never wait, and waits that neither read nor write, for the
// watchers. A shared-memory channel is one; so is a TCP connection on
// Linux (served_tcp_linux.go).
type servedConn interface {
	// readSome and writeSome move what they can at once, perhaps nothing;
	// readSome returns io.EOF at the peer's end. They and writeWhole are
	// called by the rank's goroutine alone, which alone closes the
	// channel too.
	readSome(p []byte) (int, error)
	writeSome(p []byte) (int, error)
	// writeWhole writes all of p or, if it cannot at once, nothing.
	writeWhole(p []byte)
	// waitReadable and waitRoom return when a read, or a write, would move
	// something or fail, or the channel is closed.
	waitReadable()
	waitRoom()
}

// polledPeer is one channel the rank's goroutine serves. Only that
// goroutine touches it, but for the watchers' nudges.
type polledPeer struct {
	peer int
	conn servedConn
	// records is conn when its frames can be read where they are
	// (shared memory); nil otherwise.
	records recordReader

	// The frame being read: its header, then its payload.
	rdone bool // the stream ended or failed
	hdr   [headerBytes]byte
	hgot  int
	in    event
	body  []byte // where the payload goes (elements, an abort's reason); nil: filler
	left  int64  // payload bytes still to read
	// into, for a frame that lands in a receive that reduces: the region
	// its elements reduce into, a piece of reduceBytes at a time read
	// into body (the peer's scratch) and reduced with op; after is how
	// many of the frame's bytes come after body's piece.
	into    []uint64
	op      sim.ReduceOp
	scratch []uint64
	after   int64
	// abandoned: the rest of the frame is read and dropped, its call
	// having failed while it landed (Mesh.abandonLandings).
	abandoned bool

	// The frames being written, the first one partly.
	wdone bool // the stream failed
	// wfail is the write failure not yet reported: serve reports it
	// after the read side's next look, so that a peer that gave up, and
	// wrote why before it closed, is reported by its reason (which then
	// reads first, as the cause of both) rather than as a crash.
	wfail error
	out   []outItem
	whdr  [headerBytes]byte
	wsent int64 // bytes of out[0]'s frame written, its header's included

	readNudge, roomNudge chan struct{}
}

// recordReader is a served channel whose records can be read where they
// lie (sharedConn): nextRecord returns the next one, or nothing yet, or
// sends the reader to readSome's bytes; consumeRecord(n) finishes it.
type recordReader interface {
	nextRecord() (rec []byte, bytePath bool, err error)
	consumeRecord(n int)
}

// pollPeer makes the rank's goroutine serve peer's channel sc.
func (m *Mesh) pollPeer(peer int, sc servedConn) {
	if m.polledPeers == nil {
		m.polledPeers = make([]*polledPeer, m.size)
		m.discard = make([]byte, 64<<10)
	}
	p := &polledPeer{peer: peer, conn: sc, readNudge: make(chan struct{}, 1), roomNudge: make(chan struct{}, 1)}
	p.records, _ = sc.(recordReader)
	m.polledPeers[peer] = p
	m.polled = append(m.polled, p)
	go m.watch(p.readNudge, sc.waitReadable)
	go m.watch(p.roomNudge, sc.waitRoom)
}

// served is peer's channel if the rank's goroutine serves it, or nil.
func (m *Mesh) served(peer int) *polledPeer {
	if m.polledPeers == nil {
		return nil
	}
	return m.polledPeers[peer]
}

type pollResult uint8

// pollTurns is how many times pollShared looks at the channels between
// its looks at the clock and yields to the rank's other goroutines.
const pollTurns = 64

const (
	pollNothing  pollResult = iota // nothing moved for shmPoll
	pollFound                      // an event is queued
	pollTimedOut                   // the deadline passed
)

// pollShared serves the rank's channels and looks at its event queue until
// an event is queued, nothing has moved for shmPoll, or the deadline
// passes.
func (m *Mesh) pollShared(limit *waitLimit) pollResult {
	var idle time.Time // since when nothing moved; zero: not yet known
	for i := 0; ; i++ {
		moved := false
		for _, p := range m.polled {
			if m.serve(p) {
				moved = true
			}
		}
		if m.ownHead < len(m.own) || m.completed || m.queued.Load() > 0 {
			return pollFound
		}
		if moved {
			idle = time.Time{}
		}
		if m.yield {
			yieldCore() // to the ranks that share the cores
		}
		// Every so many looks, not at the first: a frame that is there at
		// once, or soon, is taken without a clock read or a trip through
		// the scheduler (together some 300 ns here).
		if i%pollTurns == pollTurns-1 {
			runtime.Gosched() // the rank's other goroutines, or ranks in this process
			now := time.Now()
			switch {
			case !now.Before(limit.deadline(now)):
				return pollTimedOut
			case idle.IsZero():
				idle = now
			case now.Sub(idle) > shmPoll && (!m.yield || now.Sub(idle) > yieldPoll):
				return pollNothing
			}
		}
	}
}

// sleepShared hands the channels to their watchers before the rank sleeps:
// each stream that can still move, to the watcher that waits for it to.
func (m *Mesh) sleepShared() {
	m.asleep.Store(true)
	for _, p := range m.polled {
		if !p.rdone {
			nudge(p.readNudge)
		}
		if !p.wdone && len(p.out) > 0 {
			nudge(p.roomNudge)
		}
	}
}

func nudge(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// watch waits, each time it is nudged while the rank sleeps, until wait
// returns, and then wakes the rank; it ends with the mesh.
func (m *Mesh) watch(nudged chan struct{}, wait func()) {
	for {
		select {
		case <-nudged:
		case <-m.quit:
			return
		}
		if m.asleep.Load() {
			wait()
			nudge(m.signal)
		}
	}
}

// endWatches stops the watchers.
func (m *Mesh) endWatches() {
	m.quitOnce.Do(func() {
		if m.quit != nil {
			close(m.quit)
		}
	})
}

// sendPolled queues a frame to a polled peer and writes what the ring
// takes at once; it reports whether the whole frame is written, in which
// case no evSent is posted.
func (m *Mesh) sendPolled(p *polledPeer, it outItem) (bool, error) {
	switch {
	case p.wfail != nil: // serve reports it at the next look
		m.recycle(&it)
		return false, nil
	case p.wdone:
		return false, m.sendFailed(p.peer, errPeerClosedShared)
	}
	op := it.op
	first := len(p.out) == 0
	if first {
		it.op = -1 // the caller completes the op if it is written now
	}
	p.out = append(p.out, it)
	if !first {
		return false, nil
	}
	m.writeSome(p)
	if len(p.out) == 0 {
		return !p.wdone, nil // a failure is serve's to report
	}
	p.out[0].op = op
	return false, nil
}

// serve moves what it can of p's streams and reports whether anything
// moved.
func (m *Mesh) serve(p *polledPeer) bool {
	w := m.writeSome(p)
	r := m.readSome(p)
	if p.wfail != nil {
		m.writeFailed(p.peer, p.wfail)
		p.wfail = nil
	}
	return w || r
}

// writeSome writes p's queued frames as far as the ring takes them.
func (m *Mesh) writeSome(p *polledPeer) bool {
	moved := false
	for !p.wdone && len(p.out) > 0 {
		it := &p.out[0]
		if p.wsent == 0 {
			it.h.put(p.whdr[:])
		}
		var chunk []byte
		switch body := it.body(); {
		case p.wsent == 0 && it.h.payload <= wholeBytes:
			chunk = m.wholeFrame(p, body, it.h.payload)
		case p.wsent < headerBytes:
			chunk = p.whdr[p.wsent:]
		case body != nil:
			chunk = body[p.wsent-headerBytes:]
		default:
			chunk = zeros[:min(int64(len(zeros)), headerBytes+it.h.payload-p.wsent)]
		}
		n := 0
		var err error
		if len(chunk) > 0 {
			n, err = p.conn.writeSome(chunk)
		}
		if err != nil {
			p.wdone, p.wfail = true, err
			for i := range p.out {
				m.recycle(&p.out[i])
			}
			p.out = nil
			return true
		}
		p.wsent += int64(n)
		moved = moved || n > 0
		if p.wsent < headerBytes+it.h.payload {
			if n < len(chunk) {
				return moved // the ring is full
			}
			continue
		}
		m.written(p.peer, it)
		p.out[0] = outItem{}
		if len(p.out) == 1 {
			p.out = p.out[:0] // keep the backing array: no allocation per frame
		} else {
			p.out = p.out[1:]
		}
		p.wsent = 0
		moved = true
	}
	return moved
}

// wholeBytes is the largest payload writeSome writes in one piece with
// its header, copied together first: written apart, the peer saw the
// header and then waited for the payload's own publication (shared
// memory: about 0.3 us between an 8-byte message's header and its payload,
// instrumented once) or segment (TCP: the 8-byte ping-pong took
// 17.4-23.4 us so, 10.7-14.6 us in one piece), and each piece cost its own
// fence or system call.
const wholeBytes = 4 << 10

// wholeFrame is the frame being written to p, its header (p.whdr) and
// payload (body, or payload zero bytes when body is nil) in one piece, in
// the mesh's one buffer for it: the piece is written at once, and what
// the write leaves goes on from the frame's own pieces.
func (m *Mesh) wholeFrame(p *polledPeer, body []byte, payload int64) []byte {
	f := m.wholeBuffer()[:headerBytes+payload]
	copy(f, p.whdr[:])
	if body != nil {
		copy(f[headerBytes:], body)
	} else {
		clear(f[headerBytes:])
	}
	return f
}

// wholeBuffer is the mesh's buffer for a small frame in one piece, as
// bytes.
func (m *Mesh) wholeBuffer() []byte {
	if m.whole == nil {
		m.whole = make([]uint64, (headerBytes+wholeBytes)/8)
	}
	return bytesOf(m.whole)
}

// sendGathered sends a data frame of src's elements of buf (at most
// wholeBytes of them) to p, whose queue is empty, as send would, but
// gathers them straight behind the header in the mesh's frame buffer and
// writes that: no pool buffer between, whose taking and giving back cost
// an 8-byte ping-pong two locks a message on each side. What the channel
// does not take at once is queued from a pool buffer as send's frames are.
func (m *Mesh) sendGathered(p *polledPeer, h header, src sim.Region, buf []uint64, op int32) (bool, error) {
	if p.wdone || len(p.out) > 0 {
		payload := src.Gather(m.pool.get(int(src.Count))[:0], buf)
		return m.sendPolled(p, outItem{h: h, payload: payload, op: op})
	}
	frame := m.wholeBuffer()[:headerBytes+h.payload]
	h.put(frame)
	src.Gather(m.whole[headerBytes/8:headerBytes/8], buf)
	n, err := p.conn.writeSome(frame)
	if err == nil && n == len(frame) {
		return true, nil
	}
	// The rest goes as writeSome's queued frames do, from where the write
	// stopped (a failure is found again there, and posted).
	payload := m.pool.get(int(src.Count))
	copy(bytesOf(payload), frame[headerBytes:])
	h.put(p.whdr[:])
	p.out = append(p.out, outItem{h: h, payload: payload, op: op})
	p.wsent = int64(n)
	m.writeSome(p)
	return false, nil
}

// readSome reads p's incoming frames as far as the peer has written them,
// posting each whole one.
func (m *Mesh) readSome(p *polledPeer) bool {
	moved := false
	for !p.rdone {
		if p.hgot == 0 && p.records != nil {
			rec, bytePath, err := p.records.nextRecord()
			switch {
			case err != nil:
				m.readDone(p, &PeerLostError{Rank: m.rank, Peer: p.peer, Cause: err})
				return true
			case rec == nil && !bytePath:
				return moved // nothing new
			case rec != nil:
				if h, recv, ok := m.landWhole(p, rec); ok {
					moved = true
					if m.completeFirst(recv) {
						return true
					}
					if m.arrived(p.peer, event{kind: evFrame, from: int32(p.peer), h: h, landed: true, op: recv}, true) {
						p.rdone = true
					}
					continue
				}
			}
		}
		if p.hgot < headerBytes {
			n, err := p.conn.readSome(p.hdr[p.hgot:])
			if err != nil {
				m.readDone(p, &PeerLostError{Rank: m.rank, Peer: p.peer, Cause: err, MidMessage: p.hgot > 0})
				return true
			}
			if n == 0 {
				return moved
			}
			moved = true
			if p.hgot += n; p.hgot < headerBytes {
				continue
			}
			h, err := m.parseHeader(p.hdr[:], p.peer)
			if err != nil {
				p.rdone = true
				return true
			}
			p.in, p.left = event{kind: evFrame, from: int32(p.peer), h: h}, h.payload
			switch {
			case h.kind == kindAbort:
				p.body = make([]byte, h.payload)
			case h.kind&flagElements != 0:
				if spot := m.landingFor(p.peer, h); spot.dst != nil {
					p.in.landed, p.in.op = true, spot.recv
					p.body = bytesOf(spot.dst)
					if spot.reduces {
						p.startReducing(spot)
					}
					m.landed++
					break
				}
				m.pooled++
				p.in.payload = m.pool.get(int(h.payload / 8))
				p.body = bytesOf(p.in.payload)
			case h.kind == kindGet:
				p.body = bytesOf(p.in.desc[:])
			default:
				p.body = nil
			}
		}
		if p.left > 0 {
			dst := m.discard[:min(int64(len(m.discard)), p.left)]
			if p.body != nil {
				dst = p.body[int64(len(p.body))-(p.left-p.after):]
			}
			n, err := p.conn.readSome(dst)
			if err != nil {
				m.readDone(p, &PeerLostError{Rank: m.rank, Peer: p.peer, Cause: err, MidMessage: true})
				return true
			}
			if n == 0 {
				return moved
			}
			moved = true
			p.left -= int64(n)
			if p.into != nil && p.left == p.after {
				p.reducePiece()
			}
			if p.left > 0 {
				continue
			}
		}
		e, body, abandoned := p.in, p.body, p.abandoned
		p.hgot, p.in, p.body, p.into, p.after, p.abandoned = 0, event{}, nil, nil, 0, false
		if abandoned {
			continue
		}
		if e.h.kind == kindAbort {
			m.readDone(p, &PeerLostError{Rank: m.rank, Peer: p.peer, GaveUp: string(body)})
			return true
		}
		if e.landed && m.completeFirst(e.op) {
			return true
		}
		if m.arrived(p.peer, e, true) {
			p.rdone = true
		}
	}
	return moved
}

// completeFirst completes receive recv, whose frame has landed, when
// nothing of the rank's own is queued before it, and reports whether it
// did: the receive was matched at the header, so completing it now is
// what the rank would do with the frame's event (Rank.arrive), only
// sooner. (With events before it, the event waits its turn behind them.)
// readSome then returns, so that the rank starts what the receive made
// ready before this channel is read again: looking for the next frame
// reads the line the writer last zeroed, from the writer's core, and an
// 8-byte one-way ping-pong waited for that read (10-25 ns more).
func (m *Mesh) completeFirst(recv int32) bool {
	if m.completeLanded == nil || m.ownHead != len(m.own) {
		return false
	}
	m.completeLanded(recv)
	m.completed = true
	m.inPlace++
	return true
}

// landWhole reads p's next frame from rec, the record holding it where it
// lies in the ring, when it is a data frame whose elements land in a
// posted receive and rec holds it whole (a small message through shared
// memory): its elements go from
// the ring straight into the receive's region (or reduce into it), with
// no copy of the header into p.hdr and no reads of the record in two
// pieces (an 8-byte one-way ping-pong took 15-20 ns less). It then
// returns the frame's header and the receive it landed in. Any other
// frame it leaves to readSome's byte path untouched: landingFor matches a
// receive only when it returns a spot, and a malformed header is the byte
// path's to report.
func (m *Mesh) landWhole(p *polledPeer, rec []byte) (h header, recv int32, ok bool) {
	if len(rec) < headerBytes {
		return h, 0, false
	}
	h, err := parseHeader(rec[:headerBytes], p.peer)
	if err != nil || h.kind != kindData|flagElements || h.payload != int64(len(rec)-headerBytes) {
		return h, 0, false
	}
	spot := m.landingFor(p.peer, h)
	if spot.dst == nil {
		return h, 0, false
	}
	if elems := wordsOf(rec[headerBytes:]); spot.reduces {
		spot.op.Apply(spot.dst, elems)
	} else {
		copy(spot.dst, elems)
	}
	p.records.consumeRecord(len(rec))
	m.landed++
	m.fromRing++
	return h, spot.recv, true
}

// landingSpot is where a data frame's elements land: dst, the region of
// receive recv, reduced into with op if reduces; nil dst: a pool buffer.
type landingSpot struct {
	dst     []uint64
	recv    int32
	reduces bool
	op      sim.ReduceOp
}

// landingFor returns where a data frame from peer, whose header h has just
// been read, is to be read. A message of the peer's that came before it
// and waits in the rank's queue unmatched may match the same receive, so
// then nothing lands: receives match a peer's messages in order (the
// peer's barrier frames match nothing).
func (m *Mesh) landingFor(peer int, h header) landingSpot {
	if m.landing == nil || h.kind != kindData|flagElements || h.payload%8 != 0 {
		return landingSpot{}
	}
	for _, e := range m.own[m.ownHead:] {
		if e.kind == evFrame && !e.landed && int(e.from) == peer && (e.h.kind&^flagElements == kindData || e.h.kind == kindGet) {
			return landingSpot{}
		}
	}
	return m.landing(int32(peer), h)
}

// abandonLandings makes the frames being read straight into a failed
// call's regions read their rest into nothing: the caller has its buffers
// back once the call returns, and nothing may write there after it.
func (m *Mesh) abandonLandings() {
	for _, p := range m.polled {
		if p.in.landed && p.left > 0 {
			p.body, p.into, p.after, p.abandoned = nil, nil, 0, true
		}
	}
}

// reduceBytes is the piece of a reducing frame read at a time, then
// reduced: small enough to stay in the core's cache, where a whole
// message read into a buffer first went out to memory and came back.
const reduceBytes = 64 << 10

// startReducing makes p read the frame's elements into its scratch a
// piece at a time and reduce each into spot's region (reducePiece).
func (p *polledPeer) startReducing(spot landingSpot) {
	if p.scratch == nil {
		p.scratch = make([]uint64, reduceBytes/8)
	}
	p.into, p.op = spot.dst, spot.op
	p.nextPiece(int64(len(spot.dst)))
}

// nextPiece points p.body at the piece of the next of the elements still
// to read, left of them.
func (p *polledPeer) nextPiece(left int64) {
	k := min(left, int64(len(p.scratch)))
	p.body, p.after = bytesOf(p.scratch[:k]), 8*(left-k)
}

// reducePiece reduces the piece just read into its place in p.into and
// points p.body at the next piece, if any.
func (p *polledPeer) reducePiece() {
	done := len(p.into) - int(p.left/8) // elements read
	k := len(p.body) / 8
	p.op.Apply(p.into[done-k:done], p.scratch[:k])
	if p.left > 0 {
		p.nextPiece(p.left / 8)
	}
}

// readDone ends p's incoming stream with err.
func (m *Mesh) readDone(p *polledPeer, err error) {
	p.rdone = true
	if p.in.payload != nil {
		m.pool.put(p.in.payload)
		p.in.payload = nil
	}
	m.readFailed(p.peer, err)
}

// flushPolled writes what is still queued for polled peers (their byes
// above all) until the deadline.
func (m *Mesh) flushPolled(deadline time.Time) {
	for {
		pending := false
		for _, p := range m.polled {
			m.writeSome(p)
			pending = pending || !p.wdone && len(p.out) > 0
		}
		if !pending || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// abortPolled tells a polled peer that this rank gives up, if no frame is
// half written and the ring has room for the whole abort frame.
func (m *Mesh) abortPolled(p *polledPeer, reason []byte) {
	if p.wdone || p.wsent != 0 {
		return
	}
	frame := make([]byte, headerBytes+len(reason))
	(&header{kind: kindAbort, bytes: int64(len(reason)), payload: int64(len(reason))}).put(frame)
	copy(frame[headerBytes:], reason)
	p.conn.writeWhole(frame) // if it does not fit, the peer sees the end alone
}
