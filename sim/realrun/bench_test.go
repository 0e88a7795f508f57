package realrun_test

import (
	"sync"
	"testing"
	"time"

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
