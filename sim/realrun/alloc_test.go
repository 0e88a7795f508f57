package realrun_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/realrun"
)

// TestPolledPingPongAllocations counts what a message of a ping-pong
// between two ranks of this process allocates, over a channel the ranks
// poll, shared memory or TCP: a frame must not cost an allocation (each
// once cost about four through shared memory: the queued item escaped to
// the heap, and the polled peer's queue and the interpreter's lists of
// waiting ops were reallocated; over TCP, every look at the socket made a
// closure, some 26 a message). It takes the
// difference between calls of 300 and of 100 round trips, so that what a
// call allocates once cancels; the interpreter, reset for each call, keeps
// its window and lists, so nothing is left per message (the bound allows
// one allocation in 100 messages). A call itself allocates its ranks'
// program sources, one each: the bound is 4 for the two ranks.
func TestPolledPingPongAllocations(t *testing.T) {
	for _, via := range []realrun.Transport{realrun.SharedMemory, realrun.TCP} {
		t.Run(via.String(), func(t *testing.T) { testPolledPingPongAllocations(t, via) })
	}
}

func testPolledPingPongAllocations(t *testing.T, via realrun.Transport) {
	skipWithoutSharedMemory(t, via)
	if via == realrun.TCP && runtime.NumCPU() < 2 {
		t.Skip("a rank polls its TCP sockets only with a core for each of the 2 ranks; this machine has 1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	meshes, err := realrun.ConnectLocal(ctx, 2, 1, via)
	if err != nil {
		t.Fatal(err)
	}
	ranks := make([]*realrun.Rank, 2)
	for i, m := range meshes {
		ranks[i] = realrun.NewRank(m)
		ranks[i].Timeout = 30 * time.Second
	}
	// each runs the ping-pong of rounds round trips calls times on both
	// ranks and returns how many allocations that took.
	each := func(rounds, calls int) uint64 {
		s, err := collectives.PingPong(2, 0, 1, 8, rounds)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		for i, r := range ranks {
			wg.Go(func() {
				for range calls {
					if err := r.Execute(s, nil); err != nil {
						t.Error(err)
						meshes[i].Abort(err)
						return
					}
				}
			})
		}
		wg.Wait()
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	const calls = 40
	each(300, 5) // warm: pools and queues at their working size
	short, long := each(100, calls), each(300, calls)
	var wg sync.WaitGroup
	for _, m := range meshes {
		wg.Go(func() {
			if err := m.Close(time.Now().Add(10 * time.Second)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	perMessage := (float64(long) - float64(short)) / (calls * 2 * 200)
	t.Logf("%d and %d allocations in %d calls of 100 and 300 round trips: %.3f per message", short, long, calls, perMessage)
	if perMessage > 0.01 {
		t.Errorf("%.3f allocations per message, want at most 0.01", perMessage)
	}
	if perCall := float64(short) / calls; perCall > 4 {
		t.Errorf("%.1f allocations per call of 100 round trips, want at most 4", perCall)
	}
}
