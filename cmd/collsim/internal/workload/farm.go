package workload

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/workloads/farm"
)

type farmFlags struct {
	machineFlags
	workers, tasks, chunk             int
	dist, duration, file, arg, result string
	submit, serialize, handle         string
}

func newFarm(streams *cmdutil.IO) *cobra.Command {
	o := &farmFlags{}
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Simulate a task farm: a master handing tasks to workers (mpi4py.futures)",
		Long: `Simulate a task farm as mpi4py.futures' MPIPoolExecutor runs one: rank 0, the
master, hands --tasks tasks to --workers workers (ranks 1..W), --chunk tasks a
message, each chunk to whichever worker returned its results first; a worker
runs its chunk and sends the results back. The master is one thread: per task
it pays --submit and serializes the --arg bytes at --serialize, and --handle
per result, besides the machine's per-message overheads.

Durations: --dist fixed (every task --duration), exponential (mean --duration,
seeded), or --durations FILE (one a line, e.g. 120us, or a bare number of
seconds; cycled). Workers share the master's node or not as the machine and
--placement put them (on small, each rank has a host of its own).

Prints throughput, argument bandwidth, worker utilisation, and the bounds:
the master's CPU, the master-worker link, and the workers; the smallest is
the limit, and the knee is the workers past which more add nothing.`,
		Example: `  collsim workload farm --workers 32 --tasks 10000 --duration 0
  collsim workload farm --workers 16 --tasks 2000 --dist exponential --duration 2ms --chunk 4
  collsim workload farm --workers 8 --tasks 500 --arg 4MiB --duration 0 -m fattree-1024`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	o.machineFlags.register(f, "small", collsim.Analytic)
	f.IntVarP(&o.workers, "workers", "w", 16, "workers (ranks 1..W; rank 0 is the master)")
	f.IntVar(&o.tasks, "tasks", 1000, "tasks")
	f.IntVar(&o.chunk, "chunk", 1, "tasks per message")
	f.StringVar(&o.dist, "dist", "fixed", "task durations: fixed or exponential (or give --durations)")
	f.StringVar(&o.duration, "duration", "1ms", "each task's duration (fixed) or their mean (exponential)")
	f.StringVar(&o.file, "durations", "", "a file of task durations, one a line (cycled)")
	f.StringVar(&o.arg, "arg", "0", "argument bytes per task")
	f.StringVar(&o.result, "result", "0", "result bytes per task")
	f.StringVar(&o.submit, "submit", "20us", "the master's cost to submit a task")
	f.StringVar(&o.serialize, "serialize", "5GB/s", "the rate the master serializes arguments at (0: free)")
	f.StringVar(&o.handle, "handle", "10us", "the master's cost to handle a result")
	return cmd
}

func (o *farmFlags) job(cmd *cobra.Command) (farm.Job, error) {
	j := farm.Job{Workers: o.workers, Tasks: o.tasks, Chunk: o.chunk, Dist: o.dist, Seed: o.seed}
	var err error
	if o.file != "" {
		if err := cmdutil.NotApplicable(cmd.Flags(), "--durations gives every task's", "duration", "dist"); err != nil {
			return j, err
		}
		// The file's faults are bad input (exit 1), as a config's are.
		data, err := configs.ReadFile(o.file, configs.MaxTraceBytes, "a durations file")
		if err != nil {
			return j, fmt.Errorf("--durations: %w", err)
		}
		if j.Durations, err = configs.ParseDurations(o.file, data); err != nil {
			return j, err
		}
		j.Dist = "file"
	} else if o.dist == "file" {
		return j, cmdutil.Flagf("--dist file: give the file with --durations FILE")
	} else if j.Mean, err = configs.ParseDuration(o.duration); err != nil {
		return j, cmdutil.Flagf("--duration: %v", err)
	}
	for _, s := range []struct {
		flag, v string
		to      *int64
	}{{"arg", o.arg, &j.Arg}, {"result", o.result, &j.Result}} {
		if *s.to, err = configs.ParseSize(s.v); err != nil {
			return j, cmdutil.Flagf("--%s: %v", s.flag, err)
		}
	}
	if j.Submit, err = configs.ParseDuration(o.submit); err != nil {
		return j, cmdutil.Flagf("--submit: %v", err)
	}
	if j.Handle, err = configs.ParseDuration(o.handle); err != nil {
		return j, cmdutil.Flagf("--handle: %v", err)
	}
	if o.serialize != "0" {
		if j.Serialize, err = configs.ParseBandwidth(o.serialize); err != nil {
			return j, cmdutil.Flagf("--serialize: %v (or 0: free)", err)
		}
	}
	if o.chunk < 1 {
		return j, cmdutil.Flagf("--chunk %d: at least 1 task a message", o.chunk)
	}
	if err := j.Check(); err != nil {
		return j, &cmdutil.FlagError{Err: err}
	}
	return j, nil
}

func (o *farmFlags) run(cmd *cobra.Command, streams *cmdutil.IO) error {
	j, err := o.job(cmd)
	if err != nil {
		return err
	}
	e, done, err := o.experiment(streams)
	if err != nil {
		return err
	}
	defer done()
	if j.Workers+1 > e.Machine.Slots() {
		return fmt.Errorf("a master and %d workers need %d ranks, but machine %s has %d slots; use a larger machine or fewer workers", j.Workers, j.Workers+1, e.Machine.Name, e.Machine.Slots())
	}
	r, err := e.RunFarm(j)
	if err != nil {
		return err
	}
	if err := o.writeTrace(j.Workers+1, fmt.Sprintf("task farm: %d tasks on %d workers of %s", j.Tasks, j.Workers, r.Result.Machine)); err != nil {
		return err
	}
	if o.json {
		return cmdutil.JSON(streams.Out, r)
	}
	bound := func(b float64) string {
		if b == 0 {
			return "none"
		}
		return cmdutil.SI(b, "tasks/s")
	}
	knee := fmt.Sprintf(" (knee at %.1f workers)", r.Knee)
	if r.Knee == 0 { // the master and the link cost nothing: more workers always help
		knee = " (no knee: the master and the link cost nothing)"
	}
	return streams.Table([][]string{
		{"farm", fmt.Sprintf("%d tasks (%s, mean %s), %d a message, on %d workers of %s (%s network)", j.Tasks, j.Dist, cmdutil.Seconds(j.Work()/float64(j.Tasks)), max(j.Chunk, 1), j.Workers, r.Result.Machine, r.Result.Network)},
		{"elapsed", cmdutil.Seconds(r.Elapsed)},
		{"throughput", cmdutil.SI(r.Throughput, "tasks/s")},
		{"bandwidth", cmdutil.SI(r.Bandwidth, "B/s") + " of arguments"},
		{"utilisation", fmt.Sprintf("%.1f%% of the workers' time runs tasks", 100*r.Utilisation)},
		{"bounds", fmt.Sprintf("master %s, link %s, workers %s", bound(r.MasterBound), bound(r.LinkBound), bound(r.WorkerBound))},
		{"limit", r.Limit + knee},
	})
}
