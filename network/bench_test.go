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
	benchFlowRouted(b, topo, place, coll, algo, count, "")
}

// benchFlowRouted is benchFlow with a routing (RouteMinimal, RouteValiant,
// RouteUGAL).
func benchFlowRouted(b *testing.B, topo *topology.Topology, place []int32, coll collectives.Collective, algo string, count int64, routing string) {
	benchFlowCall(b, topo, place, coll, algo, collectives.Params{Ranks: len(place), Count: count}, routing)
}

// benchFlowCall is benchFlowRouted with the call's whole parameters.
func benchFlowCall(b *testing.B, topo *topology.Topology, place []int32, coll collectives.Collective, algo string, params collectives.Params, routing string) {
	factory, err := Flow(FlowConfig{Topology: topo, Placement: place, Routing: routing})
	if err != nil {
		b.Fatal(err)
	}
	var model *flowModel
	net := func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
		n, err := factory(eng, sink, ranks)
		model, _ = n.(*flowModel)
		return n, err
	}
	a, _ := collectives.Lookup(coll, algo)
	s, err := a.Build(params)
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
	// How far a change reaches: the rates a solve changed, on average
	// (the last call's).
	b.ReportMetric(float64(model.rerated)/float64(model.solves), "rates/solve")
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

// dragonfly is the Dragonfly of the benchmarks below with g groups: p=4,
// a=16, h=2 (64 hosts a group; 9 groups make 576 hosts, 17 make 1,088),
// 5 GB/s local links, 4.7 GB/s global ones.
func dragonfly(b *testing.B, g int) *topology.Topology {
	link := topology.LinkSpec{Bandwidth: 5e9, Latency: 100e-9}
	df, err := topology.Dragonfly(topology.DragonflySpec{P: 4, A: 16, H: 2, G: g, Host: link, Local: link, Global: topology.LinkSpec{Bandwidth: 4.7e9, Latency: 300e-9}})
	if err != nil {
		b.Fatal(err)
	}
	return df
}

// The speed issue's slow cases, as benchmarks to compare with benchstat: a
// pairwise alltoall of 1 MiB per rank (2 KiB per pair, 261,632 flows) on
// 512 ranks in blocks of the Dragonfly, under minimal routing, UGAL and
// Valiant. The detours make every flow's route cross a third group, so
// more flows share links and the components the solver sees grow.
func benchDragonflyAlltoall(b *testing.B, routing string) {
	df := dragonfly(b, 9)
	place, _ := topology.Place(topology.PlaceBlock, 512, df.Hosts(), 1, 0)
	benchFlowRouted(b, df, place, collectives.Alltoall, "pairwise", 1<<17, routing)
}

func BenchmarkFlowDragonflyAlltoall512Minimal(b *testing.B) { benchDragonflyAlltoall(b, RouteMinimal) }
func BenchmarkFlowDragonflyAlltoall512UGAL(b *testing.B)    { benchDragonflyAlltoall(b, RouteUGAL) }
func BenchmarkFlowDragonflyAlltoall512Valiant(b *testing.B) { benchDragonflyAlltoall(b, RouteValiant) }

// A Bruck alltoall of 8 bytes per pair on 1,024 randomly placed ranks of
// the 1,088-host Dragonfly: latency-bound, 10 steps of 1,024 small flows.
func BenchmarkFlowBruckAlltoall1024Dragonfly(b *testing.B) {
	df := dragonfly(b, 17)
	place, _ := topology.Place(topology.PlaceRandom, 1024, df.Hosts(), 1, 1)
	benchFlow(b, df, place, collectives.Alltoall, "bruck", 1024)
}

// A pipelined tree with thousands of segments: a 64 MiB chain bcast on 64
// ranks of the Dragonfly in 16 KiB segments (4,096 segments, 258,048
// flows), each segment a flow that starts as the one before it ends.
func BenchmarkFlowChainBcastDragonfly(b *testing.B) {
	df := dragonfly(b, 9)
	place, _ := topology.Place(topology.PlaceRandom, 64, df.Hosts(), 1, 1)
	benchFlowCall(b, df, place, collectives.Bcast, "chain", collectives.Params{Ranks: len(place), Count: 8 << 20, Segment: 2048}, RouteMinimal)
}
