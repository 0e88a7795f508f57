// Package topo is `collsim topo`: describe a machine.
package topo

import (
	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/configs"
)

// New returns the topo command.
func New(streams *cmdutil.IO) *cobra.Command {
	var machine string
	var dot, asJSON bool
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Describe a machine: hosts, switches, links, diameter, bisection bandwidth",
		Example: `  collsim topo -m xc40
  collsim topo -m my-cluster.yaml --dot > machine.dot`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := configs.Resolve(machine)
			if err != nil {
				return err
			}
			if dot {
				out, err := m.Topology.DOT()
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(append(out, '\n'))
				return err
			}
			facts := m.Describe()
			if asJSON {
				obj := map[string]string{}
				for _, f := range facts {
					obj[f[0]] = f[1]
				}
				obj["description"] = m.Description
				return cmdutil.JSON(streams.Out, obj)
			}
			rows := make([][]string, 0, len(facts)+1)
			for _, f := range facts {
				rows = append(rows, []string{f[0], f[1]})
			}
			if m.Description != "" {
				rows = append(rows, []string{"description", m.Description})
			}
			return cmdutil.Table(streams.Out, rows)
		},
	}
	cmd.Flags().StringVarP(&machine, "machine", "m", configs.DefaultMachine, "built-in machine name or machine config file")
	cmd.Flags().BoolVar(&dot, "dot", false, "print the topology as a Graphviz DOT graph")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
