package collectives

import (
	"strings"
	"testing"
)

// Points read off Open MPI 4.1's allreduce table and MPICH's thresholds.
func TestSelectors(t *testing.T) {
	cases := []struct {
		lib   string
		c     Collective
		ranks int
		bytes int64
		want  string
	}{
		{"ompi", Allreduce, 2, 4, "ring"},
		{"ompi", Allreduce, 2, 100, "recursive_doubling"},
		{"ompi", Allreduce, 2, 100000, "segmented_ring"},
		{"ompi", Allreduce, 2, 1 << 20, "rabenseifner"},
		{"ompi", Allreduce, 64, 8, "recursive_doubling"},
		{"ompi", Allreduce, 64, 1 << 20, "rabenseifner"},
		{"ompi", Allreduce, 200, 8, "reduce_bcast"},
		{"ompi", Allreduce, 200, 200000, "recursive_doubling"},
		{"ompi", Allreduce, 1024, 8192, "recursive_doubling"},
		{"ompi", Allreduce, 3000, 3000, "segmented_ring"},
		{"ompi", Allreduce, 5000, 20000, "recursive_doubling"},
		{"ompi", Allreduce, 5000, 1 << 24, "rabenseifner"},
		{"ompi", Bcast, 64, 8, "knomial"},
		{"ompi", Bcast, 2048, 1 << 20, "scatter_allgather_rd"},
		{"ompi", Reduce, 100, 1 << 20, "binomial"},
		{"ompi", Reduce, 5, 8192, "chain"},
		{"ompi", Allgather, 64, 64 * 8, "recursive_doubling"},
		{"ompi", Allgather, 100, 100 * 8, "bruck"}, // recursive doubling needs a power of two
		{"ompi", Allgather, 128, 128 * 4096, "neighbor_exchange"},
		{"ompi", Allgather, 129, 129 * 4096, "ring"},
		{"ompi", ReduceScatter, 16, 1 << 20, "ring"},
		{"ompi", Alltoall, 64, 64 * 100, "bruck"},      // 100 B per pair
		{"ompi", Alltoall, 300, 300 * 16384, "linear"}, // 16 KiB per pair
		{"ompi", Barrier, 6, 0, "linear"},
		{"ompi", Barrier, 300, 0, "tree"},
		{"mpich", Allreduce, 64, 2048, "recursive_doubling"},
		{"mpich", Allreduce, 64, 2052, "rabenseifner"},
		{"mpich", Bcast, 64, 8, "binomial"},
		{"mpich", Bcast, 7, 1 << 20, "binomial"},
		{"mpich", Bcast, 64, 1 << 20, "scatter_allgather"},
		{"mpich", Allgather, 6, 6 * 100, "bruck"},
		{"mpich", Allgather, 6, 6 << 20, "ring"},
		{"mpich", Alltoall, 64, 64 * 64 * 64 * 4, "linear"},
		{"mpich", Alltoall, 64, 64 * 64 * 1 << 16, "pairwise"},
		{"mpich", ReduceScatter, 64, 1 << 22, "pairwise"},
		{"mpich", Barrier, 64, 0, "dissemination"},
	}
	for _, tc := range cases {
		p := Params{Ranks: tc.ranks, Count: tc.bytes / 4, ElemSize: 4}
		if tc.c == Alltoall {
			p.Count = tc.bytes / 4 / int64(tc.ranks)
		}
		s, err := Select(tc.lib, tc.c, p)
		if err != nil {
			t.Errorf("%s %s p=%d %dB: %v", tc.lib, tc.c, tc.ranks, tc.bytes, err)
			continue
		}
		if s.Algorithm.Name != tc.want || s.Rule == "" {
			t.Errorf("%s %s p=%d %dB chose %s (%s), want %s", tc.lib, tc.c, tc.ranks, tc.bytes, s.Algorithm.Name, s.Rule, tc.want)
		}
	}
	if s, err := Select("mpich", Bcast, Params{Ranks: 64, Count: 100000, ElemSize: 4}); err != nil || s.Algorithm.Name != "scatter_allgather_rd" {
		t.Errorf("mpich medium bcast on 64 ranks: %v %v", s.Algorithm.Name, err)
	}
	if s, err := Select("mpich", Alltoall, Params{Ranks: 64, Count: 8, ElemSize: 4}); err != nil || s.Algorithm.Name != "bruck" {
		t.Errorf("mpich short alltoall: %v %v", s.Algorithm.Name, err)
	}
	// MPICH's long reduce is Rabenseifner, which collsim runs for powers
	// of two only: on 6 ranks building it is a clear refusal, never a
	// wrong result.
	s, err := Select("mpich", Reduce, Params{Ranks: 6, Count: 1000, ElemSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Algorithm.Build(s.Params); err == nil || !strings.Contains(err.Error(), "use reduce/binomial") {
		t.Errorf("rabenseifner reduce on 6 ranks: %v", err)
	}
	// Open MPI's tables hold nothing collsim cannot run any more; a
	// collective without a table still says so.
	if _, err := Select("ompi", Scatter, Params{Ranks: 4, Count: 1}); err == nil || !strings.Contains(err.Error(), "not transcribed") {
		t.Errorf("scatter: %v", err)
	}
	if s, err := Select("ompi", Reduce, Params{Ranks: 300, Count: 3000, ElemSize: 4}); err != nil || s.Algorithm.Name != "in_order_binary" {
		t.Errorf("ompi reduce 12 KB on 300 ranks: %v %v", s.Algorithm.Name, err)
	}
	if s, err := Select("ompi", ReduceScatter, Params{Ranks: 300, Count: 1 << 20, ElemSize: 4}); err != nil || !strings.Contains(s.Rule, "butterfly (Traff's; run here as recursive halving") {
		t.Errorf("ompi butterfly: %v %v", s.Rule, err)
	}
	if s, err := Select("ompi", Bcast, Params{Ranks: 300, Count: 5000, ElemSize: 4}); err != nil || s.Algorithm.Name != "split_binary" {
		t.Errorf("ompi bcast 20 KB on 300 ranks: %v %v", s.Algorithm.Name, err)
	}

}
