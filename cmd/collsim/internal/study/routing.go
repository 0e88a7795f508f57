package study

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
)

func newRouting(streams *cmdutil.IO) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "routing",
		Short: "Minimal, Valiant and UGAL routing on a Dragonfly, by placement",
		Long: `Dragonfly networks route minimally (one global hop) unless a detour through
a third group (Valiant) spreads the load, and UGAL chooses per message
(Kim et al. 2008). This study runs a pairwise alltoall and a ring allreduce on
the flow network under each routing, with ranks placed in blocks (whole
groups: a job on few groups, whose few global links between them carry all
the traffic) and at random over the machine, and reports each time and
which routing wins.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRouting(streams, o) },
	}
	o.register(cmd, "dragonfly-72", "16", "64KiB..16MiB")
	return cmd
}

func runRouting(streams *cmdutil.IO, o *options) error {
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
	routings := []string{network.RouteMinimal, network.RouteValiant, network.RouteUGAL}
	placements := []string{"block", "random"}
	fmt.Fprintf(streams.Out, "routing on %s: %d ranks, flow network (block: whole groups; random: seeded)\n", m.Name, ps[0])
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
				params, err := cmdutil.Call(a.Collective, ps[0], size, o.elem, 0)
				if err != nil {
					return err
				}
				row := []string{run.coll, placement, configs.FormatBytes(params.SizeBytes(a.Collective))}
				best, bestAt := 0.0, ""
				for i, routing := range routings {
					t, err := simulateRouted(m, a, params, placement, routing)
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
				}
				lines = append(lines, series...)
			}
		}
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	pl := plotutil.Plot{Title: fmt.Sprintf("pairwise alltoall on %s, %d ranks, flow network", m.Name, ps[0]), XLabel: "size", YLabel: "time (s)", LogY: true, XBytes: true, LegendDown: vg.Points(0), Lines: lines}
	paths, err := pl.Save(o.out, "study-routing")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "plots: %s\n", strings.Join(paths, ", "))
	return err
}

// simulateRouted runs a on m's flow network under routing, with the
// given placement (seed 1), and returns the simulated time.
func simulateRouted(m *configs.Machine, a collectives.Algorithm, params collectives.Params, placement, routing string) (float64, error) {
	c := *m
	c.Routing, c.Placement = routing, placement
	t, err := cmdutil.SimulateFlow(&c, a, params)
	if err != nil {
		return 0, fmt.Errorf("%s routing: %w", routing, err)
	}
	return t, nil
}
