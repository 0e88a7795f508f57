package collectives

import (
	"fmt"
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
)

// Open MPI's Rabenseifner allreduce on 6 ranks, 1000 elements of 8 bytes,
// as ompi_coll_base_allreduce_intra_redscat_allgather writes it (rem 2):
// ranks 0 and 1 swap halves (0 sends its right 500 elements, 1 its left
// 500), each reduces the half it keeps, 1 returns its reduced right half
// to 0, and 0 goes on among the survivors 0, 2, 4, 5; at the end 0 sends
// 1 the whole result. (collsim ran MPICH's fold for -a ompi: 0's whole
// vector to 1, survivors 1, 3, 4, 5; an audit.)
func TestRabenseifnerOpenMPIFold(t *testing.T) {
	a, err := Lookup(Allreduce, "rabenseifner")
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Build(Params{Ranks: 6, Count: 1000, Library: ompiBase})
	if err != nil {
		t.Fatal(err)
	}
	progs := sim.Materialize(s)
	describe := func(prog sim.Program) []string {
		var out []string
		for _, op := range prog {
			switch op.Kind {
			case sim.OpSend:
				out = append(out, fmt.Sprintf("send %d to %d", op.Bytes, op.Peer))
			case sim.OpRecv:
				out = append(out, fmt.Sprintf("recv %d from %d", op.Bytes, op.Peer))
			}
		}
		return out
	}
	if got, want := describe(progs[1]), []string{"send 4000 to 0", "recv 4000 from 0", "send 4000 to 0", "recv 8000 from 0"}; !slices.Equal(got, want) {
		t.Errorf("rank 1: %v, want %v", got, want)
	}
	got := describe(progs[0])
	if want := []string{"send 4000 to 1", "recv 4000 from 1", "recv 4000 from 1"}; len(got) < 4 || !slices.Equal(got[:3], want) || got[len(got)-1] != "send 8000 to 1" {
		t.Errorf("rank 0: %v, want %v first and send 8000 to 1 last", got, want)
	}
	// Among the survivors rank 0 (new rank 0) halves first with new rank 1,
	// rank 2: half of the 1000 elements, 4000 bytes.
	if len(got) < 4 || got[3] != "send 4000 to 2" {
		t.Errorf("rank 0's first round: %v, want a half to rank 2", got[3:])
	}
	// The data checks out on every rank count with the halves' odd sizes.
	for p := 1; p <= 40; p++ {
		for _, n := range []int64{0, 1, int64(p) - 1, int64(p) + 1, 3*int64(p) - 1, 1000} {
			if _, err := CheckEager(a, Params{Ranks: p, Count: n, Library: ompiBase}, uint64(p), sim.RandomLatency(50*sim.Nanosecond), 64<<10); err != nil {
				t.Fatalf("%d ranks, %d elements: %v", p, n, err)
			}
		}
	}
}
