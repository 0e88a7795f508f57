package farm_test

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/farm"
)

func elapsed(t interface {
	Helper()
	Fatal(...any)
}, j *farm.Job, net sim.NetworkFactory) sim.Time {
	t.Helper()
	s, err := j.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net})
	if err != nil {
		t.Fatal(err)
	}
	return res.Makespan
}

// greedy is list scheduling, derived independently of the simulator:
// chunk after chunk goes to the worker free first; with free messages
// and no master costs, the farm's makespan is this one's.
func greedy(j *farm.Job) sim.Time {
	free := make([]sim.Time, j.Workers)
	chunk := max(j.Chunk, 1)
	for first := 0; first < j.Tasks; first += chunk {
		w := slices.Index(free, slices.Min(free))
		for i := first; i < min(first+chunk, j.Tasks); i++ {
			free[w] += j.Duration(i)
		}
	}
	return slices.Max(free)
}

// TestFreeMessages: with messages free and no master costs, tasks run
// back to back on whichever worker is free: fixed tasks take
// ceil(N / W) durations; chunks and random durations follow list
// scheduling.
func TestFreeMessages(t *testing.T) {
	d := 100 * sim.Microsecond
	j := &farm.Job{Workers: 3, Tasks: 10, Dist: "fixed", Mean: d}
	if got, want := elapsed(t, j, sim.FixedLatency(0)), 4*d; got != want {
		t.Errorf("10 tasks on 3 workers: %v, want %v", got, want)
	}
	j = &farm.Job{Workers: 2, Tasks: 10, Dist: "fixed", Mean: d, Chunk: 4} // chunks 4, 4, 2
	if got, want := elapsed(t, j, sim.FixedLatency(0)), 6*d; got != want {
		t.Errorf("chunks of 4: %v, want %v", got, want)
	}
	rapid.Check(t, func(t *rapid.T) {
		j := &farm.Job{Workers: rapid.IntRange(1, 9).Draw(t, "workers"), Tasks: rapid.IntRange(1, 60).Draw(t, "tasks"),
			Dist: "exponential", Mean: sim.Time(rapid.Int64Range(0, 1e9).Draw(t, "mean")), Seed: rapid.Uint64().Draw(t, "seed")}
		j.Chunk = rapid.IntRange(0, j.Tasks).Draw(t, "chunk")
		if got, want := elapsed(t, j, sim.FixedLatency(0)), greedy(j); got != want {
			t.Fatalf("%+v: %v, want list scheduling's %v", j, got, want)
		}
	})
}

// TestMasterBound: tasks of no work, a master that spends 10 us
// submitting each: the master is the bottleneck, N tasks take N x 10 us
// whatever the workers.
func TestMasterBound(t *testing.T) {
	for _, w := range []int{1, 4, 16} {
		j := &farm.Job{Workers: w, Tasks: 50, Dist: "fixed", Submit: 10 * sim.Microsecond}
		if got, want := elapsed(t, j, sim.FixedLatency(0)), 50*10*sim.Microsecond; got != want {
			t.Errorf("%d workers: %v, want %v", w, got, want)
		}
	}
	// Serialization: 1 MB arguments at 1 GB/s is 1 ms a task, and a
	// result handled in 0.5 ms: 1.5 ms a task at the master.
	j := &farm.Job{Workers: 8, Tasks: 20, Dist: "fixed", Arg: 1e6, Serialize: 1e9, Handle: 500 * sim.Microsecond}
	if got, want := elapsed(t, j, sim.FixedLatency(0)), 20*1500*sim.Microsecond; got != want {
		t.Errorf("serialize and handle: %v, want %v", got, want)
	}
}

// TestLatency: one worker, tasks of d, messages of latency L each way:
// every task costs d + 2L (the chunk's message, the result back).
func TestLatency(t *testing.T) {
	d, l := 50*sim.Microsecond, 3*sim.Microsecond
	j := &farm.Job{Workers: 1, Tasks: 7, Dist: "fixed", Mean: d}
	if got, want := elapsed(t, j, sim.FixedLatency(l)), 7*(d+2*l)+l; got != want {
		// +l: the stop message's latency
		t.Errorf("%v, want %v", got, want)
	}
}

func TestDurations(t *testing.T) {
	j := &farm.Job{Workers: 1, Tasks: 5, Dist: "file", Durations: []sim.Time{1, 2, 3}}
	var got []sim.Time
	for i := range 5 {
		got = append(got, j.Duration(i))
	}
	if !slices.Equal(got, []sim.Time{1, 2, 3, 1, 2}) {
		t.Errorf("file durations cycle: %v", got)
	}
	// Exponential: the sample mean of many draws is near the mean (a
	// sum of 100,000 exponentials has a standard deviation of 0.3%).
	e := &farm.Job{Workers: 1, Tasks: 100000, Dist: "exponential", Mean: sim.Millisecond, Seed: 7}
	if m := e.Work() / 1e5; m < 0.99e-3 || m > 1.01e-3 {
		t.Errorf("exponential sample mean %g s, want 1 ms", m)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		j    farm.Job
		want string
	}{
		{farm.Job{Workers: 0, Tasks: 1, Dist: "fixed"}, "0 workers"},
		{farm.Job{Workers: 1, Tasks: 0, Dist: "fixed"}, "0 tasks"},
		{farm.Job{Workers: 1, Tasks: 4, Chunk: 5, Dist: "fixed"}, "chunks of 5 tasks with 4 tasks"},
		{farm.Job{Workers: 1, Tasks: 4, Dist: "gauss"}, `durations "gauss"`},
		{farm.Job{Workers: 1, Tasks: 4, Dist: "file"}, "the file gives none"},
		{farm.Job{Workers: 1, Tasks: 4, Dist: "fixed", Mean: -1}, "from 0 to an hour"},
		{farm.Job{Workers: 1, Tasks: 4, Dist: "fixed", Serialize: -1}, "serialization rate"},
		{farm.Job{Workers: 1, Tasks: 4, Chunk: 4, Dist: "fixed", Mean: 1000 * sim.Second}, "runs over an hour"},
	} {
		if err := c.j.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.j, err, c.want)
		}
	}
}

// TestMasterIsOneLoop: the master carries each chunk through (submit,
// then its send) before it takes up the next, as a pool's dispatching
// thread does; chunks queued behind every submit before (an audit). By
// hand, 16 workers, 16 tasks of 1 ms, submit 20 us and handle 10 us,
// messages of 1 us and free otherwise: chunk k (1..16) leaves at 20k us
// and lands 1 us later; worker 16's result is back at 320 + 1 + 1000 + 1
// = 1322 us, the others' earlier, each handled at once (10 us, 1312 us
// for worker 15's at the latest, before 16's arrives); 16's is handled by
// 1332 us, and its stop lands at 1333 us. Before: 1483 us, every send
// after all 16 submits.
func TestMasterIsOneLoop(t *testing.T) {
	us := sim.Microsecond
	j := &farm.Job{Workers: 16, Tasks: 16, Dist: "fixed", Mean: 1000 * us, Submit: 20 * us, Handle: 10 * us}
	if got, want := elapsed(t, j, sim.FixedLatency(us)), 1333*us; got != want {
		t.Errorf("16 tasks on 16 workers: %v, want %v", got, want)
	}
	// 4 workers, 3 tasks: chunks leave at 20, 40, 60 us and worker 4's
	// stop at 60; results are back at 1022, 1042 and 1062 us, each handled
	// in 10 us and answered by a stop that lands a microsecond later: 1073
	// us (1093 before: the first three sends waited for the three submits).
	j = &farm.Job{Workers: 4, Tasks: 3, Dist: "fixed", Mean: 1000 * us, Submit: 20 * us, Handle: 10 * us}
	if got, want := elapsed(t, j, sim.FixedLatency(us)), 1073*us; got != want {
		t.Errorf("3 tasks on 4 workers: %v, want %v", got, want)
	}
}

// Results that come in while the first submits still wait: a start, a
// steady state and an end by hand, with the loop taking things up in the
// order they came. (Taking handles first gives the same time in this case
// and in 35 others tried, exponential durations included: the master's
// work is the same either way; which worker gets which chunk changes.)
// By hand, 3 workers, 6 tasks of 5 us, submit 20 us,
// handle 10 us, messages of 1 us: submits run 0-20, 20-40, 40-60, their
// chunks landing at 21, 41, 61; worker 1's result is in at 27 and worker
// 2's at 47, behind the third submit: handled 60-70 and 90-100, each
// followed by the next chunk's submit (70-90, sent at 90; 100-120, sent
// at 120); worker 3's result (67) is handled 120-130, its chunk submitted
// 130-150. The last three results (97, 127, 157) are handled 150-160,
// 160-170 and 170-180, each answered by a stop: the last lands at 181 us.
func TestMasterHandlesInArrivalOrder(t *testing.T) {
	us := sim.Microsecond
	j := &farm.Job{Workers: 3, Tasks: 6, Dist: "fixed", Mean: 5 * us, Submit: 20 * us, Handle: 10 * us}
	if got, want := elapsed(t, j, sim.FixedLatency(us)), 181*us; got != want {
		t.Errorf("%v, want %v", got, want)
	}
}
