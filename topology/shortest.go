package topology

import "slices"

// unreached marks a vertex with no path in a hop table.
const unreached = ^uint16(0)

// inAdjacency returns the links into each vertex in CSR form: the links
// into v are inLinks[inStart[v]:inStart[v+1]], in ID order.
func (t *Topology) inAdjacency() (inStart, inLinks []int32) {
	inStart = make([]int32, t.vertices+1)
	for _, l := range t.links {
		inStart[l.To+1]++
	}
	for v := range t.vertices {
		inStart[v+1] += inStart[v]
	}
	inLinks = make([]int32, len(t.links))
	fill := slices.Clone(inStart[:t.vertices])
	for id, l := range t.links {
		inLinks[fill[l.To]] = int32(id)
		fill[l.To]++
	}
	return inStart, inLinks
}

// hopsTo returns every vertex's fewest links to host dst, avoiding dead
// links (nil: none dead), or unreached. Hosts other than dst are ends, not
// transit points: they get a distance but lead nowhere. The search runs
// backwards from dst over inStart/inLinks (see inAdjacency).
func (t *Topology) hopsTo(dst int32, dead []bool, inStart, inLinks []int32) []uint16 {
	hops := make([]uint16, t.vertices)
	for i := range hops {
		hops[i] = unreached
	}
	hops[dst] = 0
	queue := make([]int32, 1, 64)
	queue[0] = dst
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if int(v) < t.hosts && v != dst {
			continue
		}
		for _, l := range inLinks[inStart[v]:inStart[v+1]] {
			if from := t.links[l].From; (dead == nil || !dead[l]) && hops[from] == unreached {
				hops[from] = hops[v] + 1
				queue = append(queue, from)
			}
		}
	}
	return hops
}

// How walkHops chooses among the equal next links at each step.
type pick uint8

const (
	// pickLowest takes the lowest-numbered link.
	pickLowest pick = iota
	// pickSpread takes link key mod n of the n candidates, then goes on
	// with key / n: D-mod-k generalized to any graph. With key = dst
	// every destination keeps one path, and destinations spread evenly
	// over the candidates (on a full fat-tree it picks exactly D-mod-k's
	// ports, digit by digit).
	pickSpread
	// pickHash takes the one a fresh SplitMix64 step of key picks (ECMP:
	// one flow hash, an independent choice per hop).
	pickHash
)

// walkHops appends to path a fewest-links route from host src to host dst
// that follows hops (from hopsTo with the same dead links) and returns it,
// or nil if dst is unreachable. Among the next links that stay on a
// shortest path it chooses as how says, from key.
func (t *Topology) walkHops(src, dst int32, hops []uint16, dead []bool, how pick, key uint64, path []int32) []int32 {
	if hops[src] == unreached {
		return nil
	}
	var next [64]int32
	for v := src; v != dst; {
		cands := next[:0]
		for _, l := range t.adjLinks[t.adjStart[v]:t.adjStart[v+1]] {
			to := t.links[l].To
			if (dead == nil || !dead[l]) && hops[to] == hops[v]-1 && (int(to) >= t.hosts || to == dst) {
				cands = append(cands, l)
			}
		}
		i := 0
		switch n := uint64(len(cands)); how {
		case pickSpread:
			i, key = int(key%n), key/n
		case pickHash:
			key = splitmix(key)
			i = int(key % n)
		}
		l := cands[i]
		path = append(path, l)
		v = t.links[l].To
	}
	return path
}
