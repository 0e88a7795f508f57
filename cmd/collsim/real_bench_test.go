package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkRealRingVersusOpenMPI times the real ring allreduce of 64 MiB
// on 4 local processes over loopback TCP, data checked, against Open MPI's
// ring allreduce (coll/tuned algorithm 4 over the TCP BTL) on the same
// machine, both as OSU times them, and reports both bandwidths and their
// ratio. It needs Debian's openmpi-bin and libopenmpi-dev (mpicc, mpirun);
// without them it skips.
//
//	go test ./cmd/collsim -run '^$' -bench RealRingVersusOpenMPI -benchtime 1x
func BenchmarkRealRingVersusOpenMPI(b *testing.B) {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("needs %s (Debian packages openmpi-bin and libopenmpi-dev)", tool)
		}
	}
	const size = 64 << 20
	bin := filepath.Join(b.TempDir(), "ompi_allreduce")
	if out, err := exec.Command("mpicc", "-O2", "-o", bin, "internal/realcmd/testdata/ompi_allreduce.c").CombinedOutput(); err != nil {
		b.Fatalf("mpicc: %v: %s", err, out)
	}
	for range b.N {
		ours := realJSON(b, "--np", "4", "-a", "ring", "-s", "64MiB", "--iterations", "5", "--warmup", "2")
		out, err := exec.Command("mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "tcp,self",
			"--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_allreduce_algorithm", "4",
			"-np", "4", bin, strconv.Itoa(size), "5", "2").CombinedOutput()
		if err != nil {
			b.Fatalf("mpirun: %v: %s", err, out)
		}
		f := strings.Fields(string(out))
		if len(f) != 4 {
			b.Fatalf("unexpected output from the Open MPI program: %q", out)
		}
		ompiAvg, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			b.Fatal(err)
		}
		collsimBW := size / time.Duration(ours[0].AvgNs).Seconds() / 1e9
		ompiBW := size / ompiAvg / 1e9
		b.ReportMetric(collsimBW, "collsim-GB/s")
		b.ReportMetric(ompiBW, "ompi-GB/s")
		b.ReportMetric(collsimBW/ompiBW, "collsim/ompi")
	}
}
