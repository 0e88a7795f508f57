package topology

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Placement policies: which host each rank runs on.
const (
	PlaceBlock      = "block"       // ranks fill host 0's slots, then host 1's, ...
	PlaceRoundRobin = "round_robin" // rank r on host r mod hosts
	PlaceRandom     = "random"      // a seeded random choice of slots
)

// Placements lists the placement policies.
var Placements = []string{PlaceBlock, PlaceRoundRobin, PlaceRandom}

// Place returns the host of every rank under policy, for hosts hosts with
// slots ranks each. Random placement is a seeded permutation: the same seed
// always gives the same placement.
func Place(policy string, ranks, hosts, slots int, seed uint64) ([]int32, error) {
	if slots < 1 {
		return nil, fmt.Errorf("placement: slots per host must be at least 1, not %d", slots)
	}
	if ranks < 1 {
		return nil, fmt.Errorf("placement: need at least 1 rank, not %d", ranks)
	}
	if ranks > hosts*slots {
		return nil, fmt.Errorf("placement: %d ranks do not fit on %d hosts with %d slots each (%d); use fewer ranks, a larger machine or more ranks per host",
			ranks, hosts, slots, hosts*slots)
	}
	place := make([]int32, ranks)
	switch policy {
	case PlaceBlock, "":
		for r := range place {
			place[r] = int32(r / slots)
		}
	case PlaceRoundRobin:
		for r := range place {
			place[r] = int32(r % hosts)
		}
	case PlaceRandom:
		rng := rand.New(rand.NewPCG(seed, 0x91ace))
		// A partial Fisher-Yates shuffle of the slots: O(ranks) draws.
		slotsOf := map[int]int{}
		total := hosts * slots
		for r := range place {
			j := r + rng.IntN(total-r)
			vj, ok := slotsOf[j]
			if !ok {
				vj = j
			}
			vr, ok := slotsOf[r]
			if !ok {
				vr = r
			}
			slotsOf[j] = vr
			place[r] = int32(vj / slots)
		}
	default:
		return nil, fmt.Errorf("placement: unknown policy %q; valid: %s", policy, strings.Join(Placements, ", "))
	}
	return place, nil
}
