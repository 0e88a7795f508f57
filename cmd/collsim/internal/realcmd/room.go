package realcmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/collsim/collsim/sim/realrun"
)

// threadsPerRank is how many threads a rank of np uses, about: one for
// each peer, whose reader waits in a system call (a futex on a shared ring,
// a socket's read), and a few of Go's own (40 in a rank of 32, over shared
// memory or TCP alike).
func threadsPerRank(np int) int { return np + 8 }

// threadRoom refuses np local ranks when their threads would pass what
// the kernel lets run at once (kernel.threads-max and kernel.pid_max, less
// the threads running now): at --np 200, 41,600 threads against pid_max's
// 32,768, ranks died in pthread_create with stack dumps of 200,000 lines.
// read reads a /proc file; where one cannot be read (not Linux), nothing
// is refused.
func threadRoom(np int, read func(string) ([]byte, error)) error {
	number := func(file string, field int) (int, bool) {
		b, err := read(file)
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(b))
		if len(f) <= field {
			return 0, false
		}
		v, err := strconv.Atoi(f[field])
		return v, err == nil
	}
	limit, ok := number("/proc/sys/kernel/threads-max", 0)
	if !ok {
		return nil
	}
	if pids, ok := number("/proc/sys/kernel/pid_max", 0); ok {
		limit = min(limit, pids)
	}
	inUse := 0
	if b, err := read("/proc/loadavg"); err == nil { // "0.5 0.4 0.3 2/345 6789": 345 threads
		if f := strings.Fields(string(b)); len(f) >= 4 {
			if _, total, ok := strings.Cut(f[3], "/"); ok {
				inUse, _ = strconv.Atoi(total)
			}
		}
	}
	need := np * threadsPerRank(np)
	if room := limit - inUse; need > room {
		most := 1
		for (most+1)*threadsPerRank(most+1) <= room {
			most++
		}
		return fmt.Errorf("--np %d: %d ranks need about %d threads (each keeps one for each peer), and this machine lets %d more run (kernel.threads-max and kernel.pid_max: %d; %d running now): give --np %d or fewer, or raise those limits", np, np, need, max(room, 0), limit, inUse, most)
	}
	return nil
}

// memoryRoom refuses jobs whose buffers, on all np local ranks, would pass
// the memory the machine has available (MemAvailable of /proc/meminfo):
// an 8 GiB allreduce on 2 ranks grew each to 14 GiB on a 24 GiB machine
// until the kernel's out-of-memory killer, which may kill any process of
// the machine, killed one. A rank holds a job's buffers twice
// (buffersHeld); with interleave every job's at once, else one job's at a
// time. read reads /proc/meminfo; where it cannot be read, nothing is
// refused.
func memoryRoom(jobs []realrun.Job, np int, interleave bool, read func(string) ([]byte, error)) error {
	b, err := read("/proc/meminfo")
	if err != nil {
		return nil
	}
	var avail int64 = -1
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				avail = kb << 10
			}
		}
	}
	if avail < 0 {
		return nil
	}
	var need, largest int64
	name := ""
	for _, j := range jobs {
		if j.Schedule.Buffers == nil || j.Data == nil {
			continue
		}
		var bytes int64
		for r := range np {
			for _, n := range j.Schedule.Buffers(r) {
				bytes += buffersHeld * 8 * n
			}
		}
		if bytes > largest {
			largest, name = bytes, j.Name
		}
		if interleave {
			need += bytes
		} else {
			need = max(need, bytes)
		}
	}
	if need > avail {
		what := fmt.Sprintf("%s's buffers on %d ranks", name, np)
		if interleave {
			what = fmt.Sprintf("the buffers of every call at once (--interleave) on %d ranks", np)
		}
		gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
		return fmt.Errorf("%s take about %s (each rank holds its buffers twice: the iteration's, refilled, while the last are collected), more than the %s of memory this machine has available: give smaller --sizes or fewer --np", what, gib(need), gib(avail))
	}
	return nil
}

// buffersHeld is how many copies of its buffers a rank holds: each
// iteration's are filled afresh (Job.Data) while the last's wait for the
// collector (14 GiB a rank for an allreduce of 8 GiB, measured).
const buffersHeld = 2

// launchRoom refuses a launch of np local ranks running jobs that this
// machine cannot hold: too many threads, or too much memory.
func launchRoom(jobs []realrun.Job, np int, interleave bool) error {
	if err := threadRoom(np, os.ReadFile); err != nil {
		return err
	}
	return memoryRoom(jobs, np, interleave, os.ReadFile)
}
