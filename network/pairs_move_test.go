package network_test

import (
	"testing"

	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// growSink starts messages to new pairs from inside Injected, so that the
// flow model's pair table grows (and moves) while a finishing pair has a
// message waiting.
type growSink struct {
	eng      *sim.Engine
	net      sim.Network
	next     uint32
	inj, del map[uint32]int
	order    []uint32
	ranks    int32
	probe    sim.Time
}

func (s *growSink) Injected(id uint32, _ sim.Time) {
	s.inj[id]++
	if id == 0 { // the first of 0->1 has left; 1 waits behind it
		for src := range s.ranks {
			for dst := range s.ranks {
				if src != dst && !(src == 0 && dst == 1) {
					s.net.Inject(sim.Transfer{ID: s.next, Src: src, Dst: dst, Bytes: 100})
					s.next++
				}
			}
		}
	}
}

func (s *growSink) Delivered(id uint32) {
	s.del[id]++
	if id < 2 {
		s.order = append(s.order, id)
	}
	if id == 999 {
		s.probe = s.eng.Now()
	}
}

type probeLater struct{ s *growSink }

func (p probeLater) Handle(uint64) {
	p.s.net.Inject(sim.Transfer{ID: 999, Src: 0, Dst: 2, Bytes: 1000})
}

func TestFlowPairsMoveInsideInjected(t *testing.T) {
	const ranks = 8
	cross, _ := topology.Crossbar(ranks, topology.LinkSpec{Bandwidth: 1e9, Latency: 1e-6})
	place := make([]int32, ranks)
	for i := range place {
		place[i] = int32(i)
	}
	f, err := network.Flow(network.FlowConfig{Topology: cross, Placement: place})
	if err != nil {
		t.Fatal(err)
	}
	eng := sim.New(1)
	s := &growSink{eng: eng, next: 2, inj: map[uint32]int{}, del: map[uint32]int{}, ranks: ranks}
	if s.net, err = f(eng, s, ranks); err != nil {
		t.Fatal(err)
	}
	s.net.Inject(sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 1000})
	s.net.Inject(sim.Transfer{ID: 1, Src: 0, Dst: 1, Bytes: 1000})
	// Long after, a lone 1000-byte message from rank 0 has its links to
	// itself: 1 us of bytes and 2 us of latency.
	eng.At(100*sim.Microsecond, eng.Register(probeLater{s}), 0)
	eng.Run()
	for id := range s.next {
		if s.inj[id] != 1 || s.del[id] != 1 {
			t.Errorf("transfer %d: injected %d times, delivered %d times", id, s.inj[id], s.del[id])
		}
	}
	if len(s.order) != 2 || s.order[0] != 0 {
		t.Errorf("0->1 delivered in order %v, want [0 1]", s.order)
	}
	if want := 103 * sim.Microsecond; s.probe != want {
		t.Errorf("the lone message delivered at %v, want %v (a flow left sharing rank 0's link?)", s.probe, want)
	}
}
