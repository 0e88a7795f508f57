package topology

import (
	"fmt"
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
	for _, d := range [][]int{{4, 4, 2}, {3, 3, 3}, {3}, {5}, {4}, {2, 3}, {3, 4}, {2, 2}, {6}, {3, 5}, {2, 2, 3}, {4, 3}, {1, 1}} {
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
}
