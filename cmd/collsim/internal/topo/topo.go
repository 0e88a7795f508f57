// Package topo is `collsim topo`: describe a machine.
package topo

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/run"
	"github.com/collsim/collsim/configs"
)

// New returns the topo command.
func New(streams *cmdutil.IO) *cobra.Command {
	var machine string
	var dot, asJSON bool
	var degrade, fail, set []string
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Describe a machine: hosts, switches, links, diameter, bisection bandwidth",
		Example: `  collsim topo -m xc40
  collsim topo -m fattree-1024 --fail 's0.0->s1.0'
  collsim topo -m my-cluster.yaml --dot > machine.dot
  collsim topo -m fattree-1024 --set network.fat_tree.taper=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dot && asJSON {
				return cmdutil.Flagf("--dot and --json are two formats; give one")
			}
			m, err := run.Machine(machine, set)
			if err != nil {
				return err
			}
			if len(degrade) > 0 {
				if m, err = m.Degrade(degrade); err != nil {
					return &cmdutil.FlagError{Err: fmt.Errorf("--degrade %w", err)}
				}
			}
			if len(fail) > 0 {
				if m, err = m.Fail(fail); err != nil {
					return &cmdutil.FlagError{Err: fmt.Errorf("--fail: %w", err)}
				}
			}
			if dot {
				out, err := m.Topology.DOT()
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(append(out, '\n'))
				return err
			}
			if asJSON {
				return cmdutil.JSON(streams.Out, m.Facts())
			}
			facts := m.Describe()
			rows := make([][]string, 0, len(facts)+1)
			for _, f := range facts {
				rows = append(rows, []string{f[0], f[1]})
			}
			if m.Description != "" {
				d := m.Description
				if len(set) > 0 || len(degrade) > 0 || len(fail) > 0 {
					// It described the machine without them (full
					// bisection beside a taper of 32:24: a new user's
					// trial).
					d = "(the config's, without --set, --degrade and --fail) " + d
				}
				rows = append(rows, []string{"description", d})
			}
			return cmdutil.Table(streams.Out, rows)
		},
	}
	cmd.Flags().StringVarP(&machine, "machine", "m", configs.DefaultMachine, cmdutil.MachineUsage)
	cmd.Flags().BoolVar(&dot, "dot", false, "print the topology as a Graphviz DOT graph")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON, numbers as numbers (bandwidths in bytes per second)")
	cmd.Flags().StringArrayVar(&degrade, "degrade", nil, `a link "FROM->TO:FACTOR" at a fraction of its bandwidth, as collsim run --degrade; repeatable`)
	cmd.Flags().StringArrayVar(&set, "set", nil, `a machine config setting "PATH=VALUE", as collsim run --set (the machine described as a run with it would use it); repeatable`)
	cmd.Flags().StringArrayVar(&fail, "fail", nil, `a failed link "FROM->TO" (both directions), as collsim run --fail; the bisection and diameter count without it; repeatable`)
	return cmd
}
