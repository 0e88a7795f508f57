package collectives

import (
	"fmt"
	"math/bits"
	"strings"
)

// Selection is what a library's selector chose for a call.
type Selection struct {
	Algorithm Algorithm
	Params    Params // p with the selector's segment, if it sets one
	Rule      string // the rule that fired, for the output
}

// Selectors lists the MPI libraries whose choices collsim reproduces.
var Selectors = []string{"ompi", "mpich"}

// IsSelector reports whether name is a library selector rather than an
// algorithm.
func IsSelector(name string) bool { return name == "ompi" || name == "mpich" }

// Select returns the algorithm library would run for collective c with
// parameters p. A choice collsim cannot run is an error naming it, never a
// silent substitute.
func Select(library string, c Collective, p Params) (Selection, error) {
	bytes := p.SizeBytes(c)
	var name, rule string
	var err error
	switch library {
	case "ompi":
		name, rule, err = ompiChoice(c, p.Ranks, bytes)
	case "mpich":
		name, rule, err = mpichChoice(c, p, bytes)
	default:
		return Selection{}, fmt.Errorf("unknown selector %q; valid: %s", library, strings.Join(Selectors, ", "))
	}
	if err != nil {
		return Selection{}, err
	}
	a, err := Lookup(c, name)
	if err != nil {
		return Selection{}, fmt.Errorf("%s chooses %s/%s (%s), which collsim does not have yet", library, c, name, rule)
	}
	return Selection{Algorithm: a, Params: p, Rule: rule}, nil
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// ompiChoice is Open MPI 4.1's coll/tuned fixed decision for commutative
// operations (ompi_coll_tuned_*_intra_dec_fixed: tables generated from the
// ompi-collectives-tuning measurements of several clusters, by
// communicator size and total bytes). Open MPI's "nonoverlapping" allreduce
// (a reduce, then a bcast) runs here as reduce_bcast.
func ompiChoice(c Collective, p int, bytes int64) (string, string, error) {
	alg := 0
	switch c {
	case Allreduce:
		// 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
		// 5 segmented_ring, 6 rabenseifner: (upper bound on p, then
		// (upper bound on bytes, algorithm)...; the last entry has no bound).
		type step struct {
			below int64
			alg   int
		}
		table := []struct {
			below int
			steps []step
		}{
			{4, []step{{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {-1, 6}}},
			{8, []step{{16, 4}, {8192, 3}, {-1, 6}}},
			{16, []step{{8192, 3}, {-1, 6}}},
			{32, []step{{64, 5}, {4096, 3}, {-1, 6}}},
			{64, []step{{128, 5}, {-1, 6}}},
			{128, []step{{262144, 3}, {-1, 6}}},
			{256, []step{{131072, 2}, {262144, 3}, {-1, 6}}},
			{512, []step{{4096, 2}, {-1, 6}}},
			{2048, []step{{2048, 2}, {16384, 3}, {-1, 6}}},
			{4096, []step{{2048, 2}, {4096, 5}, {16384, 3}, {-1, 6}}},
			{-1, []step{{2048, 2}, {16384, 5}, {32768, 3}, {-1, 6}}},
		}
		for _, row := range table {
			if row.below < 0 || p < row.below {
				for _, s := range row.steps {
					if s.below < 0 || bytes < s.below {
						alg = s.alg
						break
					}
				}
				break
			}
		}
		ompiNames := map[int]string{1: "basic_linear", 2: "nonoverlapping (reduce, then bcast; run here as reduce_bcast)", 3: "recursive_doubling", 4: "ring", 5: "segmented_ring", 6: "rabenseifner"}
		names := map[int]string{1: "linear", 2: "reduce_bcast", 3: "recursive_doubling", 4: "ring", 5: "segmented_ring", 6: "rabenseifner"}
		return names[alg], fmt.Sprintf("Open MPI 4.1 fixed rules for %d ranks and %d bytes pick algorithm %d, %s", p, bytes, alg, ompiNames[alg]), nil
	}
	return "", "", fmt.Errorf("the ompi selector covers allreduce so far (%s is not yet transcribed); name an algorithm instead", c)
}

// mpichChoice is MPICH's classic default selection (MPIR_CVAR_* defaults:
// allreduce and reduce short 2048 B; bcast short 12288 B, long 524288 B,
// at least 8 processes; allgather short 81920 B, long 524288 B; alltoall
// short 256 B, medium 32768 B per pair; reduce_scatter long 524288 B).
func mpichChoice(c Collective, p Params, bytes int64) (string, string, error) {
	n, pof2 := p.Ranks, 1<<(bits.Len(uint(p.Ranks))-1)
	switch c {
	case Allreduce:
		if bytes <= 2048 || p.Count < int64(pof2) {
			return "recursive_doubling", "MPICH: at most 2048 B (or fewer elements than ranks): recursive doubling", nil
		}
		return "rabenseifner", "MPICH: over 2048 B: reduce-scatter + allgather (Rabenseifner)", nil
	case Bcast:
		switch {
		case bytes < 12288 || n < 8:
			return "binomial", "MPICH: under 12288 B or under 8 ranks: binomial", nil
		case bytes < 524288 && isPow2(n):
			return "scatter_allgather_rd", "MPICH: medium message, power-of-two ranks: scatter + recursive-doubling allgather", nil
		}
		return "scatter_allgather", "MPICH: long message or other ranks: scatter + ring allgather", nil
	case Reduce:
		if bytes <= 2048 || p.Count < int64(pof2) {
			return "binomial", "MPICH: at most 2048 B: binomial", nil
		}
		return "rabenseifner", "MPICH: over 2048 B: reduce-scatter + gather (Rabenseifner)", nil
	case Allgather:
		switch {
		case bytes < 524288 && isPow2(n):
			return "recursive_doubling", "MPICH: under 524288 B in all, power-of-two ranks: recursive doubling", nil
		case bytes < 81920 && !isPow2(n):
			return "bruck", "MPICH: under 81920 B in all, other ranks: Bruck", nil
		}
		return "ring", "MPICH: long: ring", nil
	case ReduceScatter:
		if bytes < 524288 {
			return "recursive_halving", "MPICH: under 524288 B in all: recursive halving", nil
		}
		return "pairwise", "MPICH: long: pairwise", nil
	case Alltoall:
		perPair := p.Count * p.elemSize()
		switch {
		case perPair <= 256 && n >= 8:
			return "bruck", "MPICH: at most 256 B per pair, at least 8 ranks: Bruck", nil
		case perPair <= 32768:
			return "linear", "MPICH: at most 32768 B per pair: all sends and receives posted at once", nil
		}
		return "pairwise", "MPICH: long: pairwise exchange", nil
	case Barrier:
		return "dissemination", "MPICH: dissemination", nil
	}
	return "", "", fmt.Errorf("the mpich selector does not cover %s", c)
}
