package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
)

type noiseOptions struct {
	options
	overhead, detour, rates string
	random                  bool
	seeds                   int
	network                 string
}

// noiseBaseline is the study's baseline for bcast and reduce: Open MPI's
// segmented binary trees (ompi_coll_base_bcast_intra_generic,
// ompi_coll_base_reduce_generic).
const noiseBaseline = "pipelined_binary"

func newNoise(streams *cmdutil.IO) *cobra.Command {
	o := &noiseOptions{}
	cmd := &cobra.Command{
		Use:   "noise",
		Short: "Open MPI's segmented trees against event-driven (ADAPT-style) ones as OS noise grows",
		Long: `ADAPT (Luo et al. 2018) reports that event-driven collectives, which forward
a segment as soon as it arrives instead of at the pace of blocking calls,
resist OS noise: 1.3x faster broadcasts and 1.5x faster reductions than
Open MPI's on noisy CPUs. This study runs, for each noise rate, a baseline
and the ADAPT tree on the same binary tree and segments: Open MPI's
segmented binary trees (bcast/pipelined_binary: two receives posted, a wait
for each segment's sends; reduce/pipelined_binary: children one after
another, one receive posted ahead, blocking sends up). Every rank's CPU is
interrupted by detours of
--detour at --rates a second (periodic, each rank at its own seeded phase;
--random for exponential intervals), and every message costs a CPU
overhead --overhead: the noise stretches CPU work, and a message's CPU
step that falls in a detour waits for its end even with no overhead, as in
LogGOPSim. It reports each algorithm's time, its slowdown against the
noise-free run, and ADAPT's speedup over the baseline: with noise, the mean
over --seeds runs whose noise is seeded differently, and the least and most
speedup among them. It runs on the flow network, where a reduce's two
children share their parent's link (--network analytic gives each the
whole link).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runNoise(streams, o) },
	}
	o.register(cmd, "small", "64", "4MiB")
	f := cmd.Flags()
	f.StringVar(&o.overhead, "overhead", "2us", "CPU time per message sent or received (LogP o), charged on every host")
	f.StringVar(&o.detour, "detour", "50us", "length of one OS-noise detour")
	f.StringVar(&o.rates, "rates", "0,100,1000,2000,5000", "detours per second per rank, a comma-separated list (0: no noise)")
	f.BoolVar(&o.random, "random", false, "exponential intervals between detours instead of periodic ones")
	f.IntVar(&o.seeds, "seeds", 10, "noisy runs of each point, with the noise seeded 1..N (its phases or intervals): times are their mean, and the speedup's range is shown")
	f.StringVar(&o.network, "network", collsim.Flow, "network model: flow (a reduce's children share their parent's link) or analytic (no link shared)")
	return cmd
}

func runNoise(streams *cmdutil.IO, o *noiseOptions) error {
	m, ps, ss, err := o.parse()
	if err != nil {
		return err
	}
	if o.network != collsim.Analytic && o.network != collsim.Flow {
		return cmdutil.Flagf("--network %q: flow or analytic", o.network)
	}
	if len(ps) != 1 || len(ss) != 1 {
		return cmdutil.Flagf("study noise takes one rank count and one size (-n, -s); the noise rate is what varies")
	}
	overhead, err := configs.ParseDuration(o.overhead)
	if err != nil || overhead < 0 {
		return cmdutil.Flagf("--overhead: %v", err)
	}
	detour, err := configs.ParseDuration(o.detour)
	if err != nil || detour <= 0 {
		return cmdutil.Flagf("--detour: must be a positive duration (%v)", err)
	}
	var rates []float64
	for _, v := range strings.Split(o.rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(r >= 0) || r > 1e6 || r*detour.Seconds() >= 1 {
			return cmdutil.Flagf("--rates: %q must be detours per second, at least 0 and fewer than one detour's worth a second", v)
		}
		rates = append(rates, r)
	}
	// In order, once each: the plot's line runs along them, and each
	// slowdown is against rate 0, which must come first.
	slices.Sort(rates)
	rates = slices.Compact(rates)
	if o.seeds < 1 || o.seeds > 1000 {
		return cmdutil.Flagf("--seeds %d: give 1..1000 noisy runs a point", o.seeds)
	}
	m.Host.Overhead = overhead
	machineNoise := m.Noise != nil
	m.Noise = nil // the study's noise, rate by rate, replaces the machine's own
	cases := []struct{ base, adapt collectives.Algorithm }{}
	for _, c := range []collectives.Collective{collectives.Bcast, collectives.Reduce} {
		b, _ := collectives.Lookup(c, noiseBaseline)
		a, _ := collectives.Lookup(c, "adapt")
		cases = append(cases, struct{ base, adapt collectives.Algorithm }{b, a})
	}
	fmt.Fprintf(streams.Out, "OS noise on %s (%s network): %d ranks, %s, o = %s per message, detours of %s (%s)\n", m.Name, o.network, ps[0], configs.FormatBytes(ss[0]), o.overhead, o.detour, map[bool]string{false: "periodic", true: "random intervals"}[o.random])
	if machineNoise {
		fmt.Fprintf(streams.Out, "(%s's own noise is left out: each row has only the study's)\n", m.Name)
	}
	rows := [][]string{{"collective", "detours/s", "baseline", "time", "slowdown", "ADAPT", "slowdown", "ADAPT speedup", "least-most"}}
	var lines []plotutil.Series
	for _, cs := range cases {
		params, err := collsim.Call(cs.base.Collective, ps[0], ss[0], o.elem, 0)
		if err != nil {
			return err
		}
		var base [2]float64
		speedup := plotutil.Series{Name: fmt.Sprintf("%s over %s", cs.base.Collective, cs.base.Name)}
		for _, rate := range rates {
			var noise *sim.Noise
			switch {
			case rate == 0:
			case o.random:
				noise, err = sim.PoissonNoise(rate, detour, 1)
			default:
				noise, err = sim.PeriodicNoise(sim.FromSeconds(1/rate), detour)
			}
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			seeds := o.seeds
			if rate == 0 {
				seeds = 1 // nothing random to seed
			}
			var mean [2]float64
			least, most := math.Inf(1), math.Inf(-1)
			for seed := 1; seed <= seeds; seed++ {
				var t [2]float64
				for i, a := range []collectives.Algorithm{cs.base, cs.adapt} {
					if t[i], err = cmdutil.SimulateNoisyOn(o.network, m, a, params, noise, uint64(seed)); err != nil {
						return err
					}
					mean[i] += t[i] / float64(seeds)
				}
				least, most = min(least, t[0]/t[1]), max(most, t[0]/t[1])
			}
			if rate == 0 {
				base = mean
			}
			rows = append(rows, []string{string(cs.base.Collective), fmt.Sprint(rate), cs.base.Name, cmdutil.Seconds(mean[0]), ratio(mean[0], base[0]),
				cmdutil.Seconds(mean[1]), ratio(mean[1], base[1]), ratio(mean[0], mean[1]), fmt.Sprintf("%.2f-%.2fx", least, most)})
			speedup.X, speedup.Y = append(speedup.X, rate), append(speedup.Y, mean[0]/mean[1])
			speedup.YLow, speedup.YHigh = append(speedup.YLow, least), append(speedup.YHigh, most)
		}
		lines = append(lines, speedup)
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	// What differs between the two reduces without noise: how long a
	// segment, once reduced, waits for its send up.
	var waits [2]float64
	for i, name := range []string{noiseBaseline, "adapt"} {
		a, _ := collectives.Lookup(collectives.Reduce, name)
		params, err := collsim.Call(collectives.Reduce, ps[0], ss[0], o.elem, 0)
		if err != nil {
			return err
		}
		if waits[i], err = sendWait(o.network, m, a, params); err != nil {
			return err
		}
	}
	fmt.Fprintf(streams.Out, "reduce without noise: a segment leaves for the parent %s after its last reduction on average (%s: %s), on the ranks with a parent and children\n",
		cmdutil.Seconds(waits[1]), noiseBaseline, cmdutil.Seconds(waits[0]))
	plotted := withoutNoiseLines(lines)
	if plotted == nil {
		return nil
	}
	pl := plotutil.Plot{Title: fmt.Sprintf("ADAPT over the baselines, %s (%s network), %d ranks; bars: least-most of %d seeds", m.Name, o.network, ps[0], o.seeds), XLabel: "detours per second", YLabel: "baseline time / ADAPT time", LegendDown: vg.Points(0), Lines: plotted}
	paths, err := pl.Save(o.out, "study-noise")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "plots: %s\n", strings.Join(paths, ", "))
	return err
}

// withoutNoiseLines returns the speed-up lines for the plot's log axis,
// which has no place for rate 0: each line's points at positive rates,
// followed, where it has a rate 0, by that ratio without noise as a
// dotted level line in its colour, without markers, across the rates (a
// factor of 2 each side of a single one; left out, the plot lost the
// baseline the other points are read against). nil when no rate is
// positive: there is nothing to plot.
func withoutNoiseLines(lines []plotutil.Series) []plotutil.Series {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, r := range l.X {
			if r > 0 {
				lo, hi = min(lo, r), max(hi, r)
			}
		}
	}
	if lo > hi {
		return nil
	}
	if lo == hi { // one rate: the level spans a factor of 2 each side of it
		lo, hi = lo/2, hi*2
	}
	var out []plotutil.Series
	for _, l := range lines {
		noisy := plotutil.Series{Name: l.Name}
		base := math.NaN()
		for j, r := range l.X {
			if r == 0 {
				base = l.Y[j]
				continue
			}
			noisy.X, noisy.Y = append(noisy.X, r), append(noisy.Y, l.Y[j])
			noisy.YLow, noisy.YHigh = append(noisy.YLow, l.YLow[j]), append(noisy.YHigh, l.YHigh[j])
		}
		out = append(out, noisy)
		if !math.IsNaN(base) {
			out = append(out, plotutil.Series{Name: l.Name + ", no noise", X: []float64{lo, hi}, Y: []float64{base, base}, Dotted: true, Pair: true, Level: true})
		}
	}
	return out
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// sendWait runs reduce algorithm a once, without noise, and returns the
// mean time, over the ranks with a parent and children, from a segment's
// last reduction to the start of its send to the parent: what the CPU,
// busy with other work, makes it wait (sends and receives of one segment
// share its tag).
func sendWait(network string, m *configs.Machine, a collectives.Algorithm, params collectives.Params) (float64, error) {
	s, err := a.Build(params)
	if err != nil {
		return 0, err
	}
	place, err := m.Place(params.Ranks, "", 1)
	if err != nil {
		return 0, err
	}
	net, err := m.Analytic(place)
	if network == collsim.Flow {
		net, err = m.Flow(place)
	}
	if err != nil {
		return 0, err
	}
	type key struct{ rank, tag int32 }
	reduced := map[key]sim.Time{}
	var sum sim.Time
	var n int
	_, err = sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: m.Host, Trace: func(e sim.TraceEvent) {
		k := key{e.Rank, e.Op.Tag}
		switch {
		case e.Completed && e.Op.Kind == sim.OpRecv:
			reduced[k] = max(reduced[k], e.At)
		case !e.Completed && e.Op.Kind == sim.OpSend:
			if at, ok := reduced[k]; ok { // a rank with children
				sum += e.At - at
				n++
			}
		}
	}})
	if err != nil || n == 0 {
		return 0, err
	}
	return (sum / sim.Time(n)).Seconds(), nil
}
