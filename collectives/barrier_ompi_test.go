package collectives

import (
	"fmt"
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
)

// Open MPI's recursive-doubling barrier on 6 ranks, read from
// ompi_coll_base_barrier_intra_recursivedoubling (adj = 4): ranks 4 and 5
// send to 0 and 1 and wait for them; 0..3 exchange with r^1 then r^2; 0
// and 1 then send (synchronously) to 4 and 5 and wait for the
// acknowledgement. (collsim folded 0 into 1 and 2 into 3, as MPICH's
// allreduce does: an audit.)
func TestBarrierRecursiveDoublingAsOpenMPI(t *testing.T) {
	a, err := Lookup(Barrier, "recursive_doubling")
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Build(Params{Ranks: 6})
	if err != nil {
		t.Fatal(err)
	}
	progs := sim.Materialize(s)
	want := [][]string{
		{"recv 4", "send 1", "recv 1", "send 2", "recv 2", "send 4", "recv 4"},
		{"recv 5", "send 0", "recv 0", "send 3", "recv 3", "send 5", "recv 5"},
		{"send 3", "recv 3", "send 0", "recv 0"},
		{"send 2", "recv 2", "send 1", "recv 1"},
		{"send 0", "recv 0", "send 0"},
		{"send 1", "recv 1", "send 1"},
	}
	for r, prog := range progs {
		var got []string
		for _, op := range prog {
			verb := "send"
			if op.Kind == sim.OpRecv {
				verb = "recv"
			}
			got = append(got, fmt.Sprintf("%s %d", verb, op.Peer))
		}
		if !slices.Equal(got, want[r]) {
			t.Errorf("rank %d: %v, want %v", r, got, want[r])
		}
	}
	// Every rank's data (its knowledge of who arrived) checks out, on 1 to
	// 40 ranks.
	for p := 1; p <= 40; p++ {
		if _, err := CheckEager(a, Params{Ranks: p}, uint64(p), sim.RandomLatency(50*sim.Nanosecond), 64<<10); err != nil {
			t.Errorf("%d ranks: %v", p, err)
		}
	}
}
