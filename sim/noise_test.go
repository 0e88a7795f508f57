package sim

import (
	"slices"
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

// TestStragglers: a straggler's CPU intervals take Factor times as long
// (and detours fall into the longer interval); other ranks are untouched;
// which ranks straggle comes from the seed.
func TestStragglers(t *testing.T) {
	n := &Noise{}
	if err := n.SetStragglers(2, 3); err != nil {
		t.Fatal(err)
	}
	if err := n.start(New(5), 8); err != nil {
		t.Fatal(err)
	}
	slow := 0
	for r := range int32(8) {
		got := n.extra(r, 0, 10*Microsecond)
		switch {
		case n.slow[r] && got == 20*Microsecond:
			slow++
		case !n.slow[r] && got == 0:
		default:
			t.Errorf("rank %d (slow %v): stretched by %v", r, n.slow[r], got)
		}
	}
	if slow != 2 {
		t.Errorf("%d stragglers, want 2", slow)
	}
	m := &Noise{}
	m.SetStragglers(2, 3)
	m.start(New(5), 8)
	if !slices.Equal(m.slow, n.slow) {
		t.Error("the same seed chose other stragglers")
	}
	// With periodic detours too: a 10 µs interval at a straggler becomes
	// 30 µs and takes in the detour that starts within it.
	p, _ := PeriodicNoise(100*Microsecond, 5*Microsecond)
	p.SetStragglers(1, 3)
	p.start(New(1), 1)
	p.offset[0] = 0
	if got := p.extra(0, 80*Microsecond, 10*Microsecond); got != 20*Microsecond+5*Microsecond {
		t.Errorf("straggler with noise: stretched by %v, want 25µs", got)
	}
	for _, bad := range [][2]float64{{-1, 2}, {1, 0.5}} {
		if err := (&Noise{}).SetStragglers(int(bad[0]), bad[1]); err == nil {
			t.Errorf("SetStragglers(%g, %g) accepted", bad[0], bad[1])
		}
	}
	if err := n.start(New(1), 1); err == nil {
		t.Error("2 stragglers on 1 rank accepted")
	}
}
