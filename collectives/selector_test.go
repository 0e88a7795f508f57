package collectives

import (
	"fmt"
	"strings"
	"testing"

	"github.com/collsim/collsim/sim"
)

// selCase is one call and what a selector must run for it.
type selCase struct {
	lib      string
	c        Collective
	ranks    int
	elem     int64
	count    int64
	nodeSize int
	want     string
	segment  int64  // the segment the selection must set (0: not checked)
	rule     string // a part of the rule that must be printed ("" : not checked)
}

func (tc selCase) params() Params {
	return Params{Ranks: tc.ranks, Count: tc.count, ElemSize: tc.elem, NodeSize: tc.nodeSize}
}

func runSelCases(t *testing.T, cases []selCase) {
	t.Helper()
	for _, tc := range cases {
		name := fmt.Sprintf("%s %s p=%d %dx%dB node=%d", tc.lib, tc.c, tc.ranks, tc.count, tc.elem, tc.nodeSize)
		s, err := Select(tc.lib, tc.c, tc.params())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Algorithm.Name != tc.want {
			t.Errorf("%s chose %s (%s), want %s", name, s.Algorithm.Name, s.Rule, tc.want)
		}
		if tc.segment != 0 && s.Params.Segment != tc.segment {
			t.Errorf("%s: segment %d, want %d (%s)", name, s.Params.Segment, tc.segment, s.Rule)
		}
		if tc.rule != "" && !strings.Contains(s.Rule, tc.rule) {
			t.Errorf("%s: rule %q lacks %q", name, s.Rule, tc.rule)
		}
	}
}

// Open MPI's table picks, read off the commutative branches of
// coll_tuned_decision_fixed.c (v4.1.8; v5.0.10 is the same), where no
// run-time fallback applies.
func TestOmpiTablePicks(t *testing.T) {
	runSelCases(t, []selCase{
		// allreduce_intra_dec_fixed, communicator_size < 4: < 8 B ring,
		// < 4096 B recursive doubling, < 262144 B (from 65536) segmented
		// ring, else Rabenseifner.
		{lib: "ompi", c: Allreduce, ranks: 2, elem: 8, count: 12, want: "recursive_doubling"}, // 96 B
		{lib: "ompi", c: Allreduce, ranks: 2, elem: 8, count: 1 << 17, want: "rabenseifner"},  // 1 MiB
		// 64 <= size < 128: < 262144 B recursive doubling, else Rabenseifner.
		{lib: "ompi", c: Allreduce, ranks: 64, elem: 8, count: 1, want: "recursive_doubling"},
		{lib: "ompi", c: Allreduce, ranks: 64, elem: 8, count: 1 << 17, want: "rabenseifner"},
		// size >= 4096: 16384 <= b < 32768 recursive doubling, else Rabenseifner.
		{lib: "ompi", c: Allreduce, ranks: 5000, elem: 8, count: 2500, want: "recursive_doubling"},
		{lib: "ompi", c: Allreduce, ranks: 5000, elem: 8, count: 1 << 21, want: "rabenseifner"},
		// bcast_intra_dec_fixed: 64 <= size < 128: knomial at any size.
		{lib: "ompi", c: Bcast, ranks: 64, elem: 8, count: 1, want: "knomial"},
		// 256 <= size < 1024: 16384 <= b < 32768 split binary tree.
		{lib: "ompi", c: Bcast, ranks: 300, elem: 8, count: 2500, want: "split_binary"},
		// reduce_intra_dec_fixed: 32 <= size < 256: binomial.
		{lib: "ompi", c: Reduce, ranks: 100, elem: 8, count: 1 << 17, want: "binomial"},
		// 256 <= size < 512: 8192 <= b < 16384 in-order binary.
		{lib: "ompi", c: Reduce, ranks: 300, elem: 8, count: 1500, want: "in_order_binary"},
		// allgather_intra_dec_fixed (bytes per rank), 64 <= size < 128:
		// < 512 B recursive doubling, < 65536 B neighbor exchange, else ring.
		{lib: "ompi", c: Allgather, ranks: 64, elem: 8, count: 64 * 8, want: "recursive_doubling"},
		{lib: "ompi", c: Allgather, ranks: 128, elem: 8, count: 128 * 512, want: "neighbor_exchange"},
		// reduce_scatter_intra_dec_fixed, 8 <= size < 32: >= 262144 B ring.
		{lib: "ompi", c: ReduceScatter, ranks: 16, elem: 8, count: 1 << 17, want: "ring"},
		// alltoall_intra_dec_fixed (bytes per pair), 32 <= size < 64:
		// < 512 B modified Bruck; 128 <= size < 256: 2048 <= b < 262144 linear.
		{lib: "ompi", c: Alltoall, ranks: 40, elem: 8, count: 10, want: "bruck"},
		{lib: "ompi", c: Alltoall, ranks: 200, elem: 8, count: 2048, want: "linear"},
		// size <= 3 (bytes per pair): 16 to 64 two_proc, to 256 pairwise,
		// to 4096 two_proc, ..., 262144 to 1048576 two_proc, then pairwise:
		// the sizes the README names.
		{lib: "ompi", c: Alltoall, ranks: 2, elem: 8, count: 4, want: "two_procs"},
		{lib: "ompi", c: Alltoall, ranks: 2, elem: 8, count: 8, want: "pairwise"},
		{lib: "ompi", c: Alltoall, ranks: 2, elem: 8, count: 64, want: "two_procs"},
		{lib: "ompi", c: Alltoall, ranks: 2, elem: 8, count: 64 << 10, want: "two_procs"},
		{lib: "ompi", c: Alltoall, ranks: 2, elem: 8, count: 128 << 10, want: "pairwise"},
		// barrier_intra_dec_fixed: 4 <= size < 8 linear; 256 <= size < 512 tree.
		{lib: "ompi", c: Barrier, ranks: 6, want: "linear"},
		{lib: "ompi", c: Barrier, ranks: 300, want: "tree"},
		// 64 <= size < 256: bruck, which is a dissemination barrier.
		{lib: "ompi", c: Barrier, ranks: 100, want: "dissemination"},
		// gather_intra_dec_fixed (one rank's block, rcount x type size),
		// size < 4: < 2 B linear_sync, < 4 B basic_linear, < 32768 B
		// binomial, < 65536 B basic_linear, < 131072 B binomial, else
		// linear_sync (whole blocks: the rules pass a segment size of 0).
		{lib: "ompi", c: Gather, ranks: 3, elem: 1, count: 3, want: "linear_sync", segment: 0},
		{lib: "ompi", c: Gather, ranks: 3, elem: 1, count: 3 * 3, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 3, elem: 8, count: 3 * 4095, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 3, elem: 8, count: 3 * 4096, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 3, elem: 8, count: 3 * 8192, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 3, elem: 8, count: 3 * 16384, want: "linear_sync", rule: "algorithm 3, linear_sync"},
		// 4 <= size < 8: < 1024 B binomial, < 8192 B basic_linear, < 32768
		// B binomial, < 262144 B basic_linear, else linear_sync; 8 <= size
		// < 256 binomial; 256 <= size < 512: 2048 <= b < 8192 basic_linear.
		{lib: "ompi", c: Gather, ranks: 7, elem: 8, count: 7 * 127, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 7, elem: 8, count: 7 * 128, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 7, elem: 8, count: 7 * 32768, want: "linear_sync"},
		{lib: "ompi", c: Gather, ranks: 100, elem: 8, count: 100 * 32768, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 300, elem: 8, count: 300 * 256, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 300, elem: 8, count: 300 * 1024, want: "binomial"},
		// scatter_intra_dec_fixed (the root's scount x type size), size < 4:
		// < 2 B linear_nb, < 131072 B basic_linear, < 262144 B linear_nb,
		// else basic_linear; 8 <= size < 16: < 16384 B binomial, < 1048576
		// B linear_nb, else basic_linear; size >= 64: < 512 B binomial,
		// else linear_nb.
		{lib: "ompi", c: Scatter, ranks: 2, elem: 1, count: 2, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 2, elem: 8, count: 2 * 16383, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 2, elem: 8, count: 2 * 16384, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 2, elem: 8, count: 2 * 32768, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 10, elem: 8, count: 10 * 2047, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 10, elem: 8, count: 10 * 2048, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 10, elem: 8, count: 10 * 131072, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 64, elem: 8, count: 64 * 63, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 64, elem: 8, count: 64 * 64, want: "linear_nb"},
		// Every row's steps at their boundaries, in bytes a rank (1-byte
		// elements): the rows an audit's mutants survived.
		// Gather, 4 <= size < 8: 8192 binomial, 32768 basic_linear, 262144
		// linear_sync; 256 <= size < 512: < 2048 binomial; 512 and more:
		// binomial.
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 8191, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 8192, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 32767, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 32768, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 262143, want: "basic_linear"},
		{lib: "ompi", c: Gather, ranks: 5, elem: 1, count: 5 * 262144, want: "linear_sync"},
		{lib: "ompi", c: Gather, ranks: 300, elem: 1, count: 300 * 2047, want: "binomial"},
		{lib: "ompi", c: Gather, ranks: 600, elem: 1, count: 600 * 4096, want: "binomial"},
		// Scatter, 4 <= size < 8: < 2048 binomial, < 4096 basic_linear,
		// < 8192 binomial, < 32768 basic_linear, < 1048576 linear_nb, else
		// basic_linear; 16 <= size < 32: < 16384 binomial, < 32768
		// basic_linear, else linear_nb; 32 <= size < 64: < 512 binomial,
		// < 8192 linear_nb, < 16384 binomial, else linear_nb.
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 2047, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 2048, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 4096, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 8192, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 32768, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 5, elem: 1, count: 5 * 1048576, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 20, elem: 1, count: 20 * 16383, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 20, elem: 1, count: 20 * 16384, want: "basic_linear"},
		{lib: "ompi", c: Scatter, ranks: 20, elem: 1, count: 20 * 32768, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 40, elem: 1, count: 40 * 511, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 40, elem: 1, count: 40 * 8191, want: "linear_nb"},
		{lib: "ompi", c: Scatter, ranks: 40, elem: 1, count: 40 * 8192, want: "binomial"},
		{lib: "ompi", c: Scatter, ranks: 40, elem: 1, count: 40 * 16384, want: "linear_nb"},
		// MPICH: binomial gather and scatter at every size, node-aware or
		// not (MPIR_Gather_intra_auto, MPIR_Scatter_intra_auto; MPICH 4's
		// composition alpha calls the same).
		{lib: "mpich", c: Gather, ranks: 5, elem: 8, count: 5 << 20, want: "binomial"},
		{lib: "mpich", c: Scatter, ranks: 12, elem: 8, count: 12, nodeSize: 4, want: "binomial"},
		{lib: "mpich4", c: Gather, ranks: 12, elem: 8, count: 12, nodeSize: 4, want: "binomial", rule: "MPIDI_Gather_intra_composition_alpha"},
		{lib: "mpich4", c: Scatter, ranks: 5, elem: 8, count: 5 << 20, want: "binomial", rule: "MPIR_Scatter_intra_binomial"},
	})
}

// Open MPI's run-time fallbacks, each at its boundary, from the coll/base
// functions the rule names (v4.1.8 = v5.0.10). Table rows as in
// TestOmpiTablePicks; element sizes chosen to put the byte count in the
// row that picks the algorithm while the count crosses the boundary.
func TestOmpiFallbacks(t *testing.T) {
	runSelCases(t, []selCase{
		// Ring (allreduce 4): size 7 (4 <= size < 8), < 16 B picks the
		// ring; ompi_coll_base_allreduce_intra_ring runs recursive doubling
		// when count < size.
		{lib: "ompi", c: Allreduce, ranks: 7, elem: 1, count: 6, want: "recursive_doubling", rule: "count 6 < 7 ranks"},
		{lib: "ompi", c: Allreduce, ranks: 7, elem: 1, count: 7, want: "ring"},
		{lib: "ompi", c: Allreduce, ranks: 7, elem: 1, count: 8, want: "ring"},
		{lib: "ompi", c: Allreduce, ranks: 3, elem: 1, count: 2, want: "recursive_doubling"},
		{lib: "ompi", c: Allreduce, ranks: 3, elem: 1, count: 3, want: "ring"},
		// Segmented ring (allreduce 5): size >= 4096, 2048 <= b < 16384.
		// With segment size 0 it is the ring, and then the ring's fallback.
		{lib: "ompi", c: Allreduce, ranks: 4096, elem: 2, count: 4095, want: "recursive_doubling", rule: "runs as the plain ring"},
		{lib: "ompi", c: Allreduce, ranks: 4096, elem: 2, count: 4096, want: "ring", rule: "segmented ring runs as the plain ring"},
		{lib: "ompi", c: Allreduce, ranks: 4096, elem: 2, count: 4097, want: "ring"},
		// The case: 10 KiB of doubles on 4096 ranks.
		{lib: "ompi", c: Allreduce, ranks: 4096, elem: 8, count: 1280, want: "recursive_doubling", rule: "pick algorithm 5, segmented_ring"},
		// Size < 4: 65536 <= b < 262144 segmented ring; count >= size: ring.
		{lib: "ompi", c: Allreduce, ranks: 2, elem: 8, count: 12500, want: "ring"},
		// Rabenseifner (allreduce 6): 8 <= size < 16, >= 8192 B;
		// ompi_coll_base_allreduce_intra_redscat_allgather runs basic_linear
		// when count < the largest power of two <= size (8 for 12).
		{lib: "ompi", c: Allreduce, ranks: 12, elem: 2048, count: 7, want: "basic_linear", rule: "count 7 < 8"},
		{lib: "ompi", c: Allreduce, ranks: 12, elem: 2048, count: 8, want: "rabenseifner"},
		{lib: "ompi", c: Allreduce, ranks: 12, elem: 2048, count: 9, want: "rabenseifner"},
		// Bcast scatter_allgather (8): 16 <= size < 32, >= 1048576 B;
		// ompi_coll_base_bcast_intra_scatter_allgather runs basic_linear
		// when count < size.
		{lib: "ompi", c: Bcast, ranks: 20, elem: 65536, count: 19, want: "linear", rule: "count 19 < 20 ranks"},
		{lib: "ompi", c: Bcast, ranks: 20, elem: 65536, count: 20, want: "scatter_rd_allgather"},
		{lib: "ompi", c: Bcast, ranks: 20, elem: 65536, count: 21, want: "scatter_rd_allgather"},
		// Split binary tree (4): 256 <= size < 1024, 16384 <= b < 32768;
		// ompi_coll_base_bcast_intra_split_bintree runs the chain with
		// fan-out 1 (unsegmented) when a half would be empty (count < 2).
		{lib: "ompi", c: Bcast, ranks: 300, elem: 16384, count: 1, want: "chain", segment: 1},
		{lib: "ompi", c: Bcast, ranks: 300, elem: 8192, count: 2, want: "split_binary"},
		{lib: "ompi", c: Bcast, ranks: 300, elem: 8192, count: 3, want: "split_binary"},
		// Chain (2) and pipeline (3) with segment size 0 and fan-out 0:
		// one chain, the whole vector at once. Size < 4: 131072 <= b <
		// 262144 chain; < 32 B pipeline.
		{lib: "ompi", c: Bcast, ranks: 3, elem: 8, count: 20000, want: "chain", segment: 20000, rule: "forced to 1"},
		{lib: "ompi", c: Bcast, ranks: 2, elem: 8, count: 1, want: "chain", segment: 1},
		// Reduce Rabenseifner (7): size < 4, < 8 B;
		// ompi_coll_base_reduce_intra_redscat_gather runs basic_linear when
		// count < the largest power of two <= size (2 for 3).
		{lib: "ompi", c: Reduce, ranks: 3, elem: 1, count: 1, want: "basic_linear", rule: "count 1 < 2"},
		{lib: "ompi", c: Reduce, ranks: 3, elem: 1, count: 2, want: "rabenseifner", rule: "approximate"},
		{lib: "ompi", c: Reduce, ranks: 2, elem: 1, count: 2, want: "rabenseifner"},
		// Reduce chain (2): 4 <= size < 8, 4096 <= b < 65536, unsegmented.
		{lib: "ompi", c: Reduce, ranks: 5, elem: 8, count: 1024, want: "chain", segment: 1024},
		// Reduce binary (4): 8 <= size < 16, < 8192 B, unsegmented.
		{lib: "ompi", c: Reduce, ranks: 12, elem: 8, count: 100, want: "segmented_binary", segment: 100},
		// Allgather recursive doubling (3) on a non-power of two runs Bruck;
		// neighbor exchange (5) on an odd size runs the ring; two_proc (6)
		// on 2 ranks is one exchange, the ring on 2.
		{lib: "ompi", c: Allgather, ranks: 100, elem: 8, count: 100, want: "bruck", rule: "not a power of two"},
		{lib: "ompi", c: Allgather, ranks: 129, elem: 8, count: 129 * 4096, want: "ring", rule: "is odd"},
		{lib: "ompi", c: Allgather, ranks: 2, elem: 8, count: 2, want: "ring"},
		// Alltoall linear_sync (4) with max_requests 0 posts everything:
		// 8 <= size < 16, < 262144 B per pair.
		{lib: "ompi", c: Alltoall, ranks: 10, elem: 8, count: 100, want: "linear", rule: "max_requests 0"},
		// Reduce_scatter, 256 <= size < 512, >= 1024 B: butterfly (4).
		{lib: "ompi", c: ReduceScatter, ranks: 300, elem: 8, count: 1 << 19, want: "butterfly", rule: "pick algorithm 4, butterfly"},
	})
}

// The nonoverlapping allreduce is Open MPI's tuned reduce, then its tuned
// bcast, picked for the same ranks and count (rows of
// coll_tuned_decision_fixed.c).
func TestNonoverlappingComposition(t *testing.T) {
	a, err := Lookup(Allreduce, "nonoverlapping")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ranks     int
		count     int64
		red, bc   string
		bcSegment int64
	}{
		// 200 ranks, 8 B: reduce size < 256 binomial; bcast 128 <= size <
		// 256, 2 <= b < 16384 binary tree.
		{200, 1, "binomial", "binary", 0},
		// 1024 ranks, 8 B: reduce 512 <= size < 2048 binomial; bcast
		// 1024 <= size < 2048, < 524288 B knomial.
		{1024, 1, "binomial", "knomial", 0},
		// 300 ranks, 1 KiB: reduce 256 <= size < 512, < 8192 B binomial;
		// bcast 256 <= size < 1024, < 16384 B knomial.
		{300, 128, "binomial", "knomial", 0},
		// 5 ranks, 8 KiB: reduce 4 <= size < 8, 4096 <= b < 65536 chain
		// (one unsegmented chain); bcast 4 <= size < 8, 8192 <= b <
		// 1048576 basic linear.
		{5, 1024, "chain", "linear", 0},
	} {
		p := Params{Ranks: tc.ranks, Count: tc.count, ElemSize: 8}
		comp, ok, err := CompositeOf(a, p)
		if err != nil || !ok || len(comp.Full) != 2 || comp.Segments != 1 {
			t.Fatalf("%d ranks: %+v %v %v", tc.ranks, comp, ok, err)
		}
		red, bc := comp.Full[0].Parts[0], comp.Full[1].Parts[0]
		if red.Algorithm.ID() != "reduce/"+tc.red || bc.Algorithm.ID() != "bcast/"+tc.bc || red.Params.Root != 0 || bc.Params.Root != 0 {
			t.Errorf("%d ranks %d elements: %s (root %d) then %s (root %d), want reduce/%s then bcast/%s from 0",
				tc.ranks, tc.count, red.Algorithm.ID(), red.Params.Root, bc.Algorithm.ID(), bc.Params.Root, tc.red, tc.bc)
		}
	}
	// And it moves the right data where its parts differ in shape.
	for _, p := range []Params{{Ranks: 200, Count: 1}, {Ranks: 5, Count: 1024}, {Ranks: 37, Count: 300}} {
		if _, err := Check(a, p, 7, sim.RandomLatency(30*sim.Nanosecond)); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// MPICH's and Open MPI 5.0's choices at points read off their sources.
func TestLibraryVersions(t *testing.T) {
	runSelCases(t, []selCase{
		// MPICH 3.3.2 MPIR_Allreduce_intra_auto: recursive doubling at
		// <= 2048 B or count < pof2, reduce_scatter_allgather beyond, as
		// written; at the CVARs' defaults its size is 0 (below).
		{lib: "mpich", c: Allreduce, ranks: 64, elem: 8, count: 256, want: "recursive_doubling"},
		// MPICH 3.3.2's allreduce takes its size as 0 at the CVARs'
		// defaults (allreduce.c: nbytes is count x type size only when
		// MPIR_CVAR_MAX_SMP_ALLREDUCE_MSG_SIZE is set): recursive doubling
		// past 2048 B too (Rabenseifner here before an audit).
		{lib: "mpich", c: Allreduce, ranks: 64, elem: 8, count: 257, want: "recursive_doubling"},
		{lib: "mpich", c: Allreduce, ranks: 7, elem: 8, count: 1 << 17, want: "recursive_doubling"},
		{lib: "mpich", c: Allreduce, ranks: 4, elem: 8, count: 8, want: "recursive_doubling"},
		// MPICH 4.3.2 mpir/generic.json: <= 8 B recursive doubling; count >=
		// pow2 reduce_scatter_allgather (64 B on 4 ranks: 8 elements >= 4).
		{lib: "mpich4", c: Allreduce, ranks: 4, elem: 8, count: 8, want: "rabenseifner"},
		{lib: "mpich4", c: Allreduce, ranks: 4, elem: 8, count: 1, want: "recursive_doubling"},
		{lib: "mpich4", c: Allreduce, ranks: 64, elem: 8, count: 63, want: "recursive_doubling"},
		// MPIR_Bcast_intra_auto: < 12288 B or < 8 ranks binomial; < 524288 B
		// on a power of two scatter + recursive doubling; else ring.
		{lib: "mpich", c: Bcast, ranks: 64, elem: 8, count: 1, want: "binomial"},
		{lib: "mpich", c: Bcast, ranks: 7, elem: 8, count: 1 << 17, want: "binomial"},
		{lib: "mpich", c: Bcast, ranks: 64, elem: 8, count: 12500, want: "scatter_rd_allgather"},
		{lib: "mpich", c: Bcast, ranks: 64, elem: 8, count: 1 << 17, want: "scatter_ring_allgather"},
		{lib: "mpich", c: Bcast, ranks: 60, elem: 8, count: 12500, want: "scatter_ring_allgather"},
		// 4.3.2: <= 12288 B (inclusive) binomial.
		{lib: "mpich4", c: Bcast, ranks: 64, elem: 8, count: 1536, want: "binomial"},
		{lib: "mpich", c: Bcast, ranks: 64, elem: 8, count: 1536, want: "scatter_rd_allgather"},
		// MPIR_Reduce_intra_auto: > 2048 B and count >= pof2:
		// reduce_scatter_gather, any number of ranks.
		{lib: "mpich", c: Reduce, ranks: 6, elem: 8, count: 1000, want: "rabenseifner"},
		{lib: "mpich", c: Reduce, ranks: 6, elem: 8, count: 256, want: "binomial"},
		// MPIR_Allgather_intra_auto (total bytes).
		{lib: "mpich", c: Allgather, ranks: 6, elem: 8, count: 60, want: "bruck"},
		{lib: "mpich", c: Allgather, ranks: 6, elem: 8, count: 6 << 17, want: "ring"},
		{lib: "mpich", c: Allgather, ranks: 8, elem: 8, count: 8000, want: "recursive_doubling"},
		// MPIR_Alltoall_intra_auto (per pair): <= 256 B and >= 8 ranks
		// Bruck; <= 32768 B scattered; else pairwise. 4.3.2: under 8 ranks
		// no Bruck.
		{lib: "mpich", c: Alltoall, ranks: 64, elem: 8, count: 8, want: "bruck"},
		{lib: "mpich", c: Alltoall, ranks: 4, elem: 8, count: 8, want: "scattered"},
		{lib: "mpich", c: Alltoall, ranks: 64, elem: 8, count: 4096, want: "scattered"},
		{lib: "mpich", c: Alltoall, ranks: 64, elem: 8, count: 1 << 13, want: "pairwise"},
		{lib: "mpich4", c: Alltoall, ranks: 4, elem: 8, count: 1 << 13, want: "pairwise"},
		// MPIR_Reduce_scatter_intra_auto, commutative.
		{lib: "mpich", c: ReduceScatter, ranks: 64, elem: 8, count: 1 << 16, want: "pairwise"},
		{lib: "mpich4", c: Barrier, ranks: 64, want: "dissemination"},
		// Node-aware communicators (ranks share nodes): MPICH 3.3.2 runs
		// MPIR_Allreduce_intra_smp; 4.3.2's ch4 composition alpha on several
		// nodes, with the node roots' allreduce from mpir/generic.json.
		{lib: "mpich", c: Allreduce, ranks: 16, elem: 8, count: 1000, nodeSize: 4, want: "smp"},
		{lib: "mpich", c: Allreduce, ranks: 16, elem: 8, count: 1000, nodeSize: 1, want: "recursive_doubling"},
		{lib: "mpich4", c: Allreduce, ranks: 16, elem: 8, count: 1000, nodeSize: 4, want: "smp", rule: "4 node roots (mpir/generic.json: built-in op, count >= pow2"},
		{lib: "mpich4", c: Allreduce, ranks: 16, elem: 8, count: 1000, nodeSize: 16, want: "rabenseifner", rule: "composition gamma"},
		// ch4/generic.json on node-aware communicators: bcast alpha under 8
		// ranks or 12288 B, beta for a power of two under 524288 B, gamma
		// (the MPIR bcast) beyond; reduce beta up to 2048 B, alpha above;
		// barrier alpha.
		{lib: "mpich4", c: Bcast, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "smp", rule: "composition alpha"},
		{lib: "mpich4", c: Bcast, ranks: 16, elem: 8, count: 12500, nodeSize: 4, want: "smp", rule: "composition beta"},
		{lib: "mpich4", c: Bcast, ranks: 12, elem: 8, count: 12500, nodeSize: 4, want: "scatter_ring_allgather", rule: "composition gamma"},
		{lib: "mpich4", c: Reduce, ranks: 16, elem: 8, count: 256, nodeSize: 4, want: "smp", rule: "composition beta"},
		{lib: "mpich4", c: Reduce, ranks: 16, elem: 8, count: 257, nodeSize: 4, want: "smp", rule: "composition alpha"},
		{lib: "mpich4", c: Barrier, ranks: 16, nodeSize: 4, want: "smp", rule: "composition alpha"},
		// Open MPI 5.0.10: coll/han on several nodes, coll/tuned (4.1's
		// tables) on one or for what HAN lacks.
		{lib: "ompi5", c: Allreduce, ranks: 16, elem: 8, count: 1000, nodeSize: 4, want: "han"},
		// One node: 4.1's allreduce table, 16 <= size < 32, 64 <= b < 4096.
		{lib: "ompi5", c: Allreduce, ranks: 16, elem: 8, count: 100, nodeSize: 16, want: "recursive_doubling", rule: "one node"},
		{lib: "ompi5", c: Allreduce, ranks: 16, elem: 8, count: 100, want: "recursive_doubling", rule: "one node"},
		// One rank on each node: HAN steps aside (coll_han_subcomms.c at
		// v5.0.10; collsim ran han: an audit). 16 ranks of 1 MiB: tuned's
		// Rabenseifner (algorithm 6); 64 KiB bcast: tuned's table.
		{lib: "ompi5", c: Allreduce, ranks: 16, elem: 8, count: 131072, nodeSize: 1, want: "rabenseifner", rule: "one rank on each node: coll/han steps aside"},

		{lib: "ompi5", c: Bcast, ranks: 18, elem: 8, count: 1, nodeSize: 4, want: "knomial", rule: "unequal numbers of ranks"},
		{lib: "ompi5", c: Bcast, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "han"},
		{lib: "ompi5", c: Reduce, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "han"},
		// MPICH 3.3.2 on node-aware communicators: bcast.c and reduce.c
		// take the SMP algorithms first; MPIR_Bcast_intra_smp's branches:
		// short (< 12288 B), medium (< 524288 B, power of two), else the
		// ring scatter-allgather on everyone.
		{lib: "mpich", c: Bcast, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "smp", rule: "short branch"},
		{lib: "mpich", c: Bcast, ranks: 16, elem: 8, count: 12500, nodeSize: 4, want: "smp", rule: "medium branch"},
		{lib: "mpich", c: Bcast, ranks: 12, elem: 8, count: 12500, nodeSize: 4, want: "scatter_ring_allgather", rule: "non-power-of-two branch"},
		{lib: "mpich", c: Bcast, ranks: 16, elem: 8, count: 1 << 17, nodeSize: 4, want: "scatter_ring_allgather"},
		{lib: "mpich", c: Reduce, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "smp"},
		// barrier.c: SMP first on a node-aware communicator; coll/han's
		// barrier on several nodes in Open MPI 5.0.
		{lib: "mpich", c: Barrier, ranks: 16, nodeSize: 4, want: "smp"},
		{lib: "mpich", c: Barrier, ranks: 16, want: "dissemination"},
		{lib: "ompi5", c: Barrier, ranks: 16, nodeSize: 4, want: "han"},
		{lib: "ompi5", c: Barrier, ranks: 16, nodeSize: 16, want: "recursive_doubling", rule: "one node"},
		// Alltoall, 16 <= size < 32, 4 <= b < 512 per pair: modified Bruck.
		{lib: "ompi5", c: Alltoall, ranks: 16, elem: 8, count: 1, nodeSize: 4, want: "bruck", rule: "coll/han has no alltoall"},
	})
	// The parts of the two hierarchical allreduces, read off the sources.
	han, _ := Lookup(Allreduce, "han")
	// 16 ranks on 4 nodes, 20000 doubles = 160000 B: three segments of
	// 65536 B = 8192 elements (the last 3616). Per full segment: tuned
	// reduce on 4 ranks (4 <= size < 8: 65536 <= b < 262144 binomial),
	// libnbc ireduce on 4 leaders (commutative, p > 2, count >= 4:
	// Rabenseifner), libnbc ibcast on 4 (p <= 4: linear), tuned bcast on 4
	// (65536 B in 4 <= size < 8: 8192 <= b < 1048576 basic linear).
	comp, _, err := CompositeOf(han, Params{Ranks: 16, Count: 20000, ElemSize: 8, NodeSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range comp.Full {
		got = append(got, st.Parts[0].Algorithm.ID())
	}
	if want := "reduce/binomial reduce/rabenseifner bcast/linear bcast/linear"; strings.Join(got, " ") != want || comp.Segments != 3 {
		t.Errorf("han parts %v in %d segments, want %s in 3", got, comp.Segments, want)
	}
	// MPICH 3.3.2 SMP, 16 ranks on 4 nodes, 1000 doubles: node reduce on 4
	// (8000 B > 2048, count >= 4: Rabenseifner), roots allreduce on 4
	// (MPIR_Allreduce_intra_auto, its size 0 at the CVARs' defaults:
	// recursive doubling), node bcast on 4 (fewer than 8 ranks: binomial).
	smp, _ := Lookup(Allreduce, "smp")
	comp, _, err = CompositeOf(smp, Params{Ranks: 16, Count: 1000, ElemSize: 8, NodeSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, st := range comp.Full {
		got = append(got, st.Parts[0].Algorithm.ID())
	}
	if want := "reduce/rabenseifner allreduce/recursive_doubling bcast/binomial"; strings.Join(got, " ") != want || comp.Segments != 1 {
		t.Errorf("smp parts %v in %d segments, want %s in 1", got, comp.Segments, want)
	}
	// HAN's bcast, 16 ranks on 4 nodes, root 5 (node 1, local rank 1),
	// 20000 doubles: 3 segments. The first segment among the 4 ranks of
	// local rank 1 by coll/tuned (4 <= size < 8, 8192 <= b < 1048576: basic
	// linear), the later ones by libnbc (4 ranks: linear); inside each node
	// coll/tuned's bcast from local rank 1 (linear, same row).
	hb, _ := Lookup(Bcast, "han")
	comp, _, err = CompositeOf(hb, Params{Ranks: 16, Count: 20000, ElemSize: 8, NodeSize: 4, Root: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.First) != 2 || comp.First[0].Local || comp.First[0].Parts[0].Params.Root != 1 || !comp.First[1].Local || comp.First[1].Parts[0].Params.Root != 1 ||
		comp.First[0].Parts[0].Algorithm.ID() != "bcast/linear" || comp.Full[0].Parts[0].Algorithm.ID() != "bcast/linear" {
		t.Errorf("han bcast stages: %+v", comp)
	}
	// MPICH 3.3.2's short SMP bcast, root 5 on node 1: rank 5 hands the
	// vector to rank 4 (a 2-rank linear bcast rooted at 1), the 4 node
	// roots broadcast from node 1 (fewer than 8 ranks: binomial), every
	// node from its rank 0 (binomial).
	sb, _ := Lookup(Bcast, "smp")
	comp, _, err = CompositeOf(sb, Params{Ranks: 16, Count: 1, ElemSize: 8, NodeSize: 4, Root: 5})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, st := range comp.Full {
		got = append(got, fmt.Sprintf("%s/%d/root%d", st.Parts[0].Algorithm.ID(), st.Parts[0].Params.Ranks, st.Parts[0].Params.Root))
	}
	if want := "bcast/linear/2/root1 bcast/binomial/4/root1 bcast/binomial/4/root0"; strings.Join(got, " ") != want {
		t.Errorf("smp bcast stages %v, want %s", got, want)
	}
	// MPICH 4.3.2's reduce composition alpha, root 5: each node reduces
	// to its rank 0 (binomial, standing in for shared memory), the 4 node
	// roots to rank 0 (mpir/generic.json: 8000 B > 2048, count >= 4:
	// reduce_scatter_gather), then rank 0 hands the result to rank 5 (a
	// 2-rank linear bcast from rank 0).
	sr, _ := Lookup(Reduce, "smp")
	comp, _, err = CompositeOf(sr, Params{Ranks: 16, Count: 1000, ElemSize: 8, NodeSize: 4, Root: 5, Library: "mpich4"})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, st := range comp.Full {
		got = append(got, fmt.Sprintf("%s/%d/root%d", st.Parts[0].Algorithm.ID(), st.Parts[0].Params.Ranks, st.Parts[0].Params.Root))
	}
	if want := "reduce/binomial/4/root0 reduce/rabenseifner/4/root0 bcast/linear/2/root0"; strings.Join(got, " ") != want {
		t.Errorf("mpich4 smp reduce stages %v, want %s", got, want)
	}
	if _, err := Select("intel", Allreduce, Params{Ranks: 4, Count: 1}); err == nil || !strings.Contains(err.Error(), "ompi, ompi40, ompi5, mpich, mpich4") {
		t.Errorf("unknown selector: %v", err)
	}
}

// Whatever a selector picks builds and moves the right data, for every p
// from 1 to 18 and, up to 64, the powers of two, their neighbours, primes
// and multiples of the node size (selectionRanks), at counts around
// p (0, 1, not divisible by p) and element sizes that put the byte count
// in many table rows, up to 1 MiB elements (so that Open MPI 4.0's
// segmented ring runs in several 1 MiB phases and its bcast and reduce
// pipelines in many segments); 17p+5 elements of 8 B reach its split
// binary tree and binomial reduce in 1 KiB segments (2216 B on 16 ranks,
// two segments a half, three in all; not for alltoall, where it would be
// per pair). A call a selector does not cover must be refused, and only
// those (selectorCovers).
func TestEverySelectionRuns(t *testing.T) {
	for _, lib := range Selectors {
		t.Run(lib, func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for _, p := range selectionRanks() {
				for _, c := range Collectives {
					for _, n := range []int64{0, 1, int64(p) - 1, int64(p), int64(p) + 1, 3*int64(p) - 1, 17*int64(p) + 5} {
						for _, es := range []int64{1, 8, 65536, 1 << 20} {
							for _, ns := range []int{0, 4} {
								if n < 0 || n > 3*int64(p) && c == Alltoall {
									continue
								}
								params := Params{Ranks: p, Count: n, ElemSize: es, NodeSize: ns, Root: p / 3}
								s, err := Select(lib, c, params)
								if err != nil {
									t.Fatalf("%s %s %+v: %v", lib, c, params, err)
								}
								q := s.Params
								q.ElemSize = 0 // the element size changes the time, not the ops
								key := fmt.Sprintf("%s %+v", s.Algorithm.ID(), q)
								if seen[key] {
									continue // the same algorithm on the same call: checked already
								}
								seen[key] = true
								if _, err := Check(s.Algorithm, s.Params, uint64(p)*7+uint64(n), sim.RandomLatency(20*sim.Nanosecond)); err != nil {
									t.Fatalf("%s %s %+v chose %s (%s): %v", lib, c, params, s.Algorithm.ID(), s.Rule, err)
								}
							}
						}
					}
				}
			}
		})
	}
}

// selectionRanks are the communicator sizes TestEverySelectionRuns tries:
// every one up to 18, where the libraries' rules change most often (size
// < 4, < 8, <= 12, < 16 ...), then around each power of two the rules
// compare with (31, 32, 33; 63, 64), primes (23, 29, 37, 47), multiples of
// the node size 4 and not (20, 24, 25, 40, 48, 49). Every size to 64 took
// four minutes of CPU; these take half a minute and cover the same
// statements of the package (go test -coverprofile, compared per function).
func selectionRanks() []int {
	var ps []int
	for p := 1; p <= 18; p++ {
		ps = append(ps, p)
	}
	return append(ps, 20, 23, 24, 25, 29, 31, 32, 33, 37, 40, 47, 48, 49, 63, 64)
}

// TestHANStepsAsideForOneRankPerNode: with one rank on each node, Open MPI
// 5.0 runs coll/tuned, 4.1's tables, for every collective HAN would take
// on several nodes (coll_han_subcomms.c at v5.0.10; collsim ran han there:
// an audit).
func TestHANStepsAsideForOneRankPerNode(t *testing.T) {
	for _, c := range []Collective{Allreduce, Bcast, Reduce, Barrier, Allgather, Gather, Scatter} {
		for _, count := range []int64{1, 8192, 131072} {
			p := Params{Ranks: 16, Count: count, ElemSize: 8, NodeSize: 1}
			if c == Barrier {
				p.Count = 0
			}
			v5, err5 := Select("ompi5", c, p)
			v4, err4 := Select("ompi", c, p)
			if err5 != nil || err4 != nil {
				t.Fatalf("%s of %d: %v, %v", c, count, err5, err4)
			}
			if v5.Algorithm.ID() != v4.Algorithm.ID() || !strings.Contains(v5.Rule, "one rank on each node") {
				t.Errorf("%s of %d on 16 nodes of one rank: 5.0 runs %s (%s), 4.1's tables %s", c, count, v5.Algorithm.ID(), v5.Rule, v4.Algorithm.ID())
			}
		}
	}
}
