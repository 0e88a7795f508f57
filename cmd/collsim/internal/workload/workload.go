// Package workload is `collsim workload`: applications built from
// collectives (DNN training and inference, 3D FFT) run on a machine.
package workload

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/cmd/collsim/internal/trace"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// New returns the workload command and its subcommands.
func New(streams *cmdutil.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Simulate an application built from collectives (dnn, fft, taskbench, redistribute, farm, tiles)",
		Long: `Simulate an application on a machine: its ranks run compute, point-to-point
messages and collective calls on groups of ranks, on the same networks, noise
and machines as a single collective.`,
	}
	cmd.AddCommand(newDNN(streams), newFFT(streams), newTaskBench(streams), newRedistribute(streams), newFarm(streams), newTiles(streams))
	return cmd
}

// machineFlags are the flags every workload shares with run.
type machineFlags struct {
	machine, network, routing, placement string
	seed                                 uint64
	set                                  []string
	json, quiet, progress                bool
	trace, timeline                      string
	rec                                  *trace.Recorder
}

// register adds the flags to f, with the workload's default machine and
// network model.
func (m *machineFlags) register(f *pflag.FlagSet, defaultMachine, defaultNetwork string) {
	f.StringVarP(&m.machine, "machine", "m", defaultMachine, cmdutil.MachineUsage)
	f.StringVar(&m.network, "network", defaultNetwork, "network model: analytic (no link sharing) or flow (max-min fair sharing on the machine's routes)")
	f.StringVar(&m.routing, "routing", "", "with --network flow: minimal, valiant, ugal or ecmp (default: the machine's)")
	f.StringVar(&m.placement, "placement", "", "rank placement: block, round_robin, random (default: the machine's)")
	f.Uint64Var(&m.seed, "seed", 1, "seed for every random choice (placement, noise)")
	f.StringArrayVar(&m.set, "set", nil, `a machine config setting "PATH=VALUE" (as run's --set); repeatable`)
	f.BoolVar(&m.json, "json", false, "print the result as JSON")
	f.BoolVarP(&m.quiet, "quiet", "q", false, "no progress line on stderr")
	f.BoolVar(&m.progress, "progress", false, "a progress line on stderr every 10 s even when stderr is not a terminal")
	f.StringVar(&m.trace, "trace", "", "write the simulated run as Chrome trace-event JSON to this file (Perfetto, chrome://tracing): a track per rank, its lanes as rows")
	f.StringVar(&m.timeline, "timeline", "", "draw the simulated run as an SVG Gantt chart by rank into this file (up to 256 ranks)")
}

// counter shows how many of total simulations are done: report is told
// of each as it finishes, and a line is due every second too, so that it
// shows while long ones run. stop ends it. Both are no-ops without a
// progress display.
func (m *machineFlags) counter(streams *cmdutil.IO, what string, total int) (report func(done, total int), stop func()) {
	p := m.display(streams)
	if p == nil {
		return nil, func() {}
	}
	count, stop := cmdutil.Counter(p, what, total)
	return func(done, _ int) { count(done) }, stop
}

// writeTrace writes the recorded run to --trace and --timeline.
func (m *machineFlags) writeTrace(ranks int, title string) error {
	if m.rec == nil {
		return nil
	}
	if err := m.rec.Err(); err != nil {
		return err
	}
	for _, out := range []struct {
		file  string
		write func(io.Writer) error
	}{{m.trace, func(w io.Writer) error { return m.rec.WriteChrome(w, ranks, title, nil) }}, {m.timeline, func(w io.Writer) error { return m.rec.WriteSVG(w, ranks, title) }}} {
		if out.file == "" {
			continue
		}
		// Written whole or not at all: a refused trace leaves an
		// existing file as it was.
		var buf bytes.Buffer
		if err := out.write(&buf); err != nil {
			return fmt.Errorf("%s: %w", out.file, err)
		}
		if err := os.WriteFile(out.file, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// experiment loads the machine and returns the experiment the flags
// describe, and the progress display's end.
func (m *machineFlags) experiment(streams *cmdutil.IO) (*collsim.Experiment, func(), error) {
	mach, err := run.Machine(m.machine, m.set)
	if err != nil {
		return nil, nil, err
	}
	if m.placement != "" && !slices.Contains(topology.Placements, m.placement) {
		return nil, nil, cmdutil.Flagf("--placement %q; valid: %s", m.placement, strings.Join(topology.Placements, ", "))
	}
	if m.network != collsim.Analytic && m.network != collsim.Flow {
		// A workload's costs are the machine's (its devices, links and
		// routes); the loggops network has no machine.
		return nil, nil, cmdutil.Flagf("--network %q: a workload runs on its machine, with the analytic or the flow network", m.network)
	}
	e := &collsim.Experiment{Machine: mach, Network: m.network, Routing: m.routing, Placement: m.placement, Seed: m.seed}
	if err := e.Check(); err != nil {
		return nil, nil, err
	}
	if m.timeline != "" && !strings.HasSuffix(m.timeline, ".svg") {
		return nil, nil, cmdutil.Flagf("--timeline %s: the timeline is SVG; give a .svg file", m.timeline)
	}
	if m.trace != "" || m.timeline != "" {
		m.rec = trace.NewRecorder()
		e.Trace = m.rec.Event
	}
	p := m.display(streams)
	if p == nil {
		return e, func() {}, nil
	}
	e.Progress = p.Update
	return e, p.Done, nil
}

func (m *machineFlags) display(streams *cmdutil.IO) *cmdutil.Progress {
	return cmdutil.Display(streams, m.quiet, m.progress)
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// algoMap reads --algo COLLECTIVE=ALGORITHM values.
func algoMap(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range list {
		c, alg, ok := strings.Cut(a, "=")
		if !ok || c == "" || alg == "" {
			return nil, cmdutil.Flagf("--algo %q: give COLLECTIVE=ALGORITHM, e.g. allreduce=ring or alltoall=ompi", a)
		}
		alg = collectives.Canonical(alg)
		if _, twice := out[c]; twice {
			// (The last one given won, silently.)
			return nil, cmdutil.Flagf("--algo %s= is given twice; give one algorithm per collective", c)
		}
		out[c] = alg
	}
	return out, nil
}
