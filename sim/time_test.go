package sim

import (
	"math"
	"testing"
)

func TestFromSeconds(t *testing.T) {
	tests := []struct {
		s    float64
		want Time
	}{
		{0, 0},
		{0.75e-6, 750 * Nanosecond}, // decimal noise must not add a picosecond
		{1.2e-6, 1200 * Nanosecond},
		{1e-13, 1},   // a tenth of a picosecond still costs one
		{1.5e-12, 2}, // rounds up
		{-1, 0},
		{math.NaN(), 0},
		{1e30, MaxTime},
	}
	for _, tc := range tests {
		if got := FromSeconds(tc.s); got != tc.want {
			t.Errorf("FromSeconds(%g) = %d, want %d", tc.s, got, tc.want)
		}
	}
	if FromPicoseconds(8*30) != 240 {
		t.Error("FromPicoseconds(240) is not 240")
	}
}

func TestTimeString(t *testing.T) {
	tests := map[Time]string{0: "0s", 5: "5ps", 1500: "1.5ns", 2 * Microsecond: "2µs", 1234567 * Microsecond: "1.2346s", -3 * Millisecond: "-3ms"}
	for in, want := range tests {
		if got := in.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(in), got, want)
		}
	}
}
