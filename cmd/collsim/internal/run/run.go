// Package run is `collsim run`: simulate one collective call on a machine.
package run

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/trace"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
)

// Options are the flags of `collsim run`.
type Options struct {
	Collective string
	Algorithm  string
	Machine    string
	Network    string
	Placement  string
	Verify     string
	Ranks      string // a number, a list or a doubling range
	RanksGiven bool   // false: 64, or the machine's slots if fewer
	CSV        bool   // rows as CSV
	Size       string
	ElemSize   int64
	Root       int
	Seed       uint64
	JSON       bool
	GOAL       string   // a GOAL file to run instead of a collective
	Links      int      // report the busiest links (flow network)
	Routing    string   // override the machine's routing (flow network)
	Jitter     string   // per-message latency noise (flow network): "normal:200ns"
	Set        []string // machine config settings: "PATH=VALUE"
	Degrade    []string // links at reduced bandwidth: "FROM->TO:FACTOR"
	Fail       []string // failed links (both directions): "FROM->TO"
	Shape      cmdutil.ShapeFlags
	LogGOPS    cmdutil.LogGOPSFlags
	Noise      cmdutil.NoiseFlags
	LinksCSV   string // write the busiest links' utilization over time to this CSV
	LinkBins   int    // spans of the run for utilization over time
	Trace      string // write a Chrome trace of the run to this file
	Timeline   string // draw the run as an SVG Gantt chart into this file
	Quiet      bool   // no progress line
	changed    func(flag string) bool
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
	return cmdutil.Display(streams, o.Quiet, o.Progress)
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
			o.changed = cmd.Flags().Changed
			if err := checkFlags(cmd.Flags(), o); err != nil {
				return err
			}
			if o.GOAL == "" {
				if err := cmdutil.OptionsApply(cmd.Flags(), collectives.Collective(o.Collective), o.Algorithm); err != nil {
					return err
				}
				if err := cmdutil.SizeApplies(cmd.Flags(), collectives.Collective(o.Collective)); err != nil {
					return err
				}
			}
			return Run(streams, o)
		},
	}
	o.register(cmd.Flags())
	return cmd
}

// register defines the flags of `collsim run` on f (a sweep's points are
// set through the same flags, so they accept exactly what run does).
func (o *Options) register(f *pflag.FlagSet) {
	f.StringVarP(&o.Collective, "collective", "c", "allreduce", "collective: "+cmdutil.CollectiveNames())
	f.StringVarP(&o.Algorithm, "algo", "a", "", "algorithm, or a comma-separated list (default: the collective's default; see collsim algos)")
	f.StringVarP(&o.Machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage+"; a comma-separated list runs each")
	f.StringVar(&o.Network, "network", "", "network model: analytic (no link sharing), flow (max-min fair sharing on the machine's routes) or loggops (default: analytic; loggops with --goal)")
	f.StringVar(&o.GOAL, "goal", "", "run this GOAL schedule file instead of a collective")
	o.LogGOPS.Register(f)
	o.Noise.Register(f)
	o.Shape.Register(f)
	f.StringVar(&o.Placement, "placement", "", "rank placement: block, round_robin, random (default: the machine's)")
	f.StringVar(&o.Verify, "verify", "auto", "run with real data and check every rank's result: auto (when it fits in memory), on, off")
	f.StringVarP(&o.Ranks, "ranks", "n", "64", `number of ranks, or a list or doubling range "2..1024" (default: 64, or the machine's slots if fewer)`)
	f.StringVarP(&o.Size, "size", "s", "1MiB", `message size in bytes, with units: 8, 64KiB, 1MiB (nccl-tests sizes), or a list or doubling range "8..64MiB"`)
	f.BoolVar(&o.CSV, "csv", false, "print one CSV row per run (a header first)")
	f.Int64Var(&o.ElemSize, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.IntVar(&o.Root, "root", 0, "root rank of rooted collectives")
	f.Uint64Var(&o.Seed, "seed", 1, "seed for every random choice (placement, data)")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	f.StringVar(&o.Routing, "routing", "", "with --network flow: minimal, valiant or ugal (Dragonfly detours through a third group), or ecmp (a fat-tree's equal paths by flow hash); default: the machine's")
	f.StringVar(&o.Jitter, "jitter", "", `with --network flow: per-message latency noise "normal:SIGMA" (cut at 0) or "lognormal:MEDIAN", e.g. normal:200ns, seeded by --seed`)
	f.StringArrayVar(&o.Set, "set", nil, `a machine config setting "PATH=VALUE", e.g. network.fat_tree.taper=2 or link.bandwidth=400Gbit/s (a path not from the top sets every setting ending with it, as a sweep's axes do); repeatable`)
	f.StringArrayVar(&o.Degrade, "degrade", nil, `a link at reduced bandwidth "FROM->TO:FACTOR", e.g. "s0.0->s1.0:0.5" (names as --links and collsim topo --dot print them); repeatable`)
	f.StringArrayVar(&o.Fail, "fail", nil, `a failed link "FROM->TO" (both directions), routed around by shortest paths where the topology allows; repeatable`)
	f.IntVar(&o.Links, "links", 0, "with --network flow: list the N busiest links (bytes, busy time, peak concurrent flows)")
	f.StringVar(&o.LinksCSV, "links-csv", "", "with --links: write those links' utilization over time to this CSV (link, from, to, start_s, end_s, utilization; draw it with collsim plot --heatmap)")
	f.IntVar(&o.LinkBins, "link-bins", 100, "with --links-csv or --trace: equal spans of the run over which each link's utilization is averaged")
	f.StringVar(&o.Trace, "trace", "", "write the simulated run as Chrome trace-event JSON to this file (open it in Perfetto or chrome://tracing): a track per rank, every op, messages as arrows")
	f.StringVar(&o.Timeline, "timeline", "", "draw the simulated run as an SVG Gantt chart by rank into this file (up to 256 ranks)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress line on stderr (shown after 2 s when stderr is a terminal)")
	f.BoolVar(&o.Progress, "progress", false, "a progress line on stderr every 10 s after the first 2 s even when stderr is not a terminal (a batch job's log)")
}

// ranksLine is the rank count and how the ranks are placed.
func ranksLine(r *collsim.Result) string {
	if r.Placement == "none" {
		return fmt.Sprintf("%d (no machine, no placement)", r.Ranks)
	}
	return fmt.Sprintf("%d (%s placement)", r.Ranks, r.Placement)
}

// checkFlags refuses flag values that are not choices and flags that the
// run would ignore: a flag that does nothing must say so, not pass as if
// it had been applied.
func checkFlags(f *pflag.FlagSet, o *Options) error {
	if o.CSV && o.JSON {
		return cmdutil.Flagf("--csv and --json: give one output format")
	}
	if o.GOAL != "" {
		if err := cmdutil.NotApplicable(f, "with --goal the file is the program: its ranks, sizes and dependencies (and --trace and --timeline draw collective calls only)", "collective", "algo", "ranks",
			"size", "elem-size", "root", "verify", "segment", "node-size", "group-size", "inner", "intra", "groups", "steps", "overlap", "trace", "timeline"); err != nil {
			return err
		}
		if f.Changed("reduce-bandwidth") {
			return cmdutil.Flagf("--reduce-bandwidth does not apply: a GOAL file has no reductions (collsim schedule --reduce-bandwidth writes them into it as calcs)")
		}
	}
	if o.Network == "loggops" || o.Network == "" && o.GOAL != "" {
		return cmdutil.NotApplicable(f, "the loggops network has no machine: every message costs L, o, g and G (use --network analytic or flow to run on the machine)",
			"machine", "placement", "degrade", "fail", "set", "routing", "jitter", "links", "links-csv")
	}
	return nil
}

// Run carries out `collsim run`.
func Run(streams *cmdutil.IO, o *Options) error {
	e, err := o.experiment()
	if err != nil {
		return err
	}
	var done func()
	e.Progress, done = o.progress(streams)
	if o.GOAL != "" {
		return runGOAL(streams, o, e, done)
	}
	ranks := []int{0} // the Experiment's default: 64, or the machine's slots
	if o.RanksGiven {
		if ranks, err = cmdutil.Ints(o.Ranks); err != nil {
			return &cmdutil.FlagError{Err: fmt.Errorf("--ranks: %w", err)}
		}
		for _, n := range ranks {
			if n < 1 || n > sim.MaxRanks {
				return cmdutil.Flagf("--ranks must be 1..%d, not %d", sim.MaxRanks, n)
			}
		}
	}
	sizes, err := cmdutil.Sizes(o.Size)
	if err != nil {
		return &cmdutil.FlagError{Err: fmt.Errorf("--size: %w", err)}
	}
	if err := o.call(e); err != nil {
		return err
	}
	machines := []*configs.Machine{e.Machine}
	if e.Machine == nil && strings.Contains(o.Machine, ",") {
		machines = nil
		named := map[string]string{} // machine name -> where it came from
		for _, name := range strings.Split(o.Machine, ",") {
			m, err := o.machine(strings.TrimSpace(name))
			if err != nil {
				return err
			}
			if first, ok := named[m.Name]; ok {
				// Rows say the machine by its name: two alike would mix.
				if first == m.Source {
					return cmdutil.Flagf("-m: %s is given twice", m.Source)
				}
				return cmdutil.Flagf("-m: %s and %s are both named %q, so their rows could not be told apart: rename one (its name: key)", first, m.Source, m.Name)
			}
			named[m.Name] = m.Source
			machines = append(machines, m)
		}
	}
	// One run, or one per point of the lists and ranges given: machines x
	// algorithms x ranks x sizes, each printed as it ends (as nccl-tests
	// prints its sizes).
	var outs []*collsim.Result
	points := len(machines) * len(ranks) * len(sizes) * (strings.Count(o.Algorithm, ",") + 1)
	var rec *trace.Recorder
	if o.Trace != "" || o.Timeline != "" {
		if points > 1 {
			return cmdutil.Flagf("--trace and --timeline record one run; give one machine, algorithm, rank count and size")
		}
		rec = trace.NewRecorder()
		e.Trace = rec.Event
	}
	if o.Timeline != "" && !strings.HasSuffix(o.Timeline, ".svg") {
		return cmdutil.Flagf("--timeline %s: the timeline is SVG; give a .svg file", o.Timeline)
	}
	if err := o.linkSpans(e, points); err != nil {
		return err
	}
	var rows *pointRows
	if points > 1 && !o.JSON {
		rows = newPointRows(streams.Out, o.CSV)
		rows.machines = len(machines) > 1
	}
	type point struct {
		m    *configs.Machine
		algo string
		n    int
		size int64
	}
	var list []point
	for _, m := range machines {
		for _, algo := range strings.Split(o.Algorithm, ",") {
			for _, n := range ranks {
				for _, size := range sizes {
					list = append(list, point{m, strings.TrimSpace(algo), n, size})
				}
			}
		}
	}
	experiment := func(pt point) collsim.Experiment {
		p := *e
		p.Machine, p.Algorithm, p.Ranks, p.Size = pt.m, pt.algo, pt.n, pt.size
		return p
	}
	pointErr := func(pt point, err error) error {
		if points > 1 {
			on := fmt.Sprintf("%d ranks", pt.n)
			if pt.n == 0 {
				on = "its default ranks"
			}
			return fmt.Errorf("%s on %s of %s, %s: %w", cmp.Or(pt.algo, "the default algorithm"), on, pt.m.Name, configs.FormatBytes(pt.size), err)
		}
		return err
	}
	if points > 1 {
		// Every point is checked before the first runs: a bad one fails
		// the list at once, not after the points before it have run.
		for _, pt := range list {
			p := experiment(pt)
			if err := p.Dry(); err != nil {
				done()
				return pointErr(pt, err)
			}
		}
	}
	noted := map[string]bool{}
	for _, pt := range list {
		p := experiment(pt)
		out, err := p.Run()
		done() // the line off before a note, a row or an error
		if err != nil {
			return pointErr(pt, err)
		}
		if out.Note != "" && !noted[out.Note] { // once, not once a point
			noted[out.Note] = true
			fmt.Fprintln(streams.Err, "collsim: note:", out.Note)
		}
		if rows != nil {
			if err := rows.add(out, pt.algo); err != nil {
				return err
			}
		}
		outs = append(outs, out)
	}
	done()
	if rec != nil {
		if err := writeTrace(o, rec, outs[0]); err != nil {
			return err
		}
	}
	if o.LinksCSV != "" {
		if err := writeLinks(o.LinksCSV, outs[0]); err != nil {
			return err
		}
	}
	switch {
	case rows != nil:
		return rows.flush()
	case o.JSON && points > 1:
		return cmdutil.JSON(streams.Out, outs)
	case o.JSON:
		return cmdutil.JSON(streams.Out, outs[0])
	case o.CSV:
		return newPointRows(streams.Out, true).addFlush(outs[0], strings.TrimSpace(o.Algorithm))
	}
	return print(streams, outs[0])
}

// call sets the collective call the flags ask for, all but its ranks and
// size (which may be lists).
func (o *Options) call(e *collsim.Experiment) error {
	if o.ElemSize == 0 { // the library's default; a flag of 0 is a mistake
		return cmdutil.Flagf("--elem-size must be at least 1 byte, not 0")
	}
	e.Collective, e.ElemSize, e.Root = collectives.Collective(o.Collective), o.ElemSize, o.Root
	e.Shape = o.Shape.Shape
	e.Verify = collsim.Verify(o.Verify)
	if o.Verify == "auto" {
		e.Verify = collsim.VerifyAuto
	}
	return nil
}

// experiment is the run the flags ask for, without the collective call.
func (o *Options) experiment() (*collsim.Experiment, error) {
	e := &collsim.Experiment{Network: o.Network, Routing: o.Routing, Placement: o.Placement, Degrade: o.Degrade, Fail: o.Fail, Seed: o.Seed, BusiestLinks: o.Links}
	loggops := o.Network == collsim.LogGOPS || o.Network == "" && o.GOAL != ""
	// A list is one machine a point (Run); "" is a machine set by the caller
	// (Point).
	if !loggops && o.Machine != "" && (o.GOAL != "" || !strings.Contains(o.Machine, ",")) {
		m, err := o.machine(o.Machine)
		if err != nil {
			return nil, err
		}
		e.Machine = m
	}
	if o.Jitter != "" {
		j, err := parseJitter(o.Jitter)
		if err != nil {
			return nil, err
		}
		e.Jitter = &j
	}
	o.Noise.Seed = o.Seed
	noise, err := o.Noise.Load()
	if err != nil {
		return nil, err
	}
	e.Noise = noise
	if loggops || o.LogGOPS.Changed() {
		if e.LogGOPS, err = o.LogGOPS.Params(); err != nil {
			return nil, err
		}
		if e.ReduceBandwidth, err = o.LogGOPS.ReduceBandwidth(); err != nil {
			return nil, err
		}
	}
	e.Inputs = o.inputs(e.LogGOPS)
	return e, nil
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
	Rendezvous   uint64  `json:"rendezvous_messages"`
	EagerLimit   *int64  `json:"eager_limit_bytes,omitempty"`
	Wall         float64 `json:"wall_s"`
	OpsPerSecond float64 `json:"ops_per_s"`
	// Partitions is how many partitions of ranks were simulated in
	// parallel (one per processor, GOMAXPROCS); 0: sequentially.
	Partitions int `json:"partitions"`
	// What the run ran under, as collsim run's result has it.
	Routing    string         `json:"routing"`
	Faults     []string       `json:"faults,omitempty"`
	NoiseModel string         `json:"noise_model,omitempty"`
	Links      []collsim.Link `json:"busiest_links,omitempty"`
	Note       string         `json:"note,omitempty"`
}

// runGOAL runs a GOAL schedule file.
// linkSpans checks --link-bins and --links-csv and sets e's spans of
// the run for links' utilization over time; points is the runs the
// command makes.
func (o *Options) linkSpans(e *collsim.Experiment, points int) error {
	if flagChanged(o, "link-bins") && o.LinksCSV == "" && (o.Trace == "" || o.Links <= 0) {
		return cmdutil.Flagf("--link-bins sets the spans of --links-csv and of --trace's link counters (with --links); give one of them")
	}
	if o.LinksCSV != "" || o.Trace != "" && o.Links > 0 {
		if o.LinksCSV != "" && (o.Links <= 0 || points > 1) {
			return cmdutil.Flagf("--links-csv writes the links of --links N over one run; give --links and one machine, algorithm, rank count and size")
		}
		if o.LinkBins < 1 || o.LinkBins > 100_000 {
			return cmdutil.Flagf("--link-bins %d: give 1 to 100000", o.LinkBins)
		}
		e.LinkBins = o.LinkBins
	}
	return nil
}

func runGOAL(streams *cmdutil.IO, o *Options, e *collsim.Experiment, done func()) error {
	if err := o.linkSpans(e, 1); err != nil {
		return err
	}
	display := o.display(streams)
	var progress func(done, total int64)
	if display != nil {
		progress = func(done, total int64) { display.Reading(o.GOAL, done, total) }
	}
	start := time.Now()
	g, err := sim.ParseGOALFile(o.GOAL, progress)
	if err != nil {
		return err
	}
	parse := time.Since(start).Seconds()
	if display != nil {
		total := uint64(g.Ops())
		e.Progress = func(p sim.Progress) {
			p.OpsTotal = total
			display.Update(p)
		}
		done = display.Done
	}
	r, err := e.RunGOAL(g)
	done()
	if err != nil {
		return err
	}
	if o.LinksCSV != "" {
		// (Taken and never written with --goal: an audit.)
		if err := writeLinks(o.LinksCSV, r); err != nil {
			return err
		}
	}
	out := GOALResult{File: o.GOAL, Network: r.Network, Seed: o.Seed, Ranks: g.Ranks, Parse: parse, Time: r.Time,
		FinishMin: r.FinishMin, FinishMean: r.FinishMean, FinishMax: r.FinishMax, Events: r.Events, Ops: r.Ops,
		Messages: r.Messages, Rendezvous: r.Rendezvous, EagerLimit: r.EagerLimit, Wall: r.Wall, OpsPerSecond: r.OpsPerSecond, Partitions: r.Partitions,
		Routing: r.Routing, Faults: r.Faults, NoiseModel: r.NoiseModel, Links: r.Links, Note: r.Note}
	if r.Note != "" {
		fmt.Fprintln(streams.Err, "collsim: note:", r.Note)
	}
	if o.JSON {
		return cmdutil.JSON(streams.Out, out)
	}
	fmt.Fprintf(streams.Out, "%s: %d ranks, %s network, seed %d\n", out.File, out.Ranks, out.Network, out.Seed)
	err = cmdutil.Table(streams.Out, [][]string{
		{"  time", cmdutil.Seconds(out.Time)},
		{"  rank finish", fmt.Sprintf("min %s  mean %s  max %s", cmdutil.Seconds(out.FinishMin), cmdutil.Seconds(out.FinishMean), cmdutil.Seconds(out.FinishMax))},
		{"  routing", out.Routing},
		{"  faults", cmp.Or(strings.Join(out.Faults, ", "), "none")},
		{"  noise", cmp.Or(out.NoiseModel, "none")},
		{"  protocol", protocolLine(out.Network, out.EagerLimit, out.Rendezvous, out.Messages)},
		{"  simulated", fmt.Sprintf("%d events, %d ops, %d messages", out.Events, out.Ops, out.Messages)},
		{"  parse time", cmdutil.Seconds(out.Parse)},
		{"  wall time", fmt.Sprintf("%s (%.3g ops/s)%s", cmdutil.Seconds(out.Wall), out.OpsPerSecond, partitions(out.Partitions))},
	})
	if err != nil {
		return err
	}
	return printLinks(streams, out.Links)
}

// partitions tells how many partitions ran in parallel, if any.
func partitions(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d partitions in parallel", n)
}

func print(streams *cmdutil.IO, r *collsim.Result) error {
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
		// Every reason it is an estimate: leaving out o and g makes it too
		// low, pricing every route as the slowest too high.
		var reasons []string
		if r.HostCosts {
			reasons = append(reasons, "it leaves out the hosts' overhead o and gap g, which this machine charges")
		}
		if !r.RoutesAlike {
			reasons = append(reasons, "routes differ here and it prices every message as the slowest")
		}
		reasons = append(reasons, collsim.PlacementGaps{SharedNICs: r.SharedNICs, LocalDuplex: r.LocalDuplex, LocalBands: r.LocalBands}.Reasons()...)
		switch {
		case len(reasons) > 0:
			kind = "an estimate: " + strings.Join(reasons, "; ")
		case r.ModelExact:
			kind = "exact here"
		default:
			kind = fmt.Sprintf("upper bound; lower bound %s", cmdutil.Seconds(*r.ModelLower))
		}
		form := r.ModelKind
		if r.Rendezvous > 0 {
			form += " with each rendezvous message's handshake"
		}
		model = fmt.Sprintf("%s (%s, %s; simulated/model = %s)", cmdutil.Seconds(*r.Model), form, kind, ratio)
	}
	rows := [][]string{
		{"  ranks", ranksLine(r)},
		{"  size", sizeLine(r)},
		{"  time", cmdutil.Seconds(r.Time)},
		{"  algbw", bandwidthLine(r.Time, r.AlgBW)},
		{"  busbw", bandwidthLine(r.Time, r.BusBW)},
		{"  rank finish", fmt.Sprintf("min %s  mean %s  max %s", cmdutil.Seconds(r.FinishMin), cmdutil.Seconds(r.FinishMean), cmdutil.Seconds(r.FinishMax))},
		{"  routing", r.Routing},
		{"  faults", cmp.Or(strings.Join(r.Faults, ", "), "none")},
		{"  noise", cmp.Or(r.NoiseModel, "none")},
		{"  protocol", protocolLine(r.Network, r.EagerLimit, r.Rendezvous, r.Messages)},
		{"  data", data},
		{"  closed form", model},
		{"  simulated", fmt.Sprintf("%d events, %d ops, %d messages", r.Events, r.Ops, r.Messages)},
		{"  wall time", wallLine(r)},
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	return printLinks(streams, r.Links)
}

// wallLine gives the simulation's wall time and, where the call took
// noticeably longer in all (building the schedule and the data, checking
// the data), that too.
func wallLine(r *collsim.Result) string {
	line := fmt.Sprintf("%s (%.3g ops/s)", cmdutil.Seconds(r.Wall), r.OpsPerSecond)
	if r.WallTotal > 1.1*r.Wall && r.WallTotal-r.Wall > 0.01 {
		line += fmt.Sprintf(" simulating; %s in all, with the schedule, the network and the data built and checked", cmdutil.Seconds(r.WallTotal))
	}
	return line
}

// protocolLine says which messages went eagerly and which by rendezvous.
// On a machine's network a rendezvous costs a message its request's and
// its reply's latencies on top of its own (the closed forms and the
// step-by-step times include them); in the LogGOPS model, as in
// LogGOPSim, it costs no latency: the send completes only once the
// receiver has taken the message in.
func protocolLine(network string, eagerLimit *int64, rendezvous, messages uint64) string {
	switch {
	case messages == 0:
		// A call of no elements (collectives.SendsNothing), or one rank:
		// "every message went eagerly" of none read oddly (a new user's
		// trial).
		return "no message sent"
	case eagerLimit == nil:
		return "every message eager (no eager limit)"
	case rendezvous == 0:
		return fmt.Sprintf("eager up to %s: every message went eagerly", configs.FormatBytes(*eagerLimit))
	}
	how := "a request and a reply first: 2 latencies more each"
	if network == collsim.LogGOPS {
		how = "LogGOPSim's: no latency more, but each send completes only once its receiver has taken it in"
	}
	return fmt.Sprintf("eager up to %s: %d of %d messages went by rendezvous (%s)",
		configs.FormatBytes(*eagerLimit), rendezvous, messages, how)
}

// sizeLine is the call's size in bytes and elements: an alltoall's count
// is what each rank sends to each rank.
func sizeLine(r *collsim.Result) string {
	elements := "elements"
	if r.Count == 1 {
		elements = "element" // "1 elements" (a new user's trial)
	}
	if r.Collective == string(collectives.Alltoall) {
		return fmt.Sprintf("%s = %d %s of %dB to each of %d ranks", configs.FormatBytes(r.SizeBytes), r.Count, elements, r.ElemSize, r.Ranks)
	}
	return fmt.Sprintf("%s = %d %s of %dB", configs.FormatBytes(r.SizeBytes), r.Count, elements, r.ElemSize)
}

// printLinks prints the busiest links' table, if any.
func printLinks(streams *cmdutil.IO, links []collsim.Link) error {
	if len(links) == 0 {
		return nil
	}
	fmt.Fprintf(streams.Out, "busiest links, most utilized first (utilization: bytes over bandwidth x run time; busy: at least one flow crossing)\n")
	lrows := [][]string{{"  link", "bytes", "busy", "of the run", "utilization", "peak flows"}}
	for _, l := range links {
		lrows = append(lrows, []string{"  " + l.From + " -> " + l.To, configs.FormatBytes(int64(l.Bytes)), cmdutil.Seconds(l.Busy),
			fmt.Sprintf("%.0f%%", 100*l.BusyShare), fmt.Sprintf("%.0f%%", 100*l.Utilization), fmt.Sprint(l.PeakFlows)})
	}
	return cmdutil.Table(streams.Out, lrows)
}

// parseJitter reads --jitter.
func parseJitter(v string) (network.Jitter, error) {
	kind, d, ok := strings.Cut(v, ":")
	if !ok || kind != "normal" && kind != "lognormal" {
		return network.Jitter{}, cmdutil.Flagf("--jitter %q: want normal:SIGMA or lognormal:MEDIAN with a positive duration, e.g. normal:200ns", v)
	}
	sigma, err := configs.ParseDuration(d)
	switch {
	case err != nil:
		// Say what is wrong with the duration (a unit it does not know,
		// 1h, was blamed on its sign).
		return network.Jitter{}, cmdutil.Flagf("--jitter %q: %v", v, err)
	case sigma <= 0:
		return network.Jitter{}, cmdutil.Flagf("--jitter %q: the duration must be positive, e.g. %s:200ns", v, kind)
	}
	return network.Jitter{Sigma: sigma, Lognormal: kind == "lognormal"}, nil
}

// inputs are the flags that cost a run's messages time, for naming the
// likely cause of a run past the clock's limit (collsim.ClockHint): the
// LogGOPS network's costs, and the flags that add noise.
func (o *Options) inputs(p *sim.LogGOPS) []configs.Input {
	in := o.LogGOPS.Inputs(p)
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
	return in
}

// pointRows prints one row per run, as nccl-tests does: a table that
// grows as the runs end, or CSV.
type pointRows struct {
	w        io.Writer
	csv      *csv.Writer
	n        int
	machines bool // a column of machines (else the header names the one)
}

func newPointRows(w io.Writer, asCSV bool) *pointRows {
	r := &pointRows{w: w}
	if asCSV {
		r.csv = csv.NewWriter(w)
	}
	return r
}

// pointColumns are the rows' columns; CSV names them as the JSON does.
var pointColumns = []string{"collective", "algorithm", "machine", "network", "ranks", "size_bytes", "count", "time_s", "algbw_GBps", "busbw_GBps", "data_verified", "model_s", "requested"}

// add adds the row of out, run for the -a item requested ("" for the
// default; a library, such as ompi, names what chose the algorithm).
func (r *pointRows) add(out *collsim.Result, requested string) error {
	verified, model := "", "" // as --json's null: not checked
	if out.DataVerified != nil {
		verified = fmt.Sprint(*out.DataVerified) // as --json's true
	}
	if out.Model != nil {
		model = fmt.Sprint(*out.Model)
	}
	if r.csv != nil {
		if r.n == 0 {
			r.csv.Write(pointColumns)
		}
		r.n++
		r.csv.Write([]string{out.Collective, out.Algorithm, out.Machine, out.Network, fmt.Sprint(out.Ranks), fmt.Sprint(out.SizeBytes), fmt.Sprint(out.Count),
			fmt.Sprint(out.Time), fmt.Sprint(out.AlgBW), fmt.Sprint(out.BusBW), verified, model, requested})
		r.csv.Flush()
		return r.csv.Error()
	}
	if r.n == 0 {
		machine, column := " on "+out.Machine, ""
		if r.machines {
			machine, column = "", fmt.Sprintf("%-14s ", "machine")
		}
		fmt.Fprintf(r.w, "%s%s, %s network\n", out.Collective, machine, out.Network)
		fmt.Fprintf(r.w, "%s%-26s %7s %12s %12s %12s %12s %12s  %s\n", column, "algorithm", "ranks", "size", "count", "time", "algbw GB/s", "busbw GB/s", "data")
	}
	r.n++
	data := "checked"
	if out.DataVerified == nil {
		data = "not checked"
	}
	column := ""
	if r.machines {
		column = fmt.Sprintf("%-14s ", out.Machine)
	}
	algorithm := out.Algorithm
	if requested != "" && requested != out.Algorithm {
		algorithm = requested + ": " + algorithm // the library's choice
	}
	alg, bus := fmt.Sprintf("%.3f", out.AlgBW), fmt.Sprintf("%.3f", out.BusBW)
	if out.Time == 0 {
		alg, bus = "-", "-"
	}
	_, err := fmt.Fprintf(r.w, "%s%-26s %7d %12s %12d %12s %12s %12s  %s\n", column, algorithm, out.Ranks, configs.FormatBytes(out.SizeBytes), out.Count, cmdutil.Seconds(out.Time), alg, bus, data)
	return err
}

// bandwidthLine is a bandwidth of a call that took t seconds: none where
// it took no time (on 1 rank nothing moves; it read 0 GB/s, as if nothing
// got through: a new user's trial).
func bandwidthLine(t, gbps float64) string {
	if t == 0 {
		return "n/a (the call took no time)"
	}
	return fmt.Sprintf("%.4g GB/s", gbps)
}

func (r *pointRows) flush() error {
	if r.csv != nil {
		r.csv.Flush()
		return r.csv.Error()
	}
	return nil
}

func (r *pointRows) addFlush(out *collsim.Result, requested string) error {
	if err := r.add(out, requested); err != nil {
		return err
	}
	return r.flush()
}

// Setting is one flag of `collsim run` and its value, as a sweep's point
// sets it (flag names without the dashes).
type Setting struct{ Flag, Value string }

// Flags are the names of run's flags that a point may set: all but those
// that choose the output or another kind of run.
func Flags() []string { return slices.Clone(flagNames()) }

var flagNames = sync.OnceValue(func() []string {
	var names []string
	pointFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
})

// IsFlag says whether name is one of Flags.
func IsFlag(name string) bool { return flagSet()[name] }

var flagSet = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, n := range flagNames() {
		set[n] = true
	}
	return set
})

// Repeatable says whether run's flag may be given more than once (--degrade,
// --fail): a point may then give it a list.
func Repeatable(flag string) bool {
	f := pointFlags().Lookup(flag)
	return f != nil && f.Value.Type() == "stringArray"
}

// notPointFlags choose what run prints or run something else than one
// collective call; a point is one call and a sweep prints its own rows.
var notPointFlags = []string{"json", "csv", "quiet", "progress", "goal", "links", "machine", "set", "trace", "timeline", "links-csv", "link-bins"}

// pointFlags is run's flag set without notPointFlags.
func pointFlags() *pflag.FlagSet {
	all := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&Options{}).register(all)
	f := pflag.NewFlagSet("point", pflag.ContinueOnError)
	all.VisitAll(func(fl *pflag.Flag) {
		if !slices.Contains(notPointFlags, fl.Name) {
			f.AddFlag(fl)
		}
	})
	return f
}

// Point is the experiment a sweep's point describes: run's defaults, with
// settings given as run's flags would be, on machine m (nil: the default
// machine). The experiment prints nothing and shows no progress.
func Point(settings []Setting, m *configs.Machine) (*collsim.Experiment, error) {
	return NewPoints().Point(settings, m)
}

// Points reads points' settings with one flag set, reset to run's
// defaults before each point: a sweep's worker has one, instead of
// registering some fifty flags for every point it runs. Not for use by
// two goroutines at once.
type Points struct {
	o *Options
	f *pflag.FlagSet
}

// CheckOptions refuses, as run does, an algorithm option that none of the
// last point's algorithms takes. It is apart from Point, which also checks
// one setting at a time (a sweep file's line by line), where an option
// cannot be judged before the point's collective and algorithm are set.
func (p *Points) CheckOptions() error {
	return cmdutil.OptionsApply(p.f, collectives.Collective(p.o.Collective), p.o.Algorithm)
}

// NewPoints returns a reader of points.
func NewPoints() *Points {
	p := &Points{o: &Options{}, f: pflag.NewFlagSet("point", pflag.ContinueOnError)}
	p.f.SortFlags = false // reset visits every flag per point: no sorting each time
	p.o.register(p.f)
	return p
}

// reset gives every flag its default again, as a fresh flag set has it
// (the fields that no flag sets, Point sets itself).
func (p *Points) reset() error {
	var err error
	p.f.VisitAll(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			err = cmp.Or(err, sv.Replace(nil))
		} else {
			err = cmp.Or(err, fl.Value.Set(fl.DefValue))
		}
		fl.Changed = false
	})
	return err
}

// Point is the experiment of settings on machine m, as the package's
// Point.
func (p *Points) Point(settings []Setting, m *configs.Machine) (*collsim.Experiment, error) {
	if err := p.reset(); err != nil {
		return nil, err
	}
	o, f := p.o, p.f
	for _, s := range settings {
		if slices.Contains(notPointFlags, s.Flag) || f.Lookup(s.Flag) == nil {
			return nil, cmdutil.Flagf("%s is not a setting of a point; valid: %s", s.Flag, strings.Join(Flags(), ", "))
		}
		if err := f.Set(s.Flag, s.Value); err != nil {
			// In the words run's flags use (a sweep said "strconv.ParseUint:
			// parsing "abc": invalid syntax"; a new user's trial).
			return nil, cmdutil.Flagf("%s: %v", s.Flag, cmdutil.PlainFlagError(err))
		}
	}
	o.RanksGiven = f.Changed("ranks")
	if err := checkFlags(f, o); err != nil {
		return nil, err
	}
	o.Machine = "" // experiment() loads no machine by name: m is the point's
	e, err := o.experiment()
	if err != nil {
		return nil, err
	}
	if o.Network != collsim.LogGOPS {
		e.Machine = m
	}
	if err := o.call(e); err != nil {
		return nil, err
	}
	if e.Algorithm = strings.TrimSpace(o.Algorithm); strings.Contains(e.Algorithm, ",") {
		return nil, cmdutil.Flagf("algo %q: give one algorithm (a list belongs in axes)", o.Algorithm)
	}
	if o.RanksGiven {
		if e.Ranks, err = strconv.Atoi(strings.TrimSpace(o.Ranks)); err != nil || e.Ranks < 1 {
			if strings.ContainsAny(o.Ranks, ",.") {
				return nil, cmdutil.Flagf("ranks %q: give one whole number (a list or range belongs in axes)", o.Ranks)
			}
			return nil, cmdutil.Flagf("ranks %q: give a whole number of at least 1", o.Ranks)
		}
	}
	if e.Size, err = configs.ParseSize(strings.TrimSpace(o.Size)); err != nil {
		if strings.ContainsAny(o.Size, ",.") {
			return nil, cmdutil.Flagf("size %q: give one size (a list or range belongs in axes)", o.Size)
		}
		return nil, cmdutil.Flagf("%v", err)
	}
	return e, e.Check()
}

// writeTrace writes the recorded run to --trace and --timeline.
func writeTrace(o *Options, rec *trace.Recorder, r *collsim.Result) error {
	title := fmt.Sprintf("%s/%s, %d ranks, %s on %s (%s network)", r.Collective, r.Algorithm, r.Ranks, configs.FormatBytes(r.SizeBytes), r.Machine, r.Network)
	for _, out := range []struct {
		file  string
		write func(io.Writer, int, string) error
	}{{o.Trace, func(w io.Writer, ranks int, title string) error {
		return rec.WriteChrome(w, ranks, title, linkCounters(r))
	}}, {o.Timeline, rec.WriteSVG}} {
		if out.file == "" {
			continue
		}
		// Written whole or not at all: a refused trace leaves an
		// existing file as it was.
		var buf bytes.Buffer
		if err := out.write(&buf, r.Ranks, title); err != nil {
			return fmt.Errorf("%s: %w", out.file, err)
		}
		if err := os.WriteFile(out.file, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// linkCounters are the busiest links' utilization over time, for the
// trace's counter tracks.
func linkCounters(r *collsim.Result) []trace.Counter {
	var cs []trace.Counter
	for _, l := range r.Links {
		if len(l.OverTime) == 0 {
			continue
		}
		c := trace.Counter{Name: "utilization " + l.From + " -> " + l.To, Span: sim.FromSeconds(r.Time / float64(len(l.OverTime)))}
		c.Values = l.OverTime
		cs = append(cs, c)
	}
	return cs
}

// writeLinks writes the busiest links' utilization over time as CSV, a
// row per link and span, in the order of the --links table.
func writeLinks(file string, r *collsim.Result) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"link", "from", "to", "start_s", "end_s", "utilization"})
	for _, l := range r.Links {
		width := r.Time / float64(len(l.OverTime))
		for b, u := range l.OverTime {
			w.Write([]string{l.From + " -> " + l.To, l.From, l.To, strconv.FormatFloat(float64(b)*width, 'g', -1, 64),
				strconv.FormatFloat(float64(b+1)*width, 'g', -1, 64), strconv.FormatFloat(u, 'g', -1, 64)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// machine loads the machine name with the --set settings applied.
func (o *Options) machine(name string) (*configs.Machine, error) { return Machine(name, o.Set) }

// Machine loads the machine name (built in or a file) with --set settings
// ("PATH=VALUE") applied.
func Machine(name string, sets []string) (*configs.Machine, error) {
	o := &Options{Set: sets}
	if len(o.Set) == 0 {
		return configs.Resolve(name)
	}
	overrides, err := Overrides(o.Set)
	if err != nil {
		return nil, err
	}
	source, data, err := configs.Source(name)
	if err != nil {
		return nil, err
	}
	m, err := configs.WithOverrides(source, data, overrides)
	if oe := (*configs.OverrideError)(nil); errors.As(err, &oe) {
		return nil, &cmdutil.FlagError{Err: err} // a --set value the machine refuses
	}
	return m, err
}

// Overrides reads --set values, "PATH=VALUE" with VALUE in YAML (a number,
// a string, or a list such as [4, 4, 4]).
func Overrides(sets []string) ([]configs.Override, error) {
	var out []configs.Override
	for _, s := range sets {
		path, value, ok := strings.Cut(s, "=")
		var doc yaml.Node
		if !ok || path == "" {
			return nil, cmdutil.Flagf("--set %q: give PATH=VALUE, e.g. network.fat_tree.taper=2", s)
		}
		if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
			// [2,2,2 said "give PATH=VALUE" (a new user's trial).
			return nil, cmdutil.Flagf("--set %q: the value %q is not YAML (%s); quote a list as '[2, 2, 2]'", s, value, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if len(doc.Content) == 0 {
			return nil, cmdutil.Flagf("--set %q: no value after =; give PATH=VALUE, e.g. network.fat_tree.taper=2", s)
		}
		o := configs.Override{Path: strings.TrimSpace(path), Value: doc.Content[0], Where: "--set " + s}
		if err := configs.CheckOverride(o); err != nil {
			return nil, &cmdutil.FlagError{Err: err}
		}
		out = append(out, o)
	}
	return out, nil
}

// flagChanged says whether the command line set flag.
func flagChanged(o *Options, flag string) bool { return o.changed != nil && o.changed(flag) }
