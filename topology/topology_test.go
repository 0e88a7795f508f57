package topology

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var gig = LinkSpec{Bandwidth: 1e9, Latency: 1e-7}

// allRoutesValid checks the route of every ordered host pair: a chain of
// links from source to destination, no link used twice, none failed, at
// most maxHops long.
func allRoutesValid(t interface {
	Fatalf(string, ...any)
}, topo *Topology, maxHops int) {
	var path []int32
	for s := range topo.Hosts() {
		for d := range topo.Hosts() {
			path = topo.Route(s, d, path[:0])
			at := int32(s)
			seen := map[int32]bool{}
			for _, id := range path {
				l := topo.Links()[id]
				if l.From != at || seen[id] || topo.dead != nil && topo.dead[id] {
					t.Fatalf("%s: route %d->%d broken, looping or failed at link %d (%v)", topo.Name(), s, d, id, path)
				}
				seen[id] = true
				at = l.To
			}
			if at != int32(d) || len(path) > maxHops {
				t.Fatalf("%s: route %d->%d ends at %d after %d links (max %d)", topo.Name(), s, d, at, len(path), maxHops)
			}
		}
	}
}

func TestBuilderCounts(t *testing.T) {
	mustDF := func(p, a, h, g int) *Topology {
		tp, err := Dragonfly(DragonflySpec{P: p, A: a, H: h, G: g, Host: gig, Local: gig, Global: gig})
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	must := func(tp *Topology, err error) *Topology {
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	fatTree := must(FatTree(4, 3, gig, 1))
	tests := []struct {
		name                           string
		topo                           *Topology
		hosts, switches, links, diamtr int
		bisectionLinks                 float64
	}{
		// crossbar: one switch, a link each way per host.
		{"crossbar 8", must(Crossbar(8, gig)), 8, 1, 16, 2, 4},
		// k-ary n-tree (Petrini, Vanneschi 1997): k^n hosts, n k^(n-1)
		// switches, 2 links per host plus 2 k^n per level boundary.
		{"fat-tree 4-ary 3-tree", fatTree, 64, 48, 128 + 2*2*64, 6, 32},
		// dragonfly (Kim et al. 2008), balanced a=2p=2h, g=a*h+1: 72 hosts
		// for p=2; a(a-1) local links per group; g(g-1) global links.
		{"dragonfly a=4 p=2 h=2", mustDF(2, 4, 2, 9), 72, 36, 144 + 9*12 + 9*8, 5, 20},
		// torus k-ary n-cube: 2 links per host plus 2n per router.
		{"torus 4x4x4", must(Torus([]int{4, 4, 4}, gig)), 64, 64, 128 + 64*6, 2 + 6, 32},
		{"torus 2x3", must(Torus([]int{2, 3}, gig)), 6, 6, 12 + 6*1 + 6*2, 2 + 2, 3},
		// multi-node: 4 nodes of 8 devices on a crossbar.
		{"multi-node 4x8", must(MultiNode(must(Crossbar(4, gig)), NodeSpec{Devices: 8, Fabric: gig, NIC: gig})), 32, 1 + 4 + 4, 8 + 64 + 8, 6, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := tc.topo
			if tp.Hosts() != tc.hosts || tp.Switches() != tc.switches || len(tp.Links()) != tc.links {
				t.Fatalf("hosts %d switches %d links %d, want %d %d %d", tp.Hosts(), tp.Switches(), len(tp.Links()), tc.hosts, tc.switches, tc.links)
			}
			if d := tp.Diameter(); d != tc.diamtr {
				t.Errorf("diameter %d, want %d", d, tc.diamtr)
			}
			if b := tp.Bisection() / gig.Bandwidth; b != tc.bisectionLinks {
				t.Errorf("bisection %g links, want %g", b, tc.bisectionLinks)
			}
			if err := tp.Check(); err != nil {
				t.Fatal(err)
			}
			allRoutesValid(t, tp, tc.diamtr)
			if _, err := tp.DOT(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Routes are valid and within the topology's diameter for random shapes.
func TestRoutesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tp *Topology
		var err error
		maxHops := 0
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			tp, err = FatTree(rapid.IntRange(1, 5).Draw(t, "k"), rapid.IntRange(1, 3).Draw(t, "n"), gig, 1)
		case 1:
			a := rapid.IntRange(1, 6).Draw(t, "a")
			h := rapid.IntRange(0, 3).Draw(t, "h")
			g := rapid.IntRange(1, a*h+1).Draw(t, "g")
			tp, err = Dragonfly(DragonflySpec{P: rapid.IntRange(1, 3).Draw(t, "p"), A: a, H: h, G: g, Host: gig, Local: gig, Global: gig})
			// Minimal routing takes one global hop: host, local, global,
			// local, host. A path through a third group can be shorter.
			maxHops = 5
		case 2:
			tp, err = Torus(rapid.SliceOfN(rapid.IntRange(1, 5), 1, 3).Draw(t, "dims"), gig)
		case 3:
			inner, _ := Torus([]int{rapid.IntRange(1, 4).Draw(t, "nodes")}, gig)
			devices := rapid.IntRange(1, 6).Draw(t, "devices")
			spec := NodeSpec{Devices: devices, Fabric: gig, NIC: gig, Kind: rapid.SampledFrom(Fabrics).Draw(t, "fabric")}
			if spec.Kind == FabricTree {
				spec.Switches = rapid.IntRange(1, devices).Draw(t, "switches")
			}
			if r := rapid.IntRange(1, min(2, devices)).Draw(t, "rails"); r == 2 {
				inner, _ = Torus([]int{2 * rapid.IntRange(1, 3).Draw(t, "nodes")}, gig)
				spec.Rails = 2
				// A message keeps to its source's rail, which can be
				// longer than the shortest way: up to 3 links from the
				// device to its NIC and from the NIC to the device.
				maxHops = 6 + inner.Diameter()
			}
			tp, err = MultiNode(inner, spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Check(); err != nil {
			t.Fatal(err)
		}
		allRoutesValid(t, tp, max(maxHops, tp.Diameter()))
	})
}

func TestBadShapesAreErrors(t *testing.T) {
	bad := LinkSpec{Bandwidth: 0, Latency: 1e-6}
	cases := map[string]func() error{
		"crossbar no hosts":        func() error { _, err := Crossbar(0, gig); return err },
		"zero bandwidth":           func() error { _, err := Crossbar(4, bad); return err },
		"negative latency":         func() error { _, err := Crossbar(4, LinkSpec{Bandwidth: 1, Latency: -1}); return err },
		"fat-tree taper below one": func() error { _, err := FatTree(4, 2, gig, 0.5); return err },
		"fat-tree too large":       func() error { _, err := FatTree(1000, 4, gig, 1); return err },
		"dragonfly too many groups": func() error {
			_, err := Dragonfly(DragonflySpec{P: 2, A: 4, H: 2, G: 10, Host: gig, Local: gig, Global: gig})
			return err
		},
		"torus zero dim": func() error { _, err := Torus([]int{4, 0}, gig); return err },
		"multi-node no devices": func() error {
			c, _ := Crossbar(2, gig)
			_, err := MultiNode(c, NodeSpec{Fabric: gig, NIC: gig})
			return err
		},
		"multi-node rails do not divide": func() error {
			c, _ := Crossbar(3, gig)
			_, err := MultiNode(c, NodeSpec{Devices: 4, Rails: 2, Fabric: gig, NIC: gig})
			return err
		},
		"multi-node more rails than devices": func() error {
			c, _ := Crossbar(4, gig)
			_, err := MultiNode(c, NodeSpec{Devices: 1, Rails: 2, Fabric: gig, NIC: gig})
			return err
		},
		"multi-node unknown fabric": func() error {
			c, _ := Crossbar(2, gig)
			_, err := MultiNode(c, NodeSpec{Devices: 2, Kind: "ring", Fabric: gig, NIC: gig})
			return err
		},
		"multi-node PCIe switches outside a tree": func() error {
			c, _ := Crossbar(2, gig)
			_, err := MultiNode(c, NodeSpec{Devices: 4, Switches: 2, Fabric: gig, NIC: gig})
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, err := Dragonfly(DragonflySpec{P: 2, A: 4, H: 2, G: 10, Host: gig, Local: gig, Global: gig})
	if !strings.Contains(err.Error(), "at most 9 groups") {
		t.Errorf("dragonfly error does not say how to fix it: %v", err)
	}
}

func TestPlacement(t *testing.T) {
	block, _ := Place(PlaceBlock, 6, 4, 2, 0)
	rr, _ := Place(PlaceRoundRobin, 6, 4, 2, 0)
	if !slices.Equal(block, []int32{0, 0, 1, 1, 2, 2}) || !slices.Equal(rr, []int32{0, 1, 2, 3, 0, 1}) {
		t.Fatalf("block %v round-robin %v", block, rr)
	}
	rapid.Check(t, func(t *rapid.T) {
		hosts := rapid.IntRange(1, 50).Draw(t, "hosts")
		slots := rapid.IntRange(1, 4).Draw(t, "slots")
		ranks := rapid.IntRange(1, hosts*slots).Draw(t, "ranks")
		seed := rapid.Uint64().Draw(t, "seed")
		a, err := Place(PlaceRandom, ranks, hosts, slots, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Place(PlaceRandom, ranks, hosts, slots, seed)
		if !slices.Equal(a, b) {
			t.Fatal("random placement not reproducible")
		}
		use := make([]int, hosts)
		for _, h := range a {
			use[h]++
			if use[h] > slots {
				t.Fatalf("host %d overfilled: %v", h, a)
			}
		}
	})
	if _, err := Place(PlaceBlock, 9, 4, 2, 0); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("overfull placement: %v", err)
	}
	if _, err := Place("scatter", 4, 4, 1, 0); err == nil || !strings.Contains(err.Error(), "valid: block") {
		t.Fatalf("unknown policy: %v", err)
	}
}

// TestRouteViaProperty: a Valiant route on a dragonfly is a path of
// connected links from src to dst that enters the intermediate group; via
// src's or dst's own group it is the minimal route.
func TestRouteViaProperty(t *testing.T) {
	d, err := Dragonfly(DragonflySpec{P: 2, A: 4, H: 2, G: 9, Host: LinkSpec{1e10, 1e-7}, Local: LinkSpec{1e10, 1e-7}, Global: LinkSpec{1e10, 1e-6}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Groups() != 9 || d.GroupOf(9) != 1 {
		t.Fatalf("groups %d, host 9 in group %d", d.Groups(), d.GroupOf(9))
	}
	rapid.Check(t, func(rt *rapid.T) {
		src := rapid.IntRange(0, d.Hosts()-1).Draw(rt, "src")
		dst := rapid.IntRange(0, d.Hosts()-1).Draw(rt, "dst")
		g := rapid.IntRange(0, d.Groups()-1).Draw(rt, "group")
		path := d.RouteVia(src, dst, g, nil)
		if src == dst {
			if len(path) != 0 {
				rt.Fatalf("route to itself: %v", path)
			}
			return
		}
		links := d.Links()
		at := int32(src)
		visits := false
		for _, l := range path {
			if links[l].From != at {
				rt.Fatalf("link %d starts at %d, not %d: %v", l, links[l].From, at, path)
			}
			at = links[l].To
			if int(at) >= d.Hosts() && (int(at)-d.Hosts())/4 == g {
				visits = true
			}
		}
		if at != int32(dst) {
			rt.Fatalf("route ends at %d, not %d", at, dst)
		}
		if !visits {
			rt.Fatalf("route %v never enters group %d", path, g)
		}
		if sg, dg := d.GroupOf(src), d.GroupOf(dst); g == sg || g == dg {
			if minimal := d.Route(src, dst, nil); !slices.Equal(minimal, path) {
				rt.Fatalf("via its own group: %v, minimal %v", path, minimal)
			}
		}
	})
}

// TestFailedLinks: on a fat-tree, a failed uplink is routed around through
// another spine (every route stays valid and avoids it); failing a host's
// only link cuts it off, which is an error naming it.
func TestFailedLinks(t *testing.T) {
	tree, err := FatTree(4, 2, LinkSpec{1e10, 1e-7}, 1)
	if err != nil {
		t.Fatal(err)
	}
	route := tree.Route(0, 15, nil)
	up := int(route[1]) // leaf to spine
	broken, err := tree.WithoutLinks([]int{up})
	if err != nil {
		t.Fatal(err)
	}
	allRoutesValid(t, broken, 4)
	for s := range broken.Hosts() {
		for d := range broken.Hosts() {
			if slices.Contains(broken.Route(s, d, nil), int32(up)) {
				t.Fatalf("route %d->%d still crosses the failed link", s, d)
			}
		}
	}
	if got := broken.Route(0, 15, nil); len(got) != 4 || slices.Equal(got, route) {
		t.Errorf("detour %v: want another 4-hop route than %v", got, route)
	}
	host := int(tree.Route(5, 0, nil)[0]) // host 5's only uplink
	if _, err := tree.WithoutLinks([]int{host}); err == nil || !strings.Contains(err.Error(), "host h5 cannot reach") {
		t.Errorf("cutting off host 5: %v", err)
	}
}

// TestRouteHashedProperty: on a fat-tree, a hashed route is a shortest
// path from src to dst (as long as the D-mod-k one), and different hashes
// reach different top switches.
func TestRouteHashedProperty(t *testing.T) {
	tree, err := FatTree(4, 3, LinkSpec{1e10, 1e-7}, 1)
	if err != nil || !tree.Hashes() {
		t.Fatal(err)
	}
	tops := map[int32]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		src := rapid.IntRange(0, tree.Hosts()-1).Draw(rt, "src")
		dst := rapid.IntRange(0, tree.Hosts()-1).Draw(rt, "dst")
		h := rapid.Uint64().Draw(rt, "hash")
		path := tree.RouteHashed(src, dst, h, nil)
		if len(path) != len(tree.Route(src, dst, nil)) {
			rt.Fatalf("hashed route %v is not as short as %v", path, tree.Route(src, dst, nil))
		}
		at := int32(src)
		for _, l := range path {
			if tree.Links()[l].From != at {
				rt.Fatalf("broken route %v", path)
			}
			at = tree.Links()[l].To
		}
		if at != int32(dst) {
			rt.Fatalf("route ends at %d, not %d", at, dst)
		}
		if src/16 != dst/16 && len(path) == 6 { // through the top level
			tops[tree.Links()[path[2]].To] = true
		}
	})
	if len(tops) < 2 {
		t.Errorf("hashed routes between subtrees used %d top switches", len(tops))
	}
	if d, _ := Dragonfly(DragonflySpec{P: 1, A: 2, H: 1, G: 3, Host: LinkSpec{1e9, 0}, Local: LinkSpec{1e9, 0}, Global: LinkSpec{1e9, 0}}); d.Hashes() {
		t.Error("a dragonfly claims hashed routes")
	}
}

// TestMultiNodeFabrics: hand-derived routes of each intra-node fabric and
// of rails, by vertex labels.
func TestMultiNodeFabrics(t *testing.T) {
	hops := func(tp *Topology, s, d int) string {
		var v []string
		for _, l := range tp.Route(s, d, nil) {
			v = append(v, tp.Label(tp.Links()[l].To))
		}
		return strings.Join(v, " ")
	}
	net, _ := Crossbar(4, gig)
	nvlink := LinkSpec{Bandwidth: 50e9, Latency: 1e-7}
	cases := []struct {
		name      string
		spec      NodeSpec
		routes    map[[2]int]string
		bisection float64
	}{
		{"switch", NodeSpec{Devices: 4, Fabric: nvlink, NIC: gig}, map[[2]int]string{
			{0, 3}: "node0 h3", {1, 5}: "node0 nic0 s0 nic1 node1 h5"}, 2 * gig.Bandwidth},
		{"mesh", NodeSpec{Devices: 4, Kind: FabricMesh, Fabric: nvlink, Uplink: gig, NIC: gig}, map[[2]int]string{
			{0, 3}: "h3", {3, 1}: "h1", {6, 4}: "h4", {1, 5}: "node0 nic0 s0 nic1 node1 h5"}, 2 * gig.Bandwidth},
		{"tree", NodeSpec{Devices: 4, Kind: FabricTree, Switches: 2, Fabric: nvlink, NIC: gig}, map[[2]int]string{
			{0, 1}: "node0.pcie0 h1", {0, 3}: "node0.pcie0 node0 node0.pcie1 h3", {2, 4}: "node0.pcie1 node0 nic0 s0 nic1 node1 node1.pcie0 h4"}, 2 * gig.Bandwidth},
		// Two rails on 4 network hosts: 2 nodes; devices 0, 1 on rail 0,
		// devices 2, 3 on rail 1, whatever the destination device.
		{"rails", NodeSpec{Devices: 4, Rails: 2, Fabric: nvlink, NIC: gig}, map[[2]int]string{
			{0, 6}: "node0 nic0.0 s0 nic1.0 node1 h6", {3, 5}: "node0 nic0.1 s0 nic1.1 node1 h5"}, 2 * gig.Bandwidth},
	}
	for _, c := range cases {
		tp, err := MultiNode(net, c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := tp.Check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		allRoutesValid(t, tp, tp.Diameter())
		for sd, want := range c.routes {
			if got := hops(tp, sd[0], sd[1]); got != want {
				t.Errorf("%s: route %d->%d goes %q, want %q", c.name, sd[0], sd[1], got, want)
			}
		}
		if tp.Bisection() != c.bisection {
			t.Errorf("%s: bisection %g, want %g", c.name, tp.Bisection(), c.bisection)
		}
	}
	one, _ := Crossbar(1, gig)
	mesh, _ := MultiNode(one, NodeSpec{Devices: 8, Kind: FabricMesh, Fabric: nvlink, NIC: gig})
	// 4 x 4 links across, and 4 more through the host bridge: each half's
	// 4 devices reach it by their uplinks (the fabric's bandwidth unless
	// set), a path the cut must count too.
	if want := (16 + 4) * nvlink.Bandwidth; mesh.Bisection() != want {
		t.Errorf("one mesh node of 8: bisection %g, want %g", mesh.Bisection(), want)
	}
}

// TestTreeSplitsDevicesAsEvenlyAsTheCountsAllow: device d hangs under PCIe
// switch d*switches/devices, as the README's machine reference says: 4
// devices under 3 switches are 2, 1 and 1 (counted from each device's
// first link, into its switch).
func TestTreeSplitsDevicesAsEvenlyAsTheCountsAllow(t *testing.T) {
	l := LinkSpec{Bandwidth: 1e9, Latency: 1e-6}
	net, err := Crossbar(2, l)
	if err != nil {
		t.Fatal(err)
	}
	m, err := MultiNode(net, NodeSpec{Devices: 4, Fabric: l, NIC: l, Kind: FabricTree, Switches: 3})
	if err != nil {
		t.Fatal(err)
	}
	switchOf := make([]int32, 4)
	for d := range int32(4) { // node 0's devices
		for _, ln := range m.Links() {
			if ln.From == d {
				switchOf[d] = ln.To
				break
			}
		}
	}
	// d*3/4: devices 0 and 1 under switch 0, 2 under 1, 3 under 2 (a
	// round robin, d mod 3, would put 0 and 3 together).
	same := func(a, b int) bool { return switchOf[a] == switchOf[b] }
	if !same(0, 1) || same(1, 2) || same(2, 3) || same(0, 3) {
		t.Errorf("devices' switches %v: want 0 and 1 under one, 2 and 3 under one each", switchOf)
	}
}

// Parallel links are one DOT edge that says how many: a dragonfly of 2
// groups of 2 routers with 2 global links each joins r0.0 to r1.0 by two
// cables (each router's two global ports to the same router of the other
// group), 20 directed links in 16 edges. Each link counted once in the
// labels adds up to the links (an audit: the DOT showed one cable's
// bandwidth).
func TestDOTCountsParallelLinks(t *testing.T) {
	link := LinkSpec{Bandwidth: 5e9, Latency: 1e-7}
	df, err := Dragonfly(DragonflySpec{P: 1, A: 2, H: 2, G: 2, Host: link, Local: link, Global: LinkSpec{Bandwidth: 4.7e9, Latency: 3e-7}})
	if err != nil {
		t.Fatal(err)
	}
	if len(df.Links()) != 20 {
		t.Fatalf("%d links, want 20 (8 host, 4 local, 4 global cables both ways)", len(df.Links()))
	}
	out, err := df.DOT()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	edges := strings.Count(text, "->")
	links := edges + strings.Count(text, `"2 x `) // each "2 x" edge holds one link more
	if edges != 16 || links != 20 || !strings.Contains(text, `"2 x 4.7GB/s"`) {
		t.Errorf("DOT: %d edges standing for %d links, want 16 for 20 with global edges labelled 2 x 4.7GB/s:\n%s", edges, links, text)
	}
	if got := parallelLabel([]float64{1e9, 2e9}); got != "1GB/s + 2GB/s" {
		t.Errorf("unequal parallel links: %q", got)
	}
	// A failed link is not drawn: one of a pair of cables down leaves
	// its edge one link.
	global := slices.IndexFunc(df.Links(), func(l Link) bool { return l.Bandwidth == 4.7e9 })
	failed, err := df.WithoutLinks([]int{global})
	if err != nil {
		t.Fatal(err)
	}
	out, err = failed.DOT()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"2 x 4.7GB/s"`); n != strings.Count(text, `"2 x 4.7GB/s"`)-1 {
		t.Errorf("one global link failed: %d edges of 2 x 4.7GB/s, want one fewer than %d:\n%s", n, strings.Count(text, `"2 x 4.7GB/s"`), out)
	}
}
