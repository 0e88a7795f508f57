package collectives

import (
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

// Open MPI's basic_linear reduce (ompi_coll_base_reduce_intra_basic_linear,
// v4.1.8 and v5.0.10 alike), which its linear allreduce runs too: the root
// receives from rank p-1 down to 0, one blocking receive and reduction at
// a time. With rendezvous messages and a fixed latency D, each receive
// posted sends its clear-to-send (D) and takes the data in (D), the
// request having arrived at D: a 4-rank reduce to rank 0 takes D + 3 x
// 2D = 70 us at D = 10 us, where a root that posts all three receives at
// once takes 3D = 30 us; the allreduce adds the linear bcast's
// handshake and data, 3D more. These are basic_linear, beside linear's
// receives all posted at once; -a ompi runs basic_linear, and every rank
// count's data checks out.
func TestLinearReduceAsOpenMPI(t *testing.T) {
	red, err := Lookup(Reduce, "basic_linear")
	if err != nil {
		t.Fatal(err)
	}
	s, err := red.Build(Params{Ranks: 5, Count: 10, Root: 2})
	if err != nil {
		t.Fatal(err)
	}
	var from []int32
	for _, op := range sim.Materialize(s)[2] {
		if op.Kind == sim.OpRecv {
			from = append(from, op.Peer)
		}
	}
	if !slices.Equal(from, []int32{4, 3, 1, 0}) {
		t.Errorf("root 2 of 5 receives from %v, want 4, 3, 1, 0", from)
	}
	all, err := Lookup(Allreduce, "basic_linear")
	if err != nil {
		t.Fatal(err)
	}
	redLinear, err := Lookup(Reduce, "linear")
	if err != nil {
		t.Fatal(err)
	}
	allLinear, err := Lookup(Allreduce, "linear")
	if err != nil {
		t.Fatal(err)
	}
	const D = 10 * sim.Microsecond
	for _, c := range []struct {
		a    Algorithm
		want sim.Time
	}{{red, 7 * D}, {redLinear, 3 * D}, {all, 10 * D}, {allLinear, 6 * D}} {
		s, err := c.a.Build(Params{Ranks: 4, Count: 1000})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: sim.FixedLatency(D), Host: sim.HostParams{EagerLimit: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Makespan != c.want {
			t.Errorf("%s: %v, want %v", c.a.ID(), res.Makespan, c.want)
		}
	}
	for p := 1; p <= 20; p++ {
		for _, n := range []int64{0, 1, int64(p) + 1, 1000} {
			for _, a := range []Algorithm{red, all} {
				if _, err := CheckEager(a, Params{Ranks: p, Count: n, Root: p / 2}, uint64(p), sim.RandomLatency(50*sim.Nanosecond), 64); err != nil {
					t.Fatalf("%s on %d ranks, %d elements: %v", a.Collective, p, n, err)
				}
			}
		}
	}
	// Open MPI 4.0's fixed rule for a reduce of under 512 B on fewer than
	// 8 ranks is algorithm 1, linear.
	sel, err := Select("ompi40", Reduce, Params{Ranks: 4, Count: 511, ElemSize: 1})
	if err != nil || sel.Algorithm.Name != "basic_linear" {
		t.Errorf("-a ompi40's 511-byte reduce on 4 ranks: %s %v, want basic_linear", sel.Algorithm.Name, err)
	}
}

// Open MPI's Rabenseifner allreduce (its rules' algorithm 6) on 64 ranks
// folds no rank and, with the count a multiple of 64, halves equal
// blocks, Open MPI's as MPICH's: no "approximate" note; on 12 ranks the
// fold is Open MPI's own and said so (the note spoke of ranks not a power
// of two on a power of two: a new user's trial).
func TestOmpiRabenseifnerNoteOnlyWhereItApplies(t *testing.T) {
	for _, c := range []struct {
		ranks  int
		count  int64
		approx bool
	}{{64, 131072, false}, {64, 125000, true}, {12, 131072, true}} {
		sel, err := Select("ompi", Allreduce, Params{Ranks: c.ranks, Count: c.count, ElemSize: 8})
		if err != nil || sel.Algorithm.Name != "rabenseifner" {
			t.Fatalf("%d ranks, %d elements: %s %v", c.ranks, c.count, sel.Algorithm.Name, err)
		}
		if got := strings.Contains(sel.Rule, "approximate"); got != c.approx {
			t.Errorf("%d ranks, %d elements: rule %q, approximate %v, want %v", c.ranks, c.count, sel.Rule, got, c.approx)
		}
	}
}
