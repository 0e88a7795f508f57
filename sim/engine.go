package sim

import (
	"fmt"
	"hash/fnv"
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

// event is one pending event. key packs the insertion sequence (high 48
// bits) with the handler ID (low 16 bits), so that ordering by (at, key)
// is ordering by (at, insertion sequence) and the event stays 24 bytes.
type event struct {
	at  Time
	key uint64
	arg uint64
}

// The event must stay small: it is copied on every heap move.
const _ = 24 - unsafe.Sizeof(event{})

const (
	handlerBits = 16
	maxSeq      = 1<<(64-handlerBits) - 1
)

// Engine is a deterministic discrete-event engine. Events run in order of
// (time, insertion sequence); an engine never starts goroutines, and separate
// engines share nothing, so many can run in parallel.
type Engine struct {
	now      Time
	seq      uint64
	heap     []event
	handlers []Handler
	seed     uint64
	events   uint64
	stopped  bool
}

// New returns an engine whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{seed: seed, heap: make([]event, 0, 1024)}
}

// Register adds h and returns the ID to schedule its events with.
func (e *Engine) Register(h Handler) HandlerID {
	if len(e.handlers) >= 1<<handlerBits {
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
func (e *Engine) Pending() int { return len(e.heap) }

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
	if e.seq == maxSeq {
		panic("sim: event sequence exhausted")
	}
	e.seq++
	e.push(event{at: t, key: e.seq<<handlerBits | uint64(h), arg: arg})
}

// After schedules h to receive arg after duration d.
func (e *Engine) After(d Time, h HandlerID, arg uint64) { e.At(e.now+d, h, arg) }

// Step runs the earliest event and reports whether there was one.
func (e *Engine) Step() bool {
	if len(e.heap) == 0 {
		return false
	}
	ev := e.pop()
	e.now = ev.at
	e.events++
	e.handlers[ev.key&(1<<handlerBits-1)].Handle(ev.arg)
	return true
}

// Run runs events until none are left or Stop is called.
func (e *Engine) Run() {
	for !e.stopped && e.Step() {
	}
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// less orders events by time, then insertion sequence.
func less(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

// The queue is a 4-ary min-heap: shallower than a binary heap, and its four
// children share a cache line or two.
const arity = 4

func (e *Engine) push(ev event) {
	h := append(e.heap, ev)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / arity
		if !less(&ev, &h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = ev
	e.heap = h
}

// pop removes the earliest event. It sinks the hole at the root to a leaf
// along the smaller children, then lifts the last element from there: the
// last element nearly always belongs near the bottom, so this saves about
// half the comparisons of the textbook sift-down (Floyd's trick).
func (e *Engine) pop() event {
	h := e.heap
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			first := i*arity + 1
			if first >= n {
				break
			}
			best := first
			end := min(first+arity, n)
			for c := first + 1; c < end; c++ {
				if less(&h[c], &h[best]) {
					best = c
				}
			}
			h[i] = h[best]
			i = best
		}
		for i > 0 {
			parent := (i - 1) / arity
			if !less(&last, &h[parent]) {
				break
			}
			h[i] = h[parent]
			i = parent
		}
		h[i] = last
	}
	e.heap = h
	return top
}
