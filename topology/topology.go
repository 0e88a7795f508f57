package topology

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Kind tells hosts from switches.
type Kind uint8

// Vertex kinds.
const (
	Host   Kind = iota // an endpoint where ranks run (a node, a GPU, a core)
	Switch             // a switch, router, NIC or intra-node fabric
)

// LinkSpec is the bandwidth and latency of a link.
type LinkSpec struct {
	Bandwidth float64 // bytes per second, > 0
	Latency   float64 // seconds, >= 0
}

func (l LinkSpec) check(what string) error {
	if !(l.Bandwidth > 0) || math.IsInf(l.Bandwidth, 0) {
		return fmt.Errorf("%s: bandwidth must be positive and finite, not %g B/s", what, l.Bandwidth)
	}
	if !(l.Latency >= 0) || math.IsInf(l.Latency, 0) {
		return fmt.Errorf("%s: latency must be zero or positive, not %gs", what, l.Latency)
	}
	return nil
}

// Limits on what a builder makes, so that a typo in a config cannot ask
// for gigabytes.
const (
	maxHosts = MaxHosts
	maxLinks = 1 << 25
)

// Link is a directed link between two vertices.
type Link struct {
	From, To int32
	LinkSpec
}

// router computes the links of the route from host src to host dst,
// appending their IDs to path.
type router func(src, dst int32, path []int32) []int32

// Topology is a machine: vertices 0..Hosts()-1 are hosts, the rest
// switches, joined by directed links. It is immutable once built.
type Topology struct {
	name      string
	hosts     int
	vertices  int
	vertexOf  []string // label of each vertex, for export
	links     []Link
	route     router
	bisection float64
	// diameter, when above 0, is the builder's closed form for Diameter
	// while no link has failed (a search from every host took 13 s on a
	// 128x128 torus and did not end on 256x256: an audit).
	diameter int
	// halves, when not nil, rank the hosts in the orders whose first
	// halves the graph's bisection tries besides the hosts' numbering (a
	// torus's cuts across each dimension: the first half by number cuts
	// across the last dimension only); each ranks the hosts 0..hosts-1.
	halves []func(h int32) int
	// graphCut, when not nil, holds the bisection computed from the graph
	// on first use (see graphBisection) in place of bisection: for
	// builders without a closed form, and for copies with failed or
	// degraded links, where the builder's formula no longer holds.
	graphCut *graphCut
	// dead marks the links that have failed (nil: none); see WithoutLinks.
	dead []bool
	// slowed lists the links running below their bandwidth (Degraded),
	// in the order they were degraded, each once; slowedFrom holds their
	// bandwidths before.
	slowed     []int
	slowedFrom []float64
	adjStart   []int32 // CSR adjacency: links out of v are adjLinks[adjStart[v]:adjStart[v+1]]
	adjLinks   []int32
	// Groups of hosts that non-minimal routing can detour through
	// (Dragonfly groups); 0 when the topology has none.
	groups, hostsPerGroup int
	via                   func(src, dst int32, group int, path []int32) []int32
	// noGroups says why a topology built on a network with groups has
	// none (GroupsLost).
	noGroups string
	// hashed routes along one of several equal shortest paths chosen by
	// a hash (ECMP); nil where the topology has one route per pair.
	hashed func(src, dst int32, h uint64, path []int32) []int32
}

// Name describes the topology, for example "fat-tree k=32 n=2".
func (t *Topology) Name() string { return t.name }

// Hosts returns the number of hosts.
func (t *Topology) Hosts() int { return t.hosts }

// Vertices returns the number of hosts plus switches.
func (t *Topology) Vertices() int { return t.vertices }

// Switches returns the number of non-host vertices.
func (t *Topology) Switches() int { return t.vertices - t.hosts }

// Links returns the directed links; a link's ID is its index.
func (t *Topology) Links() []Link { return t.links }

// Label returns a vertex's name, for example "h12" or "r3.5".
func (t *Topology) Label(v int32) string { return t.vertexOf[v] }

// Route appends to path the IDs of the links from host src to host dst, in
// order, and returns it. The route from a host to itself is empty.
func (t *Topology) Route(src, dst int, path []int32) []int32 {
	if src == dst {
		return path
	}
	return t.route(int32(src), int32(dst), path)
}

// LinkNamed returns the ID of the link from the vertex labelled from to the
// one labelled to ("h3", "s0.1", "r2.5").
func (t *Topology) LinkNamed(from, to string) (int, bool) {
	for i, l := range t.links {
		if t.vertexOf[l.From] == from && t.vertexOf[l.To] == to {
			return i, true
		}
	}
	return 0, false
}

// Degraded returns a copy of t whose link has factor (0 < factor <= 1) of
// its bandwidth: a link running at reduced speed. The factor is of the
// link's own bandwidth, so a link degraded again takes the new factor in
// place of the old, as a what-if on a machine that already has it slow
// asks. Routes are unchanged; the copy's Bisection is computed from its
// graph, so a degraded link in the cut lowers it.
func (t *Topology) Degraded(link int, factor float64) (*Topology, error) {
	if link < 0 || link >= len(t.links) {
		return nil, fmt.Errorf("no link %d in %s", link, t.name)
	}
	if !(factor > 0 && factor <= 1) {
		return nil, fmt.Errorf("a degraded link keeps a fraction of its bandwidth in (0, 1], not %g", factor)
	}
	c := *t
	c.links = slices.Clone(t.links)
	own := t.links[link].Bandwidth
	if i := slices.Index(t.slowed, link); i >= 0 {
		own = t.slowedFrom[i]
	} else {
		c.slowed = append(slices.Clip(t.slowed), link)
		c.slowedFrom = append(slices.Clip(t.slowedFrom), own)
	}
	c.links[link].Bandwidth = own * factor
	c.graphCut = &graphCut{}
	return &c, nil
}

// DegradedLinks returns the IDs of the links running below their
// bandwidth (see Degraded), in the order they were degraded.
func (t *Topology) DegradedLinks() []int { return slices.Clone(t.slowed) }

// Hashes reports whether RouteHashed can choose among equal paths.
func (t *Topology) Hashes() bool { return t.hashed != nil }

// RouteHashed appends to path one of the shortest routes from host src to
// host dst, chosen by h (equal-cost multi-path: a flow's hash picks its
// path). On a topology that does not Hash it is Route.
func (t *Topology) RouteHashed(src, dst int, h uint64, path []int32) []int32 {
	if src == dst {
		return path
	}
	if t.hashed == nil {
		return t.route(int32(src), int32(dst), path)
	}
	return t.hashed(int32(src), int32(dst), h, path)
}

// Groups returns the number of groups a route can detour through (Valiant
// routing on a Dragonfly), or 0 when the topology has no such groups.
func (t *Topology) Groups() int { return t.groups }

// GroupsLost says why the topology has no groups though the network it
// was built on has (nodes of several rails, whose NICs lie in different
// groups), or "".
func (t *Topology) GroupsLost() string { return t.noGroups }

// GroupOf returns the group of host h (see Groups).
func (t *Topology) GroupOf(h int) int { return h / t.hostsPerGroup }

// RouteVia appends to path the links from host src to host dst through
// group g (Valiant's detour: minimally to g, then minimally on); through
// src's or dst's own group it is the minimal route. It panics on a
// topology without groups: check Groups first.
func (t *Topology) RouteVia(src, dst, g int, path []int32) []int32 {
	if src == dst {
		return path
	}
	if t.via == nil || g < 0 || g >= t.groups {
		panic(fmt.Sprintf("topology %s: no route via group %d", t.name, g))
	}
	return t.via(int32(src), int32(dst), g, path)
}

// Bisection returns the bandwidth, in bytes per second in each direction,
// of the topology's natural balanced cut (half the hosts on each side, cut
// where the builder's structure says it is narrowest; the builder documents
// which cut). A builder without a closed form for its machine, and every
// copy with failed or degraded links, computes it from the graph instead
// (see graphBisection) on the first call.
func (t *Topology) Bisection() float64 {
	if t.graphCut == nil {
		return t.bisection
	}
	t.graphCut.once.Do(func() { t.graphCut.value = t.graphBisection() })
	return t.graphCut.value
}

// graphCut is a bisection computed from the graph once, on first use: a
// maximum flow costs far more than building a machine, and most runs never
// ask for it. Each topology value that needs one has its own.
type graphCut struct {
	once  sync.Once
	value float64
}

// Failed returns the IDs of the links that have failed (see WithoutLinks),
// in increasing order.
func (t *Topology) Failed() []int {
	var ids []int
	for l, d := range t.dead {
		if d {
			ids = append(ids, l)
		}
	}
	return ids
}

// builder accumulates vertices and links.
type builder struct {
	t *Topology
}

func newBuilder(name string, hosts int) *builder {
	t := &Topology{name: name, hosts: hosts}
	for h := range hosts {
		t.vertexOf = append(t.vertexOf, fmt.Sprintf("h%d", h))
	}
	t.vertices = hosts
	return &builder{t: t}
}

// vertex adds a switch and returns its ID.
func (b *builder) vertex(label string) int32 {
	b.t.vertexOf = append(b.t.vertexOf, label)
	b.t.vertices++
	return int32(b.t.vertices - 1)
}

// link adds a directed link and returns its ID.
func (b *builder) link(from, to int32, spec LinkSpec) int32 {
	b.t.links = append(b.t.links, Link{From: from, To: to, LinkSpec: spec})
	return int32(len(b.t.links) - 1)
}

// pair adds links both ways and returns the ID of from->to; to->from is the
// next ID.
func (b *builder) pair(from, to int32, spec LinkSpec) int32 {
	id := b.link(from, to, spec)
	b.link(to, from, spec)
	return id
}

// cutFromGraph, given to done as the bisection, has Bisection compute it
// from the graph.
const cutFromGraph = -1

func (b *builder) done(route router, bisection float64) *Topology {
	t := b.t
	t.route, t.bisection = route, bisection
	if bisection == cutFromGraph {
		t.graphCut = &graphCut{}
	}
	t.adjStart = make([]int32, t.vertices+1)
	for _, l := range t.links {
		t.adjStart[l.From+1]++
	}
	for v := range t.vertices {
		t.adjStart[v+1] += t.adjStart[v]
	}
	t.adjLinks = make([]int32, len(t.links))
	fill := append([]int32(nil), t.adjStart[:t.vertices]...)
	for id, l := range t.links {
		t.adjLinks[fill[l.From]] = int32(id)
		fill[l.From]++
	}
	return t
}

// Crossbar is hosts joined by one switch: every route is two links.
// Bisection: half the hosts' links.
// MaxHosts is the most hosts collsim builds a topology of.
const MaxHosts = 1 << 22

func Crossbar(hosts int, link LinkSpec) (*Topology, error) {
	if hosts < 1 || hosts > maxHosts {
		return nil, fmt.Errorf("crossbar: hosts must be 1..%d, not %d", maxHosts, hosts)
	}
	if err := link.check("crossbar link"); err != nil {
		return nil, err
	}
	b := newBuilder(fmt.Sprintf("crossbar %d hosts", hosts), hosts)
	sw := b.vertex("s0")
	for h := range hosts {
		b.pair(int32(h), sw, link) // up = 2h, down = 2h+1
	}
	route := func(src, dst int32, path []int32) []int32 { return append(path, 2*src, 2*dst+1) }
	return b.done(route, float64(hosts/2)*link.Bandwidth), nil
}

// Check verifies that the topology is connected and that routes between a
// sample of host pairs are unbroken chains of links from source to
// destination. Builders call it in tests; it is cheap enough for the CLI.
func (t *Topology) Check() error {
	if err := t.connected(); err != nil {
		return err
	}
	var errs []error
	var path []int32
	step := max(1, t.hosts/64)
	for s := 0; s < t.hosts; s += step {
		for d := 0; d < t.hosts; d += step {
			path = t.Route(s, d, path[:0])
			at := int32(s)
			for _, id := range path {
				if id < 0 || int(id) >= len(t.links) || t.links[id].From != at {
					errs = append(errs, fmt.Errorf("%s: route %d->%d is broken at link %d", t.name, s, d, id))
					break
				}
				at = t.links[id].To
			}
			if at != int32(d) && len(errs) == 0 {
				errs = append(errs, fmt.Errorf("%s: route %d->%d ends at %s", t.name, s, d, t.Label(at)))
			}
			if len(errs) > 0 {
				return errors.Join(errs...)
			}
		}
	}
	return nil
}
