package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/taskbench"
)

type taskbenchFlags struct {
	machineFlags
	ranks, width, steps, radix, period, graphs int
	pattern, runtime                           string
	fraction, imbalance                        float64
	output, duration, overhead                 string
	metg                                       bool
	metgFrom                                   string
	metgPoints, workers                        int
	plot                                       string
}

func newTaskBench(streams *cmdutil.IO) *cobra.Command {
	o := &taskbenchFlags{}
	cmd := &cobra.Command{
		Use:   "taskbench",
		Short: "Simulate Task Bench task graphs, and find their METG",
		Long: `Simulate Task Bench (Slaughter et al., SC 2020): --graphs task graphs of
--width columns and --steps timesteps, each task depending on tasks of the
step before by --pattern, running a kernel of --duration plus the runtime
system's --overhead per task on its rank's core, and sending --output bytes
to each dependent task on another rank. Columns are spread over the ranks
in blocks as Task Bench's MPI implementation deals them; a rank is a core.
--runtime mpi (the default) runs the graphs as that implementation does:
one graph after another, and in each timestep a rank posts its receives
and its last step's sends, waits for all of them, then runs its tasks;
--runtime async runs each task as soon as its inputs are in and sends its
output at once, the graphs' timesteps interleaved.

Prints the elapsed time, efficiency (kernel time over elapsed x cores) and
task granularity (elapsed x cores / tasks). --metg runs the graph with the
kernel halved --metg-points times from --metg-from, on all cores, and prints
the curve and METG(50%), found as Task Bench's chart_metg.py finds it (the
smallest granularity at 50% or more, moved along the line to the next
shorter kernel's point, below 50%), after 6 geometric bisections between
the halvings around the crossing (rows of their own in the curve).`,
		Example: `  collsim workload taskbench --ranks 64 --width 64 --steps 100 --pattern stencil_1d --duration 100us --overhead 10us -m small
  collsim workload taskbench --ranks 256 --width 256 --steps 50 --pattern nearest --radix 5 --overhead 1us --metg -m xc40 --plot metg.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "small", collsim.Analytic)
	f.IntVarP(&o.ranks, "ranks", "n", 16, "ranks (cores)")
	f.IntVar(&o.width, "width", 0, "columns of each graph (default: the ranks)")
	f.IntVar(&o.steps, "steps", 100, "timesteps")
	f.StringVar(&o.pattern, "pattern", "stencil_1d", "dependence pattern: trivial, no_comm, stencil_1d, stencil_1d_periodic, dom, tree, fft, all_to_all, nearest, spread, random_nearest")
	f.IntVar(&o.radix, "radix", 3, "nearest, spread, random_nearest: dependencies per task")
	f.IntVar(&o.period, "period", 3, "spread, random_nearest: dependence sets that cycle")
	f.Float64Var(&o.fraction, "fraction", 0.25, "random_nearest: the share of candidate dependencies kept")
	f.IntVar(&o.graphs, "graphs", 1, "task graphs alike but for their draws (each its own imbalance and random_nearest edges, as Task Bench's)")
	f.StringVar(&o.runtime, "runtime", taskbench.RuntimeMPI, "how ranks run their tasks: mpi (Task Bench's MPI implementation: graphs one after another, each timestep's messages waited for before its tasks) or async (each task as soon as its inputs are in, graphs interleaved)")
	f.StringVar(&o.output, "output", "16", "bytes each task sends to each dependent task")
	f.StringVar(&o.duration, "duration", "100us", "each task's kernel")
	f.Float64Var(&o.imbalance, "imbalance", 0, "load imbalance as Task Bench's -imbalance, 0 to 2: each task's kernel scaled by a seeded factor 1 + (u - 1/2) imbalance, u uniform in [0, 1) (mean 1)")
	f.StringVar(&o.overhead, "overhead", "1us", "the runtime system's cost per task, on the rank's core")
	f.BoolVar(&o.metg, "metg", false, "sweep the kernel down and find METG(50%)")
	f.StringVar(&o.metgFrom, "metg-from", "10ms", "with --metg: the longest kernel")
	f.IntVar(&o.metgPoints, "metg-points", 20, "with --metg: kernels, each half the one before")
	f.IntVar(&o.workers, "workers", 0, "with --metg: simulations at once (default: one per core)")
	f.StringVar(&o.plot, "plot", "", "with --metg: draw efficiency against granularity into this .png or .svg")
	return cmd
}

func (o *taskbenchFlags) job(cmd *cobra.Command) (taskbench.Job, error) {
	var j taskbench.Job
	f := cmd.Flags()
	if !o.metg {
		if err := cmdutil.NotApplicable(f, "they shape a METG sweep (give --metg)", "metg-from", "metg-points", "workers", "plot"); err != nil {
			return j, err
		}
	} else if err := cmdutil.NotApplicable(f, "--metg sweeps the kernel from --metg-from", "duration"); err != nil {
		return j, err
	} else if o.plot != "" {
		if err := cmdutil.OutputFile("--plot", o.plot, ".png", ".svg"); err != nil {
			return j, err
		}
	}
	for _, param := range []string{"radix", "period", "fraction"} {
		// (They were ignored without a word: --radix 5 with stencil_1d.)
		if readers := taskbench.Readers(param); f.Changed(param) && !slices.Contains(readers, o.pattern) {
			return j, cmdutil.Flagf("--%s does not apply to --pattern %s: only %s read it", param, o.pattern, strings.Join(readers, ", "))
		}
	}
	var err error
	if o.workers, err = cmdutil.Workers(f, o.workers); err != nil {
		return j, err
	}
	if o.ranks < 1 || o.steps < 1 || o.graphs < 1 || o.metgPoints < 1 {
		return j, cmdutil.Flagf("--ranks, --steps, --graphs and --metg-points must be at least 1")
	}
	// (0 read as the default, without a word: --width 0 ran the ranks'
	// width, --period 0 Task Bench's 3.)
	if f.Changed("width") && o.width < 1 || f.Changed("period") && o.period < 1 {
		return j, cmdutil.Flagf("--width and --period must be at least 1 (leave --width out for the ranks)")
	}
	out, err := configs.ParseSize(o.output)
	if err != nil {
		return j, cmdutil.Flagf("--output: %v", err)
	}
	dur, err := configs.ParseDuration(o.duration)
	if err != nil {
		return j, cmdutil.Flagf("--duration: %v", err)
	}
	over, err := configs.ParseDuration(o.overhead)
	if err != nil {
		return j, cmdutil.Flagf("--overhead: %v", err)
	}
	width := o.width
	if width == 0 {
		width = o.ranks
	}
	g := taskbench.Graph{Width: width, Steps: o.steps, Pattern: o.pattern, Radix: o.radix, Period: o.period, Fraction: o.fraction,
		Output: out, Duration: dur, Imbalance: o.imbalance, Seed: o.seed}
	if !slices.Contains(taskbench.Runtimes, o.runtime) {
		return j, cmdutil.Flagf("--runtime %q: %s", o.runtime, strings.Join(taskbench.Runtimes, " or "))
	}
	j = taskbench.Job{Ranks: o.ranks, Overhead: over, Runtime: o.runtime}
	for i := range o.graphs {
		g.Index = i
		j.Graphs = append(j.Graphs, g)
	}
	if err := j.Check(); err != nil {
		return j, &cmdutil.FlagError{Err: err}
	}
	return j, nil
}

func (o *taskbenchFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	j, err := o.job(cmd)
	if err != nil {
		return err
	}
	if j.Ranks > e.Machine.Slots() {
		return fmt.Errorf("%d ranks, but machine %s has %d slots; use a larger machine or fewer ranks", j.Ranks, e.Machine.Name, e.Machine.Slots())
	}
	if o.metg {
		return o.runMETG(streams, e, j)
	}
	p, res, err := e.RunTaskBench(j)
	if err != nil {
		return err
	}
	g := j.Graphs[0]
	if err := o.writeTrace(j.Ranks, fmt.Sprintf("Task Bench %s %dx%d on %d ranks of %s", g.Pattern, g.Width, g.Steps, j.Ranks, res.Machine)); err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, p)
	}
	return streams.Table([][]string{
		{"graphs", fmt.Sprintf("%d x %s, %d columns x %d steps, %d tasks, %s runtime", len(j.Graphs), g.Pattern, g.Width, g.Steps, p.Tasks, j.Runtime)},
		{"ranks", fmt.Sprintf("%d of %s (%s network)", j.Ranks, res.Machine, res.Network)},
		{"task", fmt.Sprintf("kernel %s, overhead %s, output %s", cmdutil.Seconds(g.Duration.Seconds()), cmdutil.Seconds(j.Overhead.Seconds()), configs.FormatBytes(g.Output))},
		{"elapsed", cmdutil.Seconds(p.Elapsed)},
		{"efficiency", fmt.Sprintf("%.1f%%", 100*p.Efficiency)},
		{"granularity", cmdutil.Seconds(p.Granularity) + " per task per core"},
		{"simulated", fmt.Sprintf("%d ops, %d messages in %s", res.Ops, res.Messages, cmdutil.Seconds(res.Wall))},
	})
}

func (o *taskbenchFlags) runMETG(streams *cmdutil.IO, e *collsim.Experiment, j taskbench.Job) error {
	from, err := configs.ParseDuration(o.metgFrom)
	if err != nil || from <= 0 {
		return cmdutil.Flagf("--metg-from %q: a positive duration", o.metgFrom)
	}
	var durations []sim.Time
	for d, i := from, 0; i < o.metgPoints && d > 0; d, i = d/2, i+1 {
		durations = append(durations, d)
	}
	if len(durations) < o.metgPoints {
		// It stopped short without a word (an audit).
		fmt.Fprintf(streams.Err, "collsim: note: --metg-points %d: halving %s reaches the clock's 1 ps after %d kernels; these are all it runs\n", o.metgPoints, cmdutil.Seconds(from.Seconds()), len(durations))
	}
	report, stop := o.counter(streams, "METG points simulated", len(durations))
	defer stop()
	curve, metg, crossed, err := e.METG(j, durations, o.workers, report)
	if err != nil {
		return err
	}
	if o.json {
		out := struct {
			Curve []any    `json:"curve"`
			METG  *float64 `json:"metg_s"` // null: no kernel reached 50% efficiency
			// Bound: even the shortest kernel ran at 50% or more, so
			// METG is at most metg_s.
			Bound bool `json:"metg_is_upper_bound,omitempty"`
		}{Bound: !crossed}
		for _, p := range curve {
			out.Curve = append(out.Curve, p)
		}
		if !math.IsNaN(metg) {
			out.METG = &metg
		}
		return cmdutil.JSON(streams.Out, out)
	}
	g := j.Graphs[0]
	fmt.Fprintf(streams.Out, "Task Bench %s, %d x %d columns x %d steps on %d ranks, overhead %s per task\n", g.Pattern, len(j.Graphs), g.Width, g.Steps, j.Ranks, cmdutil.Seconds(j.Overhead.Seconds()))
	rows := [][]string{{"kernel", "elapsed", "efficiency", "granularity"}}
	var xs, ys []float64
	for _, p := range curve {
		rows = append(rows, []string{cmdutil.Seconds(p.Duration), cmdutil.Seconds(p.Elapsed), fmt.Sprintf("%.1f%%", 100*p.Efficiency), cmdutil.Seconds(p.Granularity)})
		xs, ys = append(xs, p.Granularity), append(ys, 100*p.Efficiency)
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	switch {
	case math.IsNaN(metg):
		fmt.Fprintln(streams.Out, "METG(50%): not reached (no kernel ran at 50% efficiency; start --metg-from higher)")
	case !crossed:
		fmt.Fprintf(streams.Out, "METG(50%%): at most %s (even the shortest kernel ran at 50%%; give more --metg-points)\n", cmdutil.Seconds(metg))
	default:
		fmt.Fprintf(streams.Out, "METG(50%%): %s\n", cmdutil.Seconds(metg))
	}
	if o.plot != "" {
		fig := plotutil.Figure{Panels: []plotutil.Panel{{Title: fmt.Sprintf("Task Bench %s on %d ranks", g.Pattern, j.Ranks), XLabel: "task granularity (s)", YLabel: "efficiency (%)", LogX: true,
			Lines: []plotutil.Series{{Name: "efficiency", X: xs, Y: ys}, {Name: "50%", X: []float64{xs[len(xs)-1], xs[0]}, Y: []float64{50, 50}, Dashed: true}}}}}
		if err := fig.Save(o.plot); err != nil {
			return err
		}
	}
	return nil
}
