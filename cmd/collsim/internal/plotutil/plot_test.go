package plotutil

import (
	"slices"
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
