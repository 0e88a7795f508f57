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
