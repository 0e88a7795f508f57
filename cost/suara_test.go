package cost

import (
	"math"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// The SUARA study's analytic check (issue: "with a base whose cost is
// linear in P, SUARA2 on a sqrt(P) x sqrt(P) grid gives exactly
// (sqrt(P)+1)/2"). Derivation: the ring allreduce with no bandwidth term
// costs 2(P-1) alpha; SUARA2 on a q x q grid (q = sqrt P) runs it twice on
// q ranks, 2 x 2(q-1) alpha; the ratio (P-1)/(2(q-1)) = (q+1)(q-1)/(2(q-1))
// = (q+1)/2. Both the closed forms and the simulation (a crossbar whose
// bandwidth makes the 8-byte blocks' time vanish) must give it.
func TestSuaraSpeedupOverALinearBase(t *testing.T) {
	ring, _ := collectives.Lookup(collectives.Allreduce, "ring")
	suara, _ := collectives.Lookup(collectives.Allreduce, "suara")
	link := topology.LinkSpec{Bandwidth: 1e18, Latency: 0.5e-6} // alpha 1µs, 8 B in 8e-18 s
	model := Hockney{Alpha: 1e-6}
	for _, q := range []int{2, 3, 4, 8, 16, 32} {
		p := q * q
		base := collectives.Params{Ranks: p, Count: int64(p), ElemSize: 8}
		grid := base
		grid.Groups, grid.Steps, grid.Inner = q, 2, "ring"
		want := float64(q+1) / 2

		rb, err := model.Predict(ring, base)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := model.Predict(suara, grid)
		if err != nil {
			t.Fatal(err)
		}
		if got := rb.Time / rs.Time; !rb.Exact || !rs.Exact || math.Abs(got-want) > 1e-12*want {
			t.Errorf("P=%d closed forms: ring %g s (exact %v) / SUARA2 %g s (exact %v) = %g, want (sqrt P + 1)/2 = %g", p, rb.Time, rb.Exact, rs.Time, rs.Exact, got, want)
		}
		if p > 256 {
			continue // the closed forms are checked against simulation elsewhere; keep the test quick
		}
		sb := simulate(t, ring, base, link, 0).Seconds()
		ss := simulate(t, suara, grid, link, 0).Seconds()
		if got := sb / ss; math.Abs(got-want) > 1e-6*want {
			t.Errorf("P=%d simulated: ring %g s / SUARA2 %g s = %g, want (sqrt P + 1)/2 = %g", p, sb, ss, got, want)
		}
	}
}
