package plotutil

import (
	"math"
	"slices"
	"strconv"
	"testing"
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
	if got, want := labels(2e-4, 8e-3), []string{"0.001", "0.002", "0.005", "0.01"}; !slices.Equal(got, want) {
		t.Errorf("one and a half decades: labels %q, want %q", got, want)
	}
	if got, want := labels(1e-6, 1e-2), []string{"1e-06", "1e-05", "0.0001", "0.001", "0.01"}; !slices.Equal(got, want) {
		t.Errorf("four decades: labels %q, want %q", got, want)
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

// A linear axis's labels read as their ticks' values: gonum's labelled a
// tick at 1.05 "1" on an axis from 0.92 to 1.06 (ticks 0.06 apart).
func TestLinearTickLabelsReadAsTheirValues(t *testing.T) {
	for _, r := range [][2]float64{{0.92, 1.06}, {0, 1}, {0.85, 1.36}, {-3, 17}, {1e-6, 3e-6}, {123, 129}} {
		labelled := 0
		for _, tk := range (linearTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			labelled++
			v, err := strconv.ParseFloat(tk.Label, 64)
			if err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(math.Abs(tk.Value), r[1]-r[0]) {
				t.Errorf("axis %v: tick %g labelled %q", r, tk.Value, tk.Label)
			}
		}
		if labelled < 2 {
			t.Errorf("axis %v: %d labels", r, labelled)
		}
	}
}
