package cost

import (
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
)

// TestBinomialReduceTakesChildrenInOrder: MPICH's binomial reduce receives
// its children v+1, v+2, v+4 one after another, each reduced before the
// next receive (blocking MPIC_Recv, then MPIR_Reduce_local). On 5 ranks
// of a crossbar, alpha 1 us, 40 B at 100 ps/B (nb = ng = 4 ns): leaves 1
// and 4 arrive at the root at a + nb, rank 2's partial sum (after its
// child 3's) at 2a + 2nb + ng; the root reduces 1 (done a + nb + ng), then
// 2 (2a + 2nb + 2ng), then 4: 2a + 2nb + 3ng = 2.020 us. Reduced as they
// arrive (4 before 2), it took 2a + 2nb + 2ng = 2.016 us, sooner than MPICH.
func TestBinomialReduceTakesChildrenInOrder(t *testing.T) {
	a, _ := collectives.Lookup(collectives.Reduce, "binomial")
	got := simulate(t, a, collectives.Params{Ranks: 5, Count: 5}, topology.LinkSpec{Bandwidth: 1e10, Latency: 0.5e-6}, 100)
	if want := 2*sim.Microsecond + 20*sim.Nanosecond; got != want {
		t.Errorf("reduce/binomial on 5 ranks: %v, want %v", got, want)
	}
}
