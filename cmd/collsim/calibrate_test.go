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
	expectErrors(t, []badCase{
		{[]string{"calibrate"}, 2, "give one of --osu-latency"},
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
	})
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
	b.WriteString("# nThread 1 nGpus 1 minBytes 64 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20\n#\n# Using devices\n")
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
	if _, errs, code := collsim(t, "run", "-m", cfg, "-n", "2", "-s", "1MiB"); code != 0 {
		t.Errorf("the calibrated machine does not run: %s", errs)
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
