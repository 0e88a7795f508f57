package collectives_test

import (
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// BenchmarkAlgorithms simulates one call of every algorithm on 64 ranks of
// a crossbar, 64 KiB, and reports simulated ops per second of wall time.
func BenchmarkAlgorithms(b *testing.B) {
	const ranks = 64
	cross, _ := topology.Crossbar(ranks, topology.LinkSpec{Bandwidth: 12.5e9, Latency: 500e-9})
	place, _ := topology.Place(topology.PlaceBlock, ranks, ranks, 1, 0)
	net, _ := network.Analytic(network.AnalyticConfig{Topology: cross, Placement: place})
	for _, a := range collectives.All() {
		b.Run(a.Collective.String()+"/"+a.Name, func(b *testing.B) {
			p := collectives.Params{Ranks: ranks, Count: 16384, ElemSize: 4, NodeSize: 8, GroupSize: 8}
			if a.Collective == collectives.Alltoall {
				p.Count = 256
			}
			s, err := a.Build(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var ops uint64
			for b.Loop() {
				res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 64 << 10, ReducePsPerByte: 100}})
				if err != nil {
					b.Fatal(err)
				}
				ops += res.Ops
			}
			b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
