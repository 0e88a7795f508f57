package taskbench_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/taskbench"
)

// TestDependenceSets: each pattern's dependencies, for chosen points,
// against a table written from Task Bench's definitions (W = 8 columns,
// points of timestep t depend on points of t-1).
func TestDependenceSets(t *testing.T) {
	cases := []struct {
		g       taskbench.Graph
		t, p    int
		want    []int
		comment string
	}{
		{taskbench.Graph{Pattern: "trivial"}, 1, 3, nil, "no dependencies"},
		{taskbench.Graph{Pattern: "no_comm"}, 1, 3, []int{3}, "itself"},
		{taskbench.Graph{Pattern: "stencil_1d"}, 1, 3, []int{2, 3, 4}, "neighbours"},
		{taskbench.Graph{Pattern: "stencil_1d"}, 1, 0, []int{0, 1}, "cut at the edge"},
		{taskbench.Graph{Pattern: "stencil_1d_periodic"}, 1, 0, []int{0, 1, 7}, "wraps"},
		{taskbench.Graph{Pattern: "stencil_1d_periodic"}, 1, 7, []int{0, 6, 7}, "wraps"},
		{taskbench.Graph{Pattern: "dom", Steps: 20}, 1, 1, []int{0}, "p-1 and p, p not yet at t-1 (width 1)"},
		{taskbench.Graph{Pattern: "dom", Steps: 20}, 3, 2, []int{1, 2}, "p-1 and p"},
		{taskbench.Graph{Pattern: "tree"}, 3, 5, []int{2}, "parent p/2"},
		{taskbench.Graph{Pattern: "fft"}, 1, 3, []int{2, 3, 4}, "dset (1+3-1)%3 = 0: distance 1"},
		{taskbench.Graph{Pattern: "fft"}, 2, 3, []int{1, 3, 5}, "dset 1: distance 2"},
		{taskbench.Graph{Pattern: "fft"}, 3, 3, []int{3, 7}, "dset 2: distance 4, 3-4 < 0"},
		{taskbench.Graph{Pattern: "all_to_all"}, 1, 5, []int{0, 1, 2, 3, 4, 5, 6, 7}, "everything"},
		{taskbench.Graph{Pattern: "nearest", Radix: 5}, 1, 3, []int{1, 2, 3, 4, 5}, "p-2..p+2"},
		{taskbench.Graph{Pattern: "nearest", Radix: 4}, 1, 3, []int{1, 2, 3, 4}, "p-radix/2..p+(radix-1)/2"},
		{taskbench.Graph{Pattern: "nearest", Radix: 5}, 1, 7, []int{5, 6, 7}, "cut at the edge"},
		{taskbench.Graph{Pattern: "spread", Radix: 2, Period: 3}, 1, 1, []int{1, 6}, "p and p+W/2+dset (dset 1)"},
		{taskbench.Graph{Pattern: "spread", Radix: 2, Period: 3}, 3, 1, []int{1, 5}, "dset 0"},
		{taskbench.Graph{Pattern: "random_nearest", Radix: 3, Fraction: 0}, 1, 3, []int{3}, "fraction 0: itself only"},
		{taskbench.Graph{Pattern: "random_nearest", Radix: 3, Fraction: 1}, 1, 3, []int{2, 3, 4}, "fraction 1: the whole window"},
		{taskbench.Graph{Pattern: "no_comm"}, 0, 3, nil, "timestep 0 depends on nothing"},
	}
	for _, c := range cases {
		g := c.g
		g.Width = 8
		if g.Steps == 0 {
			g.Steps = 6
		}
		if got := g.Deps(c.t, c.p); !slices.Equal(got, c.want) {
			t.Errorf("%s t=%d p=%d (%s): %v, want %v", g.Pattern, c.t, c.p, c.comment, got, c.want)
		}
	}
	// dom's and tree's spans: dom widens then narrows, tree doubles.
	dom := taskbench.Graph{Pattern: "dom", Width: 3, Steps: 5}
	var spans [][2]int
	for ts := range 5 {
		lo, n := dom.Span(ts)
		spans = append(spans, [2]int{lo, n})
	}
	if want := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {2, 1}}; !slices.Equal(spans, want) {
		t.Errorf("dom spans %v, want %v", spans, want)
	}
	tree := taskbench.Graph{Pattern: "tree", Width: 5, Steps: 5}
	for ts, want := range []int{1, 2, 4, 5, 5} {
		if _, n := tree.Span(ts); n != want {
			t.Errorf("tree width at %d: %d, want %d", ts, n, want)
		}
	}
}

// TestDependentsInvertDeps: for every pattern, q depends on p exactly when
// p lists q among its dependents.
func TestDependentsInvertDeps(t *testing.T) {
	for _, pat := range taskbench.Patterns {
		for _, w := range []int{1, 5, 8, 13} {
			g := taskbench.Graph{Pattern: pat, Width: w, Steps: 7, Radix: 3, Period: 2, Fraction: 0.5, Seed: 9}
			for ts := range g.Steps - 1 {
				lo, n := g.Span(ts)
				for p := lo; p < lo+n; p++ {
					var want []int
					nlo, nn := g.Span(ts + 1)
					for d := nlo; d < nlo+nn; d++ {
						if slices.Contains(g.Deps(ts+1, d), p) {
							want = append(want, d)
						}
					}
					if got := g.Dependents(ts, p); !slices.Equal(got, want) {
						t.Fatalf("%s W=%d t=%d p=%d: dependents %v, want %v", pat, w, ts, p, got, want)
					}
				}
			}
		}
	}
}

// TestNoCommunicationMETG: with no communication a rank runs its W/R
// tasks a step one after another, each its kernel d plus the overhead o:
// the run takes T (W/R) (d + o), efficiency is d / (d + o), and the
// smallest granularity (elapsed x cores / tasks = d + o) with efficiency
// of at least 50% is at d = o: 2o, Task Bench's rule of thumb.
func TestNoCommunicationMETG(t *testing.T) {
	const W, R, T = 16, 4, 5
	o := 10 * sim.Microsecond
	for _, pat := range []string{"trivial", "no_comm"} {
		for _, d := range []sim.Time{o / 4, o, 4 * o} {
			j := taskbench.Job{Ranks: R, Overhead: o, Graphs: []taskbench.Graph{{Pattern: pat, Width: W, Steps: T, Duration: d}}}
			comp, err := j.Composition()
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.FixedLatency(sim.Microsecond)})
			if err != nil {
				t.Fatal(err)
			}
			if want := sim.Time(T*W/R) * (d + o); res.Makespan != want {
				t.Errorf("%s d=%v: %v, want %v", pat, d, res.Makespan, want)
			}
			eff := j.UsefulWork() / (res.Makespan.Seconds() * R)
			if want := float64(d) / float64(d+o); fmt.Sprintf("%.9f", eff) != fmt.Sprintf("%.9f", want) {
				t.Errorf("%s d=%v: efficiency %g, want %g", pat, d, eff, want)
			}
		}
	}
}

// Every pattern runs to the end on ranks that share columns unevenly
// (no deadlock, every message received).
func TestEveryPatternRuns(t *testing.T) {
	for _, pat := range taskbench.Patterns {
		for _, r := range []int{1, 3, 5} {
			j := taskbench.Job{Ranks: r, Overhead: sim.Microsecond, Graphs: []taskbench.Graph{
				{Pattern: pat, Width: 11, Steps: 6, Radix: 3, Fraction: 0.5, Output: 64, Duration: sim.Microsecond, Imbalance: 0.5, Seed: 1},
				{Pattern: "stencil_1d", Width: 11, Steps: 4, Output: 16, Duration: sim.Microsecond},
			}}
			comp, err := j.Composition()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.RandomLatency(3 * sim.Microsecond)}); err != nil {
				t.Errorf("%s on %d ranks: %v", pat, r, err)
			}
		}
	}
}

// Inputs that would divide by zero or run the clock past its limit are
// refused.
func TestRefusals(t *testing.T) {
	g := taskbench.Graph{Pattern: "stencil_1d", Width: 4, Steps: 2, Duration: sim.Microsecond}
	for name, j := range map[string]taskbench.Job{
		"no ranks":        {Ranks: 0, Graphs: []taskbench.Graph{g}},
		"fewer columns":   {Ranks: 8, Graphs: []taskbench.Graph{g}},
		"huge overhead":   {Ranks: 2, Overhead: sim.MaxTime / 2, Graphs: []taskbench.Graph{g}},
		"huge imbalance":  {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "stencil_1d", Width: 4, Steps: 2, Duration: sim.Second, Imbalance: 1e300}}},
		"NaN imbalance":   {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "stencil_1d", Width: 4, Steps: 2, Imbalance: math.NaN()}}},
		"no graph":        {Ranks: 2},
		"unknown pattern": {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "zigzag", Width: 4, Steps: 2}}},
		"negative period": {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "spread", Width: 4, Steps: 2, Radix: 2, Period: -2}}},
		// Task Bench refuses a spread whose period passes ceil(W/radix):
		// 4 columns, radix 4, Task Bench's default period 3 (> 1) made
		// task (1, 0) depend on column 0 twice.
		"spread period past ceil(W/radix)": {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "spread", Width: 4, Steps: 3, Radix: 4}}},
		"spread 16/8, period 3":            {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "spread", Width: 16, Steps: 3, Radix: 8}}},
		"spread 5/2, period 4":             {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "spread", Width: 5, Steps: 3, Radix: 2, Period: 4}}}, // ceil(5/2) = 3
		// Task Bench's -imbalance is at most 2 (a factor 1 + (u - 1/2) i
		// below 0 past it).
		"imbalance past 2": {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "stencil_1d", Width: 4, Steps: 2, Duration: sim.Microsecond, Imbalance: 2.01}}},
		// 2^24 tasks at most, over every graph: --steps 2000000000 ran
		// out of memory (an audit).
		"steps 2e9":            {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "stencil_1d", Width: 4, Steps: 2e9}}},
		"two graphs past 2^24": {Ranks: 2, Graphs: []taskbench.Graph{{Pattern: "trivial", Width: 4, Steps: 1 << 21}, {Pattern: "trivial", Width: 4, Steps: 1<<21 + 1}}},
	} {
		if err := j.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Task Bench's limits hold exactly at their edges: a spread's period of
// ceil(W/radix) (16 columns, radix 8: 2) and an imbalance of 2 run.
func TestTaskBenchLimitsAccepted(t *testing.T) {
	for name, g := range map[string]taskbench.Graph{
		"spread 16/8, period 2": {Pattern: "spread", Width: 16, Steps: 3, Radix: 8, Period: 2},
		"spread 5/2, period 3":  {Pattern: "spread", Width: 5, Steps: 3, Radix: 2, Period: 3}, // ceil(5/2), not 5/2 rounded down
		"imbalance 2":           {Pattern: "stencil_1d", Width: 4, Steps: 2, Duration: sim.Microsecond, Imbalance: 2},
		"2^24 tasks":            {Pattern: "trivial", Width: 4, Steps: 1 << 22},
	} {
		j := taskbench.Job{Ranks: 2, Graphs: []taskbench.Graph{g}}
		if err := j.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// --imbalance is Task Bench's: each kernel scaled by 1 + (u - 1/2)
// imbalance, u uniform in [0, 1), so the kernels' mean stays the
// duration. One column of 4,000 tasks of 100 us on one rank, no overhead:
// the run takes 0.4 s, within 2% (the mean of 4,000 draws of a factor
// whose spread is imbalance/sqrt(12) strays by under 0.5% at one
// standard deviation for imbalance 1, 0.9% for 2), where stretching by
// [1, 1 + imbalance) took 0.6 s and 0.8 s; the kernels counted as useful
// work sum to the same 0.4 s within 2%.
func TestImbalanceIsTaskBenchs(t *testing.T) {
	const n, d = 4000, 100 * sim.Microsecond
	for _, imb := range []float64{1, 2} {
		j := taskbench.Job{Ranks: 1, Graphs: []taskbench.Graph{{Pattern: "no_comm", Width: 1, Steps: n, Duration: d, Imbalance: imb, Seed: 1}}}
		comp, err := j.Composition()
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.RandomLatency(0)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Makespan.Seconds(), float64(n)*d.Seconds(); math.Abs(got/want-1) > 0.02 {
			t.Errorf("imbalance %g: %d tasks of %v took %.4g s, want %.4g s within 2%%", imb, n, d, got, want)
		}
		if got, want := j.UsefulWork(), float64(n)*d.Seconds(); math.Abs(got/want-1) > 0.02 {
			t.Errorf("imbalance %g: kernels sum to %.4g s, want %.4g s within 2%%", imb, got, want)
		}
	}
}

// finishes runs j with every message eager, taking lat, and returns when
// each rank finished.
func finishes(t *testing.T, j taskbench.Job, lat sim.Time) []sim.Time {
	t.Helper()
	comp, err := j.Composition()
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.FixedLatency(lat), Host: sim.HostParams{EagerLimit: 1 << 16}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Finish
}

func makespan(t *testing.T, j taskbench.Job, lat sim.Time) sim.Time {
	return slices.Max(finishes(t, j, lat))
}

// Columns are dealt as Task Bench's MPI implementation deals them: rank r
// holds points r W / R to (r+1) W / R - 1, at W = 10 over 4 ranks 0-1,
// 2-4, 5-6 and 7-9. A tree of 4 steps (1, 2, 4 and 8 points, each
// depending on point p/2), tasks of 1 ms, no overhead: by hand, rank 0
// runs point 0 (0-1 ms), points 0 and 1 (1-3), points 0 and 1 again
// (3-5); rank 1 takes (1,1)'s output at 3 ms, runs points 2 and 3 (3-5),
// then at step 3 points 2, 3 and 4 once (2,1)'s output is in (5-8 ms):
// 8 ms and the messages' latency. Dealing the first W mod R ranks a
// column more put points 0-2 on rank 0, three tasks at steps 2 and 3: 9
// ms.
func TestColumnsAsTaskBenchMPI(t *testing.T) {
	const ms = sim.Millisecond
	j := taskbench.Job{Ranks: 4, Graphs: []taskbench.Graph{{Pattern: "tree", Width: 10, Steps: 4, Output: 16, Duration: ms}}}
	if got := makespan(t, j, sim.Nanosecond); got < 8*ms || got > 8*ms+10*sim.Nanosecond {
		t.Errorf("tree 10 x 4 on 4 ranks: %v, want 8 ms and two latencies", got)
	}
}

// Under RuntimeMPI (Task Bench's mpi/nonblock.cc) a rank sends its step's
// outputs only when it starts the next step, waits for all its inputs
// before running any task of the step, and runs the graphs one after
// another; under RuntimeAsync each task runs (in the rank's order) once
// its own inputs are in and sends at once, and the graphs' steps
// interleave. By hand, with tasks of 1 ms, no overhead and messages of L
// = 100 us:
//   - one stencil_1d of 4 columns over 2 ranks, 2 steps: under MPI each
//     rank runs its two tasks of step 0 (0-2 ms), the ranks exchange the
//     border outputs (in at 2 ms + L), and each runs step 1: both finish
//     at 4 ms + L. Async, rank 1 sends (0,2) at 1 ms; rank 0 runs (1,0),
//     all local, at 2-3 ms and (1,1) at 3-4: rank 0 finishes at 4 ms;
//     rank 1's (1,2) waits for (0,1), sent at 2 ms: 4 ms + L.
//   - two stencil_1d graphs of 2 columns over 2 ranks, 2 steps each: MPI
//     runs graph 0 (step 0 at 0-1 ms, the exchange, step 1 at 1 ms + L to
//     2 ms + L), then graph 1 the same way: 4 ms + 2L. Async: step 0 of
//     graph 0 then of graph 1 (0-2 ms), graph 0's outputs in at 1 ms + L,
//     graph 1's at 2 ms + L; step 1 of graph 0 at 2-3 ms and of graph 1 at
//     3-4 ms: 4 ms.
func TestRuntimesByHand(t *testing.T) {
	const ms, L = sim.Millisecond, 100 * sim.Microsecond
	stencil := func(w int) taskbench.Graph {
		return taskbench.Graph{Pattern: "stencil_1d", Width: w, Steps: 2, Output: 16, Duration: ms}
	}
	for _, c := range []struct {
		name       string
		graphs     []taskbench.Graph
		mpi, async []sim.Time
	}{
		{"one graph, 4 columns", []taskbench.Graph{stencil(4)}, []sim.Time{4*ms + L, 4*ms + L}, []sim.Time{4 * ms, 4*ms + L}},
		{"two graphs, 2 columns", []taskbench.Graph{stencil(2), stencil(2)}, []sim.Time{4*ms + 2*L, 4*ms + 2*L}, []sim.Time{4 * ms, 4 * ms}},
	} {
		for rt, want := range map[string][]sim.Time{taskbench.RuntimeMPI: c.mpi, "": c.mpi, taskbench.RuntimeAsync: c.async} {
			if got := finishes(t, taskbench.Job{Ranks: 2, Runtime: rt, Graphs: c.graphs}, L); !slices.Equal(got, want) {
				t.Errorf("%s, runtime %q: ranks finish at %v, want %v", c.name, rt, got, want)
			}
		}
	}
}

// The graphs of one job draw their imbalance and random_nearest's edges
// apart, as Task Bench's draws take the graph's index: two graphs alike
// but for Index, given one seed, differ in their kernels' sum and in some
// task's dependencies (with one set of draws, a slow task was slow in
// every graph on its rank).
func TestGraphsDrawApart(t *testing.T) {
	g := taskbench.Graph{Pattern: "random_nearest", Width: 64, Steps: 20, Radix: 5, Fraction: 0.5, Duration: sim.Millisecond, Imbalance: 1, Seed: 7}
	h := g
	h.Index = 1
	work := func(g taskbench.Graph) float64 {
		return (&taskbench.Job{Ranks: 1, Graphs: []taskbench.Graph{g}}).UsefulWork()
	}
	if work(g) == work(h) {
		t.Errorf("graphs 0 and 1 drew the same kernels: %g s", work(g))
	}
	same := true
	for step := 1; step < g.Steps && same; step++ {
		for p := range g.Width {
			if !slices.Equal(g.Deps(step, p), h.Deps(step, p)) {
				same = false
				break
			}
		}
	}
	if same {
		t.Error("graphs 0 and 1 drew the same random_nearest edges")
	}
}
