package cost

import (
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// TestHANModelIsNotABound pins the finding in hierarchicalAllreduce's doc
// comment: HAN's task model (the first segment's three stages plus k-1
// times the slowest stage) underestimates bandwidth-bound segments, which
// share the node leader's port between stages, while the form's bounds
// hold.
func TestHANModelIsNotABound(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	m := Hockney{Alpha: 1.5e-6, Beta: 1e-10, Gamma: 30e-12}
	const p, ns, seg, k = 16, 4, 65536, 16
	params := collectives.Params{Ranks: p, Count: k * seg, Segment: seg, NodeSize: ns}
	a, _ := collectives.Lookup(collectives.Allreduce, "hierarchical")
	got := simulate(t, a, params, link, 30).Seconds()
	var first, slowest float64
	for _, st := range []struct {
		c     collectives.Collective
		name  string
		ranks int
	}{{collectives.Reduce, "binomial", ns}, {collectives.Allreduce, collectives.InnerAlgorithm(params, seg), p / ns}, {collectives.Bcast, "binomial", ns}} {
		sa, _ := collectives.Lookup(st.c, st.name)
		pr, err := m.Predict(sa, collectives.Params{Ranks: st.ranks, Count: seg})
		if err != nil {
			t.Fatal(err)
		}
		first, slowest = first+pr.Time, max(slowest, pr.Time)
	}
	han := first + (k-1)*slowest
	t.Logf("simulated / HAN's model = %.2f", got/han)
	if got < 1.5*han {
		t.Errorf("simulated %g s, HAN's model %g s: expected the model well below", got, han)
	}
	pred, err := m.Predict(a, params)
	if err != nil || got > pred.Time || got < pred.Lower {
		t.Errorf("simulated %g s outside the form's bounds [%g, %g] (%v)", got, pred.Lower, pred.Time, err)
	}
}
