// Package model is `collsim model`: closed-form predictions.
package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
)

// New returns the model command.
func New(streams *cmdutil.IO) *cobra.Command {
	var coll, machine, ranks, sizes string
	var elem int64
	var alpha, beta, gamma float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Closed-form (Hockney alpha-beta-gamma) predictions of every algorithm of a collective",
		Long: `Predict the time of every algorithm of a collective from its closed form,
for a range of rank counts and sizes, and name the fastest. alpha, beta and
gamma come from the machine (the slowest route from rank 0, and the host's
reduction rate) unless given.`,
		Example: `  collsim model
  collsim model -c allreduce -n 16,64,1024 -s 8..64MiB -m fattree-1024
  collsim model --alpha 2e-6 --beta 1e-10 --gamma 1e-10 -n 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for i, v := range []float64{alpha, beta, gamma} {
				name := []string{"alpha", "beta", "gamma"}[i]
				if cmd.Flags().Changed(name) && !(v >= 0 && v < math.Inf(1)) {
					return cmdutil.Flagf("--%s %v: give a time of 0 or more", name, v)
				}
			}
			m, err := configs.Resolve(machine)
			if err != nil {
				return err
			}
			c := collectives.Collective(coll)
			if err := cmdutil.SizeApplies(cmd.Flags(), c); err != nil {
				return err
			}
			if _, err := collectives.Lookup(c, collectives.DefaultAlgorithm(c)); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			ps, err := cmdutil.Ints(ranks)
			if err != nil {
				return &cmdutil.FlagError{Err: fmt.Errorf("--ranks: %w", err)}
			}
			if !cmd.Flags().Changed("ranks") {
				// The default range, up to what the machine holds (and
				// its whole: a machine of 12 slots ends at 12).
				ps = slices.DeleteFunc(ps, func(p int) bool { return p > m.Slots() })
				if len(ps) == 0 || ps[len(ps)-1] < m.Slots() && ps[len(ps)-1]*2 > m.Slots() {
					ps = append(ps, m.Slots())
				}
			}
			ss, err := cmdutil.Sizes(sizes)
			if err != nil {
				return &cmdutil.FlagError{Err: fmt.Errorf("--sizes: %w", err)}
			}
			type row struct {
				Ranks     int                `json:"ranks"`
				SizeBytes int64              `json:"size_bytes"`
				Times     map[string]float64 `json:"times_s"`
				// Exact: the form claims the call's time on this machine
				// exactly, as collsim run's model_exact (a form exact on a
				// crossbar is an estimate where routes differ).
				Exact map[string]bool `json:"exact"`
				// HostCostsLeftOut names the forms that leave out the
				// hosts' o and g the machine charges (underestimates).
				HostCostsLeftOut map[string]bool `json:"host_costs_left_out,omitempty"`
				Best             string          `json:"best"`
				// ZeroOverhead says, on a machine that charges no
				// per-message overhead, what would be fastest at a modest
				// one (cmdutil.ProbeOverhead) where that differs.
				ZeroOverhead string  `json:"zero_overhead_note,omitempty"`
				Bound        float64 `json:"lower_bound_s"`
				// MayBeFaster names the algorithms whose forms are bounds
				// with a lower bound below the best's time: the forms
				// cannot tell whether they beat it (a pipeline's upper
				// bound, every segment one after another, ran 121x its
				// simulated time, and model named Rabenseifner the best
				// where Linear Pipelining ran 28% faster: a new user's
				// trial).
				MayBeFaster []string `json:"may_be_faster,omitempty"`
			}
			var algs []collectives.Algorithm
			for _, a := range collectives.All() {
				if a.Collective == c && cost.Has(a) {
					algs = append(algs, a)
				}
			}
			var out []row
			skipped, refused, leftOut, differ, undecided := false, false, false, false, false
			var probeNotes []string
			hostFree := m.Host.Overhead == 0 && m.Gap == 0
			kinds := map[string]bool{}
			header := []string{"ranks", "size"}
			for _, a := range algs {
				header = append(header, a.Name)
			}
			table := [][]string{append(header, "best", "bound")}
			for _, p := range ps {
				switch {
				case p < 1:
					return cmdutil.Flagf("--ranks %d: give rank counts of at least 1", p)
				case p > m.Slots():
					// Exit 1, as run's ranks that do not fit (README's exit codes).
					return fmt.Errorf("--ranks %d does not fit on %s (1..%d)", p, m.Name, m.Slots())
				}
				place, err := m.Place(p, "", 1)
				if err != nil {
					return err
				}
				nodeSize, _ := collsim.PlacedNodeSize(m, p, "", 1) // as run reckons it
				block := collectives.TwoLevelSize(collectives.Params{NodeSize: nodeSize, GroupSize: m.GroupSize()})
				pricing := collsim.NewPricing(m, place, block)
				h := &pricing.Flat
				// The bound's model: one no rank's messages beat (the
				// slowest route's, which prices the forms, is none where
				// routes differ), or the one the flags give.
				lower := pricing.Lower
				if cmd.Flags().Changed("alpha") {
					// The rendezvous handshake is a request's and a reply's
					// latency: two of the alpha given (it stayed twice the
					// machine's; a new user's trial).
					h.Alpha, h.Handshake = alpha, cost.HandshakeOf(alpha)
				}
				if cmd.Flags().Changed("beta") {
					h.Beta = beta
				}
				if cmd.Flags().Changed("gamma") {
					h.Gamma = gamma
				}
				if cmd.Flags().Changed("alpha") || cmd.Flags().Changed("beta") || cmd.Flags().Changed("gamma") {
					pricing.Levels = cost.Levels{Local: *h, Global: *h} // the parameters given describe one level
					lower = *h
				}
				prev := int64(-1)
				for _, s := range ss {
					params, err := collsim.Call(c, p, s, elem, 0)
					if err != nil {
						return err
					}
					params.NodeSize, params.GroupSize = nodeSize, m.GroupSize()
					if params.SizeBytes(c) == prev {
						skipped = true
						continue // rounds to the same call as the row before
					}
					prev = params.SizeBytes(c)
					r := row{Ranks: p, SizeBytes: params.SizeBytes(c), Times: map[string]float64{}, Exact: map[string]bool{}, HostCostsLeftOut: map[string]bool{}}
					probeBest, probeT := "", math.Inf(1) // the fastest LogGP form at o = cmdutil.ProbeOverhead
					line := []string{fmt.Sprint(p), configs.FormatBytes(r.SizeBytes)}
					// Only forms that price the o and g the machine charges
					// set the best, as in tune (others underestimate); the
					// others only when no form prices them.
					best, bestPriced := math.Inf(1), false
					lowers := map[string]float64{} // the priced bounds' lower ends
					for _, a := range algs {
						// The call as run makes it: an algorithm run refuses
						// here (a two-level one on a flat machine) is no
						// candidate.
						_, _, q, _, err := collsim.Resolve(c, a.Name, p, s, elem, 0, collsim.Shape{}, m)
						if err == nil {
							// The options run fills in (a pipeline's segment,
							// SUARA's grid), as run fills them in: the forms
							// priced untuned chains at 8192-element segments
							// where run ran 139 (an audit).
							collsim.Tune(a, &q, collsim.TuneModelOf(m, pricing.Flat))
							_, err = a.Build(q)
						}
						if err != nil {
							line = append(line, "-") // the algorithm cannot run here
							continue
						}
						pred, kind, alike, err := pricing.ClosedForm(a, q)
						kinds[kind] = true
						if errors.Is(err, cost.ErrNoClosedForm) {
							line = append(line, "-")
							continue
						}
						if err != nil {
							return err
						}
						if math.IsInf(pred.Time, 0) || math.IsNaN(pred.Time) {
							// A form that overflows: the table printed +Infs and
							// named a best among them, and --json failed on +Inf
							// (an audit). (A finite form past the clock is
							// printed: it is a number, where run could not
							// simulate the call.)
							return collsim.ClockHint(fmt.Errorf("%s's closed form for %d ranks and %s: %w", a.ID(), p, configs.FormatBytes(r.SizeBytes), sim.ErrClockLimit), r.SizeBytes, m.Inputs)
						}
						r.Times[a.Name], r.Exact[a.Name] = pred.Time, pricing.ExactHere(pred, kind, alike)
						mark := ""
						if !pred.Exact {
							mark = "*"
						}
						if !alike {
							mark, differ = mark+"≈", true
						}
						priced := !pricing.LeavesOutHostCosts(kind)
						if priced && !pred.Exact { // (alike or not: where routes differ, the forms are estimates, and a bound's lower end still says the pipeline may win; it missed fattree-1024, xc40 and dragonfly-72: an audit)
							lowers[a.Name] = pred.Lower
						}
						if !priced {
							r.HostCostsLeftOut[a.Name], leftOut = true, true
							mark += "~"
						}
						if hostFree && cost.HasLogGP(a) {
							if at, err := h.PredictLogGP(a, q, cmdutil.ProbeOverhead.Seconds(), 0); err == nil && at.Time < probeT {
								probeBest, probeT = a.Name, at.Time
							}
						}
						line = append(line, cmdutil.Seconds(pred.Time)+mark)
						if priced && !bestPriced || priced == bestPriced && pred.Time < best {
							best, r.Best, bestPriced = pred.Time, a.Name, priced
						}
					}
					b, err := lower.LowerBound(c, params)
					if err != nil {
						return err
					}
					r.Bound = b.Time
					name := r.Best
					if name == "" {
						name, refused = "-", true
					}
					if r.HostCostsLeftOut[r.Best] {
						name += "~"
					}
					for _, a := range algs {
						if lo, ok := lowers[a.Name]; ok && a.Name != r.Best && lo < r.Times[r.Best] {
							r.MayBeFaster = append(r.MayBeFaster, a.Name)
						}
					}
					if len(r.MayBeFaster) > 0 {
						name += " (?)"
						undecided = true
						probeNotes = append(probeNotes, fmt.Sprintf("(?) %d ranks, %s: %s may be faster than %s", p, configs.FormatBytes(r.SizeBytes), strings.Join(r.MayBeFaster, ", "), r.Best))
					}
					if a, err := collectives.Lookup(c, r.Best); err == nil && hostFree && cost.HasLogGP(a) && probeBest != "" && probeBest != r.Best {
						r.ZeroOverhead = fmt.Sprintf("%s wins only because %s charges no per-message overhead: at o = %s, %s is the fastest of the forms that price it", r.Best, m.Name, cmdutil.ProbeOverhead, probeBest)
						probeNotes = append(probeNotes, fmt.Sprintf("(!) %d ranks, %s: %s", p, configs.FormatBytes(r.SizeBytes), r.ZeroOverhead))
						name += " (!)"
					}
					out = append(out, r)
					table = append(table, append(line, name, cmdutil.Seconds(b.Time)))
				}
			}
			if asJSON {
				return cmdutil.JSON(streams.Out, out)
			}
			models := "Hockney alpha-beta-gamma"
			if kinds["LogGP"] {
				models += " (LogGP where the algorithm has a form: the hosts charge o or g)"
			}
			if kinds["levels"] {
				models += " (level by level, nodes or groups, for the hierarchical algorithms)"
			}
			fmt.Fprintf(streams.Out, "%s on %s: %s closed forms (* = upper bound, see collsim algos; - = no closed form for these ranks yet;\n"+
				"best = the fastest by these forms, among those that price the costs the machine charges: an algorithm marked * may run faster than its bound (collsim run simulates it);\n"+
				"bound = the lower bound no algorithm beats: the bytes the busiest rank must move, at the most a rank can move at once, and reduce, after Chan et al. 2007, and the least latency%s)\n",
				c, m.Name, models, eagerNote(m.Host.EagerLimit))
			if err := cmdutil.Table(streams.Out, table); err != nil {
				return err
			}
			if refused {
				fmt.Fprintf(streams.Out, "(a row of - is a call collsim run refuses, such as an alltoall too small to send a whole element to each rank)\n")
			}
			if leftOut {
				fmt.Fprintf(streams.Out, "(~ = an alpha-beta-gamma form that leaves out the per-message overhead o and gap g %s charges: it underestimates, and sets the best only where no form prices them; collsim run or tune simulates them)\n", m.Name)
			}
			if undecided {
				fmt.Fprintf(streams.Out, "(? = the forms do not decide the best: an algorithm marked * has a lower bound below the best's time and may be faster, as its upper bound can lie far above what it runs in (a pipeline's: every segment one after another); which, below; collsim run or tune simulates them)\n")
			}
			if differ {
				fmt.Fprintf(streams.Out, "(≈ = an estimate: %s's routes differ and the form prices every message as the slowest; contention it does not see either: collsim run --network flow or validate simulates it)\n", m.Name)
			}
			for _, n := range probeNotes {
				fmt.Fprintln(streams.Out, n)
			}
			if skipped {
				fmt.Fprintf(streams.Out, "(sizes that round to the same whole number of %d-byte elements per rank as the row above are left out)\n", elem)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&coll, "collective", "c", "allreduce", "collective: "+cmdutil.CollectiveNames())
	f.StringVarP(&machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage)
	f.StringVarP(&ranks, "ranks", "n", "2..64", "rank counts: a list (8,64) or a doubling range (2..1024)")
	f.StringVarP(&sizes, "sizes", "s", "8,1KiB,64KiB,1MiB,16MiB", "sizes: a list or a doubling range (8..64MiB)")
	f.Int64Var(&elem, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
	f.Float64Var(&alpha, "alpha", 0, "override alpha, seconds per message")
	f.Float64Var(&beta, "beta", 0, "override beta, seconds per byte")
	f.Float64Var(&gamma, "gamma", 0, "override gamma, seconds per byte reduced")
	f.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// eagerNote says which messages the forms charge a rendezvous handshake.
func eagerNote(limit int64) string {
	if limit == math.MaxInt64 {
		return ""
	}
	return fmt.Sprintf(";\nmessages above the %s eager limit go by rendezvous: the forms charge each its handshake, 2 latencies more", configs.FormatBytes(limit))
}
