package plotutil

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim/configs"
)

// Heat is a heat map over a grid of sizes (x, in bytes) and rank counts
// (y), each cell printed with its value; a cell added to twice keeps the
// larger value.
type Heat struct {
	Title, XLabel, YLabel string
	// LogColor colours cells by the logarithm of their values, white at 1
	// (ratios spanning orders of magnitude); the labels still print the
	// values.
	LogColor bool
	xs, ys   []float64
	cells    map[[2]float64]float64
}

// Add sets the cell at (x, y) to v, or keeps its value if that is larger.
func (h *Heat) Add(x, y, v float64) {
	if h.cells == nil {
		h.cells = map[[2]float64]float64{}
	}
	k := [2]float64{x, y}
	if old, ok := h.cells[k]; ok && old >= v {
		return
	}
	h.cells[k] = v
	if !slices.Contains(h.xs, x) {
		h.xs = append(h.xs, x)
	}
	if !slices.Contains(h.ys, y) {
		h.ys = append(h.ys, y)
	}
}

// grid serves the cells to gonum's heat map: columns and rows are the
// sorted distinct x and y, drawn one unit apart.
type grid struct{ h *Heat }

func (g grid) Dims() (c, r int) { return len(g.h.xs), len(g.h.ys) }
func (g grid) X(c int) float64  { return float64(c) }
func (g grid) Y(r int) float64  { return float64(r) }
func (g grid) Z(c, r int) float64 {
	if v := g.h.value(c, r); g.h.LogColor && v > 0 {
		return math.Log(v)
	}
	return g.h.value(c, r)
}

// value is the cell's value, NaN where nothing was added (drawn empty).
func (h *Heat) value(c, r int) float64 {
	if v, ok := h.cells[[2]float64{h.xs[c], h.ys[r]}]; ok {
		return v
	}
	return math.NaN()
}

// Save writes the heat map as dir/name.png and dir/name.svg.
func (h *Heat) Save(dir, name string) ([]string, error) {
	slices.Sort(h.xs)
	slices.Sort(h.ys)
	pl := plot.New()
	pl.Title.Text = h.Title
	pl.X.Label.Text, pl.Y.Label.Text = h.XLabel, h.YLabel
	pal := moreland.SmoothBlueRed().Palette(64)
	hm := plotter.NewHeatMap(grid{h}, pal)
	hm.NaN = color.White
	if h.LogColor {
		// Centre the palette on 1 (log 0): above it red, below it blue.
		most := 0.0
		for _, v := range h.cells {
			if v > 0 {
				most = max(most, math.Abs(math.Log(v)))
			}
		}
		hm.Min, hm.Max = -max(most, 1e-9), max(most, 1e-9)
	}
	pl.Add(hm)
	var labels plotter.XYLabels
	var xt, yt []plot.Tick
	for c, x := range h.xs {
		xt = append(xt, plot.Tick{Value: float64(c), Label: configs.FormatBytes(int64(x))})
		for r := range h.ys {
			if v := h.value(c, r); !math.IsNaN(v) {
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(r)})
				labels.Labels = append(labels.Labels, fmt.Sprintf("%.2g", v))
			}
		}
	}
	for r, y := range h.ys {
		yt = append(yt, plot.Tick{Value: float64(r), Label: fmt.Sprint(y)})
	}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	if len(labels.Labels) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = -0.5, -0.5
			l.TextStyle[i].Font.Size = vg.Points(9)
		}
		pl.Add(l)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, name+"."+ext)
		if err := pl.Save(vg.Length(max(7, 0.7*float64(len(h.xs))))*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
