package sim_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// sameParallel runs g in parts partitions and, when the run could be
// parallel, requires the sequential run's result bit for bit. It reports
// whether the run was parallel.
func sameParallel(t interface{ Fatalf(string, ...any) }, g *sim.GOAL, p sim.LogGOPS, parts int) bool {
	got, ok := g.RunParallel(p, 1, parts)
	if !ok {
		return false
	}
	want, err := g.RunLogGOPS(p, nil, 1)
	if err != nil {
		t.Fatalf("the parallel run finished; the sequential run failed: %v", err)
	}
	if !sameResult(want, got) {
		t.Fatalf("%d partitions: %+v\nsequential: %+v", parts, *got, *want)
	}
	return true
}

// chainGOAL writes a random schedule whose ranks compute for random times
// between their messages, so that few hosts have two events at one time
// and most runs can be parallel. Messages are eager (at most 1,000
// bytes); some receives use wildcards, some ops run on other CPUs and
// NICs, some ops irequire others, and some schedules deadlock.
func chainGOAL(t *rapid.T) string {
	ranks := rapid.IntRange(2, 12).Draw(t, "ranks")
	cpus := rapid.IntRange(1, 2).Draw(t, "cpus")
	nics := rapid.IntRange(1, 2).Draw(t, "nics")
	progs := make([][]string, ranks)
	// Calc times from a stream of their own: rapid draws the ends of a
	// range most often, and equal times make ties.
	times := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "times"), 0))
	place := func() string {
		return fmt.Sprintf(" cpu %d nic %d", rapid.IntRange(0, cpus-1).Draw(t, "cpu"), rapid.IntRange(0, nics-1).Draw(t, "nic"))
	}
	for m := range rapid.IntRange(1, 40).Draw(t, "messages") {
		src := rapid.IntRange(0, ranks-1).Draw(t, "src")
		dst := (src + rapid.IntRange(1, ranks-1).Draw(t, "distance")) % ranks
		size := rapid.IntRange(0, 1000).Draw(t, "size")
		from := fmt.Sprint(src)
		if rapid.IntRange(0, 5).Draw(t, "wild") == 0 {
			from = "-1"
		}
		progs[src] = append(progs[src], fmt.Sprintf("send %db to %d tag %d%s", size, dst, m, place()))
		progs[dst] = append(progs[dst], fmt.Sprintf("recv %db from %s tag %d%s", size, from, m, place()))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\n", ranks)
	for r, ops := range progs {
		fmt.Fprintf(&b, "rank %d {\n", r)
		n := 0
		label := func(op string) int {
			fmt.Fprintf(&b, "o%d: %s\n", n, op)
			n++
			return n - 1
		}
		prev := -1
		for _, op := range ops {
			c := label(fmt.Sprintf("calc %d cpu %d", 1+times.IntN(20000), rapid.IntRange(0, cpus-1).Draw(t, "cpu")))
			if prev >= 0 {
				fmt.Fprintf(&b, "o%d requires o%d\n", c, prev)
			}
			o := label(op)
			kind := rapid.SampledFrom([]string{"requires", "requires", "requires", "irequires"}).Draw(t, "kind")
			fmt.Fprintf(&b, "o%d %s o%d\n", o, kind, c)
			prev = o
			if rapid.IntRange(0, 3).Draw(t, "parallel") == 0 {
				prev = c // the next calc need not wait for this op
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// Random schedules run in 2 to 5 partitions give the sequential result
// bit for bit whenever the parallel run does not give up, and enough of
// them run in parallel for this to mean something.
func TestParallelRunEqualsSequential(t *testing.T) {
	var runs, parallel int
	rapid.Check(t, func(t *rapid.T) {
		text := chainGOAL(t)
		g, err := sim.ParseGOAL(strings.NewReader(text), "c.goal")
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		ns := func(label string) sim.Time {
			return sim.Time(rapid.SampledFrom([]int{0, 1, 700, 2500}).Draw(t, label)) * sim.Nanosecond
		}
		// L > 0: a parallel run needs messages that take time.
		p := sim.LogGOPS{L: ns("L") + 1, O: ns("o"), G: ns("g"),
			GPerByte: float64(rapid.SampledFrom([]int{0, 6000, 333}).Draw(t, "G")),
			OPerByte: float64(rapid.SampledFrom([]int{0, 1500}).Draw(t, "O")),
			S:        65535}
		parts := rapid.IntRange(2, min(5, g.Ranks)).Draw(t, "parts")
		runs++
		if sameParallel(t, g, p, parts) {
			parallel++
		}
	})
	t.Logf("%d of %d runs were parallel", parallel, runs)
	if parallel*4 < runs {
		t.Fatalf("only %d of %d runs were parallel", parallel, runs)
	}
}

// A parallel run gives up, and RunLogGOPS still answers as the sequential
// run does: when a host has two events at one time (two messages arriving
// together), when the schedule deadlocks, and when its windows hold too
// few events to pay for their barriers (two ranks computing 10 µs at a
// time, with windows of 4 µs).
func TestParallelRunGivesUp(t *testing.T) {
	var sparse strings.Builder
	sparse.WriteString("num_ranks 2\n")
	for r := range 2 {
		fmt.Fprintf(&sparse, "rank %d {\nl0: calc 10000\n", r)
		for i := 1; i < 600; i++ {
			fmt.Fprintf(&sparse, "l%d: calc 10000\nl%d requires l%d\n", i, i, i-1)
		}
		sparse.WriteString("}\n")
	}
	for name, text := range map[string]string{
		"sparse": sparse.String(),
		"tie": "num_ranks 3\nrank 0 {\nl0: recv 8b from 1 tag 1\nl1: recv 8b from 2 tag 2\n}\n" +
			"rank 1 {\nl0: send 8b to 0 tag 1\n}\nrank 2 {\nl0: send 8b to 0 tag 2\n}\n",
		"deadlock": "num_ranks 2\nrank 0 {\nl0: recv 8b from 1 tag 1\nl1: send 8b to 1 tag 2\nl1 requires l0\n}\n" +
			"rank 1 {\nl0: recv 8b from 0 tag 2\nl1: send 8b to 0 tag 1\nl1 requires l0\n}\n",
	} {
		g, err := sim.ParseGOAL(strings.NewReader(text), name+".goal")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := g.RunParallel(sim.DefaultLogGOPS, 1, 2); ok {
			t.Errorf("%s: the parallel run did not give up", name)
		}
		sameRun(t, g, sim.DefaultLogGOPS, func() *sim.Noise { return nil }, 1)
	}
}

// Collective schedules, whose ranks advance in step, run in parallel and
// give the sequential result, with MPI_Sendrecv steps and overlapping ones.
// (The ring's 1,276 windows hold 64 events per partition or more: enough
// to stay parallel after the probe. A send's completion, o after it
// starts, would meet an arrival from the neighbour at one time somewhere
// and make the run be done again sequentially, but it needs no event: the
// step after waits for the receive too, which completes later.)
func TestParallelRunOfCollectives(t *testing.T) {
	for _, c := range []struct {
		collective collectives.Collective
		algo       string
		ranks      int
		count      int64
		overlap    bool
	}{
		{collectives.Allreduce, "ring", 320, 1 << 16, false},
		{collectives.Allreduce, "ring", 320, 1 << 16, true},
		{collectives.Allreduce, "recursive_doubling", 256, 1000, false},
		{collectives.Alltoall, "pairwise", 48, 100, false},
	} {
		g := goalOf(t, c.collective, c.algo, collectives.Params{Ranks: c.ranks, Count: c.count, Overlap: c.overlap})
		for parts := 2; parts <= 5; parts++ {
			if !sameParallel(t, g, sim.DefaultLogGOPS, parts) {
				t.Errorf("%s %s on %d ranks: the run in %d partitions was not parallel", c.collective, c.algo, c.ranks, parts)
			}
		}
	}
}
