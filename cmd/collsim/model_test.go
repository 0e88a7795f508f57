package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
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

// The bound takes the model the flags give where they give one: with
// --beta 1 ns/B the busiest rank of a 64-rank allreduce of 1 MiB moves
// 2 (n - n/64) = 2,064,384 bytes, 2.064 ms, where the machine's own
// bound model (cori: 30 GB/s a rank) gives 69 us for them.
func TestModelBoundTakesTheFlags(t *testing.T) {
	out, stderr, code := collsim(t, "model", "-m", "cori", "-c", "allreduce", "-n", "64", "-s", "1MiB", "--beta", "1e-9", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		Bound float64 `json:"lower_bound_s"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if b, moved := rows[0].Bound, 2064384e-9; b < moved || b > moved+2e-6 {
		t.Errorf("bound %g s, want the %g s the bytes take at 1 ns/B and a latency", b, moved)
	}
}

// TestModelSaysWhenBoundsLeaveTheBestOpen: on 8 ranks of small, 8 MiB,
// Linear Pipelining's allreduce runs faster than Rabenseifner's (the
// simulation, below), but its closed form is an upper bound, every
// segment one after another, 10.8x Rabenseifner's exact time: model named
// Rabenseifner the best (a new user's trial). Its lower bound lies below
// Rabenseifner's time, so the best is marked open and the pipeline named;
// on 8 ranks of reduce_scatter, where every form is exact, nothing is.
func TestModelSaysWhenBoundsLeaveTheBestOpen(t *testing.T) {
	out, errs, code := collsim(t, "run", "-a", "linear_pipeline,rabenseifner", "-n", "8", "-s", "8MiB", "--verify", "off", "--json")
	var runs []struct {
		Algorithm string  `json:"algorithm"`
		Time      float64 `json:"time_s"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 2 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if runs[0].Algorithm != "linear_pipeline" || runs[0].Time >= runs[1].Time {
		t.Fatalf("the simulation no longer puts the pipeline first: %+v", runs)
	}
	var rows []struct {
		Best        string   `json:"best"`
		MayBeFaster []string `json:"may_be_faster"`
	}
	out, errs, code = collsim(t, "model", "-c", "allreduce", "-n", "8", "-s", "8MiB", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if rows[0].Best != "rabenseifner" || !slices.Contains(rows[0].MayBeFaster, "linear_pipeline") {
		t.Errorf("best %q, may be faster %v: want rabenseifner, with linear_pipeline among those that may be faster", rows[0].Best, rows[0].MayBeFaster)
	}
	text, _, _ := collsim(t, "model", "-c", "allreduce", "-n", "8", "-s", "8MiB")
	if !strings.Contains(text, "rabenseifner (?)") || !strings.Contains(text, "linear_pipeline may be faster than rabenseifner") {
		t.Errorf("the table does not say the best is open:\n%s", text)
	}
	// On a machine whose routes differ (forms marked ≈) too: on 64 ranks
	// of fattree-1024 (two leaves) at 8 MiB the simulation puts the
	// pipeline (1.56 ms) ahead of Rabenseifner (2.17 ms), the forms' best.
	out, _, _ = collsim(t, "run", "-m", "fattree-1024", "-a", "linear_pipeline,rabenseifner", "-n", "64", "-s", "8MiB", "--verify", "off", "--json")
	runs = nil
	if json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 2 || runs[0].Time >= runs[1].Time {
		t.Fatalf("fattree-1024: the simulation no longer puts the pipeline first: %s", out)
	}
	out, _, _ = collsim(t, "model", "-c", "allreduce", "-m", "fattree-1024", "-n", "64", "-s", "8MiB", "--json")
	rows = nil
	if json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Best != "rabenseifner" || !slices.Contains(rows[0].MayBeFaster, "linear_pipeline") {
		t.Errorf("fattree-1024: %s", out)
	}
	out, _, _ = collsim(t, "model", "-c", "reduce_scatter", "-n", "8", "-s", "1MiB", "--json")
	rows = nil // (decoding into the old rows would keep their lists)
	if json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || len(rows[0].MayBeFaster) != 0 {
		t.Errorf("reduce_scatter on 8 ranks, all forms exact: %s", out)
	}
}
