package network

import (
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

type countSink struct{ n int }

func (c *countSink) Injected(uint32, sim.Time) {}
func (c *countSink) Delivered(uint32)          { c.n++ }

type seqInjector struct {
	net sim.Network
}

func (s seqInjector) Handle(arg uint64) {
	s.net.Inject(sim.Transfer{ID: uint32(arg), Src: int32(arg % 2), Dst: int32(1 - arg%2), Bytes: 64})
}

// One pair's messages one after another, each delivered before the next
// is sent: the pair's entry is freed and taken again, never a new one,
// and all are free once nothing is in flight.
func TestFlowPairEntriesReused(t *testing.T) {
	cross, _ := topology.Crossbar(2, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	f, err := Flow(FlowConfig{Topology: cross, Placement: []int32{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	eng := sim.New(1)
	sink := &countSink{}
	n, err := f(eng, sink, 2)
	if err != nil {
		t.Fatal(err)
	}
	h := eng.Register(seqInjector{n})
	for i := range 1000 {
		eng.At(sim.Time(i)*10*sim.Microsecond, h, uint64(i))
	}
	eng.Run()
	m := n.(*flowModel)
	if sink.n != 1000 || m.order.len() != 0 || len(m.pairs) > 2 || len(m.freePairs) != len(m.pairs) {
		t.Fatalf("%d delivered; after the run %d pairs mapped, %d entries, %d free", sink.n, m.order.len(), len(m.pairs), len(m.freePairs))
	}
	// A reused entry starts the pair afresh: its next message is its
	// first (sequence 0, which ECMP's hash of the message takes).
	n.Inject(sim.Transfer{ID: 1000, Src: 0, Dst: 1, Bytes: 64})
	for _, fl := range m.flows {
		if fl.id == 1000 && fl.active && fl.seq != 0 {
			t.Fatalf("the message after the pair went idle has sequence %d, want 0", fl.seq)
		}
	}
}
