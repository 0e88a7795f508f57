package realrun_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/sim/realrun"
)

// TestNoCheckDuringAnotherRanksCall: a rank whose call ends early checks
// its data only once every rank's call has ended. Rank 0 has nothing to
// do; rank 1 copies 8 MiB eight times over (milliseconds). Each rank notes
// when its check starts, and each timed op's end is in the timeline (the
// same clock): no check may start before rank 1's last copy ends. Without
// Bench's barrier after the call, rank 0 checks while rank 1 still copies.
func TestNoCheckDuringAnotherRanksCall(t *testing.T) {
	const elems = 1 << 20
	var copies sim.Program
	for i := range 8 {
		op := sim.Op{Kind: sim.OpCalc, Src: sim.Region{Count: elems}, Data: sim.Region{Buf: 1, Count: elems}}
		if i > 0 {
			op.After = []int32{int32(i - 1)}
		}
		copies = append(copies, op)
	}
	s := sim.FromPrograms("copies", []sim.Program{nil, copies}, 0)
	var mu sync.Mutex
	checked := make([]time.Time, 2)
	results := make([][]realrun.Result, 2)
	errs := runLocal(t, 2, realrun.TCP, func(r *realrun.Rank, rank int) error {
		job := realrun.Job{
			Name:     "copies",
			Schedule: s,
			Data: func() ([][]uint64, error) {
				return [][]uint64{make([]uint64, elems), make([]uint64, elems)}, nil
			},
			Verify: func([][]uint64) error {
				mu.Lock()
				defer mu.Unlock()
				checked[rank] = time.Now()
				return nil
			},
		}
		res, err := realrun.Bench(r, []realrun.Job{job}, 0, 1, true, nil)
		results[rank] = res
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	spans := results[1][0].Timeline
	if len(spans) != len(copies) {
		t.Fatalf("rank 1's timeline has %d ops, want %d", len(spans), len(copies))
	}
	callEnd := spans[len(spans)-1].End
	for rank, at := range checked {
		if at.UnixNano() < callEnd {
			t.Errorf("rank %d checked its data %v before rank 1's call ended", rank, time.Duration(callEnd-at.UnixNano()))
		}
	}
}

// TestBenchInterleave: with interleave, Bench runs one iteration of every
// job, then the next (warm-up rounds first); without, each job's
// iterations one after another. Written out by hand for two jobs, one
// warm-up and two timed iterations: A B A B A B, against A A A B B B.
// Each job keeps its own buffers between rounds: the jobs are allreduces
// of different sizes with real data, each checked after every iteration,
// and each result has its own name, size and two times, in job order.
func TestBenchInterleave(t *testing.T) {
	ring, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	for _, interleave := range []bool{true, false} {
		want := "ABABAB"
		if !interleave {
			want = "AAABBB"
		}
		var mu sync.Mutex
		order := make([]string, 2) // by rank: the jobs whose data was made, in order
		results := make([][]realrun.Result, 2)
		errs := runLocal(t, 2, realrun.TCP, func(r *realrun.Rank, rank int) error {
			var jobs []realrun.Job
			for k, count := range []int{1000, 3} { // A, B
				p := collectives.Params{Ranks: 2, Count: int64(count), ElemSize: 8}
				s, err := ring.Build(p)
				if err != nil {
					return err
				}
				jobs = append(jobs, realrun.Job{
					Name:     string(rune('A' + k)),
					Bytes:    p.SizeBytes(collectives.Allreduce),
					Schedule: s,
					Data: func() ([][]uint64, error) {
						mu.Lock()
						order[rank] += string(rune('A' + k))
						mu.Unlock()
						return ring.RankData(p, 7, rank)
					},
					Verify: func(b [][]uint64) error { return ring.VerifyRank(p, 7, rank, b) },
				})
			}
			res, err := realrun.BenchInOrder(r, jobs, 1, 2, false, interleave, nil)
			results[rank] = res
			return err
		})
		for _, err := range errs {
			if err != nil {
				t.Fatalf("interleave %t: %v", interleave, err)
			}
		}
		for rank := range 2 {
			if order[rank] != want {
				t.Errorf("interleave %t: rank %d made the jobs' data in the order %s, want %s", interleave, rank, order[rank], want)
			}
			res := results[rank]
			if len(res) != 2 {
				t.Fatalf("interleave %t: rank %d has %d results, want 2", interleave, rank, len(res))
			}
			for k, r := range res {
				if wantName, wantBytes := string(rune('A'+k)), int64([]int{8000, 24}[k]); r.Name != wantName || r.Bytes != wantBytes || len(r.Times) != 2 || !r.Verified {
					t.Errorf("interleave %t: rank %d's result %d is %s of %d B, %d times, verified %t; want %s of %d B, 2 times, verified", interleave, rank, k, r.Name, r.Bytes, len(r.Times), r.Verified, wantName, wantBytes)
				}
			}
		}
	}
}

// Summarize keeps the slowest rank's time of each iteration in the order
// they ran, and their median: by hand, rank 0 took 3, 1 and 2 ms, rank 1
// 1, 5 and 1 ms, so the slowest took 3, 5 and 2 ms, median 3 ms.
func TestSummarizeSlowest(t *testing.T) {
	ms := time.Millisecond
	res := func(times ...time.Duration) []realrun.Result {
		return []realrun.Result{{Timing: realrun.Timing{Name: "x", Iterations: 3}, Times: times}}
	}
	sums := realrun.Summarize([]realrun.Report{{Rank: 0, Results: res(3*ms, ms, 2*ms)}, {Rank: 1, Results: res(ms, 5*ms, ms)}})
	if len(sums) != 1 || !slices.Equal(sums[0].Slowest, []time.Duration{3 * ms, 5 * ms, 2 * ms}) || sums[0].Median != 3*ms {
		t.Errorf("summary %+v, want slowest 3, 5, 2 ms in that order and median 3 ms", sums)
	}
}
