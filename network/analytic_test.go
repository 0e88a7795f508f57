package network

import (
	"errors"
	"testing"

	"github.com/collsim/collsim/network/networktest"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

func analyticBuilder(gap sim.Time) networktest.Builder {
	return func(t *topology.Topology, place []int32) (sim.NetworkFactory, error) {
		return Analytic(AnalyticConfig{Topology: t, Placement: place, Gap: gap,
			Local: topology.LinkSpec{Bandwidth: 50e9, Latency: 100e-9}})
	}
}

func TestAnalyticConformance(t *testing.T) { networktest.Conformance(t, analyticBuilder(0)) }

func TestAnalyticConformanceWithGap(t *testing.T) {
	networktest.Conformance(t, analyticBuilder(3*sim.Nanosecond))
}

// sink records when each transfer was delivered.
type sink struct {
	eng *sim.Engine
	at  map[uint32]sim.Time
}

func (s *sink) Injected(uint32, sim.Time) {}
func (s *sink) Delivered(id uint32)       { s.at[id] = s.eng.Now() }

// The NIC sends and receives one message at a time: two messages out of
// one host, or into one host, are serialized; a gap spaces small messages.
func TestAnalyticPortSerialization(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6} // 100 ps/B, 1µs
	cross, _ := topology.Crossbar(4, link)
	const bytes = 10000 // 1µs on the wire
	cases := []struct {
		name string
		gap  sim.Time
		trs  []sim.Transfer
		want []sim.Time
	}{
		// Both leave host 0: the second starts when the first has left.
		{"out", 0, []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 2, Bytes: bytes}},
			[]sim.Time{3 * sim.Microsecond, 4 * sim.Microsecond}},
		// Both enter host 0: the second is taken in after the first.
		{"in", 0, []sim.Transfer{{ID: 0, Src: 1, Dst: 0, Bytes: bytes}, {ID: 1, Src: 2, Dst: 0, Bytes: bytes}},
			[]sim.Time{3 * sim.Microsecond, 4 * sim.Microsecond}},
		// Different ports: no interaction.
		{"disjoint", 0, []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 3, Bytes: bytes}},
			[]sim.Time{3 * sim.Microsecond, 3 * sim.Microsecond}},
		// A gap of 5µs between empty messages out of one NIC.
		{"gap", 5 * sim.Microsecond, []sim.Transfer{{ID: 0, Src: 0, Dst: 1}, {ID: 1, Src: 0, Dst: 2}},
			[]sim.Time{2 * sim.Microsecond, 7 * sim.Microsecond}},
	}
	for _, tc := range cases {
		factory, err := Analytic(AnalyticConfig{Topology: cross, Placement: []int32{0, 1, 2, 3}, Gap: tc.gap})
		if err != nil {
			t.Fatal(err)
		}
		eng := sim.New(1)
		s := &sink{eng: eng, at: map[uint32]sim.Time{}}
		net, _ := factory(eng, s, 4)
		for _, tr := range tc.trs {
			net.Inject(tr)
		}
		eng.Run()
		for i, want := range tc.want {
			if s.at[uint32(i)] != want {
				t.Errorf("%s: transfer %d delivered at %v, want %v", tc.name, i, s.at[uint32(i)], want)
			}
		}
	}
}

// Route latency adds up over hops and the slowest link sets the pace.
func TestAnalyticMultiHopPath(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-7}
	ft, _ := topology.FatTreeTapered(2, 3, link, 2, topology.TaperBandwidth) // leaf uplinks at half bandwidth
	factory, _ := Analytic(AnalyticConfig{Topology: ft, Placement: []int32{0, 7}})
	eng := sim.New(1)
	s := &sink{eng: eng, at: map[uint32]sim.Time{}}
	net, _ := factory(eng, s, 2)
	net.Inject(sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 1000})
	eng.Run()
	// Hosts 0 and 7 meet at the top: 6 links of 100ns; 1000B at 5GB/s.
	if want := 600*sim.Nanosecond + 200*sim.Nanosecond; s.at[0] != want {
		t.Fatalf("delivered at %v, want %v", s.at[0], want)
	}
}

func TestAnalyticBadConfig(t *testing.T) {
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1, Latency: 0})
	if _, err := Analytic(AnalyticConfig{Topology: cross, Placement: []int32{0, 5}}); err == nil {
		t.Fatal("a rank placed on a missing host was accepted")
	}
	if _, err := Analytic(AnalyticConfig{}); err == nil {
		t.Fatal("no topology was accepted")
	}
}

// A message whose delivery lies past the simulated clock's range ends the
// run with sim.ErrClockLimit, not a panic: the analytic model's sums of
// times wrap, and the engine reads a negative time as that.
func TestAnalyticPastTheClockLimit(t *testing.T) {
	run := func(bytes int64) error {
		cross, err := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1, Latency: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		net, err := Analytic(AnalyticConfig{Topology: cross, Placement: []int32{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		progs := []sim.Program{{{Kind: sim.OpSend, Peer: 1, Bytes: bytes}}, {{Kind: sim.OpRecv, Peer: 0, Bytes: bytes}}}
		_, err = sim.Execute(sim.New(1), sim.FromPrograms("one", progs, 1), sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 1 << 40}})
		return err
	}
	// 10^7 bytes at 1 B/s: 116 days, past 2^63 ps (106.8 days).
	if err := run(1e7); !errors.Is(err, sim.ErrClockLimit) {
		t.Errorf("10^7 bytes at 1 B/s: %v", err)
	}
	// 9 x 10^6 bytes: 104 days, within it.
	if err := run(9e6); err != nil {
		t.Errorf("9 x 10^6 bytes at 1 B/s: %v", err)
	}
}

// TestAnalyticLinkBytes: with LinkBytes the analytic network counts the
// data each link carries: a 1,000-byte message between hosts 0 and 1 of a
// crossbar crosses host 0's uplink and host 1's downlink (1,000 bytes
// each, nothing elsewhere); a message between two ranks of one host, and
// a rendezvous handshake, cross none.
func TestAnalyticLinkBytes(t *testing.T) {
	cross, err := topology.Crossbar(3, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	bytes := make([]float64, len(cross.Links()))
	nf, err := Analytic(AnalyticConfig{Topology: cross, Placement: []int32{0, 1, 1}, LinkBytes: bytes})
	if err != nil {
		t.Fatal(err)
	}
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: 1000}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 1000}, {Kind: sim.OpSend, Peer: 2, Tag: 1, Bytes: 500}},
		{{Kind: sim.OpRecv, Peer: 1, Tag: 1, Bytes: 500}},
	}
	if _, err := sim.Execute(sim.New(1), sim.FromPrograms("t", progs, 0), sim.Config{Network: nf, Host: sim.HostParams{EagerLimit: 100}}); err != nil {
		t.Fatal(err)
	}
	var total float64
	for l, b := range bytes {
		total += b
		from, to := cross.Label(cross.Links()[l].From), cross.Label(cross.Links()[l].To)
		if b != 0 && b != 1000 {
			t.Errorf("%s->%s carried %g bytes, want 0 or 1000", from, to, b)
		}
	}
	if total != 2000 {
		t.Errorf("%g bytes over all links, want 2000 (the one message between hosts, on two links)", total)
	}
}

// A rank's concurrent rendezvous sends leave its single port in the order
// they were issued, not in the order their replies come back: a linear
// alltoall of 1 MiB blocks on 3 ranks, ranks 0 and 1 on one leaf of a
// two-level fat-tree (k=2, 300 ns and 12.5 GB/s links) and rank 2 on the
// other. Replies from the near peer came back first, rank 1 sent to rank 0
// before rank 2, rank 2's port took in rank 0's and rank 1's blocks one
// after the other, and the call took 254.06 us, where the closed form and
// the flow model give two rounds. By hand: a block takes 83.88608 us; rank
// 1's and rank 2's first blocks leave at 2.4 us (a request and a reply
// over 4 links each way) and arrive at 2.4 + 1.2 + 83.88608 = 87.48608 us,
// rank 0's first at 85.6861 us; every second block is taken in from
// 87.48608 us, and the last arrives at 171.37216 us.
func TestAnalyticConcurrentDataInProgramOrder(t *testing.T) {
	ft, err := topology.FatTree(2, 2, topology.LinkSpec{Bandwidth: 12.5e9, Latency: 300e-9}, 1)
	if err != nil {
		t.Fatal(err)
	}
	nf, err := Analytic(AnalyticConfig{Topology: ft, Placement: []int32{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	const block = 1 << 20
	progs := make([]sim.Program, 3)
	for r := range progs {
		for i := 1; i < 3; i++ {
			progs[r] = append(progs[r], sim.Op{Kind: sim.OpSend, Concurrent: true, Peer: int32((r + i) % 3), Bytes: block})
		}
		for i := 1; i < 3; i++ {
			progs[r] = append(progs[r], sim.Op{Kind: sim.OpRecv, Peer: int32((r + 3 - i) % 3), Bytes: block})
		}
	}
	res, err := sim.Execute(sim.New(1), sim.FromPrograms("t", progs, 0), sim.Config{Network: nf, Host: sim.HostParams{EagerLimit: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	if want := sim.Time(171_372_160); res.Makespan != want {
		t.Errorf("linear alltoall of 1 MiB blocks on two leaves: %v, want %v", res.Makespan, want)
	}
}
