package study

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

func newSuara(streams *cmdutil.IO) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "suara",
		Short: "SUARA2 against the native Open MPI allreduce: speedup and its growth in P",
		Long: `The SUARA paper reports over 2x speedup over the native Open MPI allreduce at
1,024 nodes and an O(P) asymptotic speedup. This study runs, for each rank
count and size, the allreduce Open MPI 4.1's fixed rules pick (--algo ompi)
and SUARA2 (2 steps on a G x P/G grid, G and the subsets' algorithm chosen by
the closed forms, as the paper chooses them by its model), simulated on the
machine, and reports the speedup, the closed forms' prediction of it, and the
growth exponent b of a fit speedup ~ P^b (b = 1 would be O(P)).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ps, ss, err := o.parse()
			if err != nil {
				return err
			}
			return runSuara(streams, o, m, ps, ss)
		},
	}
	o.register(cmd, "xc40", "64..4096", "8,16MiB")
	return cmd
}

func runSuara(streams *cmdutil.IO, o *options, m *configs.Machine, ps []int, ss []int64) error {
	rows := [][]string{{"size", "ranks", "ompi picks", "ompi", "suara2 grid", "suara2", "speedup", "model speedup"}}
	var lines []plotutil.Series
	for _, size := range ss {
		var xs, sim, model []float64
		for _, p := range ps {
			params, err := cmdutil.Call(collectives.Allreduce, p, size, o.elem, 0)
			if err != nil {
				return err
			}
			place, err := m.Place(p, "", 1)
			if err != nil {
				return err
			}
			h, _ := cmdutil.Hockney(m, place)
			sel, err := collectives.Select("ompi", collectives.Allreduce, params)
			if err != nil {
				return err
			}
			tOmpi, err := cmdutil.Simulate(m, sel.Algorithm, sel.Params)
			if err != nil {
				return err
			}
			plan, tPlan := cmdutil.SuaraPlan(h, params)
			suara, _ := collectives.Lookup(collectives.Allreduce, "suara")
			tSuara, err := cmdutil.Simulate(m, suara, plan)
			if err != nil {
				return err
			}
			speed, modelSpeed := tOmpi/tSuara, predict(h, sel.Algorithm, sel.Params)/tPlan
			xs, sim, model = append(xs, float64(p)), append(sim, speed), append(model, modelSpeed)
			rows = append(rows, []string{configs.FormatBytes(size), fmt.Sprint(p), sel.Algorithm.Name, fmtTime(tOmpi),
				fmt.Sprintf("%dx%d %s", plan.Groups, p/plan.Groups, plan.Inner), fmtTime(tSuara),
				fmt.Sprintf("%.2f", speed), fmt.Sprintf("%.2f", modelSpeed)})
		}
		lx, ly := make([]float64, len(xs)), make([]float64, len(xs))
		for i := range xs {
			lx[i], ly[i] = math.Log(xs[i]), math.Log(sim[i])
		}
		fmt.Fprintf(streams.Out, "%s: fitted growth of the simulated speedup: P^%.3f\n", configs.FormatBytes(size), slope(lx, ly))
		lines = append(lines, plotutil.Series{Name: configs.FormatBytes(size) + " simulated", X: xs, Y: sim},
			plotutil.Series{Name: configs.FormatBytes(size) + " closed forms", X: xs, Y: model, Dashed: true, Pair: true})
	}
	if err := cmdutil.Table(streams.Out, rows); err != nil {
		return err
	}
	pl := plotutil.Plot{Title: "SUARA2 speedup over Open MPI's allreduce on " + m.Name, XLabel: "ranks P", YLabel: "speedup (Open MPI time / SUARA2 time)", LegendDown: vg.Points(100), Lines: lines}
	paths, err := pl.Save(o.out, "study-suara")
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "plots: %v\n", paths)
	return nil
}
