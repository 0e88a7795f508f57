package realcmd

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/collsim/collsim/sim/realrun"
)

// coresFor returns the CPUs to bind ranks 0..ranks-1 to, one each, from
// those this process may run on; nil when there are fewer of them than
// ranks (mpirun does not bind an oversubscribed node either).
func coresFor(ranks int) []int {
	cpus := realrun.CPUs()
	if len(cpus) < ranks {
		return nil
	}
	return cpus[:ranks]
}

// bindToCPU binds every thread of this process to CPU cpu (the launcher's
// COLLSIM_CPU); threads made later inherit it from the thread that makes
// them.
func bindToCPU(cpu string) error {
	c, err := strconv.Atoi(cpu)
	if err != nil || c < 0 || c >= 1024 {
		return fmt.Errorf("COLLSIM_CPU=%q: want a CPU number", cpu)
	}
	var set unix.CPUSet
	set.Set(c)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("binding to CPU %d: %w", c, err)
		}
	}
	return nil
}
