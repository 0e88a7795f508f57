package collsim

import (
	"math"
	"testing"

	"github.com/collsim/collsim/sim"
)

// TestExtremesNamesTheLargest: a run past the clock's limit names the
// schedule's longest compute step and largest message, wherever they are
// in a rank's program and whichever rank has them (the workload test's
// messages were all one size, which told largest from any other apart).
func TestExtremesNamesTheLargest(t *testing.T) {
	progs := []sim.Program{
		{{Kind: sim.OpSend, Peer: 1, Bytes: 8}, {Kind: sim.OpCalc, Dur: 3 * sim.Microsecond}, {Kind: sim.OpSend, Peer: 2, Bytes: 100}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 8}, {Kind: sim.OpCalc, Dur: 5 * sim.Microsecond}, {Kind: sim.OpSend, Peer: 2, Bytes: 50}},
		{{Kind: sim.OpRecv, Peer: 0, Bytes: 100}, {Kind: sim.OpRecv, Peer: 1, Bytes: 50}, {Kind: sim.OpSend, Peer: 0, Bytes: 4096}, {Kind: sim.OpCalc, Dur: 1 * sim.Microsecond}},
	}
	progs[0] = append(progs[0], sim.Op{Kind: sim.OpRecv, Peer: 2, Bytes: 4096})
	got := extremes(sim.FromPrograms("x", progs, 1))
	if want := "; its longest compute step is 5µs, on rank 1, and its largest message 4KiB, from rank 2"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := extremes(sim.FromPrograms("none", []sim.Program{{}, {}}, 1)); got != "" {
		t.Errorf("no ops: %q", got)
	}
}

// METG is found as Task Bench's scripts/chart_metg.py finds it: the
// smallest granularity at 50% or more, moved along the line to the next
// shorter kernel's point where that one is below 50% with a smaller
// granularity. By hand: between (60%, 3.3 us) and (40%, 2.5 us) the line
// crosses 50% half way, at 2.9 us; between (55.6%, 4.394 us) and (38.5%,
// 3.173 us), an audit's sweep, at 4.394 - 0.056 x 1.221 / 0.171 = 3.994
// us. Without a point below 50% after it, or where the next is no finer,
// it is the point's own granularity; with none at 50%, NaN.
func TestMETGInterpolatesAsTaskBench(t *testing.T) {
	pt := func(eff, gran float64) TaskBenchPoint { return TaskBenchPoint{Efficiency: eff, Granularity: gran} }
	for _, c := range []struct {
		name  string
		curve []TaskBenchPoint
		want  float64
	}{
		{"half way", []TaskBenchPoint{pt(0.8, 5e-6), pt(0.6, 3.3e-6), pt(0.4, 2.5e-6)}, 2.9e-6},
		{"the audit's sweep", []TaskBenchPoint{pt(0.9, 20e-6), pt(0.556, 4.394e-6), pt(0.385, 3.173e-6), pt(0.2, 3.0e-6)}, 4.394e-6 - 0.056*1.221e-6/0.171},
		{"no point below after it", []TaskBenchPoint{pt(0.9, 20e-6), pt(0.7, 6e-6)}, 6e-6},
		{"the next no finer", []TaskBenchPoint{pt(0.7, 6e-6), pt(0.3, 7e-6)}, 6e-6},
		{"exactly 50%", []TaskBenchPoint{pt(0.5, 20e-6), pt(0.3, 14e-6)}, 20e-6},
		// Two points of one granularity at 50% or more: the first, as
		// Python's min keeps it, whose next is no finer (the second would
		// be moved to 2.667 us).
		{"a tie", []TaskBenchPoint{pt(0.6, 3e-6), pt(0.55, 3e-6), pt(0.4, 2e-6)}, 3e-6},
	} {
		if got := metgOf(c.curve); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: METG %g, want %g", c.name, got, c.want)
		}
	}
	if got := metgOf([]TaskBenchPoint{pt(0.4, 3e-6), pt(0.2, 2e-6)}); !math.IsNaN(got) {
		t.Errorf("no point at 50%%: METG %g, want NaN", got)
	}
}
