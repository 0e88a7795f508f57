package collectives

import (
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

// ops counts a schedule's ops over its ranks.
func ops(s sim.Schedule) int {
	n := 0
	for _, prog := range sim.Materialize(s) {
		n += len(prog)
	}
	return n
}

// A call of no elements sends nothing, whatever the algorithm, as Open
// MPI's and MPICH's MPI functions return before any algorithm runs
// (ompi/mpi/c/*.c.in: "if (0 == count) return MPI_SUCCESS" and the like;
// MPICH 3.3.2's src/mpi/coll/*/*.c); a barrier runs; and MPICH 4.3.2's
// MPI_Allreduce, whose binding has no such return, runs its algorithm.
func TestZeroCountSendsNothing(t *testing.T) {
	for _, a := range All() {
		for _, p := range []int{1, 2, 5, 8} {
			params := everyCase(p, 0)
			if refused(t, a, params) {
				continue
			}
			s, err := a.Build(params)
			if err != nil {
				t.Fatal(err)
			}
			n := ops(s)
			switch {
			case a.Collective == Barrier && p > 1 && n == 0:
				t.Errorf("%s on %d ranks: a barrier ran no ops", a.ID(), p)
			case a.Collective != Barrier && n != 0:
				t.Errorf("%s on %d ranks, no elements: %d ops, want none", a.ID(), p, n)
			}
		}
	}
	for _, c := range []struct {
		lib      string
		coll     Collective
		sends    bool
		nodeSize int
	}{
		{"mpich4", Allreduce, true, 0},
		// Its composition alpha's parts are internal functions: they run
		// too (they ran nothing: a new user's trial).
		{"mpich4", Allreduce, true, 8},
		{"mpich", Allreduce, false, 8},
		{"mpich4", Bcast, false, 0},
		{"mpich", Allreduce, false, 0},
		{"ompi", Allreduce, false, 0},
		{"ompi5", Alltoall, false, 0},
	} {
		sel, err := Select(c.lib, c.coll, Params{Ranks: 5 + 11*min(c.nodeSize, 1), NodeSize: c.nodeSize})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sel.Algorithm.Build(sel.Params)
		if err != nil {
			t.Fatal(err)
		}
		if returns := strings.Contains(sel.Rule, "a call of no elements returns at once in"); returns == c.sends {
			t.Errorf("%s %s of no elements (node size %d): rule %q", c.lib, c.coll, c.nodeSize, sel.Rule)
		}
		if got := ops(s) > 0; got != c.sends {
			t.Errorf("%s %s of no elements (node size %d): ops %v, want %v (%s)", c.lib, c.coll, c.nodeSize, got, c.sends, sel.Rule)
		}
	}
}
