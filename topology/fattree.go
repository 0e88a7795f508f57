package topology

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// How a fat-tree is tapered (FatTreeTapered).
const (
	// TaperLinks tapers a tree as oversubscribed trees are built: a T:1
	// tree keeps k/T of each leaf switch's k uplinks, every one at full
	// speed, and the switches above the leaves that no kept uplink
	// reaches are not built. A lone message goes at full speed; traffic
	// that crosses the leaves' uplinks all at once shares fewer of them.
	TaperLinks = "links"
	// TaperBandwidth keeps every uplink and divides the leaf uplinks'
	// bandwidth by T instead. Its cut has the same total bandwidth as
	// TaperLinks, but it slows even a lone message crossing a leaf
	// switch's uplink T times, which no real tapered tree does: a
	// what-if, not a model of one.
	TaperBandwidth = "bandwidth"
)

// TaperModes lists the ways to taper a fat-tree; the first is the default.
var TaperModes = []string{TaperLinks, TaperBandwidth}

// FatTree builds a k-ary n-tree (see FatTreeTapered), tapered by removing
// leaf uplinks (TaperLinks).
func FatTree(k, levels int, link LinkSpec, taper float64) (*Topology, error) {
	return FatTreeTapered(k, levels, link, taper, TaperLinks)
}

// FatTreeTapered builds a k-ary n-tree (Petrini and Vanneschi 1997): k^n
// hosts, n levels of k^(n-1) switches with k ports down and (below the top)
// k up. Level-l switch w connects up to every level-(l+1) switch whose
// index differs from w only in base-k digit l. Every link is link.
//
// taper >= 1 thins the tree above the leaf switches, as mode says
// (TaperLinks if empty):
//
//   - TaperLinks: each leaf switch keeps u = k/taper uplinks, ports 0..u-1,
//     so taper must be k/u for a whole u in 1..k (within 0.1%: 1.333 is
//     32/24 on a 32-ary tree); any other taper is an error naming the
//     whole ratios that fit k. The upper levels keep the full tree's 1:1
//     ratio, as real oversubscribed trees taper at the edge: a level-1
//     switch of port p >= u would have no leaf below it, so no switch
//     above the leaves whose base-k digit 0 is u or more is built. On a
//     2-level tree that is u spines of k; on 3 levels, u of each pod's k
//     level-1 switches and the top-level switches above them. Switches
//     keep their full tree's names (s1.0..s1.15 in a 2:1 32-ary 2-tree).
//   - TaperBandwidth: every uplink stays and the leaf uplinks carry
//     1/taper of link's bandwidth (any taper >= 1).
//
// A 1-level tree (one switch) has no uplinks, so it cannot be tapered.
//
// Routes go up to the lowest common level and down again, choosing up port
// d_l at level l for destination host d = (d_0, d_1, ...) in base k: the
// classic D-mod-k rule, which spreads the destinations below one leaf over
// all its uplinks. With u < k uplinks a leaf takes port d mod u, which
// spreads them evenly over the uplinks that remain (k/u destinations of a
// leaf per uplink when u divides k) and still brings all traffic for one
// destination down one path. RouteHashed picks the up ports from a hash
// instead (ECMP: every shortest path is equally likely for a given flow;
// port h mod u at the leaf, base-k digit l of h above).
//
// Bisection: half the hosts times a leaf's uplink bandwidth per host
// (link's bandwidth times u/k, or divided by taper): with k even and n >= 2
// the first half of the hosts fills whole leaf switches and whole subtrees
// below the top, so every byte across the cut climbs a leaf uplink, and the
// levels above carry as much as the leaves' uplinks. Where the halves
// split a leaf (k odd) and the tree is tapered, the flow inside that leaf
// changes the answer, and it is computed from the graph instead.
func FatTreeTapered(k, levels int, link LinkSpec, taper float64, mode string) (*Topology, error) {
	if k < 1 || levels < 1 {
		return nil, fmt.Errorf("fat-tree: k and levels must be at least 1 (k=%d, levels=%d)", k, levels)
	}
	hostsF := math.Pow(float64(k), float64(levels))
	// Each limit named by itself (4^11 hosts, exactly the most, was
	// refused as too many hosts, for its 92 M links: an audit).
	if hostsF > maxHosts {
		return nil, fmt.Errorf("fat-tree: k^levels = %d^%d = %.0f hosts, more than collsim builds (%d)", k, levels, hostsF, maxHosts)
	}
	if links := 2 * hostsF * float64(levels); links > maxLinks {
		return nil, fmt.Errorf("fat-tree: %d^%d hosts on %d levels take %.0f links, more than collsim builds (%d)", k, levels, levels, links, maxLinks)
	}
	if !(taper >= 1) || math.IsInf(taper, 0) {
		return nil, fmt.Errorf("fat-tree: taper must be a ratio of at least 1 (1 is a full tree, 2 is 2:1), not %g", taper)
	}
	if mode == "" {
		mode = TaperLinks
	}
	if mode != TaperLinks && mode != TaperBandwidth {
		return nil, fmt.Errorf("fat-tree: unknown taper mode %q; valid: %s", mode, strings.Join(TaperModes, ", "))
	}
	if taper > 1 && levels == 1 {
		return nil, fmt.Errorf("fat-tree: a 1-level tree is one switch with no uplinks to taper; use taper 1, or 2 levels or more")
	}
	if err := link.check("fat-tree link"); err != nil {
		return nil, err
	}
	hosts := int(hostsF)
	perLevel := hosts / k
	up := k // uplinks kept per leaf switch
	name := fmt.Sprintf("fat-tree k=%d n=%d", k, levels)
	if mode == TaperLinks {
		var err error
		if up, err = keptUplinks(k, taper); err != nil {
			return nil, err
		}
		if up < k {
			name += fmt.Sprintf(" taper %s (%d of %d leaf uplinks)", ratio(k, up), up, k)
		}
	} else if taper > 1 {
		name += fmt.Sprintf(" taper %g:1 by bandwidth", taper)
	}
	// Above the leaves, only the switches whose digit 0 is below up are
	// built: kept of each level's perLevel, numbered compactly.
	kept := perLevel / k * up
	if levels == 1 {
		kept = 0
	}
	b := newBuilder(name, hosts)
	sw := func(level, w int) int32 {
		if level == 0 {
			return int32(hosts + w)
		}
		return int32(hosts + perLevel + (level-1)*kept + w/k*up + w%k)
	}
	for l := range levels {
		for w := range perLevel {
			if l == 0 || w%k < up {
				b.vertex(fmt.Sprintf("s%d.%d", l, w))
			}
		}
	}
	for h := range hosts {
		b.pair(int32(h), sw(0, h/k), link) // host h: up 2h, down 2h+1
	}
	pow := make([]int, levels+1)
	pow[0] = 1
	for i := 1; i <= levels; i++ {
		pow[i] = pow[i-1] * k
	}
	// upLink(l, w, j) is the link from level-l switch w up through port j;
	// the next ID is the link back down. A leaf has up ports, a switch
	// above it k.
	upBase := make([]int32, levels)
	upLink := func(l, w, j int) int32 {
		if l == 0 {
			return upBase[0] + int32(2*(w*up+j))
		}
		return upBase[l] + int32(2*((w/k*up+w%k)*k+j))
	}
	for l := 0; l+1 < levels; l++ {
		upBase[l] = int32(len(b.t.links))
		spec, ports := link, k
		if l == 0 {
			ports = up
			if mode == TaperBandwidth {
				spec.Bandwidth /= taper
			}
		}
		for w := range perLevel {
			if l > 0 && w%k >= up {
				continue // not built
			}
			digit := (w / pow[l]) % k
			for j := range ports {
				b.pair(sw(l, w), sw(l+1, w+(j-digit)*pow[l]), spec)
			}
		}
	}
	// climb routes up to the lowest common level, taking at level l the up
	// port upPort(l, dst, h) gives (D-mod-k, or by hash for ECMP), and down
	// again. (A port function passed in escaped: an allocation a route,
	// 65,280 of the 134,538 a 256-rank pairwise alltoall made on the flow
	// model.)
	upPort := func(l int, dst int32, h uint64, byHash bool) int {
		switch {
		case byHash && l == 0:
			return int(h % uint64(up))
		case byHash:
			return int(h / uint64(pow[l]) % uint64(k))
		case l == 0:
			return int(dst) % up
		}
		return (int(dst) / pow[l]) % k
	}
	climb := func(src, dst int32, h uint64, byHash bool, path []int32) []int32 {
		s, d := int(src), int(dst)
		top := 0 // lowest level whose switch subtree holds both hosts
		for s/pow[top+1] != d/pow[top+1] {
			top++
		}
		path = append(path, 2*src)
		w := s / k
		for l := 0; l < top; l++ {
			j := upPort(l, dst, h, byHash)
			path = append(path, upLink(l, w, j))
			w += (j - (w/pow[l])%k) * pow[l]
		}
		for l := top - 1; l >= 0; l-- {
			// Down from level l+1 switch w to the level-l switch on the way
			// to d: the one whose digit l is d's leaf digit l, which w
			// reaches through that switch's up port j.
			below := w + ((d/k/pow[l])%k-(w/pow[l])%k)*pow[l]
			j := (w / pow[l]) % k
			path = append(path, upLink(l, below, j)+1)
			w = below
		}
		return append(path, 2*dst+1)
	}
	route := func(src, dst int32, path []int32) []int32 {
		return climb(src, dst, 0, false, path)
	}
	hashed := func(src, dst int32, h uint64, path []int32) []int32 {
		return climb(src, dst, h, true, path)
	}
	bisection := float64(hosts/2) * link.Bandwidth // the host links: a full tree's cut
	switch tapered := up < k || mode == TaperBandwidth && taper > 1; {
	case tapered && k%2 == 1:
		bisection = cutFromGraph
	case up < k:
		bisection *= float64(up) / float64(k)
	case tapered:
		bisection /= taper
	}
	t := b.done(route, bisection)
	switch {
	case hosts > k:
		// Hosts below different top-level subtrees: up through every
		// level and down again.
		t.diameter = 2 * levels
	case hosts > 1:
		t.diameter = 2 // one switch
	}
	t.hashed = hashed
	return t, nil
}

// keptUplinks returns how many of a leaf switch's k uplinks a taper of
// taper:1 by links keeps, or an error naming the tapers that work.
func keptUplinks(k int, taper float64) (int, error) {
	u := int(math.Round(float64(k) / taper))
	if u >= 1 && math.Abs(float64(k)/float64(u)-taper) <= 1e-3*taper {
		return u, nil
	}
	var whole []string
	for t := 1; t <= k; t++ {
		if k%t == 0 {
			whole = append(whole, strconv.Itoa(t))
		}
	}
	// The nearest tapers as numbers a config takes (within the 0.1% above),
	// each with the uplinks it keeps: "8/6 = 1.333" was copied as 8/6,
	// which is not a number.
	var near []string
	for _, n := range []float64{math.Floor(float64(k) / taper), math.Ceil(float64(k) / taper)} {
		if s := fmt.Sprintf("%.4g (%d/%g: %g kept)", float64(k)/n, k, n, n); n >= 1 && (len(near) == 0 || near[0] != s) {
			near = append(near, s)
		}
	}
	return 0, fmt.Errorf("fat-tree: taper %g would keep %d/%g = %.3g of each leaf switch's %d uplinks, but tapering removes whole uplinks: the taper must be %d/u for u uplinks kept (whole ratios: %s; nearest: %s), or taper by bandwidth instead",
		taper, k, taper, float64(k)/taper, k, k, strings.Join(whole, ", "), strings.Join(near, ", "))
}

// ratio names a taper that keeps up of k uplinks: "2:1" where it is
// whole, "32:24" where it is not.
func ratio(k, up int) string {
	if k%up == 0 {
		return fmt.Sprintf("%d:1", k/up)
	}
	return fmt.Sprintf("%d:%d", k, up)
}
