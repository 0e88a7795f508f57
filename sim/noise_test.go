package sim

import (
	"slices"
	"strings"
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

// TestNoiseOverLongIntervals: a CPU interval spanning many periods is
// stretched by every detour in it, counted period by period, without
// walking them (a 2 ps period hung a 1 s calc, 5e11 detours walked one by
// one: an audit). By hand: 1 s at a detour of 1 ps every 2 ps, from a
// detour's end, takes in 5e11 detours, 0.5 s; and a trace of two detours
// (10 and 20 ps) every 100 ps, over 1e6 ps, 1e4 periods of 30 ps.
func TestNoiseOverLongIntervals(t *testing.T) {
	n, err := PeriodicNoise(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	n.offset = []Time{0}
	if got := n.extra(0, 1, Second); got != Second/2 {
		t.Errorf("1 s under 1 ps of every 2: stretched by %v, want 0.5 s", got)
	}
	tr, err := ParseNoise(strings.NewReader("0\t0.01\n0.05\t0.02\n0.1\t0\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	tr.offset = []Time{0}
	if got := tr.extra(0, 10, 1000000); got != 10000*30 {
		t.Errorf("1e6 ps from 10 ps: stretched by %v ps, want %d", int64(got), 10000*30)
	}
}

// TestPoissonNoiseTooSparse: a rate whose 4096 detours pass the clock's
// limit is refused (its sums wrapped: 1e-9 a second crashed a run with
// exit 70, 1e-5 gave a period of 8.4e6 s for one of 4.1e8: an audit).
func TestPoissonNoiseTooSparse(t *testing.T) {
	for _, rate := range []float64{1e-9, 1e-5, 1e-300} {
		if _, err := PoissonNoise(rate, Nanosecond, 1); err == nil || !strings.Contains(err.Error(), "past the clock's limit") {
			t.Errorf("rate %g: %v", rate, err)
		}
	}
	n, err := PoissonNoise(1e-2, Nanosecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 4096 exponential waits of mean 100 s: about 4.1e5 s, far below the
	// limit, and positive.
	if p := n.period.Seconds(); p < 3e5 || p > 5e5 {
		t.Errorf("rate 1e-2: period %g s, want about 4.1e5", p)
	}
}
