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
