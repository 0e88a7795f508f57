package topology

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// WithoutLinks returns a copy of t in which the given links (and any that
// had already failed in t) have failed. A route that crossed a failed link
// is replaced by a fewest-hop path that avoids every failed link; other
// routes are unchanged. Among the equal fewest-hop ways on, a detour takes
// the one that spreads destinations as D-mod-k does (candidate dst mod n at
// the first choice, then the quotient at the next: see pickSpread), so the
// routes that used a failed uplink spread over the surviving ones instead
// of all taking the same one; every route stays deterministic. Where t
// hashes (RouteHashed: ECMP on a fat-tree or a custom graph), so does the
// copy: a hashed route that crossed a failed link is replaced by a
// fewest-hop path whose next hop the flow's hash picks among the surviving
// equal ones at every step, as switches rehash the flows of a dead port
// over the ports left in its group.
//
// If the failures cut some host off from another, it returns an error
// naming them: collsim cannot route around that. The copy cannot detour
// (Groups is 0): Valiant and UGAL routing do not know the failures. Its
// Bisection is computed from the graph without the failed links.
func (t *Topology) WithoutLinks(failed []int) (*Topology, error) {
	dead := make([]bool, len(t.links))
	if t.dead != nil {
		copy(dead, t.dead)
	}
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
	c.groups, c.via = 0, nil
	c.dead = dead
	c.graphCut = &graphCut{}
	hops := c.hopTables()
	crosses := func(path []int32) bool { return slices.ContainsFunc(path, func(l int32) bool { return dead[l] }) }
	// t's routes already avoid t's own failed links, so only the new
	// ones can make a route of t's detour.
	base, baseHashed := t.route, t.hashed
	c.route = func(src, dst int32, path []int32) []int32 {
		start := len(path)
		if path = base(src, dst, path); !crosses(path[start:]) {
			return path
		}
		return c.walkHops(src, dst, hops(dst), dead, pickSpread, uint64(dst), path[:start])
	}
	if baseHashed != nil {
		c.hashed = func(src, dst int32, h uint64, path []int32) []int32 {
			start := len(path)
			if path = baseHashed(src, dst, h, path); !crosses(path[start:]) {
				return path
			}
			return c.walkHops(src, dst, hops(dst), dead, pickHash, h, path[:start])
		}
	}
	return &c, nil
}

// hopTableBudget bounds the bytes of hop tables a topology with failed
// links keeps: beyond it, a table is computed again on each use (slower,
// the same routes).
const hopTableBudget = 128 << 20

// hopTables returns a function giving the hop table to each host (hopsTo,
// avoiding t's failed links), computed on first use and kept while they
// fit in hopTableBudget. It is safe for concurrent use.
func (t *Topology) hopTables() func(dst int32) []uint16 {
	inStart, inLinks := t.inAdjacency()
	tables := make([]atomic.Pointer[[]uint16], t.hosts)
	var kept atomic.Int64
	return func(dst int32) []uint16 {
		if h := tables[dst].Load(); h != nil {
			return *h
		}
		h := t.hopsTo(dst, t.dead, inStart, inLinks)
		if kept.Add(int64(2*len(h))) <= hopTableBudget {
			tables[dst].CompareAndSwap(nil, &h)
		}
		return h
	}
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
