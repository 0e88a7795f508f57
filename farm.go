package collsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
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
	if errors.Is(err, sim.ErrClockLimit) {
		// The farm's programs react to what arrives, so the run's own
		// hint cannot read them; its work and messages say what is large
		// (it gave only the generic hint: an audit).
		work := job.Work()
		return nil, fmt.Errorf("%w; the farm's %d tasks take %.3g s of work in all, %.3g s on each of its %d workers at best, where the clock holds %.3g s; a task carries %s of arguments and %s of results",
			err, job.Tasks, work, work/float64(job.Workers), job.Workers, sim.MaxTime.Seconds(), configs.FormatBytes(job.Arg), configs.FormatBytes(job.Result))
	}
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
	o := m.Host.Overhead.Seconds()
	c := float64(max(job.Chunk, 1))
	mean := job.Work() / float64(job.Tasks)
	master := job.MasterPerTask() + 2*o/c // a send and a receive per chunk
	// Each worker's cycle over its own path to the master, and the rate
	// each path moves bytes at (the bounds took worker 1's path for all:
	// with 31 workers on the master's host and 9 off it, results came in
	// over both at once, above the bound; an audit).
	hm := int(place[0])
	argMsg, resMsg := int64(c)*job.Arg, int64(c)*job.Result
	localArg, localRes := localChannel(m, argMsg), localChannel(m, resMsg)
	cycles := make([]float64, job.Workers)
	var meanCycle, remoteRate float64
	anyLocal := false
	for w := 1; w <= job.Workers; w++ {
		var alpha, argBeta, resBeta float64
		if int(place[w]) == hm {
			// Ranks on one host talk through their own channels, priced by
			// the message's size (PathParams takes the channel's base
			// bandwidth: 3 workers moved 1 MB results at 20 ktasks/s past
			// bounds of 15 through a 5 GB/s channel with a 20 GB/s band).
			alpha, argBeta, resBeta = m.Local.Latency, 1/localArg, 1/localRes
			anyLocal = true
		} else {
			a, b := m.PathParams(hm, int(place[w]))
			alpha, argBeta, resBeta = a, b, b
			remoteRate += 1 / b
		}
		cycles[w-1] = c*mean + 2*alpha + c*float64(job.Arg)*argBeta + c*float64(job.Result)*resBeta + c*job.MasterPerTask() + 4*o
		meanCycle += cycles[w-1] / float64(job.Workers)
	}
	// No more workers are busy than there are chunks to hand out: the
	// fastest cycles among them bound the workers' rate.
	slices.Sort(cycles)
	var workerB float64
	for _, cy := range cycles[:min(job.Workers, job.Chunks())] {
		workerB += c / cy
	}
	// The master moves arguments out and results in through its own local
	// channel (to workers on its host) and its host's links (to the
	// others) at once, the links no faster than the paths through them.
	linksOut, linksIn := hostLinks(m, hm)
	capOut, capIn := min(linksOut, remoteRate), min(linksIn, remoteRate)
	if m.Routing == "" || m.Routing == "minimal" {
		// With one route a pair, the links at a route's k-th hop from the
		// master (or k-th hop to it) over all remote workers are a cut:
		// every chunk crosses one of them (the host's links alone let a
		// node's 50 GB/s NIC, two hops out on gpu-cluster, carry 429
		// ktasks/s of 1 MiB in the bound, and "workers" was named the
		// limit of a run the NIC held to 46.8; a new user's trial).
		cutOut, cutIn := routeCuts(m, hm, place[1:job.Workers+1])
		capOut, capIn = min(capOut, cutOut), min(capIn, cutIn)
	}
	if anyLocal {
		capOut, capIn = capOut+localArg, capIn+localRes
	}
	linkB := min(perTask(capOut, job.Arg), perTask(capIn, job.Result))
	masterB := 1 / master
	out.Limit, out.Knee = "workers", min(masterB, linkB)*meanCycle/c
	switch min(masterB, linkB, workerB) {
	case masterB:
		out.Limit = "master"
	case linkB:
		out.Limit = "link"
	}
	out.MasterBound, out.LinkBound, out.WorkerBound, out.Knee = finite(masterB), finite(linkB), finite(workerB), finite(out.Knee)
	return out, nil
}

// localChannel is the bandwidth of a rank's channel to ranks on its host
// for a message of bytes: the band it falls in (host.local_by_size), else
// the channel's own; +Inf where local data costs nothing.
func localChannel(m *configs.Machine, bytes int64) float64 {
	bw := m.Local.Bandwidth
	if i := network.BandOf(m.LocalBands, func(b network.LocalBand) int64 { return b.From }, bytes); i >= 0 {
		bw = m.LocalBands[i].Bandwidth
	}
	if bw <= 0 {
		return math.Inf(1)
	}
	return bw
}

// routeCuts is the least bandwidth of the links at any one hop of the
// routes from host h to the workers' hosts off it (out), and of the routes
// back (in, counting hops from h): each hop's links are a cut between h
// and those workers. +Inf where no worker is off h.
func routeCuts(m *configs.Machine, h int, workers []int32) (out, in float64) {
	var outs, ins [][]int32
	for _, w := range workers {
		if int(w) == h {
			continue
		}
		outs = append(outs, m.Topology.Route(h, int(w), nil))
		back := m.Topology.Route(int(w), h, nil)
		slices.Reverse(back) // hop 0 enters h
		ins = append(ins, back)
	}
	return leastCut(m, outs), leastCut(m, ins)
}

// leastCut is the least, over hops k that every route has, of the
// bandwidth of the distinct links at hop k.
func leastCut(m *configs.Machine, routes [][]int32) float64 {
	least := math.Inf(1)
	if len(routes) == 0 {
		return least
	}
	hops := len(routes[0])
	for _, r := range routes {
		hops = min(hops, len(r))
	}
	links := m.Topology.Links()
	for k := range hops {
		seen := map[int32]bool{}
		var bw float64
		for _, r := range routes {
			if !seen[r[k]] {
				seen[r[k]] = true
				bw += links[r[k]].Bandwidth
			}
		}
		least = min(least, bw)
	}
	return least
}

// hostLinks is the bandwidth of host h's links leaving it and entering
// it.
func hostLinks(m *configs.Machine, h int) (out, in float64) {
	for _, l := range m.Topology.Links() {
		if int(l.From) == h {
			out += l.Bandwidth
		}
		if int(l.To) == h {
			in += l.Bandwidth
		}
	}
	return out, in
}

// perTask is the tasks a second rate bytes a second carry at bytes a
// task: unbounded (+Inf) for tasks of no bytes.
func perTask(rate float64, bytes int64) float64 {
	if bytes == 0 {
		return math.Inf(1)
	}
	return rate / float64(bytes)
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
