package collsim

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/dnn"
)

// RunComposition runs a composed program (a workload's) on the
// experiment's machine, network, placement and noise. The call's fields
// (Collective to Shape, Verify) do not apply; Result.Collective is
// "workload" and Result.Algorithm the composition's name.
func (e *Experiment) RunComposition(c collectives.Composition) (*Result, error) {
	return e.runComposition(c, nil)
}

// runComposition runs c with the messages free picks (by tag) delivered
// at once (sim.Instant).
func (e *Experiment) runComposition(c collectives.Composition, free func(tag int32) bool) (*Result, error) {
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
	cfg, _, err := e.config(m, net, c.Ranks, nil)
	if err != nil {
		return nil, err
	}
	cfg.Progress, cfg.Trace = e.Progress, e.Trace
	if free != nil {
		if cfg.Network == nil {
			return nil, optionf("a breakdown needs a network model with a network (analytic or flow), not loggops")
		}
		cfg.Network = sim.Instant(cfg.Network, free)
	}
	start := time.Now()
	res, err := sim.Execute(sim.New(e.Seed), c.Schedule(), cfg)
	wall := time.Since(start).Seconds()
	if err != nil {
		return nil, runError(ClockHint(err, 0, e.inputs(m, cfg)))
	}
	out := &Result{Collective: "workload", Algorithm: c.Name, Machine: m.Name, Topology: m.Topology.Name(), Network: net,
		Placement: cmp.Or(e.Placement, m.Placement), Seed: e.Seed, Ranks: c.Ranks, Noise: cfg.Noise != nil}
	e.conditions(out, m, net, cfg.Noise)
	out.Fill(res, wall)
	return out, nil
}

// DNNResult is one training (or inference) step of a dnn.Job.
type DNNResult struct {
	Model       string  `json:"model"`
	Device      string  `json:"device"`
	Strategy    string  `json:"strategy"`
	Devices     int     `json:"devices"`
	GlobalBatch int     `json:"global_batch"`
	Step        float64 `json:"step_s"`
	SamplesPerS float64 `json:"samples_per_s"`
	TokensPerS  float64 `json:"tokens_per_s,omitempty"`
	// ModelFLOPs is the model's FLOP/s per device (3x the forward FLOPs
	// of the batch in training, 1x in inference, over the step), and
	// PeakShare its share of the device's peak.
	ModelFLOPs float64 `json:"model_flops_per_device"`
	PeakShare  float64 `json:"peak_share"`
	// Breakdown, when asked for (Breakdown runs one simulation more per
	// kind of communication).
	Breakdown *Breakdown   `json:"breakdown,omitempty"`
	Memory    []dnn.Memory `json:"memory"`
	Run       *Result      `json:"run"`
}

// Breakdown splits a step's time. Compute is the busiest device's compute
// (its compute lane's busy time); Bubble is what a run in which every
// message is free adds to it (the pipeline's idle time); Exposed is what
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
	if job.NodeSize == 0 {
		job.NodeSize = m.NodeSize()
	}
	if err := job.Check(0); err != nil {
		return nil, &OptionError{Err: err}
	}
	run := func(free map[string]bool, busy []sim.Time) (*Result, error) {
		comp, err := job.Composition(free)
		if err != nil {
			return nil, &OptionError{Err: err}
		}
		x := *e
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
	var busy []sim.Time
	if breakdown {
		busy = make([]sim.Time, job.Devices())
	}
	res, err := run(nil, busy)
	if err != nil {
		return nil, err
	}
	s := job.Strategy
	out := &DNNResult{Model: job.Model.Name, Device: job.Device.Name, Strategy: describe(s), Devices: job.Devices(),
		GlobalBatch: job.GlobalBatch(), Step: res.Time, Memory: job.Memory(), Run: res}
	if res.Time > 0 {
		out.SamplesPerS = float64(out.GlobalBatch) / res.Time
		out.TokensPerS = out.SamplesPerS * float64(job.Model.Tokens)
		passes := 3.0
		if s.Inference {
			passes = 1
		}
		out.ModelFLOPs = passes * job.Model.FwdFLOPs() * float64(out.GlobalBatch) / res.Time / float64(out.Devices)
		out.PeakShare = out.ModelFLOPs / job.Device.Peak
	}
	if !breakdown {
		return out, nil
	}
	all := map[string]bool{dnn.KindTP: true, dnn.KindDP: true, dnn.KindPP: true, dnn.KindZeRO: true, dnn.KindOffload: true}
	free, err := run(all, nil)
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
