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

// TestBufPoolReuses: a buffer put back is the one a get of its length
// returns next, for lengths kept by index and in the map alike; a get of
// another length does not return it, and at most poolKeep of one length
// are kept.
func TestBufPoolReuses(t *testing.T) {
	var p bufPool
	for _, n := range []int{0, 1, poolSmall, poolSmall + 1, 1 << 17} {
		b := p.get(n)
		if len(b) != n {
			t.Fatalf("get(%d) has length %d", n, len(b))
		}
		p.put(b)
		if other := p.get(n + 1); len(other) != n+1 {
			t.Fatalf("get(%d) has length %d", n+1, len(other))
		}
		if again := p.get(n); n > 0 && &again[0] != &b[0] {
			t.Errorf("get(%d) after putting one back made a new buffer", n)
		}
		bufs := make([][]uint64, poolKeep+2)
		for i := range bufs {
			bufs[i] = make([]uint64, n)
		}
		for _, b := range bufs {
			p.put(b)
		}
		kept := 0
		for range poolKeep + 2 {
			b := p.get(n)
			for _, o := range bufs {
				if n > 0 && &o[0] == &b[0] {
					kept++
				}
			}
		}
		if n > 0 && kept != poolKeep {
			t.Errorf("length %d: %d of %d buffers put back were kept, want %d", n, kept, len(bufs), poolKeep)
		}
	}
}
