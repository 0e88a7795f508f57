package cost

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// simulate runs a on a contention-free crossbar: host links of latency
// alpha/2 each way and bandwidth 1/beta, reductions at gamma.
func simulate(t *testing.T, a collectives.Algorithm, p collectives.Params, link topology.LinkSpec, gammaPs float64) sim.Time {
	t.Helper()
	return simulateHost(t, a, p, link, sim.HostParams{ReducePsPerByte: gammaPs, EagerLimit: 1 << 62}, 0)
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
// changes with their order.
func TestClosedFormsMatchSimulation(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6} // beta 100 ps/B, alpha 1.5µs
	for _, gammaPs := range []float64{30, 130} {
		t.Run(fmt.Sprint("gamma=", gammaPs, "ps"), func(t *testing.T) { closedFormsMatch(t, link, gammaPs) })
	}
}

func closedFormsMatch(t *testing.T, link topology.LinkSpec, gammaPs float64) {
	model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12}
	for _, a := range collectives.All() {
		if !Has(a) {
			continue // listed by TestClosedFormCoverage
		}
		t.Run(a.ID(), func(t *testing.T) {
			t.Parallel()
			exactSeen := 0
			for p := 1; p <= 40; p++ {
				for i, n := range []int64{0, 1, int64(p) - 1, int64(p) + 1, 3*int64(p) - 1, 4 * int64(p), 64, 1000} {
					if n < 0 {
						continue
					}
					// Roots vary; every other case is rooted at 0, and
					// small segments make pipelines of several segments.
					params := collectives.Params{Ranks: p, Count: n, Root: (7*p + 3) % p, Segment: int64(1 + i%3*7), GroupSize: groupSize(p), NodeSize: nodeSize(p, i)}
					if i%2 == 0 {
						params.Root = 0
					}
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
					got := simulate(t, a, params, link, gammaPs).Seconds()
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

// TestClosedFormCoverage lists the algorithms that have no closed form yet
// (the validation work adds them) and keeps those that have one covered.
func TestClosedFormCoverage(t *testing.T) {
	var missing []string
	for _, a := range collectives.All() {
		if !Has(a) {
			missing = append(missing, a.ID())
		}
	}
	t.Logf("%d algorithms without a closed form: %v", len(missing), missing)
	for _, id := range []string{"allreduce/ring", "allreduce/recursive_doubling", "allreduce/rabenseifner", "allreduce/reduce_bcast",
		"bcast/binomial", "allgather/ring", "reduce_scatter/ring", "alltoall/pairwise", "alltoall/linear", "barrier/dissemination"} {
		if _, ok := formulas[id]; !ok {
			t.Errorf("%s lost its closed form", id)
		}
	}
}

// nodeSize is a node size for the hierarchical algorithms: the largest
// divisor of p up to 6, or, every third case, 4 (a smaller last node when 4
// does not divide p).
func nodeSize(p, i int) int {
	if i%3 == 2 {
		return 4
	}
	return groupSize(p)
}

// groupSize is the largest divisor of p up to 6, a group size that fits.
func groupSize(p int) int {
	g := 1
	for d := 1; d <= 6; d++ {
		if p%d == 0 {
			g = d
		}
	}
	return g
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
					params := collectives.Params{Ranks: p, Count: n}
					if _, err := a.Build(params); err != nil {
						continue
					}
					pred, err := model.PredictLogGP(a, params, c.o, c.g)
					if errors.Is(err, ErrNoClosedForm) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					got := simulateHost(t, a, params, link, host, sim.FromSeconds(c.g)).Seconds()
					const tol = 1e-9
					if pred.Exact {
						exactSeen++
						if math.Abs(got-pred.Time) > tol*math.Max(pred.Time, 1e-12) {
							t.Errorf("%s o=%g g=%g p=%d count=%d: simulated %.12g s, LogGP form %.12g s", a.ID(), c.o, c.g, p, n, got, pred.Time)
						}
					} else if got < pred.Lower*(1-tol) || got > pred.Time*(1+tol) {
						t.Errorf("%s o=%g g=%g p=%d count=%d: simulated %.12g s outside [%.12g, %.12g]", a.ID(), c.o, c.g, p, n, got, pred.Lower, pred.Time)
					}
				}
			}
			if exactSeen == 0 {
				t.Errorf("%s: no exact case: the test proves nothing", a.ID())
			}
		}
	}
}
