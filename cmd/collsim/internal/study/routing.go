package study

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
)

func newRouting(streams *cmdutil.IO) *cobra.Command {
	o := &options{}
	groups := 0
	cmd := &cobra.Command{
		Use:   "routing",
		Short: "Minimal, Valiant and UGAL routing on a Dragonfly, by placement",
		Long: `Dragonfly networks route minimally (one global hop) unless a detour through
a third group (Valiant) spreads the load, and UGAL chooses per message
(Kim et al. 2008). This study runs a pairwise alltoall and a ring allreduce on
the flow network under each routing, with ranks aligned to groups (an equal
block of ranks on each of --groups groups: a job on few groups, whose few
global links between them carry all the traffic) and at random over the
machine, and reports each time and which routing wins.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRouting(streams, o, groups) },
	}
	o.register(cmd, "dragonfly-72", "16", "64KiB..16MiB")
	cmd.Flags().IntVar(&groups, "groups", 2, "how many Dragonfly groups the group-aligned placement spreads the ranks over")
	return cmd
}

func runRouting(streams *cmdutil.IO, o *options, groups int) error {
	m, ps, ss, err := o.parse()
	if err != nil {
		return err
	}
	if len(ps) != 1 {
		return cmdutil.Flagf("study routing takes one rank count (-n); routing and placement are what vary")
	}
	if err := network.CheckRouting(network.RouteValiant, m.Topology); err != nil {
		return &cmdutil.FlagError{Err: fmt.Errorf("-m %s: %w", o.machine, err)}
	}
	aligned, err := groupAligned(m, ps[0], groups)
	if err != nil {
		return err
	}
	routings := []string{network.RouteMinimal, network.RouteValiant, network.RouteUGAL}
	placements := []string{"groups", "random"}
	fmt.Fprintf(streams.Out, "routing on %s: %d ranks, flow network (groups: %d ranks on each of %d groups; random: seeded, over the machine)\n", m.Name, ps[0], ps[0]/groups, groups)
	rows := [][]string{{"collective", "placement", "size", "minimal", "valiant", "ugal", "best"}}
	var lines []plotutil.Series
	for _, run := range []struct{ coll, algo string }{{"alltoall", "pairwise"}, {"allreduce", "ring"}} {
		a, err := collectives.Lookup(collectives.Collective(run.coll), run.algo)
		if err != nil {
			return err
		}
		for _, placement := range placements {
			series := make([]plotutil.Series, len(routings))
			for _, size := range ss {
				params, err := collsim.Call(a.Collective, ps[0], size, o.elem, 0)
				if err != nil {
					return err
				}
				row := []string{run.coll, placement, configs.FormatBytes(params.SizeBytes(a.Collective))}
				best, bestAt := 0.0, ""
				for i, routing := range routings {
					t, err := simulateRouted(m, a, params, placement, routing, aligned)
					if err != nil {
						return err
					}
					row = append(row, cmdutil.Seconds(t))
					if bestAt == "" || t < best*(1-1e-9) {
						best, bestAt = t, routing
					}
					series[i].X, series[i].Y = append(series[i].X, float64(params.SizeBytes(a.Collective))), append(series[i].Y, t)
				}
				rows = append(rows, append(row, bestAt))
			}
			if run.coll == "alltoall" {
				for i := range series {
					series[i].Name = fmt.Sprintf("%s, %s placement", routings[i], placement)
					series[i].Dashed = placement == "random"
					series[i].Color = i + 1 // one colour per routing, whatever the placement
				}
				lines = append(lines, series...)
			}
		}
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	pl := plotutil.Plot{Title: fmt.Sprintf("pairwise alltoall on %s, %d ranks, flow network", m.Name, ps[0]), XLabel: "size (bytes)", YLabel: "time (s)", LogY: true, XBytes: true, LegendDown: vg.Points(0), Lines: lines}
	paths, err := pl.Save(o.out, "study-routing")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "plots: %s\n", strings.Join(paths, ", "))
	return err
}

// groupAligned places ranks in equal consecutive blocks on the first hosts
// of the first groups groups of m's Dragonfly, one rank per slot.
func groupAligned(m *configs.Machine, ranks, groups int) ([]int32, error) {
	per := m.GroupHosts * m.RanksPerHost
	if groups < 1 || groups > m.Topology.Groups() || ranks%groups != 0 || ranks/groups > per {
		return nil, cmdutil.Flagf("--groups %d: want 1..%d groups, dividing the %d ranks, with at most %d ranks per group on %s",
			groups, m.Topology.Groups(), ranks, per, m.Name)
	}
	hosts := make([]int32, ranks)
	for r := range hosts {
		g, i := r/(ranks/groups), r%(ranks/groups)
		hosts[r] = int32(g*m.GroupHosts + i/m.RanksPerHost)
	}
	return hosts, nil
}

// simulateRouted runs a on m's flow network under routing, with the
// given placement ("groups": the hosts aligned, else a policy with seed 1),
// and returns the simulated time.
func simulateRouted(m *configs.Machine, a collectives.Algorithm, params collectives.Params, placement, routing string, aligned []int32) (float64, error) {
	c := *m
	c.Routing, c.Placement = routing, placement
	if placement == "groups" {
		c.Hosts = aligned
	}
	t, err := cmdutil.SimulateFlow(&c, a, params)
	if err != nil {
		return 0, fmt.Errorf("%s routing: %w", routing, err)
	}
	return t, nil
}
