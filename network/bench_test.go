package network

import (
	"runtime"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// benchCollective simulates one call per iteration on a crossbar with the
// analytic model and reports simulated ops per second of wall time.
func benchCollective(b *testing.B, coll collectives.Collective, algo string, ranks int, count int64) {
	a, err := collectives.Lookup(coll, algo)
	if err != nil {
		b.Fatal(err)
	}
	cross, err := topology.Crossbar(ranks, topology.LinkSpec{Bandwidth: 12.5e9, Latency: 500e-9})
	if err != nil {
		b.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceBlock, ranks, ranks, 1, 0)
	net, _ := Analytic(AnalyticConfig{Topology: cross, Placement: place})
	s, err := a.Build(collectives.Params{Ranks: ranks, Count: count, ElemSize: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var ops uint64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 64 << 10, ReducePsPerByte: 100}})
		if err != nil {
			b.Fatal(err)
		}
		ops += res.Ops
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(ops)/float64(b.N), "ops/call")
	// Allocations per simulated op: what setup allocates (per rank state,
	// the event queue growing to its working size) spread over the ops. The
	// hot loop itself allocates nothing, so this falls as calls get longer.
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(ops), "allocs/simop")
}

func BenchmarkRingAllreduce1024(b *testing.B) {
	benchCollective(b, collectives.Allreduce, "ring", 1024, 1<<18)
}

func BenchmarkRecursiveDoublingAllreduce4096(b *testing.B) {
	benchCollective(b, collectives.Allreduce, "recursive_doubling", 4096, 2)
}

func BenchmarkPairwiseAlltoall512(b *testing.B) {
	benchCollective(b, collectives.Alltoall, "pairwise", 512, 16)
}

// The same ring on 1,024 ranks with a 16x longer vector: the same number of
// ops, longer messages. Allocations per call must not grow with the size.
func BenchmarkRingAllreduce1024Small(b *testing.B) {
	benchCollective(b, collectives.Allreduce, "ring", 1024, 1<<14)
}

// More steps per rank: 4,096 ranks make 4x more steps than 1,024; the
// allocations per call grow with ranks (setup), not with steps.
func BenchmarkRingAllreduce4096(b *testing.B) {
	benchCollective(b, collectives.Allreduce, "ring", 4096, 1<<18)
}

// benchFlowAlltoall simulates a pairwise alltoall of 64 KiB per pair on a
// full-bisection k-ary 2-tree with the flow model, one call per iteration,
// and reports flows (messages) per second of wall time.
func benchFlowAlltoall(b *testing.B, k int) {
	tree, err := topology.FatTree(k, 2, topology.LinkSpec{Bandwidth: 12.5e9, Latency: 300e-9}, 1)
	if err != nil {
		b.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceBlock, tree.Hosts(), tree.Hosts(), 1, 0)
	benchFlow(b, tree, place, collectives.Alltoall, "pairwise", 8192) // 64 KiB of 8-byte elements
}

// benchFlow simulates one call of algo on the flow network per iteration
// and reports flows (messages) per second of wall time.
func benchFlow(b *testing.B, topo *topology.Topology, place []int32, coll collectives.Collective, algo string, count int64) {
	ranks := len(place)
	net, err := Flow(FlowConfig{Topology: topo, Placement: place})
	if err != nil {
		b.Fatal(err)
	}
	a, _ := collectives.Lookup(coll, algo)
	s, err := a.Build(collectives.Params{Ranks: ranks, Count: count})
	if err != nil {
		b.Fatal(err)
	}
	var flows uint64
	for b.Loop() {
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 64 << 10}})
		if err != nil {
			b.Fatal(err)
		}
		flows += res.Messages
	}
	b.ReportMetric(float64(flows)/b.Elapsed().Seconds(), "flows/s")
}

// 256 ranks: 65,280 flows.
func BenchmarkFlowPairwiseAlltoall256(b *testing.B) { benchFlowAlltoall(b, 16) }

// 1,024 ranks: 1,047,552 flows, the network-fidelity issue's figure.
func BenchmarkFlowPairwiseAlltoall1024(b *testing.B) { benchFlowAlltoall(b, 32) }

// A ring allreduce of 4 MiB on 512 of a 576-host Dragonfly's hosts, placed
// at random: the ring's messages cross different links with different
// latencies, so starts rarely coincide, and each solve involves only the
// few flows that share links with the one that changed.
func BenchmarkFlowRingDragonfly512(b *testing.B) {
	link := topology.LinkSpec{Bandwidth: 5e9, Latency: 100e-9}
	df, err := topology.Dragonfly(topology.DragonflySpec{P: 4, A: 16, H: 2, G: 9, Host: link, Local: link, Global: topology.LinkSpec{Bandwidth: 4.7e9, Latency: 300e-9}})
	if err != nil {
		b.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceRandom, 512, df.Hosts(), 1, 1)
	benchFlow(b, df, place, collectives.Allreduce, "ring", 1<<19)
}
