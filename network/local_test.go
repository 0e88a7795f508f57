package network

import (
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// injections records when each transfer was delivered and when its data
// left.
type injections struct {
	sink
	left map[uint32]sim.Time
}

func (s *injections) Injected(id uint32, at sim.Time) { s.left[id] = at }

// Ranks on one host send and take in through shared-memory channels of
// their own, one message at a time each way, in the analytic and the flow
// network alike (the analytic network's ports). Four ranks on host 0, a
// local channel of 10 GB/s (100 ps/B) and 1 µs: a message of 10,000
// bytes leaves in 1 µs, its head reaches the receiver 1 µs after it
// started, and the receiver takes it in in 1 µs, when it is free.
// Before, the analytic network passed a host's ranks through one channel
// ("two pairs" took 3 µs for the second) and the flow network took no
// turns at all (the second of "one sender" and of "one receiver" at 2 µs).
func TestLocalChannelPerRank(t *testing.T) {
	cross, err := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	local := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	place := []int32{0, 0, 0, 0}
	const bytes = 10000
	us := sim.Microsecond
	none := sim.Time(-1) // no data left: a control message
	cases := []struct {
		name            string
		trs             []sim.Transfer
		arrive, dataOut []sim.Time
	}{
		// Two pairs at once, each rank on its core.
		{"two pairs", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 3, Bytes: bytes}},
			[]sim.Time{2 * us, 2 * us}, []sim.Time{us, us}},
		// Two senders, one receiver: it takes the second in after the
		// first.
		{"one receiver", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 1, Bytes: bytes}},
			[]sim.Time{2 * us, 3 * us}, []sim.Time{us, us}},
		// One rank's two messages: the second is copied after the first.
		{"one sender", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 2, Bytes: bytes}},
			[]sim.Time{2 * us, 3 * us}, []sim.Time{us, 2 * us}},
		// A request waits for the data its sender queued before it; a
		// reply does not.
		{"control", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 0, Dst: 1, Control: sim.ControlRequest},
			{ID: 2, Src: 0, Dst: 2, Control: sim.ControlReply}},
			[]sim.Time{2 * us, 2 * us, us}, []sim.Time{us, none, none}},
	}
	models := map[string]func() (sim.NetworkFactory, error){
		"analytic": func() (sim.NetworkFactory, error) {
			return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local})
		},
		"flow": func() (sim.NetworkFactory, error) {
			return Flow(FlowConfig{Topology: cross, Placement: place, Local: local})
		},
	}
	for model, build := range models {
		for _, tc := range cases {
			s := runTransfers(t, build, len(place), tc.trs)
			for i := range tc.trs {
				id := uint32(i)
				if s.at[id] != tc.arrive[i] {
					t.Errorf("%s, %s: transfer %d arrived at %v, want %v", model, tc.name, i, s.at[id], tc.arrive[i])
				}
				left, ok := s.left[id]
				if !ok {
					left = none
				}
				if left != tc.dataOut[i] {
					t.Errorf("%s, %s: transfer %d's data left at %v, want %v", model, tc.name, i, left, tc.dataOut[i])
				}
			}
		}
	}
}

// runTransfers injects trs at time 0 into the network build makes for
// ranks ranks, and runs it to the end.
func runTransfers(t *testing.T, build func() (sim.NetworkFactory, error), ranks int, trs []sim.Transfer) *injections {
	t.Helper()
	factory, err := build()
	if err != nil {
		t.Fatal(err)
	}
	eng := sim.New(1)
	s := &injections{sink: sink{eng: eng, at: map[uint32]sim.Time{}}, left: map[uint32]sim.Time{}}
	net, err := factory(eng, s, ranks)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		net.Inject(tr)
	}
	eng.Run()
	return s
}

// A half-duplex channel sends or takes in, one message at a time: an
// exchange between two ranks of one host takes a one-way message's time
// twice, where a full-duplex channel moves both at once. Times by hand:
// 10000 B at 10 GB/s is 1µs on the channel, whose latency is 100ns.
func TestLocalHalfDuplex(t *testing.T) {
	local := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-7}
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	const bytes = 10000
	us := func(v float64) sim.Time { return sim.FromSeconds(v * 1e-6) }
	cases := []struct {
		name       string
		trs        []sim.Transfer
		full, half []sim.Time
	}{
		{"one way", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}},
			[]sim.Time{us(1.1)}, []sim.Time{us(1.1)}},
		// Each channel sends [0, 1µs], then takes in [1µs, 2µs].
		{"exchange", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 1, Dst: 0, Bytes: bytes}},
			[]sim.Time{us(1.1), us(1.1)}, []sim.Time{us(2), us(2)}},
		// Rank 0 sends to 1 and takes in from 2: its channel does one
		// after the other; ranks 1 and 2 do one thing each.
		{"in and out", []sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: bytes}, {ID: 1, Src: 2, Dst: 0, Bytes: bytes}},
			[]sim.Time{us(1.1), us(1.1)}, []sim.Time{us(1.1), us(2)}},
		// Ranks on another host go through the NICs, which stay full
		// duplex: two links of 1µs (host, switch, host) and 10µs on the
		// wire.
		{"between hosts", []sim.Transfer{{ID: 0, Src: 0, Dst: 3, Bytes: bytes}, {ID: 1, Src: 3, Dst: 0, Bytes: bytes}},
			[]sim.Time{us(12), us(12)}, []sim.Time{us(12), us(12)}},
	}
	place := []int32{0, 0, 0, 1}
	for _, half := range []bool{false, true} {
		builders := map[string]func() (sim.NetworkFactory, error){
			"analytic": func() (sim.NetworkFactory, error) {
				return Analytic(AnalyticConfig{Topology: cross, Placement: place, Local: local, LocalHalfDuplex: half})
			},
			"flow": func() (sim.NetworkFactory, error) {
				return Flow(FlowConfig{Topology: cross, Placement: place, Local: local, LocalHalfDuplex: half})
			},
		}
		for model, build := range builders {
			for _, tc := range cases {
				s := runTransfers(t, build, len(place), tc.trs)
				want := tc.full
				if half {
					want = tc.half
				}
				for i, w := range want {
					if got := s.at[uint32(i)]; got != w {
						t.Errorf("%s, half duplex %v, %s: transfer %d delivered at %v, want %v", model, half, tc.name, i, got, w)
					}
				}
			}
		}
	}
}
