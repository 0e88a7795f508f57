// Package algos is `collsim algos`: what each algorithm is.
package algos

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
)

// New returns the algos command.
func New(streams *cmdutil.IO) *cobra.Command {
	var coll string
	var asJSON bool
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
			}
			var list []entry
			for _, a := range collectives.All() {
				if coll != "" && string(a.Collective) != coll {
					continue
				}
				list = append(list, entry{string(a.Collective), a.Name, collectives.DefaultAlgorithm(a.Collective) == a.Name, a.Summary, a.Cost})
			}
			if len(list) == 0 {
				_, err := collectives.Lookup(collectives.Collective(coll), "")
				return &cmdutil.FlagError{Err: err}
			}
			if asJSON {
				return cmdutil.JSON(streams.Out, list)
			}
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
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&coll, "collective", "c", "", "only this collective")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
