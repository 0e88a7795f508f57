package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/collsim/collsim/sim/realrun"
)

// TestRealPinnedRanks starts two ranks as a launcher that binds them
// does: each pinned to a core of its own, both to one core, and one pinned
// while the other may run anywhere. The ranks count the cores they may run
// on between them, so they are oversubscribed only on one core, and agree:
// under --single-copy ring, single copies (one ring allreduce of 8 MiB: 2
// pieces each way, above a ring's 1 MiB) in both directions or in neither.
func TestRealPinnedRanks(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs to pin ranks apart")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("needs taskset (util-linux) to pin ranks")
	}
	if err := realrun.SharedMemoryAvailable(); err != nil {
		t.Skipf("needs shared memory between processes: %v", err)
	}
	if err := realrun.SingleCopyAvailable(); err != nil {
		t.Skipf("needs single copies between processes: %v", err)
	}
	cpus := affinity(t)
	all := cpus[0] + "," + cpus[1]
	for _, tc := range []struct {
		pins [2]string
		over bool
	}{
		{[2]string{cpus[0], cpus[1]}, false},
		{[2]string{cpus[0], cpus[0]}, true},
		{[2]string{cpus[0], all}, false},
	} {
		t.Run(tc.pins[0]+"+"+tc.pins[1], func(t *testing.T) {
			addr := freePort(t)
			cmds := make([]*exec.Cmd, 2)
			outs := make([]*bytes.Buffer, 2)
			for r := range cmds {
				c := asRank(r, 2, "--rendezvous", addr, "-a", "ring", "-s", "8388616", "--iterations", "1", "--warmup", "0", "--json", "--timeout", "20s", "--single-copy", "ring")
				c.Args = append([]string{taskset, "-c", tc.pins[r]}, c.Args...)
				c.Path = taskset
				c.Env = append(c.Env, "COLLSIM_SECRET="+testSecret)
				outs[r] = &bytes.Buffer{}
				c.Stdout, c.Stderr = outs[r], outs[r]
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[r] = c
			}
			for r, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Fatalf("rank %d: %v: %s", r, err, outs[r])
				}
			}
			var run realRun
			if err := json.Unmarshal(outs[0].Bytes(), &run); err != nil {
				t.Fatalf("rank 0's output: %v:\n%s", err, outs[0])
			}
			if run.SharedPairs != 1 {
				skipIfShmFull(t)
				t.Fatalf("the ranks did not share memory: %s", outs[0])
			}
			ways, copies := 2, int64(4)
			if tc.over {
				ways, copies = 0, 0
			}
			if run.Oversubscribed != tc.over || run.SingleCopyWays != ways || run.SingleCopies != copies {
				t.Errorf("ranks on CPUs %s and %s: oversubscribed %t, single copies in %d directions, %d messages copied once; want %t, %d, %d",
					tc.pins[0], tc.pins[1], run.Oversubscribed, run.SingleCopyWays, run.SingleCopies, tc.over, ways, copies)
			}
		})
	}
}

// TestRealBindsRanks: collsim real --np binds each rank to a CPU of its
// own when there are enough, as mpirun binds to cores, and not with
// --bind-to none or with more ranks than CPUs.
func TestRealBindsRanks(t *testing.T) {
	cpus := affinity(t)
	if len(cpus) < 2 {
		t.Skip("needs 2 CPUs to bind ranks apart")
	}
	all := realrun.CPUList()
	for _, tc := range []struct {
		np   int
		bind string
		want []string
	}{
		{2, "core", cpus[:2]},
		{2, "none", []string{all, all}},
		{len(cpus) + 1, "core", slices.Repeat([]string{all}, len(cpus)+1)},
	} {
		run := realOutput(t, "--np", fmt.Sprint(tc.np), "-s", "8", "--iterations", "1", "--bind-to", tc.bind)
		if !slices.Equal(run.CPUs, tc.want) {
			t.Errorf("--np %d --bind-to %s: the ranks ran on CPUs %q, want %q", tc.np, tc.bind, run.CPUs, tc.want)
		}
	}
}

// affinity lists the CPUs this process may run on, read with
// sched_getaffinity here rather than through the code under test.
func affinity(t *testing.T) []string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	var cpus []string
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, fmt.Sprint(c))
		}
	}
	return cpus
}
