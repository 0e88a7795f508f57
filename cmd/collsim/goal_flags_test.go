package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// --links-csv with --goal writes the links' utilization over time, as it
// does for a collective (it was taken and never written: an audit). One
// message of 10^6 B over small's 12.5 GB/s links keeps each link of its
// route busy 80 us: the spans' utilizations times their widths add up to
// that, on each of the two links.
func TestGOALLinksCSV(t *testing.T) {
	dir := t.TempDir()
	goal, out := filepath.Join(dir, "two.goal"), filepath.Join(dir, "links.csv")
	os.WriteFile(goal, []byte("num_ranks 2\nrank 0 {\nl0: send 1000000b to 1 tag 0\n}\nrank 1 {\nl0: recv 1000000b from 0 tag 0\n}\n"), 0o644)
	if _, stderr, code := collsim(t, "run", "--goal", goal, "--network", "flow", "--links", "2", "--links-csv", out, "--link-bins", "7"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+2*7 {
		t.Fatalf("%d rows (%v), want a header and 7 spans of 2 links", len(rows), err)
	}
	busy := map[string]float64{}
	for _, r := range rows[1:] {
		start, _ := strconv.ParseFloat(r[3], 64)
		end, _ := strconv.ParseFloat(r[4], 64)
		u, _ := strconv.ParseFloat(r[5], 64)
		busy[r[0]] += u * (end - start)
	}
	for link, b := range busy {
		if math.Abs(b-80e-6) > 1e-9 {
			t.Errorf("%s busy %.6g s, want 80 us", link, b)
		}
	}
	if len(busy) != 2 {
		t.Errorf("links %v, want the route's two", busy)
	}
}
