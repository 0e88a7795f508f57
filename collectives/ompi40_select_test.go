package collectives

import (
	"fmt"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

// Open MPI 4.0.7's decisions at their boundaries, read off
// ompi_coll_tuned_<collective>_intra_dec_fixed (coll_tuned_decision_fixed.c,
// tag v4.0.7) and the coll/base functions they call. Element sizes of 1 B
// make the byte count the element count, so the boundaries fall on whole
// counts; where a rule is a line ranks = a x bytes + b, the boundary is
// solved by hand, (ranks - b) / a, and the counts on either side of it
// are tested.
func TestOmpi40Allreduce(t *testing.T) {
	runSelCases(t, []selCase{
		// block_dsize < intermediate_message (10000): recursive doubling.
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1, count: 9999, want: "recursive_doubling", rule: "under 10000 B: algorithm 3"},
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 8, count: 1249, want: "recursive_doubling"}, // 9992 B
		// 10000 B, count > 16 ranks, 16 MiB >= 10000 B: the ring.
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1, count: 10000, want: "ring", rule: "algorithm 4, ring"},
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 8, count: 1250, want: "ring"}, // 10000 B
		// count == ranks: nonoverlapping; count == ranks + 1: ring.
		{lib: "ompi40", c: Allreduce, ranks: 4, elem: 10000, count: 4, want: "nonoverlapping", rule: "count 4 <= 4 ranks: algorithm 2"},
		{lib: "ompi40", c: Allreduce, ranks: 4, elem: 10000, count: 5, want: "ring"},
		{lib: "ompi40", c: Allreduce, ranks: 4, elem: 10000, count: 3, want: "nonoverlapping"},
		// ranks x 1 MiB >= bytes: the ring; beyond, the segmented ring with
		// 1 MiB segments: 2 ranks, 2097152 B the ring, 2097153 B segmented
		// in segments of 1048576 one-byte elements (count 2097153 >=
		// 2 x 1048576: no fallback).
		{lib: "ompi40", c: Allreduce, ranks: 2, elem: 1, count: 2 << 20, want: "ring", rule: "2 ranks x 1 MiB >= 2097152 B"},
		{lib: "ompi40", c: Allreduce, ranks: 2, elem: 1, count: 2<<20 + 1, want: "segmented_ring", segment: 1 << 20, rule: "with 1048576-byte segments (1048576 elements)"},
		// 8-byte elements: 1048576 / 8 = 131072 elements per segment.
		{lib: "ompi40", c: Allreduce, ranks: 8, elem: 8, count: 8 << 20, want: "segmented_ring", segment: 131072},
	})
}

// The segmented ring's own fallbacks
// (ompi_coll_base_allreduce_intra_ring_segmented, v4.0.7): the segment
// count is COLL_BASE_COMPUTED_SEGCOUNT's, 1048576 B over the element size
// rounded to the nearest (half down), and a count under ranks x that runs
// the plain ring.
func TestOmpi40SegmentedRingFallbacks(t *testing.T) {
	runSelCases(t, []selCase{
		// 1000-byte elements: 1048576 / 1000 = 1048, remainder 576 > 500:
		// 1049 elements. On 16 ranks the segmented branch starts above
		// 16 MiB = 16777216 B, count 16778; the ring takes over below
		// 16 x 1049 = 16784.
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1000, count: 16777, want: "ring", rule: "16 ranks x 1 MiB >= 16777000 B"},
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1000, count: 16780, want: "ring", rule: "with 1048576-byte segments; count 16780 < 16 ranks x 1049-element segments: Open MPI's segmented ring runs as the plain ring"},
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1000, count: 16783, want: "ring"},
		{lib: "ompi40", c: Allreduce, ranks: 16, elem: 1000, count: 16784, want: "segmented_ring", segment: 1049},
		// 1030-byte elements: 1048576 = 1018 x 1030 + 36, and 36 <= 515
		// rounds down: 1018 elements. 3 x 1 MiB / 1030 = 3054.2, so count
		// 3055 is in the segmented branch, and not under 3 x 1018.
		{lib: "ompi40", c: Allreduce, ranks: 3, elem: 1030, count: 3054, want: "ring"},
		{lib: "ompi40", c: Allreduce, ranks: 3, elem: 1030, count: 3055, want: "segmented_ring", segment: 1018},
		// Elements over a segment (2 MiB): the segment stays the whole
		// vector, count < ranks x count, so the plain ring.
		{lib: "ompi40", c: Allreduce, ranks: 4, elem: 2 << 20, count: 5, want: "ring", rule: "count 5 < 4 ranks x 5-element segments"},
	})
}

// Bcast (ompi_coll_tuned_bcast_intra_dec_fixed, v4.0.7).
func TestOmpi40Bcast(t *testing.T) {
	runSelCases(t, []selCase{
		// < small_message_size (2048) or count <= 1: binomial, unsegmented.
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 2047, want: "binomial", rule: "under 2048 B or at most 1 element: algorithm 6, binomial"},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 4096, count: 1, want: "binomial"},
		// 2048 <= b < 370728: split binary tree, 1024-byte segments (1024
		// one-byte elements; halves of 1024 and 1024, not smaller than a
		// segment).
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 2048, want: "split_binary", segment: 1024, rule: "2048 B to 370727 B: algorithm 4, split_binary_tree, with 1024-byte segments"},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 370727, want: "split_binary", segment: 1024},
		// 370728 B on 16 ranks: 16 >= 1.6134e-6 x 370728 + 2.1102 = 2.708,
		// not < 13, >= 2.3679e-6 x 370728 + 1.1787 = 2.057, >= 3.2118e-6 x
		// 370728 + 8.7936 = 9.984: pipeline, 8 KiB segments.
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 370728, want: "chain", segment: 8192, rule: "algorithm 3, pipeline, with 8192-byte segments"},
		// The same on 8 ranks: fewer than 13, split binary in 8 KiB.
		{lib: "ompi40", c: Bcast, ranks: 8, elem: 1, count: 370728, want: "split_binary", segment: 8192, rule: "fewer than 13 ranks"},
		// The a_p128 line at 4 ranks: 4 < 1.6134e-6 x m + 2.1102 for m >
		// (4 - 2.1102) / 1.6134e-6 = 1171315.23: 1171316 B is a pipeline
		// of 128 KiB segments, 1171315 B the split tree in 8 KiB.
		{lib: "ompi40", c: Bcast, ranks: 4, elem: 1, count: 1171315, want: "split_binary", segment: 8192},
		{lib: "ompi40", c: Bcast, ranks: 4, elem: 1, count: 1171316, want: "chain", segment: 128 << 10, rule: "4 ranks < 1.6134e-6 x 1171316 + 2.1102"},
		// 16 ranks, above 13: the a_p16 line at (16 - 8.7936) / 3.2118e-6
		// = 2243726.26 B (8 KiB below, 16 KiB above) and the a_p64 line at
		// (16 - 1.1787) / 2.3679e-6 = 6259259.26 B (16 KiB below, 64 KiB
		// above); the a_p128 line is 16 ranks only past 8.6 MB.
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 2243726, want: "chain", segment: 8 << 10},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 2243727, want: "chain", segment: 16 << 10},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 6259259, want: "chain", segment: 16 << 10},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1, count: 6259260, want: "chain", segment: 64 << 10},
		// The pipeline's segment in elements, COLL_BASE_COMPUTED_SEGCOUNT:
		// 8192 / 40 = 204, remainder 32 > 20: 205; 8192 / 24 = 341,
		// remainder 8 <= 12: 341 (480000 B on 16 ranks: 8 KiB, as above).
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 40, count: 12000, want: "chain", segment: 205},
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 24, count: 20000, want: "chain", segment: 341},
	})
}

// ompi_coll_base_bcast_intra_split_bintree's own fallback (v4.0.7): the
// first half holds ceil(count/2) elements, the segment is at least one
// element; a half smaller than a segment runs a chain of fan-out 1 in
// COLL_BASE_COMPUTED_SEGCOUNT's segments.
func TestOmpi40SplitBinaryFallback(t *testing.T) {
	runSelCases(t, []selCase{
		// 3-byte elements, 683 of them (2049 B): halves 342 and 341, and
		// 341 x 3 = 1023 B < 1024: a chain, segments 1024 / 3 = 341
		// (remainder 1 <= 1).
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 3, count: 683, want: "chain", segment: 341, rule: "the second half, 341 elements (1023 B), is smaller than a 1024-byte segment"},
		// 684: halves of 342 (1026 B): the split tree, 1024 / 3 = 341
		// elements per segment (this division truncates).
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 3, count: 684, want: "split_binary", segment: 341},
		// 1500-byte elements: the 1024-byte segment grows to one element;
		// halves of 1 element are not smaller: the split tree, 1 element.
		{lib: "ompi40", c: Bcast, ranks: 16, elem: 1500, count: 2, want: "split_binary", segment: 1},
	})
}

// Reduce, commutative (ompi_coll_tuned_reduce_intra_dec_fixed, v4.0.7).
func TestOmpi40Reduce(t *testing.T) {
	runSelCases(t, []selCase{
		// Fewer than 8 ranks and < 512 B: linear.
		{lib: "ompi40", c: Reduce, ranks: 4, elem: 1, count: 511, want: "basic_linear", rule: "fewer than 8 ranks, under 512 B: algorithm 1, linear"},
		{lib: "ompi40", c: Reduce, ranks: 8, elem: 1, count: 511, want: "binomial"},
		// < 8 ranks and < 20480 B, or < 2048 B, or count <= 1: binomial,
		// unsegmented.
		{lib: "ompi40", c: Reduce, ranks: 4, elem: 1, count: 512, want: "binomial", segment: 512},
		{lib: "ompi40", c: Reduce, ranks: 4, elem: 1, count: 20479, want: "binomial", segment: 20479},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 2047, want: "binomial", segment: 2047},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 4096, count: 1, want: "binomial", segment: 1},
		// 20480 B on 4 ranks: the lines give 13.38, 10.53, then 0.0422 x
		// 20 + 1.1614 = 2.005 < 4: binary, 32 KiB segments, which cover
		// the whole vector (one segment).
		{lib: "ompi40", c: Reduce, ranks: 4, elem: 1, count: 20480, want: "segmented_binary", segment: 20480, rule: "algorithm 4, binary, with 32768-byte segments"},
		// 16 ranks: 2048 B is over the a1 line (2.55): binomial, 1 KiB
		// segments (ompi_coll_base_reduce_intra_binomial, segmented: 2
		// of them). The a1 line reaches 16 at (16 - 1.3496) x 1024 /
		// 0.6016 = 24936.85 B.
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 2048, want: "segmented_binomial", segment: 1024, rule: "16 ranks > 0.6016/1024 x 2048 + 1.3496 = 2.5528: algorithm 5, binomial, with 1024-byte segments (1024 elements); approximate"},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 24936, want: "segmented_binomial", segment: 1024, rule: "lock step"},
		// 16 elements of 1024 B: 16 > 0.6016 x 16 + 1.3496 = 10.98, and
		// 1024 / 1024 = 1 element per segment: 16 segments.
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1024, count: 16, want: "segmented_binomial", segment: 1},
		// Then the a2 line, (16 - 9.7128) x 1024 / 0.0410 = 157026.65:
		// pipeline of 1 KiB segments.
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 24937, want: "chain", segment: 1024, rule: "algorithm 3, pipeline, with 1024-byte segments"},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 157026, want: "chain", segment: 1024},
		// The a3 line, (16 - 1.1614) x 1024 / 0.0422 = 360064.61: binary,
		// 32 KiB.
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 157027, want: "segmented_binary", segment: 32768},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 360064, want: "segmented_binary", segment: 32768},
		// The a4 line, (16 - 1.6761) x 1024 / 0.0033 = 4444749.58:
		// pipeline of 32 KiB, then of 64 KiB.
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 360065, want: "chain", segment: 32768},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 4444749, want: "chain", segment: 32768},
		{lib: "ompi40", c: Reduce, ranks: 16, elem: 1, count: 4444750, want: "chain", segment: 65536},
	})
}

// Alltoall, allgather, reduce_scatter, barrier, gather and scatter
// (coll_tuned_decision_fixed.c, v4.0.7; alltoall's thresholds are
// coll_tuned_component.c's defaults, 200 and 3000 B).
func TestOmpi40Others(t *testing.T) {
	runSelCases(t, []selCase{
		// Alltoall, bytes per pair: 2 ranks two_procs;
		// < 200 B on more than 12 ranks modified Bruck; < 3000 B linear;
		// else pairwise.
		{lib: "ompi40", c: Alltoall, ranks: 2, elem: 1, count: 100, want: "two_procs", rule: "2 ranks: algorithm 5, two_proc"},
		{lib: "ompi40", c: Alltoall, ranks: 13, elem: 1, count: 199, want: "bruck", rule: "approximate"},
		{lib: "ompi40", c: Alltoall, ranks: 12, elem: 1, count: 199, want: "linear"},
		{lib: "ompi40", c: Alltoall, ranks: 13, elem: 1, count: 200, want: "linear"},
		{lib: "ompi40", c: Alltoall, ranks: 13, elem: 1, count: 2999, want: "linear"},
		{lib: "ompi40", c: Alltoall, ranks: 13, elem: 1, count: 3000, want: "pairwise"},
		// Allgather, the whole gathered vector: 2 ranks two_procs (the
		// ring on 2); < 50000 B recursive doubling on a power of two,
		// Bruck otherwise; then the ring on odd, neighbor exchange on
		// even numbers of ranks.
		{lib: "ompi40", c: Allgather, ranks: 2, elem: 1, count: 100, want: "ring", rule: "two_proc"},
		{lib: "ompi40", c: Allgather, ranks: 8, elem: 1, count: 49999, want: "recursive_doubling"},
		{lib: "ompi40", c: Allgather, ranks: 8, elem: 1, count: 50000, want: "neighbor_exchange"},
		{lib: "ompi40", c: Allgather, ranks: 6, elem: 1, count: 49999, want: "bruck"},
		{lib: "ompi40", c: Allgather, ranks: 7, elem: 1, count: 50000, want: "ring"},
		// Reduce_scatter, the sum of the counts: <= 12288 B, or <= 262144
		// B on a power of two, or ranks >= 0.0012 x bytes + 8: recursive
		// halving; else the ring.
		{lib: "ompi40", c: ReduceScatter, ranks: 6, elem: 1, count: 12288, want: "recursive_halving"},
		{lib: "ompi40", c: ReduceScatter, ranks: 6, elem: 1, count: 12289, want: "ring"}, // 6 < 22.75
		{lib: "ompi40", c: ReduceScatter, ranks: 8, elem: 1, count: 262144, want: "recursive_halving"},
		{lib: "ompi40", c: ReduceScatter, ranks: 8, elem: 1, count: 262145, want: "ring"},
		// 24 ranks: 0.0012 x 13333 + 8 = 23.9996 <= 24, 0.0012 x 13334 +
		// 8 = 24.0008 > 24.
		{lib: "ompi40", c: ReduceScatter, ranks: 24, elem: 1, count: 13333, want: "recursive_halving", rule: "24 ranks >= 0.0012 x 13333 + 8"},
		{lib: "ompi40", c: ReduceScatter, ranks: 24, elem: 1, count: 13334, want: "ring"},
		// Barrier: 2 ranks two_procs (recursive doubling on 2), bruck
		// (dissemination) unless a power of two, then recursive doubling.
		{lib: "ompi40", c: Barrier, ranks: 2, want: "recursive_doubling", rule: "two_proc is one exchange of empty messages"},
		{lib: "ompi40", c: Barrier, ranks: 6, want: "dissemination"},
		{lib: "ompi40", c: Barrier, ranks: 8, want: "recursive_doubling", rule: "a power of two of ranks: algorithm 3"},
		// Gather, one rank's block: above 6000 B linear_sync (an error,
		// below); more than 60 ranks, or more than 10 and < 1024 B,
		// binomial; else basic_linear.
		{lib: "ompi40", c: Gather, ranks: 16, elem: 6000, count: 16, want: "basic_linear"},
		{lib: "ompi40", c: Gather, ranks: 16, elem: 1023, count: 16, want: "binomial"},
		{lib: "ompi40", c: Gather, ranks: 16, elem: 1024, count: 16, want: "basic_linear"},
		{lib: "ompi40", c: Gather, ranks: 61, elem: 1024, count: 61, want: "binomial"},
		{lib: "ompi40", c: Gather, ranks: 10, elem: 8, count: 10, want: "basic_linear"},
		// Scatter: more than 10 ranks and < 300 B binomial, else linear.
		{lib: "ompi40", c: Scatter, ranks: 11, elem: 299, count: 11, want: "binomial"},
		{lib: "ompi40", c: Scatter, ranks: 11, elem: 300, count: 11, want: "basic_linear"},
		{lib: "ompi40", c: Scatter, ranks: 10, elem: 8, count: 10, want: "basic_linear"},
	})
	// The approximations are named where they apply, and only there:
	// collsim's binomial gather and scatter are Open MPI's for every root
	// (the tree rooted there), and so are its basic_linear ones (in rank
	// order, one at a time): no rule says approximate.
	for _, tc := range []struct {
		c      Collective
		ranks  int
		elem   int64
		root   int
		approx bool
	}{
		{Gather, 16, 8, 0, false}, {Gather, 16, 8, 3, false},
		{Scatter, 16, 8, 0, false}, {Scatter, 16, 8, 3, false},
		{Scatter, 4, 8, 0, false}, {Scatter, 4, 8, 2, false},
	} {
		s, err := Select("ompi40", tc.c, Params{Ranks: tc.ranks, Count: int64(tc.ranks), ElemSize: tc.elem, Root: tc.root})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Rule, "approximate") != tc.approx {
			t.Errorf("%s %d ranks root %d: %s (%s), approximate %v expected", tc.c, tc.ranks, tc.root, s.Algorithm.ID(), s.Rule, tc.approx)
		}
	}
}

// Open MPI 4.0's gather above 6000 B per rank is linear_sync with a
// first segment of 1024 B, above 92160 B of 32768 B
// (COLL_BASE_COMPUTED_SEGCOUNT): on 16 ranks of 8-byte elements, 8000 B a
// rank (1000 elements) has a first segment of 128 elements and 100,000 B
// (12,500) one of 4096 (by hand); a segment not below the block is the
// whole block (0).
func TestOmpi40LinearSync(t *testing.T) {
	for _, tc := range []struct {
		perRank, elem int64
		rule          string
		seg           int64
	}{{1000, 8, "over 6000 B per rank: algorithm 3, linear_sync, with 1024-byte segments", 128},
		{12500, 8, "over 92160 B per rank: algorithm 3, linear_sync, with 32768-byte segments", 4096},
		{1, 6001, "over 6000 B per rank: algorithm 3, linear_sync, with 1024-byte segments", 0}} {
		s, err := Select("ompi40", Gather, Params{Ranks: 16, Count: 16 * tc.perRank, ElemSize: tc.elem})
		if err != nil || s.Algorithm.ID() != "gather/linear_sync" || !strings.Contains(s.Rule, tc.rule) || s.Params.Segment != tc.seg {
			t.Errorf("gather of %d elements of %d B per rank: %v, segment %d (%s), %v; want linear_sync, segment %d", tc.perRank, tc.elem, s.Algorithm.ID(), s.Params.Segment, s.Rule, err, tc.seg)
		}
	}
}

// The nonoverlapping allreduce Open MPI 4.0 picks (count <= ranks, 10000
// B or more) calls the communicator's reduce and bcast: 4.0's own rules,
// not 4.1's tables.
func TestOmpi40Nonoverlapping(t *testing.T) {
	for _, tc := range []struct {
		ranks       int
		count, elem int64
		red, bc     string
		redSeg      int64
		bcSeg       int64
	}{
		// 4 ranks, 4 x 10000 B = 40000 B. Reduce: not under 20480 B; the
		// lines 0.6016 x 39.06 + 1.35 = 24.85 and 0.0410 x 39.06 + 9.71 =
		// 11.31 are above 4, 0.0422 x 39.06 + 1.16 = 2.81 below: binary,
		// 32768 B = 3 elements (remainder 2768 <= 5000). Bcast: under
		// 370728 B: split tree, 1024-byte segment grown to one 10000-byte
		// element; halves of 2.
		{4, 4, 10000, "segmented_binary", "split_binary", 3, 1},
		// 16 ranks, 16 x 1000 B = 16000 B. Reduce: 16 > 0.6016 x 15.625 +
		// 1.35 = 10.75: binomial, 1024 B = 1 element (remainder 24), so
		// 16 segments. Bcast: split tree, 1024 / 1000 = 1 element.
		{16, 16, 1000, "segmented_binomial", "split_binary", 1, 1},
	} {
		s, err := Select("ompi40", Allreduce, Params{Ranks: tc.ranks, Count: tc.count, ElemSize: tc.elem})
		if err != nil {
			t.Fatal(err)
		}
		if s.Algorithm.Name != "nonoverlapping" || !strings.Contains(s.Rule, "reduce/"+tc.red+", then bcast/"+tc.bc) {
			t.Fatalf("%d ranks: %s (%s)", tc.ranks, s.Algorithm.ID(), s.Rule)
		}
		comp, ok, err := CompositeOf(s.Algorithm, s.Params)
		if err != nil || !ok || len(comp.Full) != 2 {
			t.Fatalf("%d ranks: %+v %v %v", tc.ranks, comp, ok, err)
		}
		red, bc := comp.Full[0].Parts[0], comp.Full[1].Parts[0]
		if red.Algorithm.ID() != "reduce/"+tc.red || bc.Algorithm.ID() != "bcast/"+tc.bc || red.Params.Segment != tc.redSeg || bc.Params.Segment != tc.bcSeg {
			t.Errorf("%d ranks: %s (segment %d) then %s (segment %d), want reduce/%s (%d) then bcast/%s (%d)", tc.ranks,
				red.Algorithm.ID(), red.Params.Segment, bc.Algorithm.ID(), bc.Params.Segment, tc.red, tc.redSeg, tc.bc, tc.bcSeg)
		}
	}
}

// SegmentedRingPhases is num_phases of
// ompi_coll_base_allreduce_intra_ring_segmented: count / (p seg), one more
// when the remainder is at least p and over half of p seg; at least 1.
func TestSegmentedRingPhases(t *testing.T) {
	for _, tc := range []struct {
		count     int64
		p         int
		seg, want int64
	}{
		{64, 3, 1, 21},          // 64 = 21 x 3 + 1, 1 < 3
		{20485, 2, 1024, 10},    // remainder 5 >= 2 but not over 1024
		{3000, 2, 1000, 1},      // remainder 1000, not over 1000
		{3001, 2, 1000, 2},      // remainder 1001 > 1000
		{9, 3, 2, 1},            // remainder 3 >= 3, not over 3
		{10, 3, 2, 2},           // remainder 4 >= 3 and over 3
		{10, 4, 3, 1},           // 4 x 3 > 10: under p segments
		{8 << 20, 8, 131072, 8}, // 64 MiB of doubles in 1 MiB segments on 8 ranks
	} {
		if got := SegmentedRingPhases(tc.count, tc.p, tc.seg); got != tc.want {
			t.Errorf("count %d, %d ranks, segment %d: %d phases, want %d", tc.count, tc.p, tc.seg, got, tc.want)
		}
	}
	// The pieces, on 3 ranks, 10 elements in segments of 2: 2 phases;
	// blocks of 4, 3, 3, cut in pieces of 2+2, 2+1, 2+1. Rank 0 sends,
	// in the reduce-scatter, block 0's and block 2's first pieces, then
	// their second ones, then in the allgather blocks 1 and 0 whole.
	a, _ := Lookup(Allreduce, "segmented_ring")
	s, err := a.Build(Params{Ranks: 3, Count: 10, Segment: 2})
	if err != nil {
		t.Fatal(err)
	}
	var sends []int64
	for _, op := range sim.Materialize(s)[0] {
		if op.Kind == sim.OpSend {
			sends = append(sends, op.Data.Count)
		}
	}
	if fmt.Sprint(sends) != "[2 2 2 1 3 4]" {
		t.Errorf("rank 0 sends %v elements, want [2 2 2 1 3 4]", sends)
	}
}

// The split binary tree in segments: on 4 ranks, 10 elements in segments
// of 2, halves of 5 (2+2+1 each). The root sends segment k of the first
// half to rank 1, of the second to rank 2, then the second half whole to
// rank 3, whose mirror image (5) is past the last rank; rank 1 forwards
// each segment to its child 3 as it comes, then sends its half whole to
// its mirror image, rank 2.
func TestSplitBinarySegments(t *testing.T) {
	a, _ := Lookup(Bcast, "split_binary")
	s, err := a.Build(Params{Ranks: 4, Count: 10, Segment: 2})
	if err != nil {
		t.Fatal(err)
	}
	progs := sim.Materialize(s)
	for r, want := range map[int]string{0: "[1:2 2:2 1:2 2:2 1:1 2:1 3:5]", 1: "[3:2 3:2 3:1 2:5]"} {
		var sends []string
		for _, op := range progs[r] {
			if op.Kind == sim.OpSend {
				sends = append(sends, fmt.Sprintf("%d:%d", op.Peer, op.Data.Count))
			}
		}
		if got := fmt.Sprint(sends); got != want {
			t.Errorf("rank %d sends (peer:elements) %s, want %s", r, got, want)
		}
	}
}

// The segmented picks of Open MPI 4.0 that TestEverySelectionRuns's grid
// does not reach, on their rule's ranks and a size inside it, move the
// right data too, and in several segments.
func TestOmpi40LargeSegmentedPicksRun(t *testing.T) {
	for _, tc := range []struct {
		p     Params
		want  string
		nsegs int64 // at least this many segments (the vector over the segment)
	}{
		// 160000 B on 16 ranks, between the a2 (157026 B) and a3 (360064
		// B) lines: binary, 32 KiB = 4096 doubles: 5 segments.
		{Params{Ranks: 16, Count: 20000, ElemSize: 8, Root: 5}, "reduce/segmented_binary", 5},
		// 400000 B on 16 ranks, past the a3 line: pipeline, 32 KiB: 13.
		{Params{Ranks: 16, Count: 50000, ElemSize: 8, Root: 3}, "reduce/chain", 13},
	} {
		s, err := Select("ompi40", Reduce, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Algorithm.ID() != tc.want || (s.Params.Count+s.Params.Segment-1)/s.Params.Segment < tc.nsegs {
			t.Fatalf("%+v: %s in segments of %d (%s)", tc.p, s.Algorithm.ID(), s.Params.Segment, s.Rule)
		}
		if _, err := Check(s.Algorithm, s.Params, 11, sim.RandomLatency(20*sim.Nanosecond)); err != nil {
			t.Errorf("%s %+v: %v", s.Algorithm.ID(), s.Params, err)
		}
	}
	// 400000 B on 8 ranks: not under the a_p128 line (2.76), fewer than 13
	// ranks: the split binary tree, 8 KiB = 1024 doubles, 25 segments a
	// half.
	s, err := Select("ompi40", Bcast, Params{Ranks: 8, Count: 50000, ElemSize: 8, Root: 6})
	if err != nil || s.Algorithm.ID() != "bcast/split_binary" || s.Params.Segment != 1024 {
		t.Fatalf("%v %v", s, err)
	}
	if _, err := Check(s.Algorithm, s.Params, 12, sim.RandomLatency(20*sim.Nanosecond)); err != nil {
		t.Error(err)
	}
}
