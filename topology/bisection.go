package topology

import "math"

// graphBisection is the bisection of a machine computed from its graph,
// the one rule for every topology without a closed form (custom graphs,
// fat-trees whose halves split a leaf switch, any machine with failed or
// degraded links): the smaller of the maximum flows from hosts
// 0..n/2-1 to the other hosts and back, over the links that have not
// failed, each at its bandwidth. Both ways, because a degraded link
// narrows one direction only.
func (t *Topology) graphBisection() float64 {
	split := t.hosts / 2
	first := func(h int32) bool { return int(h) < split }
	second := func(h int32) bool { return int(h) >= split }
	cut := min(t.maxFlow(first), t.maxFlow(second))
	for _, rank := range t.halves {
		cut = min(cut, t.maxFlow(func(h int32) bool { return rank(h) < split }), t.maxFlow(func(h int32) bool { return rank(h) >= split }))
	}
	return cut
}

// maxFlow returns the maximum flow, in bytes per second, from the hosts
// for which source is true to the other hosts over the links that have not
// failed (Edmonds-Karp: shortest augmenting paths on the residual graph).
// Passing through a host never raises it: a source host is fed without
// limit anyway, and a sink host drains without limit.
func (t *Topology) maxFlow(source func(h int32) bool) float64 {
	residual := make([]float64, 2*len(t.links)) // link l forward at 2l, its reverse at 2l+1
	for i, l := range t.links {
		if t.dead == nil || !t.dead[i] {
			residual[2*i] = l.Bandwidth
		}
	}
	inStart, inLinks := t.inAdjacency()
	via := make([]int32, t.vertices) // residual arc that reached each vertex
	queue := make([]int32, 0, t.vertices)
	total := 0.0
	for {
		for i := range via {
			via[i] = -1
		}
		queue = queue[:0]
		for h := range int32(t.hosts) {
			if source(h) {
				via[h] = -2 // a source
				queue = append(queue, h)
			}
		}
		sink := int32(-1)
		for len(queue) > 0 && sink < 0 {
			v := queue[0]
			queue = queue[1:]
			visit := func(arc int32, to int32) {
				if via[to] == -1 && residual[arc] > 1e-9*t.links[arc/2].Bandwidth {
					via[to] = arc
					queue = append(queue, to)
					if int(to) < t.hosts && sink < 0 {
						sink = to
					}
				}
			}
			for _, l := range t.adjLinks[t.adjStart[v]:t.adjStart[v+1]] {
				visit(2*l, t.links[l].To)
			}
			for _, l := range inLinks[inStart[v]:inStart[v+1]] {
				visit(2*l+1, t.links[l].From)
			}
		}
		if sink < 0 {
			return total
		}
		push := math.Inf(1)
		for v := sink; via[v] >= 0; v = t.tail(via[v]) {
			push = min(push, residual[via[v]])
		}
		for v := sink; via[v] >= 0; v = t.tail(via[v]) {
			residual[via[v]] -= push
			residual[via[v]^1] += push
		}
		total += push
	}
}

// tail is where residual arc (see maxFlow) starts.
func (t *Topology) tail(arc int32) int32 {
	if arc%2 == 0 {
		return t.links[arc/2].From
	}
	return t.links[arc/2].To
}
