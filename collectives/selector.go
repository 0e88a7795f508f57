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
		name, rule, err = ompiChoice(c, p, bytes)
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

// ompiTable is one of Open MPI's fixed decision functions: rows by
// communicator size (ranks < below; -1 closes the table), each a list of
// (bytes < below, algorithm) with -1 for the last.
type ompiTable struct {
	// names maps Open MPI's algorithm numbers to collsim's; "" marks an
	// algorithm collsim does not have (its Open MPI name follows the '|').
	names map[int]string
	rows  []ompiRow
}

type ompiRow struct {
	below int
	steps [][2]int64
}

func (t *ompiTable) choose(p int, bytes int64) int {
	for _, row := range t.rows {
		if row.below >= 0 && p >= row.below {
			continue
		}
		for _, s := range row.steps {
			if s[0] < 0 || bytes < s[0] {
				return int(s[1])
			}
		}
	}
	return 0
}

// rows builds a table from a compact form: each row is the rank bound
// followed by byte-bound, algorithm pairs, the last pair's bound being -1.
func rows(spec ...[]int64) []ompiRow {
	var out []ompiRow
	for _, r := range spec {
		row := ompiRow{below: int(r[0])}
		for i := 1; i+1 < len(r); i += 2 {
			row.steps = append(row.steps, [2]int64{r[i], r[i+1]})
		}
		out = append(out, row)
	}
	return out
}

// Open MPI 4.1's coll/tuned fixed decision tables for commutative
// operations (ompi_coll_tuned_*_intra_dec_fixed; generated from the
// ompi-collectives-tuning measurements of several clusters). Where Open
// MPI's algorithm differs from collsim's nearest one, the name says so.
var ompiTables = map[Collective]*ompiTable{
	Allreduce: {
		names: map[int]string{1: "linear", 2: "reduce_bcast|nonoverlapping (reduce, then bcast)", 3: "recursive_doubling", 4: "ring", 5: "segmented_ring", 6: "rabenseifner"},
		rows: rows([]int64{4, 8, 4, 4096, 3, 8192, 4, 16384, 3, 65536, 4, 262144, 5, -1, 6},
			[]int64{8, 16, 4, 8192, 3, -1, 6}, []int64{16, 8192, 3, -1, 6}, []int64{32, 64, 5, 4096, 3, -1, 6},
			[]int64{64, 128, 5, -1, 6}, []int64{128, 262144, 3, -1, 6}, []int64{256, 131072, 2, 262144, 3, -1, 6},
			[]int64{512, 4096, 2, -1, 6}, []int64{2048, 2048, 2, 16384, 3, -1, 6}, []int64{4096, 2048, 2, 4096, 5, 16384, 3, -1, 6},
			[]int64{-1, 2048, 2, 16384, 5, 32768, 3, -1, 6}),
	},
	Bcast: {
		names: map[int]string{1: "linear", 2: "chain|chain (Open MPI runs several chains; collsim one)", 3: "chain|pipeline", 4: "split_binary|split_binary_tree",
			5: "binary", 6: "binomial", 7: "knomial", 8: "scatter_allgather_rd|scatter_allgather (binomial scatter, recursive-doubling allgather)", 9: "scatter_allgather|scatter_allgather_ring"},
		rows: rows([]int64{4, 32, 3, 256, 5, 512, 3, 1024, 7, 32768, 1, 131072, 5, 262144, 2, 524288, 1, 1048576, 6, -1, 5},
			[]int64{8, 64, 5, 128, 6, 2048, 5, 8192, 6, 1048576, 1, -1, 2},
			[]int64{16, 8, 7, 64, 5, 4096, 7, 16384, 5, 32768, 6, -1, 1},
			[]int64{32, 4096, 7, 1048576, 6, -1, 8}, []int64{64, 2048, 6, -1, 7}, []int64{128, -1, 7},
			[]int64{256, 2, 6, 16384, 5, 32768, 1, 65536, 5, -1, 7}, []int64{1024, 16384, 7, 32768, 4, -1, 7},
			[]int64{2048, 524288, 7, -1, 8}, []int64{4096, 262144, 7, -1, 8}, []int64{-1, 8192, 7, 16384, 5, 262144, 7, -1, 8}),
	},
	Reduce: {
		names: map[int]string{1: "linear", 2: "chain|chain (Open MPI runs several chains; collsim one)", 3: "chain|pipeline", 4: "segmented_binary|binary",
			5: "binomial", 6: "in_order_binary|in-order_binary", 7: "rabenseifner"},
		rows: rows([]int64{4, 8, 7, 16, 4, 32, 3, 262144, 1, 524288, 3, 1048576, 2, -1, 3},
			[]int64{8, 4096, 4, 65536, 2, 262144, 5, 524288, 1, 1048576, 5, -1, 1},
			[]int64{16, 8192, 4, -1, 5}, []int64{32, 4096, 4, -1, 5}, []int64{256, -1, 5}, []int64{512, 8192, 5, 16384, 6, -1, 5},
			[]int64{2048, -1, 5}, []int64{4096, 512, 5, 1024, 6, 8192, 5, 16384, 6, -1, 5},
			[]int64{-1, 16, 5, 32, 6, 1024, 5, 2048, 6, 8192, 5, 16384, 6, -1, 5}),
	},
	Allgather: { // bytes: each rank's contribution
		names: map[int]string{1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor_exchange|neighbor", 6: "ring|two_proc"},
		rows: rows([]int64{3, -1, 6}, []int64{32, -1, 3}, []int64{64, 1024, 3, 65536, 5, -1, 4}, []int64{128, 512, 3, 65536, 5, -1, 4},
			[]int64{256, 512, 3, 131072, 5, 524288, 4, 1048576, 5, -1, 4},
			[]int64{512, 32, 3, 128, 2, 1024, 3, 131072, 5, 524288, 4, 1048576, 5, -1, 4},
			[]int64{1024, 64, 3, 256, 2, 2048, 3, -1, 5},
			[]int64{2048, 4, 3, 8, 2, 16, 3, 32, 2, 256, 3, 512, 2, 4096, 3, -1, 5},
			[]int64{4096, 32, 2, 128, 3, 512, 2, 4096, 3, -1, 5}, []int64{-1, 2, 3, 8, 2, 16, 3, 512, 2, 4096, 3, -1, 5}),
	},
	ReduceScatter: {
		names: map[int]string{1: "non_overlapping|non-overlapping", 2: "recursive_halving", 3: "ring",
			4: "recursive_halving|butterfly (Traff's; run here as recursive halving with a fold: the same log p rounds and volume, one extra fold step for p not a power of two)"},
		rows: rows([]int64{4, 65536, 3, 131072, 4, -1, 3}, []int64{8, 8, 1, 262144, 2, -1, 3}, []int64{32, 262144, 2, -1, 3},
			[]int64{64, 64, 1, 2048, 2, 524288, 4, -1, 3}, []int64{128, 256, 1, 512, 2, 2048, 4, 4096, 2, -1, 4},
			[]int64{256, 256, 1, 512, 2, -1, 4}, []int64{512, 256, 1, 1024, 2, -1, 4},
			[]int64{1024, 512, 1, 2048, 2, 8192, 4, 16384, 2, -1, 4}, []int64{2048, 512, 1, 4096, 2, 16384, 4, 32768, 2, -1, 4},
			[]int64{4096, 512, 1, 4096, 2, -1, 4}, []int64{-1, 1024, 1, 8192, 2, -1, 4}),
	},
	Alltoall: { // bytes: per pair of ranks
		names: map[int]string{1: "linear", 2: "pairwise", 3: "bruck|modified_bruck", 4: "linear_sync", 5: "pairwise|two_proc"},
		rows: rows([]int64{3, 2, 2, 4, 5, 16, 2, 64, 5, 256, 2, 4096, 5, 32768, 2, 262144, 4, 1048576, 5, -1, 2},
			[]int64{8, 8192, 4, 16384, 1, 65536, 4, 524288, 1, 1048576, 2, -1, 1}, []int64{16, 262144, 4, -1, 1},
			[]int64{32, 4, 4, 512, 3, 8192, 4, 32768, 1, 262144, 4, 524288, 1, -1, 4}, []int64{64, 512, 3, 524288, 1, -1, 4},
			[]int64{128, 1024, 3, 2048, 1, 4096, 4, 262144, 1, -1, 2}, []int64{256, 1024, 3, 2048, 4, 262144, 1, -1, 2},
			[]int64{512, 1024, 3, 8192, 4, 32768, 1, -1, 2}, []int64{1024, 512, 3, 8192, 4, 16384, 1, 131072, 4, 262144, 1, -1, 2},
			[]int64{2048, 512, 3, 1024, 4, 2048, 1, 16384, 4, 262144, 1, -1, 4}, []int64{4096, 1024, 3, 4096, 4, 8192, 1, 131072, 4, -1, 1},
			[]int64{-1, 2048, 3, 8192, 4, 16384, 1, 32768, 4, 65536, 1, -1, 4}),
	},
	Barrier: {
		names: map[int]string{1: "linear", 2: "|double_ring", 3: "recursive_doubling", 4: "dissemination|bruck", 5: "recursive_doubling|two_proc", 6: "tree"},
		rows:  rows([]int64{4, -1, 3}, []int64{8, -1, 1}, []int64{64, -1, 3}, []int64{256, -1, 4}, []int64{512, -1, 6}, []int64{1024, -1, 4}, []int64{4096, -1, 6}, []int64{-1, -1, 4}),
	},
}

// OmpiMessageBytes returns the message size by which Open MPI's tuned
// decisions choose for c, and what it measures: the vector's bytes, each
// rank's contribution for allgather, the bytes per pair for alltoall.
func OmpiMessageBytes(c Collective, p Params) (bytes int64, measure string) {
	switch c {
	case Allgather:
		return p.SizeBytes(c) / int64(max(p.Ranks, 1)), "bytes per rank"
	case Alltoall:
		return p.Count * p.elemSize(), "bytes per pair"
	}
	return p.SizeBytes(c), "bytes"
}

// ompiChoice applies Open MPI 4.1's table for c.
func ompiChoice(c Collective, p Params, bytes int64) (string, string, error) {
	t, ok := ompiTables[c]
	if !ok {
		return "", "", fmt.Errorf("Open MPI's fixed rules for %s are not transcribed; name an algorithm instead", c)
	}
	bytes, measure := OmpiMessageBytes(c, p)
	alg := t.choose(p.Ranks, bytes)
	name, ompiName, _ := strings.Cut(t.names[alg], "|")
	if ompiName == "" {
		ompiName = name
	}
	// Algorithms that need a power of two (or an even count) in collsim.
	switch {
	case name == "recursive_doubling" && c == Allgather && !isPow2(p.Ranks):
		name, ompiName = "bruck", ompiName+"; collsim runs bruck, recursive doubling needing a power of two"
	case name == "neighbor_exchange" && p.Ranks%2 != 0:
		name, ompiName = "ring", ompiName+"; collsim runs ring, neighbor exchange needing an even count"
	}
	rule := fmt.Sprintf("Open MPI 4.1 fixed rules for %d ranks and %d %s pick algorithm %d, %s", p.Ranks, bytes, measure, alg, ompiName)
	if name == "" {
		return "", "", fmt.Errorf("%s, which collsim does not have yet; name an algorithm instead", rule)
	}
	return name, rule, nil
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
