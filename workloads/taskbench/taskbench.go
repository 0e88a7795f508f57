// Package taskbench simulates Task Bench (Slaughter et al., "Task Bench:
// a parameterized benchmark for evaluating parallel runtime performance",
// SC 2020): task graphs of W columns and T timesteps whose tasks depend on
// tasks of the timestep before by a pattern, each task a kernel of a
// given duration plus the runtime system's per-task overhead, outputs sent
// to every dependent task on another rank.
//
// The patterns are Task Bench's own (its core's dependence functions):
// which points exist at each timestep (dom widens and narrows, tree
// doubles) and which points of the timestep before each depends on. The
// one difference: random_nearest draws its edges from collsim's seeded
// hash, not Task Bench's, so its graphs are other samples of the same
// distribution.
package taskbench

import (
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads"
)

// The dependence patterns.
var Patterns = []string{"trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom", "tree", "fft", "all_to_all", "nearest", "spread", "random_nearest"}

// patternParams are the patterns that read each of a graph's pattern
// parameters; no other pattern reads it.
var patternParams = map[string][]string{
	"radix":    {"nearest", "spread", "random_nearest"},
	"period":   {"spread", "random_nearest"},
	"fraction": {"random_nearest"},
}

// Readers are the patterns that read a pattern parameter: "radix",
// "period" or "fraction".
func Readers(param string) []string { return patternParams[param] }

// Graph is one task graph.
type Graph struct {
	Width, Steps int
	Pattern      string
	// Radix (nearest, spread, random_nearest), Period (spread,
	// random_nearest: how many dependence sets cycle; 0 means 3) and
	// Fraction (random_nearest: the share of candidate edges kept).
	Radix, Period int
	Fraction      float64
	// Output is the bytes each task sends to each dependent task.
	Output int64
	// Duration is each task's kernel; Imbalance, when set, scales each
	// task's by a seeded factor 1 + (u - 1/2) Imbalance, u uniform in
	// [0, 1), as Task Bench's load_imbalance kernel scales its iterations
	// (mean 1; Imbalance at most 2).
	Duration  sim.Time
	Imbalance float64
	Seed      uint64
	// Index is the graph's place among the job's graphs: it enters the
	// seeded draws (the imbalance, random_nearest's edges), as Task
	// Bench's graph_index enters its own, so that graphs of one job
	// given one Seed draw differently (with one set of draws for every
	// graph, a slow task was slow in every graph on its rank, and several
	// graphs never averaged imbalance out: an audit).
	Index int
}

// Check refuses a graph that cannot run.
func (g *Graph) Check() error {
	switch {
	case g.Width < 1 || g.Steps < 1:
		return fmt.Errorf("task graph %dx%d: width and steps must be at least 1", g.Width, g.Steps)
	case !slices.Contains(Patterns, g.Pattern):
		return fmt.Errorf("pattern %q; valid: %v", g.Pattern, Patterns)
	case slices.Contains(Readers("radix"), g.Pattern) && g.Radix < 1:
		return fmt.Errorf("pattern %s needs a radix of at least 1", g.Pattern)
	case slices.Contains(Readers("period"), g.Pattern) && g.Period < 0:
		return fmt.Errorf("pattern %s with a period of %d: at least 1 (0 means Task Bench's 3)", g.Pattern, g.Period)
	case g.Pattern == "spread" && g.Radix > g.Width:
		return fmt.Errorf("spread with radix %d over %d columns: at most the width", g.Radix, g.Width)
	case g.Pattern == "spread" && g.period() > (g.Width+g.Radix-1)/g.Radix:
		// Task Bench's check: a longer period wraps a later dependence set
		// onto an earlier one's columns, so that a task would depend on one
		// task twice.
		return fmt.Errorf("spread with radix %d over %d columns and a period of %d: the period can be at most ceil(width/radix) = %d, as Task Bench requires (give --period)",
			g.Radix, g.Width, g.period(), (g.Width+g.Radix-1)/g.Radix)
	case g.Fraction < 0 || g.Fraction > 1 || math.IsNaN(g.Fraction):
		return fmt.Errorf("fraction connected %g outside [0, 1]", g.Fraction)
	case g.Output < 0 || g.Duration < 0 || !(g.Imbalance >= 0):
		return fmt.Errorf("output bytes, duration and imbalance must not be negative")
	case g.Imbalance > 2:
		return fmt.Errorf("imbalance %g: at most 2, as Task Bench's -imbalance (a task's kernel is scaled by 1 + (u - 1/2) imbalance, u uniform in [0, 1): 2 ranges from nothing to twice the kernel)", g.Imbalance)
	case float64(g.Duration)*(1+g.Imbalance/2) > float64(maxTask):
		return fmt.Errorf("a task of %v stretched by up to %g: at most an hour a task", g.Duration, 1+g.Imbalance/2)
	case g.Width >= collectives.MaxP2PTag:
		return fmt.Errorf("width %d: at most %d columns", g.Width, collectives.MaxP2PTag-1)
	}
	return nil
}

func (g *Graph) period() int {
	if g.Period > 0 {
		return g.Period
	}
	return 3
}

// Span returns the first point and the number of points at timestep t.
func (g *Graph) Span(t int) (offset, width int) {
	W, T := g.Width, g.Steps
	switch g.Pattern {
	case "dom":
		return max(0, t+W-T), min(W, t+1, T-t)
	case "tree":
		if t >= 62 {
			return 0, W
		}
		return 0, min(W, 1<<t)
	}
	return 0, W
}

// dset is the dependence set of timestep t.
func (g *Graph) dset(t int) int {
	switch g.Pattern {
	case "fft":
		s := int(math.Ceil(math.Log2(float64(g.Width))))
		if s == 0 {
			return 0
		}
		return (t + s - 1) % s
	case "spread", "random_nearest":
		return t % g.period()
	}
	return 0
}

// Deps returns the points of timestep t-1 that point p of timestep t
// depends on, in increasing order (none at timestep 0).
func (g *Graph) Deps(t, p int) []int {
	if t == 0 {
		return nil
	}
	W := g.Width
	var out []int
	span := func(lo, hi int) {
		for q := lo; q <= hi; q++ {
			out = append(out, q)
		}
	}
	switch g.Pattern {
	case "trivial":
	case "no_comm":
		out = []int{p}
	case "stencil_1d":
		span(max(0, p-1), min(p+1, W-1))
	case "stencil_1d_periodic":
		span(max(0, p-1), min(p+1, W-1))
		if p-1 < 0 {
			out = append(out, W-1)
		}
		if p+1 >= W {
			out = append(out, 0)
		}
	case "dom":
		span(max(0, p-1), p)
	case "tree":
		out = []int{p / 2}
	case "fft":
		d := 1 << g.dset(t)
		if p-d >= 0 {
			out = append(out, p-d)
		}
		out = append(out, p)
		if p+d < W {
			out = append(out, p+d)
		}
	case "all_to_all":
		span(0, W-1)
	case "nearest":
		span(max(0, p-g.Radix/2), min(p+(g.Radix-1)/2, W-1))
	case "spread":
		ds := g.dset(t)
		for i := range g.Radix {
			q := p + i*W/g.Radix
			if i > 0 {
				q += ds
			}
			out = append(out, q%W)
		}
	case "random_nearest":
		ds := g.dset(t)
		for q := max(0, p-g.Radix/2); q <= min(p+(g.Radix-1)/2, W-1); q++ {
			if q == p || g.uniform(uint64(g.Index), uint64(ds), uint64(q), uint64(p)) < g.Fraction {
				out = append(out, q)
			}
		}
	}
	// Only points that exist at t-1, each once, in order.
	lo, n := g.Span(t - 1)
	out = slices.DeleteFunc(out, func(q int) bool { return q < lo || q >= lo+n })
	slices.Sort(out)
	return slices.Compact(out)
}

// uniform is a seeded hash of its arguments in [0, 1): the same for the
// same graph and arguments in every run.
func (g *Graph) uniform(vals ...uint64) float64 {
	h := g.Seed ^ 0x9e3779b97f4a7c15
	for _, v := range vals {
		h ^= v + 0x9e3779b97f4a7c15 + h<<6 + h>>2
		h = splitmix(h)
	}
	return float64(h>>11) / (1 << 53)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Dependents returns the points of timestep t+1 that depend on point p of
// timestep t, in increasing order: Deps read backwards.
func (g *Graph) Dependents(t, p int) []int {
	if t+1 >= g.Steps {
		return nil
	}
	W := g.Width
	var cand []int
	span := func(lo, hi int) {
		for d := max(lo, 0); d <= min(hi, W-1); d++ {
			cand = append(cand, d)
		}
	}
	switch g.Pattern {
	case "trivial":
	case "no_comm":
		cand = []int{p}
	case "stencil_1d", "stencil_1d_periodic":
		span(p-1, p+1)
		if g.Pattern == "stencil_1d_periodic" {
			cand = append(cand, (p+1)%W, (p-1+W)%W)
		}
	case "dom":
		span(p, p+1)
	case "tree":
		span(2*p, 2*p+1)
	case "fft":
		d := 1 << g.dset(t+1)
		span(p-d, p-d)
		cand = append(cand, p)
		span(p+d, p+d)
	case "all_to_all":
		lo, n := g.Span(t + 1)
		span(lo, lo+n-1)
		return cand // every point of t+1 depends on every point of t
	case "nearest", "random_nearest":
		span(p-(g.Radix-1)/2, p+g.Radix/2)
	case "spread":
		ds := g.dset(t + 1)
		for i := range g.Radix {
			q := p - i*W/g.Radix
			if i > 0 {
				q -= ds
			}
			cand = append(cand, ((q%W)+W)%W)
		}
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	lo, n := g.Span(t + 1)
	return slices.DeleteFunc(cand, func(d int) bool {
		return d < lo || d >= lo+n || !slices.Contains(g.Deps(t+1, d), p)
	})
}

// taskTime is task (t, p)'s kernel.
func (g *Graph) taskTime(t, p int) sim.Time {
	if g.Imbalance == 0 {
		return g.Duration
	}
	return sim.Time(math.Round(float64(g.Duration) * (1 + g.Imbalance*(g.uniform(0xba1a, uint64(g.Index), uint64(t), uint64(p))-0.5))))
}

// maxTask bounds a task's kernel and overhead, so that their sums (and a
// rank's run of tasks) stay far from the clock's limit.
const maxTask = 3600 * sim.Second

// maxTasks bounds a job's tasks, all graphs' together: twice the README's
// largest graph (8,192 x 1,000, 8.2 M tasks, 704 MB and 15 s).
const maxTasks = 1 << 24

// Job is one run of one or more task graphs on ranks (one per core, as
// Task Bench's MPI implementation runs).
type Job struct {
	Graphs []Graph
	Ranks  int
	// Overhead is the runtime system's cost per task, on the rank's CPU.
	Overhead sim.Time
	// Runtime is how ranks run their tasks: RuntimeMPI (the default) or
	// RuntimeAsync.
	Runtime string
}

// The runtimes a Job runs its graphs as.
const (
	// RuntimeMPI is Task Bench's MPI implementation (mpi/nonblock.cc): the
	// graphs one after another; in each timestep a rank posts the
	// receives of its tasks' remote inputs and the sends of its last
	// step's outputs, waits for all of them, then runs its tasks of the
	// step one after another.
	RuntimeMPI = "mpi"
	// RuntimeAsync runs each task, in the rank's order, as soon as its own
	// inputs are in, and sends its output as soon as it is done; the
	// graphs' timesteps interleave (step t of every graph, then step
	// t+1).
	RuntimeAsync = "async"
)

// Runtimes are the values of Job.Runtime.
var Runtimes = []string{RuntimeMPI, RuntimeAsync}

// Check refuses a job that cannot run.
func (j *Job) Check() error {
	if len(j.Graphs) == 0 {
		return fmt.Errorf("no task graph")
	}
	if j.Ranks < 1 {
		return fmt.Errorf("ranks must be at least 1, not %d", j.Ranks)
	}
	if j.Overhead < 0 || j.Overhead > maxTask {
		return fmt.Errorf("per-task overhead %v: from 0 to an hour", j.Overhead)
	}
	if j.Runtime != "" && !slices.Contains(Runtimes, j.Runtime) {
		return fmt.Errorf("runtime %q; valid: %v", j.Runtime, Runtimes)
	}
	if len(j.Graphs)*j.Graphs[0].Width >= collectives.MaxP2PTag {
		return fmt.Errorf("too many columns in all")
	}
	tasks := 0.0
	for i := range j.Graphs {
		g := &j.Graphs[i]
		if err := g.Check(); err != nil {
			return fmt.Errorf("graph %d: %w", i, err)
		}
		if tasks += float64(g.Width) * float64(g.Steps); tasks > maxTasks {
			// --steps 2000000000 ran out of memory after hours (an audit).
			return fmt.Errorf("%.0f tasks or more (columns x steps over the graphs): at most %d; use fewer steps or columns", tasks, maxTasks)
		}
		if g.Width < j.Ranks {
			return fmt.Errorf("graph %d: %d columns over %d ranks leaves ranks without a column; use at least as many columns as ranks", i, g.Width, j.Ranks)
		}
	}
	return nil
}

// owner is the rank of point p of a width-W graph over R ranks: rank r
// holds points r W / R to (r+1) W / R - 1, as Task Bench's MPI
// implementation deals them (mpi/nonblock.cc's first_point and
// last_point); the largest r with r W / R <= p. (collsim gave the first W
// mod R ranks a column more: at W = 10 over 4 ranks, 3, 3, 2, 2 columns
// where Task Bench has 2, 3, 2, 3, which changes a tree's or dom's time.)
func owner(W, R, p int) int {
	return int((int64(p+1)*int64(R) - 1) / int64(W))
}

// columns is rank r's first column and count.
func columns(W, R, r int) (int, int) {
	first := int(int64(r) * int64(W) / int64(R))
	return first, int(int64(r+1)*int64(W)/int64(R)) - first
}

// UsefulWork is the sum of every task's kernel in seconds (not the
// overhead): what efficiency divides by elapsed time x cores. Summed in
// floating point: millions of long tasks would overflow the clock.
func (j *Job) UsefulWork() float64 {
	var total float64
	for gi := range j.Graphs {
		g := &j.Graphs[gi]
		for t := range g.Steps {
			lo, n := g.Span(t)
			for p := lo; p < lo+n; p++ {
				total += g.taskTime(t, p).Seconds()
			}
		}
	}
	return total
}

// Tasks is how many tasks the job runs.
func (j *Job) Tasks() int64 {
	var n int64
	for gi := range j.Graphs {
		g := &j.Graphs[gi]
		for t := range g.Steps {
			_, w := g.Span(t)
			n += int64(w)
		}
	}
	return n
}

// Composition returns the job as per-rank programs, run as j.Runtime
// runs them.
func (j *Job) Composition() (collectives.Composition, error) {
	if err := j.Check(); err != nil {
		return collectives.Composition{}, err
	}
	return collectives.Composition{
		Name:  "taskbench",
		Ranks: j.Ranks,
		Script: func(r int) collectives.Script {
			rs := &rankScript{j: j, r: r, last: make([]map[int]int32, len(j.Graphs))}
			if j.Runtime == RuntimeAsync {
				return &workloads.Phased{Fill: rs.fillAsync}
			}
			return &workloads.Phased{Fill: rs.fillMPI}
		},
	}, nil
}

type rankScript struct {
	j    *Job
	r    int
	t    int
	last []map[int]int32 // async, per graph: point -> its task's item in the step before
	// mpi: the graph and step fillMPI writes next, and the items the
	// next step's posting follows (what the rank did last).
	graph int
	gate  []int32
}

// fillMPI writes one timestep of one graph as Task Bench's MPI
// implementation runs it (RuntimeMPI).
func (rs *rankScript) fillMPI(w *workloads.Writer) bool {
	j := rs.j
	for rs.graph < len(j.Graphs) && rs.t == j.Graphs[rs.graph].Steps {
		rs.graph, rs.t = rs.graph+1, 0
	}
	if rs.graph == len(j.Graphs) {
		return false
	}
	g, gi, t := &j.Graphs[rs.graph], rs.graph, rs.t
	rs.t++
	W, R := g.Width, j.Ranks
	first, n := columns(W, R, rs.r)
	lo, width := g.Span(t)
	lastLo, lastWidth := 0, 0 // the points of the step before
	if t > 0 {
		lastLo, lastWidth = g.Span(t - 1)
	}
	gate := rs.gate
	var reqs []int32
	for p := first; p < first+n; p++ {
		if p >= lo && p < lo+width {
			for _, q := range g.Deps(t, p) {
				if o := owner(W, R, q); o != rs.r {
					reqs = append(reqs, w.Add(collectives.Item{Kind: collectives.Recv, Async: true, Peer: o, Tag: gi*W + q, Bytes: g.Output, After: gate}))
				}
			}
		}
		if p >= lastLo && p < lastLo+lastWidth {
			for _, d := range g.Dependents(t-1, p) {
				if o := owner(W, R, d); o != rs.r {
					reqs = append(reqs, w.Add(collectives.Item{Kind: collectives.Send, Async: true, Peer: o, Tag: gi*W + p, Bytes: g.Output, After: gate}))
				}
			}
		}
	}
	if len(reqs) > 0 {
		gate = reqs // MPI_Waitall: the step's tasks wait for every request
	}
	for p := max(first, lo); p < min(first+n, lo+width); p++ {
		task := w.Add(collectives.Item{Kind: collectives.Compute, Dur: g.taskTime(t, p) + j.Overhead, After: gate})
		gate = []int32{task}
	}
	rs.gate = gate
	return true
}

// fillAsync writes one timestep of every graph as RuntimeAsync runs it:
// a rank posts the receives of its tasks' remote inputs, runs each task
// (kernel plus overhead) once its inputs are in and the task before it is
// done, and sends its output to each dependent task on another rank.
func (rs *rankScript) fillAsync(w *workloads.Writer) bool {
	j := rs.j
	steps := 0
	for _, g := range j.Graphs {
		steps = max(steps, g.Steps)
	}
	if rs.t == steps {
		return false
	}
	t := rs.t
	rs.t++
	for gi := range j.Graphs {
		g := &j.Graphs[gi]
		if t >= g.Steps {
			continue
		}
		W, R := g.Width, j.Ranks
		first, n := columns(W, R, rs.r)
		lo, width := g.Span(t)
		now := map[int]int32{}
		for p := max(first, lo); p < min(first+n, lo+width); p++ {
			var after []int32
			for _, q := range g.Deps(t, p) {
				if o := owner(W, R, q); o != rs.r {
					after = append(after, w.Add(collectives.Item{Kind: collectives.Recv, Async: true, Peer: o, Tag: gi*W + q, Bytes: g.Output}))
				} else if idx, ok := rs.last[gi][q]; ok {
					after = append(after, idx)
				}
			}
			task := w.Add(collectives.Item{Kind: collectives.Compute, Dur: g.taskTime(t, p) + j.Overhead, After: after})
			now[p] = task
			for _, d := range g.Dependents(t, p) {
				if o := owner(W, R, d); o != rs.r {
					w.Add(collectives.Item{Kind: collectives.Send, Async: true, Peer: o, Tag: gi*W + p, Bytes: g.Output, After: []int32{task}})
				}
			}
		}
		rs.last[gi] = now
	}
	return true
}
