package topology

import (
	"fmt"
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
// and kept. Bisection: computed from the graph (see graphBisection), every
// link at its full bandwidth.
func Custom(hosts int, edges []Edge) (*Topology, error) {
	if hosts < 2 || hosts > maxCustomVertices {
		return nil, fmt.Errorf("custom graph: hosts must be 2..%d, not %d", maxCustomVertices, hosts)
	}
	if len(edges) > maxLinks/2 {
		return nil, fmt.Errorf("custom graph: %d edges is more than collsim builds (%d)", len(edges), maxLinks/2)
	}
	b := newBuilder(fmt.Sprintf("custom graph of %d hosts", hosts), hosts)
	ids := map[string]int32{}
	var firstEdge []int // per switch (vertex id - hosts): the first edge naming it
	vertexID := func(name string) (int32, error) {
		if id, ok := ids[name]; ok {
			return id, nil
		}
		if n, ok := strings.CutPrefix(name, "h"); ok {
			digits := strings.TrimLeft(n, "+-")
			if digits != "" && strings.Trim(digits, "0123456789") == "" {
				if h, err := strconv.Atoi(n); err == nil && strconv.Itoa(h) == n && h >= 0 {
					if h >= hosts {
						return 0, fmt.Errorf("host %s does not exist: the graph has hosts h0..h%d (raise hosts, or name a switch without the h<number> form)", name, hosts-1)
					}
					return int32(h), nil
				}
				// h01 was read as a switch named so, silently; h-1 as
				// host -1, a crash (new users' trials).
				return 0, fmt.Errorf("%s looks like a host, but hosts are named h0..h%d, with no sign or leading zeros; name a switch otherwise", name, hosts-1)
			}
		}
		if name == "" || strings.ContainsAny(name, " \t") {
			return 0, fmt.Errorf("vertex name %q must be one word", name)
		}
		if b.t.vertices >= maxCustomVertices {
			return 0, fmt.Errorf("more than %d vertices", maxCustomVertices)
		}
		ids[name] = b.vertex(name)
		firstEdge = append(firstEdge, -1)
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
				for _, v := range []int32{a, bv} {
					if sw := int(v) - hosts; sw >= 0 && firstEdge[sw] < 0 {
						firstEdge[sw] = i
					}
				}
			}
		}
		if err != nil {
			return nil, &EdgeError{Edge: i, Err: err}
		}
	}
	t := b.done(nil, cutFromGraph)
	inStart, inLinks := t.inAdjacency()
	for h := range hosts {
		if t.adjStart[h] == t.adjStart[h+1] {
			return nil, fmt.Errorf("custom graph: host h%d has no edge; join it to a switch or another host", h)
		}
	}
	if err := islandSwitch(t, hosts, firstEdge); err != nil {
		return nil, err
	}
	if err := t.connected(); err != nil {
		if joinedThroughHosts(hosts, b.t.vertices, t.links) {
			return nil, fmt.Errorf("%w without passing through another host, and hosts do not forward traffic; join them through a switch (any name not of the form h<number>)", err)
		}
		// A switch named in one edge only joins nothing: most likely a
		// misspelling (h1 S0 beside h0 s0), which the line of the last
		// such edge shows, where the graph's line did not (an audit).
		var once []string
		last := -1
		for v := int32(hosts); v < int32(t.vertices); v++ {
			if t.adjStart[v+1]-t.adjStart[v] == 1 {
				once = append(once, t.vertexOf[v])
				last = max(last, firstEdge[int(v)-hosts])
			}
		}
		if last >= 0 {
			what := "switch " + once[0] + " has only one edge, so it joins"
			if len(once) > 1 {
				what = "switches " + strings.Join(once, ", ") + " have only one edge each, so they join"
			}
			return nil, &EdgeError{Edge: last, Err: fmt.Errorf("%w; %s nothing: is a name misspelled?", err, what)}
		}
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
		return t.walkHops(src, dst, hopsTo(dst), nil, pickLowest, 0, path)
	}
	t.hashed = func(src, dst int32, h uint64, path []int32) []int32 {
		return t.walkHops(src, dst, hopsTo(dst), nil, pickHash, h, path)
	}
	return t, nil
}

// islandSwitch refuses a switch in a part of the graph that no host is
// in, at the first edge naming it: no message can cross it, and the graph
// is not connected, which the README promises is an error (an island such
// as "s9 s10", or a part behind a misspelled name, was accepted
// silently). A switch with one neighbour, useless too but harmless, is
// left alone: generated graphs have them.
func islandSwitch(t *Topology, hosts int, firstEdge []int) error {
	seen := make([]bool, t.vertices)
	queue := make([]int32, 0, t.vertices)
	for h := range hosts {
		seen[h] = true
		queue = append(queue, int32(h))
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, id := range t.adjLinks[t.adjStart[v]:t.adjStart[v+1]] {
			if w := t.links[id].To; !seen[w] {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	for v := int32(hosts); v < int32(t.vertices); v++ {
		if !seen[v] {
			return &EdgeError{Edge: firstEdge[int(v)-hosts], Err: fmt.Errorf("switch %s is in a part of the graph that no host is in, so no message can cross it: join that part to the rest, or correct a misspelled name (hosts are h0..h%d)", t.vertexOf[v], hosts-1)}
		}
	}
	return nil
}

// splitmix is one step of the SplitMix64 generator: a fresh, well-mixed
// choice at every hop from one flow hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// joinedThroughHosts reports whether the links join every host when hosts
// may forward: a graph that is connected only through hosts (a chain
// h0 h1, h1 h2) fails for that reason, which its error says.
func joinedThroughHosts(hosts, vertices int, links []Link) bool {
	parent := make([]int32, vertices)
	for v := range parent {
		parent[v] = int32(v)
	}
	var find func(v int32) int32
	find = func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for _, l := range links {
		parent[find(l.From)] = find(l.To)
	}
	for h := 1; h < hosts; h++ {
		if find(int32(h)) != find(0) {
			return false
		}
	}
	return true
}
