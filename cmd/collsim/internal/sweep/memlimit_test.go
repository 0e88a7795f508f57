package sweep

import (
	"io"
	"math"
	"runtime/debug"
	"testing"
)

// A sweep runs under a soft memory limit of what its points hold plus as
// much again or 4 GiB, whichever is more (by hand: 1 GiB held, 5 GiB; 8
// GiB held, 16 GiB), set while it runs and put back after; not where the
// user set GOGC or GOMEMLIMIT, whose own limits stand.
func TestSweepMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{{0, 4 << 30}, {1 << 30, 5 << 30}, {4 << 30, 8 << 30}, {8 << 30, 16 << 30}} {
		if got := sweepMemoryLimit(c.live); got != c.want {
			t.Errorf("sweepMemoryLimit(%d) = %d, want %d", c.live, got, c.want)
		}
	}
	s, err := Parse("limit.yaml", []byte("base: {ranks: 4, verify: \"off\"}\naxes:\n  size: [8, 64]\n"))
	if err != nil {
		t.Fatal(err)
	}
	// limitDuring runs the sweep and returns the memory limit each point
	// saw and the one after.
	limitDuring := func() (during []int64, after int64) {
		pl := Plan{Progress: func(int, int, int, string) { during = append(during, debug.SetMemoryLimit(-1)) }}
		w := &writer{w: io.Discard, format: CSV, cols: s.Columns()}
		if failed, err := s.Run(w, pl); err != nil || failed > 0 {
			t.Fatal(err, failed)
		}
		return during, debug.SetMemoryLimit(-1)
	}
	before := debug.SetMemoryLimit(-1)
	if before != math.MaxInt64 {
		t.Skipf("the test process runs under a memory limit of %d already", before)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	during, after := limitDuring()
	if len(during) != 2 || after != before {
		t.Fatalf("limits %v during, %d after; want 2 points' and %d after", during, after, before)
	}
	for _, l := range during {
		// What a small sweep holds is far below 4 GiB, and above nothing.
		if l <= 4<<30 || l > 5<<30 {
			t.Errorf("limit %d during the sweep, want 4 GiB plus what the points hold", l)
		}
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(v, "100")
		if during, _ := limitDuring(); during[0] != before {
			t.Errorf("%s set: limit %d during the sweep, want the user's own %d", v, during[0], before)
		}
		t.Setenv(v, "")
	}
}
