// Package study is `collsim study`: sweeps that check the claims of the
// papers collsim is built on, printing a table and writing plots.
package study

import (
	"math"
	"path/filepath"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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
	cmd.AddCommand(newSuara(streams), newLP(streams))
	return cmd
}

// common flags of the studies
type options struct {
	machine, ranks, sizes, out string
	elem                       int64
}

func (o *options) register(cmd *cobra.Command, machine, ranks, sizes string) {
	f := cmd.Flags()
	f.StringVarP(&o.machine, "machine", "m", machine, "built-in machine name or machine config file")
	f.StringVarP(&o.ranks, "ranks", "n", ranks, "rank counts: a list or a doubling range")
	f.StringVarP(&o.sizes, "sizes", "s", sizes, "message sizes: a list or a doubling range")
	f.StringVarP(&o.out, "out", "o", ".", "directory for the plots (PNG and SVG)")
	f.Int64Var(&o.elem, "elem-size", 4, "bytes per element")
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

// series is one line of a plot.
type series struct {
	name   string
	x, y   []float64
	dashed bool
}

// save writes a log-x line plot as PNG and SVG in dir and returns the paths.
// legendDown moves the legend down from the top-left corner, to clear
// lines that run along the top.
func save(dir, name, title, xLabel, yLabel string, logY bool, legendDown vg.Length, lines []series) ([]string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.YOffs = -legendDown
	p.Legend.XOffs = vg.Points(10)
	for i, s := range lines {
		pts := make(plotter.XYs, len(s.x))
		for j := range s.x {
			pts[j].X, pts[j].Y = s.x[j], s.y[j]
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c := plotColors[i%len(plotColors)]
		l.Color, sc.Color = c, c
		l.Width = vg.Points(1.5)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
	}
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, name+"."+ext)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
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
