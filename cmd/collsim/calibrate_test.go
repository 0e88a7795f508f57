package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collsim/collsim/cmd/collsim/internal/cmdutil"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/cost"
	"github.com/collsim/collsim/sim"
)

// writeOSULatency writes an osu_latency output for a line alpha + beta*n.
func writeOSULatency(t *testing.T, file string, alpha, beta float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# OSU MPI Latency Test v7.3\n# Datatype: MPI_CHAR.\n# Size       Latency (us)\n")
	for n := 1; n <= 4<<20; n *= 4 {
		fmt.Fprintf(&b, "%-10d %24.12f\n", n, (alpha+beta*float64(n))*1e6)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Calibrating from exact measurements writes a machine whose host-to-host
// alpha and beta are the ones measured, and collsim run accepts it.
func TestCalibrateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	lat, cfg := filepath.Join(dir, "lat.txt"), filepath.Join(dir, "m.yaml")
	const alpha, beta = 1.7e-6, 1.0 / 11.5e9
	writeOSULatency(t, lat, alpha, beta)
	out, errs, code := collsim(t, "calibrate", "--osu-latency", lat, "--hosts", "32", "-o", cfg, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		MachineAlpha float64 `json:"machine_alpha_s"`
		MachineBeta  float64 `json:"machine_beta_s_per_byte"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	m, err := configs.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.PathParams(0, 31)
	// Microseconds printed with 12 decimals, the config's 10 digits and
	// picosecond latencies bound the error.
	if math.Abs(a-alpha)/alpha > 1e-6 || math.Abs(b-beta)/beta > 1e-6 || a != rep.MachineAlpha || b != rep.MachineBeta {
		t.Fatalf("machine alpha %g beta %g (reported %g %g), want %g %g", a, b, rep.MachineAlpha, rep.MachineBeta, alpha, beta)
	}
	if _, errs, code := collsim(t, "run", "-m", cfg, "-n", "32", "-s", "1MiB"); code != 0 {
		t.Fatalf("run on the calibrated machine: exit %d: %s", code, errs)
	}
}

func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	truncated := write("trunc.txt", "# OSU MPI Latency Test v7.3\n# Size       Latency (us)\n")
	garbled := write("garbled.txt", "# Size       Latency (us)\n1  1.5\n8  ???\n")
	oneSize := write("one.txt", "# Size       Latency (us)\n8  1.5\n")
	bw := write("bw.txt", "# Size      Bandwidth (MB/s)\n1  2.5\n")
	allreduce := write("ar.txt", "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n8  14.01\n1024  20.5\n")
	bcast := write("bcast.txt", "# OSU MPI Broadcast Latency Test v7.3\n# Size       Avg Latency(us)\n8  6.31\n1024  8.46\n")
	alltoall := write("a2a.txt", "# OSU MPI All-to-All Personalized Exchange Latency Test v7.3\n# Size       Avg Latency(us)\n8  6.31\n1024  8.46\n")
	allgatherv := write("agv.txt", "# OSU MPI Allgatherv Latency Test v7.3\n# Size       Avg Latency(us)\n8  6.31\n1024  8.46\n")
	latency := write("lat.txt", "# OSU MPI Latency Test v7.3\n# Size       Latency (us)\n8  1.5\n1024  2.5\n")
	bibw := write("bibw.txt", "# OSU MPI Bi-Directional Bandwidth Test v7.3\n# Size      Bandwidth (MB/s)\n8  20.5\n1024  2000\n")
	expectErrors(t, []badCase{
		{[]string{"calibrate"}, 2, "give one of --osu-latency"},
		// Two logs, and --ranks 1, were told to give what was given (a new
		// user's trial).
		{[]string{"calibrate", "--osu-latency", latency, "--nccl", latency}, 2, "2 logs given: calibrate fits one at a time"},
		{[]string{"calibrate", "--osu-collective", allreduce, "--ranks", "1"}, 2, "--ranks 1: a collective on one rank moves nothing to fit"},
		{[]string{"calibrate", "--osu-latency", truncated}, 1, "trunc.txt:2: the file ends before its first measurement"},
		{[]string{"calibrate", "--osu-latency", garbled}, 1, "garbled.txt:3: figure \"???\""},
		{[]string{"calibrate", "--osu-latency", oneSize}, 1, "measure at least two message sizes"},
		{[]string{"calibrate", "--osu-latency", bw}, 1, "holds bandwidths"},
		{[]string{"calibrate", "--osu-latency", filepath.Join(dir, "missing.txt")}, 1, "missing.txt"},
		{[]string{"calibrate", "--osu-latency", garbled, "--hosts", "1"}, 2, "give 2..4194304 hosts"},
		// osu_allreduce's times fitted through a bcast's form (a new
		// user's trial).
		{[]string{"calibrate", "--osu-collective", allreduce, "-c", "bcast", "-a", "binomial", "--ranks", "8"}, 2, "-c bcast: " + allreduce + " is osu_allreduce's output; give -c allreduce"},
		// A collective's flags on a point-to-point fit did nothing (a new
		// user's trial).
		{[]string{"calibrate", "--osu-latency", garbled, "--ranks", "8", "-a", "rabenseifner"}, 2, "-a/--algo, --ranks do not apply: they name the collective a log of --nccl or --osu-collective timed"},
		// OSU's own titles (a new user's trial): osu_bcast says
		// "Broadcast", osu_alltoall "All-to-All Personalized Exchange";
		// both were fitted as the default allreduce. A collective's times
		// were fitted as a ping-pong's, a ping-pong's as a collective's.
		{[]string{"calibrate", "--osu-collective", bcast, "--ranks", "8"}, 2, "-c allreduce: " + bcast + " is osu_bcast's output; give -c bcast"},
		{[]string{"calibrate", "--osu-collective", alltoall, "--ranks", "8"}, 2, "is osu_alltoall's output; give -c alltoall"},
		{[]string{"calibrate", "--osu-latency", allreduce}, 1, allreduce + " is osu_allreduce's output, a collective's times; give it with --osu-collective"},
		{[]string{"calibrate", "--osu-collective", latency, "--ranks", "8"}, 1, "is osu_latency's output, a ping-pong's times; give it with --osu-latency"},
		{[]string{"calibrate", "--osu-collective", allgatherv, "-c", "allgather", "--ranks", "8"}, 1, `its title says "Allgatherv Latency", not a collective that calibrate fits`},
		{[]string{"calibrate", "--osu-latency", latency, "--osu-bw", bibw}, 1, "is osu_bibw's output, whose bandwidth counts both directions"},
	})
}

// TestCalibrateOSUBlockSizes: osu_allgather and osu_alltoall print a
// rank's block as the size (MPI's sendcount), where collsim's size is the
// whole call's. Times made by hand from the ring allgather's and pairwise
// alltoall's forms, (p-1)(alpha + m beta) with m the block, alpha 2 µs and
// beta 0.1 ns/B on 8 ranks, calibrate back to 10 GB/s (it read 1.25 GB/s:
// 8 times too slow). osu_allreduce's size is the whole vector: the ring's
// 2(p-1)(alpha + n/p beta) there gives 10 GB/s unscaled.
func TestCalibrateOSUBlockSizes(t *testing.T) {
	const alpha, beta, p = 2e-6, 0.1e-9, 8
	dir := t.TempDir()
	for _, c := range []struct{ title, coll, algo string }{
		{"Allgather Latency", "allgather", "ring"},
		{"All-to-All Personalized Exchange Latency", "alltoall", "pairwise"},
		{"Allreduce Latency", "allreduce", "ring"},
	} {
		var b strings.Builder
		fmt.Fprintf(&b, "# OSU MPI %s Test v7.1\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n", c.title)
		for m := 1024; m <= 1<<20; m *= 8 {
			t := (p - 1) * (alpha + float64(m)*beta)
			if c.coll == "allreduce" {
				t = 2 * (p - 1) * (alpha + float64(m)/p*beta)
			}
			fmt.Fprintf(&b, "%-10d %14.2f\n", m, t*1e6)
		}
		file := filepath.Join(dir, c.coll+".txt")
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		// No reductions to price: gamma 0 (a rate too fast to count).
		stdout, stderr, code := collsim(t, "calibrate", "--osu-collective", file, "-c", c.coll, "-a", c.algo, "--ranks", "8", "--reduce-bandwidth", "1e30B/s", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.coll, code, stderr)
		}
		var fit struct {
			Alpha float64 `json:"alpha_s"`
			Beta  float64 `json:"beta_s_per_byte"`
			YAML  string  `json:"config_yaml"`
		}
		if err := json.Unmarshal([]byte(stdout), &fit); err != nil {
			t.Fatal(err)
		}
		if math.Abs(fit.Alpha-alpha) > 0.01*alpha || math.Abs(fit.Beta-beta) > 0.01*beta {
			t.Errorf("%s: alpha %g, beta %g; want %g and %g (10 GB/s)", c.coll, fit.Alpha, fit.Beta, alpha, beta)
		}
		// Without -o, --json carries the machine (it held only "config": "").
		m, err := configs.Parse("fitted.yaml", []byte(fit.YAML))
		if err != nil {
			t.Fatalf("%s: config_yaml does not load: %v", c.coll, err)
		}
		if a, b := m.PathParams(0, 1); math.Abs(a-fit.Alpha) > 1e-6*alpha || math.Abs(b-fit.Beta) > 1e-6*beta {
			t.Errorf("%s: the machine's alpha %g, beta %g; want the fit's %g, %g", c.coll, a, b, fit.Alpha, fit.Beta)
		}
	}
}

// TestCalibrateFromNCCLTests: ring allreduce times that collsim simulates
// on the built-in small machine (alpha 1 µs, 12.5 GB/s, reductions at
// 10 GB/s) without rendezvous (NCCL has no handshake per message), written
// as nccl-tests writes them, calibrate back to that machine, and the
// machine written has no rendezvous either.
func TestCalibrateFromNCCLTests(t *testing.T) {
	small, err := os.ReadFile("../../configs/builtin/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	machine := filepath.Join(t.TempDir(), "small-nccl.yaml")
	if err := os.WriteFile(machine, bytes.Replace(small, []byte("eager_limit: 64KiB"), []byte("eager_limit: none"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 64 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20\n#\n# Using devices\n")
	for r := range 8 {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on     node%02d device  0 [0x07] NVIDIA H100\n", r, 100+r, r)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
	for size := 64; size <= 64<<20; size *= 4 {
		stdout, stderr, code := collsim(t, "run", "-m", machine, "-a", "ring", "-n", "8", "-s", fmt.Sprint(size), "--elem-size", "8", "--verify", "off", "--json")
		if code != 0 {
			t.Fatal(stderr)
		}
		var r struct {
			Time float64 `json:"time_s"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%12d  %12d     float     sum      -1  %9.7g    0.00    0.00      0  %9.7g    0.00    0.00      0\n", size, size/8, r.Time*1e6, r.Time*1e6)
	}
	file := filepath.Join(t.TempDir(), "all_reduce_perf.txt")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fitted.yaml")
	stdout, stderr, code := collsim(t, "calibrate", "--nccl", file, "-c", "allreduce", "-a", "ring", "--reduce-bandwidth", "10GB/s", "--json", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var fit struct {
		Alpha float64 `json:"alpha_s"`
		Beta  float64 `json:"beta_s_per_byte"`
	}
	if err := json.Unmarshal([]byte(stdout), &fit); err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Alpha-1e-6)/1e-6 > 1e-4 || math.Abs(fit.Beta-80e-12)/80e-12 > 1e-4 {
		t.Errorf("fitted alpha %g s, beta %g s/B; the machine has 1e-6 and 8e-11", fit.Alpha, fit.Beta)
	}
	if written, err := os.ReadFile(out); err != nil || !bytes.Contains(written, []byte("eager_limit: none")) {
		t.Errorf("the machine fitted to NCCL has a rendezvous (err %v):\n%s", err, written)
	}
	_, stderr, code = collsim(t, "calibrate", "--nccl", file, "-a", "double_binary_tree")
	if code == 0 || !strings.Contains(stderr, "its closed form is a bound here, not exact") {
		t.Errorf("fitting through an algorithm whose form is only a bound: exit %d, %s", code, stderr)
	}
	// --ranks against the log's own count: it fitted the log as if run on
	// --ranks (a new user's trial), now refused.
	_, stderr, code = collsim(t, "calibrate", "--nccl", file, "--ranks", "16")
	if code != 2 || !strings.Contains(stderr, "--ranks 16: "+file+" ran on 8 ranks; leave --ranks out, the log says") {
		t.Errorf("--ranks 16 on a log of 8 ranks: exit %d, %s", code, stderr)
	}
	// A log of another collective than -c: it fitted all_reduce_perf's
	// times through a bcast's form (alpha 23.3 us for 5 us; a new user's
	// trial), as the OSU path already refused.
	_, stderr, code = collsim(t, "calibrate", "--nccl", file, "-c", "bcast", "-a", "binomial")
	if code != 2 || !strings.Contains(stderr, "-c bcast: "+file+":1 is all_reduce_perf's output, times of allreduce; give -c allreduce") {
		t.Errorf("-c bcast on all_reduce_perf's log: exit %d, %s", code, stderr)
	}
	// Without its test line the rows still tell: nccl-tests prints a
	// reduction for the reducing collectives (none for the others) and a
	// root for the rooted ones (-1 for the others). A broadcast's rows
	// (none, 0) and an all-gather's (none, -1) were fitted as an
	// allreduce's, at 999.9 GB/s (a new user's trial).
	body := b.String()[strings.Index(b.String(), "\n")+1:] // the test line gone
	for _, c := range []struct{ redop, root, want string }{{"none", "0", "(redop none, root 0) are not allreduce's"}, {"none", "-1", "(redop none, root -1) are not allreduce's"}} {
		other := filepath.Join(t.TempDir(), "log.txt")
		os.WriteFile(other, []byte(strings.ReplaceAll(body, "     sum      -1  ", fmt.Sprintf("  %6s  %6s  ", c.redop, c.root))), 0o644)
		if _, stderr, code := collsim(t, "calibrate", "--nccl", other, "-c", "allreduce", "-a", "ring"); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("rows of redop %s, root %s as an allreduce's: exit %d, %s", c.redop, c.root, code, stderr)
		}
	}
	if _, stderr, code := collsim(t, "calibrate", "--nccl", filepath.Join(filepath.Dir(file), "all_reduce_perf.txt"), "-c", "allreduce", "-a", "ring"); code != 0 {
		t.Errorf("the allreduce's own log: exit %d, %s", code, stderr)
	}
}

// measurePRTTOn runs one PRTT(n, d, s) on machine m's analytic network
// between ranks 0 and 1 and returns the client's time.
func measurePRTTOn(t *testing.T, m *configs.Machine, n int, d sim.Time, s int64) float64 {
	t.Helper()
	sched, err := collectives.PRTT(2, 0, 1, n, d, s)
	if err != nil {
		t.Fatal(err)
	}
	place, err := m.Place(2, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	net, err := m.Analytic(place)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), sched, sim.Config{Network: net, Host: m.Host})
	if err != nil {
		t.Fatal(err)
	}
	return res.Finish[0].Seconds()
}

// TestCalibrateLogGP: PRTT series measured, Netgauge's way, on a simulated
// machine whose hosts charge an overhead o and a gap g, written as
// Netgauge writes them, give back the machine's L, o, g and G through
// collsim calibrate --prtt; the machine it writes runs.
func TestCalibrateLogGP(t *testing.T) {
	const l, o, g, bw = 5e-6, 1e-6, 3e-6, 1e9
	// PRTT's bursts are eager, as Netgauge's small sends.
	m, err := configs.Parse("loggp.yaml", cmdutil.CrossbarLogGPYAML("loggp", "a test", 2, l, o, g, bw, "10GB/s", "none"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	series := cost.PRTT{N: n, D: map[int64]float64{}, One: map[int64][]float64{}, Burst: map[int64][]float64{}, Spaced: map[int64][]float64{}}
	for _, s := range []int64{1, 1024, 16384, 65536, 1 << 20} {
		one := measurePRTTOn(t, m, 1, 0, s)
		series.D[s], series.One[s] = one, []float64{one}
		series.Burst[s] = []float64{measurePRTTOn(t, m, n, 0, s)}
		series.Spaced[s] = []float64{measurePRTTOn(t, m, n, sim.FromSeconds(one), s)}
	}
	dir := t.TempDir()
	file, cfg := filepath.Join(dir, "loggp.out"), filepath.Join(dir, "m.yaml")
	var b strings.Builder
	if err := cost.WriteNetgauge(&b, series, cost.LogGP{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte(b.String()), 0o644)
	t.Log(b.String())
	out, errs, code := collsim(t, "calibrate", "--prtt", file, "-o", cfg, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var fit struct {
		L float64 `json:"L_s"`
		O float64 `json:"o_s"`
		G float64 `json:"g_s"`
		B float64 `json:"G_s_per_byte"`
	}
	if err := json.Unmarshal([]byte(out), &fit); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"L", fit.L, l}, {"o", fit.O, o}, {"g", fit.G, g}, {"G", fit.B, 1 / bw}} {
		if math.Abs(c.got-c.want) > 1e-3*c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	// The machine written gives back the round trips it was fitted to, at
	// every size: it charges no handshake that the times do not hold (with
	// the 64 KiB eager limit it wrote, 1 MiB's came out 1% slower). L and
	// g are off by one byte's G (see the README), well inside 0.1%.
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := configs.Parse(cfg, text)
	if err != nil {
		t.Fatal(err)
	}
	for s, one := range series.One {
		if got := measurePRTTOn(t, fitted, 1, 0, s); math.Abs(got-one[0]) > 1e-3*one[0] {
			t.Errorf("PRTT(1,0,%d) on the calibrated machine: %g s, measured %g s", s, got, one[0])
		}
	}
	os.WriteFile(file, []byte("8 10 10 28\n"), 0o644)
	if _, errs, code := collsim(t, "calibrate", "--prtt", file); code == 0 || !strings.Contains(errs, file+":1: 4 fields") {
		t.Errorf("a truncated file: exit %d, %s", code, errs)
	}
}

// oneWay is collsim's time for one message of size bytes between two
// ranks of machine m: bcast/linear on two ranks is that one message.
func oneWay(t *testing.T, m string, size int64) float64 {
	t.Helper()
	out, errs, code := collsim(t, "run", "-m", m, "-c", "bcast", "-a", "linear", "-n", "2", "-s", fmt.Sprint(size), "--elem-size", "1", "--json")
	if code != 0 {
		t.Fatalf("run -m %s -s %d: exit %d: %s", m, size, code, errs)
	}
	var res struct {
		Time float64 `json:"time_s"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	return res.Time
}

// TestCalibrateFindsTheEagerLimit: osu_latency's one-way times as collsim
// simulates them on the built-in small machine (1 µs, 12.5 GB/s, a
// rendezvous handshake above 64 KiB) calibrate back to that machine, eager
// limit included, and the machine written reproduces every time; a line
// with no jump writes no eager limit, so that nothing is charged twice.
func TestCalibrateFindsTheEagerLimit(t *testing.T) {
	dir := t.TempDir()
	lat, cfg := filepath.Join(dir, "lat.txt"), filepath.Join(dir, "m.yaml")
	var b strings.Builder
	b.WriteString("# OSU MPI Latency Test v7.3\n# Size       Latency (us)\n")
	var sizes []int64
	var times []float64
	for n := int64(1); n <= 4<<20; n *= 4 {
		sizes, times = append(sizes, n), append(times, oneWay(t, "small", n))
		fmt.Fprintf(&b, "%-10d %24.12f\n", n, times[len(times)-1]*1e6)
	}
	if err := os.WriteFile(lat, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := collsim(t, "calibrate", "--osu-latency", lat, "--hosts", "4", "-o", cfg, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Eager string `json:"eager_limit"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	m, err := configs.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, beta := m.PathParams(0, 1)
	if rep.Eager != "64KiB" || m.Host.EagerLimit != 64<<10 || math.Abs(a-1e-6)/1e-6 > 1e-6 || math.Abs(beta*12.5e9-1) > 1e-6 {
		t.Fatalf("calibrated eager limit %q (%d B), alpha %g, beta %g; want 64KiB, 1e-6, 1/12.5e9", rep.Eager, m.Host.EagerLimit, a, beta)
	}
	for i, n := range sizes {
		if got := oneWay(t, cfg, n); math.Abs(got-times[i])/times[i] > 1e-6 {
			t.Errorf("%d B: %g s on the calibrated machine, %g s measured", n, got, times[i])
		}
	}

	writeOSULatency(t, lat, 1.7e-6, 1/11.5e9)
	if out, errs, code = collsim(t, "calibrate", "--osu-latency", lat, "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Eager != "none" {
		t.Errorf("a line with no jump wrote eager limit %q, want none", rep.Eager)
	}
	// Three sizes on the line 2 us + n / 12.5 GB/s, printed to 2
	// decimals: no jump (the line holds them within the digits). A jump
	// right after the first size cannot be told from alpha (one size
	// below it): whatever is fitted, the poor fit is said.
	for _, tc := range []struct{ name, text, want string }{
		{"three.txt", "# Size Latency (us)\n1 2.00\n1024 2.08\n1048576 85.89\n", "eager limit     none"},
		{"jump0.txt", "# Size Latency (us)\n0 2.00\n1 6.00\n2 6.00\n4 6.00\n8 6.01\n1024 6.10\n1048576 90\n", "(!) poor fit"},
		{"two.txt", "# Size Latency (us)\n8 2.0\n1048576 86\n", "± unknown (two sizes fit exactly)"},
	} {
		f := filepath.Join(dir, tc.name)
		os.WriteFile(f, []byte(tc.text), 0o644)
		if out, errs, code := collsim(t, "calibrate", "--osu-latency", f); code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want %q in:\n%s%s", tc.name, code, tc.want, out, errs)
		}
	}
}

// TestCalibrateFlagsABandwidthSpike: osu_bw's peak sets the link, so one
// bad row 750 times its neighbours (a new user's trial) wrote a 9 TB/s
// link without a word; it is flagged now, and a plateau is not.
func TestCalibrateFlagsABandwidthSpike(t *testing.T) {
	dir := t.TempDir()
	lat := filepath.Join(dir, "lat.txt")
	os.WriteFile(lat, []byte("# OSU MPI Latency Test v7.3\n# Size       Latency (us)\n1 1.5\n1024 1.6\n65536 6.7\n1048576 85\n"), 0o644)
	for _, c := range []struct {
		row  string
		flag bool
	}{{"65536 9000000.00", true}, {"65536 11900.00", false}} {
		bw := filepath.Join(dir, "bw.txt")
		os.WriteFile(bw, []byte("# OSU MPI Bandwidth Test v7.3\n# Size      Bandwidth (MB/s)\n1024 2000\n8192 8000\n"+c.row+"\n262144 12000\n1048576 12100\n"), 0o644)
		out, errs, code := collsim(t, "calibrate", "--osu-latency", lat, "--osu-bw", bw)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		want := "(!) bandwidth   the peak, 9000GB/s at 64KiB (" + bw + ":5), is 750.0x its neighbours"
		if got := strings.Contains(out, want); got != c.flag {
			t.Errorf("row %q: flagged %v, want %v:\n%s", c.row, got, c.flag, out)
		}
		if !c.flag && strings.Contains(out, "(!) bandwidth") {
			t.Errorf("a plateau flagged:\n%s", out)
		}
	}
}

// TestCalibrateRefusesAbsurdFits: figures past any machine (1e300 us),
// whose fit overflowed into NaN, are refused naming the log; the NaN
// reached the written config as an internal error (an audit).
func TestCalibrateRefusesAbsurdFits(t *testing.T) {
	dir := t.TempDir()
	for _, rows := range []string{"1 1e299\n2 1e300\n", "1 1e-200\n4194304 1e-190\n"} {
		log := filepath.Join(dir, "lat.txt")
		if err := os.WriteFile(log, []byte("# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n"+rows), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := collsim(t, "calibrate", "--osu-latency", log)
		if code != 1 || !strings.Contains(stderr, "lat.txt: the fit gives alpha") || strings.Contains(stderr, "internal error") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d: %s", rows, code, stderr)
		}
	}
}
