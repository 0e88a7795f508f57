package topology

import (
	"fmt"
	"strings"
	"testing"
)

// TestBisectionIsTheGraphCut: on every shape family, odd ones included,
// the bisection a topology reports is the graph's cut between the first
// and the second half of its hosts (what --fail and --degrade recompute),
// so a counted form (tori, fat-trees, nodes) never reports another cut;
// and failing any one link never raises it. (Odd dragonflies, tori with no even dimension and
// machines of an odd number of nodes counted cuts that did not halve the
// hosts: a 3x3x3 torus reported 180 GB/s, 130 after failing a link.)
func TestBisectionIsTheGraphCut(t *testing.T) {
	l := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	g := LinkSpec{Bandwidth: 5e9, Latency: 1e-7}
	var shapes []*Topology
	add := func(name string, top *Topology, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shapes = append(shapes, top)
	}
	for _, s := range [][4]int{{2, 4, 2, 9}, {2, 4, 2, 3}, {2, 4, 2, 2}, {2, 4, 2, 4}, {1, 4, 2, 5}, {2, 4, 1, 5}, {2, 3, 2, 7}, {2, 4, 0, 1}, {2, 3, 0, 1}, {3, 5, 0, 1}, {1, 4, 8, 2}} {
		top, err := Dragonfly(DragonflySpec{P: s[0], A: s[1], H: s[2], G: s[3], Host: l, Local: l, Global: g})
		add(fmt.Sprint("dragonfly ", s), top, err)
		// Host links or local links the narrowest (the global links once
		// counted alone reported 160 GB/s where the hosts' 40 bind).
		slow := LinkSpec{Bandwidth: 1e9, Latency: 1e-7}
		top, err = Dragonfly(DragonflySpec{P: s[0], A: s[1], H: s[2], G: s[3], Host: slow, Local: l, Global: l})
		add(fmt.Sprint("dragonfly, slow hosts ", s), top, err)
		top, err = Dragonfly(DragonflySpec{P: s[0], A: s[1], H: s[2], G: s[3], Host: l, Local: slow, Global: l})
		add(fmt.Sprint("dragonfly, slow local links ", s), top, err)
	}
	for _, d := range [][]int{{4, 4, 2}, {3, 3, 3}, {3}, {5}, {4}, {2, 3}, {3, 4}, {2, 2}, {6}, {3, 5}, {2, 2, 3}, {4, 3}, {1, 1}, {2, 9}, {4, 9}, {2, 2, 9}, {2, 7, 3}} {
		top, err := Torus(d, l)
		add(fmt.Sprint("torus ", d), top, err)
	}
	for _, c := range [][2]int{{4, 2}, {4, 3}, {6, 2}} {
		for _, taper := range []float64{1, 2} {
			top, err := FatTree(c[0], c[1], l, taper)
			add(fmt.Sprint("fat-tree ", c, taper), top, err)
		}
	}
	for _, hosts := range []int{1, 2, 3, 4, 5} {
		net, _ := Crossbar(hosts, g)
		add(fmt.Sprint("crossbar ", hosts), net, nil)
		for _, kind := range []string{FabricSwitch, FabricMesh, FabricTree} {
			for _, dev := range []int{8, 6, 3} {
				switches := []int{1}
				if kind == FabricTree {
					switches = []int{1, 2, 3}
				}
				for _, sw := range switches {
					top, err := MultiNode(net, NodeSpec{Devices: dev, Fabric: l, NIC: g, Kind: kind, Switches: sw})
					add(fmt.Sprint("multi-node ", hosts, kind, dev, sw), top, err)
				}
			}
		}
	}
	for _, top := range shapes {
		b := top.Bisection()
		if graph := top.graphBisection(); b != graph {
			t.Errorf("%s: bisection %g GB/s, the graph's cut %g", top.Name(), b/1e9, graph/1e9)
		}
		for id, link := range top.Links() {
			if link.From > link.To {
				continue // a pair fails both ways: once
			}
			cut, err := top.WithoutLinks([]int{id})
			if err != nil {
				continue // a host cut off: refused
			}
			if after := cut.Bisection(); after > b {
				t.Errorf("%s: failing link %d raised the bisection from %g to %g GB/s", top.Name(), id, b/1e9, after/1e9)
			}
		}
	}
	// By hand: a dragonfly of 2 groups of 4 routers with one host each
	// and 8 global links a router: 32 global links of 10 GB/s join the
	// groups, but each half's 4 hosts send 40 GB/s at most.
	if df, _ := Dragonfly(DragonflySpec{P: 1, A: 4, H: 8, G: 2, Host: l, Local: l, Global: l}); df.Bisection() != 40e9 {
		t.Errorf("host-bound dragonfly: bisection %g GB/s, want 40", df.Bisection()/1e9)
	}
	// By hand: a 3x3x3 torus's first half is 13 hosts, whose links (130
	// GB/s) bind: a cut through the torus crosses at least 18 links.
	if tor, _ := Torus([]int{3, 3, 3}, l); tor.Bisection() != 130e9 {
		t.Errorf("3x3x3 torus: bisection %g GB/s, want 130", tor.Bisection()/1e9)
	}
	// By hand: a 9x2 torus (dimension 0 of 9) is halved by the hosts
	// (a, b) with a < 4, and (4, 0): each of the 2 rings along dimension 0
	// is cut twice, and the middle slab's one link between (4, 0) and
	// (4, 1) once, 5 links (cutting the 9 rings of 2 took 9, which the
	// graph's cut of the first 9 hosts, one whole slab, also takes).
	if tor, _ := Torus([]int{9, 2}, l); tor.Bisection() != 50e9 {
		t.Errorf("9x2 torus: bisection %g GB/s, want 50", tor.Bisection()/1e9)
	}
}

// TestDiameterClosedForms: the tori's and fat-trees' closed forms for the
// diameter are the breadth-first search's (which a 128x128 torus took
// 13 s to run), and a path through a host does not count: on the graph
// h0-s0-s1-s2-h2 with h0-h1-h2 and h1-s1 beside it, h0 reaches h2 in 4
// links, not 2 through h1 (an audit).
func TestDiameterClosedForms(t *testing.T) {
	l := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	var tops []*Topology
	for _, d := range [][]int{{1}, {2}, {3}, {4, 4, 2}, {3, 3, 3}, {2, 9}, {5, 1, 6}} {
		top, err := Torus(d, l)
		if err != nil {
			t.Fatal(err)
		}
		tops = append(tops, top)
	}
	for _, c := range [][2]int{{1, 1}, {4, 1}, {4, 2}, {3, 3}, {2, 4}} {
		top, err := FatTree(c[0], c[1], l, 1)
		if err != nil {
			t.Fatal(err)
		}
		tops = append(tops, top)
	}
	for _, top := range tops {
		if got, want := top.Diameter(), top.searchDiameter(); got != want {
			t.Errorf("%s: diameter %d, the search's %d", top.Name(), got, want)
		}
	}
	var edges []Edge
	for _, e := range [][2]string{{"h0", "s0"}, {"s0", "s1"}, {"s1", "s2"}, {"s2", "h2"}, {"h0", "h1"}, {"h1", "h2"}, {"h1", "s1"}} {
		edges = append(edges, Edge{A: e[0], B: e[1], LinkSpec: l})
	}
	g, err := Custom(3, edges)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Diameter(); d != 4 {
		t.Errorf("h0 to h2 not through h1: diameter %d, want 4", d)
	}
}

// TestNodeBisectionByHand: a node's PCIe switches pass each what its
// devices' links and its uplink both carry, and rails do not split the
// nodes. By hand:
//   - 2 nodes of 4 devices under 3 switches (2, 1 and 1 devices), device
//     links of 10 GB/s, uplinks of 15: one node's side passes 15, 10 and
//     10, 35 GB/s (the count over all switches gave min(40, 45) = 40: an
//     audit);
//   - 4 nodes of 2 devices on 2 rails, NIC k of node n host k*4+n of a
//     ring of 8 (10 GB/s): nodes 0 and 1 against 2 and 3 put hosts 0, 1,
//     4, 5 on one side, and the ring crosses between them 4 times, 40
//     GB/s (the ring's own bisection, its hosts 0-3 against 4-7, gave 20).
func TestNodeBisectionByHand(t *testing.T) {
	fast := LinkSpec{Bandwidth: 1e12, Latency: 1e-7}
	ten := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	net, _ := Crossbar(2, fast)
	tree, err := MultiNode(net, NodeSpec{Devices: 4, Kind: FabricTree, Switches: 3, Fabric: ten, Uplink: LinkSpec{Bandwidth: 15e9, Latency: 1e-7}, NIC: fast})
	if err != nil {
		t.Fatal(err)
	}
	if b := tree.Bisection(); b != 35e9 {
		t.Errorf("tree of 3 switches: bisection %g GB/s, want 35", b/1e9)
	}
	ring, _ := Torus([]int{8}, ten)
	railed, err := MultiNode(ring, NodeSpec{Devices: 2, Kind: FabricSwitch, Rails: 2, Fabric: fast, NIC: fast})
	if err != nil {
		t.Fatal(err)
	}
	if b := railed.Bisection(); b != 40e9 {
		t.Errorf("2 rails on a ring of 8: bisection %g GB/s, want 40", b/1e9)
	}
}

// TestSizesCountedBeforeBuilding: machines whose links would not fit are
// refused before they are built (an audit: a torus of 2 x 2^62 wrapped to
// a length make refused, 4 x 2^62 to no hosts; 10^8 global links a router
// and a mesh of 16,384 nodes of 256 devices ran out of memory).
func TestSizesCountedBeforeBuilding(t *testing.T) {
	l := LinkSpec{Bandwidth: 10e9, Latency: 1e-7}
	for _, dims := range [][]int{{2, 1 << 62}, {4, 1 << 62}, {3, 6148914691236517206}} {
		if _, err := Torus(dims, l); err == nil || !strings.Contains(err.Error(), "more hosts than collsim builds") {
			t.Errorf("torus %v: %v", dims, err)
		}
	}
	// torusBisection takes the dimensions as bits of a word: 63 of size 1
	// are refused by their count.
	if _, err := Torus(make63Ones(), l); err == nil || !strings.Contains(err.Error(), "63 dimensions; give 1 to 62") {
		t.Errorf("63 dimensions: %v", err)
	}
	if _, err := Dragonfly(DragonflySpec{P: 1, A: 1, H: 100_000_000, G: 2, Host: l, Local: l, Global: l}); err == nil || !strings.Contains(err.Error(), "more than collsim builds") {
		t.Errorf("dragonfly h=10^8: %v", err)
	}
	// A fat-tree names the limit it passes: 4^11 hosts are exactly the
	// most, but take 2 x 4^11 x 11 = 92,274,688 links; 4^12 hosts are too
	// many (both read "hosts is more than collsim builds": an audit).
	if _, err := FatTree(4, 11, l, 1); err == nil || !strings.Contains(err.Error(), "4^11 hosts on 11 levels take 92274688 links, more than collsim builds (33554432)") {
		t.Errorf("fat-tree 4^11: %v", err)
	}
	if _, err := FatTree(4, 12, l, 1); err == nil || !strings.Contains(err.Error(), "4^12 = 16777216 hosts, more than collsim builds (4194304)") {
		t.Errorf("fat-tree 4^12: %v", err)
	}
	net, _ := Crossbar(16384, l)
	if _, err := MultiNode(net, NodeSpec{Devices: 256, Kind: FabricMesh, Fabric: l, Uplink: l, NIC: l}); err == nil || !strings.Contains(err.Error(), "more than collsim builds") {
		t.Errorf("mesh of 16,384 x 256: %v", err)
	}
}

// make63Ones is 63 dimensions of size 1.
func make63Ones() []int {
	d := make([]int, 63)
	for i := range d {
		d[i] = 1
	}
	return d
}
