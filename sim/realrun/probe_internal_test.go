package realrun

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestProbeCountsNoCopiesOfItsOwn: ranks 0 and 1 share memory, rank 2
// reaches both over TCP (another host, as it were), and every rank has a
// core of its own. Rank 1 receives the probe's single copies from rank 0
// but sends nothing in the probe (its next rank is rank 2): it reports no
// probe, and counts none of those copies as the run's.
func TestProbeCountsNoCopiesOfItsOwn(t *testing.T) {
	if err := SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ms, err := connectLocal(ctx, 7, []Transport{SharedMemory, SharedMemory, TCP})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, m := range ms {
			m.Abort(nil)
		}
	}()
	if !ms[0].sharesWith(1) || ms[1].sharesWith(2) || !ms[0].readsMe[1] {
		t.Skip("ranks 0 and 1 do not share memory, or rank 1 may not read rank 0's")
	}
	for _, m := range ms {
		m.yield = false // a core each
	}
	jobs := []Job{{Name: "with data", Data: func() ([][]uint64, error) { return nil, nil }}}
	probes := make([]*Probe, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for r, m := range ms {
		wg.Go(func() { probes[r], errs[r] = probeSingleCopy(NewRank(m), jobs) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if probes[0] == nil || probes[1] != nil || probes[2] != nil {
		t.Fatalf("probes %+v, %+v, %+v: want rank 0's only (the only rank whose next rank shares its memory)", probes[0], probes[1], probes[2])
	}
	// At each of the two sizes, one untimed and 4 timed exchanges copied
	// once.
	if want := int64(2 * (1 + probeRounds)); ms[1].copies != want || ms[1].SingleCopies() != 0 {
		t.Errorf("rank 1 copied %d messages once in the probe and counts %d as the run's; want %d and 0", ms[1].copies, ms[1].SingleCopies(), want)
	}
}
