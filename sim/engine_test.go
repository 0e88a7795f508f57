package sim

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

type recorder struct {
	eng *Engine
	got []uint64
	at  []Time
}

func (r *recorder) Handle(arg uint64) {
	r.got = append(r.got, arg)
	r.at = append(r.at, r.eng.Now())
}

// Events run in (time, insertion) order, whatever order they were scheduled in.
func TestEngineOrdersByTimeThenInsertion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		eng := New(1)
		rec := &recorder{eng: eng}
		h := eng.Register(rec)
		times := rapid.SliceOfN(rapid.Int64Range(0, 20), 0, 200).Draw(t, "times")
		type want struct {
			at  Time
			arg uint64
		}
		var wants []want
		for i, tt := range times {
			eng.At(Time(tt), h, uint64(i))
			wants = append(wants, want{Time(tt), uint64(i)})
		}
		slices.SortStableFunc(wants, func(a, b want) int { return int(a.at - b.at) })
		eng.Run()
		if len(rec.got) != len(wants) {
			t.Fatalf("ran %d events, want %d", len(rec.got), len(wants))
		}
		for i, w := range wants {
			if rec.got[i] != w.arg || rec.at[i] != w.at {
				t.Fatalf("event %d: got arg %d at %v, want arg %d at %v", i, rec.got[i], rec.at[i], w.arg, w.at)
			}
		}
	})
}

// spawner schedules new events from inside events, at now plus delays
// drawn in advance (zero included), as simulations do.
type spawner struct {
	eng     *Engine
	id      HandlerID
	delays  []Time
	next    uint64
	pending []spawned // the reference: every event not yet run
	got     []uint64
	t       *rapid.T
}

type spawned struct {
	at  Time
	arg uint64
}

func (s *spawner) schedule(at Time) {
	s.eng.At(at, s.id, s.next)
	s.pending = append(s.pending, spawned{at, s.next})
	s.next++
}

func (s *spawner) Handle(arg uint64) {
	// The reference's choice: the earliest time, then the first scheduled.
	best := 0
	for i, p := range s.pending {
		if p.at < s.pending[best].at {
			best = i
		}
	}
	if w := s.pending[best]; w.arg != arg || w.at != s.eng.Now() {
		s.t.Fatalf("ran event %d at %v; want event %d at %v", arg, s.eng.Now(), w.arg, w.at)
	}
	s.pending = append(s.pending[:best], s.pending[best+1:]...)
	for range 2 {
		if len(s.delays) == 0 {
			return
		}
		s.schedule(s.eng.Now() + s.delays[0])
		s.delays = s.delays[1:]
		s.checkPeek()
	}
}

// checkPeek checks that the engine's earliest time is the reference's.
func (s *spawner) checkPeek() {
	at, ok := s.eng.peek()
	if ok != (len(s.pending) > 0) {
		s.t.Fatalf("peek says pending %v; %d events pending", ok, len(s.pending))
	}
	for _, p := range s.pending {
		if p.at < at {
			s.t.Fatalf("peek says %v; event %d is at %v", at, p.arg, p.at)
		}
	}
	if ok && !slices.ContainsFunc(s.pending, func(p spawned) bool { return p.at == at }) {
		s.t.Fatalf("peek says %v; no event pending then", at)
	}
}

// Events scheduled while others run still run in (time, insertion) order,
// for delays of every scale (the queue buckets times by their bits).
func TestEngineOrderWhileRunning(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		eng := New(1)
		delay := rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, 1<<40), rapid.Int64Range(1<<50, 1<<52))
		s := &spawner{eng: eng, t: t}
		s.id = eng.Register(s)
		for _, d := range rapid.SliceOfN(delay, 0, 400).Draw(t, "delays") {
			s.delays = append(s.delays, Time(d))
		}
		for _, at := range rapid.SliceOfN(rapid.Int64Range(0, 1<<20), 1, 8).Draw(t, "starts") {
			s.schedule(Time(at))
		}
		for s.checkPeek(); eng.Step(); s.checkPeek() {
		}
		if len(s.pending) != 0 || eng.Pending() != 0 {
			t.Fatalf("%d events never ran (engine: %d pending)", len(s.pending), eng.Pending())
		}
	})
}

type chain struct {
	eng *Engine
	id  HandlerID
	n   uint64
}

func (c *chain) Handle(arg uint64) {
	if arg < c.n {
		c.eng.After(Nanosecond, c.id, arg+1)
	}
}

func TestEngineSchedulingInThePastPanics(t *testing.T) {
	eng := New(1)
	c := &chain{eng: eng}
	c.id = eng.Register(c)
	eng.At(10, c.id, 0)
	eng.Run()
	defer func() {
		if recover() == nil {
			t.Fatal("scheduling before now did not panic")
		}
	}()
	eng.At(5, c.id, 0)
}

func TestStreamsAreIndependentAndReproducible(t *testing.T) {
	a, b := New(7).Stream(3), New(7).Stream(3)
	other := New(7).Stream(4)
	same, differ := true, false
	for range 100 {
		x, y, z := a.Uint64(), b.Uint64(), other.Uint64()
		same = same && x == y
		differ = differ || x != z
	}
	if !same || !differ {
		t.Fatalf("same-ID streams equal: %v, different-ID streams differ: %v", same, differ)
	}
	if New(7).NamedStream("noise").Uint64() != New(7).NamedStream("noise").Uint64() ||
		New(7).NamedStream("noise").Uint64() == New(7).NamedStream("placement").Uint64() {
		t.Fatal("named streams are not reproducible and distinct")
	}
}

// BenchmarkEngine measures the cost of one event in a queue of about 4,096
// pending events. It must report 0 allocs/op.
func BenchmarkEngine(b *testing.B) {
	eng := New(1)
	c := &chain{eng: eng, n: ^uint64(0)}
	c.id = eng.Register(c)
	for i := range 4096 {
		eng.At(Time(i), c.id, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		eng.Step()
	}
}

// An event after a delay that would take the clock past MaxTime fails the
// run with ErrClockLimit instead of wrapping into the past (a panic).
func TestAfterPastTheClockLimit(t *testing.T) {
	e := New(1)
	r := &recorder{eng: e}
	h := e.Register(r)
	e.After(Second, h, 0)
	e.Run()
	e.After(MaxTime-e.Now()+1, h, 1) // one picosecond too far
	e.Run()
	if len(r.got) != 1 || !errors.Is(e.Err(), ErrClockLimit) || e.Now() != Second {
		t.Fatalf("ran %v, err %v, now %v", r.got, e.Err(), e.Now())
	}
}
