package study

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/workers"
)

type suaraOptions struct {
	options
	overhead string
	network  string
}

func newSuara(streams *cmdutil.IO) *cobra.Command {
	o := &suaraOptions{}
	cmd := &cobra.Command{
		Use:   "suara",
		Short: "SUARA2 against Open MPI's allreduce (4.1 and pre-4.1) and the best single algorithm, over a sweep",
		Long: `The SUARA paper reports over 2x speedup over the native Open MPI allreduce at
1,024 nodes and an O(P) asymptotic speedup, without naming the Open MPI
version. This study runs, for each rank count and size, three baselines:

  - what Open MPI 4.1 runs (--algo ompi: its fixed rules, then the run-time
    fallbacks of the algorithm they pick, and its own tuned bcast inside the
    nonoverlapping allreduce);
  - what Open MPI 4.0 and earlier run (--algo ompi40: recursive doubling
    below 10,000 bytes, the ring from there when count > P);
  - the best single algorithm: every flat allreduce whose closed-form lower
    bound does not exceed 1.5 times the smallest closed-form time is
    simulated, and the fastest is kept (the others cannot win unless the
    closed forms are off by half); on hosts with a CPU overhead or a NIC
    gap, which the alpha-beta forms leave out, every one is simulated;

and SUARA2 (2 steps on a G x P/G grid, G and the subsets' algorithm chosen
by the closed forms, as the paper chooses them by its model), all simulated
on the machine's analytic network, or with --network flow on the flow
network, which shares links (SUARA2's traffic shares the dragonfly's, and
its times there are longer: see the README). It prints the speedups, fits the growth
of each in P per size (speedup ~ P^b: b = 1 is O(P), b = 0.5 O(sqrt P)), and
says where each regime appears. --overhead sets a CPU overhead per message
sent or received (LogP o) on every host, in place of the machine's: with
none, a linear algorithm's root takes in P-1 tiny messages at the cost of
their bytes alone. The runs are independent and use all CPUs; progress goes
to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ps, ss, err := o.parse()
			if err != nil {
				return err
			}
			if o.overhead != "" {
				d, err := configs.ParseDuration(o.overhead)
				if err != nil || d < 0 {
					return cmdutil.Flagf("--overhead %q: give a duration such as 500ns", o.overhead)
				}
				m.Host.Overhead = d
			}
			if o.network != collsim.Analytic && o.network != collsim.Flow {
				return cmdutil.Flagf("--network %q: analytic or flow", o.network)
			}
			return runSuara(streams, &o.options, o.network, m, ps, ss)
		},
	}
	o.register(cmd, "xc40", "64,256,1024,4096", "8,16,64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB")
	cmd.Flags().StringVar(&o.overhead, "overhead", "", "CPU time per message sent or received (LogP o) on every host, in place of the machine's")
	cmd.Flags().StringVar(&o.network, "network", collsim.Analytic, "network model: analytic (no link sharing; the default, for its speed at 4,096 ranks) or flow (links shared: slower to simulate)")
	return cmd
}

// suaraBaselines are the study's baselines, in the table's order; file
// names their plots.
var suaraBaselines = []struct{ name, selector, file string }{
	{"Open MPI 4.1", "ompi", "study-suara-ompi41"},
	{"Open MPI 4.0", "ompi40", "study-suara-ompi40"},
	{"best single", "", "study-suara-best"},
}

// suaraPoint is one rank count and size of the sweep.
type suaraPoint struct {
	size int64
	p    int
	// picks and times of the baselines (suaraBaselines' order), then
	// SUARA2's plan and time
	picks []string
	times []float64
	plan  collectives.Params
	suara float64
}

// simJob is one simulation the study needs; equal jobs run once.
type simJob struct {
	algo   collectives.Algorithm
	params collectives.Params
}

func (j simJob) key() simKey { return simKey{j.algo.ID(), j.params} }

type simKey struct {
	id     string
	params collectives.Params
}

func runSuara(streams *cmdutil.IO, o *options, network string, m *configs.Machine, ps []int, ss []int64) error {
	// Plan every point: which algorithms run with which parameters.
	var points []*suaraPoint
	var jobs []simJob
	want := map[simKey]bool{}
	need := func(j simJob) {
		if !want[j.key()] {
			want[j.key()] = true
			jobs = append(jobs, j)
		}
	}
	type planned struct {
		baselines [][]simJob // per baseline, the runs to take the fastest of
		suara     simJob
	}
	plans := map[*suaraPoint]planned{}
	suara, _ := collectives.Lookup(collectives.Allreduce, "suara")
	for _, size := range ss {
		for _, p := range ps {
			params, err := collsim.Call(collectives.Allreduce, p, size, o.elem, 0)
			if err != nil {
				return err
			}
			place, err := m.Place(p, "", 1)
			if err != nil {
				return err
			}
			h, _ := collsim.Hockney(m, place)
			pt := &suaraPoint{size: size, p: p}
			var pl planned
			for _, b := range suaraBaselines {
				var runs []simJob
				if b.selector != "" {
					sel, err := collectives.Select(b.selector, collectives.Allreduce, params)
					if err != nil {
						return err
					}
					runs = []simJob{{sel.Algorithm, sel.Params}}
				} else {
					runs = bestSingleCandidates(h, params, m.Host.Overhead > 0 || m.Gap > 0)
				}
				for _, j := range runs {
					need(j)
				}
				pl.baselines = append(pl.baselines, runs)
			}
			plan, _ := collsim.SuaraPlan(h, params)
			pt.plan = plan
			pl.suara = simJob{suara, plan}
			need(pl.suara)
			plans[pt] = pl
			points = append(points, pt)
		}
	}
	times, err := simulateAll(streams, m, network, jobs)
	if err != nil {
		return err
	}
	for _, pt := range points {
		pl := plans[pt]
		for _, runs := range pl.baselines {
			best, pick := math.Inf(1), ""
			for _, j := range runs {
				if t := times[j.key()]; t < best {
					best, pick = t, j.algo.Name
				}
			}
			pt.picks, pt.times = append(pt.picks, pick), append(pt.times, best)
		}
		pt.suara = times[pl.suara.key()]
	}
	return reportSuara(streams, o, network, m, ps, ss, points)
}

// bestSingleCandidates are the flat allreduces (not SUARA, and not the
// node-aware composites, which need ranks per node) that could be the
// fastest for params by the closed forms: those whose lower bound is at
// most 1.5 times the smallest closed-form time, and those without a form;
// all of them when hostCosts (o or g, which the forms leave out).
func bestSingleCandidates(h cost.Hockney, params collectives.Params, hostCosts bool) []simJob {
	type cand struct {
		a     collectives.Algorithm
		lower float64
	}
	var cands []cand
	fastest := math.Inf(1)
	for _, a := range collectives.All() {
		if a.Collective != collectives.Allreduce || collectives.IsComposite(a.Name) {
			continue
		}
		if _, err := a.Build(params); err != nil {
			continue
		}
		pr, err := h.Predict(a, params)
		if err != nil || !cost.Has(a) {
			cands = append(cands, cand{a, math.Inf(-1)})
			continue
		}
		fastest = min(fastest, pr.Time)
		cands = append(cands, cand{a, pr.Lower})
	}
	var jobs []simJob
	for _, c := range cands {
		if hostCosts || c.lower <= 1.5*fastest {
			jobs = append(jobs, simJob{c.a, params})
		}
	}
	return jobs
}

// simulateAll runs the jobs on as many CPUs as Go has, reporting each
// finished run on stderr; the results do not depend on the order.
func simulateAll(streams *cmdutil.IO, m *configs.Machine, network string, jobs []simJob) (map[simKey]float64, error) {
	simulate := cmdutil.Simulate
	if network == collsim.Flow {
		simulate = cmdutil.SimulateFlow
	}
	// Longest first (ranks times elements is a fair guess), so that the
	// big runs do not start last.
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b simJob) int {
		wa, wb := float64(a.params.Ranks)*float64(a.params.Ranks), float64(b.params.Ranks)*float64(b.params.Ranks)
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
	times := make([]float64, len(order))
	errs := make([]error, len(order))
	var mu sync.Mutex
	done := 0
	start := time.Now()
	workers.Each(len(order), func(i int) {
		j := order[i]
		times[i], errs[i] = simulate(m, j.algo, j.params)
		mu.Lock()
		done++
		fmt.Fprintf(streams.Err, "study suara: %d/%d runs (%s, P=%d, %s) after %.0fs\n", done, len(order), j.algo.ID(), j.params.Ranks,
			configs.FormatBytes(j.params.Count*max(j.params.ElemSize, 1)), time.Since(start).Seconds())
		mu.Unlock()
	})
	out := map[simKey]float64{}
	for i, j := range order {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[j.key()] = times[i]
	}
	return out, nil
}

func reportSuara(streams *cmdutil.IO, o *options, network string, m *configs.Machine, ps []int, ss []int64, points []*suaraPoint) error {
	fmt.Fprintf(streams.Out, "allreduce on %s, %s network, host overhead %s per message, %d-byte elements; SUARA2's grid and subsets' algorithm by the closed forms\n",
		m.Name, network, cmdutil.Seconds(m.Host.Overhead.Seconds()), max(o.elem, 1))
	if network == collsim.Analytic {
		fmt.Fprintln(streams.Out, "(the analytic network shares no links: where messages share them, as SUARA2's and Rabenseifner's do on a dragonfly, --network flow's times are longer and the speedups below smaller; see the README)")
	}
	header := []string{"size", "ranks"}
	for _, b := range suaraBaselines {
		header = append(header, b.name, "time")
	}
	header = append(header, "suara2", "time")
	for _, b := range suaraBaselines {
		header = append(header, "vs "+b.name)
	}
	rows := [][]string{header}
	for _, pt := range points {
		row := []string{configs.FormatBytes(pt.size), fmt.Sprint(pt.p)}
		for i := range suaraBaselines {
			row = append(row, pt.picks[i], fmtTime(pt.times[i]))
		}
		row = append(row, fmt.Sprintf("%dx%d %s", pt.plan.Groups, pt.p/max(pt.plan.Groups, 1), pt.plan.Inner), fmtTime(pt.suara))
		for i := range suaraBaselines {
			row = append(row, fmt.Sprintf("%.2f", pt.times[i]/pt.suara))
		}
		rows = append(rows, row)
	}
	if err := streams.Table(rows); err != nil {
		return err
	}

	// Growth of each speedup in P, per size.
	fmt.Fprintln(streams.Out)
	growth := [][]string{{"size"}}
	for _, b := range suaraBaselines {
		growth[0] = append(growth[0], "growth vs "+b.name)
	}
	exps := make([][]float64, len(suaraBaselines))
	for _, size := range ss {
		row := []string{configs.FormatBytes(size)}
		var xs []float64
		ys := make([][]float64, len(suaraBaselines))
		for _, pt := range points {
			if pt.size != size {
				continue
			}
			xs = append(xs, float64(pt.p))
			for i := range suaraBaselines {
				ys[i] = append(ys[i], pt.times[i]/pt.suara)
			}
		}
		for i := range suaraBaselines {
			b := growthExponent(xs, ys[i])
			exps[i] = append(exps[i], b)
			row = append(row, fmt.Sprintf("P^%.2f %s", b, regime(b, ys[i])))
		}
		growth = append(growth, row)
	}
	if err := streams.Table(growth); err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "\nspeedup ~ P^b fitted over P = %v by least squares on logs; O(P) is b = 1, O(sqrt P) b = 0.5.\n", ps)
	fmt.Fprintln(streams.Out, "analytic check: over a base whose cost is c(P-1) (the ring's latency, 2(P-1) alpha), SUARA2 on a sqrt P x sqrt P grid costs 2c(sqrt P - 1): a speedup of exactly (sqrt P + 1)/2, O(sqrt P), never O(P).")

	var paths []string
	for i, b := range suaraBaselines {
		heat := plotutil.Heat{Title: fmt.Sprintf("SUARA2's speedup over %s's allreduce on %s (>1: SUARA2 faster)", b.name, m.Name),
			XLabel: "message size", YLabel: "ranks P", LogColor: true}
		for _, pt := range points {
			heat.Add(float64(pt.size), float64(pt.p), pt.times[i]/pt.suara)
		}
		more, err := heat.Save(o.out, b.file)
		if err != nil {
			return err
		}
		paths = append(paths, more...)
	}
	var gl []plotutil.Series
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = float64(s)
	}
	for i, b := range suaraBaselines {
		gl = append(gl, plotutil.Series{Name: "vs " + b.name, X: xs, Y: exps[i]})
	}
	gp := plotutil.Plot{Title: "Growth of SUARA2's speedup in P (speedup ~ P^b)", XLabel: "message size", YLabel: "fitted exponent b", XBytes: true, Lines: gl}
	more, err := gp.Save(o.out, "study-suara-growth")
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "plots: %v\n", append(paths, more...))
	return nil
}

// growthExponent fits speedup ~ P^b by least squares on the logs; NaN
// with fewer than two rank counts.
func growthExponent(ps, speedups []float64) float64 {
	if len(ps) < 2 {
		return math.NaN()
	}
	lx, ly := make([]float64, len(ps)), make([]float64, len(ps))
	for i := range ps {
		lx[i], ly[i] = math.Log(ps[i]), math.Log(speedups[i])
	}
	return slope(lx, ly)
}

// regime names the growth exponent b of a speedup: O(P), O(sqrt P), a
// slower growth, flat or a loss.
func regime(b float64, speedups []float64) string {
	lo, hi := slices.Min(speedups), slices.Max(speedups)
	switch {
	case math.IsNaN(b):
		return "one rank count: no fit"
	case b >= 0.75:
		return "about O(P)"
	case b >= 0.35:
		return "about O(sqrt P)"
	case hi < 0.98:
		return "SUARA2 slower throughout"
	case lo > 0.98 && hi < 1.02:
		return "the same"
	case b >= 0.1:
		return "grows slower than sqrt P"
	case lo >= 1:
		return "flat gain"
	}
	return "no growth"
}
