package cost

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
	"pgregory.net/rapid"
)

// simulate runs a on a contention-free crossbar: host links of latency
// alpha/2 each way and bandwidth 1/beta, reductions at gamma, every
// message eager.
func simulate(t *testing.T, a collectives.Algorithm, p collectives.Params, link topology.LinkSpec, gammaPs float64) sim.Time {
	t.Helper()
	return simulateEager(t, a, p, link, gammaPs, 1<<62)
}

// simulateEager is simulate with messages above eager bytes sent by
// rendezvous.
func simulateEager(t *testing.T, a collectives.Algorithm, p collectives.Params, link topology.LinkSpec, gammaPs float64, eager int64) sim.Time {
	t.Helper()
	return simulateHost(t, a, p, link, sim.HostParams{ReducePsPerByte: gammaPs, EagerLimit: eager}, 0)
}

// simulateHost is simulate with host costs and a NIC gap.
func simulateHost(t *testing.T, a collectives.Algorithm, p collectives.Params, link topology.LinkSpec, host sim.HostParams, gap sim.Time) sim.Time {
	t.Helper()
	cross, err := topology.Crossbar(p.Ranks, link)
	if err != nil {
		t.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceBlock, p.Ranks, p.Ranks, 1, 0)
	net, err := network.Analytic(network.AnalyticConfig{Topology: cross, Placement: place, Gap: gap})
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return res.Makespan
}

// TestClosedFormsMatchSimulation: for every algorithm, every p in 1..40 and
// counts 0, 1, p-1, p+1, 3p-1, 4p, 64 and 1000, the simulated time on a
// contention-free crossbar equals the closed form to a relative 1e-9 where
// the formula says it is exact, and lies within its bounds otherwise.
// Parameters are whole picoseconds per byte, so no rounding enters. Both a
// reduction faster than the link (gamma 30 ps/B < beta 100 ps/B) and one
// slower (gamma 130 ps/B) are tried: which resource a rank waits for first
// changes with their order. With messages above 1 KiB sent by rendezvous
// (a request and a reply before the data: two more latencies), the forms
// priced with the handshake hold the same way: whole vectors of 129
// elements and more, blocks of some counts and not others, 8 KiB
// segments but not the small ones.
func TestClosedFormsMatchSimulation(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6} // beta 100 ps/B, alpha 1.5µs
	for _, c := range []struct {
		gammaPs float64
		eager   int64
	}{{30, 1 << 62}, {130, 1 << 62}, {130, 1024}} {
		name := fmt.Sprint("gamma=", c.gammaPs, "ps")
		if c.eager < 1<<62 {
			name += fmt.Sprint(",eager=", c.eager)
		}
		t.Run(name, func(t *testing.T) { closedFormsMatch(t, link, c.gammaPs, c.eager) })
	}
}

func closedFormsMatch(t *testing.T, link topology.LinkSpec, gammaPs float64, eager int64) {
	alpha := 2 * link.Latency
	model := Hockney{Alpha: alpha, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12, Handshake: 2 * alpha, EagerLimit: float64(eager)}
	for _, a := range collectives.All() {
		if !Has(a) {
			continue // listed by TestClosedFormCoverage
		}
		t.Run(a.ID(), func(t *testing.T) {
			t.Parallel()
			exactSeen := 0
			cases := CheckGrid()
			for _, params := range cases {
				p, n := params.Ranks, params.Count
				{
					if _, err := a.Build(params); err != nil {
						continue // the algorithm refuses these parameters (and says so)
					}
					pred, err := model.Predict(a, params)
					if errors.Is(err, ErrNoClosedForm) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					got := simulateEager(t, a, params, link, gammaPs, eager).Seconds()
					const tol = 1e-9
					if pred.Exact {
						exactSeen++
						if math.Abs(got-pred.Time) > tol*math.Max(pred.Time, 1e-12) {
							t.Errorf("p=%d count=%d: simulated %.12g s, closed form %.12g s (rel. error %.3g)",
								p, n, got, pred.Time, (got-pred.Time)/pred.Time)
						}
						continue
					}
					if got < pred.Lower*(1-tol) || got > pred.Time*(1+tol) {
						t.Errorf("p=%d count=%d: simulated %.12g s outside the bounds [%.12g, %.12g]", p, n, got, pred.Lower, pred.Time)
					}
				}
			}
			if exactSeen == 0 {
				t.Fatal("no case was exact: the test proves nothing")
			}
		})
	}
}

// TestClosedFormCoverage: every algorithm in the library has a closed form.
func TestClosedFormCoverage(t *testing.T) {
	for _, a := range collectives.All() {
		if !Has(a) {
			t.Errorf("%s has no closed form: every algorithm gets one (exact, or bounds)", a.ID())
		}
	}
}

// TestLogGPFormsMatchSimulation: on a crossbar whose hosts charge an
// overhead o per send and per receive and a NIC gap g per message, every
// LogGP form equals the analytic simulation where it says it is exact, and
// bounds it otherwise; with o and g that let latency set the pace, and with
// a gap longer than a hop, so that the NIC sets it.
func TestLogGPFormsMatchSimulation(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6} // beta 100 ps/B, alpha 1.5µs
	for _, c := range []struct{ o, g, gammaPs float64 }{{0.4e-6, 0.3e-6, 30}, {0.2e-6, 5e-6, 130}, {2e-6, 0, 30}} {
		model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: c.gammaPs * 1e-12}
		host := sim.HostParams{ReducePsPerByte: c.gammaPs, EagerLimit: 1 << 62, Overhead: sim.FromSeconds(c.o)}
		for _, a := range collectives.All() {
			if !HasLogGP(a) {
				continue
			}
			exactSeen := 0
			for p := 1; p <= 33; p++ {
				for _, n := range []int64{0, 1, int64(p) + 1, 4 * int64(p), 1000, 20000} {
					if checkLogGPForm(t, model, a, collectives.Params{Ranks: p, Count: n}, link, host, c.o, c.g) {
						exactSeen++
					}
				}
			}
			if exactSeen == 0 {
				t.Errorf("%s: no exact case: the test proves nothing", a.ID())
			}
		}
	}
}

// checkLogGPForm checks a's LogGP form for params against the analytic
// simulation on a crossbar of link whose hosts charge host and o and g:
// equal to 1e-9 where the form says it is exact, else within its bounds.
// It reports whether the form was exact (false also where a cannot run
// or has no form there).
func checkLogGPForm(t *testing.T, model Hockney, a collectives.Algorithm, params collectives.Params, link topology.LinkSpec, host sim.HostParams, o, g float64) bool {
	t.Helper()
	if _, err := a.Build(params); err != nil {
		return false
	}
	pred, err := model.PredictLogGP(a, params, o, g)
	if errors.Is(err, ErrNoClosedForm) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	got := simulateHost(t, a, params, link, host, sim.FromSeconds(g)).Seconds()
	const tol = 1e-9
	what := fmt.Sprintf("%s o=%g g=%g eager %d p=%d count=%d root %d", a.ID(), o, g, host.EagerLimit, params.Ranks, params.Count, params.Root)
	if pred.Exact {
		if math.Abs(got-pred.Time) > tol*math.Max(pred.Time, 1e-12) {
			t.Errorf("%s: simulated %.12g s, LogGP form %.12g s", what, got, pred.Time)
		}
		return true
	}
	if got < pred.Lower*(1-tol) || got > pred.Time*(1+tol) {
		t.Errorf("%s: simulated %.12g s outside [%.12g, %.12g]", what, got, pred.Lower, pred.Time)
	}
	return false
}

// TestLogGPLinearFormsRootsAndRendezvous: the linear algorithms' LogGP
// forms hold (exact, or bounds) for every root and with rendezvous above
// eager limits of 0, 64 and 1,024 bytes, where blocks can fall on both
// sides of the limit (a scatter then has no form).
func TestLogGPLinearFormsRootsAndRendezvous(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	for _, c := range []struct{ o, g float64 }{{0.4e-6, 0.3e-6}, {0, 0.3e-6}, {2e-6, 0}} {
		for _, eager := range []int64{0, 64, 1024} {
			model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: 30e-12, Handshake: 2 * 2 * link.Latency, EagerLimit: float64(eager)}
			host := sim.HostParams{ReducePsPerByte: 30, EagerLimit: eager, Overhead: sim.FromSeconds(c.o)}
			for _, id := range []string{"reduce/linear", "bcast/linear", "gather/linear", "scatter/linear", "allgather/linear", "allreduce/linear", "alltoall/linear"} {
				coll, name, _ := strings.Cut(id, "/")
				a, err := collectives.Lookup(collectives.Collective(coll), name)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range []int{2, 3, 8, 16} {
					for _, n := range []int64{1, 7, int64(p) + 1, 137, 1000} {
						for _, root := range []int{0, 1, p / 2, p - 1} {
							checkLogGPForm(t, model, a, collectives.Params{Ranks: p, Count: n, Root: root}, link, host, c.o, c.g)
						}
					}
				}
			}
		}
	}
}

// TestPipelinedBoundsProperty: the bounds of the forms whose upper bound
// is checked rather than derived (the segmented reduce trees, Linear
// Pipelining's allreduce, the double binary tree, scatter with a
// recursive-doubling allgather) hold on random machines and calls beyond
// TestClosedFormsMatchSimulation's grid: up to 64 ranks, 1 to 40 segments
// of 1 to 8,192 elements, reductions from 10x faster to 4x slower than the
// link, any root.
func TestPipelinedBoundsProperty(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	var algos []collectives.Algorithm
	for _, id := range [][2]string{{"reduce", "adapt"}, {"reduce", "segmented_binary"}, {"reduce", "segmented_binomial"}, {"bcast", "split_binary"}, {"allreduce", "linear_pipeline"}, {"allreduce", "double_binary_tree"}, {"bcast", "scatter_allgather_rd"}} {
		a, err := collectives.Lookup(collectives.Collective(id[0]), id[1])
		if err != nil {
			t.Fatal(err)
		}
		algos = append(algos, a)
	}
	rapid.Check(t, func(rt *rapid.T) {
		gammaPs := rapid.SampledFrom([]float64{10, 30, 100, 130, 400}).Draw(rt, "gamma_ps")
		model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12}
		p := rapid.IntRange(2, 64).Draw(rt, "ranks")
		seg := rapid.SampledFrom([]int64{1, 8, 100, 1024, 8192}).Draw(rt, "segment")
		k := rapid.Int64Range(1, 40).Draw(rt, "segments")
		params := collectives.Params{Ranks: p, Count: seg*(k-1) + rapid.Int64Range(1, seg).Draw(rt, "last"), Segment: seg, Root: rapid.IntRange(0, p-1).Draw(rt, "root")}
		a := rapid.SampledFrom(algos).Draw(rt, "algorithm")
		pred, err := model.Predict(a, params)
		if errors.Is(err, ErrNoClosedForm) {
			rt.Skip("no form for these ranks (scatter_allgather_rd: powers of two)")
		}
		if err != nil {
			rt.Fatal(err)
		}
		got := simulate(t, a, params, link, gammaPs).Seconds()
		if got < pred.Lower*(1-1e-9) || got > pred.Time*(1+1e-9) {
			rt.Fatalf("%s: simulated %.6g s outside [%.6g, %.6g]", a.ID(), got, pred.Lower, pred.Time)
		}
	})
}

// TestRendezvousFormsProperty: every form, priced with the handshake where
// its messages go by rendezvous, equals the simulation where it says it is
// exact and bounds it otherwise, on random calls beyond
// TestClosedFormsMatchSimulation's grid: any algorithm, 1 to 40 ranks, up
// to 20,000 elements, any root and segment, eager limits from none to 64
// KiB, reductions faster and slower than the link.
func TestRendezvousFormsProperty(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	var algos []collectives.Algorithm
	for _, a := range collectives.All() {
		if Has(a) {
			algos = append(algos, a)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.SampledFrom(algos).Draw(rt, "algorithm")
		p := rapid.IntRange(1, 40).Draw(rt, "ranks")
		params := collectives.Params{Ranks: p, Count: rapid.Int64Range(0, 20000).Draw(rt, "count"),
			Root: rapid.IntRange(0, p-1).Draw(rt, "root"), Segment: rapid.SampledFrom([]int64{0, 1, 100, 1024}).Draw(rt, "segment"),
			NodeSize: rapid.IntRange(1, 6).Draw(rt, "node"), GroupSize: groupSize(p)}
		eager := rapid.SampledFrom([]int64{0, 64, 1024, 8192, 65536}).Draw(rt, "eager")
		gammaPs := rapid.SampledFrom([]float64{30, 130}).Draw(rt, "gamma_ps")
		if _, err := a.Build(params); err != nil {
			rt.Skip("the algorithm refuses these parameters")
		}
		alpha := 2 * link.Latency
		model := Hockney{Alpha: alpha, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12, Handshake: 2 * alpha, EagerLimit: float64(eager)}
		pred, err := model.Predict(a, params)
		if errors.Is(err, ErrNoClosedForm) {
			rt.Skip("no form for these parameters")
		}
		if err != nil {
			rt.Fatal(err)
		}
		got := simulateEager(t, a, params, link, gammaPs, eager).Seconds()
		const tol = 1e-9
		if pred.Exact && math.Abs(got-pred.Time) > tol*math.Max(pred.Time, 1e-12) {
			rt.Fatalf("%s: simulated %.12g s, closed form %.12g s", a.ID(), got, pred.Time)
		}
		if !pred.Exact && (got < pred.Lower*(1-tol) || got > pred.Time*(1+tol)) {
			rt.Fatalf("%s: simulated %.12g s outside [%.12g, %.12g]", a.ID(), got, pred.Lower, pred.Time)
		}
	})
}

// Predict refuses what no call can be: a negative count was priced as a
// negative time and 2^62 elements of 8 B overflowed to one, both marked
// exact (a new user's trial); 2^59 elements of 8 B (4 EiB) are priced.
func TestPredictRefusesImpossibleCalls(t *testing.T) {
	m := Hockney{Alpha: 1e-6, Beta: 80e-12, Gamma: 100e-12}
	ring, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int64{-5, 1 << 60, 1<<62 + 5} {
		if p, err := m.Predict(ring, collectives.Params{Ranks: 4, Count: c}); err == nil {
			t.Errorf("count %d: %+v, no error", c, p)
		}
	}
	if p, err := m.Predict(ring, collectives.Params{Ranks: 4, Count: 1 << 59}); err != nil || !(p.Time > 0) {
		t.Errorf("count 2^59: %+v, %v", p, err)
	}
}

// Open MPI's linear gathers and scatters take the other ranks in rank
// order 0, 1, ..., p-1, whatever the root (collsim's own linear ones start
// from the root's neighbour): above the eager limit, where each block
// waits for the call before it or for its port, the ranks other than the
// root finish in that order. 4 ranks, root 2, blocks of 128 KiB.
func TestRankOrderLinearOrder(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	cross, err := topology.Crossbar(4, link)
	if err != nil {
		t.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceBlock, 4, 4, 1, 0)
	net, err := network.Analytic(network.AnalyticConfig{Topology: cross, Placement: place})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gather/basic_linear", "gather/linear_sync", "scatter/basic_linear", "scatter/linear_nb"} {
		c, name, _ := strings.Cut(id, "/")
		a, err := collectives.Lookup(collectives.Collective(c), name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := a.Build(collectives.Params{Ranks: 4, Count: 4 << 14, Root: 2})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{EagerLimit: 64 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Finish; !(f[0] < f[1] && f[1] < f[3]) {
			t.Errorf("%s: ranks 0, 1, 3 finish at %v, %v, %v; want that order", id, f[0], f[1], f[3])
		}
	}
}

// linear_sync's rest follows its first segment once that send is
// complete: 2 ranks, blocks of 8 KiB, a first segment of 4 KiB, both
// above an eager limit of 1 KiB, a route latency a of 1.5 us and 10 GB/s.
// By hand: the go-ahead reaches rank 1 at a; the first segment's request,
// reply and data take it to 4a + 4096 beta, its last byte leaving at 3a +
// 4096 beta; only then does the rest's request leave, whose reply is back
// at 5a + 4096 beta and whose data arrives at 6a + 8192 beta = 9.8192 us.
// (The rest's request sent at once, beside the first's, gave 4a + 8192
// beta: an audit's surviving mutant.)
func TestLinearSyncRestWaitsForTheFirstSegment(t *testing.T) {
	a, err := collectives.Lookup(collectives.Gather, "linear_sync")
	if err != nil {
		t.Fatal(err)
	}
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	got := simulateEager(t, a, collectives.Params{Ranks: 2, Count: 2048, Segment: 512}, link, 0, 1024)
	if want := sim.FromSeconds(6*1.5e-6 + 8192e-10); got != want {
		t.Errorf("simulated %v, want %v", got, want)
	}
}

// The chains' rendezvous forms bound a call by (p-1 + k-1) segment
// journeys, a request, a reply and the data each (gridBound), where they
// bounded it by k whole journeys down the chain: 5 ranks, 16 segments of
// 1,024 elements (8 KiB, above a 1 KiB eager limit), alpha 1.5 us (a
// handshake 3 us), 100 ps/B, 130 ps/B to reduce. By hand: a journey w =
// 1.5 + 3 + 0.8192 = 5.3192 us, 19 of them 101.0648 us for the bcast
// (the old bound: 16 x 4 x 5.3192 = 340.4288 us); the reduce's adds the
// segment's 1.06496 us reduction to each, 121.29904 us. The simulation
// lies between the eager form and the bound.
func TestChainRendezvousGridBound(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	m := Hockney{Alpha: 1.5e-6, Beta: 1e-10, Gamma: 130e-12, Handshake: 3e-6, EagerLimit: 1024}
	for _, c := range []struct {
		id   string
		want float64
	}{{"bcast/chain", 101.0648e-6}, {"reduce/chain", 121.29904e-6}} {
		coll, name, _ := strings.Cut(c.id, "/")
		a, err := collectives.Lookup(collectives.Collective(coll), name)
		if err != nil {
			t.Fatal(err)
		}
		params := collectives.Params{Ranks: 5, Count: 16 * 1024, Segment: 1024}
		pred, err := m.Predict(a, params)
		if err != nil {
			t.Fatal(err)
		}
		if pred.Exact || math.Abs(pred.Time-c.want) > 1e-9*c.want {
			t.Errorf("%s: bound %.10g s (exact %v), want %.10g s", c.id, pred.Time, pred.Exact, c.want)
		}
		got := simulateEager(t, a, params, link, 130, 1024).Seconds()
		if got < pred.Lower*(1-1e-9) || got > pred.Time*(1+1e-9) {
			t.Errorf("%s: simulated %.10g s outside [%.10g, %.10g]", c.id, got, pred.Lower, pred.Time)
		}
	}
}

// The double binary tree pipelines its segments where reductions are
// slower than the links (1,000 ps/B against 100): each rank reduces a
// segment and passes it on before it reduces the next, as NCCL's kernel
// does, so 8 MiB on 16 ranks takes about one rank's reductions, n gamma
// = 8.39 ms, plus moving its half twice each way, 2 n beta = 1.68 ms: at
// most 10.07 ms, and at least the 8.39 (the eagerly arrived later segments' reductions took the
// CPU before the segment in hand was sent on, and each level of the tree
// waited for all of them: 23.8 ms; an audit).
func TestDoubleTreePipelinesSlowReductions(t *testing.T) {
	a, err := collectives.Lookup(collectives.Allreduce, "double_binary_tree")
	if err != nil {
		t.Fatal(err)
	}
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	n := float64(1 << 23)
	limit := n*1000e-12 + 2*n*100e-12
	got := simulateEager(t, a, collectives.Params{Ranks: 16, Count: 1 << 20}, link, 1000, 1<<62).Seconds()
	if got > limit || got < n*1000e-12 {
		t.Errorf("8 MiB on 16 ranks: %.4g ms, outside n gamma = %.4g ms and n gamma + 2 n beta = %.4g ms", got*1e3, n*1000e-12*1e3, limit*1e3)
	}
}

// Open MPI's recursive-doubling barrier, by hand with alpha = 1: on 3 ranks
// rank 0 has rank 2's message at 1, rank 1 has rank 0's at 2, and rank 0's
// synchronous send to 2 has its acknowledgement back at 1 + 2 = 3; on 6
// ranks 0 and 1 start at 1, their round with each other ends at 2, 2 and
// 3 end their first round at 1 and their second at 3, 0 and 1 at 2, whose
// acknowledgements are back at 4; on 7 ranks 0..2 start at 1, 3 at 0,
// the first round (0-1, 2-3) ends at 2, 2, 1, 2, the second (0-2, 1-3) at
// 2, 3, 3, 3, and the acknowledgements come back 2 later: rank 0's at 4,
// ranks 1's and 2's at 5; on 8 ranks, 3 rounds.
//
// The tree barrier: rank r is popcount(r) hops below rank 0; the deepest of
// 5 ranks (3) is 2 hops down, of 12 ranks (7, 11) 3: 4 us and 6 us, there
// and back (the form said 2 ceil(log2 p): 6 and 8; an audit).
func TestBarrierRecursiveDoublingByHand(t *testing.T) {
	tree, _ := collectives.Lookup(collectives.Barrier, "tree")
	for p, want := range map[int]float64{5: 4, 12: 6, 8: 6} {
		pred, err := (Hockney{Alpha: 1e-6}).Predict(tree, collectives.Params{Ranks: p})
		if err != nil || math.Abs(pred.Time-want*1e-6) > 1e-15 || !pred.Exact {
			t.Errorf("tree on %d ranks: %v (exact %v, %v), want %g us", p, pred.Time, pred.Exact, err, want)
		}
		if got := simulate(t, tree, collectives.Params{Ranks: p}, topology.LinkSpec{Bandwidth: 1e9, Latency: 0.5e-6}, 0); got != sim.Time(want)*sim.Microsecond {
			t.Errorf("tree on %d ranks: simulated %v, want %g us", p, got, want)
		}
	}
	a, _ := collectives.Lookup(collectives.Barrier, "recursive_doubling")
	m := Hockney{Alpha: 1e-6}
	for p, want := range map[int]float64{1: 0, 2: 1, 3: 3, 6: 4, 7: 5, 8: 3} {
		pred, err := m.Predict(a, collectives.Params{Ranks: p})
		if err != nil || math.Abs(pred.Time-want*1e-6) > 1e-15 || !pred.Exact {
			t.Errorf("%d ranks: %v (exact %v, %v), want %g us", p, pred.Time, pred.Exact, err, want)
		}
		got := simulate(t, a, collectives.Params{Ranks: p}, topology.LinkSpec{Bandwidth: 1e9, Latency: 0.5e-6}, 0)
		if got != sim.Time(want)*sim.Microsecond {
			t.Errorf("%d ranks: simulated %v, want %g us", p, got, want)
		}
	}
}

// A call of no elements sends nothing (collectives.SendsNothing): every
// form prices it at 0, as its simulation takes 0, and the lower bound is
// 0; a barrier is priced as ever.
func TestZeroCountPricedAtZero(t *testing.T) {
	m := Hockney{Alpha: 1e-6, Beta: 1e-9, Gamma: 1e-10, Handshake: 2e-6}
	levels := Levels{Local: m, Global: Hockney{Alpha: 3e-6, Beta: 2e-9, Gamma: 1e-10}}
	priced := 0
	for _, a := range collectives.All() {
		if !Has(a) {
			continue
		}
		p := collectives.Params{Ranks: 8, NodeSize: 4, GroupSize: 4}
		pred, err := m.Predict(a, p)
		if err != nil {
			continue // refused for these parameters
		}
		priced++
		// Two levels' forms too (two_level's priced 2 us: the test audit).
		if lp, err := levels.Predict(a, p); err != nil || (a.Collective == collectives.Barrier) != (lp.Time > 0) {
			t.Errorf("%s of no elements on two levels: %g s, %v", a.ID(), lp.Time, err)
		}
		if barrier := a.Collective == collectives.Barrier; barrier != (pred.Time > 0) || !pred.Exact && !barrier {
			t.Errorf("%s of no elements: %g s (exact %v)", a.ID(), pred.Time, pred.Exact)
		}
		if b, err := m.LowerBound(a.Collective, p); err != nil || a.Collective != collectives.Barrier && b.Time != 0 {
			t.Errorf("%s of no elements: lower bound %+v, %v", a.ID(), b, err)
		}
	}
	if priced < 40 {
		t.Errorf("only %d algorithms priced a call of no elements on 8 ranks", priced)
	}
}
