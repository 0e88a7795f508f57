// Package run is `collsim run`: simulate one collective call on a machine.
package run

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// Options are the flags of `collsim run`.
type Options struct {
	Collective string
	Algorithm  string
	Machine    string
	Network    string
	Placement  string
	Verify     string
	Ranks      int
	RanksGiven bool // false: 64, or the machine's slots if fewer
	Size       string
	ElemSize   int64
	Root       int
	Seed       uint64
	JSON       bool
	GOAL       string   // a GOAL file to run instead of a collective
	Links      int      // report the busiest links (flow network)
	Routing    string   // override the machine's routing (flow network)
	Jitter     string   // per-message latency noise (flow network): "normal:200ns"
	Degrade    []string // links at reduced bandwidth: "FROM->TO:FACTOR"
	Fail       []string // failed links (both directions): "FROM->TO"
	Shape      cmdutil.ShapeFlags
	LogGOPS    cmdutil.LogGOPSFlags
	Noise      cmdutil.NoiseFlags
	Quiet      bool // no progress line
	Progress   bool // a progress line even where stderr is not a terminal
}

// progress returns the progress display of a run on streams.Err and a
// function that ends it: a line after 2 s on a terminal (or with
// --progress in a log), nothing with --quiet. It never writes to
// streams.Out, so --json output stays clean.
func (o *Options) progress(streams *cmdutil.IO) (func(sim.Progress), func()) {
	p := o.display(streams)
	if p == nil {
		return nil, func() {}
	}
	return p.Update, p.Done
}

// display returns the progress display on stderr, or nil when it is off.
func (o *Options) display(streams *cmdutil.IO) *cmdutil.Progress {
	f, isFile := streams.Err.(*os.File)
	terminal := isFile && cmdutil.IsTerminal(f)
	if o.Quiet || !terminal && !o.Progress {
		return nil
	}
	return cmdutil.NewProgress(streams.Err, terminal, time.Now)
}

// New returns the run command.
func New(streams *cmdutil.IO) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Simulate one collective call on a machine",
		Long: `Simulate one collective call on a machine and report its completion time,
algorithm and bus bandwidth (nccl-tests conventions), the spread of per-rank
finish times, the closed-form prediction, and how fast the simulation ran.

With no flags: a 1 MiB ring allreduce on 64 ranks of the built-in "small"
machine, with every rank's data checked.`,
		Example: `  collsim run
  collsim run -c allreduce -a recursive_doubling -n 1024 -s 8 -m fattree-1024
  collsim run -c alltoall -n 512 -s 64MiB -m gpu-cluster --json
  collsim run -m my-cluster.yaml -c bcast -s 4MiB
  collsim run --goal schedule.goal                 # LogGOPS model, LogGOPSim's defaults
  collsim run --goal schedule.goal --network analytic -m fattree-1024
  collsim run -c bcast -n 64 -s 8 --network loggops --L 2500ns --o 1500ns`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.RanksGiven = cmd.Flags().Changed("ranks")
			if err := checkFlags(cmd.Flags(), o); err != nil {
				return err
			}
			return Run(streams, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Collective, "collective", "c", "allreduce", "collective: allreduce, bcast, allgather, reduce_scatter, alltoall, barrier")
	f.StringVarP(&o.Algorithm, "algo", "a", "", "algorithm (default: the collective's default; see collsim algos)")
	f.StringVarP(&o.Machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage)
	f.StringVar(&o.Network, "network", "", "network model: analytic (no link sharing), flow (max-min fair sharing on the machine's routes) or loggops (default: analytic; loggops with --goal)")
	f.StringVar(&o.GOAL, "goal", "", "run this GOAL schedule file instead of a collective")
	o.LogGOPS.Register(f)
	o.Noise.Register(f)
	o.Shape.Register(f)
	f.StringVar(&o.Placement, "placement", "", "rank placement: block, round_robin, random (default: the machine's)")
	f.StringVar(&o.Verify, "verify", "auto", "run with real data and check every rank's result: auto (when it fits in memory), on, off")
	f.IntVarP(&o.Ranks, "ranks", "n", 64, "number of ranks (default: 64, or the machine's slots if fewer)")
	f.StringVarP(&o.Size, "size", "s", "1MiB", "message size in bytes, with units: 8, 64KiB, 1MiB (nccl-tests sizes)")
	f.Int64Var(&o.ElemSize, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.IntVar(&o.Root, "root", 0, "root rank of rooted collectives")
	f.Uint64Var(&o.Seed, "seed", 1, "seed for every random choice (placement, data)")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	f.StringVar(&o.Routing, "routing", "", "with --network flow: minimal, valiant or ugal (Dragonfly detours through a third group), or ecmp (a fat-tree's equal paths by flow hash); default: the machine's")
	f.StringVar(&o.Jitter, "jitter", "", `with --network flow: per-message latency noise "normal:SIGMA" (cut at 0) or "lognormal:MEDIAN", e.g. normal:200ns, seeded by --seed`)
	f.StringArrayVar(&o.Degrade, "degrade", nil, `a link at reduced bandwidth "FROM->TO:FACTOR", e.g. "s0.0->s1.0:0.5" (names as --links and collsim topo --dot print them); repeatable`)
	f.StringArrayVar(&o.Fail, "fail", nil, `a failed link "FROM->TO" (both directions), routed around by shortest paths where the topology allows; repeatable`)
	f.IntVar(&o.Links, "links", 0, "with --network flow: list the N busiest links (bytes, busy time, peak concurrent flows)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress line on stderr (shown after 2 s when stderr is a terminal)")
	f.BoolVar(&o.Progress, "progress", false, "a progress line on stderr every 10 s after the first 2 s even when stderr is not a terminal (a batch job's log)")
	return cmd
}

// ranksLine is the rank count and how the ranks are placed.
func ranksLine(r *Result) string {
	if r.Placement == "none" {
		return fmt.Sprintf("%d (no machine, no placement)", r.Ranks)
	}
	return fmt.Sprintf("%d (%s placement)", r.Ranks, r.Placement)
}

// checkFlags refuses flag values that are not choices and flags that the
// run would ignore: a flag that does nothing must say so, not pass as if
// it had been applied.
func checkFlags(f *pflag.FlagSet, o *Options) error {
	if o.Placement != "" && !slices.Contains(topology.Placements, o.Placement) {
		return cmdutil.Flagf("--placement %q is not a policy; valid: %s", o.Placement, strings.Join(topology.Placements, ", "))
	}
	if o.GOAL != "" {
		if err := cmdutil.NotApplicable(f, "with --goal the file is the program: its ranks, sizes and dependencies", "collective", "algo", "ranks",
			"size", "elem-size", "root", "verify", "segment", "node-size", "group-size", "inner", "intra", "groups", "steps", "overlap"); err != nil {
			return err
		}
	}
	if o.Network == "loggops" || o.Network == "" && o.GOAL != "" {
		return cmdutil.NotApplicable(f, "the loggops network has no machine: every message costs L, o, g and G (use --network analytic or flow to run on the machine)",
			"machine", "placement", "degrade", "fail")
	}
	return nil
}

// Result is what `collsim run` reports.
type Result struct {
	Collective   string   `json:"collective"`
	Algorithm    string   `json:"algorithm"`
	ChosenBy     string   `json:"chosen_by,omitempty"`
	Tuned        string   `json:"tuned,omitempty"`
	Machine      string   `json:"machine"`
	Topology     string   `json:"topology"`
	Network      string   `json:"network"`
	Placement    string   `json:"placement"`
	Seed         uint64   `json:"seed"`
	Ranks        int      `json:"ranks"`
	SizeBytes    int64    `json:"size_bytes"`
	ElemSize     int64    `json:"elem_size"`
	Count        int64    `json:"count"`
	Time         float64  `json:"time_s"`
	AlgBW        float64  `json:"algbw_GBps"`
	BusBW        float64  `json:"busbw_GBps"`
	FinishMin    float64  `json:"finish_min_s"`
	FinishMean   float64  `json:"finish_mean_s"`
	FinishMax    float64  `json:"finish_max_s"`
	DataVerified *bool    `json:"data_verified"`
	Model        *float64 `json:"model_s"`
	ModelExact   bool     `json:"model_exact"`
	RoutesAlike  bool     `json:"routes_alike"`
	HostCosts    bool     `json:"host_costs"`           // the machine charges o or g, which the closed form leaves out
	ModelKind    string   `json:"model_kind,omitempty"` // "Hockney" (alpha-beta-gamma) or "LogGP"
	ModelLower   *float64 `json:"model_lower_s,omitempty"`
	Events       uint64   `json:"events"`
	Ops          uint64   `json:"ops"`
	Messages     uint64   `json:"messages"`
	Wall         float64  `json:"wall_s"`
	OpsPerSecond float64  `json:"ops_per_s"`
	Noise        bool     `json:"noise"`
	Links        []Link   `json:"busiest_links,omitempty"`
}

// Link is one link's load in a flow-model run.
type Link struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Bytes       float64 `json:"bytes"`
	Busy        float64 `json:"busy_s"`
	BusyShare   float64 `json:"busy_share"`  // of the run's time
	Utilization float64 `json:"utilization"` // bytes / (bandwidth x run time)
	PeakFlows   int32   `json:"peak_flows"`
}

// busiest returns the n links most utilized (bytes over bandwidth: the
// bottlenecks), then busy longest, then by ID, so that the order is stable.
func busiest(m *configs.Machine, load *network.LinkLoad, n int, makespan sim.Time) []Link {
	links := m.Topology.Links()
	ids := make([]int, len(links))
	for i := range ids {
		ids[i] = i
	}
	use := func(i int) float64 { return load.Bytes[i] / links[i].Bandwidth }
	slices.SortStableFunc(ids, func(a, b int) int {
		switch {
		case use(a) != use(b):
			return cmp.Compare(use(b), use(a))
		case load.Busy[a] != load.Busy[b]:
			return cmp.Compare(load.Busy[b], load.Busy[a])
		}
		return cmp.Compare(a, b)
	})
	var out []Link
	span := makespan.Seconds()
	for _, i := range ids[:min(n, len(ids))] {
		if load.Bytes[i] == 0 {
			break
		}
		l := Link{From: m.Topology.Label(links[i].From), To: m.Topology.Label(links[i].To), Bytes: load.Bytes[i], Busy: load.Busy[i].Seconds(), PeakFlows: load.PeakFlows[i]}
		if span > 0 {
			l.BusyShare, l.Utilization = l.Busy/span, l.Bytes/(links[i].Bandwidth*span)
		}
		out = append(out, l)
	}
	return out
}

// Run carries out `collsim run`.
func Run(streams *cmdutil.IO, o *Options) error {
	if o.GOAL != "" {
		return runGOAL(streams, o)
	}
	m, err := configs.Resolve(o.Machine)
	if err != nil {
		return err
	}
	if o.Network == "" {
		o.Network = "analytic"
	}
	if !o.RanksGiven {
		o.Ranks = min(64, m.Slots())
	}
	if o.Ranks < 1 {
		return cmdutil.Flagf("--ranks must be at least 1, not %d", o.Ranks)
	}
	c := collectives.Collective(o.Collective)
	if o.Algorithm == "" {
		o.Algorithm = collectives.DefaultAlgorithm(c)
	}
	size, err := configs.ParseSize(o.Size)
	if err != nil {
		return &cmdutil.FlagError{Err: fmt.Errorf("--size: %w", err)}
	}
	params, err := collsim.Call(c, o.Ranks, size, o.ElemSize, o.Root)
	if err != nil {
		return err
	}
	if note, err := collsim.Shortfall(c, params, size); err != nil {
		return err
	} else if note != "" {
		fmt.Fprintln(streams.Err, "collsim: note:", note)
	}
	if err := o.Shape.Check(); err != nil {
		return err
	}
	o.Shape.Apply(&params, m)
	if o.Root < 0 || o.Root >= o.Ranks {
		return cmdutil.Flagf("--root %d is not a rank of 0..%d", o.Root, o.Ranks-1)
	}
	alg, chosenBy, err := collsim.ChooseAlgorithm(c, o.Algorithm, &params)
	if err != nil {
		return err
	}
	if o.Routing != "" {
		if o.Network != "flow" && o.Routing != network.RouteMinimal {
			return cmdutil.Flagf("--routing %s needs --network flow: the analytic model prices each pair's minimal route", o.Routing)
		}
		if err := network.CheckRouting(o.Routing, m.Topology); err != nil {
			return &cmdutil.FlagError{Err: fmt.Errorf("--routing: %w", err)}
		}
		m.Routing = o.Routing
	}
	if m, err = degrade(m, o.Degrade); err != nil {
		return err
	}
	if m, err = fail(m, o.Fail); err != nil {
		return err
	}
	if o.Jitter != "" {
		j, err := parseJitter(o.Jitter)
		if err != nil {
			return err
		}
		if o.Network != "flow" {
			return cmdutil.Flagf("--jitter needs --network flow")
		}
		m.Jitter = j
	}
	if o.Links < 0 || o.Links > 0 && o.Network != "flow" {
		return cmdutil.Flagf("--links needs --network flow (the analytic model shares no links) and a count of at least 1")
	}
	var load *network.LinkLoad
	if o.Links > 0 {
		load = &network.LinkLoad{}
	}
	cfg, place, err := networkConfig(o, m, o.Ranks, load)
	if err != nil {
		return err
	}
	tuned := ""
	if place != nil {
		h, _ := collsim.Hockney(m, place)
		tuned = collsim.Tune(alg, &params, h)
	}
	schedule, err := alg.Build(params)
	if err != nil {
		return err
	}
	var data *collectives.Data
	switch o.Verify {
	case "off":
	case "on", "auto":
		data, err = alg.Data(params, o.Seed)
		if err != nil && o.Verify == "on" {
			return err
		}
	default:
		return cmdutil.Flagf("--verify must be auto, on or off, not %q", o.Verify)
	}
	if data != nil {
		cfg.Data = data.Buffers
	}
	var done func()
	cfg.Progress, done = o.progress(streams)
	start := time.Now()
	res, err := sim.Execute(sim.New(o.Seed), schedule, cfg)
	wall := time.Since(start).Seconds()
	done()
	if err != nil {
		return runError(collsim.ClockHint(err, params.SizeBytes(c), inputs(o, m, cfg)))
	}
	out := Result{
		Collective: string(c), Algorithm: alg.Name, ChosenBy: chosenBy, Tuned: tuned, Machine: m.Name, Topology: m.Topology.Name(),
		Network: o.Network, Placement: placementName(o.Placement, m), Seed: o.Seed, Ranks: o.Ranks,
		SizeBytes: params.SizeBytes(c), ElemSize: o.ElemSize, Count: params.Count, Noise: o.Noise.Given() || m.Noise != nil,
	}
	if o.Network == "loggops" {
		out.Machine, out.Topology, out.Placement = "loggops", "no topology: every message costs L", "none"
	}
	out.fill(res, wall)
	if load != nil {
		out.Links = busiest(m, load, o.Links, res.Makespan)
	}
	if out.Time > 0 {
		out.AlgBW = float64(out.SizeBytes) / out.Time / 1e9
		out.BusBW = out.AlgBW * collectives.BusFactor(c, o.Ranks)
	}
	if data != nil {
		ok := true
		if err := data.Verify(); err != nil {
			return &cmdutil.ValidationError{Err: fmt.Errorf("%s moved the wrong data: %w", alg.ID(), err)}
		}
		out.DataVerified = &ok
	}
	if cost.Has(alg) && o.Network == "analytic" && !out.Noise {
		pricing := collsim.NewPricing(m, place, collectives.TwoLevelSize(params))
		pred, kind, alike, err := pricing.ClosedForm(alg, params)
		if err == nil {
			out.Model, out.ModelExact, out.RoutesAlike = &pred.Time, pred.Exact, alike
			out.HostCosts = (m.Host.Overhead > 0 || m.Gap > 0) && kind != "LogGP"
			out.ModelKind = kind
			if !pred.Exact {
				out.ModelLower = &pred.Lower
			}
		}
	}
	if o.JSON {
		return cmdutil.JSON(streams.Out, out)
	}
	return print(streams, &out)
}

// fill copies what every run reports from a simulation result.
func (r *Result) fill(res *sim.Result, wall float64) {
	r.Time, r.Events, r.Ops, r.Messages, r.Wall = res.Makespan.Seconds(), res.Events, res.Ops, res.Messages, wall
	if wall > 0 {
		r.OpsPerSecond = float64(res.Ops) / wall
	}
	r.FinishMin = math.Inf(1)
	var sum float64
	for _, t := range res.Finish {
		s := t.Seconds()
		r.FinishMin, r.FinishMax = min(r.FinishMin, s), max(r.FinishMax, s)
		sum += s
	}
	r.FinishMean = sum / float64(len(res.Finish))
}

// runError sorts a failed simulation: a deadlock is a validation failure.
func runError(err error) error {
	var de *sim.DeadlockError
	if errors.As(err, &de) {
		return &cmdutil.ValidationError{Err: err}
	}
	return err
}

// networkConfig builds the execution config for --network (and noise): the
// machine's analytic model with ranks placed on it, or the LogGOPS model.
func networkConfig(o *Options, m *configs.Machine, ranks int, load *network.LinkLoad) (sim.Config, []int32, error) {
	var cfg sim.Config
	o.Noise.Seed = o.Seed
	noise, err := o.Noise.Load()
	if err != nil {
		return cfg, nil, err
	}
	if noise != nil && noise.Stragglers > ranks {
		return cfg, nil, cmdutil.Flagf("--stragglers: %d slow ranks asked for, but the run has %d; ask for at most %d", noise.Stragglers, ranks, ranks)
	}
	if noise == nil && m != nil && m.Noise != nil { // the flags replace the config's noise
		if err := m.Noise.CheckRanks(ranks); err != nil {
			return cfg, nil, err
		}
		noise = m.Noise.For(o.Seed)
	}
	cfg.Noise = noise
	switch o.Network {
	case "analytic", "flow":
		if o.LogGOPS.Changed() {
			return cfg, nil, cmdutil.Flagf("--L, --o, --g, --G, --O and --S set the loggops network; with --network %s the machine config sets the costs", o.Network)
		}
		place, err := m.Place(ranks, o.Placement, o.Seed)
		if err != nil {
			return cfg, nil, err
		}
		build := m.Analytic
		if o.Network == "flow" {
			build = func(place []int32) (sim.NetworkFactory, error) { return m.FlowLoad(place, load) }
		}
		net, err := build(place)
		if err != nil {
			return cfg, nil, err
		}
		cfg.Host, cfg.Network = m.Host, net
		return cfg, place, nil
	case "loggops":
		p, err := o.LogGOPS.Params()
		if err != nil {
			return cfg, nil, err
		}
		cfg.LogGOPS = p
		return cfg, nil, nil
	}
	return cfg, nil, cmdutil.Flagf("network model %q is not available; valid: analytic, flow, loggops", o.Network)
}

func placementName(flag string, m *configs.Machine) string {
	if flag != "" {
		return flag
	}
	return m.Placement
}

// GOALResult is what `collsim run --goal` reports.
type GOALResult struct {
	File         string  `json:"file"`
	Network      string  `json:"network"`
	Seed         uint64  `json:"seed"`
	Ranks        int     `json:"ranks"`
	Parse        float64 `json:"parse_s"`
	Time         float64 `json:"time_s"`
	FinishMin    float64 `json:"finish_min_s"`
	FinishMean   float64 `json:"finish_mean_s"`
	FinishMax    float64 `json:"finish_max_s"`
	Events       uint64  `json:"events"`
	Ops          uint64  `json:"ops"`
	Messages     uint64  `json:"messages"`
	Wall         float64 `json:"wall_s"`
	OpsPerSecond float64 `json:"ops_per_s"`
	// Partitions is how many partitions of ranks were simulated in
	// parallel (one per processor, GOMAXPROCS); 0: sequentially.
	Partitions int `json:"partitions"`
}

// goalClockHint adds to the error of a GOAL run past the clock's limit the
// op that likely caused it, and where it is written: the largest send, at
// the model's cost per byte (LogGOPS's G, or the machine's slowest link),
// or the longest calc, whichever costs more by itself.
func goalClockHint(err error, g *sim.GOAL, cfg sim.Config, m *configs.Machine) error {
	if !errors.Is(err, sim.ErrClockLimit) {
		return err
	}
	send, sendAt, calc, calcAt := g.Largest()
	var perByte float64 // seconds
	var rate string
	switch {
	case cfg.LogGOPS != nil:
		perByte = float64(cfg.LogGOPS.GPerByte) / 1e12
		rate = fmt.Sprintf("G = %s per byte (--G)", cmdutil.Seconds(perByte))
	case m != nil:
		slowest := math.Inf(1)
		for _, l := range m.Topology.Links() {
			slowest = min(slowest, l.Bandwidth)
		}
		perByte, rate = 1/slowest, "the slowest link's "+configs.FormatBandwidth(slowest)
	}
	sendCost, calcCost := float64(send)*perByte, float64(calc)*1e-9
	switch {
	case sendAt != "" && sendCost >= calcCost:
		return fmt.Errorf("%w; the costliest op is the send of %d bytes at %s: %s at %s", err, send, sendAt, collsim.ClockCost(sendCost), rate)
	case calcAt != "":
		return fmt.Errorf("%w; the costliest op is the calc of %d ns at %s: %s by itself", err, calc, calcAt, collsim.ClockCost(calcCost))
	}
	return err
}

// runGOAL runs a GOAL schedule file.
func runGOAL(streams *cmdutil.IO, o *Options) error {
	if o.Network == "" {
		o.Network = "loggops"
	}
	f, err := os.Open(o.GOAL)
	if err != nil {
		return err
	}
	defer f.Close()
	display := o.display(streams)
	var in io.Reader = f
	if st, err := f.Stat(); err == nil && display != nil {
		in = &readProgress{r: f, total: st.Size(), show: func(done, total int64) { display.Reading(o.GOAL, done, total) }}
	}
	start := time.Now()
	g, err := sim.ParseGOAL(in, o.GOAL)
	if err != nil {
		return err
	}
	parse := time.Since(start).Seconds()
	var m *configs.Machine
	if o.Network == "analytic" {
		if m, err = configs.Resolve(o.Machine); err != nil {
			return err
		}
	}
	cfg, _, err := networkConfig(o, m, g.Ranks, nil)
	if err != nil {
		return err
	}
	start = time.Now()
	var res *sim.Result
	var progress func(sim.Progress)
	done := func() {}
	if display != nil {
		total := uint64(g.Ops())
		progress = func(p sim.Progress) {
			p.OpsTotal = total
			display.Update(p)
		}
		done = display.Done
	}
	if cfg.LogGOPS != nil {
		res, err = g.RunLogGOPSProgress(*cfg.LogGOPS, cfg.Noise, o.Seed, progress)
	} else {
		cfg.Progress = progress
		res, err = sim.Execute(sim.New(o.Seed), g.Run(o.GOAL), cfg)
	}
	done()
	wall := time.Since(start).Seconds()
	if err != nil {
		return runError(goalClockHint(err, g, cfg, m))
	}
	var r Result
	r.fill(res, wall)
	out := GOALResult{File: o.GOAL, Network: o.Network, Seed: o.Seed, Ranks: g.Ranks, Parse: parse, Time: r.Time,
		FinishMin: r.FinishMin, FinishMean: r.FinishMean, FinishMax: r.FinishMax, Events: r.Events, Ops: r.Ops,
		Messages: r.Messages, Wall: r.Wall, OpsPerSecond: r.OpsPerSecond, Partitions: res.Partitions}
	if o.JSON {
		return cmdutil.JSON(streams.Out, out)
	}
	fmt.Fprintf(streams.Out, "%s: %d ranks, %s network, seed %d\n", out.File, out.Ranks, out.Network, out.Seed)
	return cmdutil.Table(streams.Out, [][]string{
		{"  time", cmdutil.Seconds(out.Time)},
		{"  rank finish", fmt.Sprintf("min %s  mean %s  max %s", cmdutil.Seconds(out.FinishMin), cmdutil.Seconds(out.FinishMean), cmdutil.Seconds(out.FinishMax))},
		{"  simulated", fmt.Sprintf("%d events, %d ops, %d messages", out.Events, out.Ops, out.Messages)},
		{"  parse time", cmdutil.Seconds(out.Parse)},
		{"  wall time", fmt.Sprintf("%s (%.3g ops/s)%s", cmdutil.Seconds(out.Wall), out.OpsPerSecond, partitions(out.Partitions))},
	})
}

// partitions tells how many partitions ran in parallel, if any.
func partitions(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d partitions in parallel", n)
}

func print(streams *cmdutil.IO, r *Result) error {
	fmt.Fprintf(streams.Out, "%s/%s on %s (%s), %s network, seed %d\n", r.Collective, r.Algorithm, r.Machine, r.Topology, r.Network, r.Seed)
	if r.ChosenBy != "" {
		fmt.Fprintf(streams.Out, "  chosen by    %s\n", r.ChosenBy)
	}
	if r.Tuned != "" {
		fmt.Fprintf(streams.Out, "  tuned        %s\n", r.Tuned)
	}
	data := "not checked (--verify off, or too large for data mode)"
	if r.DataVerified != nil {
		data = "verified: every element on every rank is exact"
	}
	model := "no closed form yet"
	switch {
	case r.Network != "analytic":
		model = "not computed: the closed forms price the analytic network"
	case r.Noise:
		model = "not computed: the closed forms know no noise"
	}
	if r.Model != nil {
		ratio := "n/a"
		if *r.Model > 0 {
			ratio = fmt.Sprintf("%.6f", r.Time / *r.Model)
		}
		var kind string
		switch {
		case !r.RoutesAlike:
			kind = "an estimate: routes differ here and it prices every message as the slowest"
		case r.HostCosts:
			kind = "an estimate: it leaves out the hosts' overhead o and gap g, which this machine charges"
		case r.ModelExact:
			kind = "exact here"
		default:
			kind = fmt.Sprintf("upper bound; lower bound %s", cmdutil.Seconds(*r.ModelLower))
		}
		model = fmt.Sprintf("%s (%s, %s; simulated/model = %s)", cmdutil.Seconds(*r.Model), r.ModelKind, kind, ratio)
	}
	rows := [][]string{
		{"  ranks", ranksLine(r)},
		{"  size", fmt.Sprintf("%s = %d elements of %dB", configs.FormatBytes(r.SizeBytes), r.Count, r.ElemSize)},
		{"  time", cmdutil.Seconds(r.Time)},
		{"  algbw", fmt.Sprintf("%.4g GB/s", r.AlgBW)},
		{"  busbw", fmt.Sprintf("%.4g GB/s", r.BusBW)},
		{"  rank finish", fmt.Sprintf("min %s  mean %s  max %s", cmdutil.Seconds(r.FinishMin), cmdutil.Seconds(r.FinishMean), cmdutil.Seconds(r.FinishMax))},
		{"  data", data},
		{"  closed form", model},
		{"  simulated", fmt.Sprintf("%d events, %d ops, %d messages", r.Events, r.Ops, r.Messages)},
		{"  wall time", fmt.Sprintf("%s (%.3g ops/s)", cmdutil.Seconds(r.Wall), r.OpsPerSecond)},
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	if len(r.Links) == 0 {
		return nil
	}
	fmt.Fprintf(streams.Out, "busiest links, most utilized first (utilization: bytes over bandwidth x run time; busy: at least one flow crossing)\n")
	lrows := [][]string{{"  link", "bytes", "busy", "of the run", "utilization", "peak flows"}}
	for _, l := range r.Links {
		lrows = append(lrows, []string{"  " + l.From + " -> " + l.To, configs.FormatBytes(int64(l.Bytes)), cmdutil.Seconds(l.Busy),
			fmt.Sprintf("%.0f%%", 100*l.BusyShare), fmt.Sprintf("%.0f%%", 100*l.Utilization), fmt.Sprint(l.PeakFlows)})
	}
	return cmdutil.Table(streams.Out, lrows)
}

// parseJitter reads --jitter.
func parseJitter(v string) (network.Jitter, error) {
	kind, d, ok := strings.Cut(v, ":")
	sigma, err := configs.ParseDuration(d)
	if !ok || err != nil || sigma <= 0 || kind != "normal" && kind != "lognormal" {
		return network.Jitter{}, cmdutil.Flagf("--jitter %q: want normal:SIGMA or lognormal:MEDIAN with a positive duration, e.g. normal:200ns", v)
	}
	return network.Jitter{Sigma: sigma, Lognormal: kind == "lognormal"}, nil
}

// inputs are what costs a run's messages time, for naming the likely
// cause of a run past the clock's limit (collsim.ClockHint): the
// machine's values (with --degrade's), or the LogGOPS flags, and the flags
// that add noise.
func inputs(o *Options, m *configs.Machine, cfg sim.Config) []configs.Input {
	in := o.LogGOPS.Inputs(cfg.LogGOPS)
	if cfg.LogGOPS == nil {
		in = slices.Clone(m.Inputs) // --degrade's among them (configs.Machine.Degrade)
	}
	fixed := func(key, value, d string) {
		if t, err := configs.ParseDuration(d); err == nil {
			in = append(in, cmdutil.FlagInput(key, value, configs.Fixed(t)))
		}
	}
	if _, sigma, ok := strings.Cut(o.Jitter, ":"); ok {
		fixed("--jitter", o.Jitter, sigma)
	}
	if _, d, ok := strings.Cut(o.Noise.Periodic, ":"); ok {
		fixed("--noise-periodic", o.Noise.Periodic, d)
	}
	if d, at := cfg.Noise.LongestDetour(); at != "" { // --noise-trace's, or the config's trace
		in = append(in, configs.Input{Key: "the noise trace's longest detour", Value: d.String(), Where: at, Cost: configs.Fixed(d)})
	}
	return in
}

// degrade returns m with the links of specs ("FROM->TO:FACTOR") at reduced
// bandwidth; m itself (perhaps a shared built-in) is left as it is.
func degrade(m *configs.Machine, specs []string) (*configs.Machine, error) {
	for _, spec := range specs {
		var err error
		if m, err = m.Degrade(spec); err != nil {
			return nil, &cmdutil.FlagError{Err: fmt.Errorf("--degrade %q: %w", spec, err)}
		}
	}
	return m, nil
}

// fail returns m with the links of specs ("FROM->TO", both directions)
// failed and routed around.
func fail(m *configs.Machine, specs []string) (*configs.Machine, error) {
	if len(specs) == 0 {
		return m, nil
	}
	m, err := m.Fail(specs)
	if err != nil {
		return nil, &cmdutil.FlagError{Err: fmt.Errorf("--fail: %w", err)}
	}
	return m, nil
}

// readProgress counts the bytes read through it and shows the count.
type readProgress struct {
	r           io.Reader
	done, total int64
	show        func(done, total int64)
}

func (p *readProgress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	p.show(p.done, p.total)
	return n, err
}
