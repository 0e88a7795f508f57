package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/collsim/collsim/sim/realrun"
)

// BenchmarkRealVersusOpenMPI times collsim's real runs against Open MPI
// 4.1 on the same machine, side by side in each iteration, both timed as
// the OSU benchmarks time them and both checking their results, and reports
// both figures and their ratio, over each transport. Each iteration runs
// the two alternately, sideBySide times each, and compares their medians:
// this host's speed changes from minute to minute (its copies and cache
// line transfers have two speeds), and one run of each let a change
// between them move a ratio by up to 1.9x.
//
//   - tcp: collsim --transport tcp against Open MPI's TCP transport
//     (--mca btl tcp,self);
//   - shm: collsim's shared memory (--transport shm, its default on one
//     host) against Open MPI's (--mca pml ob1 --mca btl vader,self, its
//     default for ranks on one node when no network library claims them).
//
// In each:
//
//   - ring: the ring allreduce of 64 MiB on 4 processes (Open MPI's
//     coll/tuned algorithm 4);
//   - npN-COLLECTIVE-SIZE: allreduce, bcast and alltoall of 1 and 16 MiB on
//     2 and 4 processes, each library's own choice of algorithm (collsim's
//     -a ompi is Open MPI's decision);
//   - pingpong: 8-byte one-way latency between 2 processes (lower is
//     better: the ratio is collsim's time over Open MPI's).
//
// It needs Debian's openmpi-bin and libopenmpi-dev (mpicc, mpirun);
// without them it skips.
//
//	go test ./cmd/collsim -run '^$' -bench RealVersusOpenMPI -benchtime 1x
func BenchmarkRealVersusOpenMPI(b *testing.B) {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("needs %s (Debian packages openmpi-bin and libopenmpi-dev)", tool)
		}
	}
	bin := filepath.Join(b.TempDir(), "ompi_coll")
	if out, err := exec.Command("mpicc", "-O2", "-o", bin, "internal/realcmd/testdata/ompi_coll.c").CombinedOutput(); err != nil {
		b.Fatalf("mpicc: %v: %s", err, out)
	}
	for _, tr := range []struct{ name, btl string }{{"tcp", "tcp,self"}, {"shm", "vader,self"}} {
		b.Run(tr.name, func(b *testing.B) {
			if err := realrun.SharedMemoryAvailable(); tr.name == "shm" && err != nil {
				b.Skipf("needs shared memory between processes: %v", err)
			}
			benchAgainstOpenMPI(b, bin, tr.name, tr.btl)
		})
	}
}

// benchAgainstOpenMPI runs BenchmarkRealVersusOpenMPI's cases over one
// transport: collsim's --transport transport, Open MPI's btl.
func benchAgainstOpenMPI(b *testing.B, bin, transport, btl string) {
	ompi := func(b *testing.B, np int, coll string, size int64, iterations int, mca ...string) time.Duration {
		args := append([]string{"--allow-run-as-root", "--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", btl}, mca...)
		args = append(args, "-np", strconv.Itoa(np), bin, coll, strconv.FormatInt(size, 10), strconv.Itoa(iterations), "2")
		out, err := exec.Command("mpirun", args...).CombinedOutput()
		if err != nil {
			b.Fatalf("mpirun %v: %v: %s", args, err, out)
		}
		f := strings.Fields(string(out))
		if len(f) != 4 {
			b.Fatalf("unexpected output from the Open MPI program: %q", out)
		}
		avg, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			b.Fatal(err)
		}
		return time.Duration(avg * 1e9)
	}
	ours := func(b *testing.B, name string, args ...string) time.Duration {
		args = append(args, "--transport", transport)
		out := realOutput(b, args...)
		if want := map[string]int{"tcp": 0}[transport]; transport == "tcp" && out.SharedPairs != want || transport == "shm" && out.SharedPairs != out.Pairs {
			b.Fatalf("collsim real %v: %d of %d pairs of ranks used shared memory", args, out.SharedPairs, out.Pairs)
		}
		for _, r := range out.Results {
			if strings.Contains(r.Name, name) { // "ompi: allreduce/rabenseifner" under -a ompi
				return time.Duration(r.AvgNs)
			}
		}
		b.Fatalf("collsim real %v reported no %s", args, name)
		return 0
	}
	// alternate runs ours and theirs by turns, sideBySide times each, and
	// returns the median time of each.
	alternate := func(ours, theirs func() time.Duration) (c, o time.Duration) {
		var ourTimes, theirTimes []time.Duration
		for range sideBySide {
			ourTimes = append(ourTimes, ours())
			theirTimes = append(theirTimes, theirs())
		}
		return median(ourTimes), median(theirTimes)
	}
	report := func(b *testing.B, size int64, c, o time.Duration) {
		cbw, obw := float64(size)/c.Seconds()/1e9, float64(size)/o.Seconds()/1e9
		b.ReportMetric(cbw, "collsim-GB/s")
		b.ReportMetric(obw, "ompi-GB/s")
		b.ReportMetric(cbw/obw, "collsim/ompi")
	}
	b.Run("ring-64MiB", func(b *testing.B) {
		for range b.N {
			c, o := alternate(func() time.Duration {
				return ours(b, "allreduce/ring", "--np", "4", "-a", "ring", "-s", "64MiB", "--iterations", "5", "--warmup", "2")
			}, func() time.Duration {
				return ompi(b, 4, "allreduce", 64<<20, 5, "--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_allreduce_algorithm", "4")
			})
			report(b, 64<<20, c, o)
		}
	})
	for _, np := range []int{2, 4} {
		for _, coll := range []string{"allreduce", "bcast", "alltoall"} {
			for _, size := range []int64{1 << 20, 16 << 20} {
				b.Run(fmt.Sprintf("np%d-%s-%dMiB", np, coll, size>>20), func(b *testing.B) {
					for range b.N {
						c, o := alternate(func() time.Duration {
							return ours(b, coll+"/", "--np", strconv.Itoa(np), "-c", coll, "-a", "ompi", "-s", strconv.FormatInt(size, 10), "--iterations", "10", "--warmup", "2")
						}, func() time.Duration { return ompi(b, np, coll, size, 10) })
						report(b, size, c, o)
					}
				})
			}
		}
	}
	b.Run("pingpong-8B", func(b *testing.B) {
		for range b.N {
			// As many round trips, timed and warming up, as the Open MPI program
			// makes (30 and 2 calls of 1,000; collsim's calls make 100).
			c, o := alternate(func() time.Duration {
				return ours(b, "pingpong/", "--np", "2", "--pingpong", "8", "-s", "8", "--iterations", "300", "--warmup", "20")
			}, func() time.Duration { return ompi(b, 2, "pingpong", 8, 30) })
			b.ReportMetric(float64(c.Nanoseconds())/1e3, "collsim-us")
			b.ReportMetric(float64(o.Nanoseconds())/1e3, "ompi-us")
			b.ReportMetric(float64(c)/float64(o), "collsim/ompi")
		}
	})
}

// sideBySide is how many times each iteration of BenchmarkRealVersusOpenMPI
// runs each library, alternately.
const sideBySide = 3

// median is the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	return (ds[(n-1)/2] + ds[n/2]) / 2
}
