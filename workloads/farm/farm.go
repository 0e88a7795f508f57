// Package farm simulates a task farm (the mpi4py.futures seed: an
// MPIPoolExecutor's master and its workers): one master, rank 0, hands N
// tasks to W workers, ranks 1..W, a chunk of tasks per message, each
// chunk to whichever worker sent back its results first, as a pool's
// master does; a worker runs its chunk's tasks and sends their results
// back, and gets the next chunk or, when none is left, a message to stop.
//
// The master is one thread: it pays, per task, a submit cost and the
// serialization of the task's arguments at a rate, and a cost to handle
// each result, on its one CPU, besides the machine's per-message
// overheads. Which worker answers first decides who gets the next chunk,
// so the programs are reactive (sim.ReactiveSource): they hand out each
// op once the one before it completes, learning the sender of each
// result from the executor (sim.MatchingSource).
package farm

import (
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/sim"
)

// Job is one task farm.
type Job struct {
	Workers int
	Tasks   int
	// Duration of each task: Durations, cycled, when given (from a
	// file); else Mean, the same for every task ("fixed"), or drawn from
	// an exponential distribution of that mean ("exponential", seeded).
	Dist      string
	Mean      sim.Time
	Durations []sim.Time
	Seed      uint64
	// Argument and result bytes of one task.
	Arg, Result int64
	// The master's costs: Submit per task, Serialize bytes/s for the
	// arguments (0: free), Handle per result.
	Submit    sim.Time
	Serialize float64
	Handle    sim.Time
	// Chunk is the tasks per message (0 means 1).
	Chunk int
}

// The duration distributions.
var Dists = []string{"fixed", "exponential", "file"}

// maxTask bounds a task's duration and a chunk's work, far from the
// clock's limit.
const maxTask = 3600 * sim.Second

func (j *Job) chunk() int { return max(j.Chunk, 1) }

// Chunks is how many messages of tasks the master sends.
func (j *Job) Chunks() int { return (j.Tasks + j.chunk() - 1) / j.chunk() }

// Check refuses a job that cannot run.
func (j *Job) Check() error {
	switch {
	case j.Workers < 1 || j.Workers >= sim.MaxRanks:
		return fmt.Errorf("%d workers: from 1 to %d", j.Workers, sim.MaxRanks-1)
	case j.Tasks < 1 || j.Tasks > 1<<30:
		return fmt.Errorf("%d tasks: from 1 to 2^30", j.Tasks)
	case j.Chunk < 0 || j.Chunk > j.Tasks:
		return fmt.Errorf("chunks of %d tasks with %d tasks: from 1 to the tasks", j.Chunk, j.Tasks)
	case !slices.Contains(Dists, j.Dist):
		return fmt.Errorf("durations %q; valid: %v", j.Dist, Dists)
	case j.Dist == "file" && len(j.Durations) == 0:
		return fmt.Errorf("durations from a file: the file gives none")
	case j.Dist != "file" && (j.Mean < 0 || j.Mean > maxTask):
		return fmt.Errorf("task duration %v: from 0 to an hour", j.Mean)
	case j.Arg < 0 || j.Result < 0 || j.Arg > 1<<40 || j.Result > 1<<40:
		return fmt.Errorf("argument and result sizes from 0 to 1 TiB")
	case j.Submit < 0 || j.Handle < 0 || j.Submit > maxTask || j.Handle > maxTask:
		return fmt.Errorf("master costs per task from 0 to an hour")
	case j.Serialize < 0 || math.IsNaN(j.Serialize) || math.IsInf(j.Serialize, 0):
		return fmt.Errorf("serialization rate %g bytes/s: positive, or 0 for free", j.Serialize)
	case j.Serialize > 0 && float64(j.Arg)/j.Serialize > maxTask.Seconds():
		// A master cost per task, as submit and handle.
		return fmt.Errorf("serializing a %d-byte argument at %g bytes/s takes %.3g s, over an hour a task: a faster rate or smaller arguments", j.Arg, j.Serialize, float64(j.Arg)/j.Serialize)
	case int64(j.chunk())*max(j.Arg, j.Result) > 1<<40:
		return fmt.Errorf("chunks of %d tasks of %d-byte arguments: messages above 1 TiB", j.chunk(), max(j.Arg, j.Result))
	}
	for i, d := range j.Durations {
		if d < 0 || d > maxTask {
			return fmt.Errorf("task duration %d (%v): from 0 to an hour", i+1, d)
		}
	}
	if float64(j.chunk())*float64(j.maxDuration()) > float64(maxTask) {
		return fmt.Errorf("a chunk of %d tasks of up to %v runs over an hour: smaller chunks", j.chunk(), j.maxDuration())
	}
	return nil
}

func (j *Job) maxDuration() sim.Time {
	switch j.Dist {
	case "file":
		return slices.Max(j.Durations)
	case "exponential":
		return min(sim.Time(float64(j.Mean)*expCap), maxTask)
	}
	return j.Mean
}

// expCap caps an exponential draw at 40 means (a chance of e^-40).
const expCap = 40

// Duration is task i's duration.
func (j *Job) Duration(i int) sim.Time {
	switch j.Dist {
	case "file":
		return j.Durations[i%len(j.Durations)]
	case "exponential":
		u := float64(splitmix(j.Seed^splitmix(uint64(i)+0x9e3779b97f4a7c15))>>11) / (1 << 53)
		return sim.Time(float64(j.Mean) * min(-math.Log1p(-u), expCap))
	}
	return j.Mean
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Work is the sum of the tasks' durations in seconds.
func (j *Job) Work() float64 {
	var s float64
	for i := range j.Tasks {
		s += j.Duration(i).Seconds()
	}
	return s
}

// span returns chunk c's first task and count.
func (j *Job) span(c int) (first, n int) {
	first = c * j.chunk()
	return first, min(j.chunk(), j.Tasks-first)
}

// MasterPerTask is the master's CPU time per task of its own costs
// (submit, serialize, handle), not counting per-message overheads.
func (j *Job) MasterPerTask() float64 {
	t := j.Submit.Seconds() + j.Handle.Seconds()
	if j.Serialize > 0 {
		t += float64(j.Arg) / j.Serialize
	}
	return t
}

func (j *Job) submitCost(n int) sim.Time {
	var ser sim.Time
	if j.Serialize > 0 {
		ser = sim.FromSeconds(float64(n) * float64(j.Arg) / j.Serialize)
	}
	if n > 0 && j.Submit > (sim.MaxTime-ser)/sim.Time(n) {
		return sim.MaxTime // past the clock: the run says which input (not a wrapped, negative cost)
	}
	return (j.Submit * sim.Time(n)).Plus(ser)
}

// Tags: a chunk's message has its number plus 1; 0 is a result, or the
// message that stops a worker.
const tagResult, tagStop = 0, 0

// Schedule returns the farm as a schedule of W + 1 ranks.
func (j *Job) Schedule() (sim.Schedule, error) {
	if err := j.Check(); err != nil {
		return sim.Schedule{}, err
	}
	if j.Chunks() >= math.MaxInt32 {
		return sim.Schedule{}, fmt.Errorf("%d chunks: too many messages; larger chunks", j.Chunks())
	}
	return sim.Schedule{
		Name:  "farm",
		Ranks: j.Workers + 1,
		Rank: func(r int) sim.Source {
			if r == 0 {
				return newMaster(j)
			}
			return &worker{j: j}
		},
		Lookahead: 1 << 20,
	}, nil
}
