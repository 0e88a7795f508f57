package study

import (
	"reflect"
	"testing"

	"github.com/collsim/collsim/cmd/collsim/internal/plotutil"
)

// TestWithoutNoiseLines: rate 0 cannot stand on the plot's log axis, so
// its ratio becomes a dotted level line in the line's colour from the
// least rate to the greatest, after the line's own points at the rates
// above 0.
func TestWithoutNoiseLines(t *testing.T) {
	line := func(name string, x, y []float64) plotutil.Series {
		lo, hi := make([]float64, len(y)), make([]float64, len(y))
		for i, v := range y {
			lo[i], hi[i] = v-0.1, v+0.1
		}
		return plotutil.Series{Name: name, X: x, Y: y, YLow: lo, YHigh: hi}
	}
	got := withoutNoiseLines([]plotutil.Series{
		line("reduce", []float64{0, 100, 1000}, []float64{1.5, 2, 3}),
		line("allreduce", []float64{100, 1000}, []float64{1.25, 1.75}), // no rate 0
	})
	want := []plotutil.Series{
		{Name: "reduce", X: []float64{100, 1000}, Y: []float64{2, 3}, YLow: []float64{1.9, 2.9}, YHigh: []float64{2.1, 3.1}},
		{Name: "reduce, no noise", X: []float64{100, 1000}, Y: []float64{1.5, 1.5}, Dotted: true, Pair: true, Level: true},
		{Name: "allreduce", X: []float64{100, 1000}, Y: []float64{1.25, 1.75}, YLow: []float64{1.15, 1.65}, YHigh: []float64{1.35, 1.85}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	one := withoutNoiseLines([]plotutil.Series{line("reduce", []float64{0, 1000}, []float64{1.5, 2})})
	if len(one) != 2 || !reflect.DeepEqual(one[1].X, []float64{500, 2000}) {
		t.Errorf("one rate above 0: got %+v, want the level from 500 to 2000", one)
	}
	if got := withoutNoiseLines(nil); got != nil {
		t.Errorf("no lines: got %+v, want nothing to plot", got)
	}
	if got := withoutNoiseLines([]plotutil.Series{line("reduce", []float64{0}, []float64{1})}); got != nil {
		t.Errorf("rate 0 alone: got %+v, want nothing to plot", got)
	}
}
