package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSlurmSweepArray runs a sweep as a 4-task Slurm job array on a real
// one-node Slurm cluster (testdata/slurm/sweep-array.sh starts Debian's
// slurmctld, slurmd and munge on localhost, installing them when missing),
// and checks that the merged shards are the whole sweep's output but for
// wall times. It skips with the script's reason where Slurm cannot run
// (not root, no packages); .ci/run runs it as root.
func TestSlurmSweepArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a Slurm cluster")
	}
	work := t.TempDir()
	bin := filepath.Join(work, "collsim")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sweep := filepath.Join(work, "sweep.yaml")
	os.WriteFile(sweep, []byte(`# 2 machines x 2 algorithms x 6 sizes, 8 ranks each
base: {ranks: 8}
axes:
  machine: [small, fattree-1024]
  algo: [ring, ompi]
  size: 8..256KiB
`), 0o644)
	cluster := filepath.Join(work, "cluster")
	os.Mkdir(cluster, 0o700)
	script, _ := filepath.Abs("testdata/slurm/sweep-array.sh")
	cmd := exec.Command(script, bin, sweep, cluster)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 77 {
		t.Skip(strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr.String())
	}
	t.Log(strings.TrimSpace(string(out)))
	merged, err1 := os.ReadFile(filepath.Join(cluster, "merged.csv"))
	whole, err2 := os.ReadFile(filepath.Join(cluster, "whole.csv"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, rows := readRows(t, string(merged)); len(rows) != 2*2*16 {
		t.Errorf("%d merged rows, want 64", len(rows))
	}
	if withoutWall(t, string(merged)) != withoutWall(t, string(whole)) {
		t.Errorf("the 4 array tasks' shards merged differ from the whole sweep:\n%s\n%s", merged, whole)
	}
	for i := 1; i <= 4; i++ { // each task ran its own shard, under Slurm
		part, err := os.ReadFile(filepath.Join(cluster, "part-"+string(rune('0'+i))+".csv"))
		if _, rows := readRows(t, string(part)); err != nil || len(rows) != 16 {
			t.Errorf("part %d: %d rows, want 16 (%v)", i, len(rows), err)
		}
	}
}
