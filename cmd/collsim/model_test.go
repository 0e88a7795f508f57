package main

import (
	"encoding/json"
	"math"
	"testing"
)

// TestModelPricesWhatRunRuns: model prices each algorithm with the options
// run fills in (a pipeline's segment, SUARA's grid and subsets), so its
// figure is the closed form run prints beside the simulation. It priced
// untuned chains (8192-element segments: 24.97 us for a 5-rank 64 KiB
// bcast that run, with 139-element segments, simulates in 9.51 us) and
// SUARA with recursive doubling inside (an audit).
func TestModelPricesWhatRunRuns(t *testing.T) {
	for _, c := range []struct{ coll, algo, ranks, size string }{
		{"bcast", "chain", "5", "64KiB"},
		{"reduce", "chain", "12", "64KiB"},
		{"allreduce", "linear_pipeline", "12", "1MiB"},
		{"allreduce", "suara", "4", "64KiB"},
		{"allreduce", "suara", "12", "1MiB"},
	} {
		out, errs, code := collsim(t, "model", "-c", c.coll, "-n", c.ranks, "-s", c.size, "--json")
		var rows []struct {
			Times map[string]float64 `json:"times_s"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
			t.Fatalf("model %v: exit %d: %s%s", c, code, out, errs)
		}
		run, errs, code := collsim(t, "run", "-c", c.coll, "-a", c.algo, "-n", c.ranks, "-s", c.size, "--json")
		var r struct {
			Model *float64 `json:"model_s"`
		}
		if code != 0 || json.Unmarshal([]byte(run), &r) != nil || r.Model == nil {
			t.Fatalf("run %v: exit %d: %s%s", c, code, run, errs)
		}
		if got := rows[0].Times[c.algo]; math.Abs(got-*r.Model) > 1e-12 {
			t.Errorf("%v: model prices %g s, run's closed form %g s", c, got, *r.Model)
		}
	}
}
