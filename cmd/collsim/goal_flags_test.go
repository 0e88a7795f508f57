package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestGOALRunTakesTheRunsConditions: a GOAL file run on the flow network
// takes --degrade, --fail, --routing, --jitter and --links as a
// collective's run does (they were dropped without a word): the alltoall
// exported by collsim schedule takes the time the alltoall run takes under
// each, reports the conditions, and lists the busiest links.
func TestGOALRunTakesTheRunsConditions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a2a.goal")
	if _, errs, code := collsim(t, "schedule", "-c", "alltoall", "-n", "72", "-s", "72KiB", "-o", file); code != 0 {
		t.Fatalf("schedule: exit %d: %s", code, errs)
	}
	type result struct {
		Time       float64           `json:"time_s"`
		Routing    string            `json:"routing"`
		Faults     []string          `json:"faults"`
		NoiseModel string            `json:"noise_model"`
		Links      []json.RawMessage `json:"busiest_links"`
	}
	run := func(args ...string) result {
		out, errs, code := collsim(t, append([]string{"run", "-m", "dragonfly-72", "--network", "flow", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return r
	}
	plain := run("--goal", file)
	for _, flags := range [][]string{
		{"--degrade", "h0->r0.0:0.01"}, {"--fail", "r0.0->r0.1"}, {"--routing", "valiant"}, {"--routing", "ugal"}, {"--jitter", "normal:1us"},
	} {
		goal := run(append([]string{"--goal", file}, flags...)...)
		coll := run(append([]string{"-c", "alltoall", "-n", "72", "-s", "72KiB", "--verify", "off"}, flags...)...)
		if goal.Time != coll.Time || goal.Time == plain.Time || goal.Routing != coll.Routing || len(goal.Faults) != len(coll.Faults) || goal.NoiseModel != coll.NoiseModel {
			t.Errorf("%v: GOAL %+v, the collective's run %+v, GOAL without the flags %g s", flags, goal, coll, plain.Time)
		}
	}
	if r := run("--goal", file, "--links", "3"); len(r.Links) != 3 {
		t.Errorf("--links 3 on a GOAL run listed %d links", len(r.Links))
	}
}
