package collsim_test

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/collsim/collsim"
	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/configs"
)

// Every algorithm moves the right data on every network, not only on the
// latency-only networks the collectives' own property tests use (an
// audit found no data check on the flow network beyond a few spot runs,
// and few on LogGOPS): random calls on the analytic, flow and LogGOPS
// networks of machines with routes alike and unlike (a crossbar, a
// dragonfly under minimal, Valiant and UGAL routing, GPU nodes on a
// fat-tree), any element size to 16 bytes, counts of 0, 1, not divisible
// by the ranks, and large enough for several 64 KiB segments and
// rendezvous, any root, with data checked on every rank. A wrong result
// (a CheckError) fails; a call the algorithm refuses is drawn again.
func TestDataOnEveryNetworkProperty(t *testing.T) {
	var algos []collectives.Algorithm
	for _, a := range collectives.All() {
		algos = append(algos, a)
	}
	machines := map[string]*configs.Machine{}
	for _, name := range []string{"small", "dragonfly-72", "gpu-cluster"} {
		m, err := configs.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		machines[name] = m
	}
	checked, refusedCalls := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.SampledFrom(algos).Draw(rt, "algorithm")
		name := rapid.SampledFrom([]string{"small", "dragonfly-72", "gpu-cluster"}).Draw(rt, "machine")
		net := rapid.SampledFrom([]string{collsim.Analytic, collsim.Flow, collsim.LogGOPS}).Draw(rt, "network")
		ranks := rapid.IntRange(1, 24).Draw(rt, "ranks")
		elem := rapid.SampledFrom([]int64{1, 2, 3, 4, 8, 12, 16}).Draw(rt, "elem")
		count := rapid.SampledFrom([]int64{0, 1, int64(ranks) - 1, int64(ranks) + 1, 3*int64(ranks) + 1, 9001}).Draw(rt, "count")
		e := collsim.Experiment{Collective: a.Collective, Algorithm: a.Name, Ranks: ranks, Size: count * elem, ElemSize: elem,
			Network: net, Verify: collsim.VerifyOn, Seed: rapid.Uint64Range(1, 1<<20).Draw(rt, "seed")}
		if collectives.Rooted(a.Collective) {
			e.Root = rapid.IntRange(0, ranks-1).Draw(rt, "root")
		}
		if net != collsim.LogGOPS {
			e.Machine = machines[name]
			if net == collsim.Flow && name == "dragonfly-72" {
				e.Routing = rapid.SampledFrom([]string{"", "valiant", "ugal"}).Draw(rt, "routing")
			}
		}
		r, err := e.Run()
		var wrong *collsim.CheckError
		if errors.As(err, &wrong) {
			rt.Fatalf("%s on %d ranks of %s, %s network: %v", a.ID(), ranks, name, net, err)
		}
		if err != nil {
			refusedCalls++
			rt.Skip(err.Error()) // a call the algorithm or the machine refuses
		}
		if r.DataVerified == nil || !*r.DataVerified {
			rt.Fatalf("%s on %d ranks of %s, %s network: the data was not checked", a.ID(), ranks, name, net)
		}
		checked++
	})
	t.Logf("%d calls checked, %d refused", checked, refusedCalls)
	if checked < refusedCalls {
		t.Errorf("more calls refused (%d) than checked (%d): the draws test little", refusedCalls, checked)
	}
}
