package redist_test

import (
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
	}
}
