// Package algos is `collsim algos`: what each algorithm is.
package algos

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim/workers"
)

// New returns the algos command.
func New(streams *cmdutil.IO) *cobra.Command {
	var coll string
	var asJSON, forms bool
	cmd := &cobra.Command{
		Use:   "algos",
		Short: "List the collective algorithms, each with what it does and what it costs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			type entry struct {
				Collective string `json:"collective"`
				Name       string `json:"name"`
				Default    bool   `json:"default"`
				Summary    string `json:"summary"`
				Cost       string `json:"cost"`
				Form       string `json:"closed_form,omitempty"`
				// Options are the flags its schedule depends on.
				Options []string `json:"options"`
			}
			var list []entry
			var algs []collectives.Algorithm
			for _, a := range collectives.All() {
				if coll != "" && string(a.Collective) != coll {
					continue
				}
				algs = append(algs, a)
				list = append(list, entry{string(a.Collective), a.Name, collectives.DefaultAlgorithm(a.Collective) == a.Name, a.Summary, a.Cost, "", a.TakenOptions()})
			}
			if forms {
				for i, f := range describeForms(algs) {
					list[i].Form = f
				}
			}
			if len(list) == 0 {
				_, err := collectives.Lookup(collectives.Collective(coll), "")
				return &cmdutil.FlagError{Err: err}
			}
			if asJSON {
				return cmdutil.JSON(streams.Out, list)
			}
			fmt.Fprintf(streams.Out, "%s\n\n", cmdutil.Wrap(costConvention, 78, ""))
			for i, e := range list {
				if i > 0 {
					fmt.Fprintln(streams.Out)
				}
				def := ""
				if e.Default {
					def = " (default)"
				}
				fmt.Fprintf(streams.Out, "%s/%s%s\n", e.Collective, e.Name, def)
				fmt.Fprintf(streams.Out, "%s\n  cost: %s\n", cmdutil.Wrap(e.Summary, 78, "  "), e.Cost)
				if len(e.Options) > 0 {
					fmt.Fprintf(streams.Out, "  options: --%s\n", strings.Join(e.Options, ", --"))
				}
				if e.Form != "" {
					fmt.Fprintf(streams.Out, "%s\n", cmdutil.Wrap("closed form: "+e.Form, 78, "  "))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&coll, "collective", "c", "", "only this collective")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&forms, "forms", false, "also say how closely each closed form prices the algorithm: exact, or bounds and how wide, measured on the calls the forms are checked on against simulation (cost.CheckGrid; alpha 1.5 µs, beta 100 ps/B, gamma 30 ps/B, eager)")
	return cmd
}

// costConvention says how the costs below are written and what they
// charge, which is how collsim's networks charge: the textbooks' forms
// charge a + nb per send, so theirs differ wherever a rank sends several
// messages in a row.
const costConvention = "Costs: p ranks, n bytes (the vector), a the latency, b and g the seconds per byte moved and reduced. " +
	"As on collsim's networks, a is paid once per message in flight, not per send: a rank's next send starts as soon as the last one's bytes are out, " +
	"so a root sending to two children reaches the second at a + 2nb, not 2(a + nb). " +
	"A message above the machine's eager limit (host.eager_limit, 64 KiB unless set) goes by rendezvous and pays 2a more for its request and reply. " +
	"\"about\" marks an approximation; --forms says how closely each closed form (collsim model) prices the algorithm."

// describeForms measures the closed form of each algorithm on the check
// grid, on all CPUs, and says how closely it prices it.
func describeForms(algs []collectives.Algorithm) []string {
	out := make([]string, len(algs))
	workers.Each(len(algs), func(i int) { out[i] = cost.TightnessOf(algs[i]).String() })
	return out
}
