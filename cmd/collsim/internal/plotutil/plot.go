// Package plotutil draws collsim's line plots (studies, validation) with
// gonum/plot, as PNG and SVG files side by side.
package plotutil

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/collsim/collsim/configs"
)

// colors tell the lines apart (a colour-blind-safe palette, Okabe and
// Ito's), and past them, the points' shapes: the seventh line is the
// first's colour with squares, and so on.
var colors = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{230, 159, 0, 255},
	color.RGBA{0, 0, 0, 255},
}

var shapes = []draw.GlyphDrawer{draw.RingGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.CircleGlyph{}}

// Series is one line of a plot.
type Series struct {
	Name   string // "" keeps the series out of the legend
	X, Y   []float64
	Dashed bool
	Dotted bool // a second measurement beside a solid one
	// Level draws the line without point markers: a reference level,
	// not measurements at its ends.
	Level bool
	// Pair draws the line in the colour of the one before it: a model
	// beside its measurement.
	Pair bool
	// Color, when positive, is the line's colour in the palette (1 the
	// first), for lines that share a meaning across groups (one routing,
	// solid under one placement and dashed under another); 0 takes the
	// next colour.
	Color int
	// YLow and YHigh, when set, draw an error bar at each point (the
	// spread of the values averaged into Y).
	YLow, YHigh []float64
}

// Plot describes a line plot with a logarithmic x axis.
type Plot struct {
	Title, XLabel, YLabel string
	LogY                  bool
	// XBytes labels the x axis in bytes at powers of two ("64KiB").
	XBytes bool
	// LegendDown is no longer used: the legend stands beside the data,
	// never over it.
	LegendDown vg.Length
	Lines      []Series
}

// Save writes p as dir/name.png and dir/name.svg and returns the paths.
func (p *Plot) Save(dir, name string) ([]string, error) {
	f := Figure{Panels: []Panel{{Title: p.Title, XLabel: p.XLabel, YLabel: p.YLabel, LogX: true, LogY: p.LogY, XBytes: p.XBytes, Lines: p.Lines}}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, name+"."+ext)
		if err := f.Save(path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Figure is one or more panels (facets) side by side, in rows of Columns,
// with one legend to their right: a series of one name has one colour in
// every panel.
type Figure struct {
	Panels  []Panel
	Columns int // panels per row; 0: up to 3
}

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	XBytes                bool // x in bytes: ticks at powers of two, labelled 64KiB
	Lines                 []Series
}

// Save draws the figure into path, a .png or .svg file.
func (f *Figure) Save(path string) error {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("%s: draw into a .png or .svg file", path)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Render(out, format); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Render draws the figure to w as "png" or "svg".
func (f *Figure) Render(w io.Writer, format string) error {
	cols := f.Columns
	if cols <= 0 {
		cols = min(3, len(f.Panels))
	}
	rows := (len(f.Panels) + cols - 1) / cols
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	colorOf := map[string]int{}
	next := 0 // the next colour of the palette
	var plots [][]*plot.Plot
	for i, p := range f.Panels {
		if i%cols == 0 {
			plots = append(plots, make([]*plot.Plot, cols))
		}
		pl, err := p.plot(colorOf, &next, &legend)
		if err != nil {
			return err
		}
		plots[i/cols][i%cols] = pl
	}
	// The legend's width: its longest name, the thumbnail and padding.
	var legendW vg.Length
	for name := range colorOf {
		legendW = max(legendW, legend.TextStyle.Width(name))
	}
	if len(colorOf) == 0 {
		legendW = 0
	}
	if legendW > 0 {
		legendW += legend.ThumbnailWidth + 3*legend.Padding + vg.Points(12)
	}
	width := vg.Length(cols)*5*vg.Inch + legendW
	h := vg.Length(rows) * 3.6 * vg.Inch
	if len(f.Panels) == 1 {
		width, h = 7*vg.Inch+legendW, 4.5*vg.Inch
	}
	// Tall enough for the whole legend (42 lines of a validation plot
	// ran off the bottom), with the 30 points it keeps clear below.
	if legendW > 0 {
		r := legend.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width, Y: h}}})
		h = max(h, r.Max.Y-r.Min.Y+vg.Points(40))
	}
	c, dc, err := canvas(format, width, h)
	if err != nil {
		return err
	}
	plotsArea := draw.Crop(dc, 0, -legendW, 0, 0)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	canvases := plot.Align(plots, tiles, plotsArea)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	if legendW > 0 {
		area := draw.Crop(dc, dc.Max.X-dc.Min.X-legendW, 0, 0, -vg.Points(30))
		legend.Draw(area)
	}
	_, err = c.WriteTo(w)
	return err
}

// plot builds one panel; series names new to the figure get the next
// colour and a legend entry.
func (p *Panel) plot(colorOf map[string]int, next *int, legend *plot.Legend) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	}
	switch {
	case p.XBytes:
		pl.X.Tick.Marker = byteTicks{}
	case p.LogX && powersOfTwo(p.Lines):
		pl.X.Tick.Marker = rankTicks{}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	} else {
		pl.Y.Tick.Marker = linearTicks{}
	}
	c := -1
	for _, s := range p.Lines {
		// A log axis has no place for zero or negative values (a 0-byte
		// call, a 0 s barrier on one rank): such points are left out.
		var pts plotter.XYs
		var errs plotter.YErrors
		for j := range s.X {
			if (!p.LogX || s.X[j] > 0) && (!p.LogY || s.Y[j] > 0) && !math.IsNaN(s.Y[j]) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
				if s.YLow != nil {
					errs = append(errs, struct{ Low, High float64 }{s.Y[j] - s.YLow[j], s.YHigh[j] - s.Y[j]})
				}
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
		case s.Pair && c >= 0:
		case s.Name != "" && colorOf[s.Name] > 0:
			c = colorOf[s.Name] - 1
		default:
			c = *next
			*next++
		}
		l.Color, sc.Color = colors[c%len(colors)], colors[c%len(colors)]
		sc.Shape = shapes[c/len(colors)%len(shapes)]
		l.Width = vg.Points(1.5)
		switch {
		case s.Dashed:
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		case s.Dotted:
			l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
		}
		if s.Level {
			pl.Add(l)
		} else {
			pl.Add(l, sc)
		}
		if errs != nil {
			bars := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: l.LineStyle, CapWidth: vg.Points(4)}
			bars.LineStyle.Dashes = nil
			pl.Add(bars)
		}
		if s.Name != "" && colorOf[s.Name] == 0 {
			colorOf[s.Name] = c + 1
			if s.Level {
				legend.Add(s.Name, l)
			} else {
				legend.Add(s.Name, l, sc)
			}
		}
	}
	// A log axis of a panel with nothing on it (every point left out)
	// keeps gonum's default range, -1..1, and one of a single value gonum
	// widens by 1 each way, below 0 for values under 1: neither can be
	// drawn on a log scale. Give the first a decade, the second a factor
	// of two each way.
	for _, a := range []struct {
		log bool
		ax  *plot.Axis
	}{{p.LogX, &pl.X}, {p.LogY, &pl.Y}} {
		switch {
		case !a.log && a.ax.Min == a.ax.Max && a.ax.Min != 0:
			// A linear axis of one value v gonum widens to v-1..v+1: 285.6
			// us of a sweep whose every row took that was drawn at "0.0"
			// on a -0.8..0.8 s axis (a new user's trial). From 0 to 2v
			// puts it in the middle, with 0 in sight.
			v := a.ax.Min
			a.ax.Min, a.ax.Max = min(0, 2*v), max(0, 2*v)
		case !a.log:
		case a.ax.Min <= 0 || a.ax.Min > a.ax.Max: // nothing drawn: Min is +Inf
			a.ax.Min, a.ax.Max = 1, 10
		case a.ax.Min == a.ax.Max:
			a.ax.Min, a.ax.Max = a.ax.Min/2, a.ax.Max*2
		}
	}
	// Values from -1e308 to 1e308 span more than a float64 holds: gonum's
	// ticks then never ended (a hang at full CPU; a new user's trial).
	for _, a := range []struct {
		name string
		ax   *plot.Axis
	}{{"x", &pl.X}, {"y", &pl.Y}} {
		if a.ax.Min <= a.ax.Max && math.IsInf(a.ax.Max-a.ax.Min, 0) {
			return nil, fmt.Errorf("the %s values run from %g to %g, a span wider than a float64 holds: plot a column of smaller values", a.name, a.ax.Min, a.ax.Max)
		}
	}
	return pl, nil
}

// powersOfTwo reports whether every x of the lines is a power of two, 1
// included (rank counts), for ticks at them.
func powersOfTwo(lines []Series) bool {
	n := 0
	for _, l := range lines {
		for _, x := range l.X {
			if x < 1 || x != math.Exp2(math.Round(math.Log2(x))) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// byteTicks marks powers of two and labels them in bytes (64KiB).
type byteTicks struct{}

// Ticks implements plot.Ticker.
func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	return pow2Ticks(lo, hi, func(v float64) string { return configs.FormatBytes(int64(v)) })
}

// rankTicks marks powers of two and labels them as numbers: an axis of
// rank counts 64, 256, 1024 read 100, 200, 500, 1000 on powers of ten,
// with no label at its first point.
type rankTicks struct{}

// Ticks implements plot.Ticker.
func (rankTicks) Ticks(lo, hi float64) []plot.Tick {
	return pow2Ticks(lo, hi, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
}

// maxTickLabels bounds the labels of a powers-of-two axis: a panel of a
// faceted figure is about 4 inches wide, and "128KiB512KiB2MiB" ran
// together at 13.
const maxTickLabels = 7

// pow2Ticks marks every power of two from lo to hi and labels those whose
// exponent is a multiple of the smallest step of 1, 2, 5 or 10 that keeps
// the labels to maxTickLabels (10: every KiB, MiB, GiB).
func pow2Ticks(lo, hi float64, label func(float64) string) []plot.Tick {
	var ticks []plot.Tick
	first := math.Ceil(math.Log2(max(lo, 1)))
	last := math.Floor(math.Log2(hi))
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10} {
		step = s
		if math.Floor(last/s)-math.Ceil(first/s)+1 <= maxTickLabels {
			break
		}
	}
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Exp2(e)}
		if math.Mod(e, step) == 0 {
			t.Label = label(t.Value)
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
	if lo > 0 && len(ticks) > 0 && ticks[0].Value >= lo*(1-1e-9) && ticks[0].Value <= hi*(1+1e-9) {
		// gonum's ticks start at the first power of ten inside the axis:
		// below it, down to lo, the multiples of the decade below are
		// marked too, 2 and 5 times it labelled (validate --real's times
		// from 0.2 ms sat under a first label of 0.001: a new user's
		// trial).
		var below []plot.Tick
		d := math.Pow(10, math.Floor(math.Log10(lo)+1e-9))
		for m := 2.0; m <= 9; m++ {
			if v := m * d; v >= lo*(1-1e-9) && v < ticks[0].Value*(1-1e-9) {
				t := plot.Tick{Value: v}
				if m == 2 || m == 5 {
					t.Label = tickLabel(v)
				}
				below = append(below, t)
			}
		}
		ticks = append(below, ticks...)
	}
	narrow := lo > 0 && hi > 0 && math.Log10(hi/lo) < 2
	labelled := 0 // inside the axis
	for i := range ticks {
		v := ticks[i].Value
		m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		if ticks[i].Label != "" || narrow && (math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6) {
			ticks[i].Label = tickLabel(v)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				labelled++
			}
		}
	}
	if labelled >= 2 || lo <= 0 {
		return ticks
	}
	// An axis inside one decade, between powers of ten (1.07 ms to
	// 4.55 ms): gonum gives no tick on it at all. Mark and label every
	// whole multiple of the decade inside it.
	ticks = ticks[:0]
	for d := math.Floor(math.Log10(lo)); d <= math.Floor(math.Log10(hi)); d++ {
		for m := 1.0; m <= 9; m++ {
			if v := m * math.Pow(10, d); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v)})
			}
		}
	}
	keep := func(v float64) bool {
		m := math.Round(v / math.Pow(10, math.Floor(math.Log10(v)+1e-9)))
		return m == 1 || m == 2 || m == 3 || m == 5
	}
	if kept := slices.DeleteFunc(slices.Clone(ticks), func(t plot.Tick) bool { return !keep(t.Value) }); len(ticks) > 5 && len(kept) >= 2 {
		// Nine labels crowd a short panel: 1, 2, 3 and 5 times the
		// decade keep their labels (where two or more do), the others
		// are marks.
		for i := range ticks {
			if !keep(ticks[i].Value) {
				ticks[i].Label = ""
			}
		}
	}
	return ticks
}

// linearTicks is gonum's DefaultTicks with labels written to as many
// decimals as the labelled ticks need to read as their values: gonum's
// can write a tick at 1.05 as "1" beside one at 0.99. An axis of values
// of 10 million or more, or under a thousandth, is labelled in scientific
// notation with as few digits as read as the values: fixed decimals wrote
// "0.000006025" for a time axis and 300 digits for 1.7e308 (a new user's
// trial), and the shortest exact form "1.0002000000000001e-09".
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	tol := 1e-9 * math.Max(math.Max(math.Abs(lo), math.Abs(hi)), hi-lo)
	reads := func(format func(float64) string) bool {
		for _, t := range ticks {
			if t.Label == "" {
				continue
			}
			if v, err := strconv.ParseFloat(format(t.Value), 64); err != nil || math.Abs(v-t.Value) > tol {
				return false
			}
		}
		return true
	}
	label := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	mag := math.Max(math.Abs(lo), math.Abs(hi))
	found := false
	if mag < 1e7 && (mag >= 1e-3 || mag == 0) {
		for decimals := 0; decimals <= 6 && !found; decimals++ {
			f := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
			if reads(f) {
				label, found = f, true
			}
		}
	}
	for digits := 1; digits <= 17 && !found; digits++ {
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', digits, 64) }
		if reads(f) {
			label, found = f, true
		}
	}
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = label(ticks[i].Value)
		}
	}
	return ticks
}

// tickLabel writes a tick's value to 3 digits, whole numbers below ten
// million in full ("1000", not gonum's "1e+03").
func tickLabel(v float64) string {
	if r := math.Round(v); v >= 1 && v < 1e7 && math.Abs(v-r) < 1e-9*v {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// canvas is a picture of w x h in format ("png" or "svg") with a white
// background (PNG is transparent otherwise), and its drawing area.
func canvas(format string, w, h vg.Length) (vg.CanvasWriterTo, draw.Canvas, error) {
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(w, h)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))}
	default:
		return nil, draw.Canvas{}, fmt.Errorf("format %q: png or svg", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	return c, dc, nil
}
