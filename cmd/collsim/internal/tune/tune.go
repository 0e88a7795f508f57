// Package tune is `collsim tune`: pick the fastest algorithm per
// collective, rank count and size by simulation, and write the choices as
// an Open MPI dynamic rules file.
package tune

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

// maxTuneSize bounds tune's sizes: a pipelined candidate at 1 TiB is 16
// million segments of 64 KiB to simulate.
const maxTuneSize = 1 << 40

// New returns the tune command.
func New(streams *cmdutil.IO) *cobra.Command {
	var machine, colls, ranks, sizes, out string
	var elem int64
	var prune float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Pick the fastest algorithm per collective, rank count and size by simulation; write Open MPI dynamic rules",
		Long: `tune simulates every algorithm that Open MPI's coll/tuned also has, for each
collective, rank count and message size asked for, on the analytic network of
the machine, and keeps the fastest. It prints each choice beside Open MPI 4.1's
fixed rule and its simulated time, and writes the choices as a rules file for
  mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE
Consecutive sizes with the same winner become one rule. The rules file
measures sizes as Open MPI reads it (coll_tuned_decision_dynamic.c): the
vector, and for allgather, alltoall, gather and scatter a rank's count times
the ranks, as -s gives them; the table's fixed rules measure a rank's block
(a pair's for alltoall), as Open MPI's fixed decisions do. An algorithm whose
closed form says it is at least --prune times slower than the best closed
form is not simulated (the pruned column counts them; on a machine that
charges a per-message overhead or gap, only the forms that price it set
the best); algorithms without a closed form, and those whose form prices
routes that differ on the machine as the slowest (an estimate, not a
bound), are always simulated. Segment sizes are
written for Open MPI's segmented algorithms (the pipelined chain, whose
segment collsim chooses by the cost model, the segmented ring and the binary
reduce: given 0 Open MPI runs them unsegmented); elsewhere 0.`,
		Example: `  collsim tune -m xc40 -c allreduce,bcast -n 16..1024 -s 8..64MiB -o xc40-rules.txt`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ps, ss, err := cmdutil.Grid(machine, ranks, sizes)
			if err != nil {
				return err
			}
			// merge relies on sizes and rank counts in increasing order.
			slices.Sort(ps)
			slices.Sort(ss)
			ps, ss = slices.Compact(ps), slices.Compact(ss)
			var cs []collectives.Collective
			for _, name := range strings.Split(colls, ",") {
				c := collectives.Collective(strings.TrimSpace(name))
				if len(candidates(c)) == 0 {
					// The list is the registry's (it named 7 when gather and
					// scatter had gained Open MPI's algorithms too).
					var tunable []string
					for _, k := range collectives.Collectives {
						if len(candidates(k)) > 0 {
							tunable = append(tunable, string(k))
						}
					}
					what := "has no algorithm in common with Open MPI's coll/tuned"
					if !slices.Contains(collectives.Collectives, c) {
						what = "is not a collective"
					}
					return cmdutil.Flagf("--collectives: %q %s; choose from %s", name, what, strings.Join(tunable, ", "))
				}
				cs = append(cs, c)
			}
			if err := cmdutil.SizeApplies(cmd.Flags(), cs...); err != nil {
				return err
			}
			if prune != 0 && !(prune >= 1) || math.IsInf(prune, 1) { // NaN pruned nothing (an audit)
				return cmdutil.Flagf("--prune %g: give 0 (simulate every algorithm) or a factor of at least 1", prune)
			}
			if elem < 1 {
				return cmdutil.Flagf("--elem-size %d must be at least 1", elem)
			}
			if dir := filepath.Dir(out); out != "" {
				// Before the simulations; an error writing, as schedule's
				// and calibrate's -o say it (exit 1).
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					return fmt.Errorf("-o %s: there is no directory %s to write it in", out, dir)
				}
			}
			if big := slices.Max(ss); big > maxTuneSize {
				return cmdutil.Flagf("--sizes %s: tune simulates every candidate, segment by segment, and sizes above %s would take days; use collsim model for closed forms at any size", configs.FormatBytes(big), configs.FormatBytes(maxTuneSize))
			}
			results, skipped, err := tuneAll(m, cs, ps, ss, elem, prune)
			if err != nil {
				return err
			}
			for _, s := range skipped {
				fmt.Fprintf(streams.Err, "note: skipped: %s\n", s)
			}
			var rules bytes.Buffer
			sized := sizes
			if !slices.ContainsFunc(cs, func(c collectives.Collective) bool { return c != collectives.Barrier }) {
				sized = "none: a barrier has none" // (it wrote the default sizes: a new user's trial)
			}
			header := fmt.Sprintf("Open MPI coll/tuned dynamic rules written by collsim tune for %s\n(analytic network; ranks %s; sizes %s)", m.Name, ranks, sized)
			for _, pt := range results {
				if pt.zeroOverhead != "" {
					header += fmt.Sprintf("\nWhere the fastest won only because %s charges no per-message overhead ((!) in the table),\nthese rules take the fastest at o = %s: a real MPI library pays some.", m.Name, cmdutil.ProbeOverhead)
					break
				}
			}
			merged, fixed := merge(results)
			for _, f := range fixed {
				fmt.Fprintf(streams.Err, "note: %s\n", f)
			}
			if err := collectives.WriteOmpiRules(&rules, header, merged); err != nil {
				return err
			}
			if asJSON {
				if out != "" {
					if err := os.WriteFile(out, rules.Bytes(), 0o644); err != nil {
						return err
					}
				}
				return cmdutil.JSON(streams.Out, jsonReport(m, results, rules.String(), out))
			}
			// The file first: a file that cannot be written fails the run
			// before its table is printed as if it had succeeded (a new
			// user's trial: -o /proc/x).
			if out != "" {
				if err := os.WriteFile(out, rules.Bytes(), 0o644); err != nil {
					return err
				}
			}
			if err := report(streams, results); err != nil {
				return err
			}
			if out == "" {
				_, err = fmt.Fprintf(streams.Out, "\n%s", rules.String())
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "\nrules written to %s\n", out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage)
	f.StringVarP(&colls, "collectives", "c", "allreduce", "collectives to tune, comma-separated")
	f.StringVarP(&ranks, "ranks", "n", "16..64", "rank counts: a list or a doubling range")
	f.StringVarP(&sizes, "sizes", "s", "8..1MiB", "message sizes: a list or a doubling range")
	f.StringVarP(&out, "output", "o", "", "write the rules file here (default: print it)")
	f.Int64Var(&elem, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.BoolVar(&asJSON, "json", false, "print the choices and the rules file as JSON")
	f.Float64Var(&prune, "prune", 2, "skip simulating an algorithm whose closed form's lower bound exceeds this many times the best closed form (0: simulate all)")
	return cmd
}

// candidates are c's algorithms that Open MPI can be told to run.
func candidates(c collectives.Collective) []collectives.Algorithm {
	var out []collectives.Algorithm
	for _, a := range collectives.All() {
		if _, _, ok := collectives.OmpiAlgorithm(a.Collective, a.Name); ok && a.Collective == c {
			out = append(out, a)
		}
	}
	return out
}

// point is one (collective, ranks, size) and what tuning found there.
type point struct {
	c     collectives.Collective
	ranks int
	size  int64
	bytes int64 // in the measure of Open MPI's fixed decisions
	// rulesBytes is the size in the measure of its rules files
	// (coll_tuned_decision_dynamic.c): the whole vector, or for
	// allgather, alltoall, gather and scatter a rank's count times the
	// ranks, where the fixed decisions take one rank's or one pair's.
	rulesBytes int64
	best       collectives.Algorithm
	params     collectives.Params
	time       float64
	fixed      string  // Open MPI's fixed choice
	fixedT     float64 // its simulated time; NaN if collsim cannot run it
	skipped    []string
	pruned     int // candidates not simulated: closed form far above the best
	// zeroOverhead says the choice wins only on a machine that charges
	// nothing per message, and what wins with a modest overhead: robust,
	// with its parameters, which the rules file takes (a real MPI library
	// always pays some overhead per message).
	zeroOverhead string
	robust       collectives.Algorithm
	robustParams collectives.Params
	// segmentNote says how the best's segment was chosen, where the
	// machine's own costs could not choose it.
	segmentNote string
}

// tuneAll simulates every candidate at every point, two points at a time
// per core. Each simulation has its own engine, so the results do not
// depend on the order they finish in.
func tuneAll(m *configs.Machine, cs []collectives.Collective, ps []int, ss []int64, elem int64, prune float64) (pts []point, skipped []string, err error) {
	// A size of which nothing would move (an alltoall's 8 B over 16
	// ranks: 0 elements a pair) is skipped with a note, as real's lists
	// skip it; tune simulated such empty calls under the size asked.
	for _, c := range cs {
		sizes := ss
		if c == collectives.Barrier {
			sizes = []int64{0} // a barrier moves no data: one rule per rank count
		}
		for _, p := range ps {
			for _, s := range sizes {
				params, err := collsim.Call(c, p, s, elem, 0)
				if err != nil {
					return nil, nil, err
				}
				if _, err := collsim.Shortfall(c, params, s); err != nil {
					skipped = append(skipped, fmt.Sprintf("%s of %s on %d ranks: nothing would be sent (a multiple of %s moves everything)", c, configs.FormatBytes(s), p, collsim.AlltoallQuantum(elem, p)))
					continue
				}
				if collectives.SendsNothing(c, params) {
					// Open MPI's MPI_ functions return before its rules are
					// read: every algorithm ties at 0 s, and the rule that
					// named one of them (the first in the list) was applied
					// to every size up to the next one tuned.
					skipped = append(skipped, fmt.Sprintf("%s of %s on %d ranks: a call of no elements sends nothing (Open MPI returns before it reads its rules), so no rule is chosen for it; the rules for the smallest size tuned start at 0 bytes", c, configs.FormatBytes(s), p))
					continue
				}
				pts = append(pts, point{c: c, ranks: p, size: s})
			}
			if len(pts) == 0 || pts[len(pts)-1].c != c || pts[len(pts)-1].ranks != p {
				if c != collectives.Alltoall {
					return nil, nil, cmdutil.Flagf("--sizes: %s on %d ranks sends nothing at any size given (a call of no elements sends nothing); give a size of at least one %d-byte element", c, p, elem)
				}
				return nil, nil, cmdutil.Flagf("--sizes: %s on %d ranks sends nothing at any size given: each rank's data is split evenly over the ranks in whole %d-byte elements; give a multiple of %s", c, p, elem, collsim.AlltoallQuantum(elem, p))
			}
		}
	}
	errs := make([]error, len(pts))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				errs[i] = tunePoint(m, &pts[i], elem, prune)
			}
		})
	}
	for i := range pts {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return pts, skipped, nil
}

func tunePoint(m *configs.Machine, pt *point, elem int64, prune float64) error {
	params, err := collsim.Call(pt.c, pt.ranks, pt.size, elem, 0)
	if err != nil {
		return err
	}
	pt.bytes, _ = collectives.OmpiMessageBytes(pt.c, params)
	pt.rulesBytes = params.SizeBytes(pt.c)
	place, err := m.Place(pt.ranks, "", 1)
	if err != nil {
		return err
	}
	h, _ := collsim.Hockney(m, place)
	pt.time = math.Inf(1)
	cands := candidates(pt.c)
	qs := make([]collectives.Params, len(cands))
	lower := make([]float64, len(cands)) // 0 where there is no closed form: always simulated
	bestPredicted := math.Inf(1)
	tm := collsim.TuneModelOf(m, h)
	probing := m.Host.Overhead == 0 && m.Gap == 0
	if probing {
		// A pipeline's segment trades against what each message costs;
		// at nothing the model's best is as small as the simulation
		// allows, which no MPI library runs well, and the rules file is
		// for one: choose it at a modest overhead.
		tm.Overhead = cmdutil.ProbeOverhead.Seconds()
	}
	pricing := collsim.NewPricing(m, place, 1)
	for i, a := range cands {
		qs[i] = params
		collsim.Tune(a, &qs[i], tm)
		if pr, kind, alike, err := pricing.ClosedForm(a, qs[i]); err == nil && !math.IsNaN(pr.Time) && alike {
			// Only where the routes the form assumes alike are: priced
			// at the slowest route, a form's "lower bound" can be above
			// the time (gpu-cluster's knomial bcast of 4 KiB on 24 ranks,
			// 4.6 us simulated against a form of 10.9, was pruned, and the
			// table named the wrong winner: a new user's trial).
			lower[i] = pr.Lower // (a form that leaves o and g out is still below the time)
			if !pricing.LeavesOutHostCosts(kind) {
				// Only a form that prices what the machine charges per
				// message may set the bar: an alpha-beta-gamma form on a
				// machine with o underestimates (linear alltoall's 128 µs
				// pruned Bruck's 37 µs on fattree-1024-overhead).
				bestPredicted = min(bestPredicted, pr.Time)
			}
		}
	}
	var firstErr error                       // why the first skipped candidate could not run
	simulated := make([]float64, len(cands)) // each candidate's time; +Inf where not simulated
	for i := range simulated {
		simulated[i] = math.Inf(1)
	}
	for i, a := range cands {
		if prune > 0 && lower[i] > prune*bestPredicted {
			pt.pruned++
			continue
		}
		q := qs[i]
		t, err := cmdutil.Simulate(m, a, q)
		if err == nil {
			simulated[i] = t
		}
		if err != nil {
			// Power-of-two-only variants and the like: say so in the table.
			pt.skipped = append(pt.skipped, a.Name)
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if t < pt.time {
			pt.best, pt.params, pt.time = a, q, t
		}
	}
	if pt.best.Name == "" {
		return fmt.Errorf("%s on %d ranks, %d bytes: no algorithm could run (%s); the first: %w", pt.c, pt.ranks, pt.size, strings.Join(pt.skipped, ", "), firstErr)
	}
	if probing {
		// A machine that charges nothing per message favours algorithms
		// that send many (a linear reduce takes P-1 messages at the root
		// for free). Would the choice stand at a modest MPI overhead?
		with := *m
		with.Host.Overhead = cmdutil.ProbeOverhead
		best, bestT := -1, math.Inf(1)
		for i, a := range cands { // all of them: the pruning priced o = 0
			if slices.Contains(pt.skipped, a.Name) {
				continue
			}
			if t, err := cmdutil.Simulate(&with, a, qs[i]); err == nil && t < bestT {
				best, bestT = i, t
			}
		}
		switch {
		case best >= 0 && cands[best].Name != pt.best.Name && simulated[best] <= pt.time:
			// A tie at no overhead, which the modest one breaks: its
			// winner is the fastest, with no (!) (a tie was flagged as
			// winning only at no overhead: a new user's trial).
			pt.best, pt.params, pt.time = cands[best], qs[best], simulated[best]
		case best >= 0 && cands[best].Name != pt.best.Name:
			pt.robust, pt.robustParams = cands[best], qs[best]
			pt.zeroOverhead = fmt.Sprintf("wins only because %s charges no per-message overhead: with o = %s, %s is fastest, and the rules file takes it", m.Name, cmdutil.ProbeOverhead, pt.robust.Name)
		}
	}
	if probing && pt.params.Segment != params.Segment {
		pt.segmentNote = fmt.Sprintf("its segment was chosen as if each message cost o = %s of CPU: %s charges none, and at none a pipeline's best segment is as small as the simulation allows", cmdutil.ProbeOverhead, m.Name)
	}
	pt.fixedT = math.NaN()
	if sel, err := collectives.Select("ompi", pt.c, params); err == nil {
		pt.fixed = sel.Algorithm.Name
		if t, err := cmdutil.Simulate(m, sel.Algorithm, sel.Params); err == nil {
			pt.fixedT = t
		}
	} else {
		pt.fixed = "(not runnable)"
	}
	return nil
}

func report(streams *cmdutil.IO, pts []point) error {
	rows := [][]string{{"collective", "ranks", "size", "fastest", "ompi#", "time", "ompi fixed rule", "its time", "gain", "pruned", ""}}
	var notes []string
	for _, pt := range pts {
		n, _, _ := collectives.OmpiAlgorithm(pt.c, pt.best.Name)
		fixedT, gain := "cannot run", "-"
		if !math.IsNaN(pt.fixedT) {
			fixedT, gain = cmdutil.Seconds(pt.fixedT), fmt.Sprintf("%.2fx", pt.fixedT/pt.time)
			if pt.time == 0 && pt.fixedT == 0 {
				gain = "-" // a call that sends nothing either way (NaNx: a new user's trial)
			}
		}
		flag := ""
		if pt.zeroOverhead != "" {
			flag = "(!)"
			notes = append(notes, fmt.Sprintf("(!) %s on %d ranks, %s: %s", pt.c, pt.ranks, configs.FormatBytes(pt.size), pt.zeroOverhead))
		}
		if pt.segmentNote != "" {
			flag += "(s)"
			if !slices.Contains(notes, "(s) "+pt.segmentNote) {
				notes = append(notes, "(s) "+pt.segmentNote)
			}
		}
		rows = append(rows, []string{string(pt.c), fmt.Sprint(pt.ranks), configs.FormatBytes(pt.size), pt.best.Name, fmt.Sprint(n),
			cmdutil.Seconds(pt.time), pt.fixed, fixedT, gain, fmt.Sprint(pt.pruned), flag})
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(streams.Out, n)
	}
	return nil
}

// Choice is one point of tune's JSON: the fastest algorithm there and
// Open MPI 4.1's fixed choice.
type Choice struct {
	Collective    string   `json:"collective"`
	Ranks         int      `json:"ranks"`
	SizeBytes     int64    `json:"size_bytes"`
	OmpiBytes     int64    `json:"ompi_message_bytes"` // the size as Open MPI's fixed decisions measure it (its rules file: size_bytes)
	Fastest       string   `json:"fastest"`
	OmpiNumber    int      `json:"ompi_algorithm"` // coll_tuned's number of the fastest
	SegmentBytes  int64    `json:"segment_bytes"`
	Time          float64  `json:"time_s"`
	OmpiFixed     string   `json:"ompi_fixed"`
	OmpiFixedTime *float64 `json:"ompi_fixed_time_s"` // null: collsim cannot run it
	Pruned        int      `json:"pruned"`
	ZeroOverhead  string   `json:"zero_overhead_note,omitempty"` // the choice wins only at o = 0
	// RulesAlgorithm and RulesSegment are what the rules file gives here:
	// the fastest's, or where it wins only at o = 0, the fastest's at the
	// probe's overhead (a script read ompi_algorithm, which differed from
	// the file there; a new user's trial).
	RulesAlgorithm int    `json:"rules_algorithm"`
	RulesSegment   int64  `json:"rules_segment_bytes"`
	SegmentNote    string `json:"segment_note,omitempty"` // how its segment was chosen where the machine's costs could not
}

// jsonReport is tune's --json output.
func jsonReport(m *configs.Machine, pts []point, rules, file string) any {
	var cs []Choice
	for _, pt := range pts {
		n, _, _ := collectives.OmpiAlgorithm(pt.c, pt.best.Name)
		c := Choice{Collective: string(pt.c), Ranks: pt.ranks, SizeBytes: pt.size, OmpiBytes: pt.bytes, Fastest: pt.best.Name, OmpiNumber: n,
			SegmentBytes: collectives.OmpiSegmentBytes(pt.best, pt.params), Time: pt.time, OmpiFixed: pt.fixed, Pruned: pt.pruned, ZeroOverhead: pt.zeroOverhead, SegmentNote: pt.segmentNote}
		if !math.IsNaN(pt.fixedT) {
			c.OmpiFixedTime = &pt.fixedT
		}
		alg, params := pt.rulesChoice()
		c.RulesAlgorithm, _, _ = collectives.OmpiAlgorithm(pt.c, alg.Name)
		c.RulesSegment = collectives.OmpiSegmentBytes(alg, params)
		cs = append(cs, c)
	}
	return struct {
		Machine   string   `json:"machine"`
		Network   string   `json:"network"`
		Choices   []Choice `json:"choices"`
		Rules     string   `json:"rules"`
		RulesFile string   `json:"rules_file,omitempty"`
	}{m.Name, collsim.Analytic, cs, rules, file}
}

// rulesChoice is the algorithm the rules give at pt: the fastest, or
// where it wins only at o = 0, the fastest at the probe's overhead.
func (pt *point) rulesChoice() (collectives.Algorithm, collectives.Params) {
	if pt.zeroOverhead != "" {
		return pt.robust, pt.robustParams
	}
	return pt.best, pt.params
}

// merge turns the points into rules: per collective and rank count, a rule
// where the winner changes; and says where it left a gather or scatter to
// the fixed rules (rootedSizes).
func merge(pts []point) ([]collectives.OmpiRules, []string) {
	var out []collectives.OmpiRules
	for _, pt := range pts {
		if len(out) == 0 || out[len(out)-1].Collective != pt.c {
			out = append(out, collectives.OmpiRules{Collective: pt.c, BySize: map[int][]collectives.OmpiRule{}})
		}
		alg, params := pt.rulesChoice()
		n, _, _ := collectives.OmpiAlgorithm(pt.c, alg.Name)
		seg := collectives.OmpiSegmentBytes(alg, params)
		by := out[len(out)-1].BySize
		rules := by[pt.ranks]
		from := pt.rulesBytes // a rules file's measure: 1 KiB of scatter on 16 ranks was written as 64 B
		if len(rules) == 0 {
			from = 0
		}
		if k := len(rules); k > 0 && rules[k-1].Algorithm == n && rules[k-1].SegmentBytes == seg {
			continue
		}
		if k := len(rules); k > 0 && from <= rules[k-1].MinBytes {
			continue // sizes that round to the same Open MPI measure
		}
		by[pt.ranks] = append(rules, collectives.OmpiRule{MinBytes: from, Algorithm: n, SegmentBytes: seg})
	}
	var fixed []string
	for _, r := range out {
		if !rootedSizes(r.Collective) {
			continue
		}
		var left []string
		for _, ranks := range slices.Sorted(maps.Keys(r.BySize)) {
			if len(r.BySize[ranks]) > 1 {
				r.BySize[ranks] = collectives.OmpiFixed
				left = append(left, strconv.Itoa(ranks))
			}
		}
		if len(left) > 0 {
			fixed = append(fixed, fmt.Sprintf("the rules file leaves %s on %s ranks to Open MPI's fixed rules: its winner changes with the size, and Open MPI measures that size from send arguments MPI ignores on some ranks, so rules by size could send ranks to different algorithms and hang the call", r.Collective, strings.Join(left, ",")))
		}
	}
	return out, fixed
}

// rootedSizes reports whether Open MPI's dynamic rules measure c's size
// from arguments that MPI ignores on some ranks: gather's and scatter's
// send count and type, which non-roots (scatter) and an MPI_IN_PLACE root
// (gather) may leave as they like (coll_tuned_decision_dynamic.c, v4.1.8
// and v5.0.10). Rules that change with the size can then send ranks to
// different algorithms, and the call hangs (a 1,000-double scatter on 12
// ranks with the file collsim wrote: an audit), so where the winner
// changes with the size the file leaves the communicator to the fixed
// rules, which measure the receive side there.
func rootedSizes(c collectives.Collective) bool {
	return c == collectives.Gather || c == collectives.Scatter
}
