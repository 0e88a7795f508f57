package collsim_test

import (
	"math"
	"testing"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

// The bound model's beta is what a rank moves at most, its own link's 450
// GB/s on gpu-cluster, not the node NIC's 50 GB/s of the slowest route;
// and no allreduce, simulated on either network, beats the bound it gives
// (an audit: rabenseifner took 23.7 us analytic and hierarchical 32.2 us
// on the flow network for 1 MiB on 16 ranks, against a "bound" of 42.8).
func TestLowerModelIsABound(t *testing.T) {
	m, err := configs.Resolve("gpu-cluster")
	if err != nil {
		t.Fatal(err)
	}
	place, err := m.Place(16, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	lower := collsim.NewPricing(m, place, 1).Lower
	if got, want := 1/lower.Beta, 450e9; got != want {
		t.Errorf("the bound's bandwidth %g B/s, want %g", got, want)
	}
	// cori, 64 ranks on 2 hosts of 32: a rank moves at most through its
	// host's 10 GB/s link and the 20 GB/s shared memory at once, 30 GB/s,
	// and the least latency is shared memory's 300 ns (between hosts,
	// 500 ns out and 500 ns in).
	cori, err := configs.Resolve("cori")
	if err != nil {
		t.Fatal(err)
	}
	corePlace, err := cori.Place(64, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := collsim.NewPricing(cori, corePlace, 1).Lower; math.Abs(1/c.Beta-30e9) > 1 || math.Abs(c.Alpha-300e-9) > 1e-15 {
		t.Errorf("cori: the bound's bandwidth %g B/s and latency %g s, want 30e9 and 300e-9", 1/c.Beta, c.Alpha)
	}
	for _, size := range []int64{1 << 20, 64 << 20} {
		params, err := collsim.Call(collectives.Allreduce, 16, size, 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := lower.LowerBound(collectives.Allreduce, params)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range collectives.All() {
			if a.Collective != collectives.Allreduce {
				continue
			}
			for _, net := range []string{collsim.Analytic, collsim.Flow} {
				r, err := (&collsim.Experiment{Machine: m, Algorithm: a.Name, Ranks: 16, Size: size, Network: net, Verify: collsim.VerifyOff}).Run()
				if err != nil {
					continue // the algorithm refuses the call (power-of-two-only variants)
				}
				if r.Time < b.Time*(1-1e-9) {
					t.Errorf("%s of %d B on the %s network: %.4g s, below the bound %.4g s", a.Name, size, net, r.Time, b.Time)
				}
			}
		}
	}
}
