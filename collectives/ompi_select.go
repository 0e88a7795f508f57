package collectives

import (
	"fmt"
	"slices"
)

// Open MPI's choices, as Open MPI 4.1.8 and 5.0.10 make them.
//
// Sources (open-mpi/ompi, tags v4.1.8 and v5.0.10; the coll/tuned and
// coll/base files named below are the same in both but for comments):
//   - the tables: ompi/mca/coll/tuned/coll_tuned_decision_fixed.c,
//     ompi_coll_tuned_<collective>_intra_dec_fixed, which every table pick
//     hands to ompi_coll_tuned_<collective>_intra_do_this with a fan-in/out
//     and a segment size of 0 (alltoall also a max_requests of 0);
//   - what each algorithm number runs: the do_this switches in
//     coll_tuned_<collective>_decision.c;
//   - the run-time fallbacks: the algorithms in
//     ompi/mca/coll/base/coll_base_<collective>.c, the chain topology in
//     coll_base_topo.c (ompi_coll_base_topo_build_chain) and the segment
//     macro COLL_BASE_COMPUTED_SEGCOUNT in coll_base_functions.h.
// Collsim's data are sums of unsigned integers, a commutative operation
// with a built-in type, so the commutative half of each table applies.

// ompiAlg is one of Open MPI's algorithm numbers for a collective: its
// name in Open MPI, the collsim algorithm that runs it when forced by a
// rules file (ours, "" for none) and how that one differs (note; but see
// ompiExactOn).
type ompiAlg struct {
	name, ours, note string
}

// ompiExactOn are the calls on which an algorithm with a note is Open
// MPI's nonetheless: the trees Open MPI shapes differently are the same on
// a power of two of ranks, and Rabenseifner's allreduce folds no rank
// there and halves equal blocks where the ranks divide the count (its
// note spoke of ranks not a power of two on 256 ranks: a new user's
// trial).
var ompiExactOn = map[Collective]map[int]func(p Params) bool{
	Bcast: {6: pow2Ranks}, Reduce: {7: pow2Ranks},
	Allreduce: {6: func(p Params) bool { return pow2Ranks(p) && p.Count%int64(p.Ranks) == 0 }},
}

func pow2Ranks(p Params) bool { return isPow2(p.Ranks) }

// ompiAlgs are the algorithm numbers of coll/tuned (the do_this switches
// in coll_tuned_<collective>_decision.c, v4.1.8 and v5.0.10 alike; v4.0.7
// numbers the same algorithms the same, and has no scatter 3).
var ompiAlgs = map[Collective]map[int]ompiAlg{
	Allreduce: {1: {"basic_linear", "basic_linear", ""}, 2: {"nonoverlapping", "nonoverlapping", ""},
		3: {"recursive_doubling", "recursive_doubling", ""}, 4: {"ring", "ring", ""},
		5: {"segmented_ring", "segmented_ring", ""}, 6: {"rabenseifner", "rabenseifner", "for ranks not a power of two collsim runs Open MPI's fold (each pair swaps half vectors, the odd rank returns its reduced half and the even ones go on; -a rabenseifner runs MPICH's); its halving splits the blocks as MPICH's, which differ from Open MPI's by an element at most"}},
	Bcast: {1: {"basic_linear", "linear", ""}, 2: {"chain", "", ""},
		3: {"pipeline", "chain", ""}, 4: {"split_binary_tree", "split_binary", "collsim's tree is numbered heap-wise and pairs the halves' ranks by mirror image, Open MPI's level by level and by neighbouring rank; for an odd count collsim's first half is the smaller, Open MPI's the larger"},
		5: {"binary_tree", "binary", "collsim numbers the binary tree heap-wise (children 2v+1, 2v+2), Open MPI level by level (v+2^l, v+2^(l+1)): the same depth, the last level spread differently"},
		6: {"binomial", "binomial", "for ranks not a power of two Open MPI's binomial tree (ompi_coll_base_topo_build_bmtree: parent = rank without its highest bit) shapes its subtrees differently from collsim's (rank without its lowest bit); both send to the largest subtree first"},
		7: {"knomial", "knomial", ""},
		8: {"scatter_allgather", "scatter_rd_allgather", ""}, 9: {"scatter_allgather_ring", "scatter_ring_allgather", ""}},
	Reduce: {1: {"linear", "basic_linear", ""},
		2: {"chain", "", ""}, 3: {"pipeline", "chain", ""},
		4: {"binary", "segmented_binary", "collsim's binary tree is numbered heap-wise, Open MPI's level by level"},
		5: {"binomial", "binomial", "above the eager limit Open MPI posts the next child's receive before it reduces the current child's vector (ompi_coll_base_reduce_generic), collsim's, as MPICH's, after: an audit found collsim up to 1.18x slower at 800 KB on 6 ranks (analytic network; within 1% on the flow network)"}, // the in-order binomial tree (ompi_coll_base_topo_build_in_order_bmtree) is collsim's
		6: {"in-order_binary", "in_order_binary", ""},
		7: {"rabenseifner", "rabenseifner", "for ranks not a power of two Open MPI's first step swaps half vectors (each rank of a pair reduces one half, and the odd one returns its half), collsim's, as MPICH's, hands the odd rank's whole vector to the even one"}},
	Allgather: {1: {"linear", "linear", ""}, 2: {"bruck", "bruck", ""}, 3: {"recursive_doubling", "recursive_doubling", ""},
		4: {"ring", "ring", ""}, 5: {"neighbor", "neighbor_exchange", ""}, 6: {"two_proc", "", ""}},
	ReduceScatter: {1: {"non-overlapping", "non_overlapping", "Open MPI's reduce is its tuned choice, collsim's binomial"},
		2: {"recursive_halving", "recursive_halving", ""}, 3: {"ring", "ring", ""}, 4: {"butterfly", "butterfly", ""}},
	Alltoall: {1: {"linear", "linear", ""}, 2: {"pairwise", "pairwise", ""},
		3: {"modified_bruck", "bruck", "collsim runs Bruck's rounds with packing as local copies"},
		4: {"linear_sync", "linear_sync", "collsim keeps 8 exchanges in flight; Open MPI keeps --mca coll_tuned_alltoall_algorithm_max_requests (the rules file's column; 0, its default, posts them all)"},
		5: {"two_proc", "two_procs", ""}},
	Barrier: {1: {"linear", "linear", ""}, 2: {"double_ring", "", ""}, 3: {"recursive_doubling", "recursive_doubling", ""},
		4: {"bruck", "dissemination", ""}, 5: {"two_proc", "", ""}, 6: {"tree", "tree", ""}},
	// Gather and scatter: coll_tuned_gather_decision.c and
	// coll_tuned_scatter_decision.c; both trees are
	// ompi_coll_base_topo_build_in_order_bmtree rooted at the root, whose
	// children (relative rank + 1, 2, 4, ...) are collsim's.
	Gather: {1: {"basic_linear", "basic_linear", ""},
		2: {"binomial", "binomial", ""},
		3: {"linear_sync", "linear_sync", ""}},
	Scatter: {1: {"basic_linear", "basic_linear", ""},
		2: {"binomial", "binomial", ""},
		3: {"linear_nb", "linear_nb", ""}},
}

// ompiTable is one of Open MPI's fixed decision functions: rows by
// communicator size (ranks < below; -1 closes the table), each a list of
// (bytes < below, algorithm) with -1 for the last.
type ompiTable []ompiRow

type ompiRow struct {
	below int
	steps [][2]int64
}

func (t ompiTable) choose(p int, bytes int64) int {
	for _, row := range t {
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
func rows(spec ...[]int64) ompiTable {
	var out ompiTable
	for _, r := range spec {
		row := ompiRow{below: int(r[0])}
		for i := 1; i+1 < len(r); i += 2 {
			row.steps = append(row.steps, [2]int64{r[i], r[i+1]})
		}
		out = append(out, row)
	}
	return out
}

// ompiTables are the commutative branches of
// ompi_coll_tuned_<collective>_intra_dec_fixed (coll_tuned_decision_fixed.c,
// v4.1.8 = v5.0.10; generated from the ompi-collectives-tuning measurements
// of several clusters).
var ompiTables = map[Collective]ompiTable{
	Allreduce: rows([]int64{4, 8, 4, 4096, 3, 8192, 4, 16384, 3, 65536, 4, 262144, 5, -1, 6},
		[]int64{8, 16, 4, 8192, 3, -1, 6}, []int64{16, 8192, 3, -1, 6}, []int64{32, 64, 5, 4096, 3, -1, 6},
		[]int64{64, 128, 5, -1, 6}, []int64{128, 262144, 3, -1, 6}, []int64{256, 131072, 2, 262144, 3, -1, 6},
		[]int64{512, 4096, 2, -1, 6}, []int64{2048, 2048, 2, 16384, 3, -1, 6}, []int64{4096, 2048, 2, 4096, 5, 16384, 3, -1, 6},
		[]int64{-1, 2048, 2, 16384, 5, 32768, 3, -1, 6}),
	Bcast: rows([]int64{4, 32, 3, 256, 5, 512, 3, 1024, 7, 32768, 1, 131072, 5, 262144, 2, 524288, 1, 1048576, 6, -1, 5},
		[]int64{8, 64, 5, 128, 6, 2048, 5, 8192, 6, 1048576, 1, -1, 2},
		[]int64{16, 8, 7, 64, 5, 4096, 7, 16384, 5, 32768, 6, -1, 1},
		[]int64{32, 4096, 7, 1048576, 6, -1, 8}, []int64{64, 2048, 6, -1, 7}, []int64{128, -1, 7},
		[]int64{256, 2, 6, 16384, 5, 32768, 1, 65536, 5, -1, 7}, []int64{1024, 16384, 7, 32768, 4, -1, 7},
		[]int64{2048, 524288, 7, -1, 8}, []int64{4096, 262144, 7, -1, 8}, []int64{-1, 8192, 7, 16384, 5, 262144, 7, -1, 8}),
	Reduce: rows([]int64{4, 8, 7, 16, 4, 32, 3, 262144, 1, 524288, 3, 1048576, 2, -1, 3},
		[]int64{8, 4096, 4, 65536, 2, 262144, 5, 524288, 1, 1048576, 5, -1, 1},
		[]int64{16, 8192, 4, -1, 5}, []int64{32, 4096, 4, -1, 5}, []int64{256, -1, 5}, []int64{512, 8192, 5, 16384, 6, -1, 5},
		[]int64{2048, -1, 5}, []int64{4096, 512, 5, 1024, 6, 8192, 5, 16384, 6, -1, 5},
		[]int64{-1, 16, 5, 32, 6, 1024, 5, 2048, 6, 8192, 5, 16384, 6, -1, 5}),
	Allgather: rows([]int64{3, -1, 6}, []int64{32, -1, 3}, []int64{64, 1024, 3, 65536, 5, -1, 4}, []int64{128, 512, 3, 65536, 5, -1, 4},
		[]int64{256, 512, 3, 131072, 5, 524288, 4, 1048576, 5, -1, 4},
		[]int64{512, 32, 3, 128, 2, 1024, 3, 131072, 5, 524288, 4, 1048576, 5, -1, 4},
		[]int64{1024, 64, 3, 256, 2, 2048, 3, -1, 5},
		[]int64{2048, 4, 3, 8, 2, 16, 3, 32, 2, 256, 3, 512, 2, 4096, 3, -1, 5},
		[]int64{4096, 32, 2, 128, 3, 512, 2, 4096, 3, -1, 5}, []int64{-1, 2, 3, 8, 2, 16, 3, 512, 2, 4096, 3, -1, 5}),
	ReduceScatter: rows([]int64{4, 65536, 3, 131072, 4, -1, 3}, []int64{8, 8, 1, 262144, 2, -1, 3}, []int64{32, 262144, 2, -1, 3},
		[]int64{64, 64, 1, 2048, 2, 524288, 4, -1, 3}, []int64{128, 256, 1, 512, 2, 2048, 4, 4096, 2, -1, 4},
		[]int64{256, 256, 1, 512, 2, -1, 4}, []int64{512, 256, 1, 1024, 2, -1, 4},
		[]int64{1024, 512, 1, 2048, 2, 8192, 4, 16384, 2, -1, 4}, []int64{2048, 512, 1, 4096, 2, 16384, 4, 32768, 2, -1, 4},
		[]int64{4096, 512, 1, 4096, 2, -1, 4}, []int64{-1, 1024, 1, 8192, 2, -1, 4}),
	Alltoall: rows([]int64{3, 2, 2, 4, 5, 16, 2, 64, 5, 256, 2, 4096, 5, 32768, 2, 262144, 4, 1048576, 5, -1, 2},
		[]int64{8, 8192, 4, 16384, 1, 65536, 4, 524288, 1, 1048576, 2, -1, 1}, []int64{16, 262144, 4, -1, 1},
		[]int64{32, 4, 4, 512, 3, 8192, 4, 32768, 1, 262144, 4, 524288, 1, -1, 4}, []int64{64, 512, 3, 524288, 1, -1, 4},
		[]int64{128, 1024, 3, 2048, 1, 4096, 4, 262144, 1, -1, 2}, []int64{256, 1024, 3, 2048, 4, 262144, 1, -1, 2},
		[]int64{512, 1024, 3, 8192, 4, 32768, 1, -1, 2}, []int64{1024, 512, 3, 8192, 4, 16384, 1, 131072, 4, 262144, 1, -1, 2},
		[]int64{2048, 512, 3, 1024, 4, 2048, 1, 16384, 4, 262144, 1, -1, 4}, []int64{4096, 1024, 3, 4096, 4, 8192, 1, 131072, 4, -1, 1},
		[]int64{-1, 2048, 3, 8192, 4, 16384, 1, 32768, 4, 65536, 1, -1, 4}),
	Barrier: rows([]int64{4, -1, 3}, []int64{8, -1, 1}, []int64{64, -1, 3}, []int64{256, -1, 4}, []int64{512, -1, 6}, []int64{1024, -1, 4}, []int64{4096, -1, 6}, []int64{-1, -1, 4}),
	Gather: rows([]int64{4, 2, 3, 4, 1, 32768, 2, 65536, 1, 131072, 2, -1, 3},
		[]int64{8, 1024, 2, 8192, 1, 32768, 2, 262144, 1, -1, 3}, []int64{256, -1, 2},
		[]int64{512, 2048, 2, 8192, 1, -1, 2}, []int64{-1, -1, 2}),
	Scatter: rows([]int64{4, 2, 3, 131072, 1, 262144, 3, -1, 1},
		[]int64{8, 2048, 2, 4096, 1, 8192, 2, 32768, 1, 1048576, 3, -1, 1},
		[]int64{16, 16384, 2, 1048576, 3, -1, 1}, []int64{32, 16384, 2, 32768, 1, -1, 3},
		[]int64{64, 512, 2, 8192, 3, 16384, 2, -1, 3}, []int64{-1, 512, 2, -1, 3}),
}

// OmpiMessageBytes returns the message size by which Open MPI's tuned
// decisions choose for c, and what it measures: the vector's bytes, each
// rank's contribution for allgather, gather and scatter (the root's rcount
// or scount), the bytes per pair for alltoall, the sum of the receive
// counts for reduce_scatter.
func OmpiMessageBytes(c Collective, p Params) (bytes int64, measure string) {
	switch c {
	case Allgather, Gather, Scatter:
		// Whole elements, as dsize x count is (it read 10922 bytes per
		// rank for 64 KiB of 8-byte elements on 6 ranks, where the
		// alltoall path reads whole elements; a new user's trial).
		return p.SizeBytes(c) / p.elemSize() / int64(max(p.Ranks, 1)) * p.elemSize(), "bytes per rank"
	case Alltoall:
		return p.Count * p.elemSize(), "bytes per pair"
	}
	return p.SizeBytes(c), "bytes"
}

// ompiPick is one step of Open MPI's way to an algorithm: the table's pick
// or a fallback, what it runs, and why.
type ompiPick struct {
	name   string // collsim's algorithm
	params Params
	notes  []string // the run-time fallbacks taken, in order
	fell   bool     // the algorithm fell back to another
}

// ompiTuned is what Open MPI's coll/tuned runs for c and p: its fixed
// table's algorithm number, then that algorithm's run-time fallbacks
// (ompiRun). It is also how the nonoverlapping allreduce and HAN pick the
// reduce and bcast they call.
func ompiTuned(c Collective, p Params) (alg int, pick ompiPick, err error) {
	t, ok := ompiTables[c]
	if !ok {
		return 0, pick, &NotTranscribed{Library: "Open MPI", Collective: c}
	}
	bytes, _ := OmpiMessageBytes(c, p)
	alg = t.choose(p.Ranks, bytes)
	pick, err = ompiRun(c, alg, p, 0)
	return alg, pick, err
}

// ompiRun is what Open MPI's coll/base runs when coll/tuned calls
// algorithm alg with a segment size of segBytes and a fan-out of 0 (every
// fixed rule of 4.1 and 5.0 passes a segment size of 0, 4.0's pass their
// own to its segmented algorithms): the algorithm, or the one its own code
// falls back to for these parameters, with the segment (in elements) that
// code derives. Each fallback names its source (function in coll_base_*.c,
// the same in v4.0.7, v4.1.8 and v5.0.10 but for error handling).
func ompiRun(c Collective, alg int, p Params, segBytes int64) (ompiPick, error) {
	n, ranks, es := p.Count, p.Ranks, p.elemSize()
	pof2 := floorPow2(max(ranks, 1))
	pick := ompiPick{name: ompiAlgs[c][alg].ours, params: p}
	fall := func(name string, q Params, why string) (ompiPick, error) {
		pick.name, pick.params, pick.fell = name, q, true
		pick.notes = append(pick.notes, why)
		return pick, nil
	}
	// segmented is p cut as the chain, pipeline, binary and binomial
	// functions cut it: segments of COLL_BASE_COMPUTED_SEGCOUNT elements,
	// the whole vector for a segment size of 0.
	segcount := ompiSegCount(segBytes, es, n)
	segmented := p
	segmented.Segment = max(segcount, 1)
	switch c {
	case Allreduce:
		switch alg {
		case 4:
			if n < int64(ranks) {
				return fall("recursive_doubling", p, fmt.Sprintf("count %d < %d ranks: Open MPI's ring falls back to recursive doubling (coll_base_allreduce.c, ompi_coll_base_allreduce_intra_ring)", n, ranks))
			}
		case 5:
			// ompi_coll_base_allreduce_intra_ring_segmented runs the plain
			// ring when count < size*segcount. With a segment size of 0
			// the segment is the whole vector, so that holds for every
			// count above 0 on 2 or more ranks.
			if ranks > 1 && n > 0 && n < int64(ranks)*segcount {
				if segBytes == 0 {
					pick.notes = append(pick.notes, "segment size 0 makes one segment of the whole vector, so Open MPI's segmented ring runs as the plain ring (coll_base_allreduce.c, ompi_coll_base_allreduce_intra_ring_segmented)")
				} else {
					pick.notes = append(pick.notes, fmt.Sprintf("count %d < %d ranks x %d-element segments: Open MPI's segmented ring runs as the plain ring (coll_base_allreduce.c, ompi_coll_base_allreduce_intra_ring_segmented)", n, ranks, segcount))
				}
				pick.name, pick.fell = "ring", true
				if n < int64(ranks) {
					return fall("recursive_doubling", p, fmt.Sprintf("count %d < %d ranks: the ring falls back to recursive doubling (ompi_coll_base_allreduce_intra_ring)", n, ranks))
				}
				return pick, nil
			}
			pick.params = segmented
		case 6:
			if n < int64(pof2) {
				return fall("basic_linear", p, fmt.Sprintf("count %d < %d, the largest power of two <= %d ranks: Open MPI's Rabenseifner falls back to basic_linear, a linear reduce then a linear bcast (coll_base_allreduce.c, ompi_coll_base_allreduce_intra_redscat_allgather)", n, pof2, ranks))
			}
			pick.params.Library = ompiBase // Open MPI's fold (rabenseifner.ompi)
		}
	case Bcast:
		switch alg {
		case 2:
			if segBytes == 0 {
				return fall("chain", segmented, "fan-out 0 is forced to 1 (coll_base_topo.c, ompi_coll_base_topo_build_chain) and segment size 0 leaves one segment: one unsegmented chain, the whole vector hop by hop (ompi_coll_base_bcast_intra_chain)")
			}
			return fall("chain", segmented, "fan-out 0 is forced to 1 (coll_base_topo.c, ompi_coll_base_topo_build_chain): one chain (ompi_coll_base_bcast_intra_chain)")
		case 3:
			if segBytes == 0 {
				return fall("chain", segmented, "segment size 0 leaves one segment: the whole vector hop by hop down one chain (coll_base_bcast.c, ompi_coll_base_bcast_intra_pipeline)")
			}
			pick.params = segmented
		case 4:
			// ompi_coll_base_bcast_intra_split_bintree: the first half
			// holds ceil(count/2) elements; a segment smaller than one
			// element grows to one; each half's segment is segsize/type
			// size elements (no rounding here). If a half is empty or
			// smaller than a segment it runs a chain of fan-out 1 with
			// that segment size instead.
			seg := segBytes
			if seg > 0 && seg < es {
				seg = es
			}
			half0 := (n + 1) / 2
			half1 := n - half0
			if half1 == 0 || seg > half1*es {
				q := p
				q.Segment = max(ompiSegCount(seg, es, n), 1)
				if seg == 0 {
					return fall("chain", q, fmt.Sprintf("count %d cannot be split in two halves: Open MPI's split binary tree falls back to one unsegmented chain (coll_base_bcast.c, ompi_coll_base_bcast_intra_split_bintree)", n))
				}
				return fall("chain", q, fmt.Sprintf("the second half, %d elements (%d B), is smaller than a %d-byte segment: Open MPI's split binary tree falls back to a chain of fan-out 1 in segments of %d elements (coll_base_bcast.c, ompi_coll_base_bcast_intra_split_bintree, ompi_coll_base_bcast_intra_chain)", half1, half1*es, seg, q.Segment))
			}
			pick.params = unsegmented(p)
			if seg > 0 {
				pick.params.Segment = seg / es
			}
		case 8, 9:
			if n < int64(ranks) && ranks > 1 {
				return fall("linear", p, fmt.Sprintf("count %d < %d ranks: Open MPI's scatter-allgather falls back to basic_linear (coll_base_bcast.c, ompi_coll_base_bcast_intra_scatter_allgather%s)", n, ranks, map[bool]string{true: "_ring"}[alg == 9]))
			}
		}
	case Reduce:
		switch alg {
		case 2:
			if segBytes == 0 {
				return fall("chain", segmented, "fan-out 0 is forced to 1 (ompi_coll_base_topo_build_chain) and segment size 0 leaves one segment: one unsegmented chain (coll_base_reduce.c, ompi_coll_base_reduce_intra_chain)")
			}
			return fall("chain", segmented, "fan-out 0 is forced to 1 (ompi_coll_base_topo_build_chain): one chain (coll_base_reduce.c, ompi_coll_base_reduce_intra_chain)")
		case 3:
			if segBytes == 0 {
				return fall("chain", segmented, "segment size 0 leaves one segment: one unsegmented chain (coll_base_reduce.c, ompi_coll_base_reduce_intra_pipeline)")
			}
			pick.params = segmented
		case 4:
			if segBytes == 0 {
				return fall("segmented_binary", segmented, "segment size 0 leaves one segment: the whole vector up the binary tree (coll_base_reduce.c, ompi_coll_base_reduce_intra_binary)")
			}
			pick.params = segmented
			if segcount < n {
				pick.notes = append(pick.notes, lockStepNote)
			}
		case 5:
			pick.params = segmented
			if segcount < n {
				// ompi_coll_base_reduce_intra_binomial hands the in-order
				// binomial tree and segcount to ompi_coll_base_reduce_generic.
				pick.name = "segmented_binomial"
				pick.notes = append(pick.notes, lockStepNote)
			}
		case 7:
			if ranks < 2 || n < int64(pof2) {
				return fall("basic_linear", p, fmt.Sprintf("count %d < %d, the largest power of two <= %d ranks: Open MPI's Rabenseifner reduce falls back to basic_linear (coll_base_reduce.c, ompi_coll_base_reduce_intra_redscat_gather)", n, pof2, ranks))
			}
		}
	case Allgather:
		switch {
		case alg == 3 && !isPow2(ranks):
			return fall("bruck", p, fmt.Sprintf("%d ranks is not a power of two: Open MPI's recursive doubling falls back to Bruck (coll_base_allgather.c, ompi_coll_base_allgather_intra_recursivedoubling)", ranks))
		case alg == 5 && ranks%2 != 0:
			return fall("ring", p, fmt.Sprintf("%d ranks is odd: Open MPI's neighbor exchange falls back to the ring (coll_base_allgather.c, ompi_coll_base_allgather_intra_neighborexchange)", ranks))
		case alg == 6:
			return fall("ring", p, "two_proc is one exchange between the two ranks, which the ring on 2 ranks is (coll_base_allgather.c, ompi_coll_base_allgather_intra_two_procs)")
		}
	case Alltoall:
		if alg == 2 {
			// ompi_coll_base_alltoall_intra_pairwise: send to r+i and
			// receive from r-i at every rank count, its own block last.
			pick.params.Library = ompiBase
			pick.notes = append(pick.notes, "Open MPI's partners: send to r+i and receive from r-i at every rank count, its own block copied last (not MPICH's XOR partners for powers of two, which -a pairwise runs)")
		}
		switch {
		case alg == 5 && ranks == 1:
			return fall("pairwise", p, "on 1 rank Open MPI's coll/self module runs the call, not its tuned rules: one local copy of the block (coll_self_alltoall.c), which pairwise on 1 rank is")
		case alg == 4:
			return fall("linear", p, "max_requests 0 (coll_tuned_alltoall_max_requests' default) lets Open MPI's linear_sync post all p-1 exchanges at once: the linear alltoall (coll_base_alltoall.c, ompi_coll_base_alltoall_intra_linear_sync)")
		}
	case Gather:
		if alg == 3 {
			// linear_sync's first segment: COLL_BASE_COMPUTED_SEGCOUNT of
			// the segment size and one rank's count (its rcount), the whole
			// block for a segment size of 0, as every 4.1 and 5.0 rule
			// gives.
			block := n / int64(max(ranks, 1))
			pick.params.Segment = 0
			if k := ompiSegCount(segBytes, es, block); k < block {
				pick.params.Segment = k
			}
		}
	case Barrier:
		if alg == 5 {
			return fall("recursive_doubling", p, "two_proc is one exchange of empty messages between the two ranks, which recursive doubling on 2 ranks is (coll_base_barrier.c, ompi_coll_base_barrier_intra_two_procs)")
		}
	}
	if pick.name == "" {
		return pick, fmt.Errorf("Open MPI's %s algorithm %d (%s), which collsim does not have yet; name an algorithm instead", c, alg, ompiAlgs[c][alg].name)
	}
	if note := ompiAlgs[c][alg].note; note != "" {
		if exact := ompiExactOn[c][alg]; exact == nil || !exact(pick.params) {
			pick.notes = append(pick.notes, "approximate: "+note)
		}
	}
	return pick, nil
}

// lockStepNote says how collsim's segmented trees differ from
// ompi_coll_base_reduce_generic's when there are several segments.
const lockStepNote = "approximate: collsim's segmented tree reduces segment by segment in lock step, receiving a segment from all children at once; Open MPI's (coll_base_reduce.c, ompi_coll_base_reduce_generic) takes the children one after another, one receive posted ahead, across segments (on the binary tree that is -a pipelined_binary, which needs receive buffers a two-level algorithm's stages cannot have yet)"

// ompiSegCount is how many elements Open MPI's segmented coll/base
// functions put in a segment of segBytes (COLL_BASE_COMPUTED_SEGCOUNT,
// coll_base_functions.h, v4.0.7 = v4.1.8 = v5.0.10): the segment's bytes
// over the element's, rounded to the nearest (half an element down), or
// the whole count when the segment is smaller than one element or not
// smaller than the vector (a segment size of 0 among them).
func ompiSegCount(segBytes, elem, count int64) int64 {
	if segBytes >= elem && segBytes < elem*count {
		k := segBytes / elem
		if segBytes-k*elem > elem>>1 {
			k++
		}
		return k
	}
	return count
}

// ompiRule writes a pick as the output's rule: the table's choice, then
// each fallback taken.
func ompiRule(version string, c Collective, p Params, alg int, pick ompiPick) string {
	bytes, measure := OmpiMessageBytes(c, p)
	rule := fmt.Sprintf("%s fixed rules for %d ranks and %d %s pick algorithm %d, %s", version, p.Ranks, bytes, measure, alg, ompiAlgs[c][alg].name)
	for _, n := range pick.notes {
		rule += "; " + n
	}
	return rule
}

// ompi41Choice is Open MPI 4.1.8's choice: coll/tuned's fixed rules on
// every communicator of two ranks or more (coll/han exists in 4.1 but its
// priority is 0 there).
func ompi41Choice(c Collective, p Params) (choice, error) {
	return ompiTunedChoice("Open MPI 4.1", c, p)
}

func ompiTunedChoice(version string, c Collective, p Params) (choice, error) {
	alg, pick, err := ompiTuned(c, p)
	if err != nil {
		if alg != 0 {
			return choice{}, fmt.Errorf("%s: %w", ompiRule(version, c, p, alg, pick), err)
		}
		return choice{}, err
	}
	return choice{name: pick.name, params: pick.params, rule: ompiRule(version, c, p, alg, pick)}, nil
}

// OmpiAlgorithm returns Open MPI's coll/tuned number for collsim's
// algorithm name, and a note when Open MPI's algorithm of that number is
// only close to collsim's. ok is false when Open MPI has no such
// algorithm (or collsim's only runs as the fallback of another).
func OmpiAlgorithm(c Collective, name string) (number int, note string, ok bool) {
	algs := ompiAlgs[c]
	numbers := make([]int, 0, len(algs))
	for n := range algs {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		if algs[n].ours == name {
			return n, algs[n].note, true
		}
	}
	return 0, "", false
}

// ompi50Choice is Open MPI 5.0.10's choice. Its coll/tuned is 4.1's (the
// same tables and coll/base code), but coll/han (priority 35, above
// tuned's 30: coll_han_component.c) takes over on a communicator whose
// ranks span several nodes; on a single node mca_coll_han_comm_query
// (coll_han_module.c) disqualifies it ("comm has only local processes"),
// with one rank on each node it steps aside (coll_han_subcomms.c), and it
// provides no alltoall or reduce_scatter, which stay coll/tuned's. A
// machine without nodes is taken as one node.
func ompi50Choice(c Collective, p Params) (choice, error) {
	tuned, err := ompiTunedChoice("Open MPI 5.0 (coll/tuned)", c, p)
	if !multiNode(p) {
		if err == nil && p.NodeSize == 1 && p.Ranks > 1 {
			// coll_han_subcomms.c (mca_coll_han_comm_create and _new): with
			// at most one rank on any node, HAN hands its collectives back
			// to the component below it ("not yet optimized for a single
			// process per node").
			tuned.rule += "; one rank on each node: coll/han steps aside for coll/tuned (coll_han_subcomms.c)"
		} else if err == nil {
			tuned.rule += "; one node: coll/han disqualifies itself (coll_han_module.c, mca_coll_han_comm_query)"
		}
		return tuned, err
	}
	switch c {
	case Allreduce:
		// coll_han_allreduce.c, mca_coll_han_allreduce_intra: falls back
		// only for non-commutative operations (and a failed subcommunicator
		// split); unequal nodes are not checked here.
		q := p
		q.Inner, q.Intra = "", ""
		return choice{name: "han", params: q, rule: fmt.Sprintf("Open MPI 5.0: the ranks span several nodes (%d per node), so coll/han (priority 35) runs its allreduce (coll_han_allreduce.c, mca_coll_han_allreduce_intra): 64 KiB segments, tuned reduce and bcast in each node, libnbc reduce and bcast among the node leaders", p.NodeSize)}, nil
	case Bcast, Reduce:
		if err != nil {
			return tuned, err
		}
		if p.Ranks%p.NodeSize != 0 || p.UnevenNodes {
			// coll_han_bcast.c / coll_han_reduce.c: are_ppn_imbalanced.
			how := fmt.Sprintf("%d ranks, %d per node", p.Ranks, p.NodeSize)
			if p.UnevenNodes && p.Ranks%p.NodeSize == 0 {
				how = fmt.Sprintf("%d ranks, which the placement puts on the nodes unequally", p.Ranks)
			}
			tuned.rule += fmt.Sprintf("; coll/han's %s falls back to coll/tuned: the nodes hold unequal numbers of ranks (%s; coll_han_%s.c, are_ppn_imbalanced)", c, how, c)
			return tuned, nil
		}
		q := p
		q.Inner, q.Intra = "", ""
		return choice{name: "han", params: q, rule: fmt.Sprintf("Open MPI 5.0: the ranks span several nodes (%d per node), so coll/han (priority 35) runs its %s (coll_han_%s.c, mca_coll_han_%s_intra): 64 KiB segments, libnbc among the nodes' ranks of the root's local rank, tuned inside each node", p.NodeSize, c, c, c)}, nil
	case Barrier:
		return choice{name: "han", params: p, rule: fmt.Sprintf("Open MPI 5.0: the ranks span several nodes (%d per node), so coll/han (priority 35) runs its barrier (coll_han_barrier.c, mca_coll_han_barrier_intra_simple): tuned barriers in each node, among the nodes' first ranks, and in each node again", p.NodeSize)}, nil
	case Allgather, Gather, Scatter:
		if err != nil {
			return tuned, err
		}
		how := map[Collective]string{
			Allgather: "a gather in each node, an allgather among the nodes, a bcast in each node",
			Gather:    "a gather in each node, then among the nodes' leaders, reordered at the root",
			Scatter:   "a scatter among the nodes' leaders, then in each node",
		}[c]
		tuned.rule += fmt.Sprintf("; approximate: on several nodes Open MPI 5.0 runs coll/han's %s (coll_han_%s.c: %s), which collsim does not have yet; collsim runs coll/tuned's choice", c, c, how)
		return tuned, nil
	}
	if err == nil {
		tuned.rule += fmt.Sprintf("; coll/han has no %s (coll_han_module.c sets it NULL): coll/tuned's", c)
	}
	return tuned, err
}
