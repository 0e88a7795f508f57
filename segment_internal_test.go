package collsim

import (
	"math"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// TestPipelineTimeFirstTrip: the segment model's first trip, checked
// against the analytic simulation where the pipeline is one segment (its
// whole time): each of the P-1 hops of a chain sends (o), crosses the
// crossbar (alpha + n beta, alpha two links' latency) and is taken in (o),
// and the reduce chain's hops reduce it too (n gamma): (P-1)(alpha + n beta
// + 2o [+ n gamma]), by hand. (Leaving out the 2o of the first trip had
// gone unnoticed by the tests that compare chosen segments.)
func TestPipelineTimeFirstTrip(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.5e-6}
	const o, gammaPs, count = 0.7e-6, 100, 1000
	n := float64(count * 8)
	for _, c := range []collectives.Collective{collectives.Bcast, collectives.Reduce} {
		a, err := collectives.Lookup(c, "chain")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{2, 3, 5, 8} {
			tm := TuneModel{Hockney: cost.Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12}, Overhead: o}
			pl, ok := pipelineOf(a, p)
			if !ok {
				t.Fatalf("%s: no pipeline", a.ID())
			}
			model := tm.time(pl, n, n)
			hop := 2*link.Latency + n/link.Bandwidth + 2*o
			if c == collectives.Reduce {
				hop += n * gammaPs * 1e-12
			}
			byHand := float64(p-1) * hop
			cross, err := topology.Crossbar(p, link)
			if err != nil {
				t.Fatal(err)
			}
			place, _ := topology.Place(topology.PlaceBlock, p, p, 1, 0)
			net, err := network.Analytic(network.AnalyticConfig{Topology: cross, Placement: place})
			if err != nil {
				t.Fatal(err)
			}
			s, err := a.Build(collectives.Params{Ranks: p, Count: count, Segment: count})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: sim.HostParams{Overhead: sim.FromSeconds(o), ReducePsPerByte: gammaPs, EagerLimit: 1 << 62}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Makespan.Seconds()
			if math.Abs(model-byHand) > 1e-9*byHand || math.Abs(got-byHand) > 1e-9*byHand {
				t.Errorf("%s P=%d, one segment: model %g s, simulated %g s, by hand %g s", a.ID(), p, model, got, byHand)
			}
		}
	}
}

// TestTuneNeedsAModelOnlyWhereAnOptionIsOpen: run skips making the
// machine's model (every route priced) when openOption says Tune has
// nothing to choose, so for every algorithm, on 2-64 ranks, Tune given a
// real model must then leave the parameters as they were and say nothing;
// and where an option is open it must be the one Tune fills in.
func TestTuneNeedsAModelOnlyWhereAnOptionIsOpen(t *testing.T) {
	model := TuneModel{Hockney: cost.Hockney{Alpha: 1e-6, Beta: 1e-10, Gamma: 1e-10, EagerLimit: 65536}}
	opened := map[tunedOption]int{}
	for _, a := range collectives.All() {
		for _, ranks := range []int{2, 7, 16, 64} {
			p, err := Call(a.Collective, ranks, 1<<20, 8, 0)
			if err != nil {
				continue // a collective whose sizes do not split so
			}
			open := openOption(a, p)
			opened[open]++
			q := p
			why := Tune(a, &q, model)
			switch open {
			case openNothing:
				if q != p || why != "" {
					t.Errorf("%s on %d ranks: nothing open, yet Tune changed %+v to %+v (%q)", a.ID(), ranks, p, q, why)
				}
			case openSegment:
				if q.Segment == 0 {
					t.Errorf("%s on %d ranks: its segment is open, and Tune left it 0", a.ID(), ranks)
				}
			}
		}
	}
	for _, o := range []tunedOption{openNothing, openSegment, openSuaraGrid} {
		if opened[o] == 0 {
			t.Errorf("no algorithm had option %d open: the test checked nothing of it", o)
		}
	}
	// What Tune does, not which option it says is open: SUARA's grid is
	// chosen on 16 and 64 ranks, with L left at its default (2) or given
	// as 2, and not for L = 3 or a grid given.
	suara, err := collectives.Lookup(collectives.Allreduce, "suara")
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{16, 64} {
		for _, c := range []struct {
			steps, groups int
			chosen        bool
		}{{0, 0, true}, {2, 0, true}, {3, 0, false}, {0, 4, false}} {
			p, err := Call(collectives.Allreduce, ranks, 1<<20, 8, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.Steps, p.Groups = c.steps, c.groups
			q := p
			why := Tune(suara, &q, model)
			if chosen := q.Groups > 0 && q.Groups != c.groups && why != ""; chosen != c.chosen {
				t.Errorf("suara on %d ranks, L %d, G %d: grid chosen %v (%+v, %q), want %v", ranks, c.steps, c.groups, chosen, q, why, c.chosen)
			}
		}
	}
}
