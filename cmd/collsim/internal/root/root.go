// Package root assembles collsim's command tree.
package root

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/algos"
	"github.com/collsim/collsim/cmd/collsim/internal/calibrate"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/explain"
	"github.com/collsim/collsim/cmd/collsim/internal/model"
	"github.com/collsim/collsim/cmd/collsim/internal/realcmd"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/cmd/collsim/internal/schedule"
	"github.com/collsim/collsim/cmd/collsim/internal/study"
	"github.com/collsim/collsim/cmd/collsim/internal/topo"
	"github.com/collsim/collsim/cmd/collsim/internal/tune"
	"github.com/collsim/collsim/cmd/collsim/internal/validate"
	"github.com/collsim/collsim/sim/workers"
)

// New returns the root command. stop, called once the command has run,
// ends what the root's flags started (a CPU profile).
func New(streams *cmdutil.IO) (*cobra.Command, func()) {
	var profile string
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
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if profile == "" {
				return nil
			}
			f, err := os.Create(profile)
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
	cmd.PersistentFlags().StringVar(&profile, "cpuprofile", "", "write a CPU profile of the command to this file (for `go tool pprof`, or as cmd/collsim/default.pgo)")
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.Err)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	cmd.AddCommand(run.New(streams), algos.New(streams), topo.New(streams), model.New(streams), schedule.New(streams), study.New(streams), explain.New(streams), calibrate.New(streams), tune.New(streams), realcmd.New(streams), validate.New(streams))
	return cmd, func() { end() }
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
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "accepts") {
		err = &cmdutil.FlagError{Err: err}
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "collsim:", line)
	}
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) {
		fmt.Fprintln(stderr, "Run 'collsim --help' for usage.")
	}
	return cmdutil.ExitCode(err)
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
