package collsim_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// TestPipelineSegmentNearTheSimulatedBest: the segment Tune chooses for a
// pipeline runs, on the analytic network, within 10% of the fastest of a
// grid of segments (powers of four elements, and the whole vector) that
// the simulator itself times, on machines that charge nothing per message
// and 1 us per send and receive, above and below the eager limit. The
// expected value is the simulator's, not the model's: the model only has
// to point at a segment the simulation finds good.
func TestPipelineSegmentNearTheSimulatedBest(t *testing.T) {
	base, err := configs.Resolve("fattree-1024")
	if err != nil {
		t.Fatal(err)
	}
	charged := *base
	charged.Host.Overhead = sim.Microsecond
	algos := [][2]string{{"bcast", "chain"}, {"reduce", "chain"}, {"allreduce", "linear_pipeline"}}
	ranks := []int{2, 5, 24}
	sizes := []int64{256 << 10, 1 << 20}
	if testing.Short() {
		ranks, sizes = []int{5}, []int64{256 << 10}
	}
	for _, m := range []*configs.Machine{base, &charged} {
		for _, id := range algos {
			a, err := collectives.Lookup(collectives.Collective(id[0]), id[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ranks {
				for _, size := range sizes {
					name := fmt.Sprintf("%s/%s o=%s P=%d %s", id[0], id[1], m.Host.Overhead, p, configs.FormatBytes(size))
					params, err := collsim.Call(a.Collective, p, size, 8, 0)
					if err != nil {
						t.Fatal(err)
					}
					place, err := m.Place(p, "", 1)
					if err != nil {
						t.Fatal(err)
					}
					h, _ := collsim.Hockney(m, place)
					chosen, why := collsim.PipelineSegment(a, collsim.TuneModelOf(m, h), p, params.Count, 8)
					timeOf := func(seg int64) float64 {
						q := params
						q.Segment = seg
						res, err := (&collsim.Experiment{Machine: m}).RunAlgorithm(a, q)
						if err != nil {
							t.Fatalf("%s segment %d: %v", name, seg, err)
						}
						return res.Time
					}
					best, bestSeg := math.Inf(1), int64(0)
					for seg := int64(16); ; seg = min(4*seg, params.Count) {
						if tm := timeOf(seg); tm < best {
							best, bestSeg = tm, seg
						}
						if seg == params.Count {
							break
						}
					}
					got := timeOf(chosen)
					t.Logf("%s: chosen %d elements %.4g s; grid best %d elements %.4g s (%.3f)", name, chosen, got, bestSeg, best, got/best)
					if got > 1.10*best {
						t.Errorf("%s: the chosen segment, %d elements, takes %.4g s, more than 10%% over the grid's best, %d elements at %.4g s (%s)", name, chosen, got, bestSeg, best, why)
					}
				}
			}
		}
	}
}

// TestPipelineSegmentBounds: whatever the machine and call, the segment is
// a whole number of elements between one and the vector, and the call's
// messages stay within the budget of 2^22 (or one segment, when even that
// passes it), saying so when the budget sets the segment.
func TestPipelineSegmentBounds(t *testing.T) {
	const budget = 1 << 22
	algos := [][2]string{{"bcast", "chain"}, {"reduce", "chain"}, {"allreduce", "linear_pipeline"}}
	rapid.Check(t, func(rt *rapid.T) {
		id := rapid.SampledFrom(algos).Draw(rt, "algorithm")
		a, err := collectives.Lookup(collectives.Collective(id[0]), id[1])
		if err != nil {
			rt.Fatal(err)
		}
		p := rapid.IntRange(2, 1<<16).Draw(rt, "p")
		count := rapid.Int64Range(0, 1<<31).Draw(rt, "count")
		elem := rapid.Int64Range(1, 16).Draw(rt, "elem")
		tm := collsim.TuneModel{
			Hockney: cost.Hockney{
				Alpha:      rapid.Float64Range(0, 1e-4).Draw(rt, "alpha"),
				Beta:       rapid.Float64Range(1e-13, 1e-8).Draw(rt, "beta"),
				Gamma:      rapid.Float64Range(0, 1e-8).Draw(rt, "gamma"),
				EagerLimit: float64(rapid.Int64Range(0, 1<<20).Draw(rt, "eager")),
			},
			Overhead: rapid.Float64Range(0, 1e-5).Draw(rt, "o"),
			Gap:      rapid.Float64Range(0, 1e-5).Draw(rt, "g"),
		}
		tm.Hockney.Handshake = 2 * tm.Hockney.Alpha
		seg, why := collsim.PipelineSegment(a, tm, p, count, elem)
		if seg < 1 || seg > max(count, 1) {
			rt.Fatalf("segment %d elements, not within 1..%d", seg, max(count, 1))
		}
		sends := int64(1)
		if id[1] == "linear_pipeline" {
			sends = 2
		}
		messages := (count + seg - 1) / seg * sends * int64(p-1)
		if messages > max(budget, sends*int64(p-1)) {
			rt.Fatalf("segment %d elements makes %d messages, over the budget", seg, messages)
		}
		if count > 0 && why == "" {
			rt.Fatalf("segment %d chosen without a word", seg)
		}
	})
}

// TestPipelineSegmentSaysWhatSetIt: where the message budget keeps the
// segment above the model's best (1,024 ranks of fattree-1024, which
// charges nothing per message: the model's time falls down to one
// element), the note says the budget set it; where the model's best lies
// within the budget (64 ranks, 1 MiB), it does not. A huge vector (2^61
// elements) is cut without overflow.
func TestPipelineSegmentSaysWhatSetIt(t *testing.T) {
	m, err := configs.Resolve("fattree-1024")
	if err != nil {
		t.Fatal(err)
	}
	chain, err := collectives.Lookup(collectives.Bcast, "chain")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p      int
		count  int64
		budget bool
	}{{1024, 2 << 20, true}, {1024, 128 << 20, true}, {64, 128 << 10, false}, {2, 1 << 61, false}, {1024, 1 << 61, true}} {
		place, err := m.Place(min(tc.p, m.Slots()), "", 1)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := collsim.Hockney(m, place)
		seg, why := collsim.PipelineSegment(chain, collsim.TuneModelOf(m, h), tc.p, tc.count, 8)
		if says := strings.Contains(why, "keep the call within 4194304 messages"); says != tc.budget || seg < 1 || seg > tc.count {
			t.Errorf("P=%d, %d elements: segment %d, %q; want the budget named: %t", tc.p, tc.count, seg, why, tc.budget)
		}
	}
}
