package collsim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/workers"
	"github.com/collsim/collsim/workloads/dnn"
	"github.com/collsim/collsim/workloads/fft"
	"github.com/collsim/collsim/workloads/taskbench"
)

type workersGroup = workers.Group

// RunComposition runs a composed program (a workload's) on the
// experiment's machine, network, placement and noise. The call's fields
// (Collective to Shape, Verify) do not apply; Result.Collective is
// "workload" and Result.Algorithm the composition's name.
func (e *Experiment) RunComposition(c collectives.Composition) (*Result, error) {
	return e.runComposition(c, nil)
}

// runComposition runs c with the messages free picks (by tag) delivered
// at once (sim.Instant) and costing their hosts nothing (no overhead, no
// reduction: sim.Config.FreeHosts).
func (e *Experiment) runComposition(c collectives.Composition, free func(tag int32) bool) (*Result, error) {
	return e.runSchedule(c.Schedule(), free)
}

// runSchedule runs a workload's schedule (see runComposition).
func (e *Experiment) runSchedule(c sim.Schedule, free func(tag int32) bool) (*Result, error) {
	m, err := e.machine()
	if err != nil {
		return nil, err
	}
	net := cmp.Or(e.Network, Analytic)
	if err := e.adjust(m, net); err != nil {
		return nil, err
	}
	if c.Ranks > m.Slots() && net != LogGOPS {
		return nil, optionf("the workload needs %d ranks but machine %s has %d slots; use a larger machine (or --set to grow it)", c.Ranks, m.Name, m.Slots())
	}
	var load *network.LinkLoad
	if e.BusiestLinks > 0 {
		load = &network.LinkLoad{RecordRates: e.LinkBins > 0}
	}
	cfg, _, err := e.config(m, net, c.Ranks, load)
	if err != nil {
		return nil, err
	}
	cfg.Progress, cfg.Trace = e.Progress, e.Trace
	if free != nil {
		if cfg.Network == nil {
			return nil, optionf("a breakdown needs a network model with a network (analytic or flow), not loggops")
		}
		cfg.Network, cfg.FreeHosts = sim.Instant(cfg.Network, free), free
	}
	start := time.Now()
	res, err := sim.Execute(sim.New(e.Seed), c, cfg)
	wall := time.Since(start).Seconds()
	if err != nil {
		if errors.Is(err, sim.ErrClockLimit) {
			// The workload's own inputs (its message sizes and compute
			// times) are as likely as the machine's to be the cause.
			return nil, runError(fmt.Errorf("%w%s; check the workload's message sizes and compute times (a task's output and duration, a model's FLOPs against the device's peak, the FFT's rate) and the machine's slowest links", err, extremes(c)))
		}
		return nil, runError(err)
	}
	out := &Result{Collective: "workload", Algorithm: c.Name, Machine: m.Name, Topology: m.Topology.Name(), Network: net,
		Placement: cmp.Or(e.Placement, m.Placement), Seed: e.Seed, Ranks: c.Ranks, Noise: cfg.Noise != nil}
	e.conditions(out, m, net, cfg)
	out.Fill(res, wall)
	if load != nil {
		out.Links = busiest(m, load, e.BusiestLinks, res.Makespan, e.LinkBins)
	}
	return out, nil
}

// maxScannedOps bounds what extremes reads of a schedule.
const maxScannedOps = 1 << 26

// extremes names a schedule's longest compute step and its largest
// message, for a run that went past the clock's limit: a rate or a size
// far off shows there ("; its longest compute step is 2.1e+07s, on rank
// 3, and its largest message 64MiB, from rank 0"). Programs that react
// to what arrives are not read (their ops depend on the run), nor more
// than maxScannedOps ops in all.
func extremes(c sim.Schedule) string {
	var calc sim.Time
	var bytes int64
	calcRank, sendRank, seen := -1, -1, 0
	var ops []sim.Op
	for r := 0; r < c.Ranks && seen < maxScannedOps; r++ {
		src := c.Rank(r)
		if _, ok := src.(sim.ReactiveSource); ok {
			continue
		}
		for seen < maxScannedOps {
			ops = src.Next(ops[:0])
			if len(ops) == 0 {
				break
			}
			seen += len(ops)
			for _, op := range ops {
				switch {
				case op.Kind == sim.OpCalc && op.Dur > calc:
					calc, calcRank = op.Dur, r
				case op.Kind == sim.OpSend && op.Bytes > bytes:
					bytes, sendRank = op.Bytes, r
				}
			}
		}
	}
	var parts []string
	switch {
	case calcRank >= 0 && calc == sim.MaxTime: // a duration that saturated
		parts = append(parts, fmt.Sprintf("a compute step of rank %d is itself past the limit", calcRank))
	case calcRank >= 0:
		parts = append(parts, fmt.Sprintf("its longest compute step is %v, on rank %d", calc, calcRank))
	}
	if sendRank >= 0 {
		parts = append(parts, fmt.Sprintf("its largest message %s, from rank %d", configs.FormatBytes(bytes), sendRank))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", and ")
}

// placed returns the experiment's machine, adjusted as a run adjusts it,
// and where its placement puts ranks: what a workload needs to price its
// own bounds and plans with the machine's paths (PathParams).
func (e *Experiment) placed(ranks int) (*configs.Machine, []int32, error) {
	m, err := e.machine()
	if err != nil {
		return nil, nil, err
	}
	if err := e.adjust(m, cmp.Or(e.Network, Analytic)); err != nil {
		return nil, nil, err
	}
	if ranks > m.Slots() {
		return nil, nil, fmt.Errorf("the workload needs %d ranks but machine %s has %d slots; use a larger machine (or --set to grow it)", ranks, m.Name, m.Slots())
	}
	place, err := m.Place(ranks, e.Placement, e.Seed)
	return m, place, err
}

// DNNResult is one training (or inference) step of a dnn.Job.
type DNNResult struct {
	Model       string  `json:"model"`
	Device      string  `json:"device"`
	Strategy    string  `json:"strategy"`
	Transport   string  `json:"transport"` // nccl (every message eager) or mpi (the machine's eager limit)
	Devices     int     `json:"devices"`
	GlobalBatch int     `json:"global_batch"`
	Step        float64 `json:"step_s"`
	SamplesPerS float64 `json:"samples_per_s"`
	TokensPerS  float64 `json:"tokens_per_s,omitempty"`
	// ModelFLOPs is the model's FLOP/s per device (3x the forward FLOPs
	// of the batch in training, 1x in inference without the pruned
	// operations, over the step), and PeakShare its share of the device's
	// peak.
	ModelFLOPs float64 `json:"model_flops_per_device"`
	PeakShare  float64 `json:"peak_share"`
	// Breakdown, when asked for (Breakdown runs one simulation more per
	// kind of communication).
	Breakdown *Breakdown   `json:"breakdown,omitempty"`
	Memory    []dnn.Memory `json:"memory"`
	Run       *Result      `json:"run"`
}

// Breakdown splits a step's time. Compute is the busiest device's compute
// (its compute lane's busy time in a run in which every message is free:
// device work done for communication, compression and host copies, is
// communication); Bubble is what a run in which every
// message is free (network and hosts' message costs: overhead,
// reductions) adds to it (the pipeline's idle time); Exposed is what
// communication adds on top of that. ExposedBy[kind] is how much faster
// the step is when that kind alone is free: kinds overlap each other, so
// these need not sum to Exposed.
type Breakdown struct {
	Compute   float64            `json:"compute_s"`
	Bubble    float64            `json:"bubble_s"`
	Exposed   float64            `json:"exposed_comm_s"`
	ExposedBy map[string]float64 `json:"exposed_by_kind_s"`
}

// RunDNN simulates one step of job on the experiment's machine: one rank
// per device, dp x tp x pp ranks. With breakdown it also runs the step
// with communication free, in all and kind by kind.
func (e *Experiment) RunDNN(job dnn.Job, breakdown bool) (*DNNResult, error) {
	m, err := e.machine()
	if err != nil {
		return nil, err
	}
	switch job.Transport {
	case "":
		job.Transport = "mpi"
		if m.DevicesPerNode > 1 {
			job.Transport = "nccl"
		}
	case "nccl", "mpi":
	default:
		return nil, optionf("--transport %q: nccl (every message eager) or mpi (the machine's eager limit)", job.Transport)
	}
	if job.Transport == "nccl" {
		m.Host.EagerLimit = math.MaxInt64 // m is the experiment's copy
		x := *e
		x.Machine = m
		e = &x
	}
	if job.NodeSize == 0 {
		job.NodeSize = m.NodeSize()
	}
	if err := job.Check(0); err != nil {
		return nil, &OptionError{Err: err}
	}
	if job.Tune == nil && cmp.Or(e.Network, Analytic) != LogGOPS {
		// Each call's open options chosen by the closed forms on this
		// machine, as run chooses them (the model's placement: block).
		if place, err := m.Place(min(job.Devices(), m.Slots()), "", e.Seed); err == nil {
			h, _ := Hockney(m, place) // a machine's first route where routes differ, as run prices it
			tm := TuneModelOf(m, h)
			job.Tune = func(a collectives.Algorithm, p *collectives.Params) { Tune(a, p, tm) }
		}
	}
	run := func(free map[string]bool, busy []sim.Time) (*Result, error) {
		comp, err := job.Composition(free)
		if err != nil {
			return nil, &OptionError{Err: err}
		}
		x := *e
		if free != nil {
			x.Trace, x.Progress = nil, nil // the breakdown's runs are not the run traced
		}
		if busy != nil {
			x.Trace = func(ev sim.TraceEvent) {
				if ev.Completed && ev.Op.Kind == sim.OpCalc && ev.Op.CPU == 0 {
					busy[ev.Rank] += ev.Op.Dur
				}
			}
		}
		var pick func(int32) bool
		if free != nil {
			pick = dnn.FreeTags(free)
		}
		return x.runComposition(comp, pick)
	}
	res, err := run(nil, nil)
	if err != nil {
		return nil, err
	}
	s := job.Strategy
	out := &DNNResult{Model: job.Model.Name, Device: job.Device.Name, Strategy: describe(s), Transport: job.Transport, Devices: job.Devices(),
		GlobalBatch: job.GlobalBatch(), Step: res.Time, Memory: job.Memory(), Run: res}
	if res.Time > 0 {
		out.SamplesPerS = float64(out.GlobalBatch) / res.Time
		out.TokensPerS = out.SamplesPerS * float64(job.Model.Tokens)
		passes := 3.0
		if s.Inference {
			passes = 1
		}
		out.ModelFLOPs = passes * job.UsefulFwdFLOPs() * float64(out.GlobalBatch) / res.Time / float64(out.Devices)
		out.PeakShare = out.ModelFLOPs / job.Device.Peak
	}
	if !breakdown {
		return out, nil
	}
	// Compute is measured with communication free, so that the device
	// work that exists for communication (compression, host copies) is
	// not compute: with --no-overlap it ran on the compute lane, counted
	// in Compute and, dropped from the free run, in Exposed too (the
	// parts summed to 1.8x the step; a new user's trial).
	busy := make([]sim.Time, job.Devices())
	free, err := run(allKinds, busy)
	if err != nil {
		return nil, err
	}
	b := &Breakdown{Compute: slices.Max(busy).Seconds(), ExposedBy: map[string]float64{}}
	b.Bubble = max(0, free.Time-b.Compute)
	b.Exposed = res.Time - free.Time
	for _, k := range job.Kinds() {
		r, err := run(map[string]bool{k: true}, nil)
		if err != nil {
			return nil, err
		}
		b.ExposedBy[k] = res.Time - r.Time
	}
	out.Breakdown = b
	return out, nil
}

// allKinds makes every kind of communication free, and the hosts' costs
// of messages too: what is left is compute and waiting for it.
var allKinds = map[string]bool{dnn.KindTP: true, dnn.KindDP: true, dnn.KindPP: true, dnn.KindZeRO: true, dnn.KindOffload: true}

func describe(s dnn.Strategy) string {
	d := fmt.Sprintf("dp%d tp%d pp%d", s.DP, s.TP, s.PP)
	if s.PP > 1 {
		d += fmt.Sprintf(" %s", s.Schedule)
	}
	d += fmt.Sprintf(" m%d x%d", s.Microbatches, s.MicroBatch)
	if s.ZeRO3 {
		d += " zero3"
	}
	return d
}

// Candidate is one strategy a search simulated (or refused).
type Candidate struct {
	Strategy    dnn.Strategy `json:"-"`
	Describe    string       `json:"strategy"`
	Step        float64      `json:"step_s,omitempty"`
	SamplesPerS float64      `json:"samples_per_s,omitempty"`
	PeakShare   float64      `json:"peak_share,omitempty"`
	MemoryGiB   float64      `json:"memory_gib,omitempty"` // the busiest stage's per-device memory
	Refused     string       `json:"refused,omitempty"`    // why it cannot run (does not fit, ...)
}

// Memory is the busiest stage's per-device memory in words: GiB to a
// tenth, or "more than 8 EiB" where the count saturated (it printed
// 8589934592.0 GiB: an audit).
func (c *Candidate) Memory() string {
	if c.MemoryGiB >= math.MaxInt64/(1<<30) {
		return "more than 8 EiB"
	}
	return fmt.Sprintf("%.1f GiB", c.MemoryGiB)
}

// Strategies enumerates the strategies of a search for devices devices
// and a global batch of globalBatch samples: every dp x tp x pp =
// devices with tp up to a node (unless base allows more; 1 for a model
// with no layer that splits across tensor-parallel ranks) and pp up to the
// model's layers; for each, microbatches of each of microBatches samples
// (none given: base's microbatch size), m = globalBatch / (dp x
// microbatch) of them where that is whole; and bucket sizes 25 MiB and,
// where data parallel, 100 MiB. Other options come from base.
func Strategies(base dnn.Job, devices, globalBatch int, microBatches ...int) []dnn.Strategy {
	if len(microBatches) == 0 {
		microBatches = []int{max(base.Strategy.MicroBatch, 1)}
	}
	var out []dnn.Strategy
	splits := base.Model != nil && base.Model.SplitsTP()
	for tp := 1; tp <= devices; tp++ {
		if devices%tp != 0 || base.NodeSize > 0 && tp > base.NodeSize && !base.AllowTPAcrossNodes {
			continue
		}
		if tp > 1 && !splits {
			// A model without layers that split runs on tp 1 only: the
			// rest were listed as refused, counted among the strategies
			// (a new user's trial).
			break
		}
		for pp := 1; pp <= devices/tp; pp++ {
			if (devices/tp)%pp != 0 || pp > len(base.Model.Layers) {
				continue
			}
			dp := devices / tp / pp
			for _, mb := range microBatches {
				if mb < 1 || globalBatch%(dp*mb) != 0 {
					continue
				}
				if base.Strategy.ZeRO3 && pp > 1 {
					continue // ZeRO-3 runs without a pipeline here
				}
				buckets := []int64{25 << 20}
				if dp > 1 && !base.Strategy.Inference && !base.Strategy.ZeRO3 {
					buckets = append(buckets, 100<<20) // buckets only shape the data-parallel allreduce
				}
				for _, b := range buckets {
					s := base.Strategy
					s.DP, s.TP, s.PP, s.MicroBatch, s.Microbatches, s.BucketBytes = dp, tp, pp, mb, globalBatch/(dp*mb), b
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Search simulates every strategy on workers goroutines (each its own
// experiment) and returns them fastest first, refused ones last; done is
// told of each finished candidate.
func (e *Experiment) Search(base dnn.Job, strategies []dnn.Strategy, workers int, done func(finished, total int)) ([]Candidate, error) {
	out := make([]Candidate, len(strategies))
	var mu sync.Mutex
	var firstErr error
	parallel(len(strategies), workers, done, func(i int) {
		j := base
		j.Strategy = strategies[i]
		c := Candidate{Strategy: strategies[i]}
		if err := j.Check(0); err != nil {
			c.Refused = err.Error()
		} else {
			x := *e
			x.Progress, x.Trace = nil, nil
			r, err := x.RunDNN(j, false)
			if err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
				c.Refused = err.Error()
			} else {
				c.Step, c.SamplesPerS, c.PeakShare = r.Step, r.SamplesPerS, r.PeakShare
			}
		}
		c.Describe = describe(j.Strategy) + fmt.Sprintf(" bucket %dMiB", j.Strategy.BucketBytes>>20)
		if c.Refused == "" || strings.HasPrefix(c.Refused, "does not fit") {
			most := slices.MaxFunc(j.Memory(), func(a, b dnn.Memory) int { return cmp.Compare(a.Total, b.Total) })
			c.MemoryGiB = float64(most.Total) / (1 << 30)
		}
		out[i] = c
	})
	slices.SortStableFunc(out, func(a, b Candidate) int {
		if (a.Refused == "") != (b.Refused == "") {
			if a.Refused == "" {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Step, b.Step)
	})
	if firstErr != nil && !slices.ContainsFunc(out, func(c Candidate) bool { return c.Refused == "" }) {
		return out, firstErr
	}
	return out, nil
}

// FFTResult is one 3D FFT of an fft.Job.
type FFTResult struct {
	Grid     string  `json:"grid"`
	Ranks    int     `json:"ranks"`
	Decomp   string  `json:"decomposition"`
	Alltoall string  `json:"alltoall"`
	Layout   string  `json:"layout"`
	Time     float64 `json:"time_s"`
	GFLOPs   float64 `json:"gflops"` // 5 N log2 N for N = Nx Ny Nz points (x2 for a round trip) over the time, in 10^9/s
	Compute  float64 `json:"compute_s,omitempty"`
	Exposed  float64 `json:"exposed_comm_s,omitempty"` // the time saved when every message is free
	Run      *Result `json:"run"`
}

// RunFFT simulates job on the experiment's machine: one rank per grid
// position. With breakdown it also runs it with every message free
// (network and hosts' message costs), which leaves the FFTs and packing.
func (e *Experiment) RunFFT(job fft.Job, breakdown bool) (*FFTResult, error) {
	m, err := e.machine()
	if err != nil {
		return nil, err
	}
	if job.NodeSize == 0 {
		job.NodeSize = m.NodeSize()
	}
	if job.GroupSize == 0 {
		job.GroupSize = m.GroupSize()
	}
	comp, err := job.Composition()
	if err != nil {
		return nil, &OptionError{Err: err}
	}
	res, err := e.runComposition(comp, nil)
	if err != nil {
		return nil, err
	}
	decomp := "pencil"
	if job.Pc == 1 {
		decomp = "slab"
	}
	layout := "row-major"
	if job.Aligned {
		layout = "aligned"
	}
	out := &FFTResult{Grid: fmt.Sprintf("%dx%dx%d", job.Nx, job.Ny, job.Nz), Ranks: job.Ranks(), Decomp: fmt.Sprintf("%s %dx%d%s", decomp, job.Pr, job.Pc, slabLike(job)),
		Alltoall: cmp.Or(job.Alltoall, collectives.DefaultAlgorithm(collectives.Alltoall)), Layout: layout, Time: res.Time, Run: res}
	if res.Time > 0 {
		n := float64(job.Nx) * float64(job.Ny) * float64(job.Nz)
		passes := 1.0
		if job.RoundTrip {
			passes = 2
		}
		out.GFLOPs = passes * 5 * n * math.Log2(n) / res.Time / 1e9
	}
	if breakdown {
		x := *e
		x.Progress, x.Trace = nil, nil
		free, err := x.runComposition(comp, func(int32) bool { return true })
		if err != nil {
			return nil, err
		}
		out.Compute, out.Exposed = free.Time, res.Time-free.Time
	}
	return out, nil
}

// TaskBenchPoint is one run of a Task Bench job: its kernel duration, and
// Task Bench's measures of it.
type TaskBenchPoint struct {
	Duration float64 `json:"task_duration_s"` // each task's kernel
	Elapsed  float64 `json:"elapsed_s"`
	Tasks    int64   `json:"tasks"`
	// Efficiency is useful work (the kernels) over elapsed x cores;
	// Granularity is elapsed x cores / tasks: the wall time a task takes
	// on a core, overheads and waiting included (Task Bench's "task
	// granularity").
	Efficiency  float64 `json:"efficiency"`
	Granularity float64 `json:"granularity_s"`
	Runtime     string  `json:"runtime"` // how the ranks ran their tasks (taskbench.Runtimes)
}

// RunTaskBench simulates job (one rank per core) and measures it.
func (e *Experiment) RunTaskBench(job taskbench.Job) (*TaskBenchPoint, *Result, error) {
	comp, err := job.Composition()
	if err != nil {
		return nil, nil, &OptionError{Err: err}
	}
	res, err := e.RunComposition(comp)
	if err != nil {
		return nil, nil, err
	}
	p := &TaskBenchPoint{Duration: job.Graphs[0].Duration.Seconds(), Elapsed: res.Time, Tasks: job.Tasks(), Runtime: cmp.Or(job.Runtime, taskbench.RuntimeMPI)}
	if res.Time > 0 && p.Tasks > 0 {
		cores := float64(job.Ranks)
		p.Efficiency = job.UsefulWork() / (res.Time * cores)
		p.Granularity = res.Time * cores / float64(p.Tasks)
	}
	return p, res, nil
}

// METG runs job once per kernel duration (every graph's), on workers
// goroutines, then bisects between the two kernels that straddle 50%
// efficiency, and returns the curve (longest kernel first) and METG(50%),
// Task Bench's minimum effective task granularity: the granularity at
// which efficiency crosses 50%, as Task Bench's scripts find it (metgOf),
// or NaN if no duration reaches 50%.
//
// crossed is false when even the shortest kernel ran at 50% or more: METG
// is then at most the value returned (the sweep should go shorter).
func (e *Experiment) METG(job taskbench.Job, durations []sim.Time, workers int, done func(finished, total int)) (curve []TaskBenchPoint, metg float64, crossed bool, err error) {
	if len(durations) == 0 {
		return nil, 0, false, optionf("METG: no kernel durations to try; give the sweep's (collsim workload taskbench --metg halves the kernel from --metg-from, 10 ms)")
	}
	curve = make([]TaskBenchPoint, len(durations))
	errs := make([]error, len(durations))
	parallel(len(durations), workers, done, func(i int) {
		j := job
		j.Graphs = slices.Clone(job.Graphs)
		for k := range j.Graphs {
			j.Graphs[k].Duration = durations[i]
		}
		x := *e
		x.Progress, x.Trace = nil, nil
		p, _, err := x.RunTaskBench(j)
		if err == nil {
			curve[i] = *p
		}
		errs[i] = err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, 0, false, err
	}
	// Refine between the shortest kernel at 50% or more and the next
	// shorter one below: bisect (geometrically) METGRefine times, so that
	// METG does not depend on where the halving sweep happened to land.
	lo, hi := -1, -1 // indices: shortest kernel >= 50%, longest kernel below it that is < 50%
	for i, p := range curve {
		if p.Efficiency >= 0.5 && (lo < 0 || durations[i] < durations[lo]) {
			lo = i
		}
	}
	if lo >= 0 {
		for i, p := range curve {
			if p.Efficiency < 0.5 && durations[i] < durations[lo] && (hi < 0 || durations[i] > durations[hi]) {
				hi = i
			}
		}
	}
	if lo >= 0 && hi >= 0 {
		good, bad := durations[lo], durations[hi]
		for range METGRefine {
			mid := sim.Time(math.Sqrt(float64(good) * float64(bad)))
			if mid <= bad || mid >= good {
				break
			}
			j := job
			j.Graphs = slices.Clone(job.Graphs)
			for k := range j.Graphs {
				j.Graphs[k].Duration = mid
			}
			x := *e
			x.Progress, x.Trace = nil, nil
			p, _, err := x.RunTaskBench(j)
			if err != nil {
				return nil, 0, false, err
			}
			curve = append(curve, *p)
			if p.Efficiency >= 0.5 {
				good = mid
			} else {
				bad = mid
			}
		}
	}
	slices.SortStableFunc(curve, func(a, b TaskBenchPoint) int { return cmp.Compare(b.Duration, a.Duration) })
	return curve, metgOf(curve), slices.ContainsFunc(curve, func(p TaskBenchPoint) bool { return p.Efficiency < 0.5 }), nil
}

// metgOf is METG(50%) of a curve sorted from the longest kernel down, as
// Task Bench's scripts/chart_metg.py computes it: the smallest
// granularity with efficiency of at least 50%, and where the run of the
// next shorter kernel has a smaller granularity and an efficiency below
// 50%, the granularity at 50% on the line between the two points
// (collsim gave the smallest measured granularity, a little above). NaN
// if no kernel reached 50%.
func metgOf(curve []TaskBenchPoint) float64 {
	best := -1
	for i, p := range curve {
		if p.Efficiency >= 0.5 && (best < 0 || p.Granularity < curve[best].Granularity) {
			best = i
		}
	}
	if best < 0 {
		return math.NaN()
	}
	at := curve[best]
	if best+1 == len(curve) {
		return at.Granularity
	}
	next := curve[best+1]
	if next.Granularity >= at.Granularity || next.Efficiency >= 0.5 {
		return at.Granularity
	}
	return at.Granularity + (0.5-at.Efficiency)*(next.Granularity-at.Granularity)/(next.Efficiency-at.Efficiency)
}

// METGRefine is how many bisections METG runs past its sweep: the
// kernel at METG is then within a factor 2^(2^-6), about 1.1%, of the
// crossing.
const METGRefine = 6

// parallel runs run(0..n-1) on workers goroutines (each its own
// simulation: no shared engine), telling done, in turn, how many have
// finished.
func parallel(n, workers int, done func(finished, total int), run func(i int)) {
	next := make(chan int)
	var g workersGroup
	var mu sync.Mutex
	finished := 0
	for range max(workers, 1) {
		g.Go(func() {
			for i := range next {
				run(i)
				mu.Lock()
				finished++
				if done != nil {
					done(finished, n)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	g.Wait()
}

// slabLike notes a pencil grid with one row: its transposes among the rows
// exchange nothing (each rank packs and unpacks alone), so it communicates
// as a slab does ("pencil 1x16" said nothing of it: a new user's trial).
func slabLike(job fft.Job) string {
	if job.Pr == 1 && job.Pc > 1 {
		return " (one row: a slab's communication, with a pencil's packing)"
	}
	return ""
}
