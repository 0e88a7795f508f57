package topology

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// Edge is a cable of a custom graph between two named vertices: hosts are
// h0..h(hosts-1), any other name is a switch. It carries traffic both ways,
// each way with the full LinkSpec.
type Edge struct {
	A, B string
	LinkSpec
}

// EdgeError is a problem with one edge of a custom graph; Edge is its
// index in the list, so that a config can name its line.
type EdgeError struct {
	Edge int
	Err  error
}

// Error implements error.
func (e *EdgeError) Error() string { return fmt.Sprintf("edge %d: %v", e.Edge, e.Err) }

// Unwrap returns the problem without the edge's index.
func (e *EdgeError) Unwrap() error { return e.Err }

// maxCustomVertices bounds a custom graph: hop tables are uint16 per
// vertex and destination.
const maxCustomVertices = 1 << 15

// Custom builds a machine from an edge list. Routes are shortest paths in
// links (hosts never forward traffic): Route takes the lowest-numbered link
// among the equal next steps, RouteHashed lets a flow's hash pick among all
// of them at each step (ECMP over every equal-cost path). Distances to
// each destination are computed on first use, by a breadth-first search,
// and kept. Bisection: the maximum flow from hosts h0..h(n/2-1) to the
// other hosts; every link counts at its full bandwidth.
func Custom(hosts int, edges []Edge) (*Topology, error) {
	if hosts < 2 || hosts > maxCustomVertices {
		return nil, fmt.Errorf("custom graph: hosts must be 2..%d, not %d", maxCustomVertices, hosts)
	}
	if len(edges) > maxLinks/2 {
		return nil, fmt.Errorf("custom graph: %d edges is more than collsim builds (%d)", len(edges), maxLinks/2)
	}
	b := newBuilder(fmt.Sprintf("custom graph of %d hosts", hosts), hosts)
	ids := map[string]int32{}
	vertexID := func(name string) (int32, error) {
		if id, ok := ids[name]; ok {
			return id, nil
		}
		if n, ok := strings.CutPrefix(name, "h"); ok {
			if h, err := strconv.Atoi(n); err == nil && strconv.Itoa(h) == n {
				if h >= hosts {
					return 0, fmt.Errorf("host %s does not exist: the graph has hosts h0..h%d (raise hosts, or name a switch without the h<number> form)", name, hosts-1)
				}
				return int32(h), nil
			}
		}
		if name == "" || strings.ContainsAny(name, " \t") {
			return 0, fmt.Errorf("vertex name %q must be one word", name)
		}
		if b.t.vertices >= maxCustomVertices {
			return 0, fmt.Errorf("more than %d vertices", maxCustomVertices)
		}
		ids[name] = b.vertex(name)
		return ids[name], nil
	}
	for i, e := range edges {
		a, err := vertexID(e.A)
		if err == nil {
			var bv int32
			bv, err = vertexID(e.B)
			switch {
			case err != nil:
			case a == bv:
				err = fmt.Errorf("joins %s to itself", e.A)
			default:
				err = e.LinkSpec.check(e.A + " - " + e.B)
			}
			if err == nil {
				b.pair(a, bv, e.LinkSpec)
			}
		}
		if err != nil {
			return nil, &EdgeError{Edge: i, Err: err}
		}
	}
	t := b.done(nil, 0)
	inStart, inLinks := t.inAdjacency()
	for h := range hosts {
		if t.adjStart[h] == t.adjStart[h+1] {
			return nil, fmt.Errorf("custom graph: host h%d has no edge; join it to a switch or another host", h)
		}
	}
	if err := t.connected(); err != nil {
		return nil, fmt.Errorf("%w; add edges joining its parts", err)
	}
	tables := make([]atomic.Pointer[[]uint16], hosts)
	hopsTo := func(dst int32) []uint16 {
		if h := tables[dst].Load(); h != nil {
			return *h
		}
		h := t.hopsTo(dst, nil, inStart, inLinks)
		tables[dst].CompareAndSwap(nil, &h)
		return *tables[dst].Load()
	}
	t.route = func(src, dst int32, path []int32) []int32 {
		return t.walkHops(src, dst, hopsTo(dst), nil, false, 0, path)
	}
	t.hashed = func(src, dst int32, h uint64, path []int32) []int32 {
		return t.walkHops(src, dst, hopsTo(dst), nil, true, h, path)
	}
	t.bisection = t.maxFlow(hosts / 2)
	return t, nil
}

// splitmix is one step of the SplitMix64 generator: a fresh, well-mixed
// choice at every hop from one flow hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// maxFlow returns the maximum flow, in bytes per second, from hosts
// 0..split-1 to the other hosts over the links (Edmonds-Karp: shortest
// augmenting paths on the residual graph). Passing through a host never
// raises it: a source host is fed without limit anyway, and a sink host
// drains without limit.
func (t *Topology) maxFlow(split int) float64 {
	residual := make([]float64, 2*len(t.links)) // link l forward at 2l, its reverse at 2l+1
	for i, l := range t.links {
		residual[2*i] = l.Bandwidth
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
		for h := range split {
			via[h] = -2 // a source
			queue = append(queue, int32(h))
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
