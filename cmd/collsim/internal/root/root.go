// Package root assembles collsim's command tree.
package root

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	streams := &cmdutil.IO{Out: stdout, Err: stderr}
	cmd, stop := New(streams)
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
