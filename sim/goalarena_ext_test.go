package sim_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// Sizes from which a run's tables go to its arena: from their first
// entries (256 is the least length grow moves a table at), and never.
func arenaAtOnce() (restore func()) { return sim.SetArenaFrom(256, 2, 16) }
func arenaNever() (restore func())  { return sim.SetArenaFrom(math.MaxInt, math.MaxInt, math.MaxInt) }

// Collectives run the same, bit for bit, with their tables of messages and
// ready ops, queues and indexes in the run's arena from their first
// entries, at the usual sizes (the 150-rank linear alltoall holds 22,350
// messages at once, past the tables' 16,384), and all on Go's heap:
// against Execute (whose tables are on the heap) and in 2-3 partitions.
func TestArenaRunsAsHeap(t *testing.T) {
	for _, c := range []struct {
		collective collectives.Collective
		algo       string
		ranks      int
		count      int64
	}{
		{collectives.Alltoall, "linear", 67, 67},
		{collectives.Alltoall, "linear", 150, 3},
		{collectives.Alltoall, "pairwise", 37, 37},
		{collectives.Allreduce, "ring", 37, 1 << 12},
		{collectives.Allreduce, "recursive_doubling", 64, 1000},
	} {
		t.Run(fmt.Sprintf("%s/%s/P=%d", c.collective, c.algo, c.ranks), func(t *testing.T) {
			g := goalOf(t, c.collective, c.algo, collectives.Params{Ranks: c.ranks, Count: c.count})
			p := sim.DefaultLogGOPS
			noNoise := func() *sim.Noise { return nil }
			run := func(setting func() func()) (*sim.Result, [2]*sim.Result) {
				defer setting()()
				res := sameRun(t, g, p, noNoise, 7)
				var par [2]*sim.Result
				for k := range par {
					r, ok := g.RunParallel(p, 7, k+2)
					if !ok {
						t.Fatalf("%d partitions: no parallel run", k+2)
					}
					par[k] = r
				}
				return res, par
			}
			heap, heapPar := run(arenaNever)
			usual, usualPar := run(func() func() { return func() {} })
			early, earlyPar := run(arenaAtOnce)
			for name, r := range map[string]*sim.Result{"usual": usual, "early": early} {
				if !sameResult(heap, r) {
					t.Fatalf("arena from the %s sizes %+v\non the heap %+v", name, *r, *heap)
				}
			}
			for k := range heapPar {
				if !sameResult(heapPar[k], usualPar[k]) || !sameResult(heapPar[k], earlyPar[k]) {
					t.Fatalf("%d partitions: arena from the usual sizes %+v, early %+v\non the heap %+v", k+2, *usualPar[k], *earlyPar[k], *heapPar[k])
				}
			}
		})
	}
}

// Random schedules, deadlocks and errors included, run the same with the
// arena taken from the first entries as through Execute, and report the
// same errors as with every table on the heap.
func TestArenaRandomSchedulesRunAsHeap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := randomGOAL(t)
		g := parseBlocked(t, text, true)
		p := sim.LogGOPS{L: 700 * sim.Nanosecond, O: 300 * sim.Nanosecond, G: 5 * sim.Nanosecond, GPerByte: 333, S: 65535}
		restore := arenaAtOnce()
		sameRun(t, g, p, func() *sim.Noise { return nil }, 3)
		_, early := g.RunLogGOPS(p, nil, 3)
		restore()
		restore = arenaNever()
		_, heap := g.RunLogGOPS(p, nil, 3)
		restore()
		if fmt.Sprint(early) != fmt.Sprint(heap) {
			t.Fatalf("error with the arena from the first entries:\n%v\non the heap:\n%v\n%s", early, heap, text)
		}
	})
}
