// Package study is `collsim study`: sweeps that check the claims of the
// papers collsim is built on, printing a table and writing plots.
package study

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
)

// New returns the study command and its sub-commands.
func New(streams *cmdutil.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Check the claims of the papers collsim is built on (tables and plots)",
	}
	cmd.AddCommand(newSuara(streams), newLP(streams), newNoise(streams), newRouting(streams),
		newFFTStudy(streams), newSuaraTraining(streams), newCompression(streams), newLPTraining(streams), newStrategies(streams), newTaskBenchStudy(streams), newRedistStudy(streams), newFarmStudy(streams), newBLASXStudy(streams), newHSAStudy(streams))
	withOutputs(streams, cmd)
	return cmd
}

// common flags of the studies
type options struct {
	machine, ranks, sizes, out string
	elem                       int64
}

func (o *options) register(cmd *cobra.Command, machine, ranks, sizes string) {
	f := cmd.Flags()
	f.StringVarP(&o.machine, "machine", "m", machine, cmdutil.MachineUsage)
	f.StringVarP(&o.ranks, "ranks", "n", ranks, "rank counts: a list or a doubling range")
	f.StringVarP(&o.sizes, "sizes", "s", sizes, "message sizes: a list or a doubling range")
	f.StringVarP(&o.out, "out", "o", ".", "directory for the plots (PNG and SVG)")
	f.Int64Var(&o.elem, "elem-size", collsim.DefaultElemSize, cmdutil.ElemSizeUsage)
}

func (o *options) parse() (*configs.Machine, []int, []int64, error) {
	return cmdutil.Grid(o.machine, o.ranks, o.sizes)
}

// slope fits y = a + b x by least squares and returns b.
func slope(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// predict prices a by its closed form, or NaN if it has none.
func predict(h cost.Hockney, a collectives.Algorithm, params collectives.Params) float64 {
	if !cost.Has(a) {
		return math.NaN()
	}
	pr, err := h.Predict(a, params)
	if err != nil {
		return math.NaN()
	}
	return pr.Time
}

func fmtTime(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return cmdutil.Seconds(s)
}
