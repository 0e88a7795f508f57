package main

import (
	"encoding/json"
	"testing"
)

// TestEveryCommandHasJSON runs each command that prints a result with
// --json and checks that its standard output is one JSON value and
// nothing else (the commands that write files, sweep, merge, plot and
// report, write CSV, JSON Lines, pictures and HTML instead).
func TestEveryCommandHasJSON(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "-n", "4", "-s", "64"},
		{"algos"},
		{"topo", "-m", "small"},
		{"model", "-n", "4", "-s", "64"},
		{"explain", "-a", "ring", "-n", "3", "-s", "24"},
		{"tune", "-n", "4", "-s", "64"},
		{"validate", "-n", "4", "-s", "64", "-a", "ring"},
		{"study", "lp", "-n", "2..4", "-o", dir},
		{"study", "suara", "-n", "64", "-s", "8,1KiB", "-o", dir},
		{"study", "noise", "-n", "8", "-s", "64KiB", "-o", dir},
		{"study", "routing", "-n", "16", "-s", "64KiB", "-o", dir},
	} {
		out, stderr, code := collsim(t, append(args, "--json")...)
		if code != 0 {
			t.Errorf("%v --json: exit %d: %s", args, code, stderr)
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%v --json: not one JSON value (%v):\n%.300s", args, err, out)
		}
	}
}

// run's wall time is the simulation's; wall_total_s is the whole call's,
// the schedule, the network and the data built and checked with it (a
// data-checked run took 5.4 s whose wall time said 1.7: a new user's
// trial), so it is more: the data are built before and checked after.
func TestRunWallTotal(t *testing.T) {
	out, stderr, code := collsim(t, "run", "-n", "16", "-s", "1MiB", "--verify", "on", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Wall  float64 `json:"wall_s"`
		Total float64 `json:"wall_total_s"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !(r.Wall > 0) || r.Total <= r.Wall {
		t.Errorf("wall_s %g, wall_total_s %g: want the whole call's at least the simulation's", r.Wall, r.Total)
	}
}
