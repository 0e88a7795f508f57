package sweep

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/configs"
)

// Options are the flags of `collsim sweep`.
type Options struct {
	Output   string
	Format   string
	Jobs     int
	Shard    string
	Resume   bool
	DryRun   bool
	Quiet    bool
	Progress bool
}

// MaxFileBytes bounds a sweep file (read whole).
const MaxFileBytes = 1 << 20

// New returns the sweep command.
func New(streams *cmdutil.IO) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "sweep FILE.yaml",
		Short: "Run every point of a sweep file in parallel, one CSV or JSON Lines row per point",
		Long: `Run a what-if study: a sweep file gives a base experiment and axes (machines,
machine config settings, and any flag of collsim run), and every point of
their grid runs, in parallel on all processors. Each point is one row: its
index, the sweep's point count and hash, every axis's value, every field of
collsim run --json, the wall time and the error of a point that failed (the
sweep goes on). Rows are written in point order whatever the workers' order,
so that the output does not depend on the number of workers.

A sweep file:

  base:                          # settings every point shares
    machine: fattree-1024        # a built-in machine or a config file (relative to this file)
    network: flow
    ranks: 512
  axes:                          # the grid; the first axis is the outermost loop
    network.fat_tree.taper: [1, 2, 4]   # a machine config setting, by its path
    collective: [allreduce, alltoall]
    algo: [ompi, mpich]                 # run's flags, as their long names
    size: 64KiB..64MiB                  # ranks and size take run's ranges
  # zip: [[algo, segment]]       # axes that advance together (each an axis, lists of one length)
  replicas: 3                    # each point with seeds seed, seed+1, seed+2

A machine setting that does not start with a top-level section sets every
setting ending with it, key by key: link.bandwidth is the bandwidth of
every section named link (a network's default link), not of global_link
nor of a graph's edges that give their own.

--shard i/n runs every n-th point from the i-th (1-based); collsim merge joins
the shards' outputs into exactly what one run writes (but for wall times).`,
		Example: `  collsim sweep study.yaml --dry-run
  collsim sweep study.yaml -o results.csv
  collsim sweep study.yaml -o results.csv --resume       # after an interruption
  collsim sweep study.yaml -o part-2.jsonl --shard 2/4   # the second of 4 slices
  collsim merge part-*.jsonl -o results.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(streams, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "write the rows to this file (default: standard output)")
	f.StringVar(&o.Format, "format", "", "csv or jsonl (default: from -o's name, .jsonl for JSON Lines, else csv)")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, "points run at once (default: one per processor)")
	f.StringVar(&o.Shard, "shard", "", `run the i-th of n slices of the points, "i/n" (for a job array; join the outputs with collsim merge)`)
	f.BoolVar(&o.Resume, "resume", false, "continue the sweep in -o: skip the points it already holds")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the points, each checked as far as it can be without running it (exit 1 if any would fail), and run none")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress on stderr")
	f.BoolVar(&o.Progress, "progress", false, "a progress line every 10 s even when stderr is a terminal (instead of a bar)")
	return cmd
}

// plan is the flags' plan.
func (o *Options) plan() (Plan, error) {
	pl := Plan{Jobs: o.Jobs}
	if o.Jobs < 0 {
		return pl, cmdutil.Flagf("--jobs %d: give 1 or more (or 0 for one per processor)", o.Jobs)
	}
	if o.Shard != "" {
		i, n, ok := strings.Cut(o.Shard, "/")
		var err1, err2 error
		pl.Shard, err1 = strconv.Atoi(i)
		pl.Shards, err2 = strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || pl.Shards < 1 || pl.Shard < 1 || pl.Shard > pl.Shards {
			return pl, cmdutil.Flagf("--shard %q: give i/n with 1 <= i <= n, e.g. 2/4 (under Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=1-4)", o.Shard)
		}
	}
	return pl, nil
}

// Load reads and checks a sweep file.
func Load(file string) (*Spec, error) {
	data, err := configs.ReadFile(file, MaxFileBytes, "a sweep file")
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Run carries out `collsim sweep`.
func Run(streams *cmdutil.IO, o *Options, file string) error {
	pl, err := o.plan()
	if err != nil {
		return err
	}
	format := o.Format
	switch {
	case format == "" && strings.EqualFold(filepath.Ext(o.Output), ".json"):
		// (It wrote CSV there without a word.)
		return cmdutil.Flagf("-o %s: a sweep writes CSV or JSON Lines (one object a line); name it .csv or .jsonl", o.Output)
	case format == "":
		format = FormatOf(o.Output)
	case format != CSV && format != JSONL:
		return cmdutil.Flagf("--format %q: give csv or jsonl", format)
	case o.Output != "" && format != FormatOf(o.Output):
		// merge, plot and report tell the format by the name: jsonl in
		// a.csv was refused by each of them (a new user's trial).
		return cmdutil.Flagf("-o %s with --format %s: merge, plot and report read a file named so as %s; name it %s", o.Output, format, FormatOf(o.Output), map[string]string{CSV: ".csv", JSONL: ".jsonl"}[format])
	}
	if o.Resume && o.Output == "" {
		return cmdutil.Flagf("--resume continues the file of -o; give -o")
	}
	s, err := Load(file)
	if err != nil {
		return err
	}
	if o.DryRun {
		return s.dryRun(streams.Out, &pl)
	}
	out := streams.Out
	header := true
	if o.Output != "" {
		// Taken before the file is read for --resume, so that a second
		// sweep on it stops before it reads or writes a row.
		lf, err := os.OpenFile(o.Output, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer lf.Close()
		if err := lock(lf); err != nil {
			return fmt.Errorf("%s: %w", o.Output, err)
		}
		st, err := os.Stat(o.Output)
		switch {
		case err == nil && o.Resume && st.Size() > 0:
			if pl.Done, err = s.resume(o.Output, format, &pl); err != nil {
				return err
			}
			header = false
		case err == nil && !o.Resume && st.Size() > 0:
			return cmdutil.Flagf("%s exists; --resume continues it, or remove it to start again", o.Output)
		}
		f, err := os.OpenFile(o.Output, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriter(out)
	w := &writer{w: flushEach{bw}, format: format, cols: s.Columns()}
	if header {
		if err := w.header(); err != nil {
			return err
		}
	}
	show := o.display(streams.Err, len(s.todo(&pl)))
	pl.Progress = show.update
	sig, caught, stop := cmdutil.SignalContext()
	defer stop()
	pl.Stop = sig.Done()
	start := time.Now()
	failed, err := s.Run(w, pl)
	show.done()
	if errors.Is(err, ErrStopped) {
		// Say what is kept and how to go on (it exited 130 saying
		// nothing: a new user's trial).
		err = bw.Flush()
		kept := "its rows so far are"
		if o.Output != "" && !cmdutil.NotRegular(o.Output) {
			kept = fmt.Sprintf("the rows of the points done are in %s; collsim sweep %s -o %s --resume runs the rest", o.Output, file, o.Output)
		}
		return &cmdutil.Interrupted{Signal: caught(), Err: fmt.Errorf("sweep %s interrupted: %s", s.Hash, kept)}
	}
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if len(pl.Done) > 0 && !cmdutil.NotRegular(o.Output) {
		// Points before rows already in the file (a row removed, a gap)
		// came after them: put the file in point order, as one run
		// writes it (merge reads a part in that order).
		if err := sortRows(o.Output, format); err != nil {
			return err
		}
	}
	n := len(s.todo(&Plan{Shard: pl.Shard, Shards: pl.Shards}))
	if !o.Quiet {
		fmt.Fprintf(streams.Err, "collsim: sweep %s: %d points run, %d already done, %d failed, in %s\n", s.Hash, n-len(pl.Done), len(pl.Done), failed, time.Since(start).Round(time.Millisecond))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d points failed; the error column of their rows says why", failed, n-len(pl.Done))
	}
	return nil
}

// flushEach writes each row through to the file, so that an interrupted
// sweep leaves every finished row behind for --resume.
type flushEach struct{ w *bufio.Writer }

func (f flushEach) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}

// dryRun prints the points the plan would run, each checked as far as a
// point can be without simulating it (Experiment.Dry): a machine setting
// its machine does not have, more ranks than it has slots, an option its
// algorithm refuses. Points that would fail are listed with why, and make
// it fail.
func (s *Spec) dryRun(w io.Writer, pl *Plan) error {
	dims := make([]string, len(s.dims))
	for i, d := range s.dims {
		dims[i] = strconv.Itoa(len(s.Axes[d[0]].Values))
	}
	todo := s.todo(pl)
	fmt.Fprintf(w, "%s: sweep %s, %d points (%s)", s.File, s.Hash, s.Points(), strings.Join(dims, " x "))
	if pl.Shards > 0 {
		fmt.Fprintf(w, "; shard %d/%d runs %d", pl.Shard, pl.Shards, len(todo))
	}
	fmt.Fprintln(w)
	rows := [][]string{append(append([]string{"point"}, s.axisKeys()...), "check")}
	cache, points := &machines{}, run.NewPoints()
	var failed []string
	for _, p := range todo {
		row := []string{strconv.Itoa(p)}
		for _, v := range s.AxisValues(p) {
			row = append(row, show(v))
		}
		e, err := s.experiment(p, cache, points)
		if err == nil {
			err = e.Dry()
		}
		check := "ok"
		if err != nil {
			check = "fails"
			failed = append(failed, fmt.Sprintf("point %d: %s", p, oneLine(err.Error())))
		}
		rows = append(rows, append(row, check))
	}
	if err := cmdutil.Table(w, rows); err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	for _, f := range failed {
		fmt.Fprintln(w, f)
	}
	return fmt.Errorf("%d of %d points would fail (listed above); fix the sweep file, or leave them to fail in their rows", len(failed), len(todo))
}

// display shows a sweep's progress on stderr: a bar (points done, rate,
// ETA, the last point) on a terminal, else a line every 10 s (a batch
// job's log).
type display struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	start time.Time
	last  time.Time
	total int
}

func (o *Options) display(stderr io.Writer, total int) *display {
	d := &display{w: stderr, start: time.Now(), total: total}
	if o.Quiet {
		d.w = nil
		return d
	}
	if f, ok := stderr.(*os.File); ok && cmdutil.IsTerminal(f) && !o.Progress {
		d.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("sweep"),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	d.last = d.start
	return d
}

func (d *display) update(done, total, failed int, last string) {
	switch {
	case d.w == nil:
	case d.bar != nil:
		d.bar.Describe(fmt.Sprintf("sweep (%d failed) %s", failed, clip(last, 40)))
		d.bar.Set(done)
	case time.Since(d.last) >= cmdutil.ProgressLogEvery:
		d.last = time.Now()
		elapsed := time.Since(d.start)
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		fmt.Fprintf(d.w, "collsim: sweep: %d/%d points, %d failed, %s elapsed, about %s to go; last: %s\n",
			done, total, failed, elapsed.Round(time.Second), eta.Round(time.Second), last)
	}
}

func (d *display) done() {
	if d.bar != nil {
		d.bar.Finish()
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// NewMerge returns the merge command.
func NewMerge(streams *cmdutil.IO) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge PART... [-o FILE]",
		Short: "Join the outputs of a sharded sweep into the output of one run",
		Long: `Join the outputs of collsim sweep --shard i/n (all CSV or all JSON Lines) into
one: a header and every point's row in point order, exactly as one unsharded
run writes them (but for wall times). Parts of different sweeps (each row
carries its sweep's hash), a point in two parts and missing points are
refused.`,
		Example: `  collsim merge part-1.csv part-2.csv part-3.csv part-4.csv -o results.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.Flagf("give the sweep outputs to merge, e.g. collsim merge part-*.csv -o results.csv")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return Merge(streams.Out, args)
			}
			if FormatOf(output) != FormatOf(args[0]) {
				return cmdutil.Flagf("-o %s would hold %s, but the parts are %s; name it .csv or .jsonl as they are", output, FormatOf(output), FormatOf(args[0]))
			}
			for _, a := range args {
				if a == output {
					return cmdutil.Flagf("-o %s is also a part; write the merge to another file", output)
				}
			}
			if cmdutil.NotRegular(output) {
				// A device or a pipe (-o /dev/null) is written into, as a
				// shell's > would: renaming a file onto it replaced it (as
				// root, /dev/null became a regular file).
				f, err := os.OpenFile(output, os.O_WRONLY, 0)
				if err != nil {
					return err
				}
				err = Merge(f, args)
				return errors.Join(err, f.Close())
			}
			tmp := output + ".merging"
			f, err := os.Create(tmp)
			if err != nil {
				return err
			}
			err = Merge(f, args)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return errors.Join(err, os.Remove(tmp))
			}
			return os.Rename(tmp, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the merged rows to this file (default: standard output)")
	return cmd
}
