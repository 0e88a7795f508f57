package realrun

import "testing"

// TestCPUSetString: CPU sets listed as Linux lists them, runs as ranges;
// and counted, and joined, bit by bit.
func TestCPUSetString(t *testing.T) {
	set := func(cpus ...int) cpuSet {
		var s cpuSet
		for _, c := range cpus {
			s[c/8] |= 1 << (c % 8)
		}
		return s
	}
	for _, tc := range []struct {
		s    cpuSet
		want string
	}{
		{set(), ""},
		{set(5), "5"},
		{set(0, 1, 2, 3, 8), "0-3,8"},
		{set(7, 8), "7-8"},
		{set(0, 2, 4, 1023), "0,2,4,1023"},
		{set(1022, 1023), "1022-1023"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.want, got, tc.want)
		}
	}
	a, b := set(0, 1), set(1, 9)
	a.add(b[:])
	if a.count() != 3 || a.String() != "0-1,9" {
		t.Errorf("{0,1} with {1,9}: %q, %d CPUs; want 0-1,9 and 3", a.String(), a.count())
	}
}
