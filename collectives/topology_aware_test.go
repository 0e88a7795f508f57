package collectives

import (
	"testing"

	"github.com/collsim/collsim/sim"
)

// TestTwoLevelSize: the block two_level aggregates over is the node when
// it holds more than one rank, else the Dragonfly group when that does;
// one rank per node or group is one level (size 1, which every rank count
// divides); neither set is none (0, refused).
func TestTwoLevelSize(t *testing.T) {
	for _, c := range []struct{ node, group, want int }{
		{4, 0, 4}, {4, 16, 4}, {1, 16, 16}, {0, 16, 16}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}, {0, 0, 0},
	} {
		if got := TwoLevelSize(Params{NodeSize: c.node, GroupSize: c.group}); got != c.want {
			t.Errorf("node %d, group %d: %d, want %d", c.node, c.group, got, c.want)
		}
	}
	a, err := Lookup(Alltoall, "two_level")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 5, 8} {
		if _, err := Check(a, Params{Ranks: p, Count: 3, NodeSize: 1}, 1, sim.RandomLatency(1000)); err != nil {
			t.Errorf("one rank per node, %d ranks: %v", p, err)
		}
	}
}
