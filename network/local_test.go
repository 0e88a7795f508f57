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
			factory, err := build()
			if err != nil {
				t.Fatal(err)
			}
			eng := sim.New(1)
			s := &injections{sink: sink{eng: eng, at: map[uint32]sim.Time{}}, left: map[uint32]sim.Time{}}
			net, err := factory(eng, s, len(place))
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range tc.trs {
				net.Inject(tr)
			}
			eng.Run()
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
