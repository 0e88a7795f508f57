package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
	"pgregory.net/rapid"
)

// sameRun runs g through Execute and through RunLogGOPS and requires the
// same result, bit for bit, event count included; or the same kind of
// error with the same blocked ranks.
func sameRun(t interface {
	Fatalf(string, ...any)
}, g *sim.GOAL, p sim.LogGOPS, noise func() *sim.Noise, seed uint64) *sim.Result {
	want, werr := sim.Execute(sim.New(seed), g.Run("x"), sim.Config{LogGOPS: &p, Noise: noise()})
	got, gerr := g.RunLogGOPS(p, noise(), seed)
	var wd, gd *sim.DeadlockError
	switch {
	case werr == nil && gerr == nil:
	case errors.As(werr, &wd) && errors.As(gerr, &gd):
		if !slices.Equal(wd.Blocked, gd.Blocked) {
			t.Fatalf("blocked ranks %v, want %v\n%v\n%v", gd.Blocked, wd.Blocked, gerr, werr)
		}

	case werr != nil && gerr != nil && strings.Contains(werr.Error(), "MPI_ERR_TRUNCATE") && strings.Contains(gerr.Error(), "MPI_ERR_TRUNCATE"):
		return got // the runs stop at the error; what ran until then is not compared
	default:
		t.Fatalf("errors differ: Execute %v; RunLogGOPS %v", werr, gerr)
	}
	// Every op at the same time, the same messages, bytes and events.
	if !sameResult(want, got) {
		t.Fatalf("Execute %+v\nRunLogGOPS %+v", *want, *got)
	}
	return got
}

// sameResult reports whether two runs gave the same result, bit for bit,
// event count included.
func sameResult(a, b *sim.Result) bool {
	return slices.Equal(a.Finish, b.Finish) && a.Makespan == b.Makespan && a.Ops == b.Ops &&
		a.Messages == b.Messages && a.Bytes == b.Bytes && a.Events == b.Events
}

// randomGOAL writes a random GOAL schedule: messages between random ranks
// (eager and rendezvous sizes, some receives with wildcards, some sizes
// that disagree), calcs, requires and irequires between a rank's ops, and
// CPUs and NICs. Some of these schedules deadlock.
func randomGOAL(t *rapid.T) string {
	ranks := rapid.IntRange(1, 6).Draw(t, "ranks")
	cpus := rapid.IntRange(1, 3).Draw(t, "cpus")
	nics := rapid.IntRange(1, 3).Draw(t, "nics")
	progs := make([][]string, ranks)
	sizes := []int{0, 1, 8, 1000, 65535, 65536, 200000}
	// Wildcards in a schedule whose messages all have one size: otherwise
	// most such schedules would end at a size mismatch.
	wild := rapid.IntRange(0, 3).Draw(t, "wildcards") == 0
	if wild {
		sizes = sizes[rapid.IntRange(0, len(sizes)-1).Draw(t, "the size"):][:1]
	}
	// rapid draws the low end of a range most often: one message in about
	// a quarter of the schedules has a receive of another size.
	mismatch := -1
	if rapid.Bool().Draw(t, "mismatched") && rapid.Bool().Draw(t, "really") {
		mismatch = 0
	}
	for m := range rapid.IntRange(0, 12).Draw(t, "messages") {
		src, dst := rapid.IntRange(0, ranks-1).Draw(t, "src"), rapid.IntRange(0, ranks-1).Draw(t, "dst")
		size := rapid.SampledFrom(sizes).Draw(t, "size")
		// A tag of its own, or tag 0 shared by messages of one size, so
		// that matching in MPI order never pairs different sizes.
		tag := m + 1
		if rapid.IntRange(0, 2).Draw(t, "shared tag") == 0 {
			tag, size = 0, sizes[0]
		}
		rsize, from, rtag := size, fmt.Sprint(src), fmt.Sprint(tag)
		if wild && rapid.IntRange(0, 3).Draw(t, "wild") == 0 {
			from = "-1"
		}
		if wild && rapid.IntRange(0, 3).Draw(t, "wildtag") == 0 {
			rtag = "-1"
		}
		if m == mismatch { // a receive with room to spare, or too little
			rsize += int(rapid.SampledFrom([]int{1, -1}).Draw(t, "room"))
			rsize = max(rsize, 0)
		}
		where := func(cpu, nic int) string {
			return fmt.Sprintf(" cpu %d nic %d", cpu, nic)
		}
		send := fmt.Sprintf("send %db to %d tag %d%s", size, dst, tag, where(rapid.IntRange(0, cpus-1).Draw(t, "cpu"), rapid.IntRange(0, nics-1).Draw(t, "nic")))
		recv := fmt.Sprintf("recv %db from %s tag %s%s", rsize, from, rtag, where(rapid.IntRange(0, cpus-1).Draw(t, "cpu"), rapid.IntRange(0, nics-1).Draw(t, "nic")))
		insert := func(r int, op string) {
			at := rapid.IntRange(0, len(progs[r])).Draw(t, "at")
			progs[r] = slices.Insert(progs[r], at, op)
		}
		insert(src, send)
		insert(dst, recv)
	}
	for r := range progs {
		for range rapid.IntRange(0, 3).Draw(t, "calcs") {
			at := rapid.IntRange(0, len(progs[r])).Draw(t, "at")
			op := fmt.Sprintf("calc %d cpu %d", rapid.SampledFrom([]int{0, 1, 500, 3000}).Draw(t, "ns"), rapid.IntRange(0, cpus-1).Draw(t, "cpu"))
			progs[r] = slices.Insert(progs[r], at, op)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "num_ranks %d\n", ranks)
	for r, ops := range progs {
		fmt.Fprintf(&b, "rank %d {\n", r)
		for i, op := range ops {
			fmt.Fprintf(&b, "o%d: %s\n", i, op)
		}
		for i := range ops {
			for range rapid.IntRange(0, 2).Draw(t, "deps") {
				if i == 0 {
					break
				}
				d := rapid.IntRange(0, i-1).Draw(t, "dep")
				kind := rapid.SampledFrom([]string{"requires", "requires", "irequires"}).Draw(t, "kind")
				fmt.Fprintf(&b, "o%d %s o%d\n", i, kind, d)
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// Random schedules, LogGOPS parameters (zeros included) and noise run the
// same in both executors, deadlocks and errors included.
func TestRunLogGOPSEqualsExecute(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := randomGOAL(t)
		g, err := sim.ParseGOAL(strings.NewReader(text), "r.goal")
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		ns := func(label string) sim.Time {
			return sim.Time(rapid.SampledFrom([]int{0, 0, 1, 700, 2500}).Draw(t, label)) * sim.Nanosecond
		}
		p := sim.LogGOPS{L: ns("L"), O: ns("o"), G: ns("g"),
			GPerByte: float64(rapid.SampledFrom([]int{0, 6000, 333}).Draw(t, "G")),
			OPerByte: float64(rapid.SampledFrom([]int{0, 0, 1500}).Draw(t, "O")),
			S:        int64(rapid.SampledFrom([]int{0, 65535, 1 << 30}).Draw(t, "S"))}
		noisy := rapid.Bool().Draw(t, "noise")
		cosched := rapid.Bool().Draw(t, "cosched")
		noise := func() *sim.Noise {
			if !noisy {
				return nil
			}
			n, err := sim.ParseNoise(strings.NewReader("0\t300\n1000\t50\n4000\t0\n"), "n.txt")
			if err != nil {
				t.Fatal(err)
			}
			n.CoScheduled = cosched
			return n
		}
		t.Logf("schedule:\n%sLogGOPS %+v, noise %t, co-scheduled %t", text, p, noisy, cosched)
		sameRun(t, g, p, noise, rapid.Uint64().Draw(t, "seed"))
	})
}

// goalOf writes algorithm name's schedule (reductions as 1-ns-per-KiB calc
// ops) as GOAL and reads it back.
func goalOf(b testing.TB, collective collectives.Collective, name string, p collectives.Params) *sim.GOAL {
	g, err := sim.ParseGOAL(strings.NewReader(goalText(b, collective, name, p)), name+".goal")
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// goalText writes algorithm name's schedule as GOAL, as goalOf reads it.
func goalText(b testing.TB, collective collectives.Collective, name string, p collectives.Params) string {
	a, err := collectives.Lookup(collective, name)
	if err != nil {
		b.Fatal(err)
	}
	s, err := a.Build(p)
	if err != nil {
		b.Fatal(err)
	}
	var text strings.Builder
	if err := sim.WriteGOAL(&text, s, sim.GOALOptions{ReducePsPerByte: 1}); err != nil {
		b.Fatal(err)
	}
	return text.String()
}

// benchmarkGOAL reports RunLogGOPS's ops per second on g. Its allocations
// are per run (the run's tables), not per op: allocs/op stays near a few
// per rank whatever the schedule's length.
func benchmarkGOAL(b *testing.B, g *sim.GOAL) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := g.RunLogGOPS(sim.DefaultLogGOPS, nil, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.Ops())*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// A ring allreduce of 4 MiB on 256 ranks (326,400 ops with the
// reductions' calcs): ranks in lockstep, one message in flight per rank.
func BenchmarkRunLogGOPSRing(b *testing.B) {
	benchmarkGOAL(b, goalOf(b, collectives.Allreduce, "ring", collectives.Params{Ranks: 256, Count: 1 << 19}))
}

// Recursive doubling on 16,384 ranks (688,128 ops with the reductions'
// calcs): many ranks, few ops each.
func BenchmarkRunLogGOPSRecursiveDoubling(b *testing.B) {
	benchmarkGOAL(b, goalOf(b, collectives.Allreduce, "recursive_doubling", collectives.Params{Ranks: 16384, Count: 1}))
}

// A linear alltoall of 8 bytes per pair on 512 ranks (523,264 messages):
// every rank posts 511 receives at once, so matching goes through the
// queues' index.
func BenchmarkRunLogGOPSLinearAlltoall(b *testing.B) {
	benchmarkGOAL(b, goalOf(b, collectives.Alltoall, "linear", collectives.Params{Ranks: 512, Count: 512}))
}

// growthGOAL keeps BenchmarkRunLogGOPSAlltoallGrowth's schedules for the
// benchmark's later rounds (b.N's search, -count), which would otherwise
// build each again.
var growthGOAL map[string]*sim.GOAL

// BenchmarkRunLogGOPSAlltoallGrowth runs the linear and the pairwise
// alltoall (8 bytes per pair) on 256 to 2,048 ranks. Their work is their
// P^2 ops, so an O(P^2) simulation keeps ns/sched-op (wall time per op of
// the schedule) flat as P doubles; the speed issue's bound, 4.4x per
// doubling of P, is ns/sched-op growing at most 1.1x per doubling. Compare
// runs with benchstat (-count 6): the 2,048-rank cases take seconds each
// and their GOAL is built in memory first (the test process peaks at 2.2
// GB for the pairwise one alone, 2.7 GB for the whole benchmark, by
// /usr/bin/time). Its ops/s is benchmarkGOAL's.
func BenchmarkRunLogGOPSAlltoallGrowth(b *testing.B) {
	if growthGOAL == nil {
		growthGOAL = map[string]*sim.GOAL{}
	}
	for _, algo := range []string{"linear", "pairwise"} {
		for _, ranks := range []int{256, 512, 1024, 2048} {
			name := fmt.Sprintf("%s/P=%d", algo, ranks)
			b.Run(name, func(b *testing.B) {
				g := growthGOAL[name]
				if g == nil {
					g = goalOf(b, collectives.Alltoall, algo, collectives.Params{Ranks: ranks, Count: int64(ranks)})
					growthGOAL[name] = g
				}
				benchmarkGOAL(b, g)
				b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(g.Ops())*float64(b.N)), "ns/sched-op")
			})
		}
	}
}

// BenchmarkParseGOAL reads the GOAL text of a ring allreduce (256 ranks,
// 4 MiB) and of recursive doubling (16,384 ranks, 8 B), through the quick
// path for the usual forms of statement and through the general one alone.
func BenchmarkParseGOAL(b *testing.B) {
	for _, c := range []struct {
		name string
		coll collectives.Collective
		algo string
		p    collectives.Params
	}{
		{"ring", collectives.Allreduce, "ring", collectives.Params{Ranks: 256, Count: 1 << 19}},
		{"recursive_doubling", collectives.Allreduce, "recursive_doubling", collectives.Params{Ranks: 16384, Count: 1}},
	} {
		a, err := collectives.Lookup(c.coll, c.algo)
		if err != nil {
			b.Fatal(err)
		}
		s, err := a.Build(c.p)
		if err != nil {
			b.Fatal(err)
		}
		var text bytes.Buffer
		if err := sim.WriteGOAL(&text, s, sim.GOALOptions{ReducePsPerByte: 1}); err != nil {
			b.Fatal(err)
		}
		for _, quick := range []bool{true, false} {
			name := c.name + "/general"
			if quick {
				name = c.name + "/quick"
			}
			b.Run(name, func(b *testing.B) {
				defer sim.SetQuickStatements(sim.SetQuickStatements(quick))
				b.SetBytes(int64(text.Len()))
				for b.Loop() {
					if _, err := sim.ParseGOAL(bytes.NewReader(text.Bytes()), "b.goal"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestHeldOpEventCount: an op held by an early completion starts by an
// event in both executors, so their event counts agree: rank 0 below, all
// LogGOPS costs 0, takes 4 events in each and finishes at 1 ns (before
// heldSource, Execute took 3 here and RunLogGOPS 4).
func TestHeldOpEventCount(t *testing.T) {
	const text = "num_ranks 1\nrank 0 {\no0: calc 0\no1: calc 0\no2: recv 0b from -1 tag -1\no3: calc 1\no4: send 0b to 0 tag 0\no1 requires o0\no4 requires o0\no4 requires o3\n}\n"
	g, err := sim.ParseGOAL(strings.NewReader(text), "held.goal")
	if err != nil {
		t.Fatal(err)
	}
	p := sim.LogGOPS{}
	res := sameRun(t, g, p, func() *sim.Noise { return nil }, 0)
	if res.Events != 4 || !slices.Equal(res.Finish, []sim.Time{sim.Nanosecond}) {
		t.Errorf("%d events, finish %v; want 4 and [1ns]", res.Events, res.Finish)
	}
}

// An op released by another's start (irequires) but held until a
// dependency that completed ahead of time completes issues at that time
// before the messages that arrive then, in both executors. Execute's
// reactive path used to schedule its issue only when it next read the
// rank's ready ops, after the message the releasing send had scheduled
// meanwhile: the receive below was posted too late for that message, which
// went to the other CPU, and rank 0 finished at 7 ns (found by
// TestRunLogGOPSEqualsExecute).
//
// Expected times, by hand from the LogGOPS rules (o = 1 ns, L = g = G =
// O = 0, S = 0: empty messages are eager and cost o alone; a message
// arriving at t is taken in by the CPU of the oldest posted receive it
// matches, CPU 0 if none; requests for a CPU are served oldest first, an
// op as old as the moment it became ready, a message as its send's start):
//
//	t=0  o0 posted (CPU 1). o1 sends on CPU 1, busy to 1, done at 1, m1
//	     arrives at 1. o2 sends on CPU 0, busy to 1, done at 1, m2 arrives
//	     at 1; o3's irequires is met, its requires o1 not yet. o5 waits for
//	     CPU 0; o7 and o9 queue behind it at NIC 0. Rank 1 posts its recv.
//	t=1  o1 completes: o3 is ready and posted (CPU 1) at 1. o5 sends on
//	     CPU 0, busy to 2, m5 reaches rank 1 at 2. m1 matches o0 (the
//	     oldest posted), taken in on CPU 1 1..2: o0 done at 2. m2 matches
//	     o3, waits for CPU 1, taken in 2..3: o3 done at 3.
//	t=2  o6 and o8 posted (CPU 0). o7 sends on CPU 0 2..3, m7 arrives at
//	     3. Rank 1 takes m5 in 2..3: rank 1 finishes at 3.
//	t=3  o9 (ready since 0, older than m7) sends on CPU 0 3..4, m9 arrives
//	     at 4. m7 matches o6, taken in on CPU 0 4..5: o6 done at 5.
//	t=5  m9 matches o8, taken in on CPU 0 5..6: rank 0 finishes at 6.
//
// Execute now withholds such an op and schedules an event at its floor
// the moment it is released, as RunLogGOPS schedules its issue
// (heldSource).
func TestHeldOpIssuesBeforeArrivals(t *testing.T) {
	const text = `num_ranks 2
rank 0 {
o0: recv 0b from 0 tag 0 cpu 1
o1: send 0b to 0 tag 0 cpu 1
o2: send 0b to 0 tag 0
o3: recv 0b from 0 tag 0 cpu 1
o5: send 0b to 1 tag 0
o6: recv 0b from 0 tag 0
o7: send 0b to 0 tag 0
o8: recv 0b from 0 tag 0
o9: send 0b to 0 tag 0
o3 requires o1
o3 irequires o2
o6 requires o0
o8 requires o0
}
rank 1 {
o0: recv 0b from 0 tag 0
}
`
	g, err := sim.ParseGOAL(strings.NewReader(text), "held.goal")
	if err != nil {
		t.Fatal(err)
	}
	p := sim.LogGOPS{O: sim.Nanosecond}
	want := []sim.Time{6 * sim.Nanosecond, 3 * sim.Nanosecond}
	ex, err := sim.Execute(sim.New(0), g.Run("held"), sim.Config{LogGOPS: &p})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := g.RunLogGOPS(p, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		res  *sim.Result
	}{{"Execute", ex}, {"RunLogGOPS", fast}} {
		if !slices.Equal(c.res.Finish, want) {
			t.Errorf("%s: finish %v, want %v", c.name, c.res.Finish, want)
		}
	}
	if !sameResult(ex, fast) {
		t.Errorf("Execute %+v\nRunLogGOPS %+v", *ex, *fast)
	}
}

// BenchmarkWriteGOAL writes the GOAL text of a ring allreduce (256 ranks,
// 4 MiB, reductions as calcs) to a discarding writer: the bytes per
// second of collsim schedule without the disk.
func BenchmarkWriteGOAL(b *testing.B) {
	a, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		b.Fatal(err)
	}
	s, err := a.Build(collectives.Params{Ranks: 256, Count: 1 << 19})
	if err != nil {
		b.Fatal(err)
	}
	var n countWriter
	if err := sim.WriteGOAL(&n, s, sim.GOALOptions{ReducePsPerByte: 1}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		if err := sim.WriteGOAL(io.Discard, s, sim.GOALOptions{ReducePsPerByte: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
