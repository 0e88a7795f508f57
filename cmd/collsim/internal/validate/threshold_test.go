package validate

import "testing"

// TestThreshold: --max-error as the failure message writes it (0.001 was
// "0%", 0.15 "15.000000000000002%").
func TestThreshold(t *testing.T) {
	for in, want := range map[float64]string{0.001: "0.1%", 0.15: "15%", 1e-9: "1e-07%", 0: "0%", 0.5: "50%"} {
		if got := threshold(in); got != want {
			t.Errorf("threshold(%g) = %q, want %q", in, got, want)
		}
	}
}
