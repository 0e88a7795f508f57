package configs

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim"
)

// simulate runs coll/algo with count 4-byte elements on 256 ranks in
// blocks on m's flow network and returns the time the last rank finished.
func simulate(t *testing.T, m *Machine, coll collectives.Collective, algo string, count int64) sim.Time {
	t.Helper()
	place, err := m.Place(256, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	net, err := m.Flow(place)
	if err != nil {
		t.Fatal(err)
	}
	a, err := collectives.Lookup(coll, algo)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Build(collectives.Params{Ranks: 256, Count: count, ElemSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Execute(sim.New(1), s, sim.Config{Network: net, Host: m.Host})
	if err != nil {
		t.Fatal(err)
	}
	return res.Makespan
}

// TestTaperSlowsAlltoallNotRing: on the flow network, 256 ranks in blocks
// (32 per leaf, 8 leaves) of the 1,024-host 32-ary 2-tree. These are
// relations between runs, not times: the executor's and flow model's
// timing may change, the relations must hold.
//
//   - A ring allreduce sends one message across each leaf boundary at a
//     time, and D-mod-k gives each its own uplink (every leaf-boundary
//     message goes to a host d with d mod 16 = d mod 32 = 0, so up port 0
//     of its own leaf, down port 0 of the next): taking half the uplinks
//     away shares none of them. It may slow by a few percent at most; 5%
//     bounds what a change in how messages start could add.
//   - A pairwise alltoall of 128 KiB per pair (32 MiB per rank) sends 224
//     of its 255 steps' messages out of the leaf (7/8 of the bytes), all 32
//     of a leaf at once: on the full tree each has an uplink, on the 2:1
//     tree two share one (TestDmodkSpreadsOverRemainingUplinks), so those
//     steps take twice the bandwidth time. With latency negligible that
//     is 1 + 224/255 = 1.88x, and the bandwidth argument of 7/8 x 2 =
//     1.75x; no link carries more than twice the full tree's flows, so 2x
//     is the ceiling. A 128 KiB message is 10.5 us of 12.5 GB/s against
//     about 1.5 us of path latency, so latency holds it down to about
//     1.77x; 1.5 leaves room for per-message costs to double.
//   - Tapered by bandwidth instead (the same cut), every message across a
//     leaf goes at half speed, lone or not: the ring slows too. Of 16 MiB,
//     each step moves a 64 KiB chunk: 5.2 us at 12.5 GB/s, 10.5 us at half
//     that, on steps of about 9 us on the full tree; every step waits for
//     its leaf-boundary message, though part of the wait hides behind
//     the reduction (6.6 us of 64 KiB at 10 GB/s). We ask for 15%.
func TestTaperSlowsAlltoallNotRing(t *testing.T) {
	full, err := Builtin("fattree-1024")
	if err != nil {
		t.Fatal(err)
	}
	tapered, err := Load("examples/fattree-1024-tapered.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("examples/fattree-1024-tapered.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byBandwidth, err := Parse("bw.yaml", []byte(strings.Replace(string(data), "taper_mode: links", "taper_mode: bandwidth", 1)))
	if err != nil || !strings.Contains(byBandwidth.Topology.Name(), "by bandwidth") {
		t.Fatalf("bandwidth-tapered config: %v", err)
	}
	const ringCount = 1 << 22     // 16 MiB of 4-byte elements
	const alltoallCount = 1 << 15 // 128 KiB per pair
	ring := func(m *Machine) float64 {
		return simulate(t, m, collectives.Allreduce, "ring", ringCount).Seconds()
	}
	alltoall := func(m *Machine) float64 {
		return simulate(t, m, collectives.Alltoall, "pairwise", alltoallCount).Seconds()
	}
	ringFull, ringTapered, ringBandwidth := ring(full), ring(tapered), ring(byBandwidth)
	if r := ringTapered / ringFull; r > 1.05 {
		t.Errorf("ring allreduce: %g s on the 2:1 tree against %g s on the full one (%.3fx); want at most a few percent slower", ringTapered, ringFull, r)
	}
	if r := ringBandwidth / ringFull; r < 1.15 {
		t.Errorf("ring allreduce with uplinks at half bandwidth: %g s against %g s (%.3fx); want clearly slower", ringBandwidth, ringFull, r)
	}
	a2aFull, a2aTapered := alltoall(full), alltoall(tapered)
	if r := a2aTapered / a2aFull; r < 1.5 || r > 2 {
		t.Errorf("pairwise alltoall: %g s on the 2:1 tree against %g s on the full one (%.3fx); want about 1.75x (1.5..2)", a2aTapered, a2aFull, r)
	}
	// The alltoall loses far more than the ring: the point of tapering by
	// links rather than by bandwidth.
	if a2aTapered/a2aFull-1 < 10*math.Max(ringTapered/ringFull-1, 0.01) {
		t.Errorf("the alltoall slowed %.3fx and the ring %.3fx: want the alltoall's loss many times the ring's", a2aTapered/a2aFull, ringTapered/ringFull)
	}
}
