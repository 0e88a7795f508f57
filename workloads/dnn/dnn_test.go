package dnn_test

import (
	"math"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/network"
	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/topology"
	"github.com/collsim/collsim/workloads/dnn"
)

func net(t *testing.T, ranks int) sim.NetworkFactory {
	t.Helper()
	cross, err := topology.Crossbar(ranks, topology.LinkSpec{Bandwidth: 10e9, Latency: 2e-6})
	if err != nil {
		t.Fatal(err)
	}
	place, _ := topology.Place(topology.PlaceBlock, ranks, ranks, 1, 0)
	f, err := network.Analytic(network.AnalyticConfig{Topology: cross, Placement: place})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func run(t *testing.T, j dnn.Job, free map[string]bool) sim.Time {
	t.Helper()
	comp, err := j.Composition(free)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.Instant(net(t, j.Devices()), dnn.FreeTags(free)), Host: sim.HostParams{EagerLimit: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Makespan
}

var allFree = map[string]bool{dnn.KindTP: true, dnn.KindDP: true, dnn.KindPP: true, dnn.KindZeRO: true, dnn.KindOffload: true}

// uniform is a model of n identical layers whose forward pass takes 1 ms
// per sample on a 1 TFLOP/s device at full efficiency.
func uniform(n int, tp bool) *dnn.Model {
	m := &dnn.Model{Name: "uniform"}
	for range n {
		m.Layers = append(m.Layers, dnn.Layer{Name: "l", Kind: "transformer", Params: 1 << 20, FwdFLOPs: 1e9,
			ActBytes: 1 << 20, OutBytes: 1 << 16, TP: tp, TPFwd: 2, TPBwd: 2})
	}
	return m
}

var device = dnn.Device{Name: "test", Peak: 1e12, Efficiency: 1}

// With free communication the step is the compute: m microbatches of a
// forward (1 ms x layers / tp) and a backward (twice that) per sample.
func TestFreeCommunicationIsCompute(t *testing.T) {
	for _, s := range []dnn.Strategy{
		{DP: 2, TP: 2, Microbatches: 3, MicroBatch: 2},
		{DP: 4, Microbatches: 1, MicroBatch: 1},
		{DP: 2, ZeRO3: true, Microbatches: 2, MicroBatch: 1},
	} {
		j := dnn.Job{Model: uniform(4, true), Device: device, Strategy: s}
		got := run(t, j, allFree)
		tp := max(s.TP, 1)
		want := sim.Time(s.Microbatches*s.MicroBatch) * 3 * 4 * sim.Millisecond / sim.Time(tp)
		if got != want {
			t.Errorf("%+v: %v, want %v", s, got, want)
		}
	}
}

// GPipe and 1F1B with free communication idle for (p-1)/(m+p-1) of the
// step on uniform stages (Huang et al. 2019; Narayanan et al. 2021).
func TestPipelineBubble(t *testing.T) {
	for _, sched := range []string{"gpipe", "1f1b"} {
		for _, c := range []struct{ pp, m int }{{2, 1}, {2, 4}, {4, 4}, {4, 8}, {3, 5}} {
			j := dnn.Job{Model: uniform(2*c.pp, false), Device: device, Strategy: dnn.Strategy{PP: c.pp, Microbatches: c.m, Schedule: sched}}
			step := run(t, j, allFree)
			work := sim.Time(c.m) * 3 * 2 * sim.Millisecond // per stage: 2 layers
			got := float64(step-work) / float64(step)
			want := float64(c.pp-1) / float64(c.m+c.pp-1)
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s pp %d m %d: bubble %.6f of the step (%v), want (p-1)/(m+p-1) = %.6f", sched, c.pp, c.m, got, step, want)
			}
		}
	}
}

// Data parallel: each bucket's allreduce, measured alone on the same
// network. Buckets as DDP assigns them once rebuilt in the order
// gradients become ready (Reducer::rebuild_buckets): from the last layer
// down, the first closed at --first-bucket, later ones at --bucket, the
// first layers' remainder last. Five layers of 2 MiB of gradients (1 ms
// forward, 2 ms backward a layer):
//   - buckets of 2 MiB then 4 MiB, no overlap: {4}, {3,2}, {1,0}, the step
//     the compute and allreduces of 1, 2 and 2 layers (a bucket closes at
//     its size exactly: closing above it would give {4,3}, {2,1,0});
//   - the defaults, 1 MiB then 25 MiB, with overlap: {4} goes while layer
//     3 computes, and {3,2,1,0}, 8 MiB, is complete only at the end, so
//     the step is the compute and a 4-layer allreduce. (Filled in layer
//     order, as collsim did for one step, the 1 MiB bucket was layer 0's,
//     exchanged last: the step was the compute and a 1-layer allreduce.)
func TestDataParallelBuckets(t *testing.T) {
	const dp = 4
	compute := 3 * 5 * sim.Millisecond
	allreduce := func(layers int64) sim.Time {
		call, err := collectives.NewCall(collectives.Allreduce, "ring", collectives.Group{0, 1, 2, 3}, collectives.Params{Count: layers << 20, ElemSize: 2}, 1)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := call.Algorithm.Build(call.Params)
		res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net(t, dp), Host: sim.HostParams{EagerLimit: 64 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Makespan
	}
	j := dnn.Job{Model: uniform(5, false), Device: device,
		Strategy: dnn.Strategy{DP: dp, NoOverlap: true, FirstBucketBytes: 2 << 20, BucketBytes: 4 << 20}}
	if got, want := run(t, j, nil), compute+allreduce(1)+2*allreduce(2); got != want {
		t.Errorf("2 MiB then 4 MiB, no overlap: step %v, want %v", got, want)
	}
	j.Strategy = dnn.Strategy{DP: dp}
	if got, want := run(t, j, nil), compute+allreduce(4); got != want {
		t.Errorf("the defaults, overlapped: step %v, want compute %v + a 4-layer allreduce = %v", got, compute, want)
	}
}

// Memory per device, by hand, for a two-layer model.
func TestMemoryByHand(t *testing.T) {
	m := &dnn.Model{Name: "two", Layers: []dnn.Layer{
		{Name: "a", Params: 1000, ActBytes: 100, OutBytes: 10, FwdFLOPs: 1},
		{Name: "b", Params: 3000, ActBytes: 300, OutBytes: 30, FwdFLOPs: 1, TP: true, TPFwd: 2},
	}}
	cases := []struct {
		s    dnn.Strategy
		want []dnn.Memory
	}{
		// dp 2, 4 microbatches of 2 samples, pp 1: all 4 microbatches' activations held (1F1B holds pp - s = 1? no: pp 1 holds 1)
		{dnn.Strategy{DP: 2, Microbatches: 4, MicroBatch: 2}, []dnn.Memory{{Stage: 0, Params: 4000, Weights: 8000, Gradients: 8000, Optimizer: 48000, Activations: 1 * 2 * 400, Total: 64800}}},
		// tp 2: layer b's 3000 parameters and 300 bytes split in two.
		{dnn.Strategy{TP: 2, Microbatches: 1, MicroBatch: 1}, []dnn.Memory{{Stage: 0, Params: 2500, Weights: 5000, Gradients: 5000, Optimizer: 30000, Activations: 250, Total: 40250}}},
		// pp 2, GPipe, 3 microbatches: every stage holds all 3.
		{dnn.Strategy{PP: 2, Microbatches: 3, Schedule: "gpipe"}, []dnn.Memory{
			{Stage: 0, Params: 1000, Weights: 2000, Gradients: 2000, Optimizer: 12000, Activations: 300, Total: 16300},
			{Stage: 1, Params: 3000, Weights: 6000, Gradients: 6000, Optimizer: 36000, Activations: 900, Total: 48900}}},
		// pp 2, 1F1B: stage 0 holds 2, stage 1 holds 1.
		{dnn.Strategy{PP: 2, Microbatches: 3}, []dnn.Memory{
			{Stage: 0, Params: 1000, Weights: 2000, Gradients: 2000, Optimizer: 12000, Activations: 200, Total: 16200},
			{Stage: 1, Params: 3000, Weights: 6000, Gradients: 6000, Optimizer: 36000, Activations: 300, Total: 48300}}},
		// ZeRO-3 over dp 4: 16 bytes per parameter divided by 4, and two
		// layers' 16-bit weights gathered whole, here both: 2 x 4000.
		{dnn.Strategy{DP: 4, ZeRO3: true}, []dnn.Memory{{Stage: 0, Params: 1000, Weights: 2000 + 8000, Gradients: 2000, Optimizer: 12000, Activations: 400, Total: 24400}}},
		// Recomputation: each layer's output (10 + 30) per held microbatch, plus the largest layer's activations (300).
		{dnn.Strategy{Recompute: true, Microbatches: 2}, []dnn.Memory{{Stage: 0, Params: 4000, Weights: 8000, Gradients: 8000, Optimizer: 48000, Activations: 40 + 300, Total: 64340}}},
	}
	for _, c := range cases {
		j := dnn.Job{Model: m, Device: device, Strategy: c.s}
		if err := j.Check(0); err != nil {
			t.Fatal(err)
		}
		got := j.Memory()
		if len(got) != len(c.want) {
			t.Fatalf("%+v: %d stages", c.s, len(got))
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v stage %d: %+v, want %+v", c.s, i, got[i], c.want[i])
			}
		}
	}
}

// Offloading holds three microbatches' activations at most (in use, going
// out, coming back): GPipe of 4 microbatches, 400 bytes each.
func TestOffloadMemoryByHand(t *testing.T) {
	m := &dnn.Model{Name: "two", Layers: []dnn.Layer{
		{Name: "a", Params: 1000, ActBytes: 100, OutBytes: 10, FwdFLOPs: 1},
		{Name: "b", Params: 3000, ActBytes: 300, OutBytes: 30, FwdFLOPs: 1},
	}}
	dev := device
	dev.HostLink = 1e9
	j := dnn.Job{Model: m, Device: dev, Strategy: dnn.Strategy{Offload: true, Microbatches: 4, Schedule: "gpipe"}}
	if err := j.Check(0); err != nil {
		t.Fatal(err)
	}
	want := dnn.Memory{Params: 4000, Weights: 8000, Gradients: 8000, Optimizer: 48000, Activations: 3 * 400, Total: 65200}
	if got := j.Memory(); len(got) != 1 || got[0] != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestRefusals(t *testing.T) {
	small := dnn.Device{Name: "tiny", Peak: 1e12, Memory: 1 << 20}
	cases := map[string]struct {
		j       dnn.Job
		devices int
		want    string
	}{
		"product":     {dnn.Job{Model: uniform(4, true), Device: device, Strategy: dnn.Strategy{DP: 2, TP: 2}}, 8, "= 4 devices, but the run has 8"},
		"tp in node":  {dnn.Job{Model: uniform(4, true), Device: device, Strategy: dnn.Strategy{TP: 16}, NodeSize: 8}, 0, "larger than a node of 8"},
		"tp no layer": {dnn.Job{Model: uniform(4, false), Device: device, Strategy: dnn.Strategy{TP: 2}}, 0, "no layer that splits"},
		"memory":      {dnn.Job{Model: uniform(4, false), Device: small, Strategy: dnn.Strategy{}}, 0, "does not fit: stage 0 needs 68.00 MiB"},
		"pp layers":   {dnn.Job{Model: uniform(2, false), Device: device, Strategy: dnn.Strategy{PP: 3}}, 0, "more stages than the model's 2 layers"},
		"order":       {dnn.Job{Model: uniform(2, false), Device: device, Strategy: dnn.Strategy{Order: "tp,dp"}}, 0, "list tp, dp and pp once each"},
	}
	for name, c := range cases {
		err := c.j.Check(c.devices)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// What would fit, by hand: 4 layers of 1 MiB of activations and 64 KiB
	// of output each. One microbatch holds 4 MiB; offloaded, 2 microbatches'
	// worth at most, still 4 MiB: no help; recomputed, 4 x 64 KiB + 1 MiB.
	// With 4 microbatches (GPipe holds them all, 16 MiB) offloading keeps 8.
	for mb, want := range map[int]string{1: "use more tensor or pipeline parallelism, zero3, recompute", 4: "use more tensor or pipeline parallelism, zero3, recompute, offload"} {
		j := dnn.Job{Model: uniform(4, false), Device: small, Strategy: dnn.Strategy{Microbatches: mb, Schedule: "gpipe"}}
		if err := j.Check(0); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%d microbatches: %v, want it to end %q", mb, err, want)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

// Recomputation, offloading and inference with free communication, by
// hand: a 4-layer model of 1 ms forward layers, 2 microbatches, pp 1.
func TestComputeOptionsByHand(t *testing.T) {
	ms := sim.Millisecond
	cases := []struct {
		name string
		s    dnn.Strategy
		dev  dnn.Device
		want sim.Time
	}{
		// forward 4 ms, backward 8 ms, recomputed forward 4 ms more.
		{"recompute", dnn.Strategy{Microbatches: 2, Recompute: true}, device, 2 * (4 + 4 + 8) * ms},
		// 4 MiB of activations per microbatch at 1 GiB/s: 3.90625 ms each
		// way, in the compute's way; under GPipe no backward pass comes
		// right after its forward, so both microbatches go out and back.
		{"offload serial", dnn.Strategy{Microbatches: 2, OffloadSerial: true, Offload: true, Schedule: "gpipe"}, dnn.Device{Name: "d", Peak: 1e12, Efficiency: 1, HostLink: 1 << 30}, 2*(4+8)*ms + 4*sim.FromSeconds(4.0/1024)},
		// inference: forwards only, 30% of the operations skipped.
		{"inference", dnn.Strategy{Microbatches: 2, Inference: true, Prune: 0.3}, device, 2 * sim.FromSeconds(4*0.7e-3)},
	}
	commFree := map[string]bool{dnn.KindTP: true, dnn.KindDP: true, dnn.KindPP: true, dnn.KindZeRO: true}
	for _, c := range cases {
		j := dnn.Job{Model: uniform(4, false), Device: c.dev, Strategy: c.s}
		if got := run(t, j, commFree); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Beside compute, GPipe (c = 3.90625 ms a copy): microbatch 0 goes
	// out from 4 ms and comes back from c later, during forward 1
	// (4 to 8 ms), by 4 + 2c; its backward runs from there, 8 ms, and
	// microbatch 1's (out from 8 ms, back by 8 + 2c) right after it:
	// 4 + 2c + 16 = 20 ms + 2c.
	j := dnn.Job{Model: uniform(4, false), Device: dnn.Device{Name: "d", Peak: 1e12, Efficiency: 1, HostLink: 1 << 30}, Strategy: dnn.Strategy{Microbatches: 2, Offload: true, Schedule: "gpipe"}}
	if got, want := run(t, j, commFree), 20*ms+2*sim.FromSeconds(4.0/1024); got != want {
		t.Errorf("offload beside compute: %v, want %v", got, want)
	}
}

// Tensor parallelism: tp must divide the heads, its groups must stay in a
// node whatever the order, and a transformer block's activations divide
// by tp but for the 10 s h bytes every rank keeps (Korthikanti et al.:
// s h (10 + 24/t + 5 a s / (h t)) bytes per sample).
func TestTensorParallelRules(t *testing.T) {
	m, _ := dnn.GPT(dnn.Transformer{Name: "g", Layers: 2, Hidden: 64, Heads: 4, Seq: 32, Vocab: 100})
	for _, c := range []struct {
		s    dnn.Strategy
		want string
	}{
		{dnn.Strategy{TP: 3}, "tp 3 does not divide model \"g\"'s 4 attention heads"},
		{dnn.Strategy{TP: 2, DP: 4, Order: "dp,tp,pp"}, "order dp,tp,pp spreads each tensor-parallel group of 2 over nodes of 4"},
		{dnn.Strategy{TP: 4, DP: 2, Order: "dp,tp,pp"}, "spreads each tensor-parallel group"},
	} {
		j := dnn.Job{Model: m, Device: device, Strategy: c.s, NodeSize: 4}
		if err := j.Check(0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
	j := dnn.Job{Model: m, Device: device, Strategy: dnn.Strategy{TP: 4, DP: 2}, NodeSize: 4}
	if err := j.Check(0); err != nil {
		t.Fatal(err)
	}
	s, h, a, tp := int64(32), int64(64), int64(4), int64(4)
	block := s*h*(10+24/tp) + 5*a*s*s/tp // bytes per sample, exact here
	var want int64
	for _, l := range m.Layers {
		if l.Kind == "transformer" {
			want += block
		} else {
			want += (l.ActBytes + tp - 1) / tp
		}
	}
	if got := j.Memory()[0].Activations; got != want {
		t.Errorf("activations %d, want %d", got, want)
	}
}

// Inference's model FLOP/s counts the operations run, not those pruned.
func TestPrunedFLOPs(t *testing.T) {
	j := dnn.Job{Model: uniform(4, false), Device: device, Strategy: dnn.Strategy{Inference: true, Prune: 0.25}}
	if got, want := j.UsefulFwdFLOPs(), 4*1e9*0.75; got != want {
		t.Errorf("%g, want %g", got, want)
	}
}

// ZeRO-3 prefetches one layer: each layer's gather runs while the layer
// before computes, so when a layer's compute (1 ms a sample forward) is far
// longer than its gather (2 MiB at 10 GB/s), only the first gather and the
// last reduce-scatter show, whatever the number of layers. (Each gather
// used to wait for the layer before to finish: exposed time grew with the
// layers, a gather for every layer in both passes.)
func TestZeRO3PrefetchesOneLayer(t *testing.T) {
	var exposed []sim.Time
	for _, layers := range []int{2, 4, 8} {
		j := dnn.Job{Model: uniform(layers, false), Device: device, Strategy: dnn.Strategy{DP: 2, ZeRO3: true, Microbatches: 2, MicroBatch: 1}}
		step, compute := run(t, j, nil), run(t, j, allFree)
		if want := sim.Time(2*3*layers) * sim.Millisecond; compute != want {
			t.Fatalf("%d layers: compute %v, want %v", layers, compute, want)
		}
		exposed = append(exposed, step-compute)
	}
	if exposed[0] <= 0 || exposed[1] != exposed[0] || exposed[2] != exposed[0] {
		t.Errorf("exposed communication with 2, 4 and 8 layers: %v; want one first gather and one last reduce-scatter each", exposed)
	}
}

// Offloading copies activations out beside compute and back during the
// phase before their backward pass, the two directions of the host link
// at once; a phase's first compute waits for every copy out but the last,
// so that the device holds at most three microbatches' activations (in
// use, going out, coming back; Memory); a microbatch whose backward pass
// comes right after its forward stays on the device. Four layers of 1 MiB
// activations (4 MiB a microbatch, c = 8.388608 ms a copy at 0.5 GB/s),
// forward 4 ms and backward 8 ms a microbatch:
//   - 1F1B on one stage runs each backward right after its forward: no
//     copy at all, the step is the compute, 48 ms.
//   - GPipe, by hand (ms; c > 8): out k runs from 4 + kc to 4 + (k+1)c.
//     Forwards 0 and 1 run at 0 and 4; forward 2 waits for out 0 and
//     runs from 4 + c, forward 3 for out 1, from 4 + 2c to 8 + 2c. Back 0,
//     brought ahead during forward 3's phase, waits as the phase does for
//     out 1 (4 + 2c) and ends at 4 + 3c; backward 0 waits for out 2 (also
//     4 + 3c) and ends at 12 + 3c. Back 1 runs from 4 + 3c (after out 2)
//     to 4 + 4c, so backward 1 runs from 4 + 4c to 12 + 4c; back 2 from
//     4 + 4c (its lane free) to 4 + 5c, backward 2 from there to 12 + 5c;
//     back 3 from 4 + 5c to 4 + 6c, backward 3 from there to 12 ms + 6c =
//     62.331648 ms. (A microbatch's copy back used to wait for its own
//     backward pass to begin, and 1F1B's last stage sent every
//     microbatch out and back; a copy back that did not wait for the
//     copies out let four microbatches onto the device.)
func TestOffloadBesideCompute(t *testing.T) {
	dev := device
	dev.HostLink = 0.5e9
	c := sim.FromSeconds(4 << 20 / 0.5e9)
	for sched, want := range map[string]sim.Time{"1f1b": 48 * sim.Millisecond, "gpipe": 12*sim.Millisecond + 6*c} {
		j := dnn.Job{Model: uniform(4, false), Device: dev, Strategy: dnn.Strategy{Offload: true, Microbatches: 4, MicroBatch: 1, Schedule: sched}}
		if got := run(t, j, nil); got != want {
			t.Errorf("%s: step %v, want %v", sched, got, want)
		}
	}
}

// A device's efficiencies by kind and a model's layer kinds that miss each
// other are said (a typo on either side silently took the default).
func TestKindsUnmatched(t *testing.T) {
	m := &dnn.Model{Name: "m", Layers: []dnn.Layer{{Kind: "convv"}, {Kind: "fc"}, {Kind: "convv"}}}
	for _, c := range []struct {
		byKind map[string]float64
		want   string
	}{
		{nil, ""},
		{map[string]float64{"convv": 0.3, "fc": 0.6}, ""},
		{map[string]float64{"convv": 0.3, "fc": 0.6, "cnov": 0.2}, `device d gives an efficiency for kind "cnov", which no layer of m has`},
		{map[string]float64{"conv": 0.3, "fc": 0.6}, `device d gives an efficiency for kind "conv", which no layer of m has; m's layers of kind "convv" take d's default efficiency 0.7`},
	} {
		d := dnn.Device{Name: "d", Peak: 1, Efficiency: 0.7, ByKind: c.byKind}
		if got := d.KindsUnmatched(m); got != c.want {
			t.Errorf("%v: %q, want %q", c.byKind, got, c.want)
		}
	}
}

// Tensor-parallel groups must stay in a node as the run places its ranks,
// not only under block placement: ranks placed round robin over two nodes
// of 4 put a group of tp 2 on both (placement round_robin ran, and its
// step's tp share quadrupled, while --order's spreading was refused).
func TestTPGroupsStayInANodeAsPlaced(t *testing.T) {
	j := dnn.Job{Model: uniform(4, true), Device: device, NodeSize: 4, Strategy: dnn.Strategy{DP: 4, TP: 2, Microbatches: 1, MicroBatch: 1}}
	j.Nodes = []int32{0, 0, 0, 0, 1, 1, 1, 1} // block
	if err := j.Check(8); err != nil {
		t.Errorf("block placement: %v", err)
	}
	j.Nodes = []int32{0, 1, 0, 1, 0, 1, 0, 1} // round robin
	if err := j.Check(8); err == nil || !strings.Contains(err.Error(), "the placement puts ranks 0 and 1 of a tensor-parallel group on nodes 0 and 1") {
		t.Errorf("round robin: %v", err)
	}
	j.AllowTPAcrossNodes = true
	if err := j.Check(8); err != nil {
		t.Errorf("round robin, tp allowed across nodes: %v", err)
	}
}

// ZeRO-3 holds its shard and the two largest layers gathered whole (the
// one computing and the one prefetched), by hand on three unequal layers
// of 1000, 3000 and 2000 parameters over dp 4: weights 2 x 6000 / 4 +
// 2 x (3000 + 2000) = 13000 bytes; at dp 1 nothing is sharded or gathered.
func TestZeRO3MemoryByHand(t *testing.T) {
	m := &dnn.Model{Name: "three", Layers: []dnn.Layer{
		{Name: "a", Params: 1000, ActBytes: 100, FwdFLOPs: 1},
		{Name: "b", Params: 3000, ActBytes: 100, FwdFLOPs: 1},
		{Name: "c", Params: 2000, ActBytes: 100, FwdFLOPs: 1},
	}}
	for _, c := range []struct {
		dp   int
		want dnn.Memory
	}{
		{4, dnn.Memory{Params: 1500, Weights: 3000 + 10000, Gradients: 3000, Optimizer: 18000, Activations: 300, Total: 34300}},
		{1, dnn.Memory{Params: 6000, Weights: 12000, Gradients: 12000, Optimizer: 72000, Activations: 300, Total: 96300}},
	} {
		j := dnn.Job{Model: m, Device: device, Strategy: dnn.Strategy{DP: c.dp, ZeRO3: true}}
		if err := j.Check(0); err != nil {
			t.Fatal(err)
		}
		if got := j.Memory(); len(got) != 1 || got[0] != c.want {
			t.Errorf("dp %d: %+v, want %+v", c.dp, got, c.want)
		}
	}
}

// ZeRO-3 does not gather a layer it still holds: the backward pass right
// after a forward starts with the layer the forward ended with, and the
// forward after a backward with the layer that backward ended with. With
// 4 layers, 2 microbatches, 1F1B on one stage (forward 0, backward 0,
// forward 1, backward 1), dp 2: gathers 4 + 3 + 3 + 3 = 13 and
// reduce-scatters 2 x 4 = 8, each a ring of one step on 2 ranks, 2
// messages: 42 messages (each layer gathered every pass made 48).
func TestZeRO3KeepsTheLayerItHolds(t *testing.T) {
	j := dnn.Job{Model: uniform(4, false), Device: device, Strategy: dnn.Strategy{DP: 2, ZeRO3: true, Microbatches: 2, MicroBatch: 1}}
	comp, err := j.Composition(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.Instant(net(t, 2), dnn.FreeTags(nil)), Host: sim.HostParams{EagerLimit: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 42 {
		t.Errorf("%d messages, want 42", res.Messages)
	}
}

// Stages are balanced by the time the device takes, whether a layer's
// time is measured or comes from its FLOPs: a layer of 1 ms measured and
// five of 1e9 FLOPs, 1 ms each on device (1 TFLOP/s at full efficiency),
// split over 2 stages as 3 and 3, 3 ms forward and 6 ms backward a stage
// per microbatch; with free communication 8 microbatches take (m+p-1) x
// 9 ms = 81 ms under both schedules. (Weighed by FLOPs, a measured
// millisecond counted as 1e12 FLOPs: the split was 1 and 5, 15 ms a
// microbatch on the second stage, and the step 1 + 8 x 15 + 2 = 123 ms
// under both.)
func TestStagesBalanceMeasuredAndFLOPTimes(t *testing.T) {
	m := uniform(6, false)
	m.Layers[0].FwdFLOPs, m.Layers[0].FwdTime = 0, sim.Millisecond
	for _, sched := range []string{"gpipe", "1f1b"} {
		j := dnn.Job{Model: m, Device: device, Strategy: dnn.Strategy{PP: 2, Microbatches: 8, Schedule: sched}}
		if got, want := run(t, j, allFree), 81*sim.Millisecond; got != want {
			t.Errorf("%s: %v, want %v", sched, got, want)
		}
	}
}

// Megatron-LM keeps some parameters whole on every tensor-parallel rank:
// layer norms, the biases of row-parallel linears, the position
// embedding. A GPT of hidden 8 (2 heads, 1 block, sequence 4, vocabulary
// 16) on tp 2, counted module by module as Megatron builds them: the word
// embedding 16 x 8 / 2 = 64 and the position embedding 4 x 8 = 32; the
// block's QKV 8 x 24 / 2 + 24 / 2 = 108, attention output 4 x 8 + 8 = 40
// (row-parallel: its bias whole), two layer norms 2 x 16, the first MLP
// linear 8 x 32 / 2 + 32 / 2 = 144, the second 16 x 8 + 8 = 136; the final
// layer norm 16: 572 a rank, where dividing every layer by tp gave 524.
func TestTensorParallelKeepsSharedParamsWhole(t *testing.T) {
	m, err := dnn.GPT(dnn.Transformer{Name: "tiny", Layers: 1, Hidden: 8, Heads: 2, Seq: 4, Vocab: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Params(), int64(128+32+(3*64+24)+(64+8)+2*16+(256+32)+(256+8)+16); got != want {
		t.Fatalf("tiny GPT: %d parameters, want %d", got, want)
	}
	j := dnn.Job{Model: m, Device: device, Strategy: dnn.Strategy{TP: 2}}
	if err := j.Check(0); err != nil {
		t.Fatal(err)
	}
	if got, want := j.Memory()[0].Params, int64(64+32+108+40+32+144+136+16); got != want {
		t.Errorf("tp 2: %d parameters a rank, want %d", got, want)
	}

	// BERT's encoder adds token types (2 x 8) and the embedding's layer
	// norm (16) to the embedding, and the pooler (8 x 8 + 8), a plain
	// linear, to the head: all kept whole, 128 + 460 + 88 = 676 a rank.
	bert, err := dnn.GPT(dnn.Transformer{Name: "tiny-bert", Layers: 1, Hidden: 8, Heads: 2, Seq: 4, Vocab: 16, Encoder: true})
	if err != nil {
		t.Fatal(err)
	}
	jb := dnn.Job{Model: bert, Device: device, Strategy: dnn.Strategy{TP: 2}}
	if err := jb.Check(0); err != nil {
		t.Fatal(err)
	}
	if got, want := jb.Memory()[0].Params, int64((64+32+16+16)+460+(64+8+16)); got != want {
		t.Errorf("tiny BERT on tp 2: %d parameters a rank, want %d", got, want)
	}

	// The data-parallel gradient allreduce carries the same share: a layer
	// of 3 Mi parameters, 1 Mi of them whole, is 2 Mi a rank on tp 2
	// (16-bit gradients: 4 MiB), after its compute (1 ms forward and 2 ms
	// backward, halved by tp).
	layer := dnn.Layer{Name: "l", Kind: "transformer", Params: 3 << 20, ParamsShared: 1 << 20, FwdFLOPs: 1e9, ActBytes: 1 << 20, OutBytes: 1 << 16, TP: true}
	j = dnn.Job{Model: &dnn.Model{Name: "one", Layers: []dnn.Layer{layer}}, Device: device, Strategy: dnn.Strategy{DP: 4, TP: 2}}
	call, err := collectives.NewCall(collectives.Allreduce, "ring", collectives.Group{0, 1, 2, 3}, collectives.Params{Count: 2 << 20, ElemSize: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := call.Algorithm.Build(call.Params)
	res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net(t, 4), Host: sim.HostParams{EagerLimit: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := run(t, j, nil), 3*sim.Millisecond/2+res.Makespan; got != want {
		t.Errorf("dp 4, tp 2: step %v, want the compute 1.5ms and a 2 Mi-parameter allreduce %v = %v", got, res.Makespan, want)
	}

	bad := *m
	bad.Layers = append([]dnn.Layer(nil), m.Layers...)
	bad.Layers[1].ParamsShared = bad.Layers[1].Params + 1
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "kept whole") {
		t.Errorf("more parameters kept whole than the layer has: %v, want an error saying so", err)
	}
}

// A layer tied to the first layer's weights (GPT's logits, which reuse
// the word embedding) on another pipeline stage: that stage keeps a copy
// of them, and after the backward pass the two stages allreduce the
// copies' gradients (Megatron-LM's embedding group). Four layers of equal
// compute on 2 stages: the embedding (1 Mi parameters) and a layer on the
// first, a layer and the logits (no parameters of their own but the tied
// 1 Mi) on the second. One microbatch: the first stage's backward pass
// ends the step, and the allreduce of the copies' 16-bit gradients (2
// MiB, measured alone) comes after it.
func TestTiedWeightsAcrossStages(t *testing.T) {
	model := func(tied int64) *dnn.Model {
		l := dnn.Layer{Name: "l", Kind: "transformer", Params: 1 << 20, FwdFLOPs: 1e9, ActBytes: 1 << 10, OutBytes: 1 << 10}
		logits := l
		logits.Name, logits.Params, logits.Tied = "logits", 0, tied
		return &dnn.Model{Name: "tied", Layers: []dnn.Layer{l, l, l, logits}}
	}
	tied := dnn.Job{Model: model(1 << 20), Device: device, Strategy: dnn.Strategy{PP: 2}}
	untied := dnn.Job{Model: model(0), Device: device, Strategy: dnn.Strategy{PP: 2}}
	for _, j := range []*dnn.Job{&tied, &untied} {
		if err := j.Check(0); err != nil {
			t.Fatal(err)
		}
	}
	mem := tied.Memory()
	if got, want := [2]int64{mem[0].Params, mem[1].Params}, [2]int64{2 << 20, 2 << 20}; got != want {
		t.Errorf("parameters by stage: %v, want %v (the second stage's layer and its copy of the tied 1 Mi)", got, want)
	}
	if got, want := untied.Memory()[1].Params, int64(1<<20); got != want {
		t.Errorf("untied, the second stage: %d parameters, want %d", got, want)
	}
	call, err := collectives.NewCall(collectives.Allreduce, "", collectives.Group{0, 1}, collectives.Params{Count: 1 << 20, ElemSize: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := call.Algorithm.Build(call.Params)
	res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net(t, 2), Host: sim.HostParams{EagerLimit: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := run(t, tied, nil)-run(t, untied, nil), res.Makespan; got != want {
		t.Errorf("tied weights on 2 stages add %v to the step, want a 2 MiB allreduce on 2 ranks, %v", got, want)
	}
	// On one stage there is no copy and nothing to allreduce.
	one := dnn.Job{Model: model(1 << 20), Device: device}
	oneUntied := dnn.Job{Model: model(0), Device: device}
	if err := one.Check(0); err != nil {
		t.Fatal(err)
	}
	if got, want := run(t, one, nil), run(t, oneUntied, nil); got != want {
		t.Errorf("tied weights on one stage: step %v, want the untied model's %v", got, want)
	}
	if got, want := one.Memory()[0].Params, int64(3<<20); got != want {
		t.Errorf("tied weights on one stage: %d parameters, want %d", got, want)
	}

	bad := model(1 << 20)
	bad.Layers[0].Tied = 5
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "first layer") {
		t.Errorf("the first layer tied to itself: %v, want an error", err)
	}
	bad = model(1 << 20)
	bad.Layers[2].Tied = 5
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "more than one layer") {
		t.Errorf("two tied layers: %v, want an error", err)
	}
	bad = model(1<<20 + 1)
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "tie at most those") {
		t.Errorf("more tied than the first layer has: %v, want an error", err)
	}
}

// Under ZeRO-3 a layer tied to the first layer's weights gathers them
// whole before it computes, as DeepSpeed gathers a shared parameter with
// every module that uses it, on the first layer's stage too (the logits'
// gather held only their own parameters: an audit). An embedding of 1 Mi
// parameters, a small layer, and logits tied to the embedding, on dp 2
// with one microbatch: the logits' forward gathers 2 MiB more (1 MiB sent
// by each rank of the ring allgather; its backward comes right after and
// keeps them), and the two largest layers gathered at once are the
// embedding and the logits, 2 x 1 Mi parameters of 2 bytes.
func TestZeRO3GathersTiedWeights(t *testing.T) {
	model := func(tied int64) *dnn.Model {
		return &dnn.Model{Name: "zt", Layers: []dnn.Layer{
			{Name: "emb", Kind: "embedding", Params: 1 << 20, FwdFLOPs: 1e6, OutBytes: 1 << 10},
			{Name: "l", Kind: "transformer", Params: 1 << 10, FwdFLOPs: 1e6, OutBytes: 1 << 10},
			{Name: "logits", Kind: "logits", FwdFLOPs: 1e6, OutBytes: 1 << 10, Tied: tied},
		}}
	}
	zeroBytes := func(m *dnn.Model) (int64, dnn.Memory) {
		j := dnn.Job{Model: m, Device: device, Strategy: dnn.Strategy{DP: 2, ZeRO3: true, Algorithms: map[string]string{"allgather": "ring", "reduce_scatter": "ring"}}}
		comp, err := j.Composition(nil)
		if err != nil {
			t.Fatal(err)
		}
		zero := dnn.FreeTags(map[string]bool{dnn.KindZeRO: true})
		var sent int64
		for _, op := range sim.Materialize(comp.Schedule())[0] {
			if op.Kind == sim.OpSend && zero(op.Tag) {
				sent += op.Bytes
			}
		}
		return sent, j.Memory()[0]
	}
	tiedSent, tiedMem := zeroBytes(model(1 << 20))
	sent, _ := zeroBytes(model(0))
	if got := tiedSent - sent; got != 1<<20 {
		t.Errorf("tied logits: rank 0 sends %d bytes more in ZeRO-3's calls, want 1 MiB (one more gather of 2 MiB on 2 ranks)", got)
	}
	params := int64(1<<20 + 1<<10)
	if want := (2*params+1)/2 + 2*(2<<20); tiedMem.Weights != want {
		t.Errorf("tied logits: %d bytes of 16-bit weights, want %d (half the shards, and the embedding and the logits gathered)", tiedMem.Weights, want)
	}
}

// Absurd models saturate their memory rather than wrap: 10,000 layers of
// 1e15 parameters hold more than an int64 of bytes (12 x params printed
// as a negative optimizer state: an audit).
func TestMemorySaturates(t *testing.T) {
	m := &dnn.Model{Name: "huge"}
	for range 10000 {
		m.Layers = append(m.Layers, dnn.Layer{Name: "l", Kind: "fc", Params: 1e15, FwdFLOPs: 1})
	}
	j := dnn.Job{Model: m, Device: device}
	if err := j.Check(0); err != nil {
		t.Fatal(err)
	}
	got := j.Memory()[0]
	if got.Params != math.MaxInt64 || got.Weights != math.MaxInt64 || got.Optimizer != math.MaxInt64 || got.Total != math.MaxInt64 {
		t.Errorf("%+v, want every sum at the int64 limit", got)
	}
}

// The tied copy's other paths, counted in the ops a rank of the last
// stage sends: with dp 2 its data-parallel exchange carries the copy's
// gradients too (a ring allreduce on 2 ranks sends the bucket's bytes:
// 2 MiB more for 1 Mi 16-bit gradients), and the stages' allreduce of
// the copies is pipeline communication (free when pp is). A tied layer
// without tp keeps the whole copy on tp 2 ranks.
func TestTiedCopyPaths(t *testing.T) {
	model := func(tied int64, tp bool) *dnn.Model {
		l := dnn.Layer{Name: "l", Kind: "transformer", Params: 1 << 20, FwdFLOPs: 1e9, ActBytes: 1 << 10, OutBytes: 1 << 10, TP: true, TPFwd: 1}
		logits := l
		logits.Name, logits.Params, logits.Tied, logits.TP, logits.TPFwd = "logits", 0, tied, tp, 0
		return &dnn.Model{Name: "tied", Layers: []dnn.Layer{l, l, l, logits}}
	}
	sent := func(m *dnn.Model, s dnn.Strategy, rank int, kind string) int64 {
		j := dnn.Job{Model: m, Device: device, Strategy: s}
		comp, err := j.Composition(nil)
		if err != nil {
			t.Fatal(err)
		}
		of := dnn.FreeTags(map[string]bool{kind: true})
		var n int64
		for _, op := range sim.Materialize(comp.Schedule())[rank] {
			if op.Kind == sim.OpSend && of(op.Tag) {
				n += op.Bytes
			}
		}
		return n
	}
	// dp 2, pp 2 (ranks: dp innermost after tp; rank 2 is on the last stage).
	s := dnn.Strategy{DP: 2, PP: 2, Order: "dp,tp,pp", Algorithms: map[string]string{"allreduce": "ring"}}
	if got := sent(model(1<<20, true), s, 2, dnn.KindDP) - sent(model(0, true), s, 2, dnn.KindDP); got != 2<<20 {
		t.Errorf("the last stage's data-parallel exchange: %d bytes more with the copy, want 2 MiB", got)
	}
	// The stages' allreduce of the copies is among pp's messages: 2 MiB
	// of gradients on 2 ranks, a ring sending 2 MiB.
	if got := sent(model(1<<20, true), s, 2, dnn.KindPP) - sent(model(0, true), s, 2, dnn.KindPP); got != 2<<20 {
		t.Errorf("the last stage's pipeline messages: %d bytes more with the copy, want the 2 MiB allreduce", got)
	}
	// tp 2: a tied layer with tp holds half the copy; one without, all.
	// With tp the four layers take equal time and the last stage is a
	// layer and the logits: half of each, 1 Mi; without, the logits take
	// twice a halved layer's time and are the last stage alone: the whole
	// copy, 1 Mi (halved, it would be 0.5 Mi).
	for _, c := range []struct {
		tp   bool
		want int64
	}{{true, 1<<19 + 1<<19}, {false, 1 << 20}} {
		j := dnn.Job{Model: model(1<<20, c.tp), Device: device, Strategy: dnn.Strategy{TP: 2, PP: 2}}
		if err := j.Check(0); err != nil {
			t.Fatal(err)
		}
		if got := j.Memory()[1].Params; got != c.want {
			t.Errorf("tied layer with tp %v on tp 2: the last stage holds %d parameters, want %d", c.tp, got, c.want)
		}
	}
}
