package cost

import (
	"fmt"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// TestLowerBoundsHold: no algorithm of the library, closed form or not,
// beats the lower bound of its collective in the simulation, for p =
// 1..24, counts around p and larger, and reductions faster and slower than
// the link.
func TestLowerBoundsHold(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	for _, gammaPs := range []float64{30, 130} {
		model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: gammaPs * 1e-12}
		for _, a := range collectives.All() {
			t.Run(fmt.Sprint(a.ID(), "/gamma=", gammaPs), func(t *testing.T) {
				t.Parallel()
				checked := 0
				for p := 1; p <= 24; p++ {
					for _, n := range []int64{0, 1, int64(p) + 1, 3*int64(p) - 1, 64, 1000} {
						params := collectives.Params{Ranks: p, Count: n, Root: p / 2, GroupSize: groupSize(p), NodeSize: groupSize(p)}
						if _, err := a.Build(params); err != nil {
							continue
						}
						b, err := model.LowerBound(a.Collective, params)
						if err != nil {
							t.Fatal(err)
						}
						got := simulate(t, a, params, link, gammaPs).Seconds()
						if got < b.Time*(1-1e-9) {
							t.Errorf("p=%d count=%d: simulated %.9g s beats the lower bound %.9g s (%+v)", p, n, got, b.Time, b)
						}
						checked++
					}
				}
				if checked == 0 {
					t.Fatal("no case could be built: the test proves nothing")
				}
			})
		}
	}
}

// TestLowerBoundValues pins the bound's terms on small cases worked by
// hand (alpha 1, beta 0.5 per byte, gamma 0.25 per byte, 8-byte elements).
func TestLowerBoundValues(t *testing.T) {
	m := Hockney{Alpha: 1, Beta: 0.5, Gamma: 0.25}
	for _, tc := range []struct {
		c                collectives.Collective
		p                int
		count            int64
		lat, bw, compute float64
	}{
		// 4 ranks, 4 elements (32 B): blocks of 8 B.
		{collectives.Allreduce, 4, 4, 2, 1 + 2*(32-8)*0.5, 1 + 24*0.25}, // 2(n-block) = 48 B; 3 of 4 elements reduced per rank
		{collectives.Bcast, 4, 4, 2, 1 + 32*0.5, 0},
		{collectives.Reduce, 4, 4, 2, 1 + 32*0.5, 1 + 24*0.25},
		{collectives.Allgather, 4, 4, 2, 1 + 24*0.5, 0},
		{collectives.Alltoall, 4, 1, 2, 1 + 24*0.5, 0}, // 3 blocks of one element out
		{collectives.Barrier, 5, 0, 3, 0, 0},
		// One element on 3 ranks: every rank still needs it whole.
		{collectives.Allreduce, 3, 1, 2, 1 + 8*0.5, 1 + 8*0.25},
	} {
		b, err := m.LowerBound(tc.c, collectives.Params{Ranks: tc.p, Count: tc.count})
		if err != nil {
			t.Fatal(err)
		}
		if b.Latency != tc.lat || b.Bandwidth != tc.bw || b.Compute != tc.compute || b.Time != max(m.Alpha, tc.bw, tc.compute) {
			t.Errorf("%s p=%d count=%d: %+v, want latency %g, bandwidth %g, compute %g", tc.c, tc.p, tc.count, b, tc.lat, tc.bw, tc.compute)
		}
	}
	if b, _ := m.LowerBound(collectives.Allreduce, collectives.Params{Ranks: 1, Count: 9}); b.Time != 0 {
		t.Errorf("one rank: %+v", b)
	}
}
