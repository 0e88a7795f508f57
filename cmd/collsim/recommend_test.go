package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
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
			args := []string{"model", "-m", m, "-c", c, "-n", "2,5,16,64", "--json"}
			if c != "barrier" { // (a barrier's messages are empty: -s is refused)
				args = append(args, "-s", "64,64KiB,1MiB")
			}
			out, stderr, code := collsim(t, args...)
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

// TestModelSaysWhatHostCostsChange: on a machine whose hosts charge o =
// 1 µs per send and per receive, a 64-rank linear allreduce's root takes
// in 63 messages and sends 63, so its form is at least 2 x 63 x 1 µs =
// 126 µs (its alpha-beta-gamma form, which leaves o out, said 2.5 µs and
// was called the best); forms that leave o out are marked ~ and say so.
// On small, which charges nothing per message, the linear allreduce's 8 B
// win is flagged: at o = 500 ns it would take at least 63 µs, while
// recursive doubling's 6 exchanges take 6 (alpha + 2o) = 12 µs there
// (small's alpha is 1 µs).
func TestModelSaysWhatHostCostsChange(t *testing.T) {
	type row struct {
		Times        map[string]float64 `json:"times_s"`
		LeftOut      map[string]bool    `json:"host_costs_left_out"`
		Best         string             `json:"best"`
		ZeroOverhead string             `json:"zero_overhead_note"`
	}
	model := func(args ...string) []row {
		out, stderr, code := collsim(t, append([]string{"model", "-c", "allreduce", "-n", "64", "-s", "8", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("model %v: exit %d: %s", args, code, stderr)
		}
		var rows []row
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("model %v: %v, %d rows", args, err, len(rows))
		}
		return rows
	}
	r := model("-m", "../../configs/examples/fattree-1024-overhead.yaml")[0]
	if r.Times["linear"] < 126e-6 {
		t.Errorf("linear allreduce at o = 1 µs priced %g s: less than its root's 126 µs of overheads", r.Times["linear"])
	}
	if r.LeftOut["linear"] || r.LeftOut["recursive_doubling"] || !r.LeftOut["suara"] {
		t.Errorf("forms that leave o out: %v; want suara's, not linear's or recursive doubling's (LogGP forms)", r.LeftOut)
	}
	if r.ZeroOverhead != "" {
		t.Errorf("a machine that charges o got the zero-overhead note: %s", r.ZeroOverhead)
	}
	out, _, _ := collsim(t, "model", "-c", "allreduce", "-n", "64", "-s", "8", "-m", "../../configs/examples/fattree-1024-overhead.yaml")
	if !strings.Contains(out, "~ = an alpha-beta-gamma form that leaves out") {
		t.Errorf("the table does not say what ~ means:\n%s", out)
	}
	r = model("-m", "small")[0]
	if r.Best != "linear" || !strings.Contains(r.ZeroOverhead, "at o = 500ns, recursive_doubling is the fastest") {
		t.Errorf("small, 64 ranks, 8 B: best %s, note %q; want linear, flagged for recursive doubling at o = 500 ns", r.Best, r.ZeroOverhead)
	}
	if len(r.LeftOut) != 0 {
		t.Errorf("small charges no o or g, yet forms are marked as leaving them out: %v", r.LeftOut)
	}
}

// TestModelDefaultRanksFitTheMachine: without --ranks, model's range
// (2..64) stops at what the machine holds (gpu-node-nvlink: 16 slots, so
// 2, 4, 8, 16); a rank count given that does not fit exits 1, as run's.
func TestModelDefaultRanksFitTheMachine(t *testing.T) {
	out, stderr, code := collsim(t, "model", "-m", "gpu-node-nvlink", "-s", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct{ Ranks int }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range rows {
		got = append(got, r.Ranks)
	}
	if fmt.Sprint(got) != "[2 4 8 16]" {
		t.Errorf("ranks %v, want [2 4 8 16]", got)
	}
	if _, stderr, code := collsim(t, "model", "-m", "gpu-node-nvlink", "-n", "32"); code != 1 || !strings.Contains(stderr, "does not fit") {
		t.Errorf("-n 32 on 16 slots: exit %d, %s", code, stderr)
	}
}

// TestModelBestPricesWhatTheMachineCharges: on a machine that charges o,
// model's best is never a form that leaves o out (~) while a form that
// prices it exists, and the best is what run simulates fastest among the
// algorithms collsim prices with o there: on fattree-1024-overhead, 256
// ranks, 4 KiB, Rabenseifner's alpha-beta form (20.3 µs) once won, but
// the simulation takes it 33.4 µs against recursive doubling's 20.6.
// model's exact is run's model_exact: false where routes differ (1,024
// ranks of fattree-1024), and run names both reasons an estimate is one.
func TestModelBestPricesWhatTheMachineCharges(t *testing.T) {
	const ov = "../../configs/examples/fattree-1024-overhead.yaml"
	out, stderr, code := collsim(t, "model", "-c", "allreduce", "-n", "256", "-s", "4KiB", "-m", ov, "--json")
	var rows []struct {
		Best    string          `json:"best"`
		LeftOut map[string]bool `json:"host_costs_left_out"`
		Exact   map[string]bool `json:"exact"`
	}
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	best := rows[0].Best
	if rows[0].LeftOut[best] {
		t.Errorf("best %s leaves out the o the machine charges", best)
	}
	bestT := simTime(t, "-m", ov, "-a", best, "-n", "256", "-s", "4KiB")
	for _, a := range []string{"ring", "recursive_doubling", "rabenseifner"} {
		if other := simTime(t, "-m", ov, "-a", a, "-n", "256", "-s", "4KiB"); other < bestT {
			t.Errorf("model's best %s simulates %g s; %s takes %g s", best, bestT, a, other)
		}
	}
	out, _, _ = collsim(t, "model", "-c", "allreduce", "-n", "1024", "-s", "8", "-m", "fattree-1024", "--json")
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Exact["ring"] {
		t.Errorf("ring on 1,024 ranks of fattree-1024 (routes differ): exact %v (%v)", rows[0].Exact["ring"], err)
	}
	out, _, _ = collsim(t, "run", "-m", ov, "-a", "rabenseifner", "-n", "256", "-s", "4KiB")
	if !strings.Contains(out, "it leaves out the hosts' overhead o and gap g, which this machine charges; routes differ here") {
		t.Errorf("run's closed-form line:\n%s", out)
	}
}

// model --alpha prices the rendezvous handshake at two of the alpha given,
// as the machine's own is two of its alpha: a linear bcast of 1 MiB on 2
// ranks with alpha 10 us and beta 0.1 ns/B takes a + 2a + n beta =
// 30 us + 104.8576 us = 134.8576 us (by hand; the handshake stayed 2 us,
// twice the machine's alpha: 116.8576 us).
func TestModelAlphaMovesTheHandshake(t *testing.T) {
	out, stderr, code := collsim(t, "model", "-c", "bcast", "-n", "2", "-s", "1MiB", "--alpha", "1e-5", "--beta", "1e-10", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		Times map[string]float64 `json:"times_s"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if got, want := rows[0].Times["linear"], 134.8576e-6; math.Abs(got-want) > 1e-15 {
		t.Errorf("linear bcast: %.10g s, want %.10g", got, want)
	}
}

// Where an algorithm's LogGP form does not cover the call (recursive
// doubling on 7 ranks, not a power of two), model gives its Hockney form,
// marked as leaving o out, as it does for algorithms with no LogGP form;
// it printed "-", no form, where the Hockney bound exists (a new user's
// trial). On 8 ranks the LogGP form prices it.
func TestModelFallsBackFromLogGP(t *testing.T) {
	for _, tc := range []struct {
		ranks   string
		leftOut bool
	}{{"7", true}, {"8", false}} {
		out, stderr, code := collsim(t, "model", "-c", "allreduce", "-n", tc.ranks, "-s", "8", "--json", "-m", "../../configs/examples/fattree-1024-overhead.yaml")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rows []struct {
			Times   map[string]float64 `json:"times_s"`
			LeftOut map[string]bool    `json:"host_costs_left_out"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		if !(rows[0].Times["recursive_doubling"] > 0) || rows[0].LeftOut["recursive_doubling"] != tc.leftOut {
			t.Errorf("%s ranks: recursive doubling %g s, o left out %v; want a time, left out %v", tc.ranks, rows[0].Times["recursive_doubling"], rows[0].LeftOut["recursive_doubling"], tc.leftOut)
		}
	}
}
