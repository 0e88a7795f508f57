// Package root assembles collsim's command tree.
package root

import (
	"errors"
	"fmt"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim/lines"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim/cmd/collsim/internal/algos"
	"github.com/collsim/collsim/cmd/collsim/internal/calibrate"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/explain"
	"github.com/collsim/collsim/cmd/collsim/internal/model"
	"github.com/collsim/collsim/cmd/collsim/internal/plotcmd"
	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/cmd/collsim/internal/report"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/cmd/collsim/internal/schedule"
	"github.com/collsim/collsim/cmd/collsim/internal/study"
	"github.com/collsim/collsim/cmd/collsim/internal/sweep"
	"github.com/collsim/collsim/cmd/collsim/internal/topo"
	"github.com/collsim/collsim/cmd/collsim/internal/tune"
	"github.com/collsim/collsim/cmd/collsim/internal/validate"
	"github.com/collsim/collsim/cmd/collsim/internal/workload"
	"github.com/collsim/collsim/sim/hugepage"
	"github.com/collsim/collsim/sim/workers"
)

// New returns the root command. stop, called once the command has run,
// ends what the root's flags started (a CPU profile).
func New(streams *cmdutil.IO) (*cobra.Command, func()) {
	var profile, hugePages string
	end := func() {}
	cmd := &cobra.Command{
		Use:   "collsim",
		Short: "Simulate collective communication algorithms on modelled machines",
		Long: `collsim runs real implementations of collective algorithms (allreduce,
bcast, allgather, reduce-scatter, alltoall, barrier) as message schedules on a
modelled machine, checks that they move the right data, and compares them
with their closed-form costs.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			// An empty -m ran on the default machine without a word (a new
			// user's trial): every command's -m is checked here.
			if f := c.Flags().Lookup("machine"); f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
				return cmdutil.Flagf("-m/--machine is empty: give a built-in machine (%s) or a YAML file", strings.Join(configs.Builtins(), ", "))
			}
			policy, err := hugepage.ParsePolicy(hugePages)
			if err != nil {
				return cmdutil.Flagf("--huge-pages: %v", err)
			}
			hugepage.SetPolicy(policy)
			if profile == "" {
				return nil
			}
			f, err := os.Create(realcmd.RankProfile(profile, os.Getenv))
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return err
			}
			end = func() {
				pprof.StopCPUProfile()
				f.Close()
			}
			return nil
		},
	}
	// Bare, collsim prints its help; running it (not cobra's fallback) makes
	// the root's flags checked first, so that a bad value is an error there
	// too.
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	cmd.PersistentFlags().StringVar(&hugePages, "huge-pages", "auto", "whether large tables ask the kernel for huge pages: on, off, or auto (on where a measurement, a few milliseconds once per run that makes a large table, finds 2 MiB cheaper to touch as a huge page than as 4 KiB pages; off where GODEBUG has disablethp=1)")
	cmd.PersistentFlags().StringVar(&profile, "cpuprofile", "", "write a CPU profile of the command to this file (for `go tool pprof`, or as cmd/collsim/default.pgo); each rank of a real run writes its own, this name with .rank<N> appended")
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.Err)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: cmdutil.PlainFlagError(suggestFlag(c, err))}
	})
	cmd.AddCommand(run.New(streams), algos.New(streams), topo.New(streams), model.New(streams), schedule.New(streams), study.New(streams), explain.New(streams), calibrate.New(streams), tune.New(streams), realcmd.New(streams), validate.New(streams), sweep.New(streams), sweep.NewMerge(streams), plotcmd.New(streams), report.New(streams), workload.New(streams))
	refuseUnknownSubcommands(cmd)
	completeValues(cmd)
	return cmd, func() { end() }
}

// refuseUnknownSubcommands makes every command that only groups others
// (collsim study) refuse an argument that names none of them, as the root
// does, instead of printing its help and exiting 0.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	if cmd == cmd.Root() || !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		c.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on the root
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return cmdutil.Flagf("%s", msg)
	}
}

// suggestFlag adds to an unknown long flag's error the flags of c it is
// closest to (a typo: at most two edits, or a prefix), as cobra does for
// subcommands.
func suggestFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var near []string
	seen := map[string]bool{}
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if !seen[f.Name] && !f.Hidden && (lines.EditDistance(name, f.Name) <= 2 || len(name) >= 3 && strings.HasPrefix(f.Name, name)) {
				seen[f.Name] = true
				near = append(near, "--"+f.Name)
			}
		})
	}
	if len(near) == 0 {
		return err
	}
	return fmt.Errorf("%w; did you mean %s?", err, strings.Join(near, " or "))
}

// Main runs collsim with args and returns its exit status. Errors are
// printed as one line each, never as a stack trace.
func Main(args []string, stdout, stderr io.Writer) int {
	cmd, stop := New(&cmdutil.IO{Out: stdout, Err: stderr})
	return execute(cmd, stop, args, stderr)
}

// execute runs cmd with args and maps what it returns to an exit status.
// A panic, which no input should cause, becomes one line and exit status
// ExitInternal, with the stack written to a file for the report, instead
// of a goroutine dump and the usage status 2 that Go's runtime would give.
func execute(cmd *cobra.Command, stop func(), args []string, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			stop()
			code = internalError(v, args, stderr)
		}
	}()
	cmd.SetArgs(args)
	err := cmd.Execute()
	stop()
	if err == nil {
		return cmdutil.ExitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		err = &cmdutil.FlagError{Err: oneLine(err)}
	} else if strings.HasPrefix(err.Error(), "unknown flag") || strings.Contains(err.Error(), "accepts") {
		err = &cmdutil.FlagError{Err: err}
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "collsim:", line)
	}
	code = cmdutil.ExitCode(err)
	if code == cmdutil.ExitUsage {
		fmt.Fprintln(stderr, "Run 'collsim --help' for usage.")
	}
	return code
}

// oneLine folds cobra's unknown-command error, whose suggestions follow on
// lines of their own, into one line.
func oneLine(err error) error {
	first, rest, ok := strings.Cut(err.Error(), "\n")
	if !ok {
		return err
	}
	var near []string
	for _, l := range strings.Split(rest, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Did you mean") {
			near = append(near, l)
		}
	}
	if len(near) == 0 {
		return errors.New(first)
	}
	return fmt.Errorf("%s; did you mean %s?", first, strings.Join(near, " or "))
}

// internalError reports the panic v in one line and writes its stack (the
// worker's, when a worker panicked) to a file the line names.
func internalError(v any, args []string, stderr io.Writer) int {
	stack := debug.Stack()
	var wp *workers.Panic
	if err, ok := v.(error); ok && errors.As(err, &wp) {
		v, stack = wp.Value, wp.Stack
	}
	where := "(no report file could be written)"
	if f, err := os.CreateTemp("", "collsim-crash-*.txt"); err == nil {
		fmt.Fprintf(f, "collsim %s\npanic: %v\n\n%s", strings.Join(args, " "), v, stack)
		if f.Close() == nil {
			where = "with " + f.Name()
		}
	}
	msg := strings.ReplaceAll(fmt.Sprint(v), "\n", " ")
	fmt.Fprintf(stderr, "collsim: internal error, please report it %s: %s\n", where, msg)
	return cmdutil.ExitInternal
}
