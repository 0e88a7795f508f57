// Package schedule is `collsim schedule`: write an algorithm's program.
package schedule

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

// New returns the schedule command.
func New(streams *cmdutil.IO) *cobra.Command {
	var format, out, reduceBW string
	var quiet, progress bool
	var q cmdutil.Request
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Write an algorithm's per-rank program (GOAL, for LogGOPSim and collsim run --goal)",
		Long: `Write the program an algorithm runs on every rank, as GOAL text: the
schedule format of LogGOPSim, Schedgen and ATLAHS. Every op is labelled l<i>;
tags differ per round, so matching never depends on the order in which
independent ops are issued. With --reduce-bandwidth, reductions become calc
ops (GOAL has no reduction); without it, only communication is written.`,
		Example: `  collsim schedule -a ring -n 8 -s 1KiB
  collsim schedule -c bcast -a binomial -n 64 -s 8 -o bcast64.goal
  collsim schedule -a recursive_doubling -n 1024 -s 8 --reduce-bandwidth 10GB/s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "goal" {
				return cmdutil.Flagf("--format %q is not available; valid: goal", format)
			}
			if err := cmdutil.OptionsApply(cmd.Flags(), collectives.Collective(q.Collective), q.Algorithm); err != nil {
				return err
			}
			if err := cmdutil.SizeApplies(cmd.Flags(), collectives.Collective(q.Collective)); err != nil {
				return err
			}
			a, _, params, err := q.Resolve(nil)
			if err != nil {
				return err
			}
			if q.Note != "" { // as run says it (it was left out here; a new user's trial)
				fmt.Fprintln(streams.Err, "collsim: note:", q.Note)
			}
			s, err := a.Build(params)
			if err != nil {
				return err
			}
			var opt sim.GOALOptions
			if reduceBW != "" {
				bw, err := configs.ParseBandwidth(reduceBW)
				if err != nil {
					return &cmdutil.FlagError{Err: fmt.Errorf("--reduce-bandwidth: %w", err)}
				}
				if bw < 1 {
					// a calc of a reduction would pass the clock's limit
					// (2^63 ps) at about a million bytes and more
					return cmdutil.Flagf("--reduce-bandwidth %s: give at least 1B/s", reduceBW)
				}
				opt.ReducePsPerByte = 1e12 / bw
			}
			name, w := "standard output", streams.Out
			var f *os.File
			if out != "" {
				if f, err = os.Create(out); err != nil {
					return err
				}
				defer f.Close()
				name, w = out, f
			}
			cw := &countingWriter{w: w} // (WriteGOAL buffers what it writes)
			if p := cmdutil.Display(streams, quiet, progress); p != nil {
				cw.show = func(n int64) { p.Writing(name, n) }
				defer p.Done()
			}
			// (A full disk shows at WriteGOAL's last flush or the close:
			// both were deferred and their errors lost, leaving a short
			// file and exit 0.)
			if err := sim.WriteGOAL(cw, s, opt); err != nil {
				return err
			}
			if f != nil {
				return f.Close()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&q.Collective, "collective", "c", "allreduce", "collective: "+cmdutil.CollectiveNames())
	f.StringVarP(&q.Algorithm, "algo", "a", "", "algorithm (default: the collective's default)")
	f.IntVarP(&q.Ranks, "ranks", "n", 8, "number of ranks")
	f.StringVarP(&q.Size, "size", "s", "1KiB", "message size (nccl-tests sizes)")
	f.Int64Var(&q.ElemSize, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.IntVar(&q.Root, "root", 0, "root rank of rooted collectives")
	f.StringVar(&format, "format", "goal", "output format: goal")
	f.StringVar(&reduceBW, "reduce-bandwidth", "", "write reductions as calc ops at this rate, e.g. 10GB/s")
	f.StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress line on stderr")
	f.BoolVar(&progress, "progress", false, "a progress line on stderr every 10 s even when stderr is not a terminal")
	q.Shape.Register(f)
	return cmd
}

// countingWriter counts the bytes written through it and shows the count.
type countingWriter struct {
	w    io.Writer
	n    int64
	show func(int64) // nil: no display
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if c.show != nil {
		c.show(c.n)
	}
	return n, err
}
