package sim

// Transfer is one message handed to a Network.
type Transfer struct {
	ID       uint32 // the executor's message ID, passed back to the Sink
	Src, Dst int32  // ranks
	Tag      int32  // the message's tag (a control message: its data's)
	Bytes    int64
	// Control marks a rendezvous control message, which carries no data:
	// it takes its route's latency and no bandwidth, and no NIC's time.
	Control Control
}

// Control says what kind of rendezvous control message a Transfer is.
type Control uint8

// The kinds of transfer.
const (
	ControlNone Control = iota // data
	// ControlRequest is a rendezvous send's request, which the receiver
	// matches as it would the message: it is delivered in order with the
	// pair's other transfers (after the data sent before it).
	ControlRequest
	// ControlReply is the receiver's go-ahead back to the sender; it
	// need not keep any order.
	ControlReply
)

// Sink receives a Network's reports about the transfers injected into it.
type Sink interface {
	// Injected is called once per data transfer to say that the source
	// has pushed, or will have pushed by time at, its last byte out: the
	// send buffer and the NIC are free again at at. A model that knows
	// that time in advance may report it early (at > now), which saves an
	// event; otherwise it calls at that time with at equal to now. It may
	// be called from inside Inject. It is not called for control
	// transfers.
	Injected(id uint32, at Time)
	// Delivered is called once per transfer, when the last byte is at the
	// destination and the message can be matched. It never precedes
	// Injected for the same transfer, and is never called from inside
	// Inject.
	Delivered(id uint32)
}

// Network moves transfers between ranks. A Network owns its state, schedules
// its own events on the engine, and reports through the Sink it was built
// with. Data transfers and requests between one pair of ranks must be
// delivered in the order they were injected (MPI's non-overtaking rule).
type Network interface {
	// Inject starts tr at the engine's current time.
	Inject(tr Transfer)
}

// SinglePort is implemented by a Network whose NICs send one message at a
// time, each message whole (the analytic model): there a rank's data goes
// out in the order its port is handed it. OneAtATime reports whether that
// is so; the protocol then lets a rank's Concurrent data out in the order
// their sends were issued, as it does other data (see protocol.go).
type SinglePort interface {
	OneAtATime() bool
}

// NetworkFactory builds a Network for a run of the given number of ranks.
type NetworkFactory func(eng *Engine, sink Sink, ranks int) (Network, error)

// fixedLatency delivers every message after the same delay, with no
// serialization: the simplest network there is.
type fixedLatency struct {
	eng   *Engine
	sink  Sink
	id    HandlerID
	delay Time
}

// FixedLatency returns a factory for a network in which every message takes
// the same delay and nothing is shared. It is the reference network for
// checking programs, not a model of a machine.
func FixedLatency(delay Time) NetworkFactory {
	return func(eng *Engine, sink Sink, ranks int) (Network, error) {
		n := &fixedLatency{eng: eng, sink: sink, delay: delay}
		n.id = eng.Register(n)
		return n, nil
	}
}

func (n *fixedLatency) Inject(tr Transfer) {
	if tr.Control == ControlNone {
		n.sink.Injected(tr.ID, n.eng.Now())
	}
	n.eng.After(n.delay, n.id, uint64(tr.ID))
}

func (n *fixedLatency) Handle(arg uint64) { n.sink.Delivered(uint32(arg)) }

// randomLatency delivers each message after a random delay drawn from a
// seeded stream, keeping each pair's messages in order.
type randomLatency struct {
	eng  *Engine
	sink Sink
	id   HandlerID
	max  Time
	rng  interface{ Int64N(int64) int64 }
	last map[[2]int32]Time
}

// RandomLatency returns a factory for a network in which each message takes
// a random delay in [0, maxDelay], drawn from the engine's seeded streams,
// while messages between one pair of ranks stay in order. Running a program
// over it under many seeds shakes out programs whose results depend on
// timing (a missing dependency, a race on a buffer).
func RandomLatency(maxDelay Time) NetworkFactory {
	return func(eng *Engine, sink Sink, ranks int) (Network, error) {
		n := &randomLatency{eng: eng, sink: sink, max: maxDelay, rng: eng.Stream(0x7a11), last: map[[2]int32]Time{}}
		n.id = eng.Register(n)
		return n, nil
	}
}

func (n *randomLatency) Inject(tr Transfer) {
	if tr.Control == ControlNone {
		n.sink.Injected(tr.ID, n.eng.Now())
	}
	at := n.eng.Now() + Time(n.rng.Int64N(int64(n.max)+1))
	pair := [2]int32{tr.Src, tr.Dst}
	at = max(at, n.last[pair])
	n.last[pair] = at
	n.eng.At(at, n.id, uint64(tr.ID))
}

func (n *randomLatency) Handle(arg uint64) { n.sink.Delivered(uint32(arg)) }

// instant delivers the transfers its filter picks at once, and hands the
// others to an inner network.
type instant struct {
	eng   *Engine
	sink  Sink
	id    HandlerID
	inner Network
	free  func(tag int32) bool
}

// Instant returns a factory for inner in which the transfers whose tag
// free picks cost nothing: they are injected and delivered at the moment
// they are sent, in the order sent, without touching inner (so without
// sharing its links). Workloads' breakdowns use it to see what one kind
// of communication costs: the same program with that kind free. The
// hosts' costs of those messages (overhead, reductions) still apply.
func Instant(inner NetworkFactory, free func(tag int32) bool) NetworkFactory {
	return func(eng *Engine, sink Sink, ranks int) (Network, error) {
		n := &instant{eng: eng, sink: sink, free: free}
		in, err := inner(eng, sink, ranks)
		if err != nil {
			return nil, err
		}
		n.inner = in
		n.id = eng.Register(n)
		return n, nil
	}
}

func (n *instant) Inject(tr Transfer) {
	if !n.free(tr.Tag) {
		n.inner.Inject(tr)
		return
	}
	if tr.Control == ControlNone {
		n.sink.Injected(tr.ID, n.eng.Now())
	}
	n.eng.After(0, n.id, uint64(tr.ID))
}

func (n *instant) Handle(arg uint64) { n.sink.Delivered(uint32(arg)) }
