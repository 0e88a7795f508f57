package realrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mesh is one rank's channels to every other rank: shared memory with
// ranks on its host, TCP with the others. The rank's goroutine serves its
// shared-memory channels and some TCP ones itself while it waits (see
// progress.go); the other connections have a reader and a writer
// goroutine each. Either way a rank never blocks on one channel: sends are
// queued, and frames and send completions arrive as events for the rank's
// single interpreting loop, each peer's frames in order. Messages too large for a
// ring travel as single copies between ranks that share memory (see
// singlecopy.go).
type Mesh struct {
	rank, size int
	job        uint64
	secret     Secret
	transport  Transport
	conns      []net.Conn // nil at this rank's own index; a TCP or shared-memory channel
	// sameMachine says which peers run on this machine (whatever their
	// channel, and in whatever network namespace).
	sameMachine []bool
	// peerCPUs holds the CPU set of each peer on this machine, set by the
	// goroutine that connects to it, as sameMachine is (see machineCores).
	peerCPUs []cpuSet
	out      []*outQueue

	mu     sync.Mutex
	events []event
	ehead  int
	signal chan struct{} // a token whenever events were added
	// wait times next's sleeps; kept, so that a wait allocates nothing.
	wait    *time.Timer
	bye     []bool // a bye frame has come from that peer
	closing bool

	pool bufPool
	// inPlaceAbove: a send of a contiguous region of more bytes goes
	// straight from the rank's buffer (Rank.send), not from a copy.
	inPlaceAbove int64
	writers      sync.WaitGroup
	causes       []error // per peer: why its connection failed, once it has

	queued     atomic.Int32 // events posted and not yet taken
	polling                 // the shared-memory channels the rank's goroutine serves (progress.go)
	singleCopy              // large messages read straight from the sender's memory (singlecopy.go)
}

type eventKind uint8

const (
	evFrame eventKind = iota + 1 // a frame arrived
	evSent                       // a queued send has been written to its socket
	evError                      // a connection failed; err says how
	// evCompleted: while the rank polled, receives completed where their
	// elements landed (polling.completeLanded); there is nothing more to
	// handle, but more ops may be ready.
	evCompleted
)

type event struct {
	kind    eventKind
	from    int32
	h       header
	payload []uint64 // data frames with elements
	desc    getDesc  // get frames: where the elements are
	op      int32    // evSent: the send's program index; landed: the receive's
	epoch   uint32   // evSent: the epoch the send belongs to
	err     error
	// landed: a data frame whose elements were read straight into the
	// region of receive op, matched when its header came (Rank.landing).
	landed bool
}

// outItem is one queued frame.
type outItem struct {
	h       header
	payload []uint64 // nil: desc for a get frame, else h.payload filler bytes of zeros
	lent    bool     // payload is the rank's own buffer, not the pool's
	desc    getDesc
	op      int32 // -1: nobody waits for the write
}

// recycle returns a frame's payload to the pool once it is written, unless
// it is the rank's own buffer.
func (m *Mesh) recycle(it *outItem) {
	if it.payload != nil && !it.lent {
		m.pool.put(it.payload)
	}
}

// body is what follows the item's header, nil for filler.
func (it *outItem) body() []byte {
	switch {
	case it.payload != nil:
		return bytesOf(it.payload)
	case it.h.kind == kindGet:
		return bytesOf(it.desc[:])
	}
	return nil
}

// outQueue is the frames waiting for one peer's connection, and the
// connection's buffered writer: whoever holds mu and finds busy false may
// write (the writer goroutine, or send writing a small frame at once).
type outQueue struct {
	mu     sync.Mutex
	items  []outItem
	busy   bool // the writer goroutine is writing, without mu
	closed bool
	signal chan struct{}
	bw     *bufio.Writer
}

func (q *outQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// maxServedTCP is the most TCP peers a polling rank serves from its own
// goroutine (see progress.go): each look at one is a system call, and with
// more of them a round of looks would outlast a message's latency; beyond
// it, each keeps its reader and writer goroutines.
const maxServedTCP = 8

// inlineBytes is the largest frame send writes itself rather than handing
// to the writer goroutine: the socket buffer takes it at once, and the
// hand-over between goroutines costs more than the write.
const inlineBytes = 64 << 10

// Connect builds rank's connections to every other rank: it dials the
// lower ranks at addrs and accepts the higher ones on ln, which must be
// the listener whose address addrs[rank] is. Every connection proves both
// ends know secret (see auth.go); one that does not is dropped without
// disturbing the others, and Connect stops accepting on ln when it
// returns. Both ends check that they run the same job (a hash of the
// program's version and the run's parameters) with the same size, and
// name the rank at fault when they do not. With SharedMemory, a peer on the
// same host is then reached through shared memory (see shm.go).
func Connect(ctx context.Context, rank, size int, job uint64, secret Secret, ln net.Listener, addrs []string, transport Transport) (*Mesh, error) {
	if !littleEndian() {
		return nil, errors.New("real runs need a little-endian host: the wire carries elements in memory order")
	}
	if rank < 0 || rank >= size || len(addrs) != size {
		return nil, fmt.Errorf("rank %d of %d with %d addresses", rank, size, len(addrs))
	}
	if len(secret) == 0 {
		return nil, fmt.Errorf("rank %d: %w", rank, errNoSecret)
	}
	if err := listenerError(ln); err != nil {
		return nil, fmt.Errorf("rank %d: %w", rank, err)
	}
	m := &Mesh{rank: rank, size: size, job: job, secret: secret, transport: transport, conns: make([]net.Conn, size), out: make([]*outQueue, size), sameMachine: make([]bool, size), peerCPUs: make([]cpuSet, size),
		singleCopy: singleCopy{readsMe: make([]bool, size), readable: make([]int, size)},
		signal:     make(chan struct{}, 1), bye: make([]bool, size), causes: make([]error, size)}
	want := size - 1 - rank
	acc := make(chan accepted)
	connecting, endConnect := context.WithCancel(ctx)
	stopped := m.acceptPeers(connecting, ln, acc)
	defer func() {
		endConnect()
		stopAccepting(ln)
		<-stopped
	}()
	var errs []error
	for peer := range rank {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addrs[peer])
		if err != nil {
			if ctx.Err() == nil { // else the cause is said below
				errs = append(errs, fmt.Errorf("rank %d: cannot reach rank %d at %s: %w", rank, peer, addrs[peer], err))
			}
			continue
		}
		ch, err := m.dial(ctx, c, peer)
		if err != nil {
			c.Close()
			errs = append(errs, err)
			continue
		}
		m.conns[peer] = ch
	}
	var refused refusals
waiting:
	for got := 0; got < want; {
		select {
		case a := <-acc:
			switch {
			case a.refused != "":
				refused.add(a.refused)
				continue
			case a.err != nil:
				errs = append(errs, a.err)
				if a.conn != nil {
					a.conn.Close()
				}
			case m.conns[a.peer] != nil:
				errs = append(errs, fmt.Errorf("rank %d: rank %d connected twice", rank, a.peer))
				a.conn.Close()
			default:
				m.conns[a.peer] = a.conn
			}
			got++
			if a.conn == nil { // the listener failed
				got = want
			}
		case <-ctx.Done():
			var missing []string
			for peer := rank + 1; peer < size; peer++ {
				if m.conns[peer] == nil {
					missing = append(missing, fmt.Sprint(peer))
				}
			}
			errs = append(errs, fmt.Errorf("rank %d: waiting for ranks %s to connect: %w%s", rank, strings.Join(missing, ","), context.Cause(ctx), refused.String()))
			break waiting
		}
	}
	if ctx.Err() != nil && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("rank %d: connecting to its peers: %w", rank, context.Cause(ctx)))
	}
	if len(errs) > 0 {
		for _, c := range m.conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, errors.Join(errs...)
	}
	m.inPlaceAbove = inlineBytes // smaller ones are copied into the writer's buffer anyway
	poll := m.serveChannels()
	m.SetSingleCopyAbove(0) // after serveChannels: it depends on m.yield
	tcpPeers := size - 1 - m.SharedPeers()
	m.quit = make(chan struct{})
	for peer, c := range m.conns {
		if c == nil {
			continue
		}
		m.out[peer] = &outQueue{signal: make(chan struct{}, 1), bw: bufio.NewWriterSize(c, 64<<10)}
		if poll {
			if sc, ok := c.(*sharedConn); ok {
				m.pollPeer(peer, sc)
				continue
			}
			if tc, ok := serveTCP(c); ok && tcpPeers <= maxServedTCP {
				m.pollPeer(peer, tc)
				continue
			}
		}
		go m.read(peer, c)
		m.writers.Add(1)
		go func() {
			defer m.writers.Done()
			m.write(peer, m.out[peer])
		}()
	}
	return m, nil
}

// accepted is the outcome of one accepted connection's handshake: a peer
// that proved itself (with err set if it is not one this rank expects),
// the address of a connection that did not, or the listener's failure
// (err without conn).
type accepted struct {
	peer    int
	conn    net.Conn
	refused string
	err     error
}

// acceptPeers accepts connections on ln until it fails (Connect ends it by
// setting a deadline), handshakes each on its own, so that a connection
// that says nothing holds up no other, and hands the outcomes to acc until
// ctx ends; then it cuts off the handshakes under way. The returned channel
// is closed when it has stopped accepting.
func (m *Mesh) acceptPeers(ctx context.Context, ln net.Listener, acc chan<- accepted) <-chan struct{} {
	stopped := make(chan struct{})
	deliver := func(a accepted) {
		select {
		case acc <- a:
		case <-ctx.Done():
			if a.conn != nil {
				a.conn.Close()
			}
		}
	}
	go func() {
		defer close(stopped)
		for {
			c, err := acceptRetry(ln, func() bool { return ctx.Err() != nil })
			if err != nil {
				go deliver(accepted{err: fmt.Errorf("rank %d: accepting peers on %v: %w", m.rank, ln.Addr(), err)})
				return
			}
			go func() {
				cutOff := context.AfterFunc(ctx, func() { c.Close() })
				peer, ch, ok, err := m.answer(ctx, c)
				if !cutOff() {
					if ch != nil {
						ch.Close()
					}
					return // Connect is over
				}
				if !ok {
					c.Close()
					deliver(accepted{refused: c.RemoteAddr().String()})
					return
				}
				if ch == nil {
					ch = c
				}
				deliver(accepted{peer: peer, conn: ch, err: err})
			}()
		}
	}()
	return stopped
}

// handshakeDeadline bounds one connection's handshake.
func handshakeDeadline(ctx context.Context) time.Time {
	dl := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		return d
	}
	return dl
}

// myHello is this rank's hello, with a fresh nonce.
func (m *Mesh) myHello() ([]byte, error) {
	h := hello{job: m.job, rank: uint32(m.rank), size: uint32(m.size)}
	n, err := newNonce()
	if err != nil {
		return nil, err
	}
	copy(h.nonce[:], n)
	return h.encode(), nil
}

const (
	acceptorLabel = "collsim mesh: accepting rank"
	dialerLabel   = "collsim mesh: dialing rank"
)

// dial runs the dialing side of the handshake on c with rank want, the
// rank whose address this side dialed, and returns the channel to use.
func (m *Mesh) dial(ctx context.Context, c net.Conn, want int) (net.Conn, error) {
	c.SetDeadline(handshakeDeadline(ctx))
	defer c.SetDeadline(time.Time{})
	mine, err := m.myHello()
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", m.rank, err)
	}
	if _, err := c.Write(mine); err != nil {
		return nil, fmt.Errorf("rank %d: greeting rank %d: %w", m.rank, want, err)
	}
	var reply [helloBytes + proofBytes]byte
	if _, err := io.ReadFull(c, reply[:]); err != nil {
		return nil, fmt.Errorf("rank %d: waiting for rank %d's answer at %v: %w", m.rank, want, c.RemoteAddr(), err)
	}
	theirs := reply[:helloBytes]
	h, err := parseHello(theirs)
	if err != nil {
		return nil, fmt.Errorf("rank %d: rank %d's address %v: %w", m.rank, want, c.RemoteAddr(), err)
	}
	if !sameProof(reply[helloBytes:], m.secret.proof(acceptorLabel, mine, theirs)) {
		return nil, fmt.Errorf("rank %d: the process at %v, rank %d's address, did not prove it knows the job's secret: the rendezvous addresses are stale, or another program took the port", m.rank, c.RemoteAddr(), want)
	}
	if _, err := c.Write(m.secret.proof(dialerLabel, mine, theirs)); err != nil {
		return nil, fmt.Errorf("rank %d: greeting rank %d: %w", m.rank, want, err)
	}
	if int(h.rank) != want {
		return nil, fmt.Errorf("rank %d: dialed rank %d but rank %d answered: the rendezvous addresses are stale", m.rank, want, h.rank)
	}
	if err := m.agree(h); err != nil {
		return nil, err
	}
	return m.offerShared(c, want)
}

// answer runs the accepting side of the handshake on c and returns the
// channel to use (nil when there is none). ok is false when the other side
// did not prove it knows the secret: whatever it is, it is not a rank of
// this job, and it is dropped without a word.
func (m *Mesh) answer(ctx context.Context, c net.Conn) (peer int, ch net.Conn, ok bool, err error) {
	c.SetDeadline(handshakeDeadline(ctx))
	defer c.SetDeadline(time.Time{})
	theirs := make([]byte, helloBytes)
	if _, err := io.ReadFull(c, theirs); err != nil {
		return -1, nil, false, nil
	}
	h, err := parseHello(theirs)
	if err != nil {
		return -1, nil, false, nil
	}
	mine, err := m.myHello()
	if err != nil {
		return -1, nil, false, nil
	}
	if _, err := c.Write(append(mine, m.secret.proof(acceptorLabel, theirs, mine)...)); err != nil {
		return -1, nil, false, nil
	}
	proof := make([]byte, proofBytes)
	if _, err := io.ReadFull(c, proof); err != nil || !sameProof(proof, m.secret.proof(dialerLabel, theirs, mine)) {
		return -1, nil, false, nil
	}
	if peer := int(h.rank); peer <= m.rank || peer >= m.size {
		return -1, nil, true, fmt.Errorf("rank %d: connection claiming to be rank %d; only ranks %d..%d connect here", m.rank, peer, m.rank+1, m.size-1)
	}
	if err := m.agree(h); err != nil {
		return int(h.rank), nil, true, err
	}
	ch, err = m.answerShared(c, int(h.rank))
	return int(h.rank), ch, true, err
}

// agree checks that an authenticated peer runs this rank's job.
func (m *Mesh) agree(h hello) error {
	switch {
	case int(h.size) != m.size:
		return fmt.Errorf("rank %d: rank %d believes there are %d ranks, this rank %d: the launcher gave them different sizes", m.rank, h.rank, h.size, m.size)
	case h.job != m.job:
		return fmt.Errorf("rank %d: rank %d runs a different job (another collsim build, algorithm, size or option): start every rank with the same command", m.rank, h.rank)
	}
	return nil
}

func (m *Mesh) post(e event) {
	m.mu.Lock()
	m.events = append(m.events, e)
	m.mu.Unlock()
	m.queued.Add(1)
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// next returns the oldest event, waiting for one until the deadline. A
// rank that polls its shared-memory channels reads them itself while it
// waits (see progress.go).
func (m *Mesh) next(deadline time.Time) (event, bool) {
	return m.nextBy(waitLimit{at: deadline})
}

// nextWithin is next with a deadline within of now, read from the clock
// only if the event is not there at once: a clock read costs 54 ns here
// (kvm-clock), a tenth of a small message's way through the rank.
func (m *Mesh) nextWithin(within time.Duration) (event, bool) {
	return m.nextBy(waitLimit{within: within})
}

// waitLimit is a wait's deadline: at, or else within of the first time
// the wait reads the clock.
type waitLimit struct {
	at     time.Time
	within time.Duration
}

// deadline is the wait's deadline, now the first time the clock is read.
func (w *waitLimit) deadline(now time.Time) time.Time {
	if w.at.IsZero() {
		w.at = now.Add(w.within)
	}
	return w.at
}

func (m *Mesh) nextBy(limit waitLimit) (event, bool) {
	for {
		if m.completed {
			m.completed = false
			return event{kind: evCompleted}, true
		}
		if e, ok := m.popOwn(); ok {
			return e, true
		}
		if e, ok := m.pop(); ok {
			return e, true
		}
		if len(m.polled) > 0 {
			switch m.pollShared(&limit) {
			case pollFound:
				continue
			case pollTimedOut:
				return event{}, false
			}
			m.sleepShared()
		}
		wait := time.Until(limit.deadline(time.Now()))
		if wait <= 0 {
			m.asleep.Store(false)
			return event{}, false
		}
		if m.wait == nil {
			m.wait = time.NewTimer(wait)
		} else {
			m.wait.Reset(wait) // since Go 1.23, no stale tick survives a Stop or Reset
		}
		select {
		case <-m.signal:
			m.wait.Stop()
		case <-m.wait.C:
		}
		m.asleep.Store(false)
	}
}

// pop takes the oldest event, if there is one.
func (m *Mesh) pop() (event, bool) {
	if m.queued.Load() == 0 {
		return event{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ehead == len(m.events) {
		return event{}, false
	}
	e := m.events[m.ehead]
	m.events[m.ehead] = event{}
	m.ehead++
	if m.ehead == len(m.events) {
		m.events, m.ehead = m.events[:0], 0
	}
	m.queued.Add(-1)
	return e, true
}

// read turns the frames from peer into events until the peer says bye or
// the connection fails.
func (m *Mesh) read(peer int, c net.Conn) {
	var r io.Reader = c
	var br *bufio.Reader
	if _, ok := c.(*sharedConn); !ok { // over shared memory a buffer is one more copy
		br = bufio.NewReaderSize(c, 64<<10)
		r = br
	}
	var hb [headerBytes]byte
	for {
		if _, err := io.ReadFull(r, hb[:]); err != nil {
			m.readFailed(peer, &PeerLostError{Rank: m.rank, Peer: peer, Cause: err})
			return
		}
		h, err := m.parseHeader(hb[:], peer)
		if err != nil {
			return
		}
		if h.kind == kindAbort {
			reason := make([]byte, h.payload)
			if _, err := io.ReadFull(r, reason); err != nil {
				m.readFailed(peer, &PeerLostError{Rank: m.rank, Peer: peer, Cause: err, MidMessage: true})
			} else {
				m.readFailed(peer, &PeerLostError{Rank: m.rank, Peer: peer, GaveUp: string(reason)})
			}
			return
		}
		e := event{kind: evFrame, from: int32(peer), h: h}
		if h.kind&flagElements != 0 {
			e.payload = m.pool.get(int(h.payload / 8))
			_, err = io.ReadFull(r, bytesOf(e.payload))
		} else if h.kind == kindGet {
			_, err = io.ReadFull(r, bytesOf(e.desc[:]))
		} else if br != nil {
			_, err = br.Discard(int(h.payload))
		} else {
			_, err = io.CopyN(io.Discard, r, h.payload)
		}
		if err != nil {
			m.readFailed(peer, &PeerLostError{Rank: m.rank, Peer: peer, Cause: err, MidMessage: true})
			return
		}
		if m.arrived(peer, e, false) {
			return
		}
	}
}

// parseHeader decodes a frame header from peer; one that is not a frame's
// fails the connection, since nothing more can be read from it.
func (m *Mesh) parseHeader(b []byte, peer int) (header, error) {
	h, err := parseHeader(b, peer)
	if err != nil {
		err = fmt.Errorf("rank %d: %w", m.rank, err)
		m.readFailed(peer, err)
		m.giveUp(peer, err)
	}
	return h, err
}

// arrived posts a whole frame from peer and reports whether it was the
// peer's last (its bye); own: the rank's goroutine read it (Mesh.postOwn).
func (m *Mesh) arrived(peer int, e event, own bool) bool {
	post := m.post
	if own {
		post = m.postOwn
	}
	if e.h.kind == kindGot {
		if err := m.gotten(peer, uint64(e.h.bytes)); err != nil {
			err = fmt.Errorf("rank %d: %w", m.rank, err)
			m.readFailed(peer, err)
			m.giveUp(peer, err)
			return true
		}
		return false
	}
	if e.h.kind == kindBye {
		m.mu.Lock()
		m.bye[peer] = true
		m.mu.Unlock()
		post(e)
		return true
	}
	post(e)
	return false
}

// readFailed reports a stream from peer that failed, unless the rank is
// closing or the peer said bye.
func (m *Mesh) readFailed(peer int, err error) {
	m.mu.Lock()
	quiet := m.closing || m.bye[peer]
	if m.causes[peer] == nil {
		m.causes[peer] = err
	}
	m.mu.Unlock()
	if !quiet {
		m.post(event{kind: evError, from: int32(peer), err: err})
	}
}

var zeros = make([]byte, 256<<10)

// writeFrame writes one frame and flushes it. A payload the buffer cannot
// hold goes to the channel straight from its slice, after the header, rather
// than through the buffer in pieces (a copy more).
func writeFrame(bw *bufio.Writer, it *outItem) error {
	var hb [headerBytes]byte
	it.h.put(hb[:])
	_, err := bw.Write(hb[:])
	p := it.body()
	if err == nil && p != nil {
		if len(p) > bw.Available() {
			err = bw.Flush() // then bw.Write passes p through
		}
		if err == nil {
			_, err = bw.Write(p)
		}
	}
	for left := it.h.payload; err == nil && p == nil && left > 0; {
		n := min(left, int64(len(zeros)))
		_, err = bw.Write(zeros[:n])
		left -= n
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// write sends peer's queued frames in order.
func (m *Mesh) write(peer int, q *outQueue) {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		closed := q.closed
		q.busy = len(items) > 0
		q.mu.Unlock()
		if len(items) == 0 {
			if closed {
				return
			}
			<-q.signal
			continue
		}
		for i := range items {
			if err := writeFrame(q.bw, &items[i]); err != nil {
				m.writeFailed(peer, err)
				return
			}
			m.written(peer, &items[i])
		}
		q.mu.Lock()
		q.busy = false
		q.mu.Unlock()
	}
}

func (m *Mesh) writeFailed(peer int, err error) {
	m.mu.Lock()
	quiet := m.closing
	m.mu.Unlock()
	if !quiet {
		m.post(event{kind: evError, from: int32(peer), err: m.sendFailed(peer, err)})
	}
}

// sendFailed explains a failed write to peer: by what the connection's
// reader found first (garbage, a lost connection), if it found anything.
func (m *Mesh) sendFailed(peer int, err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.causes[peer] != nil {
		return m.causes[peer]
	}
	return &PeerLostError{Rank: m.rank, Peer: peer, Cause: err, Sending: true}
}

// written recycles a written frame's payload and tells whoever waits.
func (m *Mesh) written(peer int, it *outItem) {
	m.recycle(it)
	if it.op >= 0 {
		m.post(event{kind: evSent, from: int32(peer), op: it.op, epoch: it.h.epoch})
	}
}

// send queues a frame to peer, or writes it at once if it is small and
// nothing is queued before it; it reports whether the frame is written.
// payload, if not nil, is handed over: the mesh recycles it once written.
// A frame written at once posts no evSent: the caller completes its op.
func (m *Mesh) send(peer int, h header, payload []uint64, op int32) (bool, error) {
	it := outItem{h: h, payload: payload, op: op}
	get := payload != nil && m.sendsAsGet(peer, int64(len(payload)))
	if get {
		it = m.asGet(peer, it, false)
	}
	return m.queue(peer, it, get)
}

// sendInPlace sends elems, a run of the rank's own buffer, to peer
// straight from that buffer, as send does; until it is written (the
// evSent, or true returned), the rank must not write there (Rank.lent).
func (m *Mesh) sendInPlace(peer int, h header, elems []uint64, op int32) (bool, error) {
	return m.queue(peer, outItem{h: h, payload: elems, lent: true, op: op}, false)
}

// queue writes or queues frame it to peer, as send does; a get frame is
// never reported written: its got frame completes the send.
func (m *Mesh) queue(peer int, it outItem, get bool) (bool, error) {
	if p := m.served(peer); p != nil {
		written, err := m.sendPolled(p, it)
		return written && !get, err
	}
	return m.queueTCP(peer, it, get)
}

// queueTCP is queue for a peer whose connection has its own writer. It is
// apart from queue because writeFrame makes its item escape to the heap: an
// allocation that a frame to a polled peer need not pay.
func (m *Mesh) queueTCP(peer int, it outItem, get bool) (bool, error) {
	q := m.out[peer]
	q.mu.Lock()
	if it.h.payload <= inlineBytes && !q.busy && len(q.items) == 0 && !q.closed {
		err := writeFrame(q.bw, &it)
		q.mu.Unlock()
		if err != nil {
			return false, m.sendFailed(peer, err)
		}
		m.recycle(&it)
		return !get, nil
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.wake()
	return false, nil
}

// Close tells every peer this rank is done, waits (until the deadline) for
// every peer to say the same, so that no rank mistakes a finished peer for a
// crashed one, and closes the connections.
func (m *Mesh) Close(deadline time.Time) error {
	for peer, q := range m.out {
		if q != nil {
			m.send(peer, header{kind: kindBye}, nil, -1) // a failure shows in the wait below
		}
	}
	var err error
	for !m.allBye() {
		e, ok := m.next(deadline)
		if !ok {
			err = fmt.Errorf("rank %d: peers did not finish in time", m.rank)
			break
		}
		if e.kind == evError {
			err = e.err
			break
		}
		if e.payload != nil {
			m.pool.put(e.payload)
		}
	}
	if err == nil {
		m.flushPolled(deadline)
	}
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	for _, q := range m.out {
		if q != nil {
			q.mu.Lock()
			q.closed = true
			q.mu.Unlock()
			q.wake()
		}
	}
	// Let the writers flush (their byes above all) before closing.
	flushed := make(chan struct{})
	go func() {
		m.writers.Wait()
		close(flushed)
	}()
	select {
	case <-flushed:
	case <-time.After(max(time.Until(deadline), time.Second)):
	}
	m.endWatches()
	for _, c := range m.conns {
		if c != nil {
			c.Close()
		}
	}
	return err
}

// Abort ends every connection at once, so that peers notice quickly. With
// a cause, each peer is first told that this rank gives up and why (see
// giveUp).
func (m *Mesh) Abort(cause error) {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	m.endWatches()
	for peer, c := range m.conns {
		if c != nil {
			m.giveUp(peer, cause)
		}
	}
}

// giveUp closes the connection to peer. With a cause, it first tells the
// peer that this rank gives up and why, so that the peer does not take the
// closed connection for this rank's crash; a connection in the middle of a
// frame is closed without a word (the frame cannot be cut).
func (m *Mesh) giveUp(peer int, cause error) {
	c := m.conns[peer]
	if q := m.out[peer]; q != nil && cause != nil {
		reason := []byte(cause.Error())
		if len(reason) > maxAbortReason {
			reason = append(reason[:maxAbortReason-3], "..."...)
		}
		if p := m.served(peer); p != nil {
			m.abortPolled(p, reason)
			c.Close()
			return
		}
		q.mu.Lock()
		if !q.busy {
			c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			var hb [headerBytes]byte
			(&header{kind: kindAbort, bytes: int64(len(reason)), payload: int64(len(reason))}).put(hb[:])
			if _, err := q.bw.Write(hb[:]); err == nil {
				q.bw.Write(reason)
				q.bw.Flush()
			}
		}
		q.mu.Unlock()
	}
	c.Close()
}

func (m *Mesh) allBye() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for peer, b := range m.bye {
		if peer != m.rank && !b {
			return false
		}
	}
	return true
}

// bufPool recycles element buffers by length: a run moves the same message
// sizes over and over. Small lengths, which small messages take one of
// per message, are kept in an array rather than the map: a map lookup on
// each get and put was a tenth of an 8-byte ping-pong's samples.
type bufPool struct {
	mu    sync.Mutex
	small [poolSmall + 1][][]uint64 // by length
	free  map[int][][]uint64        // longer ones
}

// poolSmall is the longest buffer, in elements, bufPool keeps by index.
const poolSmall = 64

// poolKeep is how many buffers of one length bufPool keeps.
const poolKeep = 8

func (p *bufPool) get(n int) []uint64 {
	p.mu.Lock()
	var l [][]uint64
	if n <= poolSmall {
		l = p.small[n]
	} else {
		l = p.free[n]
	}
	if k := len(l); k > 0 {
		b := l[k-1]
		if n <= poolSmall {
			p.small[n] = l[:k-1]
		} else {
			p.free[n] = l[:k-1]
		}
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]uint64, n)
}

func (p *bufPool) put(b []uint64) {
	n := len(b)
	p.mu.Lock()
	switch {
	case n <= poolSmall:
		if len(p.small[n]) < poolKeep {
			p.small[n] = append(p.small[n], b)
		}
	case len(p.free[n]) < poolKeep:
		if p.free == nil {
			p.free = map[int][][]uint64{}
		}
		p.free[n] = append(p.free[n], b)
	}
	p.mu.Unlock()
}

// ConnectLocal builds the meshes of size ranks in this process, over
// loopback TCP or shared memory: one goroutine per rank, for tests and for
// runs that do not need separate processes.
func ConnectLocal(ctx context.Context, size int, job uint64, transport Transport) ([]*Mesh, error) {
	via := make([]Transport, size)
	for r := range via {
		via[r] = transport
	}
	return connectLocal(ctx, job, via)
}

// connectLocal is ConnectLocal with each rank's own transport: rank r
// shares memory only with ranks whose transport and its own both share.
func connectLocal(ctx context.Context, job uint64, via []Transport) ([]*Mesh, error) {
	size := len(via)
	lns := make([]net.Listener, size)
	addrs := make([]string, size)
	defer func() {
		for _, ln := range lns {
			if ln != nil {
				ln.Close()
			}
		}
	}()
	for r := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		lns[r], addrs[r] = ln, ln.Addr().String()
	}
	secret, err := NewSecret()
	if err != nil {
		return nil, err
	}
	meshes := make([]*Mesh, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() { meshes[r], errs[r] = Connect(ctx, r, size, job, secret, lns[r], addrs, via[r]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, m := range meshes {
			if m != nil {
				m.Abort(nil)
			}
		}
		return nil, err
	}
	return meshes, nil
}

// Corrupt writes bytes that are not a frame to every peer, for tests of
// how ranks take a peer that sends garbage.
func (m *Mesh) Corrupt() {
	for _, c := range m.conns {
		if c != nil {
			c.Write([]byte("this is not a collsim frame, but 32 bytes of garbage"))
		}
	}
}

// PeerLostError is a connection to a peer that closed or failed: the peer
// exited or crashed, or gave up because of another failure. It is usually a
// consequence, not the cause, so the rendezvous prefers other reports.
type PeerLostError struct {
	Rank, Peer          int
	Cause               error
	MidMessage, Sending bool
	// GaveUp is the reason the peer gave, when it closed the connection
	// because of another failure: it is well, and not to blame.
	GaveUp string
}

// Error says which connection was lost and how.
func (e *PeerLostError) Error() string {
	switch {
	case e.GaveUp != "":
		return fmt.Sprintf("rank %d: rank %d gave up because of another failure: %s", e.Rank, e.Peer, e.GaveUp)
	case e.Sending:
		return fmt.Sprintf("rank %d: sending to rank %d: %v: rank %d exited or crashed", e.Rank, e.Peer, e.Cause, e.Peer)
	case e.MidMessage:
		return fmt.Sprintf("rank %d: connection to rank %d lost mid-message (%v): rank %d exited or crashed", e.Rank, e.Peer, e.Cause, e.Peer)
	}
	return fmt.Sprintf("rank %d: connection to rank %d lost (%v): rank %d exited or crashed", e.Rank, e.Peer, e.Cause, e.Peer)
}

// Unwrap returns the socket's error.
func (e *PeerLostError) Unwrap() error { return e.Cause }
