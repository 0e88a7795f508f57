// Package plotutil draws collsim's line plots (studies, validation) with
// gonum/plot, as PNG and SVG files side by side.
package plotutil

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/collsim/collsim/configs"
)

// colors tell the lines apart (a colour-blind-safe palette).
var colors = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{230, 159, 0, 255},
}

// Series is one line of a plot.
type Series struct {
	Name   string // "" keeps the series out of the legend
	X, Y   []float64
	Dashed bool
	// Pair draws the line in the colour of the one before it: a model
	// beside its measurement.
	Pair bool
	// Color, when positive, is the line's colour in the palette (1 the
	// first), for lines that share a meaning across groups (one routing,
	// solid under one placement and dashed under another); 0 takes the
	// next colour.
	Color int
}

// Plot describes a line plot with a logarithmic x axis.
type Plot struct {
	Title, XLabel, YLabel string
	LogY                  bool
	// XBytes labels the x axis in bytes at powers of two ("64KiB").
	XBytes bool
	// LegendDown moves the legend down from the top-left corner, to clear
	// lines that run along the top.
	LegendDown vg.Length
	Lines      []Series
}

// Save writes p as dir/name.png and dir/name.svg and returns the paths.
func (p *Plot) Save(dir, name string) ([]string, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.X.Scale = plot.LogScale{}
	pl.X.Tick.Marker = plot.LogTicks{Prec: -1}
	if p.XBytes {
		pl.X.Tick.Marker = byteTicks{}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	}
	pl.Legend.Top = true
	pl.Legend.Left = true
	pl.Legend.YOffs = -p.LegendDown
	pl.Legend.XOffs = vg.Points(10)
	c := -1
	for _, s := range p.Lines {
		// A log axis has no place for zero or negative values (a 0-byte
		// call, a 0 s barrier on one rank): such points are left out.
		var pts plotter.XYs
		for j := range s.X {
			if s.X[j] > 0 && (!p.LogY || s.Y[j] > 0) && !math.IsNaN(s.Y[j]) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		switch {
		case s.Color > 0:
			c = s.Color - 1
		case !s.Pair || c < 0:
			c++
		}
		l.Color, sc.Color = colors[c%len(colors)], colors[c%len(colors)]
		l.Width = vg.Points(1.5)
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pl.Add(l, sc)
		if s.Name != "" {
			pl.Legend.Add(s.Name, l, sc)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, name+"."+ext)
		if err := pl.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// byteTicks marks powers of two, labelling every other one (every one when
// the axis spans few), in bytes.
type byteTicks struct{}

// Ticks implements plot.Ticker.
func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	first := math.Ceil(math.Log2(max(lo, 1)))
	last := math.Floor(math.Log2(hi))
	every := 1.0
	if last-first > 8 {
		every = 2
	}
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Exp2(e)}
		if math.Mod(e-first, every) == 0 {
			t.Label = configs.FormatBytes(int64(t.Value))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks is gonum's LogTicks, which labels powers of ten only, with
// 2 and 5 times each power labelled too where the axis spans less than two
// decades (a study whose times span one decade would otherwise show one
// label), and labels written to 3 digits (gonum's can read
// 9.999999999999999e-06).
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	narrow := lo > 0 && hi > 0 && math.Log10(hi/lo) < 2
	for i := range ticks {
		v := ticks[i].Value
		m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		if ticks[i].Label != "" || narrow && (math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6) {
			ticks[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
	}
	return ticks
}
