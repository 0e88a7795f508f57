package sim

import (
	"testing"
)

// TestPeriodicNoise: a detour of 25 µs every 1 ms, phase 0. An interval
// that starts inside a detour waits out its rest; one that spans a detour's
// start takes it whole; one between detours is untouched.
func TestPeriodicNoise(t *testing.T) {
	n, err := PeriodicNoise(Millisecond, 25*Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	n.offset = []Time{0}
	for _, tc := range []struct{ start, d, want Time }{
		{10 * Microsecond, 5 * Microsecond, 15 * Microsecond},         // inside the first detour: its rest
		{500 * Microsecond, 100 * Microsecond, 0},                     // between detours
		{990 * Microsecond, 20 * Microsecond, 25 * Microsecond},       // spans the next detour's start
		{990 * Microsecond, 2010 * Microsecond, 3 * 25 * Microsecond}, // spans three
	} {
		if got := n.extra(0, tc.start, tc.d); got != tc.want {
			t.Errorf("[%v, +%v): stretched by %v, want %v", tc.start, tc.d, got, tc.want)
		}
	}
	for _, bad := range [][2]Time{{Millisecond, 0}, {Millisecond, Millisecond}, {0, 0}} {
		if _, err := PeriodicNoise(bad[0], bad[1]); err == nil {
			t.Errorf("PeriodicNoise(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// TestPoissonNoise: the same seed gives the same trace; detours never
// overlap; their rate is about 1/(1/rate + duration).
func TestPoissonNoise(t *testing.T) {
	a, err := PoissonNoise(1000, 50*Microsecond, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PoissonNoise(1000, 50*Microsecond, 7)
	c, _ := PoissonNoise(1000, 50*Microsecond, 8)
	if a.period != b.period || a.starts[100] != b.starts[100] {
		t.Error("the same seed gave different noise")
	}
	if a.starts[100] == c.starts[100] {
		t.Error("different seeds gave the same noise")
	}
	for i := 1; i < len(a.starts); i++ {
		if a.starts[i] < a.starts[i-1]+a.durs[i-1] {
			t.Fatalf("detour %d overlaps the one before", i)
		}
	}
	// 4096 detours: the measured rate is within a few percent of 1/(1ms +
	// 50µs) = 952 a second (the sum of 4096 exponentials has a relative
	// spread of 1/64).
	rate := float64(len(a.starts)) / a.period.Seconds()
	if rate < 952*0.9 || rate > 952*1.1 {
		t.Errorf("rate %g detours/s, want about 952", rate)
	}
	if _, err := PoissonNoise(0, Microsecond, 1); err == nil {
		t.Error("a zero rate accepted")
	}
}
