package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestModelRecommendsWhatRunRuns: every algorithm model calls the best,
// on every built-in machine, collective, rank count and size here, is one
// collsim run then runs there (before, a recommendation could be an
// algorithm run refuses on that machine).
func TestModelRecommendsWhatRunRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 300 runs")
	}
	for _, m := range []string{"small", "fattree-1024", "dragonfly-72", "gpu-cluster", "xc40"} {
		for _, c := range []string{"allreduce", "bcast", "allgather", "reduce_scatter", "alltoall", "barrier"} {
			out, stderr, code := collsim(t, "model", "-m", m, "-c", c, "-n", "2,5,16,64", "-s", "64,64KiB,1MiB", "--json")
			if code != 0 {
				t.Fatalf("model %s %s: exit %d: %s", m, c, code, stderr)
			}
			var rows []struct {
				Ranks     int    `json:"ranks"`
				SizeBytes int64  `json:"size_bytes"`
				Best      string `json:"best"`
			}
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Best == "" {
					continue
				}
				args := []string{"run", "-m", m, "-c", c, "-a", r.Best, "-n", fmt.Sprint(r.Ranks), "-s", fmt.Sprint(r.SizeBytes), "--verify", "off", "-q"}
				if _, stderr, code := collsim(t, args...); code != 0 {
					t.Errorf("model recommends %s for %s on %d ranks of %s at %d B, and run refuses it: %s", r.Best, c, r.Ranks, m, r.SizeBytes, stderr)
				}
			}
		}
	}
}
