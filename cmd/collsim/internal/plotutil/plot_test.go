package plotutil

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// On a log axis spanning less than two decades, 2 and 5 times a power of
// ten are labelled beside the powers themselves; on a wider one only the
// powers are. gonum's ticks run over the whole decades inside the axis
// (1e-3 to 1e-2 for 2e-4..8e-3).
func TestLogTicksLabels(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	// Below the first power of ten inside the axis, 2 and 5 times the
	// decade below are labelled too: 2e-4 and 5e-4 (the axis read from
	// 0.001 up, its lowest values unlabelled: a new user's trial).
	if got, want := labels(2e-4, 8e-3), []string{"0.0002", "0.0005", "0.001", "0.002", "0.005", "0.01"}; !slices.Equal(got, want) {
		t.Errorf("one and a half decades: labels %q, want %q", got, want)
	}
	if got, want := labels(1e-6, 1e-2), []string{"1e-06", "1e-05", "0.0001", "0.001", "0.01"}; !slices.Equal(got, want) {
		t.Errorf("four decades: labels %q, want %q", got, want)
	}
	if got, want := labels(3e-7, 1e-2), []string{"5e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01"}; !slices.Equal(got, want) {
		t.Errorf("four and a half decades: labels %q, want %q", got, want)
	}
}

// On an axis inside one decade and between its powers of ten, gonum puts
// no tick at all: every whole multiple inside it is labelled instead.
func TestLogTicksInsideADecade(t *testing.T) {
	var got []string
	for _, tk := range (logTicks{}).Ticks(0.00107, 0.00455) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0.002", "0.003", "0.004"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// Many multiples inside one decade keep labels at 1, 2, 3 and 5 times it
// (0.0002, 0.0003, ... 0.0009 crowded a short panel), where two or more
// remain: thinned to one label, 0.0035..0.0099 would say too little.
func TestLogTicksInsideADecadeThinOut(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.0011, 0.0095, []string{"0.002", "0.003", "0.005"}},
		{0.0035, 0.0099, []string{"0.004", "0.005", "0.006", "0.007", "0.008", "0.009"}},
	} {
		if got := labelsOf((logTicks{}).Ticks(c.lo, c.hi)); !slices.Equal(got, c.want) {
			t.Errorf("%g..%g: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// labelsOf is the labels of the ticks that have one.
func labelsOf(ticks []plot.Tick) []string {
	var l []string
	for _, tk := range ticks {
		if tk.Label != "" {
			l = append(l, tk.Label)
		}
	}
	return l
}

// Powers-of-two axes label at most maxTickLabels ticks, at exponents a
// multiple of a step of 1, 2, 5 or 10: 8 B to 256 MiB (2^3..2^28) by 5
// (32B, 1KiB, 32KiB, 1MiB, 32MiB; by 2 it was 13 labels, which ran
// together); rank counts 8..64 every one, as numbers; and an axis of rank
// counts gets them only when every x is a power of two.
func TestPowerOfTwoTicks(t *testing.T) {
	labels := labelsOf
	if got, want := labels(byteTicks{}.Ticks(8, 256<<20)), []string{"32B", "1KiB", "32KiB", "1MiB", "32MiB"}; !slices.Equal(got, want) {
		t.Errorf("8B..256MiB: %q, want %q", got, want)
	}
	if got, want := labels(rankTicks{}.Ticks(8, 64)), []string{"8", "16", "32", "64"}; !slices.Equal(got, want) {
		t.Errorf("ranks 8..64: %q, want %q", got, want)
	}
	if !powersOfTwo([]Series{{X: []float64{64, 256, 1024}}}) || !powersOfTwo([]Series{{X: []float64{1, 2, 4}}}) || powersOfTwo([]Series{{X: []float64{64, 100}}}) || powersOfTwo(nil) {
		t.Error("powersOfTwo")
	}
	if got, want := labels(rankTicks{}.Ticks(1, 8)), []string{"1", "2", "4", "8"}; !slices.Equal(got, want) {
		t.Errorf("ranks 1..8: %q, want %q", got, want)
	}
}

// A linear axis's labels read as their ticks' values: gonum's labelled a
// tick at 1.05 "1" on an axis from 0.92 to 1.06 (ticks 0.06 apart). They
// are short: at most 12 characters (a time axis read "0.000006025", one
// to 1.7e308 300 digits, one near 1e-9 "1.0002000000000001e-09"; a new
// user's trial).
func TestLinearTickLabelsReadAsTheirValues(t *testing.T) {
	for _, r := range [][2]float64{{0.92, 1.06}, {0, 1}, {0.85, 1.36}, {-3, 17}, {1e-6, 3e-6}, {123, 129}, {1e-13, 3e-13}, {-1e-14, 1e-14},
		{6.02e-6, 6.18e-6}, {1.0001e-9, 1.0003e-9}, {1, 1.7e308}, {1.2e12, 1.4e12}} {
		var labels []string
		for _, tk := range (linearTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if len(tk.Label) > 12 {
				t.Errorf("axis %v: tick %g labelled %q, %d characters", r, tk.Value, tk.Label, len(tk.Label))
			}
			// Read back to within a millionth of the ticks' spacing, which
			// is at least a tenth of the axis for gonum's few labels.
			v, err := strconv.ParseFloat(tk.Label, 64)
			if err != nil || math.Abs(v-tk.Value) > 1e-7*(r[1]-r[0]) {
				t.Errorf("axis %v: tick %g labelled %q", r, tk.Value, tk.Label)
			}
		}
		if len(labels) < 2 || len(slices.Compact(slices.Clone(labels))) != len(labels) {
			t.Errorf("axis %v: labels %q, want two or more, all different", r, labels)
		}
		// No longer than they need: 0.93 and 0.99, not 0.930 and 0.990.
		for _, l := range labels {
			if strings.Contains(l, ".") && strings.HasSuffix(l, "0") && !strings.ContainsAny(l, "e") {
				shorter := true
				for _, m := range labels {
					shorter = shorter && (!strings.Contains(m, ".") || strings.HasSuffix(m, "0"))
				}
				if shorter {
					t.Errorf("axis %v: labels %q carry a decimal none needs", r, labels)
				}
				break
			}
		}
	}
	// Plots draw their linear y axes with these ticks.
	p := Panel{Lines: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{0.92, 1.06}}}}
	legend := plot.NewLegend()
	pl, err := p.plot(map[string]int{}, new(int), &legend)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pl.Y.Tick.Marker.(linearTicks); !ok {
		t.Errorf("a linear y axis ticks with %T", pl.Y.Tick.Marker)
	}
}

// TestLegendFitsTheFigure: a figure of 42 named lines (a validation plot
// of 14 algorithms on two networks and their closed forms) draws every
// legend entry inside the canvas: the SVG's texts, drawn flipped
// (scale(1, -1)), sit at y from 0 down to minus the height. (The figure's
// height was fixed, and the last 13 entries ran off its bottom.)
func TestLegendFitsTheFigure(t *testing.T) {
	var lines []Series
	for i := range 42 {
		lines = append(lines, Series{Name: fmt.Sprintf("allreduce/algorithm_%02d, closed form", i), X: []float64{1, 2, 4}, Y: []float64{1, 2, float64(3 + i)}})
	}
	f := Figure{Panels: []Panel{{Title: "t", XLabel: "x", YLabel: "y", LogX: true, Lines: lines}}}
	var b strings.Builder
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	m := regexp.MustCompile(`height="([0-9.]+)pt"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no height in the SVG")
	}
	height, _ := strconv.ParseFloat(m[1], 64)
	texts := regexp.MustCompile(`<text x="[-0-9.]+" y="([-0-9.]+)" transform="scale\(1, -1\)"[^>]*>(allreduce/algorithm_\d+)`).FindAllStringSubmatch(svg, -1)
	if len(texts) != 42 {
		t.Fatalf("%d legend entries found in the SVG, want 42", len(texts))
	}
	for _, tx := range texts {
		y, _ := strconv.ParseFloat(tx[1], 64)
		if -y < 0 || -y > height {
			t.Errorf("%s at %g pt, outside the figure's 0..%g pt", tx[2], -y, height)
		}
	}
}

// A linear axis of one value v runs from 0 to 2v (or 2v to 0): gonum's
// v-1..v+1 drew 285.6 us at "0.0" on a -0.8..0.8 axis (a new user's
// trial). A log axis of one value keeps its factor of two each way.
func TestAxisOfOneValue(t *testing.T) {
	for _, tc := range []struct {
		y      float64
		log    bool
		lo, hi float64
	}{{285.6e-6, false, 0, 571.2e-6}, {-3, false, -6, 0}, {285.6e-6, true, 142.8e-6, 571.2e-6}} {
		p := Panel{Title: "t", XLabel: "x", YLabel: "y", LogY: tc.log, Lines: []Series{{Name: "a", X: []float64{1, 2, 4}, Y: []float64{tc.y, tc.y, tc.y}}}}
		n := 0
		pl, err := p.plot(map[string]int{}, &n, &plot.Legend{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(pl.Y.Min-tc.lo) > 1e-12 || math.Abs(pl.Y.Max-tc.hi) > 1e-12 {
			t.Errorf("y %g (log %v): axis %g..%g, want %g..%g", tc.y, tc.log, pl.Y.Min, pl.Y.Max, tc.lo, tc.hi)
		}
	}
}

// TestAxisTooWide: values from -1e308 to 1e308 span more than a float64
// holds; the plot is refused with the span (gonum's ticks never ended: a
// hang at full CPU, found by a new user).
func TestAxisTooWide(t *testing.T) {
	p := Panel{Lines: []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{1, 1e308, -1e308}}}}
	if _, err := p.plot(map[string]int{}, new(int), &plot.Legend{}); err == nil || !strings.Contains(err.Error(), "the y values run from -1e+308 to 1e+308, a span wider than a float64 holds") {
		t.Errorf("%v", err)
	}
	q := Panel{Lines: []Series{{Name: "a", X: []float64{-1e308, 1e308}, Y: []float64{1, 2}}}}
	if _, err := q.plot(map[string]int{}, new(int), &plot.Legend{}); err == nil || !strings.Contains(err.Error(), "the x values run from") {
		t.Errorf("%v", err)
	}
}

// TestLinearTickLabelsNotation: an axis of values under a thousandth, or
// of 10 million or more, is labelled in scientific notation, others in
// plain decimals (a time axis read "0.000006025"; a new user's trial).
func TestLinearTickLabelsNotation(t *testing.T) {
	for _, tc := range []struct {
		lo, hi     float64
		scientific bool
	}{{6.02e-6, 6.18e-6, true}, {1.2e12, 1.4e12, true}, {1e7, 3e7, true}, {2e-3, 8e-3, false}, {123, 129, false}, {0, 9e6, false}} {
		for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label == "" || tk.Value == 0 {
				continue
			}
			if strings.Contains(tk.Label, "e") != tc.scientific {
				t.Errorf("axis %g..%g: tick %g labelled %q; want scientific notation: %v", tc.lo, tc.hi, tk.Value, tk.Label, tc.scientific)
			}
		}
	}
}
