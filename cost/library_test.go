package cost

import (
	"errors"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/topology"
)

// The smp algorithms as MPICH 3.3.2 and MPICH 4.3.2 (Params.Library
// "mpich4") shape them, at sizes TestClosedFormsMatchSimulation's cases do
// not reach (its counts stop at 8000 B): the closed form equals the
// contention-free simulation where it says it is exact and bounds it
// otherwise, across the branches (bcast short and medium, or alpha and
// beta; reduce alpha and beta; barrier), roots on and off a node's first
// rank, and nodes of equal and unequal sizes.
func TestMPICHCompositionForms(t *testing.T) {
	link := topology.LinkSpec{Bandwidth: 1e10, Latency: 0.75e-6}
	model := Hockney{Alpha: 2 * link.Latency, Beta: 1 / link.Bandwidth, Gamma: 30e-12}
	exactSeen := 0
	for _, c := range []collectives.Collective{collectives.Allreduce, collectives.Bcast, collectives.Reduce, collectives.Barrier} {
		a, err := collectives.Lookup(c, "smp")
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range []string{"", "mpich4"} {
			for _, p := range []int{2, 6, 8, 16, 18} {
				for _, n := range []int64{1, 200, 2000} { // 8 B, 1600 B (<= 2048), 16000 B
					for _, root := range []int{0, p - 1} {
						params := collectives.Params{Ranks: p, Count: n, ElemSize: 8, NodeSize: 4, Root: root, Library: lib}
						if _, err := a.Build(params); err != nil {
							t.Fatalf("%s %+v: %v", a.ID(), params, err)
						}
						pred, err := model.Predict(a, params)
						if errors.Is(err, ErrNoClosedForm) {
							continue // a part without a form (Rabenseifner's reduce on 5 ranks)
						}
						if err != nil {
							t.Fatalf("%s %+v: %v", a.ID(), params, err)
						}
						got := simulate(t, a, params, link, 30).Seconds()
						const tol = 1e-9
						if pred.Exact {
							exactSeen++
							if d := got - pred.Time; d > tol*pred.Time || -d > tol*pred.Time {
								t.Errorf("%s %+v: simulated %.12g s, closed form %.12g s", a.ID(), params, got, pred.Time)
							}
						} else if got < pred.Lower*(1-tol) || got > pred.Time*(1+tol) {
							t.Errorf("%s %+v: simulated %.12g s outside [%.12g, %.12g]", a.ID(), params, got, pred.Lower, pred.Time)
						}
					}
				}
			}
		}
	}
	if exactSeen == 0 {
		t.Fatal("no case was exact: the test proves nothing")
	}
}
