package collectives

import (
	"strconv"
	"strings"
	"testing"
)

func TestOmpiAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		c      Collective
		name   string
		number int
		exact  bool
	}{
		{Allreduce, "ring", 4, true},
		{Allreduce, "rabenseifner", 6, false}, // Open MPI's fold swaps half vectors (an audit)
		{Allreduce, "nonoverlapping", 2, true},
		{Bcast, "chain", 3, true}, // Open MPI's pipeline: one chain, segments from the rules file
		{Bcast, "scatter_rd_allgather", 8, true},
		{Bcast, "scatter_ring_allgather", 9, true},
		{Reduce, "segmented_binary", 4, false}, // the binary tree numbered differently
		{Allgather, "ring", 4, true},
		{Alltoall, "bruck", 3, false},
		// ompi_coll_base_barrier_intra_bruck sends to rank+distance and
		// receives from rank-distance, distance doubling: dissemination.
		{Barrier, "dissemination", 4, true},
	} {
		n, note, ok := OmpiAlgorithm(tc.c, tc.name)
		if !ok || n != tc.number || (note == "") != tc.exact {
			t.Errorf("%s/%s: got %d %q %v, want %d exact=%v", tc.c, tc.name, n, note, ok, tc.number, tc.exact)
		}
	}
	for _, name := range []string{"suara", "reduce_bcast", "han"} {
		if _, _, ok := OmpiAlgorithm(Allreduce, name); ok {
			t.Errorf("Open MPI's coll/tuned has no %s", name)
		}
	}
	// Every number found leads back to the same collsim algorithm.
	for _, a := range All() {
		if n, _, ok := OmpiAlgorithm(a.Collective, a.Name); ok {
			if ours := ompiAlgs[a.Collective][n].ours; ours != a.Name {
				t.Errorf("%s: number %d is %q", a.ID(), n, ours)
			}
		}
	}
}

// The written file follows the format: counts, then that many entries.
func TestWriteOmpiRules(t *testing.T) {
	var b strings.Builder
	err := WriteOmpiRules(&b, "test\nsecond line", []OmpiRules{
		{Collective: Allreduce, BySize: map[int][]OmpiRule{64: {{0, 3, 0}, {8192, 6, 0}}, 16: {{0, 4, 0}}}},
		{Collective: Bcast, BySize: map[int][]OmpiRule{128: {{0, 6, 0}, {1 << 20, 3, 65536}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var nums []int64
	for _, line := range strings.Split(b.String(), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("token %q in %q", f, line)
			}
			nums = append(nums, v)
		}
	}
	// Each collective leads with communicator size 0, whose one rule,
	// algorithm 0, sends the communicators below the first tuned size to
	// Open MPI's fixed rules (its lookup gives them the first size's
	// rules otherwise: an audit).
	want := []int64{2, 2, 3, 0, 1, 0, 0, 0, 0, 16, 1, 0, 4, 0, 0, 64, 2, 0, 3, 0, 0, 8192, 6, 0, 0, 7, 2, 0, 1, 0, 0, 0, 0, 128, 2, 0, 6, 0, 0, 1 << 20, 3, 0, 65536}
	if len(nums) != len(want) {
		t.Fatalf("got %v\nwant %v\n%s", nums, want, b.String())
	}
	for i := range want {
		if nums[i] != want[i] {
			t.Fatalf("got %v\nwant %v\n%s", nums, want, b.String())
		}
	}
	if err := WriteOmpiRules(&b, "", []OmpiRules{{Collective: Allreduce, BySize: map[int][]OmpiRule{4: {{8, 1, 0}}}}}); err == nil {
		t.Error("rules not starting at 0 bytes accepted")
	}
}

// TestOmpiMessageBytesWholeElements: Open MPI's rules read dsize x count,
// a whole number of elements: 64 KiB of 8-byte elements (8192) over 6
// ranks is 1365 whole elements a rank, 10920 bytes (it read 10922, a
// fraction of an element, where the alltoall path read whole elements).
func TestOmpiMessageBytesWholeElements(t *testing.T) {
	for _, c := range []Collective{Gather, Scatter, Allgather} {
		if got, _ := OmpiMessageBytes(c, Params{Ranks: 6, Count: 8192, ElemSize: 8}); got != 1365*8 {
			t.Errorf("%s: %d bytes per rank, want 1365 x 8 = 10920", c, got)
		}
	}
	if got, _ := OmpiMessageBytes(Alltoall, Params{Ranks: 6, Count: 1365, ElemSize: 8}); got != 10920 {
		t.Errorf("alltoall: %d bytes per pair, want 10920", got)
	}
}

// TestOmpiOneRankIsCollSelf: on one rank Open MPI runs coll/self, not
// coll/tuned's rules; every Open MPI selector's rule says so (barrier's
// read as if the tuned rules had chosen recursive doubling), and none
// quotes a table's pick (allgather's said "pick algorithm 6, two_proc",
// a row tuned's code reaches only on exactly 2 ranks: an audit).
func TestOmpiOneRankIsCollSelf(t *testing.T) {
	for _, lib := range []string{"ompi", "ompi40", "ompi5"} {
		for _, c := range []Collective{Barrier, Allreduce, Bcast, Alltoall, Allgather, Reduce} {
			sel, err := Select(lib, c, Params{Ranks: 1, Count: 8})
			if err != nil {
				t.Fatalf("%s %s: %v", lib, c, err)
			}
			if !strings.Contains(sel.Rule, "coll/self") || strings.Contains(sel.Rule, "pick") || strings.Contains(sel.Rule, "two_proc") ||
				!strings.Contains(sel.Rule, "as "+sel.Algorithm.Name+" on 1 rank") {
				t.Errorf("%s %s on 1 rank: %q", lib, c, sel.Rule)
			}
		}
	}
}
