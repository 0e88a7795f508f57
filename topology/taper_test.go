package topology

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// link100G is a 100 Gbit/s link (12.5 GB/s), as in fattree-1024.
var link100G = LinkSpec{Bandwidth: 12.5e9, Latency: 300e-9}

// leafUplinks returns each leaf switch's links up to a level-1 switch, in
// leaf order (leaves are labelled s0.w, level-1 switches s1.w).
func leafUplinks(tp *Topology) [][]int32 {
	var up [][]int32
	for v := tp.Hosts(); v < tp.Vertices(); v++ {
		if !strings.HasPrefix(tp.Label(int32(v)), "s0.") {
			continue
		}
		var links []int32
		for _, l := range tp.adjLinks[tp.adjStart[v]:tp.adjStart[v+1]] {
			if strings.HasPrefix(tp.Label(tp.Links()[l].To), "s1.") {
				links = append(links, l)
			}
		}
		up = append(up, links)
	}
	return up
}

// validPath reports whether path is a chain of links, none failed, from
// host src to host dst.
func validPath(tp *Topology, src, dst int, path []int32) bool {
	at := int32(src)
	for _, id := range path {
		l := tp.Links()[id]
		if l.From != at || tp.dead != nil && tp.dead[id] {
			return false
		}
		at = l.To
	}
	return at == int32(dst)
}

// TestTaperedFatTrees: hand-counted shapes and bisections of full,
// link-tapered and bandwidth-tapered k-ary n-trees; every route (D-mod-k
// and hashed) is a whole path over the links that exist.
func TestTaperedFatTrees(t *testing.T) {
	const B = 12.5e9
	cases := []struct {
		name        string
		k, n        int
		taper       float64
		mode        string
		hosts       int
		switches    int
		links       int
		leafUp      int     // uplinks per leaf switch
		upBandwidth float64 // of each leaf uplink
		bisection   float64 // bytes per second each way
	}{
		// 32 leaves and 32 spines; 2 links per host plus 2 per leaf-spine
		// pair (32 x 32). The first 512 hosts fill leaves 0..15, so the cut
		// is their 512 uplinks: 512 x 12.5 GB/s.
		{"32-ary 2-tree", 32, 2, 1, TaperLinks, 1024, 64, 2048 + 2*32*32, 32, B, 512 * B},
		// 2:1 by links: each leaf keeps 16 uplinks, to spines 0..15, the
		// only spines built; leaves 0..15 have 16 x 16 = 256 uplinks.
		{"2:1 by links", 32, 2, 2, TaperLinks, 1024, 32 + 16, 2048 + 2*32*16, 16, B, 256 * B},
		// 2:1 by bandwidth: the full tree, its 512 cut uplinks at half speed.
		{"2:1 by bandwidth", 32, 2, 2, TaperBandwidth, 1024, 64, 2048 + 2*32*32, 32, B / 2, 256 * B},
		// 32/24 = 4:3: 24 uplinks per leaf, 24 spines; 16 x 24 cut uplinks.
		{"4:3 by links", 32, 2, 32.0 / 24, TaperLinks, 1024, 32 + 24, 2048 + 2*32*24, 24, B, 384 * B},
		// 4-ary 3-tree, 2:1: 16 leaves with 2 uplinks each; in each of the
		// 4 pods only the level-1 switches of ports 0 and 1 (8 in all), and
		// the 8 top switches whose digit 0 is 0 or 1. Links: 2 x 64 (hosts)
		// + 2 x 16 x 2 (leaves up) + 2 x 8 x 4 (level 1 up). The first 32
		// hosts fill pods 0 and 1: 8 leaves x 2 uplinks = 16 links.
		{"4-ary 3-tree 2:1", 4, 3, 2, TaperLinks, 64, 16 + 8 + 8, 128 + 64 + 64, 2, B, 16 * B},
		// 3-ary 2-tree, 3:1: one uplink per leaf, one spine. The halves are
		// h0..h3 and h4..h8, so they split leaf 1 (h3, h4, h5): h0..h2 send
		// over leaf 0's one uplink, and h3 to h4 inside leaf 1: 2 links.
		// Back: leaf 0 takes 1 link from its one uplink, h3 1 more: 2.
		{"3-ary 2-tree 3:1 (halves split a leaf)", 3, 2, 3, TaperLinks, 9, 3 + 1, 18 + 2*3*1, 1, B, 2 * B},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := FatTreeTapered(tc.k, tc.n, link100G, tc.taper, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			if tp.Hosts() != tc.hosts || tp.Switches() != tc.switches || len(tp.Links()) != tc.links {
				t.Fatalf("%s: hosts %d switches %d links %d, want %d %d %d", tp.Name(), tp.Hosts(), tp.Switches(), len(tp.Links()), tc.hosts, tc.switches, tc.links)
			}
			for leaf, up := range leafUplinks(tp) {
				if len(up) != tc.leafUp {
					t.Fatalf("leaf %d has %d uplinks, want %d", leaf, len(up), tc.leafUp)
				}
				for _, l := range up {
					if bw := tp.Links()[l].Bandwidth; bw != tc.upBandwidth {
						t.Fatalf("leaf %d uplink %d at %g B/s, want %g", leaf, l, bw, tc.upBandwidth)
					}
				}
			}
			if got := tp.Bisection(); math.Abs(got-tc.bisection) > 1e-9*tc.bisection {
				t.Errorf("bisection %g B/s = %g links, want %g", got, got/B, tc.bisection/B)
			}
			if err := tp.Check(); err != nil {
				t.Fatal(err)
			}
			if tp.Hosts() <= 64 {
				allRoutesValid(t, tp, 2*tc.n)
			}
			// Every route from 64 sources (all hosts on the small trees),
			// D-mod-k and hashed, is a whole path of the shortest length.
			step := max(1, tp.Hosts()/64)
			for s := 0; s < tp.Hosts(); s += step {
				for d := range tp.Hosts() {
					path := tp.Route(s, d, nil)
					hashed := tp.RouteHashed(s, d, splitmix(uint64(s*tp.Hosts()+d)), nil)
					if !validPath(tp, s, d, path) || !validPath(tp, s, d, hashed) || len(hashed) != len(path) {
						t.Fatalf("route %d->%d: D-mod-k %v, hashed %v", s, d, path, hashed)
					}
				}
			}
		})
	}
}

// TestTaperBisectionMatchesMaxFlow: the fat-tree's closed-form bisection
// equals the maximum flow across the same cut (computed on the graph, an
// independent method) for every taper of small trees, both ways of
// tapering; odd k, where the builder computes it from the graph when
// tapered, checks the full tree's formula.
func TestTaperBisectionMatchesMaxFlow(t *testing.T) {
	for k := 2; k <= 6; k++ {
		for n := 2; n <= 3; n++ {
			for u := 1; u <= k; u++ {
				for _, mode := range TaperModes {
					tp, err := FatTreeTapered(k, n, gig, float64(k)/float64(u), mode)
					if err != nil {
						t.Fatal(err)
					}
					if tp.graphCut != nil {
						continue // computed from the graph already
					}
					if formula, flow := tp.Bisection(), tp.graphBisection(); math.Abs(formula-flow) > 1e-9*flow {
						t.Errorf("%s: bisection %g links by the formula, %g by maximum flow", tp.Name(), formula/gig.Bandwidth, flow/gig.Bandwidth)
					}
				}
			}
		}
	}
}

// TestTaperErrors: tapers that cannot be built are refused, saying which
// would do.
func TestTaperErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		k, n  int
		taper float64
		mode  string
		want  string
	}{
		{"3 does not divide 32", 32, 2, 3, TaperLinks, "whole ratios: 1, 2, 4, 8, 16, 32; nearest: 3.2 (32/10: 10 kept), 2.909 (32/11: 11 kept)"},
		{"more than k", 4, 2, 8, "", "whole ratios: 1, 2, 4; nearest: 4 (4/1: 1 kept)"},
		{"one level", 4, 1, 2, TaperLinks, "1-level tree is one switch with no uplinks to taper"},
		{"one level by bandwidth", 4, 1, 2, TaperBandwidth, "1-level tree"},
		{"below one", 4, 2, 0.5, TaperBandwidth, "ratio of at least 1"},
		{"unknown mode", 4, 2, 2, "speed", `unknown taper mode "speed"; valid: links, bandwidth`},
	} {
		if _, err := FatTreeTapered(tc.k, tc.n, gig, tc.taper, tc.mode); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	// 1.333 is 32/24 within the 0.1% the builder allows.
	if tp, err := FatTree(32, 2, gig, 1.333); err != nil || len(leafUplinks(tp)[0]) != 24 {
		t.Errorf("taper 1.333 on a 32-ary tree: %v", err)
	}
}

// flowsPerLink counts the routes of the permutation perm (host h sends to
// perm[h]) over each link.
func flowsPerLink(tp *Topology, perm func(h int) int) []int {
	count := make([]int, len(tp.Links()))
	for s := range tp.Hosts() {
		for _, l := range tp.Route(s, perm(s), nil) {
			count[l]++
		}
	}
	return count
}

// TestDmodkSpreadsOverRemainingUplinks: D-mod-k on a link-tapered tree
// puts a shift permutation evenly on the uplinks that remain.
func TestDmodkSpreadsOverRemainingUplinks(t *testing.T) {
	between := func(tp *Topology, l int) bool {
		link := tp.Links()[l]
		return int(link.From) >= tp.Hosts() && int(link.To) >= tp.Hosts()
	}
	for _, tc := range []struct {
		name     string
		k, n     int
		taper    float64
		shift    int
		min, max int // flows on every switch-to-switch link
	}{
		// Leaf L sends to leaf L+1: host 32L+i goes up port
		// (32(L+1)+i) mod 16 = i mod 16, so i and i+16 share each of the 16
		// uplinks; spine j takes those two down to leaf L+1. 2 everywhere.
		{"32-ary 2-tree 2:1", 32, 2, 2, 32, 2, 2},
		// Pod p sends to pod p+1: host i of a leaf goes up port i mod 2 (2
		// per uplink); level-1 switch a of the pod gets 2 flows from each
		// leaf x, all bound for leaf x of the next pod, so up port x (d's
		// digit 1) carries 2, and so does every link down.
		{"4-ary 3-tree 2:1", 4, 3, 2, 16, 2, 2},
		// 24 uplinks for 32 hosts: i mod 24 puts hosts 0..7 and 24..31
		// together on ports 0..7, the other 16 alone.
		{"32-ary 2-tree 4:3", 32, 2, 32.0 / 24, 32, 1, 2},
	} {
		tp, err := FatTree(tc.k, tc.n, link100G, tc.taper)
		if err != nil {
			t.Fatal(err)
		}
		count := flowsPerLink(tp, func(h int) int { return (h + tc.shift) % tp.Hosts() })
		used := map[int]int{}
		for l, c := range count {
			if between(tp, l) {
				used[c]++
				if c < tc.min || c > tc.max {
					t.Errorf("%s: link %s->%s carries %d flows, want %d..%d", tc.name, tp.Label(tp.Links()[l].From), tp.Label(tp.Links()[l].To), c, tc.min, tc.max)
				}
			}
		}
		if tc.name == "32-ary 2-tree 4:3" && (used[2] != 32*8*2 || used[1] != 32*16*2) {
			t.Errorf("%s: links by flows carried %v; want 512 with 2 (ports 0..7 up and down) and 1024 with 1", tc.name, used)
		}
	}
}

// TestHashedTaperedUplinks: ECMP on a 2:1 link-tapered tree spreads one
// pair's flows over all 16 remaining uplinks of the source leaf.
func TestHashedTaperedUplinks(t *testing.T) {
	tp, err := FatTree(32, 2, link100G, 2)
	if err != nil {
		t.Fatal(err)
	}
	up := map[int32]int{}
	for i := range uint64(1600) {
		path := tp.RouteHashed(0, 1000, splitmix(i), nil)
		if !validPath(tp, 0, 1000, path) || len(path) != 4 {
			t.Fatalf("hashed route %v", path)
		}
		up[path[1]]++
	}
	// 1600 draws over 16 uplinks: 100 each on average; a binomial
	// standard deviation of 9.7 makes 50 a bound the fixed hashes pass.
	if len(up) != 16 {
		t.Errorf("hashed routes used %d uplinks of leaf 0, want all 16", len(up))
	}
	for l, c := range up {
		if c < 50 {
			t.Errorf("uplink %d carried %d of 1600 hashed routes, want about 100", l, c)
		}
	}
}

// TestFailedLinkDetoursSpread: on the 32-ary 2-tree, with leaf 0's link to
// spine 0 failed both ways, the transpose permutation (host 32L+i sends to
// 32i+L) sends all of leaf 0's 31 remote flows to hosts 32i, whose D-mod-k
// port is 0. Their detours take survivor 32i mod 31 of the 31 surviving
// uplinks: i mod 31 for i = 1..31, every one once; taking the lowest
// link, as collsim did, puts all 31 on spine 1. ECMP keeps hashing, over
// the survivors; the bisection loses exactly the failed link.
func TestFailedLinkDetoursSpread(t *testing.T) {
	tree, err := FatTree(32, 2, link100G, 1)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := tree.LinkNamed("s0.0", "s1.0")
	down, _ := tree.LinkNamed("s1.0", "s0.0")
	broken, err := tree.WithoutLinks([]int{up, down})
	if err != nil {
		t.Fatal(err)
	}
	transpose := func(h int) int { return h%32*32 + h/32 }
	spines := map[int32]bool{}
	lowest := map[int32]bool{}
	detoured := 0
	hops := broken.hopTables()
	for s := range broken.Hosts() {
		d := transpose(s)
		path := broken.Route(s, d, nil)
		if !validPath(broken, s, d, path) || len(path) != len(tree.Route(s, d, nil)) {
			t.Fatalf("route %d->%d: %v", s, d, path)
		}
		if slices.Equal(path, tree.Route(s, d, nil)) {
			continue
		}
		detoured++
		spines[broken.Links()[path[1]].To] = true
		old := broken.walkHops(int32(s), int32(d), hops(int32(d)), broken.dead, pickLowest, 0, nil)
		lowest[broken.Links()[old[1]].To] = true
	}
	if detoured != 31 || len(spines) != 31 || len(lowest) != 1 {
		t.Errorf("%d routes detoured over %d spines (lowest links: %d); want 31 over 31 (1)", detoured, len(spines), len(lowest))
	}

	// ECMP: a flow whose hash picked the dead port (h mod 32 = 0) takes a
	// survivor by hash; the others keep their paths.
	if !broken.Hashes() {
		t.Fatal("a fat-tree with a failed link stopped hashing")
	}
	rehashed := map[int32]bool{}
	for i := range uint64(3200) {
		h := splitmix(i)
		path := broken.RouteHashed(1, 32, h, nil)
		if !validPath(broken, 1, 32, path) || len(path) != 4 {
			t.Fatalf("hashed route %v", path)
		}
		if whole := tree.RouteHashed(1, 32, h, nil); h%32 != 0 && !slices.Equal(path, whole) {
			t.Fatalf("hash %x: route %v changed from %v though it avoids the failed link", h, path, whole)
		} else if h%32 == 0 {
			rehashed[path[1]] = true
		}
	}
	// About 100 of 3200 hashes hit port 0; 31 survivors each miss all of
	// them with probability (30/31)^100 < 4%: 25 is a safe floor.
	if len(rehashed) < 25 {
		t.Errorf("rehashed flows used %d surviving uplinks, want nearly all 31", len(rehashed))
	}

	// Bisection: leaves 0..15 against 16..31. Leaf 0 has 31 uplinks left,
	// the other 15 leaves 32: 511 links up. Spine 0 takes 15 of them and
	// has 16 links down to leaves 16..31; the others take 16 each: all
	// 511 get through, and back the same way. 511 x 12.5 GB/s.
	const B = 12.5e9
	if got := broken.Bisection(); math.Abs(got-511*B) > 1e-9*got {
		t.Errorf("bisection with a failed uplink %g links, want 511", got/B)
	}
	// On the 2:1 tree, the same failure leaves 16 x 16 - 1 = 255.
	tapered, _ := FatTree(32, 2, link100G, 2)
	tUp, _ := tapered.LinkNamed("s0.0", "s1.0")
	tDown, _ := tapered.LinkNamed("s1.0", "s0.0")
	if tb, err := tapered.WithoutLinks([]int{tUp, tDown}); err != nil || math.Abs(tb.Bisection()-255*B) > 1e-9*255*B {
		t.Errorf("2:1 tree with a failed uplink: %v, bisection %g links, want 255", err, tb.Bisection()/B)
	}
	// Half speed one way only: 511.5 links up, 512 back; the lesser.
	slow, _ := tree.Degraded(up, 0.5)
	if got := slow.Bisection(); math.Abs(got-511.5*B) > 1e-9*got {
		t.Errorf("bisection with a half-speed uplink %g links, want 511.5", got/B)
	}
	if tree.Bisection() != 512*B {
		t.Errorf("the whole tree's bisection changed: %g links", tree.Bisection()/B)
	}

	// A second failure on top of the first avoids both: leaf 1 loses
	// spine 0 too, 510 links.
	up1, _ := tree.LinkNamed("s0.1", "s1.0")
	down1, _ := tree.LinkNamed("s1.0", "s0.1")
	twice, err := broken.WithoutLinks([]int{up1, down1})
	if err != nil {
		t.Fatal(err)
	}
	if got := twice.Bisection(); math.Abs(got-510*B) > 1e-9*got || len(twice.Failed()) != 4 {
		t.Errorf("two failed uplinks: bisection %g links, %d failed links; want 510, 4", got/B, len(twice.Failed()))
	}
	for s := 0; s < 64; s++ {
		for d := range twice.Hosts() {
			if p := twice.Route(s, d, nil); !validPath(twice, s, d, p) {
				t.Fatalf("route %d->%d crosses a failed link: %v", s, d, p)
			}
		}
	}
}

// TestFailedRoutesProperty: on random (tapered) fat-trees with random
// failed switch links, every route, D-mod-k and hashed, is a fewest-hop
// path that avoids them, or the failures are refused as a cut.
func TestFailedRoutesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(2, 4).Draw(rt, "k")
		n := rapid.IntRange(2, 3).Draw(rt, "n")
		u := rapid.IntRange(1, k).Draw(rt, "uplinks")
		tree, err := FatTreeTapered(k, n, gig, float64(k)/float64(u), rapid.SampledFrom(TaperModes).Draw(rt, "mode"))
		if err != nil {
			rt.Fatal(err)
		}
		first := 2 * tree.Hosts() // switch-to-switch links follow the host links
		if first >= len(tree.Links()) {
			return
		}
		var failed []int
		for range rapid.IntRange(1, 3).Draw(rt, "failures") {
			l := rapid.IntRange(first/2, len(tree.Links())/2-1).Draw(rt, "pair")
			failed = append(failed, 2*l, 2*l+1)
		}
		broken, err := tree.WithoutLinks(failed)
		if err != nil {
			if !strings.Contains(err.Error(), "cannot reach") {
				rt.Fatal(err)
			}
			return
		}
		inStart, inLinks := broken.inAdjacency()
		for d := range broken.Hosts() {
			hops := broken.hopsTo(int32(d), broken.dead, inStart, inLinks)
			for s := range broken.Hosts() {
				for _, p := range [][]int32{broken.Route(s, d, nil), broken.RouteHashed(s, d, splitmix(uint64(s+d)), nil)} {
					if !validPath(broken, s, d, p) || s != d && len(p) != int(hops[s]) {
						rt.Fatalf("%s without %v: route %d->%d %v, shortest is %d links", tree.Name(), failed, s, d, p, hops[s])
					}
				}
			}
		}
		if b := broken.Bisection(); b <= 0 || b > tree.Bisection()*(1+1e-9) {
			rt.Fatalf("bisection %g with failures, %g without", b, tree.Bisection())
		}
	})
}

// TestFailedRoutesConcurrent: a topology with failed links is shared by
// simulations running in parallel (sweeps); its routes, computed from
// several goroutines at once while hop tables fill, are the ones computed
// alone. (Run with -race to check the tables' sharing too.)
func TestFailedRoutesConcurrent(t *testing.T) {
	tree, err := FatTree(8, 2, gig, 2)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := tree.LinkNamed("s0.0", "s1.0")
	down, _ := tree.LinkNamed("s1.0", "s0.0")
	routes := func(tp *Topology) [][]int32 {
		var all [][]int32
		for s := range tp.Hosts() {
			for d := range tp.Hosts() {
				all = append(all, tp.Route(s, d, nil), tp.RouteHashed(s, d, uint64(s*d), nil))
			}
		}
		return all
	}
	alone, _ := tree.WithoutLinks([]int{up, down})
	want := routes(alone)
	shared, _ := tree.WithoutLinks([]int{up, down})
	got := make([][][]int32, 4)
	done := make(chan int)
	for g := range got {
		go func() {
			got[g] = routes(shared)
			done <- g
		}()
	}
	for range got {
		<-done
	}
	for g := range got {
		for i := range want {
			if !slices.Equal(got[g][i], want[i]) {
				t.Fatalf("goroutine %d, route %d: %v, alone %v", g, i, got[g][i], want[i])
			}
		}
	}
}

// TestMultiNodeECMP: GPU nodes on a fat-tree route between nodes by ECMP
// as the fat-tree does (they had refused --routing ecmp, saying the
// machine had one route a pair): on random node shapes, rails and trees,
// every hashed route is a whole path of the same length as the D-mod-k
// route, inside a node the same path, and between nodes under two leaf
// switches different hashes take at least two different paths. On a
// torus, which does not hash, hashed routes are the routes.
func TestMultiNodeECMP(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(2, 4).Draw(rt, "k")
		tree, err := FatTree(k, 2, gig, 1)
		if err != nil {
			rt.Fatal(err)
		}
		devices := rapid.IntRange(1, 4).Draw(rt, "devices")
		spec := NodeSpec{Devices: devices, Fabric: gig, NIC: gig, Kind: rapid.SampledFrom(Fabrics).Draw(rt, "fabric")}
		if spec.Kind == FabricTree {
			spec.Switches = rapid.IntRange(1, devices).Draw(rt, "switches")
		}
		if devices >= 2 && rapid.Bool().Draw(rt, "two rails") {
			spec.Rails = 2 // the tree's hosts are the nodes' NICs, half on each rail
		}
		m, err := MultiNode(tree, spec)
		if err != nil {
			rt.Skip(err)
		}
		if !m.Hashes() {
			rt.Fatalf("%s on a fat-tree does not hash", m.Name())
		}
		spread := false
		rails := max(spec.Rails, 1)
		nodes := tree.Hosts() / rails
		for s := range m.Hosts() {
			for d := range m.Hosts() {
				base := m.Route(s, d, nil)
				// Unhashed, a route between nodes crosses the tree by its
				// own (D-mod-k) route between the source rail's NICs.
				if sn, dn := s/devices, d/devices; sn != dn {
					rail := s % devices * rails / devices
					if inner := tree.Route(rail*nodes+sn, rail*nodes+dn, nil); !containsRun(base, inner) {
						rt.Fatalf("%s: route %d->%d %v does not cross the tree by its route %v", m.Name(), s, d, base, inner)
					}
				}
				seen := map[string]bool{}
				for h := range uint64(8) {
					p := m.RouteHashed(s, d, splitmix(h+uint64(s*m.Hosts()+d)), nil)
					if !validPath(m, s, d, p) || len(p) != len(base) {
						rt.Fatalf("%s: hashed route %d->%d %v against %v", m.Name(), s, d, p, base)
					}
					if s/devices == d/devices && !slices.Equal(p, base) {
						rt.Fatalf("%s: inside a node, hashed route %d->%d %v differs from %v", m.Name(), s, d, p, base)
					}
					seen[fmt.Sprint(p)] = true
				}
				spread = spread || len(seen) > 1
			}
		}
		// Some pair can spread when some rail's NICs sit under two leaf
		// switches (a route of 4 links: up to a spine and down).
		canSpread := false
		for r := range rails {
			for a := range nodes {
				for b := range nodes {
					canSpread = canSpread || len(tree.Route(r*nodes+a, r*nodes+b, nil)) > 2
				}
			}
		}
		if spread != canSpread {
			rt.Fatalf("%s: pairs took several paths over 8 hashes: %v; some pair can: %v", m.Name(), spread, canSpread)
		}
	})
	torus, _ := Torus([]int{4}, gig)
	m, err := MultiNode(torus, NodeSpec{Devices: 2, Fabric: gig, NIC: gig, Kind: FabricSwitch})
	if err != nil {
		t.Fatal(err)
	}
	if m.Hashes() || !slices.Equal(m.RouteHashed(0, 7, 12345, nil), m.Route(0, 7, nil)) {
		t.Fatalf("a torus's nodes hash, or route otherwise when hashed")
	}
}

// containsRun reports whether run appears in a, in order and together.
func containsRun(a, run []int32) bool {
	for i := 0; i+len(run) <= len(a); i++ {
		if slices.Equal(a[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
