package network_test

import (
	"slices"
	"testing"

	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

type overtakeSink struct {
	net sim.Network
	inj map[uint32]sim.Time
}

func (s *overtakeSink) Injected(id uint32, at sim.Time) {
	s.inj[id] = at
	if id == 0 {
		s.net.Inject(sim.Transfer{ID: 2, Src: 0, Dst: 1, Bytes: 1000})
	}
}
func (s *overtakeSink) Delivered(uint32) {}

// A pair's messages share bandwidth one at a time, in the order sent,
// also when the next one is sent from inside Injected.
func TestFlowPairOneAtATimeFromInjected(t *testing.T) {
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	f, _ := network.Flow(network.FlowConfig{Topology: cross, Placement: []int32{0, 1}})
	eng := sim.New(1)
	s := &overtakeSink{inj: map[uint32]sim.Time{}}
	s.net, _ = f(eng, s, 2)
	s.net.Inject(sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 1000})
	s.net.Inject(sim.Transfer{ID: 1, Src: 0, Dst: 1, Bytes: 1000})
	eng.Run()
	us := sim.Microsecond
	if s.inj[0] != us || s.inj[1] != 2*us || s.inj[2] != 3*us {
		t.Errorf("last bytes out at %v %v %v, want 1us 2us 3us", s.inj[0], s.inj[1], s.inj[2])
	}
}

type orderSink struct{ injected []uint32 }

func (s *orderSink) Injected(id uint32, _ sim.Time) { s.injected = append(s.injected, id) }
func (s *orderSink) Delivered(uint32)               {}

// A pair's messages are reported injected in the order sent, also when
// the waiting one is empty and leaves at the instant the one before it
// does.
func TestFlowPairInjectedInOrder(t *testing.T) {
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	f, _ := network.Flow(network.FlowConfig{Topology: cross, Placement: []int32{0, 1}})
	eng := sim.New(1)
	s := &orderSink{}
	n, _ := f(eng, s, 2)
	n.Inject(sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 1000})
	n.Inject(sim.Transfer{ID: 1, Src: 0, Dst: 1, Bytes: 0})
	n.Inject(sim.Transfer{ID: 2, Src: 0, Dst: 1, Bytes: 0})
	eng.Run()
	if want := []uint32{0, 1, 2}; !slices.Equal(s.injected, want) {
		t.Fatalf("reported injected in the order %v, want %v", s.injected, want)
	}
}
