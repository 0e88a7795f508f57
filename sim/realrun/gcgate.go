package realrun

import (
	"runtime"
	"runtime/metrics"
)

// gcGate runs Go's garbage collector between timed calls, when the next
// call would otherwise be likely to start a cycle. The collector starts a
// cycle when the heap has grown by GOGC percent since the last one,
// wherever the program is then, and a cycle during a timed call takes the
// rank's core (one per rank when the ranks fill the machine) from the
// call: in ten timed 1 MiB bcasts between two processes, two or three
// took 0.9-2.8 ms against 0.12-0.3 ms for the others, and none did with
// GOGC=off. The MPI libraries collsim is compared with have no collector,
// so a real run keeps its cycles out of the timer, as the OSU benchmarks
// keep their buffers' first touch out of it.
type gcGate struct {
	samples []metrics.Sample
	start   uint64 // bytes allocated up to the start of the current timed call
	step    uint64 // bytes the last timed call allocated
	known   bool   // step is of this job's calls
}

// Indices of gcGate.samples.
const (
	gateAllocs = iota // bytes allocated since the program started
	gateGoal          // the heap size at which the current cycle is to end
	gateLive          // the heap the last cycle found live
	gateHeap          // the heap now, garbage not yet collected included
)

func newGCGate() *gcGate {
	return &gcGate{samples: []metrics.Sample{
		gateAllocs: {Name: "/gc/heap/allocs:bytes"},
		gateGoal:   {Name: "/gc/heap/goal:bytes"},
		gateLive:   {Name: "/gc/heap/live:bytes"},
		gateHeap:   {Name: "/memory/classes/heap/objects:bytes"},
	}}
}

// read reads the metrics, and reports false when the runtime lacks one.
func (g *gcGate) read() bool {
	metrics.Read(g.samples)
	for _, s := range g.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return false
		}
	}
	return true
}

// before is called just before a timed call (and its barrier), the
// iteration's data made. It collects now at a job's first call, and when
// the heap, grown by twice what the last timed call allocated, would pass
// 60% of the way from the live heap to the goal: the pacer starts a cycle
// in that stretch, not before 70% of it, so a cycle the data's allocation
// started is also still running there, and runtime.GC waits for it to
// end. With the collector off (GOGC=off and no memory limit: a goal of
// about 2^63) it never collects. It reports whether it collected.
func (g *gcGate) before() bool {
	if !g.read() {
		return false // leave the collector be
	}
	collect := false
	if goal, live := g.samples[gateGoal].Value.Uint64(), g.samples[gateLive].Value.Uint64(); goal > live && goal-live < 1<<60 {
		collect = !g.known || g.samples[gateHeap].Value.Uint64()+2*g.step >= live+(goal-live)*6/10
	}
	if collect {
		runtime.GC()
		g.read()
	}
	g.start = g.samples[gateAllocs].Value.Uint64()
	return collect
}

// after is called when the timed call has returned.
func (g *gcGate) after() {
	if g.read() {
		g.step = g.samples[gateAllocs].Value.Uint64() - g.start
		g.known = true
	}
}
