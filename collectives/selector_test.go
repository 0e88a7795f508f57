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
	// A choice collsim cannot run is an error that names it.
	_, err := Select("mpich", Alltoall, Params{Ranks: 64, Count: 8, ElemSize: 4})
	if err == nil || !strings.Contains(err.Error(), "mpich chooses alltoall/bruck") {
		t.Errorf("unsupported choice: %v", err)
	}
	if _, err := Select("ompi", Bcast, Params{Ranks: 4, Count: 1}); err == nil || !strings.Contains(err.Error(), "name an algorithm") {
		t.Errorf("uncovered collective: %v", err)
	}
}
