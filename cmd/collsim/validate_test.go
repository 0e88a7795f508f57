package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateModelCrossbar: on the contention-free crossbar every closed
// form equals the analytic simulation to 1e-9, or the simulation lies
// within the bounds the form gives, for every collective over rank counts
// including primes and sizes from 8 B to 16 MiB; --max-error 1e-9 checks it.
// TestValidateLogGPForms: on a crossbar whose hosts charge o and g (with
// rendezvous above 64 KiB, as the built-in machines), the LogGP forms
// match the analytic simulation to 1e-9 through validate; an algorithm
// without one is flagged by the notes.
func TestValidateLogGPForms(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "loggp.yaml")
	os.WriteFile(cfg, []byte("network:\n  crossbar: {hosts: 64, link: {bandwidth: 10GB/s, latency: 500ns}}\nhost:\n  overhead: 700ns\n  gap: 2us\n  reduce_bandwidth: 5GB/s\n  eager_limit: 64KiB\n"), 0o644)
	for _, args := range [][]string{{"-c", "allreduce", "-a", "ring,recursive_doubling"}, {"-c", "allgather", "-a", "ring"}, {"-c", "alltoall", "-a", "pairwise"}, {"-c", "bcast", "-a", "binomial"}, {"-c", "allreduce", "-a", "linear"}, {"-c", "reduce,bcast,gather,scatter,allgather,alltoall,barrier", "-a", "linear"}} {
		full := append([]string{"validate", "-m", cfg, "-n", "2,16,64", "-s", "8,4KiB,1MiB", "--network", "analytic", "--max-error", "1e-9"}, args...)
		if stdout, stderr, code := collsim(t, full...); code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	// A barrier alone takes no size.
	if stdout, stderr, code := collsim(t, "validate", "-m", cfg, "-n", "2,16,64", "--network", "analytic", "--max-error", "1e-9", "-c", "barrier", "-a", "dissemination,linear"); code != 0 {
		t.Errorf("barrier: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, _ := collsim(t, "validate", "-m", cfg, "-n", "16", "-s", "1MiB", "--network", "analytic", "-c", "allreduce", "-a", "rabenseifner")
	if !strings.Contains(stdout, "LogGP form") {
		t.Errorf("no note on the forms that leave o and g out:\n%s", stdout)
	}
}

func TestValidateModelCrossbar(t *testing.T) {
	stdout, stderr, code := collsim(t, "validate", "-c", "all", "-n", "2,5,16,17,64", "-s", "8..16MiB", "--max-error", "1e-9", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Points []struct {
			Algorithm string             `json:"algorithm"`
			Exact     bool               `json:"exact"`
			Error     map[string]float64 `json:"error"`
		} `json:"points"`
		Summary []struct{ Algorithm string } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	exact := 0
	for _, p := range out.Points {
		if p.Exact {
			exact++
		}
	}
	if len(out.Summary) < 30 || exact < 1000 {
		t.Errorf("%d algorithms, %d exact points: the check covered too little", len(out.Summary), exact)
	}
}

// TestValidateModelExplains: on a 2:1 tapered fat-tree with both network
// models, the report says the network is tapered and gives both models'
// errors; --points lists every point; --plot writes the plots; a tight
// --max-error fails with status 3.
func TestValidateModelExplains(t *testing.T) {
	dir := t.TempDir()
	args := []string{"validate", "-m", "testdata/tapered-16.yaml", "-c", "alltoall,allreduce", "-a", "pairwise,linear,ring", "-n", "8,16", "-s", "8,256KiB",
		"--network", "analytic,flow", "--points", "--plot", dir}
	stdout, stderr, code := collsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"50% of full bisection bandwidth", "alltoall/pairwise  flow", "allreduce/ring     analytic", "P=16 256KiB"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report does not say %q:\n%s", want, stdout)
		}
	}
	for _, name := range []string{"validate-model-size", "validate-model-ranks", "validate-model-error"} {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(dir, name+ext)); err != nil || st.Size() < 1000 {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}
	_, stderr, code = collsim(t, append(args[:len(args)-2], "--max-error", "0.01")...)
	if code != 3 || !strings.Contains(stderr, "off by more than 1%") {
		t.Errorf("--max-error 0.01: exit %d, %s", code, stderr)
	}
}

// TestValidateModelOneHost: on a machine of one host, the kind
// validate --real fits, model validation runs (it crashed asking for a
// route between hosts 0 and 1 to judge the bisection) and says what the
// closed forms leave out of its channels: the bands of host.local_by_size
// and the duplex share.
func TestValidateModelOneHost(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "onehost.yaml")
	os.WriteFile(cfg, []byte("network:\n  crossbar: {hosts: 1, link: {bandwidth: 1GB/s, latency: 0}}\nhost:\n  ranks_per_host: 8\n  local: {bandwidth: 10GB/s, latency: 1us}\n  local_duplex: 0.5\n  local_by_size:\n    - {from: 64KiB, bandwidth: 2GB/s}\n"), 0o644)
	stdout, stderr, code := collsim(t, "validate", "-m", cfg, "-c", "allreduce", "-a", "ring", "-n", "8", "-s", "1MiB", "--points")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	text := strings.Join(strings.Fields(stdout), " ") // the notes are wrapped
	for _, want := range []string{"the closed forms are estimates at the grid's points where ranks on one host move messages at bandwidths that depend on their size (host.local_by_size), which they do not know", "partly or half duplex channels (host.local_duplex, or a band's duplex in host.local_by_size)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "bisection") {
		t.Errorf("one host has no bisection to speak of:\n%s", stdout)
	}
}

// TestValidateModelBadInput: what model validation refuses.
func TestValidateModelBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--network", "packet"}, `--network "packet"`},
		{[]string{"validate", "-c", "bcast", "-a", "scatter_allgather_rd", "-n", "3"}, "no algorithm with a closed form can run on this grid"},
		{[]string{"validate", "-c", "allreduce", "-a", "nope"}, "nope"},
		{[]string{"validate", "-c", "allscatter"}, "unknown collective"},
		// An alltoall of 8 B on 8 ranks sends nothing: run refuses it,
		// validate ran it as "0B" without a word (a new user's trial).
		{[]string{"validate", "-c", "alltoall", "-n", "8", "-s", "8"}, "--size: the alltoall calls of this grid would send nothing"},
	} {
		_, stderr, code := collsim(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
	}
	// Of 8, 40 and 72 B on 8 ranks, 72 moves 64 (8 B to each) and the
	// others nothing: one row, and both said.
	stdout, stderr, code := collsim(t, "validate", "-c", "alltoall", "-a", "pairwise", "-n", "8", "-s", "8,40,72", "--points")
	if code != 0 || strings.Count(stdout, "alltoall/pairwise  8") != 1 || !strings.Contains(stdout, "64B") || !strings.Contains(stdout, "2 alltoall calls would send nothing") || !strings.Contains(stdout, "1 alltoall calls move less than their size") {
		t.Errorf("exit %d: %s%s", code, stdout, stderr)
	}
	// Ranks that do not fit exit 1, as run's (README's exit codes).
	if _, stderr, code := collsim(t, "validate", "-n", "1000"); code != 1 || !strings.Contains(stderr, "does not fit on small") {
		t.Errorf("validate -n 1000: exit %d, stderr %q; want exit 1 saying it does not fit", code, stderr)
	}
}

// TestRunLinks: on a 2:1 tapered tree, a linear alltoall's busiest links
// are the leaf-to-spine links that remain, shared and nearly saturated.
func TestRunLinks(t *testing.T) {
	stdout, stderr, code := collsim(t, "run", "-m", "testdata/tapered-16.yaml", "--network", "flow", "-c", "alltoall", "-a", "linear", "-n", "16", "-s", "1MiB", "--links", "4", "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var out struct {
		Links []struct {
			From, To    string
			Utilization float64
			PeakFlows   int `json:"peak_flows"`
		} `json:"busiest_links"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Links) != 4 {
		t.Fatalf("%d links listed, want 4", len(out.Links))
	}
	for _, l := range out.Links {
		if !strings.HasPrefix(l.From, "s") || !strings.HasPrefix(l.To, "s") || l.Utilization < 0.9 || l.PeakFlows < 2 {
			t.Errorf("busiest link %+v: want a switch-to-switch link over 90%% utilized", l)
		}
	}
	if _, stderr, code := collsim(t, "run", "--links", "3"); code != 2 || !strings.Contains(stderr, "--links needs --network flow") {
		t.Errorf("--links on the analytic network: exit %d, %s", code, stderr)
	}
}

// simTime runs collsim run with args and --json, and returns the simulated
// time.
func simTime(t *testing.T, args ...string) float64 {
	t.Helper()
	stdout, stderr, code := collsim(t, append([]string{"run", "--json", "--verify", "off"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var r struct {
		Time float64 `json:"time_s"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r.Time
}

// TestDragonflyRouting: a job on two groups of a dragonfly whose groups
// are joined by one global link each. Minimal routing puts all of a
// bandwidth-bound alltoall's cross traffic on that link; Valiant spreads it
// over the seven other groups and must beat minimal; UGAL must do no worse
// than minimal where minimal is uncongested (a ring, whose one crossing
// message per direction does not fill the link) and no worse than Valiant
// by much where it is congested. Valiant is seeded: the same seed gives
// the same time.
func TestDragonflyRouting(t *testing.T) {
	machine := []string{"-m", "dragonfly-72", "--network", "flow", "-n", "16"}
	a2a := append(machine, "-c", "alltoall", "-a", "pairwise", "-s", "16MiB")
	ring := append(machine, "-c", "allreduce", "-a", "ring", "-s", "16MiB")
	minimal := simTime(t, append(a2a, "--routing", "minimal")...)
	valiant := simTime(t, append(a2a, "--routing", "valiant")...)
	ugal := simTime(t, append(a2a, "--routing", "ugal")...)
	if valiant > minimal/1.5 {
		t.Errorf("alltoall on two groups: valiant %g s is not well under minimal %g s", valiant, minimal)
	}
	if ugal > valiant*1.1 || ugal > minimal {
		t.Errorf("alltoall: ugal %g s against minimal %g s and valiant %g s", ugal, minimal, valiant)
	}
	if again := simTime(t, append(a2a, "--routing", "valiant")...); again != valiant {
		t.Errorf("valiant with the same seed: %g s, then %g s", valiant, again)
	}
	if rm, ru := simTime(t, append(ring, "--routing", "minimal")...), simTime(t, append(ring, "--routing", "ugal")...); ru > rm {
		t.Errorf("ring: ugal %g s is slower than minimal %g s", ru, rm)
	}
	for _, bad := range [][]string{{"run", "--routing", "valiant", "--network", "flow"}, {"run", "--routing", "valiant"}, {"run", "--routing", "random", "--network", "flow"}} {
		if _, stderr, code := collsim(t, bad...); code != 2 || !strings.Contains(stderr, "routing") {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
}

// TestNoise: periodic and random noise slow a run, reproducibly (same
// seed, same time); the noise study runs and draws its plot; bad noise
// flags are usage errors.
//
// Slower is asserted where it must hold: the ring allreduce on the
// analytic network is a max-plus system (each rank has one message in
// flight, each step waits for the one before, nothing contends), so a
// delay anywhere can only delay what follows. On a flow network noise can
// also speed a run up by spreading out messages that contended: ADAPT's
// bcast on tapered-16 runs 1% faster under --noise-random 5000:20us.
func TestNoise(t *testing.T) {
	monotone := []string{"-c", "allreduce", "-a", "ring", "-n", "16", "-s", "1MiB"}
	contended := []string{"-c", "bcast", "-a", "adapt", "-n", "16", "-s", "1MiB", "-m", "testdata/tapered-16.yaml", "--network", "flow"}
	quiet := simTime(t, monotone...)
	for _, noise := range [][]string{{"--noise-periodic", "200us:20us"}, {"--noise-random", "5000:20us"}} {
		for _, base := range [][]string{monotone, contended} {
			args := append(append([]string(nil), base...), noise...)
			a, b := simTime(t, args...), simTime(t, args...)
			if a != b {
				t.Errorf("%v: %g s, then %g s", args, a, b)
			}
			if &base[0] == &monotone[0] && a <= quiet {
				t.Errorf("%v: %g s, no slower than without noise (%g s)", args, a, quiet)
			}
		}
	}
	dir := t.TempDir()
	// Rates given out of order and twice run in order, once each, each
	// slowdown against rate 0.
	stdout, stderr, code := collsim(t, "study", "noise", "--rates", "1000,0,1000", "-n", "16", "-s", "256KiB", "-o", dir)
	if code != 0 || !strings.Contains(stdout, "ADAPT speedup") {
		t.Errorf("study noise: exit %d\n%s%s", code, stdout, stderr)
	}
	var rows []string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[0] == "bcast" || f[0] == "reduce") && f[1] != "without" {
			rows = append(rows, f[0]+" "+f[1]+" "+f[4])
		}
	}
	if len(rows) != 4 || rows[0] != "bcast 0 1.00x" || !strings.HasPrefix(rows[1], "bcast 1000 ") || rows[1] == "bcast 1000 -" ||
		rows[2] != "reduce 0 1.00x" || !strings.HasPrefix(rows[3], "reduce 1000 ") || rows[3] == "reduce 1000 -" {
		t.Errorf("study noise --rates 1000,0,1000: rows (collective, rate, baseline's slowdown) %q, want rate 0 then 1000 for each, slowdowns against 0\n%s", rows, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "study-noise.png")); err != nil {
		t.Error(err)
	}
	ring := []string{"-a", "ring", "-n", "16", "-s", "4MiB"}
	if slow, fast := simTime(t, append(ring, "--stragglers", "1:3")...), simTime(t, ring...); slow <= fast*1.2 {
		t.Errorf("one rank 3x slower at reducing: %g s against %g s", slow, fast)
	}
	flowRing := []string{"--network", "flow", "-a", "ring", "-n", "16", "-s", "64KiB"}
	quietRing := simTime(t, flowRing...)
	jittered := simTime(t, append(flowRing, "--jitter", "normal:1us")...)
	if jittered <= quietRing || simTime(t, append(flowRing, "--jitter", "normal:1us")...) != jittered {
		t.Errorf("latency jitter: %g s against %g s without, or not reproducible", jittered, quietRing)
	}
	if other := simTime(t, append(flowRing, "--jitter", "normal:1us", "--seed", "2")...); other == jittered {
		t.Errorf("another seed drew the same jitter (%g s)", other)
	}
	for _, bad := range [][]string{
		{"run", "--jitter", "normal:1us"},
		{"run", "--network", "flow", "--jitter", "uniform:1us"},
		{"run", "--stragglers", "1"},
		{"run", "--stragglers", "2:0.5"},
		{"run", "--noise-periodic", "1ms"},
		{"run", "--noise-periodic", "25us:1ms"},
		{"run", "--noise-random", "fast:1us"},
		{"run", "--noise-periodic", "1ms:1us", "--noise-random", "10:1us"},
	} {
		if _, stderr, code := collsim(t, bad...); code != 2 || !strings.Contains(stderr, "noise") && !strings.Contains(stderr, "stragglers") && !strings.Contains(stderr, "jitter") {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
}

// TestNoiseFromConfig: noise given in the machine config slows runs as
// the same flags do, with the same numbers, reproducibly; flags replace it.
func TestNoiseFromConfig(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("testdata/tapered-16.yaml")
	if err != nil {
		t.Fatal(err)
	}
	noisy := filepath.Join(dir, "noisy.yaml")
	os.WriteFile(noisy, append(base, []byte("noise:\n  detours: {period: 200us, duration: 20us}\n  stragglers: {count: 1, factor: 2}\n  jitter: {normal: 1us}\n")...), 0o644)
	// A ring allreduce reduces on every rank: CPU time that detours and
	// stragglers stretch.
	run := []string{"-a", "ring", "-n", "16", "-s", "1MiB", "--network", "flow"}
	fromFlags := simTime(t, append(run, "-m", "testdata/tapered-16.yaml", "--noise-periodic", "200us:20us", "--stragglers", "1:2", "--jitter", "normal:1us")...)
	fromConfig := simTime(t, append(run, "-m", noisy)...)
	if fromConfig != fromFlags {
		t.Errorf("noise from the config: %g s; the same noise from flags: %g s", fromConfig, fromFlags)
	}
	if again := simTime(t, append(run, "-m", noisy)...); again != fromConfig {
		t.Errorf("same seed: %g s, then %g s", fromConfig, again)
	}
	quiet := simTime(t, append(run, "-m", "testdata/tapered-16.yaml")...)
	if fromConfig <= quiet {
		t.Errorf("config noise %g s is no slower than none (%g s)", fromConfig, quiet)
	}
	jitterOnly := simTime(t, append(run, "-m", "testdata/tapered-16.yaml", "--jitter", "normal:1us")...)
	if other := simTime(t, append(run, "-m", noisy, "--noise-periodic", "1s:1ns")...); other >= fromConfig || other < jitterOnly {
		t.Errorf("flags should replace the config's detours and stragglers: %g s against %g s with them, %g s with jitter alone", other, fromConfig, jitterOnly)
	}
}

// TestDegradedLink: one host link at half bandwidth slows a ring on both
// network models, leaves the built-in machine as it was for the next run,
// and names what is wrong in bad specs.
func TestDegradedLink(t *testing.T) {
	ring := []string{"-a", "ring", "-n", "16", "-s", "4MiB"}
	for _, network := range []string{"analytic", "flow"} {
		args := append([]string{"--network", network}, ring...)
		before := simTime(t, args...)
		slow := simTime(t, append(args, "--degrade", "h0->s0:0.5")...)
		if slow <= before*1.1 {
			t.Errorf("%s: a half-speed host link: %g s against %g s", network, slow, before)
		}
		if after := simTime(t, args...); after != before {
			t.Errorf("%s: the built-in machine stayed degraded: %g s, then %g s", network, before, after)
		}
	}
	// A failed leaf-to-spine link: its traffic goes round by another
	// spine, more slowly; a failed host link cuts the host off.
	a2a := []string{"--network", "flow", "-m", "fattree-1024", "-c", "alltoall", "-a", "pairwise", "-n", "64", "-s", "4MiB"}
	if whole, broken := simTime(t, a2a...), simTime(t, append(a2a, "--fail", "s0.0->s1.0")...); broken <= whole {
		t.Errorf("a failed uplink: %g s, no slower than %g s", broken, whole)
	}
	if _, stderr, code := collsim(t, "run", "-m", "fattree-1024", "--fail", "h0->s0.0"); code != 2 || !strings.Contains(stderr, "host h0 cannot reach") {
		t.Errorf("failing a host's only link: exit %d, %s", code, stderr)
	}
	for _, tc := range []struct{ spec, want string }{
		{"h0->s9:0.5", "has no link from h0 to s9"},
		{"h0->s0:2", "fraction of its bandwidth"},
		{"h0:0.5", "want FROM->TO:FACTOR"},
	} {
		if _, stderr, code := collsim(t, "run", "--degrade", tc.spec); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--degrade %s: exit %d, %s", tc.spec, code, stderr)
		}
	}
}

// TestStudyRouting: the routing study runs on the built-in dragonfly and
// on the XC40-like one and finds what TestDragonflyRouting checks by hand:
// detours win the alltoall on two groups, minimal routing the ring.
func TestStudyRouting(t *testing.T) {
	for _, args := range [][]string{{"-s", "16MiB"}, {"-m", "xc40", "-n", "32", "-s", "1MiB"}} {
		dir := t.TempDir()
		stdout, stderr, code := collsim(t, append([]string{"study", "routing", "-o", dir}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		best := map[string]string{}
		for _, line := range strings.Split(stdout, "\n") {
			if f := strings.Fields(line); len(f) == 7 {
				best[f[0]+" "+f[1]] = f[6]
			}
		}
		if b := best["alltoall groups"]; b != "valiant" && b != "ugal" {
			t.Errorf("%v: alltoall on two groups: %q routing wins, want a detour:\n%s", args, b, stdout)
		}
		if b := best["allreduce groups"]; b != "minimal" {
			t.Errorf("%v: ring on two groups: %q routing wins, want minimal:\n%s", args, b, stdout)
		}
		if _, err := os.Stat(filepath.Join(dir, "study-routing.svg")); err != nil {
			t.Error(err)
		}
	}
	if _, stderr, code := collsim(t, "study", "routing", "-m", "small"); code != 2 || !strings.Contains(stderr, "use minimal") {
		t.Errorf("routing study on a crossbar: exit %d, %s", code, stderr)
	}
	if _, stderr, code := collsim(t, "study", "routing", "-n", "16", "--groups", "3"); code != 2 || !strings.Contains(stderr, "dividing the 16 ranks") {
		t.Errorf("--groups 3 for 16 ranks: exit %d, %s", code, stderr)
	}
}

// TestECMP: hashing each message onto one of the fat-tree's equal paths
// collides where D-mod-k spreads a permutation evenly, so a pairwise
// alltoall is slower under ECMP (the reason fat-trees route D-mod-k);
// the choice is seeded and reproducible; a crossbar has nothing to hash.
func TestECMP(t *testing.T) {
	a2a := []string{"-m", "fattree-1024", "--network", "flow", "-c", "alltoall", "-a", "pairwise", "-n", "64", "-s", "4MiB"}
	dmodk, ecmp := simTime(t, a2a...), simTime(t, append(a2a, "--routing", "ecmp")...)
	if ecmp <= dmodk {
		t.Errorf("ecmp %g s, d-mod-k %g s: hash collisions should cost the permutation something", ecmp, dmodk)
	}
	if again := simTime(t, append(a2a, "--routing", "ecmp")...); again != ecmp {
		t.Errorf("ecmp with the same seed: %g s, then %g s", ecmp, again)
	}
	if _, stderr, code := collsim(t, "run", "--network", "flow", "--routing", "ecmp"); code != 2 || !strings.Contains(stderr, "use minimal") {
		t.Errorf("ecmp on a crossbar: exit %d, %s", code, stderr)
	}
}

// TestValidateModelExactAsRun: validate's model_exact for a point is what
// collsim run --json says of the same call, and exact (the form's claim
// on a crossbar) stays true where the machine makes the form an estimate:
// on fattree-1024, 16 ranks share a leaf switch (every route alike), 64
// span leaves; with an overhead the alpha-beta forms leave it out.
func TestValidateModelExactAsRun(t *testing.T) {
	charged := filepath.Join(t.TempDir(), "charged.yaml")
	os.WriteFile(charged, []byte("network:\n  crossbar: {hosts: 64, link: {bandwidth: 100Gbit/s, latency: 500ns}}\nhost:\n  overhead: 1us\n"), 0o644)
	for _, m := range [][]string{{"-m", "fattree-1024"}, {"-m", charged}} {
		out, errs, code := collsim(t, append([]string{"validate", "-c", "allreduce,bcast", "-a", "ring,binomial,linear,reduce_bcast,binary", "-n", "16,64", "-s", "1KiB", "--json"}, m...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", m, code, errs)
		}
		var rep struct {
			Points []struct {
				Algorithm  string `json:"algorithm"`
				Ranks      int    `json:"ranks"`
				Exact      bool   `json:"exact"`
				ModelExact bool   `json:"model_exact"`
			} `json:"points"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		estimates := 0
		// By hand: on fattree-1024, 16 ranks share a leaf switch (every
		// route alike: exact), 64 span two leaves (an estimate); on the
		// crossbar with o = 1 us, the forms with a LogGP version (ring,
		// binomial bcast, linear) price o and stay exact, the alpha-beta
		// ones (reduce then bcast, binary bcast) leave it out.
		want := func(algo string, ranks int) bool {
			if m[1] == "fattree-1024" {
				return ranks == 16
			}
			return algo != "allreduce/reduce_bcast" && algo != "bcast/binary"
		}
		for _, p := range rep.Points {
			if p.Exact && p.ModelExact != want(p.Algorithm, p.Ranks) {
				t.Errorf("%v %s P=%d: model_exact %t, want %t", m, p.Algorithm, p.Ranks, p.ModelExact, want(p.Algorithm, p.Ranks))
			}
			c, a, _ := strings.Cut(p.Algorithm, "/")
			out, errs, code := collsim(t, append([]string{"run", "-c", c, "-a", a, "-n", fmt.Sprint(p.Ranks), "-s", "1KiB", "--json"}, m...)...)
			if code != 0 {
				t.Fatalf("run %s P=%d: exit %d: %s", p.Algorithm, p.Ranks, code, errs)
			}
			var res struct {
				ModelExact bool `json:"model_exact"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if res.ModelExact != p.ModelExact {
				t.Errorf("%v %s P=%d: validate's model_exact %t, run's %t", m, p.Algorithm, p.Ranks, p.ModelExact, res.ModelExact)
			}
			if p.Exact && !p.ModelExact {
				estimates++
			}
		}
		if estimates == 0 {
			t.Errorf("%v: no exact form was an estimate here; the test shows nothing", m)
		}
	}
}
