package study

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

func newLP(streams *cmdutil.IO) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "lp",
		Short: "Linear Pipelining's broadcast against the binomial tree and scatter-allgather, vs P",
		Long: `Linear Pipelining claims that for long messages its time stays nearly flat in
P, while the binomial tree (minimum spanning tree) grows like log P, and that
it reaches up to about 2x the bandwidth of scatter-allgather (bidirectional
exchange). This study broadcasts one long vector (--sizes, default 16 MiB)
with bcast/chain (its segment set to the alpha-beta optimum
sqrt(n alpha / ((P-2) beta))), bcast/binomial and bcast/scatter_allgather.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, ps, ss, err := o.parse()
			if err != nil {
				return err
			}
			if len(ss) != 1 {
				// (It ran the first and left the others out without a word.)
				return cmdutil.Flagf("study lp takes one size (-s); the rank count is what varies")
			}
			return runLP(streams, o, m, ps, ss[0])
		},
	}
	o.register(cmd, "fattree-1024", "2..1024", "16MiB")
	return cmd
}

func runLP(streams *cmdutil.IO, o *options, m *configs.Machine, ps []int, size int64) error {
	names := []string{"chain", "binomial", "scatter_allgather"}
	times := map[string][]float64{}
	var xs []float64
	rows := [][]string{{"ranks", "chain (LP)", "segment", "binomial", "scatter_allgather", "LP bandwidth / scatter_allgather's"}}
	for _, p := range ps {
		params, err := collsim.Call(collectives.Bcast, p, size, o.elem, 0)
		if err != nil {
			return err
		}
		place, err := m.Place(p, "", 1)
		if err != nil {
			return err
		}
		h, _ := collsim.Hockney(m, place)
		params.Segment = min(params.Count, collsim.OptimalSegment(h, p, size, o.elem))
		row := []string{fmt.Sprint(p)}
		for _, name := range names {
			a, _ := collectives.Lookup(collectives.Bcast, name)
			t, err := cmdutil.Simulate(m, a, params)
			if err != nil {
				return err
			}
			times[name] = append(times[name], t)
			row = append(row, fmtTime(t))
			if name == "chain" {
				row = append(row, configs.FormatBytes(params.Segment*o.elem))
			}
		}
		last := len(times["chain"]) - 1
		row = append(row, fmt.Sprintf("%.2f", times["scatter_allgather"][last]/times["chain"][last]))
		xs = append(xs, float64(p))
		rows = append(rows, row)
	}
	if err := streams.Table(rows); err != nil {
		return err
	}
	lx := make([]float64, len(xs))
	for i, x := range xs {
		lx[i] = math.Log2(x)
	}
	n := len(xs) - 1
	fmt.Fprintf(streams.Out, "chain (LP): time at %d ranks / at %d ranks = %.2f\n", int(xs[n]), int(xs[0]), times["chain"][n]/times["chain"][0])
	fmt.Fprintf(streams.Out, "binomial: time grows by %s per doubling of P (fit of time vs log2 P)\n", fmtTime(slope(lx, times["binomial"])))
	var lines []plotutil.Series
	for _, name := range names {
		lines = append(lines, plotutil.Series{Name: "bcast/" + name, X: xs, Y: times[name]})
	}
	pl := plotutil.Plot{Title: fmt.Sprintf("Broadcast of %s on %s", configs.FormatBytes(size), m.Name), XLabel: "ranks P", YLabel: "time (s)", LegendDown: vg.Points(40), Lines: lines}
	paths, err := pl.Save(o.out, "study-lp")
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "plots: %v\n", paths)
	return nil
}
