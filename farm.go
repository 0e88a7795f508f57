package collsim

import (
	"encoding/json"
	"math"

	"github.com/collsim/collsim/workloads/farm"
)

// FarmResult is one run of a task farm, and the bounds on its
// throughput.
type FarmResult struct {
	Elapsed    float64 `json:"elapsed_s"`
	Throughput float64 `json:"tasks_per_s"`
	// Bandwidth is the tasks' argument bytes delivered per second.
	Bandwidth   float64 `json:"arg_bytes_per_s"`
	Utilisation float64 `json:"worker_utilisation"` // task time / (workers x elapsed)
	// The bounds on throughput (tasks/s): the master's CPU (its costs per
	// task, and its per-message overheads shared by a chunk's tasks);
	// the link between master and workers (arguments out, results in,
	// each at the path's bandwidth); the workers, each taking a chunk
	// through a cycle of receiving it, running it, returning the results
	// and the master's handling and submitting of the next (as many
	// workers as there are chunks, at most).
	MasterBound float64 `json:"master_bound"`
	LinkBound   float64 `json:"link_bound"`
	WorkerBound float64 `json:"worker_bound"`
	// A bound of 0 is none: nothing costs (null in JSON). Limit names the smallest bound: "master", "link" or "workers".
	Limit string `json:"limit"`
	// Knee is the workers at which the workers' bound meets the master's
	// and link's: past it, more workers add no throughput (0, null in
	// JSON: none).
	Knee   float64 `json:"knee_workers"`
	Result *Result `json:"-"`
}

// RunFarm simulates job (rank 0 the master, ranks 1..W the workers) on
// the experiment's machine and placement, and bounds its throughput.
func (e *Experiment) RunFarm(job farm.Job) (*FarmResult, error) {
	s, err := job.Schedule()
	if err != nil {
		return nil, &OptionError{Err: err}
	}
	res, err := e.runSchedule(s, nil)
	if err != nil {
		return nil, err
	}
	out := &FarmResult{Elapsed: res.Time, Result: res}
	if res.Time > 0 {
		out.Throughput = float64(job.Tasks) / res.Time
		out.Bandwidth = float64(job.Tasks) * float64(job.Arg) / res.Time
		out.Utilisation = job.Work() / (float64(job.Workers) * res.Time)
	}
	m, place, err := e.placed(job.Workers + 1)
	if err != nil {
		return nil, err
	}
	alpha, beta := m.PathParams(int(place[0]), int(place[1]))
	o := m.Host.Overhead.Seconds()
	c := float64(max(job.Chunk, 1))
	mean := job.Work() / float64(job.Tasks)
	master := job.MasterPerTask() + 2*o/c // a send and a receive per chunk
	cycle := c*mean + 2*alpha + c*float64(job.Arg+job.Result)*beta + c*job.MasterPerTask() + 4*o
	// No more workers are busy than there are chunks to hand out.
	busy := float64(min(job.Workers, job.Chunks()))
	masterB, linkB, workerB := 1/master, 1/(float64(max(job.Arg, job.Result))*beta), busy*c/cycle
	out.Limit, out.Knee = "workers", min(masterB, linkB)*cycle/c
	switch min(masterB, linkB, workerB) {
	case masterB:
		out.Limit = "master"
	case linkB:
		out.Limit = "link"
	}
	out.MasterBound, out.LinkBound, out.WorkerBound, out.Knee = finite(masterB), finite(linkB), finite(workerB), finite(out.Knee)
	return out, nil
}

// MarshalJSON writes a bound that is none (0: nothing costs), and a knee
// that is none, as null: a script taking the smallest bound must not read
// 0 tasks/s.
func (r FarmResult) MarshalJSON() ([]byte, error) {
	type plain FarmResult
	none := func(x float64) *float64 {
		if x == 0 {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		plain
		MasterBound *float64 `json:"master_bound"`
		LinkBound   *float64 `json:"link_bound"`
		WorkerBound *float64 `json:"worker_bound"`
		Knee        *float64 `json:"knee_workers"`
	}{plain(r), none(r.MasterBound), none(r.LinkBound), none(r.WorkerBound), none(r.Knee)})
}

// finite is x, or 0 for an infinite bound (nothing costs): JSON has no
// infinity.
func finite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}
