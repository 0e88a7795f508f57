package cmdutil

import "testing"

// TestSI: a count without a unit has no space after it ("5  parameters"
// had two; a new user's trial), one with a unit or a prefix keeps one.
func TestSI(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{{5, "", "5"}, {25.6e6, "", "25.6 M"}, {2e12, "FLOP", "2 TFLOP"}, {3, "B/s", "3 B/s"}} {
		if got := SI(tc.v, tc.unit); got != tc.want {
			t.Errorf("SI(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
