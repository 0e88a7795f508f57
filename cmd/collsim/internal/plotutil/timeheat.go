package plotutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TimeHeat is a value of several rows (links) over time: Values[row][span]
// over equal spans from 0 to End seconds, coloured from 0 to Max, with a
// colour bar beside it.
type TimeHeat struct {
	Title, ValueLabel string
	Rows              []string
	End               float64
	Max               float64 // the top of the colour scale; 0: the largest value
	Values            [][]float64
}

type timeGrid struct{ h *TimeHeat }

func (g timeGrid) Dims() (c, r int) { return len(g.h.Values[0]), len(g.h.Rows) }
func (g timeGrid) X(c int) float64 {
	return (float64(c) + 0.5) * g.h.End / float64(len(g.h.Values[0]))
}
func (g timeGrid) Y(r int) float64    { return float64(r) }
func (g timeGrid) Z(c, r int) float64 { return g.h.Values[len(g.h.Rows)-1-r][c] } // the first row on top

// Save draws the heat map into path (.png or .svg).
func (h *TimeHeat) Save(path string) error {
	if len(h.Rows) == 0 || len(h.Values[0]) == 0 {
		return fmt.Errorf("%s: nothing to draw", path)
	}
	top := h.Max
	for _, row := range h.Values {
		for _, v := range row {
			if h.Max == 0 {
				top = max(top, v)
			}
		}
	}
	top = max(top, 1e-12)
	pal := moreland.Kindlmann().Palette(64) // sequential: dark idle, light busy
	hm := plotter.NewHeatMap(timeGrid{h}, pal)
	hm.Min, hm.Max = 0, top
	pl := plot.New()
	pl.Title.Text = h.Title
	pl.X.Label.Text, pl.Y.Label.Text = "simulated time", ""
	pl.X.Tick.Marker = secondsTicks{}
	pl.Add(hm)
	var yt []plot.Tick
	for r := range h.Rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: h.Rows[len(h.Rows)-1-r]})
	}
	pl.Y.Tick.Marker = plot.ConstantTicks(yt)
	bar := plot.New()
	bar.HideX()
	bar.Y.Label.Text = h.ValueLabel
	cb := &plotter.ColorBar{ColorMap: moreland.Kindlmann(), Vertical: true}
	cb.ColorMap.SetMin(0)
	cb.ColorMap.SetMax(top)
	bar.Add(cb)

	w, ht := 9*vg.Inch, vg.Length(max(3.5, 1.2+0.28*float64(len(h.Rows))))*vg.Inch
	c, dc, err := canvas(strings.TrimPrefix(filepath.Ext(path), "."), w, ht)
	if err != nil {
		return fmt.Errorf("%s: draw into a .png or .svg file", path)
	}
	barW := vg.Inch
	pl.Draw(draw.Crop(dc, 0, -barW-vg.Points(10), 0, 0))
	bar.Draw(draw.Crop(dc, w-barW, 0, vg.Points(30), -vg.Points(20)))
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// secondsTicks are gonum's ticks on a time axis in seconds, labelled in
// the unit that keeps them short (40µs, not 4e-05).
type secondsTicks struct{}

// Ticks implements plot.Ticker.
func (secondsTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = cmdutil.Seconds(ticks[i].Value)
		}
	}
	return ticks
}
