package topology

import (
	"fmt"
	"slices"
	"sync"
)

// WithoutLinks returns a copy of t in which the given links have failed.
// Routes that crossed one are replaced by a shortest path (fewest hops, ties
// broken by the lowest link IDs at each step, so deterministically) that avoids every
// failed link; other routes are unchanged. If the failures cut some host
// off from another, it returns an error naming them: collsim cannot route
// around that. The copy cannot detour (Groups is 0) or hash (Hashes is
// false): Valiant, UGAL and ECMP routing do not know the failures.
func (t *Topology) WithoutLinks(failed []int) (*Topology, error) {
	dead := make([]bool, len(t.links))
	for _, l := range failed {
		if l < 0 || l >= len(t.links) {
			return nil, fmt.Errorf("no link %d in %s", l, t.name)
		}
		dead[l] = true
	}
	if from, to, ok := t.cut(dead); ok {
		return nil, fmt.Errorf("with those links failed, host %s cannot reach host %s in %s: nothing to route around them with", t.vertexOf[from], t.vertexOf[to], t.name)
	}
	c := *t
	c.groups, c.via, c.hashed = 0, nil, nil
	inStart, inLinks := t.inAdjacency()
	var mu sync.Mutex
	detours := map[[2]int32][]int32{}
	base := t.route
	c.route = func(src, dst int32, path []int32) []int32 {
		start := len(path)
		path = base(src, dst, path)
		if !slices.ContainsFunc(path[start:], func(l int32) bool { return dead[l] }) {
			return path
		}
		mu.Lock()
		defer mu.Unlock()
		d, ok := detours[[2]int32{src, dst}]
		if !ok {
			d = t.walkHops(src, dst, t.hopsTo(dst, dead, inStart, inLinks), dead, false, 0, nil)
			detours[[2]int32{src, dst}] = d
		}
		return append(path[:start], d...)
	}
	return &c, nil
}

// cut reports two hosts that the dead links separate, if any: whether
// every host reaches host 0 and host 0 reaches every host, without dead
// links and without passing through other hosts.
func (t *Topology) cut(dead []bool) (from, to int32, ok bool) {
	inStart, inLinks := t.inAdjacency()
	reach := func(forward bool) []bool {
		seen := make([]bool, t.vertices)
		seen[0] = true
		queue := []int32{0}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			if int(v) < t.hosts && v != 0 {
				continue // hosts are ends, not transit points
			}
			links := t.adjLinks[t.adjStart[v]:t.adjStart[v+1]]
			if !forward {
				links = inLinks[inStart[v]:inStart[v+1]]
			}
			for _, l := range links {
				next := t.links[l].To
				if !forward {
					next = t.links[l].From
				}
				if !dead[l] && !seen[next] {
					seen[next] = true
					queue = append(queue, next)
				}
			}
		}
		return seen
	}
	out, in := reach(true), reach(false)
	for h := int32(1); int(h) < t.hosts; h++ {
		switch {
		case !out[h]:
			return 0, h, true
		case !in[h]:
			return h, 0, true
		}
	}
	return 0, 0, false
}
