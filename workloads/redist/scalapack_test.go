package redist_test

import (
	"slices"
	"testing"

	"github.com/collsim/collsim/sim"
	"github.com/collsim/collsim/workloads/redist"
)

// ScaLAPACK's steps as Cpdgemr2d orders them (REDIST/SRC/pdgemr.c, its
// loop over sens): both ranks of a step pack first, then the lower sends
// and the higher receives, then the other way round, and each unpacks;
// a rank's step with itself packs, copies the buffer (Clacpy) and
// unpacks. Two ranks swap their tiles (2000 x 1 elements of 8 bytes in
// tiles of 1000 rows, each rank's owner the other in the target): a pack
// or unpack of 8000 bytes at 8 GB/s is P = 1 us and a message D = 10 us
// (fixed latency, eager), so the lower rank finishes at P + 2D + P = 22
// us, the higher at P + D + P = 12 us. (With the higher rank sending
// first, the lower rank unpacked before it packed: 4P + 2D = 24 us.) One
// rank keeping its 8000 bytes takes 3P = 3 us.
func TestScalapackStepsByHand(t *testing.T) {
	for _, c := range []struct {
		name     string
		ranks, m int
		from, to redist.Layout
		want     sim.Time
	}{
		{"swap", 2, 2000, redist.Layout{MB: 1000, NB: 1, P: 2, Q: 1}, redist.Layout{MB: 1000, NB: 1, Owners: []int32{1, 0}}, 22 * sim.Microsecond},
		{"local", 1, 1000, redist.Layout{MB: 1000, NB: 1, P: 1, Q: 1}, redist.Layout{MB: 500, NB: 1, P: 1, Q: 1}, 3 * sim.Microsecond},
	} {
		j := &redist.Job{M: c.m, N: 1, Elem: 8, From: c.from, To: c.to, Ranks: c.ranks,
			Schedule: "scalapack", Messages: "pair", CopyRate: 8e9}
		comp, err := j.Composition()
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Execute(sim.New(1), comp.Schedule(), sim.Config{Network: sim.FixedLatency(10 * sim.Microsecond), Host: sim.HostParams{EagerLimit: 1 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Makespan != c.want {
			t.Errorf("%s: %v, want %v", c.name, res.Makespan, c.want)
		}
		// The swap's makespan is the same whichever rank sends first: the
		// lower one (rank 0) is the one that ends at 22 us.
		if c.name == "swap" && (res.Finish[0] != 22*sim.Microsecond || res.Finish[1] != 12*sim.Microsecond) {
			t.Errorf("swap: ranks finish at %v, want rank 0 (sending first) at 22us and rank 1 at 12us", res.Finish)
		}
	}
}

// PxGEMR2D pairs the ranks of the larger grid (init_chenille's tot), not
// the job's: with 3 x 1 grid rows (row r on rank r) going to 1 x 3 grid
// columns (column j on rank j) and a fourth rank in neither, step k
// pairs rank 1 with (3-1-1-k) mod 3: itself, then rank 0, then rank 2, so
// it sends to 0 and then to 2 (paired over 4 ranks it met 2 first);
// rank 3 has nothing to do.
func TestScalapackPairsTheGridsRanks(t *testing.T) {
	from, to := redist.Layout{MB: 1, NB: 3, P: 3, Q: 1}, redist.Layout{MB: 3, NB: 1, P: 1, Q: 3}
	if sends, idle := scalapackPeers(t, 3, from, to, 1, sim.OpSend); !slices.Equal(sends, []int32{0, 2}) || idle != 0 {
		t.Errorf("rank 1 sends to %v, want [0 2]; rank 3 has %d ops, want none", sends, idle)
	}
}

// The larger layout's ranks, not the smaller's: 2 x 1 grid rows (row r
// on rank r) to 1 x 3 grid columns (column j on rank j), 4 ranks in the
// job. PxGEMR2D pairs tot = 3 ranks: rank 2, which only receives, takes
// row 0's and row 1's pieces of its column, from rank 0 and then rank 1
// (its partners (3-1-2-k) mod 3: 0, then 2 itself, then 1); rank 3 does
// nothing.
func TestScalapackPairsTheLargerGrid(t *testing.T) {
	from, to := redist.Layout{MB: 1, NB: 3, P: 2, Q: 1}, redist.Layout{MB: 2, NB: 1, P: 1, Q: 3}
	if recvs, idle := scalapackPeers(t, 2, from, to, 2, sim.OpRecv); !slices.Equal(recvs, []int32{0, 1}) || idle != 0 {
		t.Errorf("rank 2 receives from %v, want [0 1]; rank 3 has %d ops, want none", recvs, idle)
	}
}

// scalapackPeers redistributes an m x 3 matrix of 8-byte elements from
// one layout to another on 4 ranks by the scalapack schedule, and returns
// the peers of rank r's ops of one kind, in program order, and how many
// ops rank 3 has.
func scalapackPeers(t *testing.T, m int, from, to redist.Layout, r int, kind sim.OpKind) ([]int32, int) {
	t.Helper()
	j := &redist.Job{M: m, N: 3, Elem: 8, From: from, To: to, Ranks: 4, Schedule: "scalapack", Messages: "pair", CopyRate: 8e9}
	comp, err := j.Composition()
	if err != nil {
		t.Fatal(err)
	}
	progs := sim.Materialize(comp.Schedule())
	var peers []int32
	for _, op := range progs[r] {
		if op.Kind == kind {
			peers = append(peers, op.Peer)
		}
	}
	return peers, len(progs[3])
}
