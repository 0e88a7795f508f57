package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// Handler is a long-lived simulation component that receives its events.
// arg is whatever the component passed to At; it lets one component keep
// many pending events (an index into its own tables) without allocating.
type Handler interface {
	Handle(arg uint64)
}

// HandlerID names a Handler registered with an Engine.
type HandlerID uint16

// event is one pending event.
type event struct {
	at      Time
	handler HandlerID
	arg     uint64
}

// The event must stay small: it is copied every time it changes bucket.
const _ = 24 - unsafe.Sizeof(event{})

// radixBuckets: an event's bucket is the bit length of its time XOR the
// time of the last event run, at most 63 for a time below 2^63.
const radixBuckets = 64

// Engine is a deterministic discrete-event engine. Events run in order of
// (time, insertion sequence); an engine never starts goroutines, and separate
// engines share nothing, so many can run in parallel.
//
// The queue is a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990), which
// works because no event is scheduled before the last one run: bucket i
// holds the events whose time first differs from now at bit i-1 (bucket 0:
// at now). Scheduling appends to a bucket; when bucket 0 runs dry, the
// lowest non-empty bucket is spread over the buckets below it, with its
// earliest time as the new reference. Each event moves down a few buckets
// at most, and nothing is compared twice. Every bucket holds its events in
// insertion order (spreading keeps their order and only ever fills empty
// buckets), and events of one time always share a bucket, so bucket 0 run
// from its front gives (time, insertion) order.
type Engine struct {
	now      Time
	buckets  [radixBuckets][]event
	head0    int    // events of buckets[0] before head0 have run
	full     uint64 // bit i set: buckets[i] is not empty (i >= 1)
	pending  int
	handlers []Handler
	seed     uint64
	events   uint64
	stopped  bool
}

// New returns an engine whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{seed: seed}
}

// Register adds h and returns the ID to schedule its events with.
func (e *Engine) Register(h Handler) HandlerID {
	if len(e.handlers) > math.MaxUint16 {
		panic("sim: too many handlers")
	}
	e.handlers = append(e.handlers, h)
	return HandlerID(len(e.handlers) - 1)
}

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Seed returns the engine's seed.
func (e *Engine) Seed() uint64 { return e.seed }

// Events returns how many events have run so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending returns how many events are queued.
func (e *Engine) Pending() int { return e.pending }

// Stream returns a random source for the component with the given stable
// ID. Streams of different IDs are independent, so adding a noise source on
// one component does not change the draws of another.
func (e *Engine) Stream(id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(e.seed, id))
}

// NamedStream returns the random source for the component with the given
// stable name (hashed with FNV-1a to a stream ID), for components that are
// known by name rather than number: "placement", "noise/link/7".
func (e *Engine) NamedStream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return e.Stream(h.Sum64())
}

// At schedules h to receive arg at time t. Scheduling in the past is a
// broken invariant and panics. At allocates nothing once the queue has
// grown to its working size.
func (e *Engine) At(t Time, h HandlerID, arg uint64) {
	if t < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, e.now))
	}
	b := bits.Len64(uint64(t ^ e.now))
	e.buckets[b] = append(e.buckets[b], event{at: t, handler: h, arg: arg})
	e.full |= 1 << b
	e.pending++
}

// After schedules h to receive arg after duration d.
func (e *Engine) After(d Time, h HandlerID, arg uint64) { e.At(e.now+d, h, arg) }

// Step runs the earliest event and reports whether there was one.
func (e *Engine) Step() bool {
	if e.pending == 0 {
		return false
	}
	if e.head0 == len(e.buckets[0]) {
		e.spread()
	}
	ev := e.buckets[0][e.head0]
	e.head0++
	e.pending--
	e.now = ev.at
	e.events++
	e.handlers[ev.handler].Handle(ev.arg)
	return true
}

// spread refills the empty bucket 0: the lowest non-empty bucket's
// earliest time becomes now, and its events move to the buckets below.
func (e *Engine) spread() {
	e.buckets[0], e.head0 = e.buckets[0][:0], 0
	e.full &^= 1
	i := bits.TrailingZeros64(e.full)
	from := e.buckets[i]
	earliest := from[0].at
	for _, ev := range from[1:] {
		earliest = min(earliest, ev.at)
	}
	e.now = earliest
	for _, ev := range from {
		b := bits.Len64(uint64(ev.at ^ earliest))
		e.buckets[b] = append(e.buckets[b], ev)
		e.full |= 1 << b
	}
	e.buckets[i] = from[:0]
	e.full &^= 1 << i
}

// Run runs events until none are left or Stop is called.
func (e *Engine) Run() {
	for !e.stopped && e.Step() {
	}
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }
