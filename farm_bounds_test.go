package collsim

import (
	"math"
	"testing"

	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/farm"
)

// The farm's bounds take every worker's own path (they took worker 1's
// for all: an audit). On cori, 32 ranks a host in blocks: the master and
// workers 1..31 share host 0, whose local channel moves 20 GB/s; workers
// 32..40 are off it, behind host 0's one 10 GB/s link. Results of 1 MiB
// come in over both at once: (20 + 10) GB/s / 1 MiB = 28,610 tasks/s
// (1e9 = 1 GB here, as configs read it), where the bound said 19,073,
// the local channel's alone, and the run moved 26.8 thousand.
func TestFarmBoundsTakeEveryPath(t *testing.T) {
	m, err := configs.Resolve("cori")
	if err != nil {
		t.Fatal(err)
	}
	if m.Local.Bandwidth != 20e9 || m.Topology.Links()[0].Bandwidth != 10e9 {
		t.Fatalf("cori's channels changed: local %g, host link %g; redo the sums", m.Local.Bandwidth, m.Topology.Links()[0].Bandwidth)
	}
	e := &Experiment{Machine: m}
	job := farm.Job{Workers: 40, Tasks: 2000, Dist: "fixed", Mean: sim.Millisecond, Result: 1 << 20}
	res, err := e.RunFarm(job)
	if err != nil {
		t.Fatal(err)
	}
	want := 30e9 / (1 << 20)
	if math.Abs(res.LinkBound-want) > 1e-9*want || res.Throughput > res.LinkBound {
		t.Errorf("link bound %g tasks/s (throughput %g), want %g", res.LinkBound, res.Throughput, want)
	}
	if res.Throughput > res.WorkerBound || res.Limit != "link" {
		t.Errorf("throughput %g, worker bound %g, limit %s", res.Throughput, res.WorkerBound, res.Limit)
	}
}

// The bounds on a machine whose paths differ, by hand (the test audit
// found the sums, the sort and the knee untested with mixed paths): the
// master on h0 has two 10 GB/s links, to switches s0 and s1; worker 1
// (h1) is behind 1 GB/s, worker 2 (h2) and worker 3 (h3) behind 8 GB/s,
// every link 1 us, no host costs, tasks of 1 ms returning 1 MB.
//   - Results come in at 1 + 8 + 8 = 17 GB/s at most (the paths are
//     slower than the master's two links, 20 GB/s; one link would be 10):
//     17,000 tasks/s.
//   - A worker's cycle is 1 ms + 2 x 2 us + 1 MB over its path: 2.004 ms
//     for worker 1, 1.129 ms for 2 and 3. Two tasks keep two workers
//     busy, the two fastest: 2 / 1.129 ms = 1,771.48 tasks/s.
//   - The knee is the link bound times the mean cycle, (2.004 + 2 x
//     1.129) / 3 = 1.420667 ms: 24.1513 workers.
//   - The master's host has a 5 GB/s local channel, which no worker
//     shares, so it adds nothing.
func TestFarmBoundsOverMixedPaths(t *testing.T) {
	m, err := configs.Parse("mixed.yaml", []byte(`network:
  graph:
    hosts: 4
    link: {bandwidth: 10GB/s, latency: 1us}
    edges:
      - h0 s0
      - h0 s1
      - h1 s0 1GB/s 1us
      - h2 s0 8GB/s 1us
      - h3 s1 8GB/s 1us
      - s0 s1
host:
  local: {bandwidth: 5GB/s, latency: 100ns}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := &Experiment{Machine: m}
	res, err := e.RunFarm(farm.Job{Workers: 3, Tasks: 2, Dist: "fixed", Mean: sim.Millisecond, Result: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	if !near(res.LinkBound, 17000) {
		t.Errorf("link bound %g tasks/s, want 17000", res.LinkBound)
	}
	if want := 2 / 1.129e-3; !near(res.WorkerBound, want) {
		t.Errorf("worker bound %g tasks/s, want %g", res.WorkerBound, want)
	}
	if want := 17000 * (2.004e-3 + 2*1.129e-3) / 3; !near(res.Knee, want) {
		t.Errorf("knee %g workers, want %g", res.Knee, want)
	}
	if res.Throughput > res.WorkerBound {
		t.Errorf("throughput %g above the worker bound %g", res.Throughput, res.WorkerBound)
	}
}

// Workers on the master's host talk through the ranks' own channels,
// priced by the message's band (host.local_by_size): 1 MB results through
// a 5 GB/s channel with a 20 GB/s band from 64 KiB move at 20 GB/s, so the
// master takes in 20,000 tasks/s at most, and each worker's cycle is two
// 100 ns latencies and 1 MB at 20 GB/s, 50.2 us: 3 workers, 59,761
// tasks/s. The bounds took the channel's 5 GB/s, 15,000 tasks/s, and the
// run moved 19,999.9 (found after the test audit).
func TestFarmBoundsLocalBands(t *testing.T) {
	m, err := configs.Parse("bands.yaml", []byte(`network:
  crossbar: {hosts: 2, link: {bandwidth: 10GB/s, latency: 1us}}
host:
  ranks_per_host: 4
  local: {bandwidth: 5GB/s, latency: 100ns}
  local_by_size:
    - {from: 64KiB, bandwidth: 20GB/s}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&Experiment{Machine: m}).RunFarm(farm.Job{Workers: 3, Tasks: 3000, Dist: "fixed", Result: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	if !near(res.LinkBound, 20000) || !near(res.WorkerBound, 3/50.2e-6) {
		t.Errorf("link bound %g, worker bound %g; want 20000 and %g", res.LinkBound, res.WorkerBound, 3/50.2e-6)
	}
	if res.Throughput > res.LinkBound*(1+1e-12) {
		t.Errorf("throughput %g above the link bound %g", res.Throughput, res.LinkBound)
	}
}

// Where the routes from the master to its workers share a link, the link
// bounds the farm (the bound took the master's host's links alone: a new
// user's trial). gpu-cluster, 32 ranks round robin over its 64 nodes: the
// master, GPU 0 of node 0, reaches its 31 workers, each on a node of its
// own, through node 0's one NIC of 400 Gbit/s: 50e9 B/s / 1 MiB of
// arguments = 47,683.7 tasks/s, where the GPU's own 450 GB/s link allowed
// 429,153.
func TestFarmBoundsSharedLink(t *testing.T) {
	m, err := configs.Resolve("gpu-cluster")
	if err != nil {
		t.Fatal(err)
	}
	e := &Experiment{Machine: m, Placement: "round_robin"}
	res, err := e.RunFarm(farm.Job{Workers: 31, Tasks: 300, Dist: "fixed", Mean: 100 * sim.Microsecond, Arg: 1 << 20, Submit: sim.Microsecond, Handle: sim.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	want := 50e9 / (1 << 20)
	if math.Abs(res.LinkBound-want) > 1e-9*want || res.Limit != "link" || res.Throughput > res.LinkBound {
		t.Errorf("link bound %g tasks/s, limit %s, throughput %g; want %g, the link", res.LinkBound, res.Limit, res.Throughput, want)
	}
}
