package collectives

import (
	"testing"

	"github.com/collsim/collsim/sim"
)

// TestTwoProcsExchangesFirst: Open MPI's two_procs alltoall sends and
// receives the other rank's block first and copies the rank's own block
// after (ompi_coll_base_alltoall_intra_two_procs), where pairwise on 2
// ranks copies first; the copy waits for the exchange. It refuses any
// other rank count. (Its data: TestEveryAlgorithmMovesTheRightData.)
func TestTwoProcsExchangesFirst(t *testing.T) {
	a, err := Lookup(Alltoall, "two_procs")
	if err != nil {
		t.Fatal(err)
	}
	const c = 5
	s, err := a.Build(Params{Ranks: 2, Count: c, ElemSize: 8}) // c elements per pair
	if err != nil {
		t.Fatal(err)
	}
	for r, prog := range sim.Materialize(s) {
		other := int32(1 - r)
		if len(prog) != 3 {
			t.Fatalf("rank %d: %d ops, want an exchange and a copy (3): %v", r, len(prog), prog)
		}
		for i, op := range prog[:2] {
			buf := uint8(0)
			if op.Kind == sim.OpRecv {
				buf = 1
			}
			if op.Peer != other || op.Data != (sim.Region{Buf: buf, Off: int64(other) * c, Count: c}) {
				t.Errorf("rank %d op %d: %v, want peer %d region {buf %d off %d count %d}", r, i, op, other, buf, other*c, c)
			}
		}
		// The copy of the rank's own block, a local copy after the
		// exchange.
		cp := prog[2]
		if cp.Kind != sim.OpCalc || cp.Src != (sim.Region{Buf: 0, Off: int64(r) * c, Count: c}) || cp.Data != (sim.Region{Buf: 1, Off: int64(r) * c, Count: c}) || len(cp.After) != 2 {
			t.Errorf("rank %d op 2: %+v, want a copy of its own block from buffer 0 to 1 after both ops of the exchange", r, cp)
		}
	}
	for _, p := range []int{1, 3, 4} {
		if _, err := a.Build(Params{Ranks: p, Count: int64(p), ElemSize: 8}); err == nil {
			t.Errorf("two_procs on %d ranks built; want a refusal", p)
		}
	}
}
