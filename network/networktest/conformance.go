// Package networktest is the conformance suite every collsim network
// model must pass, in the style of gonum's graph/testgraph: a model's
// tests call Conformance with a function that builds it.
package networktest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// Builder makes the model under test for a topology, with rank r on host
// place[r].
type Builder func(t *topology.Topology, place []int32) (sim.NetworkFactory, error)

// report is one call a model made to its Sink.
type report struct {
	delivered bool
	id        uint32
	at        sim.Time
}

// recorder is a Sink that logs reports and checks their contract.
type recorder struct {
	eng       *sim.Engine
	log       []report
	injected  map[uint32]sim.Time
	delivered map[uint32]sim.Time
	control   map[uint32]bool // control transfers: no Injected
	t         testing.TB
}

func newRecorder(t testing.TB, eng *sim.Engine) *recorder {
	return &recorder{eng: eng, injected: map[uint32]sim.Time{}, delivered: map[uint32]sim.Time{}, control: map[uint32]bool{}, t: t}
}

func (r *recorder) Injected(id uint32, at sim.Time) {
	if r.control[id] {
		r.t.Errorf("control transfer %d reported injected", id)
	}
	if _, dup := r.injected[id]; dup {
		r.t.Errorf("transfer %d reported injected twice", id)
	}
	if at < r.eng.Now() {
		r.t.Errorf("transfer %d reported injected at %v, in the past (now %v)", id, at, r.eng.Now())
	}
	r.injected[id] = at
	r.log = append(r.log, report{false, id, at})
}

func (r *recorder) Delivered(id uint32) {
	if _, dup := r.delivered[id]; dup {
		r.t.Errorf("transfer %d reported delivered twice", id)
	}
	if at, ok := r.injected[id]; !r.control[id] && (!ok || at > r.eng.Now()) {
		r.t.Errorf("transfer %d delivered at %v, before its reported injection (%v, reported: %v)", id, r.eng.Now(), at, ok)
	}
	r.delivered[id] = r.eng.Now()
	r.log = append(r.log, report{true, id, r.eng.Now()})
}

// resender sends rank 0's next message to rank 1 from inside Injected,
// left more times.
type resender struct {
	*recorder
	net   sim.Network
	next  uint32
	left  int
	bytes int64
}

func (s *resender) send(bytes int64) {
	s.bytes = bytes
	id := s.next
	s.next++
	s.net.Inject(sim.Transfer{ID: id, Src: 0, Dst: 1, Bytes: bytes})
}

func (s *resender) Injected(id uint32, at sim.Time) {
	s.recorder.Injected(id, at)
	if s.left > 0 {
		s.left--
		s.send(s.bytes)
	}
}

// injector starts planned transfers at their times.
type injector struct {
	eng  *sim.Engine
	net  sim.Network
	plan []planned
}

type planned struct {
	at sim.Time
	tr sim.Transfer
}

func (in *injector) Handle(arg uint64) { in.net.Inject(in.plan[arg].tr) }

// run injects plan on a fresh model and returns the recorder.
func run(t testing.TB, build Builder, topo *topology.Topology, place []int32, plan []planned) *recorder {
	t.Helper()
	factory, err := build(topo, place)
	if err != nil {
		t.Fatal(err)
	}
	eng := sim.New(42)
	rec := newRecorder(t, eng)
	for _, p := range plan {
		if p.tr.Control != sim.ControlNone {
			rec.control[p.tr.ID] = true
		}
	}
	net, err := factory(eng, rec, len(place))
	if err != nil {
		t.Fatal(err)
	}
	in := &injector{eng: eng, net: net, plan: plan}
	h := eng.Register(in)
	for i, p := range plan {
		eng.At(p.at, h, uint64(i))
	}
	eng.Run()
	for _, p := range plan {
		if _, ok := rec.delivered[p.tr.ID]; !ok {
			t.Fatalf("transfer %d (%d->%d, %dB) never delivered", p.tr.ID, p.tr.Src, p.tr.Dst, p.tr.Bytes)
		}
	}
	return rec
}

// Conformance runs the suite against the model build makes.
func Conformance(t *testing.T, build Builder) {
	link := topology.LinkSpec{Bandwidth: 12.5e9, Latency: 250e-9} // 80 ps/B
	cross, err := topology.Crossbar(8, link)
	if err != nil {
		t.Fatal(err)
	}
	place := []int32{0, 1, 2, 3, 4, 5, 6, 7}

	t.Run("SingleTransferTime", func(t *testing.T) {
		// One transfer on an idle crossbar: two links of latency l, then
		// the bytes at the link bandwidth: 2l + ceil(bytes/bw).
		for _, bytes := range []int64{0, 1, 8, 1000, 1 << 20} {
			rec := run(t, build, cross, place, []planned{{0, sim.Transfer{ID: 0, Src: 2, Dst: 5, Bytes: bytes}}})
			want := 2*sim.FromSeconds(link.Latency) + sim.Time(math.Ceil(float64(bytes)*1e12/link.Bandwidth))
			if got := rec.delivered[0]; got != want {
				t.Errorf("%d bytes delivered at %v, want %v", bytes, got, want)
			}
		}
	})

	// randomPlan injects n transfers at random times between random ranks,
	// one in five a rendezvous request and one in ten a reply.
	randomPlan := func(seed uint64, n int) []planned {
		rng := rand.New(rand.NewPCG(seed, 1))
		plan := make([]planned, n)
		for i := range plan {
			src := rng.Int32N(8)
			dst := (src + 1 + rng.Int32N(7)) % 8
			tr := sim.Transfer{ID: uint32(i), Src: src, Dst: dst, Bytes: rng.Int64N(100000)}
			switch rng.IntN(10) {
			case 0, 1:
				tr.Control, tr.Bytes = sim.ControlRequest, 0
			case 2:
				tr.Control, tr.Bytes = sim.ControlReply, 0
			}
			plan[i] = planned{at: sim.Time(rng.Int64N(int64(2 * sim.Microsecond))), tr: tr}
		}
		slices.SortStableFunc(plan, func(a, b planned) int { return int(a.at - b.at) })
		return plan
	}

	t.Run("PairOrder", func(t *testing.T) {
		// MPI's non-overtaking rule: between one pair, delivery follows
		// injection order, whatever the sizes, for data and requests
		// alike (replies keep no order).
		all := randomPlan(7, 400)
		rec := run(t, build, cross, place, all)
		plan := slices.DeleteFunc(slices.Clone(all), func(p planned) bool { return p.tr.Control == sim.ControlReply })
		last := map[[2]int32]sim.Time{}
		lastID := map[[2]int32]uint32{}
		for _, p := range plan {
			pair := [2]int32{p.tr.Src, p.tr.Dst}
			at := rec.delivered[p.tr.ID]
			if prev, ok := last[pair]; ok && at < prev {
				t.Fatalf("transfer %d (%v) delivered at %v, before the earlier transfer %d at %v", p.tr.ID, pair, at, lastID[pair], prev)
			}
			last[pair], lastID[pair] = at, p.tr.ID
		}
		// Reports with equal times must still come in injection order.
		pos := map[uint32]int{}
		for i, r := range rec.log {
			if r.delivered {
				pos[r.id] = i
			}
		}
		prev := map[[2]int32]int{}
		for _, p := range plan {
			pair := [2]int32{p.tr.Src, p.tr.Dst}
			if q, ok := prev[pair]; ok && pos[p.tr.ID] < q {
				t.Fatalf("transfer %d reported delivered before an earlier transfer of the same pair", p.tr.ID)
			}
			prev[pair] = pos[p.tr.ID]
		}
	})

	t.Run("NoFasterThanAlone", func(t *testing.T) {
		// Other traffic can only delay a transfer: none arrives sooner than
		// latency plus serialization from the moment it was injected.
		plan := randomPlan(11, 300)
		rec := run(t, build, cross, place, plan)
		for _, p := range plan {
			floor := p.at + 2*sim.FromSeconds(link.Latency) + sim.Time(math.Ceil(float64(p.tr.Bytes)*1e12/link.Bandwidth))
			if p.tr.Control == sim.ControlReply {
				// A reply takes its route's latency, whatever is in flight.
				if got := rec.delivered[p.tr.ID]; got != floor {
					t.Fatalf("reply %d delivered at %v, want %v (its latency alone)", p.tr.ID, got, floor)
				}
				continue
			}
			if got := rec.delivered[p.tr.ID]; got < floor {
				t.Fatalf("transfer %d delivered at %v, sooner than alone (%v)", p.tr.ID, got, floor)
			}
		}
	})

	t.Run("Deterministic", func(t *testing.T) {
		plan := randomPlan(3, 500)
		a := run(t, build, cross, place, plan).log
		b := run(t, build, cross, place, plan).log
		if !slices.Equal(a, b) {
			t.Fatal("the same transfers gave different reports")
		}
	})

	t.Run("Control", func(t *testing.T) {
		// Control transfers carry no data: on an idle crossbar a request
		// and a reply each take the route's latency, 2l; a request sent
		// right after 1 MiB of data of its pair waits for that data
		// (delivered at 2l + 1 MiB / bw), a reply does not.
		l2 := 2 * sim.FromSeconds(link.Latency)
		data := sim.Time(math.Ceil(float64(1<<20) * 1e12 / link.Bandwidth))
		rec := run(t, build, cross, place, []planned{
			{0, sim.Transfer{ID: 0, Src: 1, Dst: 2, Control: sim.ControlRequest}},
			{0, sim.Transfer{ID: 1, Src: 3, Dst: 4, Control: sim.ControlReply}},
			{0, sim.Transfer{ID: 2, Src: 5, Dst: 6, Bytes: 1 << 20}},
			{0, sim.Transfer{ID: 3, Src: 5, Dst: 6, Control: sim.ControlRequest}},
			{0, sim.Transfer{ID: 4, Src: 5, Dst: 6, Control: sim.ControlReply}},
		})
		for id, want := range []sim.Time{l2, l2, l2 + data, l2 + data, l2} {
			if got := rec.delivered[uint32(id)]; got != want {
				t.Errorf("transfer %d delivered at %v, want %v", id, got, want)
			}
		}
	})

	t.Run("PairOrderFromInjected", func(t *testing.T) {
		// A sender that sends again as soon as its last message has left
		// (the executor's eager sends): the new message, injected from
		// inside Injected, is delivered after the earlier ones of its
		// pair, also when both are empty and arrive at one instant, on
		// one host or across the network.
		for _, where := range [][]int32{{0, 1}, {0, 0}} {
			for _, bytes := range []int64{0, 1000} {
				factory, err := build(cross, where)
				if err != nil {
					t.Fatal(err)
				}
				eng := sim.New(42)
				s := &resender{recorder: newRecorder(t, eng), left: 6}
				if s.net, err = factory(eng, s, len(where)); err != nil {
					t.Fatal(err)
				}
				s.send(bytes)
				s.send(bytes)
				eng.Run()
				var got []uint32
				for _, r := range s.log {
					if r.delivered {
						got = append(got, r.id)
					}
				}
				if want := []uint32{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
					t.Errorf("ranks on hosts %v, %d B: delivered in the order %v, want %v", where, bytes, got, want)
				}
			}
		}
	})

	t.Run("SameHost", func(t *testing.T) {
		// Two ranks on one host: delivered, in order, without the network.
		rec := run(t, build, cross, []int32{0, 0}, []planned{
			{0, sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 5000}},
			{0, sim.Transfer{ID: 1, Src: 0, Dst: 1, Bytes: 1}},
		})
		if rec.delivered[1] < rec.delivered[0] {
			t.Fatal("a same-host message overtook an earlier one")
		}
	})
}
