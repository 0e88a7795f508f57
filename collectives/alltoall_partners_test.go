package collectives

import (
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

// peers lists rank r's sends' and receives' peers, in program order, for
// algo on p ranks with params edited by edit.
func peers(t *testing.T, algo string, p int, edit func(*Params)) (sends, recvs []int32, copies int) {
	t.Helper()
	a, err := Lookup(Alltoall, algo)
	if err != nil {
		t.Fatal(err)
	}
	params := Params{Ranks: p, Count: 3}
	if edit != nil {
		edit(&params)
	}
	s, err := a.Build(params)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range sim.Materialize(s)[1] {
		switch op.Kind {
		case sim.OpSend:
			sends = append(sends, op.Peer)
		case sim.OpRecv:
			recvs = append(recvs, op.Peer)
		case sim.OpCalc:
			copies++
		}
	}
	return sends, recvs, copies
}

// The partners of rank 1, in the order the libraries' code posts them, as
// read from their sources (an audit found collsim's linear, linear_sync
// and scattered going round the other way, and Open MPI's pairwise run
// with MPICH's XOR partners):
//   - Open MPI's basic linear and linear_sync (coll_base_alltoall.c)
//     receive from r+1, r+2, ... and send to r-1, r-2, ...;
//   - MPICH's scattered (alltoall_intra_scattered.c) receives from r+i and
//     sends to r-i, i from 0 (itself: collsim copies locally);
//   - MPICH's pairwise (alltoall_intra_pairwise.c) takes r XOR i for
//     powers of two, else sends to r+i and receives from r-i, after a
//     local copy;
//   - Open MPI's pairwise (ompi_coll_base_alltoall_intra_pairwise) sends
//     to r+i and receives from r-i, i = 1..p, the last step (itself) a
//     local copy.
func TestAlltoallPartnersAsTheLibraries(t *testing.T) {
	for _, c := range []struct {
		algo         string
		p            int
		library      string
		sends, recvs []int32
		copyAt       int // index of the local copy among the rank's ops
	}{
		{"linear", 5, "", []int32{0, 4, 3, 2}, []int32{2, 3, 4, 0}, 0},
		{"linear_sync", 5, "", []int32{0, 4, 3, 2}, []int32{2, 3, 4, 0}, 0},
		{"scattered", 5, "", []int32{0, 4, 3, 2}, []int32{2, 3, 4, 0}, 0},
		{"pairwise", 8, "", []int32{0, 3, 2, 5, 4, 7, 6}, []int32{0, 3, 2, 5, 4, 7, 6}, 0},
		{"pairwise", 6, "", []int32{2, 3, 4, 5, 0}, []int32{0, 5, 4, 3, 2}, 0},
		{"pairwise", 8, "ompi", []int32{2, 3, 4, 5, 6, 7, 0}, []int32{0, 7, 6, 5, 4, 3, 2}, 14},
		{"pairwise", 6, "ompi", []int32{2, 3, 4, 5, 0}, []int32{0, 5, 4, 3, 2}, 10},
	} {
		sends, recvs, copies := peers(t, c.algo, c.p, func(p *Params) { p.Library = c.library })
		if !slices.Equal(sends, c.sends) || !slices.Equal(recvs, c.recvs) || copies != 1 {
			t.Errorf("%s on %d ranks (library %q), rank 1: sends to %v, receives from %v, %d copies; want %v, %v, 1", c.algo, c.p, c.library, sends, recvs, copies, c.sends, c.recvs)
		}
		a, _ := Lookup(Alltoall, c.algo)
		s, _ := a.Build(Params{Ranks: c.p, Count: 3, Library: c.library})
		prog := sim.Materialize(s)[1]
		k := slices.IndexFunc(prog, func(op sim.Op) bool { return op.Kind == sim.OpCalc })
		if k != c.copyAt {
			t.Errorf("%s on %d ranks (library %q): the local copy is op %d, want %d", c.algo, c.p, c.library, k, c.copyAt)
		}
		// Open MPI's last step, the sendrecv with itself, follows the
		// exchange before it (the test audit).
		if k > 0 && c.algo == "pairwise" && !slices.Contains(prog[k].After, int32(k-1)) {
			t.Errorf("%s on %d ranks (library %q): the local copy waits for %v, not the last exchange's receive (op %d)", c.algo, c.p, c.library, prog[k].After, k-1)
		}
	}
}

// Open MPI's selectors run pairwise with Open MPI's partners: 64 ranks and
// 16 MiB per rank is algorithm 2 in 4.1's fixed rules.
func TestOmpiRunsItsOwnPairwise(t *testing.T) {
	for _, lib := range []string{"ompi", "ompi40", "ompi5"} {
		sel, err := Select(lib, Alltoall, Params{Ranks: 64, Count: 16 << 20 / 8 / 64})
		if err != nil || sel.Algorithm.Name != "pairwise" || sel.Params.Library != ompiBase || !strings.Contains(sel.Rule, "Open MPI's partners: send to r+i and receive from r-i") {
			t.Errorf("%s: %s with library %q (%v), rule %q; want pairwise with %q, its partners said", lib, sel.Algorithm.ID(), sel.Params.Library, err, sel.Rule, ompiBase)
		}
	}
	sel, err := Select("mpich", Alltoall, Params{Ranks: 64, Count: 16 << 20 / 8 / 64})
	if err != nil || sel.Algorithm.Name != "pairwise" || sel.Params.Library == ompiBase {
		t.Errorf("mpich: %s with library %q (%v), want MPICH's pairwise", sel.Algorithm.ID(), sel.Params.Library, err)
	}
}
