package realrun

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestGCGateKeepsCyclesOutOfTimedCalls: iterations as Bench runs them,
// each making 4 MiB of fresh data and then a timed call that allocates
// 256 KiB, see collections run during the timed calls without the gate,
// and none with it. A cycle is given a few milliseconds to end before it
// is counted.
func TestGCGateKeepsCyclesOutOfTimedCalls(t *testing.T) {
	if debug.SetGCPercent(-1) < 0 {
		t.Skip("the collector is off (GOGC=off): no cycle to keep out")
	}
	debug.SetGCPercent(100)
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	count := func() uint64 {
		metrics.Read(cycles)
		return cycles[0].Value.Uint64()
	}
	var data, timed [][]byte
	run := func(gate *gcGate, dataBytes, timedBytes int) (inside, collected int) {
		for range 40 {
			data = append(data[:0], make([]byte, dataBytes))
			if gate != nil && gate.before() {
				collected++
			}
			start := count()
			timed = timed[:0]
			for range 4 {
				timed = append(timed, make([]byte, timedBytes/4))
			}
			time.Sleep(3 * time.Millisecond)
			inside += int(count() - start)
			if gate != nil {
				gate.after()
			}
		}
		return inside, collected
	}
	for _, c := range []struct{ data, timed int }{{4 << 20, 256 << 10}, {256 << 10, 2 << 20}} {
		if inside, _ := run(nil, c.data, c.timed); inside == 0 {
			t.Fatalf("data %d, timed %d bytes: without the gate no collection ran during 40 timed calls: the test shows nothing", c.data, c.timed)
		}
		inside, collected := run(newGCGate(), c.data, c.timed)
		if inside != 0 {
			t.Errorf("data %d, timed %d bytes: with the gate %d collections ran during timed calls (the gate collected %d times), want none", c.data, c.timed, inside, collected)
		}
		if collected == 0 {
			t.Errorf("data %d, timed %d bytes: the gate never collected in 40 iterations", c.data, c.timed)
		}
	}
	_, _ = data, timed
}

// TestGCGateNewJob: a gate collects at each job's first call (each job
// has a gate of its own, what other jobs allocated being no guide), and
// never with the collector off.
func TestGCGateNewJob(t *testing.T) {
	g := newGCGate()
	if !g.before() {
		t.Error("a new gate did not collect at its first call")
	}
	g.after()
	g = newGCGate()
	if !g.before() {
		t.Error("the gate did not collect at a new job's first call")
	}
	g.after()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	g = newGCGate()
	if g.before() {
		t.Error("the gate collected with the collector off")
	}
}
