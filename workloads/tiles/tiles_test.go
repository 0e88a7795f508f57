package tiles

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/collsim/collsim/sim"
)

// flat is a node where every transfer costs 1 us plus 1 ns a byte.
func flat(src, dst int) (float64, float64) { return 1e-6, 1e-9 }

// TestDAGByHand: the task counts, FLOPs and some dependencies of small
// DAGs, from the algorithms' loops.
func TestDAGByHand(t *testing.T) {
	for _, c := range []struct {
		algo  string
		t     int
		tasks int
		flops float64 // b^3 units
	}{
		// Cholesky T=3: 3 POTRF (1/3 each), 3 TRSM, 3 SYRK (1 each),
		// 1 GEMM (2).
		{"cholesky", 3, 10, 1 + 3 + 3 + 2},
		// LU T=2: 2 GETRF (2/3 each), 2 TRSM, 1 GEMM.
		{"lu", 2, 5, 4.0/3 + 2 + 2},
		// GEMM T=2: 8 GEMMs of 2.
		{"gemm", 2, 8, 16},
		// Cholesky T=64 (the README's benchmark): 64 POTRF, 2,016 TRSM
		// and SYRK, C(64,3) = 41,664 GEMMs.
		{"cholesky", 64, 45760, 64.0/3 + 2016 + 2016 + 2*41664},
	} {
		d, err := build(c.algo, c.t)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.tasks) != c.tasks || math.Abs(d.flops-c.flops) > 1e-12*c.flops {
			t.Errorf("%s T=%d: %d tasks, %g b^3 FLOPs; want %d, %g", c.algo, c.t, len(d.tasks), d.flops, c.tasks, c.flops)
		}
	}
	// Cholesky T=3 in insertion order: 0 POTRF(0), 1 TRSM(1,0), 2
	// TRSM(2,0), 3 SYRK(1,1), 4 SYRK(2,2), 5 GEMM(2,1), 6 POTRF(1), 7
	// TRSM(2,1), 8 SYRK(2,2), 9 POTRF(2).
	d, _ := build("cholesky", 3)
	want := [][]int32{{}, {0}, {0}, {1}, {2}, {1, 2}, {3}, {5, 6}, {4, 7}, {8}}
	for i, w := range want {
		if !slices.Equal(d.deps[i], w) && !(len(w) == 0 && len(d.deps[i]) == 0) {
			t.Errorf("task %d (%s): deps %v, want %v", i, kernelNames[d.tasks[i].kind], d.deps[i], w)
		}
	}
	// GEMM: C(0,0) k=1 waits for C(0,0) k=0 only (A and B are never
	// written).
	d, _ = build("gemm", 2)
	if !slices.Equal(d.deps[4], []int32{0}) {
		t.Errorf("GEMM k=1 C(0,0): deps %v, want [0]", d.deps[4])
	}
}

// TestEveryTaskSeesItsVersion runs plans in data mode: each task records
// the tokens of the tiles it reads, and the run must show, for every
// task, the token of the task that last wrote each tile before it in the
// sequential algorithm, and leave every tile's last token in host memory.
// Schedulers, staging, small caches that force evictions and write-backs,
// and random latencies cover the paths tiles take.
func TestEveryTaskSeesItsVersion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		j := &Job{Algorithm: rapid.SampledFrom(Algorithms).Draw(t, "algo"), Tiles: rapid.IntRange(1, 6).Draw(t, "tiles"), B: 8, Elem: 8,
			Devices: rapid.IntRange(1, 5).Draw(t, "devices"), Peak: 1e9, HalfTile: 4, Scheduler: rapid.SampledFrom(Schedulers).Draw(t, "scheduler"),
			Staged: rapid.Bool().Draw(t, "staged"), Cost: flat, Data: true}
		if rapid.Bool().Draw(t, "small cache") {
			j.Capacity = rapid.IntRange(3, 6).Draw(t, "capacity")
		}
		check(t, j, rapid.Uint64().Draw(t, "seed"))
	})
}

func check(t interface{ Fatalf(string, ...any) }, j *Job, seed uint64) {
	comp, _, err := j.Plan()
	if err != nil {
		t.Fatalf("%v", err)
	}
	d, _ := build(j.Algorithm, j.Tiles)
	bufs := make([][][]uint64, comp.Ranks)
	for r := range bufs {
		for _, n := range comp.Buffers(r) {
			bufs[r] = append(bufs[r], make([]uint64, n))
		}
		for id := range d.tasks {
			bufs[r][bufTokens][id] = uint64(id + 1)
		}
	}
	if _, err := sim.Execute(sim.New(seed), comp.Schedule(), sim.Config{Network: sim.RandomLatency(2 * sim.Microsecond), Data: bufs}); err != nil {
		t.Fatalf("%+v: %v", j, err)
	}
	last := make([]uint64, d.tiles) // token of each tile's last writer so far
	for id, tk := range d.tasks {
		// The device that ran it recorded what it read; the others
		// recorded nothing for it.
		read := make([]uint64, 3)
		for _, r := range bufs[:j.Devices] {
			for k := range 3 {
				read[k] |= r[bufSeen][3*id+k]
			}
		}
		for k, y := range inputs(&tk, nil) {
			if read[k] != last[y] {
				t.Fatalf("%+v: task %d (%s) read tile %d's token %d, want %d (the sequential algorithm's)", j, id, kernelNames[tk.kind], y, read[k], last[y])
			}
		}
		last[tk.write] = uint64(id + 1)
	}
	for x, want := range last {
		found := false
		for _, r := range bufs[j.Devices:] {
			found = found || r[bufTiles][x] == want
		}
		if want != 0 && !found {
			t.Fatalf("%+v: tile %d's final version (token %d) is in no host port", j, x, want)
		}
	}
}

// TestOneDeviceSumsItsKernels: one device, free transfers: the makespan
// is the kernels' times one after another.
func TestOneDeviceSumsItsKernels(t *testing.T) {
	free := func(int, int) (float64, float64) { return 0, 0 }
	for _, algo := range Algorithms {
		j := &Job{Algorithm: algo, Tiles: 5, B: 256, Elem: 8, Devices: 1, Peak: 1e12, HalfTile: 256, Scheduler: "locality", Cost: free}
		comp, _, err := j.Plan()
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.FixedLatency(0)})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := build(algo, 5)
		var want sim.Time
		for _, tk := range d.tasks {
			// b^3 FLOPs x per-kernel count at 1e12 x 256/512 x relative
			// efficiency.
			want += sim.FromSeconds(flopsPerB3[tk.kind] * 256 * 256 * 256 / (1e12 * 0.5 * relEfficiency[tk.kind]))
		}
		if res.Makespan != want {
			t.Errorf("%s: %v, want %v", algo, res.Makespan, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	ok := Job{Algorithm: "cholesky", Tiles: 4, B: 64, Elem: 8, Devices: 2, Peak: 1e12, Scheduler: "locality", Cost: flat}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Algorithm = "qr" }, `algorithm "qr"`},
		{func(j *Job) { j.Scheduler = "random" }, `scheduler "random"`},
		{func(j *Job) { j.Devices = 0 }, "0 devices"},
		{func(j *Job) { j.Capacity = 2 }, "needs at least 3"},
		{func(j *Job) { j.Tiles = 1000 }, "use larger tiles"},
		{func(j *Job) { j.Peak = 0 }, "peak 0"},
		{func(j *Job) { j.B = 0 }, "at least 1"},
	} {
		j := ok
		c.edit(&j)
		if err := j.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}

// The bound on the DAG counts each algorithm's own tasks. The largest T
// each takes under 2^23 tasks, worked out by hand from the counts in
// taskCount's comment: GEMM 203 (203^3 = 8,365,427; 204^3 = 8,489,664),
// Cholesky 368 (8,373,840; 369: 8,442,105), LU 292 (8,341,710; 293:
// 8,427,559). Before, T^3/3 took GEMM up to 293 and Cholesky to 293.
func TestTaskBoundPerAlgorithm(t *testing.T) {
	for _, c := range []struct {
		algo     string
		largest  int
		wantNext string
	}{
		{"gemm", 203, "8489664 tasks"},
		{"cholesky", 368, "8442105 tasks"},
		{"lu", 292, "8427559 tasks"},
	} {
		j := Job{Algorithm: c.algo, Tiles: c.largest, B: 64, Elem: 8, Devices: 2, Peak: 1e12, Scheduler: "locality", Cost: flat}
		if err := j.Check(); err != nil {
			t.Errorf("%s on %d tiles refused: %v", c.algo, c.largest, err)
		}
		j.Tiles++
		if err := j.Check(); err == nil || !strings.Contains(err.Error(), c.wantNext) {
			t.Errorf("%s on %d tiles: %v, want a refusal naming %s", c.algo, j.Tiles, err, c.wantNext)
		}
	}
	// The counts are those the builder makes, at sizes small enough to build.
	for _, algo := range Algorithms {
		for n := 1; n <= 9; n++ {
			d, err := build(algo, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := taskCount(algo, n); got != float64(len(d.tasks)) {
				t.Errorf("%s on %d tiles: taskCount %g, build made %d", algo, n, got, len(d.tasks))
			}
		}
	}
}

// With PeerFirst a tile another device holds comes from it, as BLASX's
// second-level cache takes it, even where host memory would deliver it
// sooner; without, the plan takes the sooner. By hand, on a node where a
// device-to-device copy costs 10 us plus 2 ns a byte and a host copy 1 us
// plus 1 ns a byte, tile 0 on device 0 since time 0 and in host memory:
// device 1 gets it from device 0 with PeerFirst (10 us + 2 x 8 KiB ns =
// 26.384 us), from host memory without (1 us + 8.192 us = 9.192 us). A
// copy not yet in place (device 0's lands at 50 us, after device 1's link
// in is free at 0) is passed over for host memory.
func TestPeerFirstIsBLASXsSecondLevel(t *testing.T) {
	cost := func(src, dst int) (float64, float64) {
		if src < 2 && dst < 2 { // both devices
			return 10e-6, 2e-9
		}
		return 1e-6, 1e-9
	}
	for _, c := range []struct {
		peerFirst bool
		ready     float64 // when device 0's copy is in place
		src       int
		at        float64
	}{
		{true, 0, 0, 10e-6 + 2e-9*8192},
		{false, 0, 2 + 1, 1e-6 + 1e-9*8192},
		{true, 50e-6, 2 + 1, 1e-6 + 1e-9*8192},
	} {
		j := &Job{Algorithm: "gemm", Tiles: 1, B: 32, Elem: 8, Devices: 2, Peak: 1e12, Cost: cost, PeerFirst: c.peerFirst}
		d, err := build("gemm", 1)
		if err != nil {
			t.Fatal(err)
		}
		p := newPlanner(j, d)
		p.where[0] |= 1 << 0
		p.availAt[0*p.R+0] = c.ready
		at, src, _ := p.arrival(0, 1)
		if src != c.src || math.Abs(at-c.at) > 1e-15 {
			t.Errorf("PeerFirst %v, device 0's copy at %g: from %d at %g, want from %d at %g", c.peerFirst, c.ready, src, at, c.src, c.at)
		}
	}
}
