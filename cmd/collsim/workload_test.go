package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestWorkloadDNN: the command runs a strategy and its JSON holds what
// the table says; the breakdown's parts add up to the step where the
// definitions say they must (pp 1: no bubble beyond the hosts' message
// costs, compute + bubble + exposed = step).
func TestWorkloadDNN(t *testing.T) {
	out, errs, code := collsim(t, "workload", "dnn", "--model", "gpt:4,256,4,128,1000", "--device", "a100", "--dp", "2", "--tp", "2", "--pp", "2", "--microbatches", "4", "--json", "-m", "gpu-cluster")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Devices     int     `json:"devices"`
		GlobalBatch int     `json:"global_batch"`
		Step        float64 `json:"step_s"`
		SamplesPerS float64 `json:"samples_per_s"`
		Breakdown   struct {
			Compute   float64            `json:"compute_s"`
			Bubble    float64            `json:"bubble_s"`
			Exposed   float64            `json:"exposed_comm_s"`
			ExposedBy map[string]float64 `json:"exposed_by_kind_s"`
		} `json:"breakdown"`
		Memory []struct {
			Total int64 `json:"total_bytes"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	b := r.Breakdown
	if r.Devices != 8 || r.GlobalBatch != 8 || len(r.Memory) != 2 || r.Step <= 0 {
		t.Errorf("%+v", r)
	}
	if d := b.Compute + b.Bubble + b.Exposed - r.Step; d > 1e-12 || d < -1e-12 {
		t.Errorf("compute %g + bubble %g + exposed %g != step %g", b.Compute, b.Bubble, b.Exposed, r.Step)
	}
	for _, k := range []string{"tp", "dp", "pp"} {
		if _, ok := b.ExposedBy[k]; !ok {
			t.Errorf("no %s in the breakdown: %v", k, b.ExposedBy)
		}
	}
	if got := r.SamplesPerS * r.Step; got < 7.999 || got > 8.001 {
		t.Errorf("samples/s x step = %g, want the global batch 8", got)
	}
}

// TestWorkloadDNNOneKindIsAll: with data parallelism the only
// communication, making dp free and making every message free are the
// same run, so the time each saves is the same, reductions included (at
// 100 GB/s the allreduce's summing, 7/8 of 51 MB, is 0.45 ms: before, "dp
// free" kept it, and said 206 µs of the 653 µs exposed).
func TestWorkloadDNNOneKindIsAll(t *testing.T) {
	out, errs, code := collsim(t, "workload", "dnn", "--devices", "8", "--no-overlap", "--bucket", "1GiB", "--set", "host.reduce_bandwidth=100GB/s", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Breakdown struct {
			Exposed   float64            `json:"exposed_comm_s"`
			ExposedBy map[string]float64 `json:"exposed_by_kind_s"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	b := r.Breakdown
	if len(b.ExposedBy) != 1 || b.ExposedBy["dp"] != b.Exposed || b.Exposed < 0.45e-3 {
		t.Errorf("exposed %g s, by kind %v: want dp's alone, equal, and at least the 0.45 ms of summing", b.Exposed, b.ExposedBy)
	}
}

// TestWorkloadDNNCompressionIsCommunication: compressing gradients is
// device work done for communication. Without overlap it runs on the
// compute lane, and the breakdown counted it both as compute and, since a
// run with every message free drops it, as exposed communication: the
// parts summed to 1.8x the step. Compute is the model's, with compression
// or without it, overlapped or not, and the parts sum to the step.
func TestWorkloadDNNCompressionIsCommunication(t *testing.T) {
	type breakdown struct {
		Step      float64 `json:"step_s"`
		Breakdown struct {
			Compute float64 `json:"compute_s"`
			Bubble  float64 `json:"bubble_s"`
			Exposed float64 `json:"exposed_comm_s"`
		} `json:"breakdown"`
	}
	var plain float64
	for i, extra := range [][]string{nil, {"--no-overlap", "--compress", "10", "--compress-rate", "100GB/s"}, {"--compress", "10", "--compress-rate", "100GB/s"},
		{"--no-overlap", "--compress", "10", "--compress-rate", "100GB/s", "--compress-exchange", "allgather"}} {
		out, errs, code := collsim(t, append([]string{"workload", "dnn", "--devices", "8", "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		var r breakdown
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		b := r.Breakdown
		if i == 0 {
			plain = b.Compute
		}
		if b.Compute != plain {
			t.Errorf("%v: compute %g s, without compression %g s", extra, b.Compute, plain)
		}
		if d := b.Compute + b.Bubble + b.Exposed - r.Step; d > 1e-12 || d < -1e-12 {
			t.Errorf("%v: compute %g + bubble %g + exposed %g != step %g", extra, b.Compute, b.Bubble, b.Exposed, r.Step)
		}
	}
}

func TestWorkloadDNNRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nlayers:\n  - {name: a, params: 10}\n  - {name: b, params: -3}\n"), 0o644)
	// 1e9 FLOPs in 1 us: 1e15 FLOP/s, above an A100's 312 TFLOP/s (it ran,
	// at 240% of the peak; a new user's trial).
	zeroGrad := filepath.Join(dir, "grad.yaml")
	os.WriteFile(zeroGrad, []byte("grad_bytes: 0\n"), 0o644)
	fast := filepath.Join(dir, "fast.yaml")
	os.WriteFile(fast, []byte("name: fast\nlayers:\n  - {name: a, kind: fc, params: 5, fwd_flops: 1e9, fwd_time: 1us}\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dp", "3", "--devices", "8"}, 2, "dp 3 x tp 1 x pp 1 = 3 devices, but the run has 8"},
		{[]string{"--model", "bert-large", "--tp", "16", "--devices", "16"}, 2, "tp 16 is larger than a node of 8 devices"},
		{[]string{"--model", "gpt3-175b", "--devices", "8"}, 1, "does not fit: stage 0 needs"},
		{[]string{"--model", bad}, 1, "bad.yaml:4: layer 1 (b): params -3"},
		{[]string{"--model", "nosuch"}, 1, "unknown model \"nosuch\""},
		{[]string{"--device", "tpu9"}, 1, "neither a preset"},
		{[]string{"--algo", "allreduce"}, 2, "give COLLECTIVE=ALGORITHM"},
		{[]string{"--algo", "allreduce=nosuch", "--devices", "4"}, 2, "unknown allreduce algorithm \"nosuch\""},
		{[]string{"--devices", "4096"}, 1, "4096 devices, but machine gpu-cluster has 512 slots"},
		{[]string{"--prune", "0.5"}, 2, "--prune does not apply"},
		{[]string{"--global-batch", "8"}, 2, "--global-batch does not apply"},
		{[]string{"--search", "--global-batch", "8", "--tp", "2"}, 2, "--tp does not apply"},
		{[]string{"--zero3", "--bucket", "1KiB"}, 2, "--bucket does not apply"},
		{[]string{"--compress-rate", "1GB/s"}, 2, "--compress-rate does not apply"},
		{[]string{"--microbatches", "0"}, 2, "--microbatches must be at least 1"},
		// The sizes searched: said as given, none dropped or doubled.
		{[]string{"--search", "--global-batch", "64", "--devices", "8", "--search-microbatch-sizes", "3,5"}, 2, "divides a global batch of 64 in microbatches of 3,5"},
		{[]string{"--search", "--global-batch", "64", "--devices", "8", "--search-microbatch-sizes", "-2,2"}, 2, "-2; sizes are samples per microbatch, at least 1"},
		{[]string{"--search", "--global-batch", "64", "--devices", "8", "--search-microbatch-sizes", "2,2"}, 2, "2 is given twice"},
		// 100,000 took minutes and most of the machine's memory.
		{[]string{"--microbatches", "4097", "--devices", "8"}, 2, "4097 microbatches a step: at most 4096"},
		// A plain number is bytes: 40 meant 40 GiB, 0 turned the check off.
		{[]string{"--memory", "40"}, 2, "--memory 40: 40 bytes, under 1 MiB: give a device's memory with its unit, e.g. 80GiB"},
		{[]string{"--memory", "0"}, 2, "--memory 0: 0 bytes, under 1 MiB"},
		{[]string{"--efficiency", "0"}, 2, "--efficiency 0"},
		{[]string{"--compress", "0"}, 2, "--compress 0"},
		{[]string{"--algo", "alltoall=bruck"}, 2, "not alltoall"},
		// Flags the run would have ignored (a new user's trial).
		{[]string{"--algo", "allgather=bruck", "--devices", "8"}, 2, "--algo allgather= does not apply: the step runs no allgather"},
		{[]string{"--algo", "allreduce=ring", "--algo", "allreduce=rabenseifner", "--devices", "8"}, 2, "--algo allreduce= is given twice"},
		{[]string{"--devices", "1", "--compress", "10", "--compress-rate", "10GB/s"}, 2, "--compress does not apply: dp 1 exchanges no gradients"},
		{[]string{"--search", "--global-batch", "64", "--devices", "8", "--top", "-1"}, 2, "--top must be at least 1"},
		{[]string{"--placement", "diagonal"}, 2, "--placement \"diagonal\""},
		// tp groups spread over nodes by the placement, as --order's are refused.
		{[]string{"--model", "bert-large", "--devices", "64", "--tp", "8", "--placement", "round_robin"}, 2, "the placement puts ranks 0 and 1 of a tensor-parallel group on nodes 0 and 1"},
		{[]string{"--search"}, 2, "--search needs --global-batch"},
		{[]string{"--schedule", "zigzag", "--pp", "2", "--devices", "4"}, 2, "pipeline schedule \"zigzag\""},
		// A schedule with nothing to order was ignored without a word.
		{[]string{"--schedule", "gpipe", "--devices", "8"}, 2, "--schedule does not apply: the schedule orders the passes of several microbatches"},
		{[]string{"--schedule", "gpipe", "--inference", "--pp", "2", "--devices", "4"}, 2, "--schedule does not apply: inference runs forward passes only"},
		// Taken silently before (a new user's trial): offloading turned
		// on, 0 read as 2, the machine ignored for LogGOPS's parameters.
		{[]string{"--offload-serial", "--devices", "8"}, 2, "--offload-serial does not apply: it shapes offloading (give --offload)"},
		{[]string{"--grad-bytes", "0", "--devices", "8"}, 2, "--grad-bytes must be at least 1, not 0"},
		{[]string{"--strategy", zeroGrad, "--devices", "8"}, 2, zeroGrad + ":1: grad_bytes must be at least 1, not 0"},
		{[]string{"--network", "loggops", "--devices", "8"}, 2, `--network "loggops": a workload runs on its machine, with the analytic or the flow network`},
		{[]string{"--model", fast, "--devices", "2"}, 2, `layer a: 1e+09 FLOPs a sample in 1µs is 1e+15 FLOP/s, above device a100's peak of 3.12e+14 FLOP/s`},
		// With dp 1 or tp 1, taken and ignored (an audit).
		{[]string{"--devices", "1", "--zero3"}, 2, "--zero3 does not apply: dp 1 exchanges no gradients"},
		{[]string{"--devices", "1", "--bucket", "100MiB"}, 2, "--bucket does not apply: dp 1 exchanges no gradients"},
		{[]string{"--devices", "1", "--first-bucket", "2MiB"}, 2, "--first-bucket does not apply: dp 1 exchanges no gradients"},
		{[]string{"--devices", "2", "--first-bucket", "0"}, 2, `--first-bucket "0": a size of at least 1 byte`},
		{[]string{"--devices", "1", "--no-overlap"}, 2, "--no-overlap does not apply: dp 1 exchanges no gradients"},
		{[]string{"--devices", "1", "--grad-bytes", "4"}, 2, "--grad-bytes does not apply: dp 1 exchanges no gradients"},
		{[]string{"--devices", "1", "--algo", "allreduce=ring"}, 2, "--algo allreduce= does not apply: the step runs no allreduce (dp 1 and tp 1)"},
		{[]string{"--devices", "8", "--tp-across-nodes"}, 2, "--tp-across-nodes does not apply: tp 1 splits no layer over devices"},
		// A microbatch whose activations pass 2^63 bytes wrapped to
		// negative memory and ran (an audit).
		{[]string{"--model", "gpt:1,64,1,4194304,1", "--microbatch-size", "131072", "--peak", "1000000PFLOP/s", "--devices", "1", "--breakdown=false"}, 1, "needs more than 8 EiB per device"},
	}
	for _, c := range cases {
		_, errs, code := collsim(t, append([]string{"workload", "dnn", "-m", "gpu-cluster"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want exit %d with %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestWorkloadDNNTensorParallelBytes: a GPT's tensor-parallel allreduces,
// by hand for gpt:2,1024,16,512,1000 in microbatches of 2 on tp 2: each
// of b s h 16-bit values, 2 x 512 x 1024 x 2 B = 2 MiB: the embedding's
// one forward, 2 forward and 2 backward for each of 2 blocks, and the
// logit layer's backward one, of its input's gradient (Megatron-LM's
// vocabulary-parallel logits; it was 4 s b = 4 KiB: an audit): 10, in
// which each of the 2 ranks sends 2 messages of 1 MiB.
func TestWorkloadDNNTensorParallelBytes(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.json")
	if _, errs, code := collsim(t, "workload", "dnn", "--model", "gpt:2,1024,16,512,1000", "--dp", "1", "--tp", "2", "--microbatch-size", "2", "-m", "gpu-cluster", "--trace", tr); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		TraceEvents []struct {
			Ph   string `json:"ph"`
			Tid  int    `json:"tid"`
			Name string `json:"name"`
			Args struct {
				Bytes int64 `json:"bytes"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	sizes := map[int64]int{}
	for _, e := range file.TraceEvents {
		if e.Ph == "X" && e.Name == "send" && e.Tid == 0 {
			sizes[e.Args.Bytes]++
		}
	}
	if len(sizes) != 1 || sizes[1<<20] != 20 {
		t.Errorf("rank 0 sends %v (bytes: count), want 20 of 1 MiB", sizes)
	}
}

// TestWorkloadDNNSearch: every factorization of 16 devices with tp up to a
// node, ranked fastest first.
func TestWorkloadDNNSearch(t *testing.T) {
	out, errs, code := collsim(t, "workload", "dnn", "--model", "gpt:8,256,4,128,1000", "--devices", "16", "--search", "--global-batch", "16", "--json", "-m", "gpu-cluster", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var cands []struct {
		Strategy string  `json:"strategy"`
		Step     float64 `json:"step_s"`
		Refused  string  `json:"refused"`
	}
	if err := json.Unmarshal([]byte(out), &cands); err != nil {
		t.Fatal(err)
	}
	// tp 1, 2, 4, 8 (up to a node of 8); pp dividing 16/tp and at most
	// the model's 10 layers; dp the rest, dividing the batch of 16:
	// (tp, pp) = (1; 1,2,4,8), (2; 1,2,4,8), (4; 1,2,4), (8; 1,2): 13
	// shapes, each with buckets of 25 and 100 MiB but the 3 with dp 1
	// ((2,8), (4,4), (8,2)), which have no gradient exchange.
	if want := 2*13 - 3; len(cands) != want {
		t.Errorf("%d candidates, want %d", len(cands), want)
	}
	for i := 1; i < len(cands); i++ {
		if cands[i].Refused == "" && (cands[i-1].Refused != "" || cands[i].Step < cands[i-1].Step) {
			t.Errorf("not ranked: %v then %v", cands[i-1], cands[i])
		}
	}
}

func TestWorkloadFFT(t *testing.T) {
	out, errs, code := collsim(t, "workload", "fft", "--grid", "64", "--ranks", "16", "--json", "-m", "small")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Decomp  string  `json:"decomposition"`
		Time    float64 `json:"time_s"`
		Compute float64 `json:"compute_s"`
		Exposed float64 `json:"exposed_comm_s"`
		GFLOPs  float64 `json:"gflops"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Decomp != "pencil 4x4" || r.Compute+r.Exposed-r.Time > 1e-12 || r.Compute+r.Exposed-r.Time < -1e-12 {
		t.Errorf("%+v", r)
	}
	// A grid of one row is labelled a pencil that communicates as a slab.
	if out, errs, code := collsim(t, "workload", "fft", "--grid", "64", "--ranks", "16", "--pr", "1", "-m", "small"); code != 0 || !strings.Contains(out, "pencil 1x16 (one row: a slab's communication, with a pencil's packing)") {
		t.Errorf("--pr 1: exit %d:\n%s%s", code, out, errs)
	}
	// 5 N log2 N FLOPs for N = 64^3 points over the time.
	if want := 5 * 262144 * 18 / r.Time / 1e9; r.GFLOPs < want*0.9999 || r.GFLOPs > want*1.0001 {
		t.Errorf("%g GFLOP/s, want %g", r.GFLOPs, want)
	}
	refuses(t, []string{"workload", "fft", "-m", "small"}, []refusal{
		{[]string{"--grid", "9", "--ranks", "4"}, "must be multiples of Pr 2"},
		// --pc not given is not called 0 (a new user's trial).
		{[]string{"--grid", "8", "--ranks", "6", "--pr", "4"}, "--pr 4 does not divide the 6 ranks (--pc would be the rest)"},
		{[]string{"--grid", "8", "--ranks", "6", "--pc", "4"}, "--pc 4 does not divide the 6 ranks (--pr would be the rest)"},
		{[]string{"--grid", "8", "--ranks", "4", "--pr", "-4"}, "--pr -4: give at least 1"},
		{[]string{"--grid", "8", "--ranks", "4", "--pc", "-3"}, "--pc -3: give at least 1"},
		{[]string{"--grid", "8", "--ranks", "6", "--pr", "2", "--pc", "2"}, "--pr 2 x --pc 2 is not the 6 ranks"},
		{[]string{"--decomp", "cube"}, "--decomp \"cube\""},
		{[]string{"--decomp", "slab", "--pr", "4"}, "--pr does not apply"},
		{[]string{"--decomp", "slab", "--layout", "aligned"}, "--layout does not apply"},
		{[]string{"--host-link", "1GB/s"}, "--host-link does not apply"},
		{[]string{"--grid", "8,8"}, "--grid \"8,8\""},
		{[]string{"--algo", "nosuch", "--grid", "8", "--ranks", "4"}, "unknown alltoall algorithm"},
	})
}

// workloadStudies are the workload studies at sizes a test can run; their
// outputs are snapshots (testdata/NAME.snapshot: as last reviewed).
var workloadStudies = []struct {
	name string
	args []string
}{
	{"study-lp-training", []string{"study", "lp-training", "-n", "8..64"}},
	{"study-compression", []string{"study", "compression"}},
	{"study-suara-training", []string{"study", "suara-training", "-n", "64,1024"}},
	{"study-fft-small", []string{"study", "fft", "--grids", "256", "-n", "64,256"}},
	{"study-taskbench-small", []string{"study", "taskbench", "-n", "1,2", "--points", "12"}},
	{"study-redistribute-small", []string{"study", "redistribute", "--sizes", "256,4096", "--tiles", "64,256"}},
	{"study-farm-small", []string{"study", "farm", "--workers", "1,4,8", "--sizes", "1KiB,4MiB", "--tasks", "500"}},
	{"study-blasx-small", []string{"study", "blasx", "--n", "8192", "--devices", "1,2,8", "--device-memory", "256MiB"}},
	{"study-hsa-small", []string{"study", "hsa", "--n", "8192"}},
	{"study-strategies-small", []string{"study", "strategies", "--model", "gpt:8,512,8,256,1000", "-n", "32", "--batch", "32", "--pp", "2", "--network", "analytic", "--set", "network.fat_tree.levels=2"}},
}

func TestWorkloadStudies(t *testing.T) {
	for _, c := range workloadStudies {
		out, errs, code := collsim(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		matchSnapshot(t, c.name, out)
	}
}

// TestWorkloadDNNScaling: efficiency is throughput over (devices / the
// first's) times the first's throughput, recomputed here from the rows;
// --trace writes a Chrome trace of the run.
func TestWorkloadDNNScaling(t *testing.T) {
	out, errs, code := collsim(t, "workload", "dnn", "--model", "resnet50", "--scaling", "2,8,32", "--algo", "allreduce=lp", "--json", "-m", "gpu-cluster")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []struct {
		Devices     int     `json:"devices"`
		SamplesPerS float64 `json:"samples_per_s"`
		Efficiency  float64 `json:"scaling_efficiency"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, r := range rows {
		want := r.SamplesPerS / (float64(r.Devices) / 2 * rows[0].SamplesPerS)
		if d := r.Efficiency - want; d > 1e-12 || d < -1e-12 || r.Efficiency > 1+1e-12 {
			t.Errorf("%+v: efficiency, want %g", r, want)
		}
	}
	file := filepath.Join(t.TempDir(), "t.json")
	if _, errs, code := collsim(t, "workload", "dnn", "--model", "gpt:2,128,2,64,100", "--dp", "2", "--pp", "2", "--microbatches", "2", "-m", "gpu-cluster", "--trace", file); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(file)
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err != nil || json.Unmarshal(data, &doc) != nil || len(doc.TraceEvents) < 20 {
		t.Errorf("trace: %v, %d events", err, len(doc.TraceEvents))
	}
}

// TestREADMEWorkloadTables: the README's workload study tables hold the
// rows the studies print at the sizes TestWorkloadStudies runs (the
// other rows are regenerated by the commands the README names).
func TestREADMEWorkloadTables(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("README not found beside the module: %v", err)
	}
	studies := append(workloadStudies[:3:3],
		struct {
			name string
			args []string
		}{"redistribute", []string{"study", "redistribute"}},
		struct {
			name string
			args []string
		}{"farm", []string{"study", "farm"}},
		struct {
			name string
			args []string
		}{"blasx", []string{"study", "blasx"}},
		struct {
			name string
			args []string
		}{"hsa", []string{"study", "hsa"}})
	for _, c := range studies {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each study its own simulations: the two cores share them
			out, errs, code := collsim(t, c.args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", c.args, code, errs)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n")[2:] {
				if !strings.Contains(string(readme), line) {
					t.Errorf("README lacks %v's row %q", c.args, line)
				}
			}
		})
	}
}

// TestWorkloadDNNStrategyFile: a strategy file sets what the flags would,
// and flags on the command line win.
func TestWorkloadDNNStrategyFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(file, []byte("dp: 2\ntp: 2\npp: 2\nmicrobatches: 4\nalgo: {allreduce: ompi}\n"), 0o644)
	args := []string{"workload", "dnn", "--model", "gpt:4,256,4,128,1000", "-m", "gpu-cluster", "--json", "--breakdown=false", "--strategy", file}
	for _, c := range []struct {
		extra []string
		want  string
	}{{nil, "dp2 tp2 pp2 1f1b m4 x1"}, {[]string{"--dp", "4", "--schedule", "gpipe"}, "dp4 tp2 pp2 gpipe m4 x1"}} {
		out, errs, code := collsim(t, append(args, c.extra...)...)
		var r struct {
			Strategy string `json:"strategy"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Strategy != c.want {
			t.Errorf("%v: exit %d %s %q, want strategy %q", c.extra, code, errs, r.Strategy, c.want)
		}
	}
	os.WriteFile(file, []byte("dp: 2\npp: -1\n"), 0o644)
	if _, errs, code := collsim(t, args...); code != 1 || !strings.Contains(errs, "s.yaml:2: pp: -1; at least 1") {
		t.Errorf("exit %d %q", code, errs)
	}
}

// TestWorkloadTaskBench: without communication METG(50%) is twice the
// per-task overhead (the kernel equal to the overhead, granularity d + o),
// derived by hand; the refusals.
func TestWorkloadTaskBench(t *testing.T) {
	out, errs, code := collsim(t, "workload", "taskbench", "--ranks", "8", "--width", "16", "--steps", "4", "--pattern", "no_comm",
		"--overhead", "10us", "--metg", "--metg-from", "80us", "--metg-points", "5", "--json", "-m", "small")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Curve []struct {
			Duration    float64 `json:"task_duration_s"`
			Efficiency  float64 `json:"efficiency"`
			Granularity float64 `json:"granularity_s"`
		} `json:"curve"`
		METG *float64 `json:"metg_s"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.METG == nil || len(r.Curve) != 5+6 { // 5 halvings, then 6 bisections between 10 us (50%) and 5 us
		t.Fatalf("%v: %s", err, out)
	}
	if *r.METG < 19.999e-6 || *r.METG > 20.001e-6 {
		t.Errorf("METG %g s, want 2 x 10 us", *r.METG)
	}
	for _, p := range r.Curve {
		if want := p.Duration / (p.Duration + 10e-6); p.Efficiency < want-1e-9 || p.Efficiency > want+1e-9 {
			t.Errorf("kernel %g: efficiency %g, want d/(d+o) = %g", p.Duration, p.Efficiency, want)
		}
	}
	refuses(t, []string{"workload", "taskbench", "-m", "small"}, []refusal{
		{[]string{"--ranks", "8", "--width", "4"}, "4 columns over 8 ranks"},
		{[]string{"--pattern", "zigzag"}, "pattern \"zigzag\""},
		{[]string{"--pattern", "nearest", "--radix", "0"}, "needs a radix of at least 1"},
		{[]string{"--plot", "x.png"}, "--plot does not apply"},
		{[]string{"--metg", "--duration", "1ms"}, "--duration does not apply"},
		// Pattern parameters the pattern does not read were ignored.
		{[]string{"--radix", "5"}, "--radix does not apply to --pattern stencil_1d: only nearest, spread, random_nearest read it"},
		{[]string{"--pattern", "nearest", "--period", "2"}, "--period does not apply to --pattern nearest: only spread, random_nearest read it"},
		{[]string{"--pattern", "spread", "--fraction", "0.5"}, "--fraction does not apply to --pattern spread: only random_nearest read it"},
	})
}

// TestWorkloadRedistribute: a 1024x1024 matrix of doubles all on rank 0
// dealt by column halves to 2 ranks of the small machine (one switch,
// 100 Gbit/s links of 500 ns): 4 MiB moves, over a two-link route, so
// the one-port bound is 4 MiB / 12.5 GB/s + 2 x 500 ns.
func TestWorkloadRedistribute(t *testing.T) {
	out, errs, code := collsim(t, "workload", "redistribute", "--size", "1024", "--from", "1x1/1024", "--to", "1x2/1024x512", "--json", "-m", "small")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []struct {
		Schedule string
		Messages string
		Elapsed  float64 `json:"elapsed_s"`
		Bound    float64 `json:"bound_s"`
		Ratio    float64
		Moved    int64 `json:"moved_bytes"`
		Count    int   `json:"message_count"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want scalapack, caterpillar and naive, pair and tile: %s", len(rows), out)
	}
	want := 4194304/12.5e9 + 1e-6
	for _, r := range rows {
		if r.Moved != 4194304 || r.Count != 1 || math.Abs(r.Bound-want) > 1e-12 || r.Elapsed < r.Bound || math.Abs(r.Ratio-r.Elapsed/r.Bound) > 1e-9 {
			t.Errorf("%+v: want 4 MiB moved, bound %g, time above it", r, want)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("0 1\n1 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.txt")
	if err := os.WriteFile(short, []byte("0 1\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refuses(t, []string{"workload", "redistribute", "-m", "small"}, []refusal{
		{[]string{"--from", "2x2"}, "give GRID/TILE"},
		{[]string{"--from", "2x2/0"}, `tile "0"`},
		{[]string{"--to", "nosuch.txt/4"}, "neither a grid PxQ nor a readable map file"},
		{[]string{"--size", "8", "--from", "2x2/4", "--to", bad + "/4"}, "gives tile (1, 1) to rank 7, but the job has ranks 0..3"},
		{[]string{"--size", "8", "--from", "2x2/4", "--to", bad + "/2"}, "gives 4 owners, but a 8x8 matrix in 2x2 tiles has 4 x 4 = 16 tiles"},
		{[]string{"--schedule", "scalapack", "--messages", "tile"}, "one packed message per pair"},
		{[]string{"--size", "0"}, `--size "0"`},
	})
	// A map file's bad line is bad input (1), as a config's is.
	if _, errs, code := collsim(t, "workload", "redistribute", "-m", "small", "--size", "8", "--from", "2x2/4", "--to", short+"/4"); code != 1 || !strings.Contains(errs, "short.txt:2: 1 tiles in this row, 2 in the rows before") {
		t.Errorf("a map with a short row: exit %d: %s; want exit 1 naming short.txt:2", code, errs)
	}
	// Ranks that do not fit are an error, exit 1 (the README's rule).
	if _, errs, code := collsim(t, "workload", "redistribute", "-m", "small", "--from", "16x16/4"); code != 1 || !strings.Contains(errs, "256 ranks, but machine small has 64 slots") {
		t.Errorf("256 ranks on 64 slots: exit %d %q", code, errs)
	}
}

// TestWorkloadFarm: tasks of no work on a master that pays 20 us + 10 us
// a task: the master bounds throughput at 1 / 30 us, which the run meets
// within the messages' latency; a durations file with a bad line is
// refused with its line.
func TestWorkloadFarm(t *testing.T) {
	out, errs, code := collsim(t, "workload", "farm", "--workers", "8", "--tasks", "3000", "--duration", "0", "--json", "-m", "small")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Throughput float64 `json:"tasks_per_s"`
		Master     float64 `json:"master_bound"`
		Limit      string  `json:"limit"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Master-1/30e-6) > 1e-6 || r.Limit != "master" || r.Throughput > r.Master || r.Throughput < 0.99*r.Master {
		t.Errorf("%+v: want the master's 33.3k tasks/s, met within 1%%", r)
	}
	// Fewer chunks than workers: only as many workers as chunks are ever
	// busy, and the workers' bound counts those (it counted 8 workers for
	// one chunk of 1,000 tasks, 7.77k tasks/s, and named the master for
	// one task on 63 workers; the runs took one worker's cycle, 0.97k/s).
	for _, args := range [][]string{{"--workers", "8", "--tasks", "1000", "--chunk", "1000"}, {"--workers", "63", "--tasks", "1"}} {
		out, errs, code := collsim(t, append([]string{"workload", "farm", "--json", "-m", "small"}, args...)...)
		var w struct {
			Throughput float64 `json:"tasks_per_s"`
			Workers    float64 `json:"worker_bound"`
			Limit      string  `json:"limit"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &w) != nil {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
		}
		if w.Limit != "workers" || w.Throughput > w.Workers || w.Throughput < 0.99*w.Workers {
			t.Errorf("%v: %+v: want the workers' bound, one busy worker's, met within 1%%", args, w)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "d.txt")
	if err := os.WriteFile(file, []byte("100us\n0.002\n\nlots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Bounds that are none (nothing costs) are null, not 0 tasks/s.
	out, errs, code = collsim(t, "workload", "farm", "--workers", "4", "--tasks", "100", "--handle", "0", "--submit", "0", "--serialize", "0", "--json", "-m", "small")
	if code != 0 || !strings.Contains(out, `"master_bound": null`) || !strings.Contains(out, `"link_bound": null`) || !strings.Contains(out, `"knee_workers": null`) {
		t.Errorf("free master and link: exit %d: %s%s", code, out, errs)
	}
	refuses(t, []string{"workload", "farm", "-m", "small"}, []refusal{
		// 1.1e9 s a task wrapped the clock into a negative cost.
		{[]string{"--serialize", "1KB/s", "--arg", "1TiB", "--tasks", "1", "--workers", "1"}, "serializing a 1099511627776-byte argument at 1000 bytes/s takes 1.1e+09 s, over an hour a task"},
		{[]string{"--durations", file, "--dist", "exponential"}, "--dist does not apply"},
		{[]string{"--dist", "file"}, "give the file with --durations"},
		{[]string{"--chunk", "0"}, "--chunk 0"},
		{[]string{"--tasks", "10", "--chunk", "11"}, "chunks of 11 tasks with 10 tasks"},
		{[]string{"--arg", "-1"}, "--arg"},
		{[]string{"--serialize", "fast"}, "--serialize"},
	})
	// A durations file's bad line is bad input (1), as a config's is.
	if _, errs, code := collsim(t, "workload", "farm", "-m", "small", "--durations", file); code != 1 || !strings.Contains(errs, `d.txt:4: "lots" does not start with a number`) {
		t.Errorf("--durations with a bad line: exit %d: %s; want exit 1 naming d.txt:4", code, errs)
	}
	_, errs, code = collsim(t, "workload", "farm", "-m", "small", "--workers", "64")
	if code != 1 || !strings.Contains(errs, "need 65 ranks, but machine small has 64 slots") {
		t.Errorf("64 workers on 64 slots: exit %d %q", code, errs)
	}
}

// TestWorkloadTiles: a tiled GEMM on one GPU of gpu-node-pcie moves
// every tile of A, B and C in once and C out once when they all fit
// (3 x 4 x 4 tiles of 2 MiB in, 16 out), runs 2 N^3 FLOPs, and a
// tile that does not divide N is refused with the numbers.
func TestWorkloadTiles(t *testing.T) {
	out, errs, code := collsim(t, "workload", "tiles", "--algo", "gemm", "--n", "2048", "--tile", "512", "--devices", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Elapsed float64 `json:"elapsed_s"`
		FLOPs   float64 `json:"flops"`
		In      int64   `json:"host_to_device_bytes"`
		Out     int64   `json:"device_to_host_bytes"`
		Peer    int64   `json:"peer_to_peer_bytes"`
		Hit     float64 `json:"cache_hit_rate"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	tile := int64(512 * 512 * 8)
	// 64 GEMM tasks of 3 tile reads each: 48 misses (every tile once).
	if r.FLOPs != 2*2048*2048*2048 || r.In != 48*tile || r.Out != 16*tile || r.Peer != 0 || math.Abs(r.Hit-(192-48)/192.0) > 1e-12 {
		t.Errorf("%+v", r)
	}
	out, errs, code = collsim(t, "workload", "tiles", "--algo", "cholesky", "--n", "8192", "--tile", "1024", "--scaling", "1,2,4")
	if code != 0 || !strings.Contains(out, "\n1        ") || !strings.Contains(out, "\n4        ") || !strings.Contains(out, "busiest links (4 devices") {
		t.Fatalf("scaling: exit %d: %s%s", code, out, errs)
	}
	refuses(t, []string{"workload", "tiles"}, []refusal{
		{[]string{"--n", "1000", "--tile", "300"}, "--tile 300 does not divide --n 1000 (3 tiles and 100 rows left over)"},
		{[]string{"--algo", "qr"}, `algorithm "qr"`},
		{[]string{"--scheduler", "fifo"}, `scheduler "fifo"`},
		{[]string{"--device-memory", "8MiB", "--tile", "1024"}, "holds 1 tiles of 8MiB; a task needs 3"},
		{[]string{"--scaling", "1,2", "--devices", "4"}, "--devices does not apply with --scaling"},
		{[]string{"--network", "analytic", "--busiest-links", "3"}, "--busiest-links needs --network flow"},
		// It ran on LogGOPS's parameters alone, 11.85 s for 123.6 ms.
		{[]string{"--network", "loggops"}, `--network "loggops": a workload runs on its machine`},
	})
	// 0 is none, which any network can print (it was refused with the
	// analytic one; a new user's trial).
	if out, errs, code := collsim(t, "workload", "tiles", "--n", "2048", "--tile", "512", "--network", "analytic", "--busiest-links", "0"); code != 0 || strings.Contains(out, "busiest links") {
		t.Errorf("--busiest-links 0 on the analytic network: exit %d: %s%s", code, out, errs)
	}
	_, errs, code = collsim(t, "workload", "tiles", "--devices", "9")
	if code != 1 || !strings.Contains(errs, "9 devices, but machine gpu-node-pcie has 8 on its node") {
		t.Errorf("9 devices on 8: exit %d %q", code, errs)
	}
}

// refusal is a command line that must fail as a usage error (exit 2)
// with want in its message.
type refusal struct {
	args []string
	want string
}

// refuses runs prefix + each case's args and checks the refusal.
func refuses(t *testing.T, prefix []string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		_, errs, code := collsim(t, append(slices.Clone(prefix), c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want exit 2 with %q", c.args, code, errs, c.want)
		}
	}
}

// TestStudyNoiseLeavesTheMachinesNoiseOut: on a machine with noise of its
// own, study noise's rows have only the study's noise (the noise-free
// row is the noise-free machine's), and it says so.
func TestStudyNoiseLeavesTheMachinesNoiseOut(t *testing.T) {
	noisy := filepath.Join(t.TempDir(), "noisy.yaml")
	quiet := filepath.Join(t.TempDir(), "quiet.yaml")
	base := "network:\n  crossbar: {hosts: 64, link: {bandwidth: 100Gbit/s, latency: 500ns}}\nhost: {reduce_bandwidth: 10GB/s}\n"
	os.WriteFile(quiet, []byte(base), 0o644)
	os.WriteFile(noisy, []byte(base+"noise: {detours: {rate: 3000, duration: 50us}}\n"), 0o644)
	rows := func(m string) (string, string) {
		out, errs, code := collsim(t, "study", "noise", "-m", m, "--seeds", "2", "--rates", "0,1000", "-n", "16", "-s", "256KiB", "-o", t.TempDir())
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", m, code, errs)
		}
		var table []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "bcast") || strings.HasPrefix(l, "reduce ") {
				table = append(table, l)
			}
		}
		return strings.Join(table, "\n"), out
	}
	want, _ := rows(quiet)
	got, out := rows(noisy)
	if got != want || !strings.Contains(out, "own noise is left out") {
		t.Errorf("on a noisy machine:\n%s\nwant the quiet machine's rows:\n%s", out, want)
	}
}

// TestWorkloadFFTTwoLevel: the transposes' two_level alltoall runs on
// gpu-cluster (8 GPUs a node), as fft --help's example has it, on every
// communicator the decompositions make: a slab's one-rank columns, a
// pencil's rows of 8 consecutive ranks (one whole node) and its columns
// of one rank per node (the exchange has one level there, as a library's
// hierarchical alltoall falls back to its flat one). Before, a
// communicator of one rank per node got no two-level size, and was refused.
func TestWorkloadFFTTwoLevel(t *testing.T) {
	for _, decomp := range []string{"slab", "pencil"} {
		out, errs, code := collsim(t, "workload", "fft", "--grid", "64", "--decomp", decomp, "--ranks", "64", "--algo", "two_level", "-m", "gpu-cluster", "--json")
		if code != 0 {
			t.Errorf("%s: exit %d: %s", decomp, code, errs)
			continue
		}
		var r struct {
			Alltoall string  `json:"alltoall"`
			Time     float64 `json:"time_s"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Alltoall != "two_level" || !(r.Time > 0) {
			t.Errorf("%s: %v %+v", decomp, err, r)
		}
	}
}

// TestWorkloadDNNOffloadNote: offloading keeps three microbatches'
// activations on the device, so with one microbatch a stage it saves
// nothing, and the run says so; with pp 4 and 8 microbatches (1F1B: stage
// 0 holds 4) it saves memory and says nothing.
func TestWorkloadDNNOffloadNote(t *testing.T) {
	const note = "--offload saves no device memory here"
	_, errs, code := collsim(t, "workload", "dnn", "--model", "gpt:2,256,4,128,1000", "--dp", "8", "--offload", "--breakdown=false")
	if code != 0 || !strings.Contains(errs, note) {
		t.Errorf("one microbatch: exit %d, stderr %q; want the note", code, errs)
	}
	_, errs, code = collsim(t, "workload", "dnn", "--model", "gpt:4,256,4,128,1000", "--dp", "2", "--pp", "4", "--microbatches", "8", "--offload", "--breakdown=false")
	if code != 0 || strings.Contains(errs, note) {
		t.Errorf("pp 4, 8 microbatches: exit %d, stderr %q; want no note", code, errs)
	}
}

// TestWorkloadDNNStrategyFileRules: a --strategy file's settings meet the
// rules their flags meet (prune without inference, a schedule of one
// microbatch on one stage ran as if not given); with inference, prune
// applies.
func TestWorkloadDNNStrategyFileRules(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"prune: 0.3\n", "s.yaml:1: prune does not apply: they price inference"},
		{"pp: 1\nmicrobatches: 1\nschedule: gpipe\n", "s.yaml:3: schedule does not apply"},
		// A key spelt otherwise than its flag (first_bucket, --first-bucket):
		// its line is the key's.
		{"inference: true\nfirst_bucket: 2MiB\n", "s.yaml:2: first_bucket does not apply"},
		{"inference: true\nprune: 0.3\n", ""},
	} {
		f := filepath.Join(dir, "s.yaml")
		os.WriteFile(f, []byte(c.yaml), 0o644)
		_, errs, code := collsim(t, "workload", "dnn", "--strategy", f, "--breakdown=false")
		if c.want == "" && code != 0 || c.want != "" && (code != 2 || !strings.Contains(errs, c.want)) {
			t.Errorf("%q: exit %d, %s; want %q", c.yaml, code, errs, c.want)
		}
	}
}

// TestWorkloadFarmNoKnee: with a master and a link that cost nothing the
// workers' bound is the only one, and there is no knee (it said "knee at
// 0.0 workers").
func TestWorkloadFarmNoKnee(t *testing.T) {
	out, errs, code := collsim(t, "workload", "farm", "--submit", "0", "--handle", "0", "--duration", "0")
	if code != 0 || !strings.Contains(out, "no knee: the master and the link cost nothing") {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

// TestWorkloadTilesHostMemoryOnNode1: host memory is node 1 of a gpu-node
// machine, device i's port its slot i (host h8+i on gpu-node-pcie), for
// any device count: every byte moved host to device leaves those ports'
// links, and every byte written back enters them. (With fewer than 8
// devices, block placement put the ports on node 0's other GPUs, and no
// byte crossed to node 1.) Machines of another shape are refused.
func TestWorkloadTilesHostMemoryOnNode1(t *testing.T) {
	for _, d := range []string{"2", "4", "8"} {
		out, errs, code := collsim(t, "workload", "tiles", "-d", d, "--n", "4096", "--tile", "512", "--busiest-links", "1000", "--json")
		if code != 0 {
			t.Fatalf("-d %s: exit %d: %s", d, code, errs)
		}
		var r struct {
			HostToDevice int64 `json:"host_to_device_bytes"`
			DeviceToHost int64 `json:"device_to_host_bytes"`
			Links        []struct {
				From, To string
				Bytes    int64
			} `json:"busiest_links"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(d)
		port := func(h string) bool {
			i, err := strconv.Atoi(strings.TrimPrefix(h, "h"))
			return strings.HasPrefix(h, "h") && err == nil && i >= 8 && i < 8+n
		}
		var from, to int64
		for _, l := range r.Links {
			if port(l.From) {
				from += l.Bytes
			}
			if port(l.To) {
				to += l.Bytes
			}
		}
		if r.HostToDevice == 0 || from != r.HostToDevice || to != r.DeviceToHost {
			t.Errorf("-d %s: %d B left the host ports and %d B entered them; want host to device %d B and device to host %d B", d, from, to, r.HostToDevice, r.DeviceToHost)
		}
	}
	for _, m := range []string{"gpu-cluster", "small"} {
		if _, errs, code := collsim(t, "workload", "tiles", "-m", m); code != 2 || !strings.Contains(errs, "is not such a machine") {
			t.Errorf("-m %s: exit %d, %s", m, code, errs)
		}
	}
}

// TestWorkloadStudiesPages: the workload studies, which draw no plots and
// have no --out, write their --json and --html (every one of them had
// crashed, exit 70, looking up --out; a new user's trial).
func TestWorkloadStudiesPages(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"study", "farm", "--workers", "1,4", "--sizes", "1KiB", "--tasks", "100"},
		{"study", "redistribute", "--sizes", "256", "--tiles", "64"},
	} {
		out, errs, code := collsim(t, append(slices.Clone(args), "--json")...)
		var page struct {
			Study  string `json:"study"`
			Tables []any  `json:"tables"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &page) != nil || page.Study != args[1] || len(page.Tables) == 0 {
			t.Errorf("%v --json: exit %d, %q: %s", args, code, errs, out)
		}
		file := filepath.Join(dir, args[1]+".html")
		if _, errs, code := collsim(t, append(slices.Clone(args), "--html", file)...); code != 0 {
			t.Errorf("%v --html: exit %d: %s", args, code, errs)
		}
		if b, err := os.ReadFile(file); err != nil || !bytes.Contains(b, []byte("<html")) {
			t.Errorf("%v --html: %v", args, err)
		}
	}
}

// TestWorkloadDNNSearchSaturatedMemory: a search's memory column says a
// count past 2^63 bytes in words, as the refusal does (it printed
// 8589934592.0 GiB: an audit).
func TestWorkloadDNNSearchSaturatedMemory(t *testing.T) {
	out, errs, _ := collsim(t, "workload", "dnn", "-m", "gpu-cluster", "--model", "gpt:1,64,1,4194304,1", "--peak", "1000000PFLOP/s", "--devices", "2", "--search", "--global-batch", "262144", "--search-microbatch-sizes", "131072")
	if !strings.Contains(out, "more than 8 EiB  does not fit") || strings.Contains(out+errs, "8589934592") {
		t.Errorf("search:\n%s%s", out, errs)
	}
}

// More METG points than halvings of --metg-from reach the clock's 1 ps
// run as many as there are, and say so (they stopped short without a
// word: an audit): 10 ms is 10^10 ps, halved 33 times to 1 ps (2^33 =
// 8.6e9 <= 10^10 < 2^34), so 34 kernels.
func TestTaskBenchMETGPointsPastTheClock(t *testing.T) {
	_, stderr, code := collsim(t, "workload", "taskbench", "-q", "--metg", "--metg-points", "100000", "--steps", "2", "--width", "4", "--ranks", "2")
	if code != 0 || !strings.Contains(stderr, "--metg-points 100000: halving 10ms reaches the clock's 1 ps after 34 kernels") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// 34 points run whole: no note.
	_, stderr, code = collsim(t, "workload", "taskbench", "-q", "--metg", "--metg-points", "34", "--steps", "2", "--width", "4", "--ranks", "2")
	if code != 0 || strings.Contains(stderr, "metg-points") {
		t.Errorf("34 points: exit %d: %s", code, stderr)
	}
}

// TestWorkloadTaskBenchGraphsAndRuntime: the command numbers its graphs,
// so that each draws its own imbalance (the kernels of 2 graphs sum to
// twice one graph's only if both drew alike: efficiency x elapsed x cores
// is that sum), and --runtime reaches the run and its JSON. By hand: 2
// stencil graphs under Task Bench's MPI runtime run one after another,
// each step waiting for its messages, so they take longer than under the
// async runtime, whose graphs overlap.
func TestWorkloadTaskBenchGraphsAndRuntime(t *testing.T) {
	type point struct {
		Elapsed    float64 `json:"elapsed_s"`
		Efficiency float64 `json:"efficiency"`
		Runtime    string  `json:"runtime"`
	}
	run := func(args ...string) point {
		t.Helper()
		out, errs, code := collsim(t, append([]string{"workload", "taskbench", "--ranks", "4", "--width", "8", "--steps", "20", "--duration", "100us", "--json", "-m", "small"}, args...)...)
		var p point
		if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
		}
		return p
	}
	work := func(p point) float64 { return p.Efficiency * p.Elapsed * 4 }
	one, two := run("--imbalance", "2"), run("--imbalance", "2", "--graphs", "2")
	if math.Abs(work(two)/(2*work(one))-1) < 1e-6 {
		t.Errorf("2 graphs' kernels sum to twice one graph's (%g s, %g s): they drew alike", work(two), work(one))
	}
	mpi, async := run("--graphs", "2"), run("--graphs", "2", "--runtime", "async")
	if mpi.Runtime != "mpi" || async.Runtime != "async" || !(mpi.Elapsed > async.Elapsed) {
		t.Errorf("mpi %+v, async %+v: want each runtime named, and MPI's slower", mpi, async)
	}
	refuses(t, []string{"workload", "taskbench", "-m", "small"}, []refusal{
		{[]string{"--runtime", "threads"}, `--runtime "threads": mpi or async`},
	})
}
