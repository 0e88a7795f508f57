package topology

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/encoding"
	"gonum.org/v1/gonum/graph/encoding/dot"
	"gonum.org/v1/gonum/graph/simple"
)

// vertex is a gonum node that knows its label and kind, for DOT export.
type vertex struct {
	id    int64
	label string
	host  bool
}

func (v vertex) ID() int64     { return v.id }
func (v vertex) DOTID() string { return v.label }
func (v vertex) Attributes() []encoding.Attribute {
	if v.host {
		return []encoding.Attribute{{Key: "shape", Value: "box"}}
	}
	return []encoding.Attribute{{Key: "shape", Value: "ellipse"}}
}

// bwEdge is a gonum edge labelled with its bandwidth.
type bwEdge struct {
	graph.Edge
	label string
}

func (e bwEdge) Attributes() []encoding.Attribute {
	return []encoding.Attribute{{Key: "label", Value: e.label}}
}

// Graph returns the topology as a gonum directed graph: one edge per
// ordered pair of vertices with links that have not failed. Parallel links
// (a dragonfly's several global links between two routers, a cable given
// twice) are one edge labelled with their count and bandwidths, "2 x
// 4.7GB/s": labelled with one link's bandwidth, the picture showed half
// the capacity that is simulated (an audit).
func (t *Topology) Graph() *simple.DirectedGraph {
	g := simple.NewDirectedGraph()
	for v := range t.vertices {
		g.AddNode(vertex{id: int64(v), label: t.vertexOf[v], host: v < t.hosts})
	}
	type pair struct{ from, to int32 }
	bws := map[pair][]float64{}
	var order []pair
	for id, l := range t.links {
		if l.From == l.To || t.dead != nil && t.dead[id] {
			continue
		}
		k := pair{int32(l.From), int32(l.To)}
		if _, ok := bws[k]; !ok {
			order = append(order, k)
		}
		bws[k] = append(bws[k], l.Bandwidth)
	}
	for _, k := range order {
		g.SetEdge(bwEdge{Edge: simple.Edge{F: g.Node(int64(k.from)), T: g.Node(int64(k.to))}, label: parallelLabel(bws[k])})
	}
	return g
}

// parallelLabel writes the bandwidths of the links between two vertices:
// "4.7GB/s" for one, "2 x 4.7GB/s" for equal ones, else each.
func parallelLabel(bws []float64) string {
	one := func(b float64) string { return fmt.Sprintf("%.4gGB/s", b/1e9) }
	equal := true
	for _, b := range bws[1:] {
		equal = equal && b == bws[0]
	}
	switch {
	case len(bws) == 1:
		return one(bws[0])
	case equal:
		return fmt.Sprintf("%d x %s", len(bws), one(bws[0]))
	}
	parts := make([]string, len(bws))
	for i, b := range bws {
		parts[i] = one(b)
	}
	return strings.Join(parts, " + ")
}

// DOT returns the topology in Graphviz DOT form.
func (t *Topology) DOT() ([]byte, error) {
	return dot.Marshal(t.Graph(), t.name, "", "  ")
}

// connected reports an error unless every host can reach every other
// without passing through a third host (a linear search over the links,
// so that a million-host machine checks in well under a second).
func (t *Topology) connected() error {
	if from, to, cut := t.cut(make([]bool, len(t.links))); cut {
		return fmt.Errorf("%s: not connected: host %s cannot reach host %s", t.name, t.vertexOf[from], t.vertexOf[to])
	}
	return nil
}

// Diameter returns the largest number of links on a shortest path between
// two hosts over the links that have not failed, paths that pass through
// another host left out, as routes are: the builder's closed form where it
// has one and no link has failed, else a breadth-first search over the
// frozen adjacency (hosts that hang off the same vertex share one search).
func (t *Topology) Diameter() int {
	if t.diameter > 0 && t.dead == nil {
		return t.diameter
	}
	return t.searchDiameter()
}

// searchDiameter is Diameter by breadth-first search from every host.
func (t *Topology) searchDiameter() int {
	dist := make([]int32, t.vertices)
	queue := make([]int32, 0, t.vertices)
	done := map[int32]int{}
	diameter := 0
	for h := range t.hosts {
		links := t.adjLinks[t.adjStart[h]:t.adjStart[h+1]]
		if len(links) == 1 {
			if d, ok := done[t.links[links[0]].To]; ok {
				diameter = max(diameter, d)
				continue
			}
		}
		for i := range dist {
			dist[i] = -1
		}
		dist[h] = 0
		queue = append(queue[:0], int32(h))
		far := 0
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			if int(v) < t.hosts {
				far = max(far, int(dist[v]))
				if int(v) != h {
					continue // routes do not pass through a host (an audit: h0-h1-h2 read 2 where the route is 4 links)
				}
			}
			for _, id := range t.adjLinks[t.adjStart[v]:t.adjStart[v+1]] {
				if w := t.links[id].To; dist[w] < 0 && (t.dead == nil || !t.dead[id]) {
					dist[w] = dist[v] + 1
					queue = append(queue, w)
				}
			}
		}
		if len(links) == 1 {
			done[t.links[links[0]].To] = far
		}
		diameter = max(diameter, far)
	}
	return diameter
}
