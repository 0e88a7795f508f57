package sim

import (
	"errors"
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

// A bucket is a list of blocks of events, taken from and returned to the
// engine's pool: memory follows the events pending, not the most each of
// the 64 buckets ever held, and nothing is copied as a bucket grows.
const blockLen = 128

type eventBlock struct {
	ev   [blockLen]event
	next *eventBlock
}

// bucket holds events in insertion order: head.ev[first:] up to
// tail.ev[:last]; minAt and maxAt are the earliest and latest of their
// times.
type bucket struct {
	head, tail   *eventBlock
	first, last  int
	minAt, maxAt Time
}

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
// from its front gives (time, insertion) order. A bucket whose events all
// have one time becomes bucket 0 whole, without a copy: in a simulation
// whose hosts advance in step (a collective's ranks), that is most of them.
type Engine struct {
	now      Time
	buckets  [radixBuckets]bucket // bucket 0 holds the events at now, run from its head
	full     uint64               // bit i set: bucket i is not empty
	free     *eventBlock          // the pool of unused blocks
	pending  int
	handlers []Handler
	seed     uint64
	events   uint64
	stopped  bool
	err      error // the first failure a handler reported (Fail)
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

// At schedules h to receive arg at time t. A negative t is a sum of
// times that went past MaxTime and wrapped, and MaxTime one that
// saturated (Time.Plus): either fails the run with ErrClockLimit (see
// Fail). Scheduling in the past otherwise is a broken
// invariant and panics. At allocates nothing once the queue has grown to
// its working size.
func (e *Engine) At(t Time, h HandlerID, arg uint64) {
	if e.pastLimit(t) {
		return
	}
	if t < e.now {
		e.past(t)
	}
	b := bits.Len64(uint64(t ^ e.now))
	e.add(b, event{at: t, handler: h, arg: arg})
	e.pending++
}

func (e *Engine) past(t Time) {
	panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, e.now))
}

// After schedules h to receive arg after duration d. A d that would take
// the clock past MaxTime fails the run (see Fail) instead of wrapping.
func (e *Engine) After(d Time, h HandlerID, arg uint64) { e.At(e.now.Plus(d), h, arg) }

// pastLimit fails the run with ErrClockLimit and reports true if t is past
// the clock's limit: negative (a sum that wrapped) or MaxTime (one that
// Time.Plus saturated). The executors call it too for the completions
// they know ahead of time, which never pass At.
func (e *Engine) pastLimit(t Time) bool {
	if t < 0 || t == MaxTime {
		e.Fail(ErrClockLimit)
		return true
	}
	return false
}

// ErrClockLimit is the failure of a run whose events would go past MaxTime.
var ErrClockLimit = errors.New("simulated time would pass its limit, 2^63 ps (about 106 days)")

// Fail stops the run, as Stop does, and records err as its failure if it
// is the first: what a model reports when it cannot go on (a message that
// would never finish, a time beyond the clock's limit). Err returns it.
func (e *Engine) Fail(err error) {
	if e.err == nil {
		e.err = err
	}
	e.stopped = true
}

// Err returns the failure Fail recorded, or nil.
func (e *Engine) Err() error { return e.err }

// Step runs the earliest event and reports whether there was one.
func (e *Engine) Step() bool {
	ev, ok := e.next()
	if ok {
		e.handlers[ev.handler].Handle(ev.arg)
	}
	return ok
}

// next takes the earliest event off the queue and advances the clock to
// it. A component that owns the engine alone may run its events itself
// with it (no handler lookup, no interface call per event).
func (e *Engine) next() (event, bool) {
	if e.pending == 0 {
		return event{}, false
	}
	if e.full&1 == 0 {
		e.spread()
	}
	b := &e.buckets[0]
	blk := b.head
	ev := blk.ev[b.first]
	b.first++
	switch {
	case blk == b.tail && b.first == b.last:
		// Empty now; it keeps its block for the events to come.
		b.first, b.last = 0, 0
		e.full &^= 1
	case b.first == blockLen:
		b.head, b.first = blk.next, 0
		e.release(blk)
	}
	e.pending--
	e.now = ev.at
	e.events++
	return ev, true
}

// peek returns the time of the earliest event, without taking it or
// moving the clock: a parallel run asks it how far a partition may go
// before events from the others can reach it.
func (e *Engine) peek() (Time, bool) {
	switch {
	case e.pending == 0:
		return 0, false
	case e.full&1 != 0:
		return e.now, true
	}
	return e.buckets[bits.TrailingZeros64(e.full)].minAt, true
}

// add appends ev to bucket i (below 64).
func (e *Engine) add(i int, ev event) {
	e.full |= 1 << (uint(i) & (radixBuckets - 1))
	b := &e.buckets[i]
	if b.tail == nil || b.last == blockLen {
		e.addBlock(b, ev.at)
	}
	b.tail.ev[b.last] = ev
	b.last++
	b.minAt = min(b.minAt, ev.at)
	b.maxAt = max(b.maxAt, ev.at)
}

// addBlock appends an empty block to b, whose last block is full or which
// has none; at is the time of the event about to go in it.
func (e *Engine) addBlock(b *bucket, at Time) {
	blk := e.free
	if blk != nil {
		e.free = blk.next
		blk.next = nil
	} else {
		blk = new(eventBlock)
	}
	if b.tail == nil {
		b.head = blk
		b.minAt, b.maxAt = at, at
	} else {
		b.tail.next = blk
	}
	b.tail, b.last = blk, 0
}

func (e *Engine) release(blk *eventBlock) {
	blk.next = e.free
	e.free = blk
}

// spread refills the empty bucket 0: the lowest non-empty bucket's
// earliest time becomes now, and its events move, in order, to the
// buckets below; when they all have that time, its blocks become bucket 0
// as they are.
func (e *Engine) spread() {
	i := bits.TrailingZeros64(e.full)
	from := e.buckets[i]
	e.buckets[i] = bucket{}
	e.full &^= 1 << i
	earliest := from.minAt
	e.now = earliest
	if from.maxAt == earliest {
		if kept := e.buckets[0].head; kept != nil {
			e.release(kept)
		}
		e.buckets[0] = from
		e.full |= 1
		return
	}
	for blk, first := from.head, from.first; blk != nil; first = 0 {
		for k := first; k < from.end(blk); k++ {
			e.add(bits.Len64(uint64(blk.ev[k].at^earliest)), blk.ev[k])
		}
		next := blk.next
		e.release(blk)
		blk = next
	}
}

// end is where blk's events end in b.
func (b *bucket) end(blk *eventBlock) int {
	if blk == b.tail {
		return b.last
	}
	return blockLen
}

// Run runs events until none are left or Stop is called.
func (e *Engine) Run() {
	for !e.stopped && e.Step() {
	}
}

// RunFor runs up to n events and reports whether more may follow: events
// are left and Stop was not called. Calling it until it returns false runs
// exactly the events Run would, in the same order.
func (e *Engine) RunFor(n uint64) bool {
	for ; n > 0; n-- {
		if e.stopped || !e.Step() {
			return false
		}
	}
	return !e.stopped && e.pending > 0
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }
