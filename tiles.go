package collsim

import (
	"fmt"

	"github.com/collsim/collsim/workloads/tiles"
)

// TilesResult is one run of a tiled algorithm on a node's devices.
type TilesResult struct {
	Elapsed float64 `json:"elapsed_s"`
	FLOPs   float64 `json:"flops"`
	Rate    float64 `json:"flop_per_s"`
	// Estimate is the plan's own makespan (kernel times, and each rank's
	// copies one after another in the order it planned them, no link
	// shared): the planner's model, not a bound on Elapsed, which can be
	// shorter where copies the plan queues overlap.
	Estimate float64 `json:"plan_estimate_s"`
	HitRate  float64 `json:"cache_hit_rate"`
	// Bytes moved host to device, device to host and between devices,
	// and each device's in and out.
	HostToDevice int64   `json:"host_to_device_bytes"`
	DeviceToHost int64   `json:"device_to_host_bytes"`
	PeerToPeer   int64   `json:"peer_to_peer_bytes"`
	DeviceIn     []int64 `json:"device_in_bytes"`
	DeviceOut    []int64 `json:"device_out_bytes"`
	Tasks        int     `json:"tasks"`
	// Links are the busiest links and the bytes each carried (with
	// Experiment.BusiestLinks, flow network).
	Links  []Link  `json:"busiest_links,omitempty"`
	Result *Result `json:"-"`
}

// RunTiles plans job with the machine's latencies and bandwidths
// between its ranks (as placed: devices 0..D-1, host memory ports
// D..2D-1) and simulates the plan.
func (e *Experiment) RunTiles(job tiles.Job) (*TilesResult, error) {
	m, err := e.machine()
	if err != nil {
		return nil, err
	}
	// Node 0 is the devices and node 1 host memory, its slots the
	// memory's ports: device i is rank i, its port rank D+i, on slot i of
	// each node, whatever D. (Placed in blocks, D < 8 put the ports on
	// node 0's other GPUs.)
	per := m.DevicesPerNode
	if per < 2 || m.Topology.Hosts() != 2*per || m.RanksPerNode != per {
		return nil, &OptionError{Err: fmt.Errorf("the tiles workload runs on one node of devices whose second node stands for host memory (gpu-node-pcie, gpu-node-nvlink, gpu-node-nvswitch); %s is not such a machine", m.Name)}
	}
	if job.Devices > per {
		// (Exit 1, as ranks that do not fit a machine.)
		return nil, fmt.Errorf("%d devices, but machine %s has %d on its node; use fewer devices", job.Devices, m.Name, per)
	}
	if e.Placement != "" {
		return nil, optionf("--placement does not apply: the tiles workload puts device i on node 0's slot i and its host memory port on node 1's")
	}
	m.Hosts = make([]int32, job.Ranks())
	for i := range job.Devices {
		m.Hosts[i], m.Hosts[job.Devices+i] = int32(i), int32(per+i)
	}
	x := *e
	x.Machine = m
	e = &x
	m, place, err := e.placed(job.Ranks())
	if err != nil {
		return nil, err
	}
	job.Cost = func(s, t int) (float64, float64) { return m.PathParams(int(place[s]), int(place[t])) }
	comp, stats, err := job.Plan()
	if err != nil {
		return nil, &OptionError{Err: err}
	}
	res, err := e.RunComposition(comp)
	if err != nil {
		return nil, err
	}
	flops, _ := job.FLOPs()
	out := &TilesResult{Elapsed: res.Time, FLOPs: flops, Estimate: stats.Estimate, HitRate: stats.HitRate(),
		HostToDevice: stats.HostToDevice, DeviceToHost: stats.DeviceToHost, PeerToPeer: stats.PeerToPeer,
		DeviceIn: stats.DeviceIn, DeviceOut: stats.DeviceOut, Tasks: stats.Tasks, Links: res.Links, Result: res}
	if res.Time > 0 {
		out.Rate = flops / res.Time
	}
	return out, nil
}
