package validate

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
)

// modelPoint is one algorithm at one rank count and size: its closed form
// beside its simulated time on each network model.
type modelPoint struct {
	Algorithm string  `json:"algorithm"`
	Ranks     int     `json:"ranks"`
	Bytes     int64   `json:"bytes"`
	Closed    float64 `json:"closed_form_s"`
	Lower     float64 `json:"closed_form_lower_s"` // where not Exact, the closed form bounds the time to [Lower, Closed]
	Exact     bool    `json:"exact"`               // the closed form claims equality on a contention-free crossbar
	// ModelExact is whether it claims equality here, as collsim run's
	// model_exact: exact, the routes alike, nothing left out charged.
	ModelExact bool               `json:"model_exact"`
	Simulated  map[string]float64 `json:"simulated_s"`
	// Error is (closed form - simulated) / simulated, per network.
	Error map[string]float64 `json:"error"`
}

// modelSummary is one algorithm's errors over the grid on one network.
type modelSummary struct {
	Algorithm   string  `json:"algorithm"`
	Network     string  `json:"network"`
	Points      int     `json:"points"`
	MedianError float64 `json:"median_abs_error"`
	WorstError  float64 `json:"worst_error"` // signed
	WorstAt     string  `json:"worst_at"`
}

// runModel validates the closed forms against the simulation.
func runModel(streams *cmdutil.IO, o *options) error {
	networks := strings.Split(o.networks, ",")
	for _, n := range networks {
		if n != "analytic" && n != "flow" {
			return cmdutil.Flagf("--network %q: use analytic, flow or analytic,flow", n)
		}
	}
	sizes := o.sizes
	if sizes == "" {
		sizes = "8..16MiB"
	}
	m, ranks, ss, err := cmdutil.Grid(o.machine, o.ranks, sizes)
	if err != nil {
		return err
	}
	if err := wholeElements(ss); err != nil {
		return err
	}
	colls, err := cmdutil.Collectives(o.collective)
	if err != nil {
		return err
	}
	var points []modelPoint
	skipped, empty, short := 0, 0, 0
	uniform := true
	var gaps collsim.PlacementGaps
	byColl := make([][]collectives.Algorithm, len(colls))
	total := 0
	for i, c := range colls {
		if byColl[i], err = closedFormAlgorithms(c, o.algos, len(colls) > 1); err != nil {
			return err
		}
		total += len(byColl[i]) * len(ranks) * len(ss)
	}
	// A grid of flow runs takes minutes: say how far it has got.
	count, stop := cmdutil.Counter(cmdutil.Display(streams, o.quiet, o.progress), "points", total)
	defer stop()
	done := 0
	for i := range colls {
		algos := byColl[i]
		for _, p := range ranks {
			place, err := m.Place(p, "", 1)
			if err != nil {
				return err
			}
			nodeSize, _ := collsim.PlacedNodeSize(m, p, "", 1)
			pricing := collsim.NewPricing(m, place, collectives.TwoLevelSize(collectives.Params{NodeSize: nodeSize, GroupSize: m.GroupSize()}))
			uniform = uniform && pricing.Uniform
			gaps = gaps.Or(pricing.Gaps)
			for _, a := range algos {
				last := int64(-1)
				for _, size := range ss {
					done++
					if params, err := collsim.Call(a.Collective, p, size, 8, 0); err == nil {
						// An alltoall of a size that does not split into whole
						// elements moves less, or nothing: run refuses the
						// latter and notes the former (validate ran both
						// without a word; a new user's trial).
						if note, err := collsim.Shortfall(a.Collective, params, size); err != nil {
							empty++
							count(done)
							continue
						} else if note != "" {
							short++
						}
					}
					if params, err := collsim.Call(a.Collective, p, size, 8, 0); err == nil && params.SizeBytes(a.Collective) == last {
						continue // the same call as the size before (a barrier, or an alltoall split that rounds down)
					} else if err == nil {
						last = params.SizeBytes(a.Collective)
					}
					pt, ok, err := modelAt(m, pricing, a, p, size, networks)
					count(done)
					if err != nil {
						return err
					}
					if !ok {
						skipped++
						continue
					}
					points = append(points, pt)
				}
			}
		}
	}
	if len(points) == 0 && empty > 0 {
		return cmdutil.Flagf("--size: the alltoall calls of this grid would send nothing (each rank's data splits over the ranks in whole 8-byte elements); give sizes of at least 8 bytes times the ranks")
	}
	if len(points) == 0 {
		return cmdutil.Flagf("no algorithm with a closed form can run on this grid")
	}
	sums := summarize(points, networks)
	notes := modelNotes(m, points, networks, uniform, gaps, skipped)
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("%d alltoall calls would send nothing (each rank's data splits over the ranks in whole 8-byte elements) and were left out, as run refuses them", empty))
	}
	if short > 0 {
		notes = append(notes, fmt.Sprintf("%d alltoall calls move less than their size (the rest does not split into whole 8-byte elements over the ranks): their rows give the bytes moved", short))
	}
	if o.plotDir != "" {
		paths, err := plotModel(o, m, points, networks)
		if err != nil {
			return err
		}
		notes = append(notes, "plots: "+strings.Join(paths, ", "))
	}
	if o.json {
		err = cmdutil.JSON(streams.Out, struct {
			Machine  string         `json:"machine"`
			Points   []modelPoint   `json:"points"`
			Summary  []modelSummary `json:"summary"`
			Notes    []string       `json:"notes"`
			Networks []string       `json:"networks"`
		}{m.Name, points, sums, notes, networks})
	} else {
		err = modelTables(streams, o, m, points, sums, networks, notes)
	}
	if err != nil {
		return err
	}
	return checkModel(o.maxError, points, networks)
}

// closedFormAlgorithms are the algorithms of c named by spec ("" or "all":
// every one with a closed form). With several collectives, a name c does
// not have is skipped, so that "-c all -a ring" means every ring.
func closedFormAlgorithms(c collectives.Collective, spec string, several bool) ([]collectives.Algorithm, error) {
	var out []collectives.Algorithm
	for _, a := range collectives.All() {
		if a.Collective != c {
			continue
		}
		named := spec == "" || spec == "all" || slices.Contains(strings.Split(spec, ","), a.Name)
		if named && cost.Has(a) {
			out = append(out, a)
		}
	}
	if spec != "" && spec != "all" {
		for _, name := range strings.Split(spec, ",") {
			a, err := collectives.Lookup(c, name)
			if err != nil && several {
				continue
			}
			if err != nil {
				return nil, &cmdutil.FlagError{Err: err}
			}
			if !cost.Has(a) {
				return nil, cmdutil.Flagf("%s has no closed form yet; collsim model lists those that do", a.ID())
			}
		}
	}
	return out, nil
}

// modelAt prices and simulates one point; ok is false where the algorithm
// or its closed form does not cover the parameters.
func modelAt(m *configs.Machine, pricing collsim.Pricing, a collectives.Algorithm, ranks int, size int64, networks []string) (modelPoint, bool, error) {
	params, err := collsim.Call(a.Collective, ranks, size, 8, 0)
	if err != nil {
		return modelPoint{}, false, err
	}
	nodeSize, _ := collsim.PlacedNodeSize(m, ranks, "", 1) // as run reckons it
	params.NodeSize, params.GroupSize = nodeSize, m.GroupSize()
	collsim.Tune(a, &params, collsim.TuneModelOf(m, pricing.Flat))
	if _, err := a.Build(params); err != nil {
		return modelPoint{}, false, nil
	}
	pred, kind, alike, err := pricing.ClosedForm(a, params)
	if err != nil {
		return modelPoint{}, false, nil
	}
	pt := modelPoint{Algorithm: a.ID(), Ranks: ranks, Bytes: params.SizeBytes(a.Collective), Closed: pred.Time, Lower: pred.Lower, Exact: pred.Exact,
		ModelExact: pricing.ExactHere(pred, kind, alike),
		Simulated:  map[string]float64{}, Error: map[string]float64{}}
	for _, n := range networks {
		simulate := cmdutil.Simulate
		if n == "flow" {
			simulate = cmdutil.SimulateFlow
		}
		t, err := simulate(m, a, params)
		if err != nil {
			return modelPoint{}, false, err
		}
		pt.Simulated[n] = t
		pt.Error[n] = relError(pred.Time, t)
	}
	return pt, true, nil
}

// relError is (model - reference) / reference; 0 when both are 0, and by
// convention 1 (100%) for a nonzero model of a zero reference, which has
// no relative error (and JSON no infinity).
func relError(model, reference float64) float64 {
	if reference == 0 {
		if model == 0 {
			return 0
		}
		return 1
	}
	return (model - reference) / reference
}

// summarize gives each algorithm's median and worst error on each network.
func summarize(points []modelPoint, networks []string) []modelSummary {
	var out []modelSummary
	var names []string
	for _, p := range points {
		if !slices.Contains(names, p.Algorithm) {
			names = append(names, p.Algorithm)
		}
	}
	for _, n := range networks {
		for _, name := range names {
			s := modelSummary{Algorithm: name, Network: n}
			var abs []float64
			for _, p := range points {
				if p.Algorithm != name {
					continue
				}
				e := p.Error[n]
				abs = append(abs, math.Abs(e))
				if math.Abs(e) >= math.Abs(s.WorstError) {
					s.WorstError = e
					s.WorstAt = fmt.Sprintf("P=%d %s", p.Ranks, configs.FormatBytes(p.Bytes))
				}
			}
			slices.Sort(abs)
			s.Points = len(abs)
			s.MedianError = (abs[(len(abs)-1)/2] + abs[len(abs)/2]) / 2
			out = append(out, s)
		}
	}
	return out
}

// modelNotes say where the closed forms' assumptions do not hold.
func modelNotes(m *configs.Machine, points []modelPoint, networks []string, uniform bool, gaps collsim.PlacementGaps, skipped int) []string {
	var notes []string
	if !uniform {
		notes = append(notes, "routes between the placed ranks differ in latency or bandwidth: the closed forms price every message at the slowest route, so they overestimate messages on faster ones")
	}
	for _, why := range gaps.Reasons() {
		notes = append(notes, "the closed forms are estimates at the grid's points where "+strings.Replace(why, ", and it ", ", which they do not know: it ", 1))
	}
	if m.Topology.Hosts() > 1 { // (one host has no network to taper)
		if a, b := m.PathParams(0, 1); b > 0 && a >= 0 {
			full := float64(m.Topology.Hosts()) / 2 / b
			if bis := m.Topology.Bisection(); bis < 0.99*full {
				notes = append(notes, fmt.Sprintf("the network has %.0f%% of full bisection bandwidth (a tapered tree or sparse global links): where many messages cross it at once, the flow model slows them and the closed forms, which know no contention, do not", 100*bis/full))
			}
		}
	}
	if slices.Contains(networks, "flow") && slices.Contains(networks, "analytic") {
		worst, where := 0.0, ""
		for _, p := range points {
			if d := relError(p.Simulated["flow"], p.Simulated["analytic"]); d > worst {
				worst, where = d, fmt.Sprintf("%s P=%d %s", p.Algorithm, p.Ranks, configs.FormatBytes(p.Bytes))
			}
		}
		if worst > 0.01 {
			notes = append(notes, fmt.Sprintf("contention: the flow model is up to %.0f%% slower than the contention-free analytic model (%s): links shared by concurrent messages, which no closed form prices", 100*worst, where))
		}
	}
	bounds := 0
	for _, p := range points {
		if !p.Exact {
			bounds++
		}
	}
	if bounds > 0 {
		notes = append(notes, fmt.Sprintf("%d points price their algorithm with a bound rather than an exact form (marked *; each formula's doc comment in cost/ says why): some error there is by construction", bounds))
	}
	if m.Host.Overhead > 0 || m.Gap > 0 {
		notes = append(notes, "the machine charges a per-message CPU overhead or NIC gap: the algorithms with a LogGP form (the rings, pairwise and recursive exchanges, dissemination, binomial bcast, the linear algorithms: cost.HasLogGP) are priced with it, the others with alpha-beta-gamma forms that leave o and g out")
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d grid points were left out: the algorithm cannot run there, or its closed form does not cover it (powers of two only, say)", skipped))
	}
	return notes
}

func modelTables(streams *cmdutil.IO, o *options, m *configs.Machine, points []modelPoint, sums []modelSummary, networks []string, notes []string) error {
	w := streams.Out
	fmt.Fprintf(w, "closed forms against the simulation on %s (%s network); error = (closed form - simulated) / simulated\n\n", m.Name, strings.Join(networks, " and "))
	rows := [][]string{{"algorithm", "network", "points", "median |error|", "worst error", "at"}}
	for _, s := range sums {
		rows = append(rows, []string{s.Algorithm, s.Network, fmt.Sprint(s.Points), strings.TrimPrefix(pct(s.MedianError), "+"), pct(s.WorstError), s.WorstAt})
	}
	if err := cmdutil.Table(w, rows); err != nil {
		return err
	}
	if o.points {
		fmt.Fprintln(w)
		header := []string{"algorithm", "ranks", "size", "closed form"}
		for _, n := range networks {
			header = append(header, n, "error")
		}
		rows = [][]string{header}
		for _, p := range points {
			mark := ""
			if !p.Exact {
				mark = "*"
			}
			r := []string{p.Algorithm, fmt.Sprint(p.Ranks), configs.FormatBytes(p.Bytes), cmdutil.Seconds(p.Closed) + mark}
			for _, n := range networks {
				r = append(r, cmdutil.Seconds(p.Simulated[n]), pct(p.Error[n]))
			}
			rows = append(rows, r)
		}
		if err := cmdutil.Table(w, rows); err != nil {
			return err
		}
	}
	printNotes(w, notes)
	return nil
}

func pct(e float64) string {
	if math.Abs(e) < 5e-10 {
		return "0%"
	}
	return fmt.Sprintf("%+.3g%%", 100*e)
}

// checkModel fails when a closed form is further than maxError from a
// simulated time; a closed form that is a bound passes where the
// simulated time lies within it.
func checkModel(maxError float64, points []modelPoint, networks []string) error {
	if maxError == 0 {
		return nil
	}
	var bad []string
	for _, p := range points {
		for _, n := range networks {
			t := p.Simulated[n]
			if !p.Exact && t >= p.Lower*(1-1e-9) && t <= p.Closed*(1+1e-9) {
				continue
			}
			if math.Abs(p.Error[n]) > maxError {
				bad = append(bad, fmt.Sprintf("%s P=%d %s (%s): %s", p.Algorithm, p.Ranks, configs.FormatBytes(p.Bytes), n, pct(p.Error[n])))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	shown := bad[:min(len(bad), 8)]
	more := ""
	if len(bad) > len(shown) {
		more = fmt.Sprintf("; and %d more", len(bad)-len(shown))
	}
	return &cmdutil.ValidationError{Err: fmt.Errorf("%d points off by more than %s (or outside their bounds): %s%s", len(bad), threshold(maxError), strings.Join(shown, "; "), more)}
}

// plotModel draws time against size at the largest rank count and time
// against ranks at the largest size, each algorithm in its own colour:
// simulated on each network (solid on the first, dotted on the second),
// closed form dashed; and, per network, the worst error over the
// algorithms at every point of the grid as a heat map.
func plotModel(o *options, m *configs.Machine, points []modelPoint, networks []string) ([]string, error) {
	if err := os.MkdirAll(o.plotDir, 0o755); err != nil {
		return nil, fmt.Errorf("--plot %s: %w", o.plotDir, err)
	}
	maxP, maxS := 0, int64(0)
	for _, p := range points {
		maxP, maxS = max(maxP, p.Ranks), max(maxS, p.Bytes)
	}
	var names []string
	for _, p := range points {
		if !slices.Contains(names, p.Algorithm) {
			names = append(names, p.Algorithm)
		}
	}
	lines := func(keep func(modelPoint) bool, x func(modelPoint) float64) []plotutil.Series {
		var out []plotutil.Series
		for i, name := range names {
			cf := plotutil.Series{Name: name + ", closed form", Dashed: true, Color: i + 1}
			for _, p := range points {
				if p.Algorithm == name && keep(p) {
					cf.X, cf.Y = append(cf.X, x(p)), append(cf.Y, p.Closed)
				}
			}
			if len(cf.X) == 0 {
				continue
			}
			for j, n := range networks {
				sim := plotutil.Series{Name: name + ", " + n, Color: i + 1, Dotted: j > 0}
				for _, p := range points {
					if p.Algorithm == name && keep(p) {
						sim.X, sim.Y = append(sim.X, x(p)), append(sim.Y, p.Simulated[n])
					}
				}
				out = append(out, sim)
			}
			out = append(out, cf)
		}
		return out
	}
	n := strings.Join(networks, " and ")
	var paths []string
	bySize := plotutil.Plot{Title: fmt.Sprintf("%s, %d ranks: simulated (%s networks) and closed form", m.Name, maxP, n), XLabel: "size (bytes)", YLabel: "time (s)", LogY: true, XBytes: true,
		Lines: lines(func(p modelPoint) bool { return p.Ranks == maxP }, func(p modelPoint) float64 { return float64(p.Bytes) })}
	byRanks := plotutil.Plot{Title: fmt.Sprintf("%s, %s: simulated (%s networks) and closed form", m.Name, configs.FormatBytes(maxS), n), XLabel: "ranks P", YLabel: "time (s)", LogY: true,
		Lines: lines(func(p modelPoint) bool { return p.Bytes == maxS }, func(p modelPoint) float64 { return float64(p.Ranks) })}
	for _, pl := range []struct {
		p    plotutil.Plot
		name string
	}{{bySize, "validate-model-size"}, {byRanks, "validate-model-ranks"}} {
		if len(pl.p.Lines) == 0 {
			continue
		}
		got, err := pl.p.Save(o.plotDir, pl.name)
		if err != nil {
			return nil, err
		}
		paths = append(paths, got...)
	}
	for _, n := range networks {
		heat := plotutil.Heat{Title: fmt.Sprintf("worst |closed form - simulated| / simulated over the algorithms, %s, %s network (%%)", m.Name, n),
			XLabel: "size (bytes)", YLabel: "ranks P"}
		for _, p := range points {
			heat.Add(float64(p.Bytes), float64(p.Ranks), 100*math.Abs(p.Error[n]))
		}
		name := "validate-model-error"
		if n != networks[0] {
			name += "-" + n
		}
		got, err := heat.Save(o.plotDir, name)
		if err != nil {
			return nil, err
		}
		paths = append(paths, got...)
	}
	return paths, nil
}

// wholeElements refuses sizes that are not whole 8-byte elements, which
// validate runs (the call's own message named --elem-size, which
// validate has not: a new user's trial).
func wholeElements(sizes []int64) error {
	for _, s := range sizes {
		if s%8 != 0 {
			return cmdutil.Flagf("-s %s: validate runs 8-byte elements; give sizes that are multiples of 8 (run, model and tune take --elem-size)", configs.FormatBytes(s))
		}
	}
	return nil
}
