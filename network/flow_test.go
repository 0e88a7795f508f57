package network

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network/networktest"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
	"pgregory.net/rapid"
)

func flowBuilder(t *topology.Topology, place []int32) (sim.NetworkFactory, error) {
	return Flow(FlowConfig{Topology: t, Placement: place, Local: topology.LinkSpec{Bandwidth: 50e9, Latency: 100e-9}})
}

func TestFlowConformance(t *testing.T) { networktest.Conformance(t, flowBuilder) }

// Hand-derived sharing (in the style of SimGrid's maxmin tests).
func TestFlowSharing(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6} // 100 ps/B, 1µs a link
	cross, _ := topology.Crossbar(4, link)
	run := func(trs []sim.Transfer) map[uint32]sim.Time {
		factory, _ := Flow(FlowConfig{Topology: cross, Placement: []int32{0, 1, 2, 3}})
		eng := sim.New(1)
		s := &sink{eng: eng, at: map[uint32]sim.Time{}}
		net, _ := factory(eng, s, 4)
		for _, tr := range trs {
			net.Inject(tr)
		}
		eng.Run()
		return s.at
	}
	const mb = 1e6 // 100 µs alone on one link
	// Two flows out of host 0 share its uplink: each gets half, so each
	// takes 200 µs after the 2 µs of latency.
	at := run([]sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: mb}, {ID: 1, Src: 0, Dst: 2, Bytes: mb}})
	if at[0] != 202*sim.Microsecond || at[1] != 202*sim.Microsecond {
		t.Errorf("two flows on one link: %v and %v, want 202µs each", at[0], at[1])
	}
	// A short and a long flow share: the short one (0.5 MB) ends at
	// 2 + 100 µs (half rate); the long one (1 MB) then has 0.5 MB left at
	// full rate: 2 + 100 + 50 = 152 µs.
	at = run([]sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: mb / 2}, {ID: 1, Src: 0, Dst: 2, Bytes: mb}})
	if at[0] != 102*sim.Microsecond || at[1] != 152*sim.Microsecond {
		t.Errorf("short and long: %v and %v, want 102µs and 152µs", at[0], at[1])
	}
	// Two messages of one pair go one after the other, as on one MPI
	// connection, rather than sharing: the first at 102 µs, the second
	// 100 µs later.
	at = run([]sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: mb}, {ID: 1, Src: 0, Dst: 1, Bytes: mb}})
	if at[0] != 102*sim.Microsecond || at[1] != 202*sim.Microsecond {
		t.Errorf("one pair: %v and %v, want 102µs and 202µs", at[0], at[1])
	}
	// A flow bottlenecked elsewhere leaves its share to others: flows
	// 0->1 and 0->2 share 0's uplink; 3->2 shares 2's downlink with 0->2.
	// Fair shares: 0->2 gets 1/2 of each; 0->1 and 3->2 get 1/2 too: all
	// equal, 200 µs.
	at = run([]sim.Transfer{{ID: 0, Src: 0, Dst: 1, Bytes: mb}, {ID: 1, Src: 0, Dst: 2, Bytes: mb}, {ID: 2, Src: 3, Dst: 2, Bytes: mb}})
	for id, want := range []sim.Time{202 * sim.Microsecond, 202 * sim.Microsecond, 202 * sim.Microsecond} {
		if at[uint32(id)] != want {
			t.Errorf("three flows: flow %d at %v, want %v", id, at[uint32(id)], want)
		}
	}
}

// Property: the solver's rates are feasible (no link over capacity) and
// every flow has a bottleneck: a saturated link on its route where no flow
// gets more than it. That is the definition of max-min fairness.
func TestMaxMinProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity, routes := drawSharing(t, 8, 1, 12)
		rates, err := MaxMin(capacity, routes)
		if err != nil {
			t.Fatal(err)
		}
		used := make([]float64, len(capacity))
		for i, r := range routes {
			for _, e := range r {
				used[e] += rates[i]
			}
		}
		for e := range used {
			if used[e] > capacity[e]*(1+1e-9) {
				t.Fatalf("link %d carries %g > capacity %g", e, used[e], capacity[e])
			}
		}
		// Rates are whole units of 2^-16 B/s rounded down, so a
		// saturated link may keep a unit per flow crossing it, and a flow
		// may be a unit per fill below another on its bottleneck.
		tol := float64(len(routes)+1) / rateUnitsPerByte
		for i, r := range routes {
			bottleneck := false
			for _, e := range r {
				if math.Abs(used[e]-capacity[e]) > tol {
					continue
				}
				biggest := true
				for j, r2 := range routes {
					for _, e2 := range r2 {
						if e2 == e && rates[j] > rates[i]+tol {
							biggest = false
						}
					}
				}
				bottleneck = bottleneck || biggest
			}
			if !bottleneck {
				t.Fatalf("flow %d (rate %g) has no bottleneck: rates %v used %v", i, rates[i], rates, used)
			}
		}
	})
}

// referenceMaxMin is the plain progressive filling the solver replaced:
// scan every link for the least share, freeze its flows, repeat. Slow and
// obviously right; the property below holds the heap solver to it.
func referenceMaxMin(capacity []float64, routes [][]int32) []float64 {
	left, users, frozen := new([]float64), new([]int32), new([]bool)
	n := len(routes)
	rates := make([]float64, n)
	if n == 0 {
		return rates
	}
	l := append((*left)[:0], capacity...)
	u := append((*users)[:0], make([]int32, len(capacity))...)
	fr := append((*frozen)[:0], make([]bool, n)...)
	*left, *users, *frozen = l, u, fr
	for _, route := range routes {
		for _, e := range route {
			u[e]++
		}
	}
	for remaining := n; remaining > 0; {
		best, share := int32(-1), math.Inf(1)
		for e, c := range u {
			if c > 0 {
				if s := l[e] / float64(c); s < share {
					best, share = int32(e), s
				}
			}
		}
		if best < 0 { // flows on no link: unconstrained; cannot happen on a route
			for i := range fr {
				if !fr[i] {
					rates[i], fr[i] = math.Inf(1), true
					remaining--
				}
			}
			break
		}
		for i, route := range routes {
			if fr[i] {
				continue
			}
			on := false
			for _, e := range route {
				on = on || e == best
			}
			if !on {
				continue
			}
			rates[i], fr[i] = share, true
			remaining--
			for _, e := range route {
				l[e] -= share
				u[e]--
			}
		}
	}
	return rates
}

// drawSharing draws up to maxLinks links of capacities 1..100 and
// minRoutes..maxRoutes routes, each over distinct links.
func drawSharing(t *rapid.T, maxLinks, minRoutes, maxRoutes int) ([]float64, [][]int32) {
	links := rapid.IntRange(1, maxLinks).Draw(t, "links")
	capacity := make([]float64, links)
	for i := range capacity {
		capacity[i] = float64(rapid.IntRange(1, 100).Draw(t, "cap"))
	}
	routes := rapid.SliceOfN(rapid.SliceOfNDistinct(rapid.Int32Range(0, int32(links-1)), 1, links, func(x int32) int32 { return x }), minRoutes, maxRoutes).Draw(t, "routes")
	return capacity, routes
}

// Property: the heap-driven solver gives the reference solver's rates.
func TestMaxMinMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity, routes := drawSharing(t, 12, 0, 40)
		got, err := MaxMin(capacity, routes)
		if err != nil {
			t.Fatal(err)
		}
		want := referenceMaxMin(capacity, routes)
		for i := range want {
			// Rates are whole units of 2^-16 B/s, rounded down at each
			// fill; a flow loses at most a unit per fill before its own.
			if math.Abs(got[i]-want[i]) > float64(len(routes))/rateUnitsPerByte {
				t.Fatalf("flow %d: rate %g, reference %g (routes %v, capacity %v)", i, got[i], want[i], routes, capacity)
			}
		}
	})
}

// TestLinkLoad: two 1 MB flows out of host 0 share its uplink for 200 µs;
// the link from host 3 carries nothing.
func TestLinkLoad(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	cross, _ := topology.Crossbar(4, link)
	var load LinkLoad
	factory, _ := Flow(FlowConfig{Topology: cross, Placement: []int32{0, 1, 2, 3}, Links: &load})
	eng := sim.New(1)
	s := &sink{eng: eng, at: map[uint32]sim.Time{}}
	net, _ := factory(eng, s, 4)
	net.Inject(sim.Transfer{ID: 0, Src: 0, Dst: 1, Bytes: 1e6})
	net.Inject(sim.Transfer{ID: 1, Src: 0, Dst: 2, Bytes: 1e6})
	eng.Run()
	up := cross.Route(0, 1, nil)[0] // host 0's uplink
	if load.Bytes[up] != 2e6 || load.Busy[up] != 200*sim.Microsecond || load.PeakFlows[up] != 2 || load.Flows[up] != 0 {
		t.Errorf("host 0's uplink: %g bytes, busy %v, peak %d flows, %d left; want 2e6, 200µs, 2, 0", load.Bytes[up], load.Busy[up], load.PeakFlows[up], load.Flows[up])
	}
	idle := cross.Route(3, 0, nil)[0]
	if load.Bytes[idle] != 0 || load.Busy[idle] != 0 {
		t.Errorf("host 3's uplink carried %g bytes", load.Bytes[idle])
	}
}

// TestFlowIncrementalMatchesWholeSolve: the incremental solver and
// MaxMinSolver over every flow at every change give the same finish times,
// bit for bit, for random collectives, placements and routings, and no
// sweep falls back to solving from nothing.
func TestFlowIncrementalMatchesWholeSolve(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 5e9, Latency: 1e-7}
	df, err := topology.Dragonfly(topology.DragonflySpec{P: 2, A: 4, H: 2, G: 9, Host: link, Local: link, Global: topology.LinkSpec{Bandwidth: 3e9, Latency: 3e-7}})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := topology.FatTree(8, 2, link, 2)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		coll collectives.Collective
		algo string
	}
	runs := []run{{collectives.Alltoall, "pairwise"}, {collectives.Allreduce, "ring"}, {collectives.Allreduce, "rabenseifner"}, {collectives.Bcast, "binomial"}, {collectives.Allgather, "bruck"}}
	rapid.Check(t, func(rt *rapid.T) {
		topo := []*topology.Topology{df, tree}[rapid.IntRange(0, 1).Draw(rt, "topology")]
		routing := RouteMinimal
		if topo == df {
			routing = rapid.SampledFrom([]string{RouteMinimal, RouteValiant, RouteUGAL}).Draw(rt, "routing")
		} else if rapid.Bool().Draw(rt, "ecmp") {
			routing = RouteECMP
		}
		ranks := rapid.IntRange(2, 40).Draw(rt, "ranks")
		place, err := topology.Place(topology.PlaceRandom, ranks, topo.Hosts(), 2, rapid.Uint64().Draw(rt, "seed"))
		if err != nil {
			rt.Fatal(err)
		}
		r := runs[rapid.IntRange(0, len(runs)-1).Draw(rt, "run")]
		a, _ := collectives.Lookup(r.coll, r.algo)
		s, err := a.Build(collectives.Params{Ranks: ranks, Count: rapid.Int64Range(0, 1<<16).Draw(rt, "count"), ElemSize: 4})
		if err != nil {
			rt.Fatal(err)
		}
		res := incrementalAndWhole(rt, FlowConfig{Topology: topo, Placement: place, Local: link, Routing: routing}, s, 7, sim.HostParams{EagerLimit: 4096, ReducePsPerByte: 50})
		if !slices.Equal(res[0].Finish, res[1].Finish) {
			rt.Fatalf("%s/%s on %d ranks, %s routing: incremental %v, whole network %v", r.coll, r.algo, ranks, routing, res[0].Finish, res[1].Finish)
		}
	})
}

// TestNoiseOffIsBitForBit: noise that is configured but off (no detours,
// no stragglers, no jitter) leaves every finish time exactly as a run
// without noise, on both network models, for several algorithms.
func TestNoiseOffIsBitForBit(t *testing.T) {
	tree, err := topology.FatTree(4, 2, topology.LinkSpec{Bandwidth: 1e10, Latency: 2e-7}, 2)
	if err != nil {
		t.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceRandom, 13, tree.Hosts(), 1, 3)
	analytic, _ := Analytic(AnalyticConfig{Topology: tree, Placement: place})
	flow, _ := Flow(FlowConfig{Topology: tree, Placement: place})
	flowOff, _ := Flow(FlowConfig{Topology: tree, Placement: place, Jitter: Jitter{Sigma: 0}})
	for _, algo := range []struct {
		coll collectives.Collective
		name string
	}{{collectives.Allreduce, "ring"}, {collectives.Allreduce, "rabenseifner"}, {collectives.Bcast, "adapt"}, {collectives.Alltoall, "pairwise"}} {
		a, _ := collectives.Lookup(algo.coll, algo.name)
		s, err := a.Build(collectives.Params{Ranks: 13, Count: 10007, ElemSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		host := sim.HostParams{EagerLimit: 4096, ReducePsPerByte: 100, Overhead: 500}
		for _, nets := range [][2]sim.NetworkFactory{{analytic, analytic}, {flow, flowOff}} {
			quiet, err := sim.Execute(sim.New(9), s, sim.Config{Network: nets[0], Host: host})
			if err != nil {
				t.Fatal(err)
			}
			off := &sim.Noise{}
			if err := off.SetStragglers(0, 1); err != nil {
				t.Fatal(err)
			}
			res, err := sim.Execute(sim.New(9), s, sim.Config{Network: nets[1], Host: host, Noise: off})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(quiet.Finish, res.Finish) || quiet.Events != res.Events {
				t.Errorf("%s/%s: noise off changed the run: %v against %v", algo.coll, algo.name, res.Finish, quiet.Finish)
			}
		}
	}
}

// TestFlowIncrementalMatchesWholeSolveWide is
// TestFlowIncrementalMatchesWholeSolve over more of what a run can be:
// every algorithm of every collective, links of unequal bandwidths,
// zero-latency links (every step's ends and starts fall at one instant:
// joins and leaves in one batch), a torus, several ranks per host, latency
// jitter. The incremental solver must give the whole-network solve's
// finish times and event count, bit for bit, with no fallback.
func TestFlowIncrementalMatchesWholeSolveWide(t *testing.T) {
	fast := topology.LinkSpec{Bandwidth: 12.5e9}
	link := topology.LinkSpec{Bandwidth: 5e9, Latency: 1e-7}
	slow := topology.LinkSpec{Bandwidth: 3e9, Latency: 3e-7}
	df, err := topology.Dragonfly(topology.DragonflySpec{P: 2, A: 3, H: 2, G: 5, Host: fast, Local: link, Global: slow})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := topology.FatTree(4, 2, fast, 2)
	if err != nil {
		t.Fatal(err)
	}
	torus, err := topology.Torus([]int{3, 3, 2}, link)
	if err != nil {
		t.Fatal(err)
	}
	algos := collectives.All()
	rapid.Check(t, func(rt *rapid.T) {
		topo := []*topology.Topology{df, tree, torus}[rapid.IntRange(0, 2).Draw(rt, "topology")]
		routing := RouteMinimal
		switch topo {
		case df:
			routing = rapid.SampledFrom([]string{RouteMinimal, RouteValiant, RouteUGAL}).Draw(rt, "routing")
		case tree:
			routing = rapid.SampledFrom([]string{RouteMinimal, RouteECMP}).Draw(rt, "routing")
		}
		slots := rapid.IntRange(1, 2).Draw(rt, "slots")
		ranks := rapid.IntRange(2, min(24, slots*topo.Hosts())).Draw(rt, "ranks")
		place, err := topology.Place(topology.PlaceRandom, ranks, topo.Hosts(), slots, rapid.Uint64().Draw(rt, "seed"))
		if err != nil {
			rt.Fatal(err)
		}
		a := algos[rapid.IntRange(0, len(algos)-1).Draw(rt, "algorithm")]
		s, err := a.Build(collectives.Params{Ranks: ranks, Count: rapid.SampledFrom([]int64{0, 1, 100, 4096}).Draw(rt, "count"), ElemSize: 4,
			NodeSize: rapid.SampledFrom([]int{1, 2, 4}).Draw(rt, "node size"), Segment: rapid.SampledFrom([]int64{0, 64}).Draw(rt, "segment")})
		if err != nil {
			rt.Skip("the algorithm does not take these parameters")
		}
		var jitter Jitter
		if rapid.Bool().Draw(rt, "jitter") {
			jitter = Jitter{Sigma: 200 * sim.Nanosecond, Lognormal: rapid.Bool().Draw(rt, "lognormal")}
		}
		eager := rapid.SampledFrom([]int64{0, 4096}).Draw(rt, "eager limit")
		res := incrementalAndWhole(rt, FlowConfig{Topology: topo, Placement: place, Local: fast, Routing: routing, Jitter: jitter}, s, 11, sim.HostParams{EagerLimit: eager, ReducePsPerByte: 50})
		if !slices.Equal(res[0].Finish, res[1].Finish) || res[0].Events != res[1].Events {
			rt.Fatalf("%s/%s on %d ranks of %s, %s routing: incremental %v (%d events), whole network %v (%d events)",
				a.Collective, a.Name, ranks, topo.Name(), routing, res[0].Finish, res[0].Events, res[1].Finish, res[1].Events)
		}
	})
}

// incrementalAndWhole runs s on the flow network of cfg twice, repairing
// the last solution at each change and solving every flow with
// MaxMinSolver, and fails if a repair fell back to solving from nothing.
func incrementalAndWhole(rt *rapid.T, cfg FlowConfig, s sim.Schedule, seed uint64, host sim.HostParams) [2]*sim.Result {
	var res [2]*sim.Result
	for i, whole := range []bool{false, true} {
		cfg.wholeNetwork = whole
		factory, err := Flow(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		var model *flowModel
		net := func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
			n, err := factory(eng, sink, ranks)
			model, _ = n.(*flowModel)
			return n, err
		}
		if res[i], err = sim.Execute(sim.New(seed), s, sim.Config{Network: net, Host: host}); err != nil {
			rt.Fatal(err)
		}
		if model.fallbacks != 0 {
			rt.Fatalf("%d sweeps fell back to solving from nothing", model.fallbacks)
		}
	}
	return res
}

// A message that cannot finish within the simulated clock's range, and
// flows that get no bandwidth at all, end the run with an error that says
// so; neither panics nor hangs.
func TestFlowUnfinishableMessages(t *testing.T) {
	run := func(bandwidth float64, second int64) error {
		cross, err := topology.Crossbar(3, topology.LinkSpec{Bandwidth: bandwidth, Latency: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		net, err := Flow(FlowConfig{Topology: cross, Placement: []int32{0, 1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		progs := []sim.Program{
			{{Kind: sim.OpSend, Peer: 1, Bytes: 1, Concurrent: true}, {Kind: sim.OpSend, Peer: 2, Bytes: second, Concurrent: true}},
			{{Kind: sim.OpRecv, Peer: 0, Bytes: 1}},
			{{Kind: sim.OpRecv, Peer: 0, Bytes: second}},
		}
		_, err = sim.Execute(sim.New(1), sim.FromPrograms("two", progs, 1), sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 1 << 40}})
		return err
	}
	// 1 B/s links: 10^7 bytes take 10^7 s, 116 days, past the clock's
	// 2^63 ps (106.8 days).
	if err := run(1, 1e7); !errors.Is(err, sim.ErrClockLimit) || !strings.Contains(err.Error(), "from rank 0 to rank 2") {
		t.Errorf("10^7 bytes at 1 B/s: %v", err)
	}
	// 9 x 10^6 bytes (104 days) still fit.
	if err := run(1, 9e6); err != nil {
		t.Errorf("9 x 10^6 bytes at 1 B/s: %v", err)
	}
	// Two flows on a link of 1 unit: 0 units each. (Links below 1 B/s,
	// 2^16 units, are refused, and a flow of each pair runs at a time, so
	// such a link is set here, past the check, rather than built.)
	factory, err := Flow(FlowConfig{Topology: mustCrossbar(t, 3, 1), Placement: []int32{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	tiny := func(eng *sim.Engine, sink sim.Sink, ranks int) (sim.Network, error) {
		n, err := factory(eng, sink, ranks)
		if m, ok := n.(*flowModel); ok {
			for l := range m.capUnits {
				m.capUnits[l] = 1
			}
		}
		return n, err
	}
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: 8, Concurrent: true}, {Kind: sim.OpSend, Peer: 2, Bytes: 8, Concurrent: true}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 8}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 8}},
	}
	_, err = sim.Execute(sim.New(1), sim.FromPrograms("two", progs, 1), sim.Config{Network: tiny, Host: sim.HostParams{EagerLimit: 1 << 40}})
	if err == nil || !strings.Contains(err.Error(), "gets no bandwidth") || !strings.Contains(err.Error(), "shared by 2 flows") {
		t.Errorf("two flows on 1 unit: %v", err)
	}
	// Below 1 B/s a link is refused: rounded down to whole units, 3e-5 B/s
	// (1.97 units) ran at half its speed.
	if _, err := Flow(FlowConfig{Topology: mustCrossbar(t, 2, 3e-5), Placement: []int32{0, 1}}); err == nil || !strings.Contains(err.Error(), "bandwidth 3e-05 B/s is outside the flow model's range, 1 to 7.04e+13 B/s") {
		t.Errorf("3e-5 B/s: %v", err)
	}
}

func mustCrossbar(t *testing.T, hosts int, bandwidth float64) *topology.Topology {
	t.Helper()
	c, err := topology.Crossbar(hosts, topology.LinkSpec{Bandwidth: bandwidth, Latency: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// timedInjector injects transfers at given times (arg: the index).
type timedInjector struct {
	net sim.Network
	trs []sim.Transfer
}

func (ti *timedInjector) Handle(arg uint64) { ti.net.Inject(ti.trs[arg]) }

// TestFlowGap: a NIC's gap, derived by hand on a crossbar of 1 µs links
// (2 µs a route, 10 GB/s: 1 MB is 100 µs) with a gap of 50 µs.
//   - Seven empty messages out of one host leave 50 µs apart: delivered
//     at 2, 52, ..., 302 µs.
//   - Seven empty messages into one host all arrive at 2 µs; its port
//     takes one in every 50 µs.
//   - Two 1 MB messages into host 0 from two hosts, sent at 0 and 100 µs
//     (no link shared): the first is in at 102 µs, the port busy until
//     2 + 100 + 50 = 152 µs, so the second, whose bytes are in at 202,
//     is taken in from 152 and handed over at 252 µs, as on the analytic
//     network.
//   - Seven 1 MB messages into one host at once share its link (each
//     has its last byte in at 702 µs, as without a gap); its port takes
//     them in from their heads' arrival (2 µs), 150 µs each (g + s/B):
//     message k is in by 102 + 150k, so five are handed over at 702, then
//     852 and 1002 µs, as on the analytic network; with a 1 ps gap all
//     at 702 (the bytes the link's sharing spread out once counted twice,
//     up to 1602 µs).
//   - Concurrent sends share their NIC's link as without a gap: seven
//     1 MB messages at once from one host, with a gap of 1 ps, arrive
//     within a nanosecond of their times without one, all at about 702
//     µs (a 1 ps gap once made them leave one after another, 100 µs
//     apart).
func TestFlowGap(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 1e-6}
	cross, _ := topology.Crossbar(8, link)
	run := func(gap sim.Time, trs []sim.Transfer, at []sim.Time) map[uint32]sim.Time {
		factory, err := Flow(FlowConfig{Topology: cross, Placement: []int32{0, 1, 2, 3, 4, 5, 6, 7}, Gap: gap})
		if err != nil {
			t.Fatal(err)
		}
		eng := sim.New(1)
		s := &sink{eng: eng, at: map[uint32]sim.Time{}}
		net, _ := factory(eng, s, 8)
		in := &timedInjector{net: net, trs: trs}
		id := eng.Register(in)
		for i := range trs {
			eng.At(at[i], id, uint64(i))
		}
		eng.Run()
		return s.at
	}
	fan := func(out bool, bytes int64) ([]sim.Transfer, []sim.Time) {
		var trs []sim.Transfer
		for i := int32(1); i < 8; i++ {
			tr := sim.Transfer{ID: uint32(i), Src: 0, Dst: i, Bytes: bytes}
			if !out {
				tr.Src, tr.Dst = i, 0
			}
			trs = append(trs, tr)
		}
		return trs, make([]sim.Time, len(trs))
	}
	const us = sim.Microsecond
	for _, out := range []bool{true, false} {
		trs, at := fan(out, 0)
		got := run(50*us, trs, at)
		var times []sim.Time
		for i := uint32(1); i < 8; i++ {
			times = append(times, got[i])
		}
		slices.Sort(times)
		for k, g := range times {
			if want := 2*us + sim.Time(k)*50*us; g != want {
				t.Errorf("empty messages (out of one host: %v): message %d of 7 delivered at %v, want %v", out, k+1, g, want)
			}
		}
	}
	got := run(50*us, []sim.Transfer{{ID: 1, Src: 1, Dst: 0, Bytes: 1e6}, {ID: 2, Src: 2, Dst: 0, Bytes: 1e6}}, []sim.Time{0, 100 * us})
	if got[1] != 102*us || got[2] != 252*us {
		t.Errorf("two 1 MB messages into one host, 100 µs apart: delivered at %v and %v, want 102µs and 252µs", got[1], got[2])
	}
	trs, at := fan(false, 1e6)
	for gap, want := range map[sim.Time][]sim.Time{
		50 * us:        {702 * us, 702 * us, 702 * us, 702 * us, 702 * us, 852 * us, 1002 * us},
		sim.Picosecond: {702 * us, 702 * us, 702 * us, 702 * us, 702 * us, 702 * us, 702 * us},
	} {
		got := run(gap, trs, at)
		var times []sim.Time
		for i := uint32(1); i < 8; i++ {
			times = append(times, got[i])
		}
		slices.Sort(times)
		for k := range times {
			if d := times[k] - want[k]; d < -sim.Nanosecond || d > sim.Nanosecond {
				t.Errorf("seven 1 MB messages into one host, gap %v: delivered at %v, want %v", gap, times, want)
				break
			}
		}
	}
	trs, at = fan(true, 1e6)
	without, with := run(0, trs, at), run(sim.Picosecond, trs, at)
	for i := uint32(1); i < 8; i++ {
		if d := with[i] - without[i]; d < -sim.Nanosecond || d > sim.Nanosecond {
			t.Errorf("concurrent 1 MB message %d: %d ps with a 1 ps gap, %d ps without", i, with[i], without[i])
		}
	}
	if _, err := Flow(FlowConfig{Topology: cross, Placement: []int32{0}, Gap: -1}); err == nil {
		t.Error("a negative gap was accepted")
	}
}
