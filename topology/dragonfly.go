package topology

import "fmt"

// DragonflySpec sizes a dragonfly (Kim, Dally, Scott, Abts 2008): p hosts
// per router, a routers per group joined all-to-all by local links, h
// global links per router, g groups.
type DragonflySpec struct {
	P, A, H, G int
	Host       LinkSpec // host to router
	Local      LinkSpec // router to router inside a group
	Global     LinkSpec // router to router between groups
}

// Dragonfly builds a dragonfly with the consecutive ("absolute") global
// arrangement: a group's global ports are numbered q = i*h + j (router i,
// port j); port q leads to the (q mod (g-1))-th other group in increasing
// order, so with g-1 < a*h each pair of groups gets floor or ceil of
// a*h/(g-1) parallel global links, and a port is left unconnected when its
// counterpart would not exist. g may be at most a*h+1 (every group needs a
// link to every other); the balanced dragonfly has a = 2p = 2h and
// g = a*h+1.
//
// Minimal routing: local hop to the router owning a global link to the
// destination group, the global hop, a local hop to the destination router.
// Among parallel global links the route takes one that needs the fewest
// local hops, starting its search at number (src+dst) mod count, which
// spreads pairs of hosts over equally good links deterministically.
// RouteVia routes through an intermediate group instead (Valiant): minimally
// to the router the chosen global link reaches there, then minimally on: up
// to two global and three local hops. Bisection: computed from the graph
// (graphBisection). Counting the global links between the halves of the
// groups missed an odd number of groups (the halves split one), and host
// or local links slower than the global cut.
func Dragonfly(s DragonflySpec) (*Topology, error) {
	if s.P < 1 || s.A < 1 || s.H < 0 || s.G < 1 {
		return nil, fmt.Errorf("dragonfly: need p, a, g >= 1 and h >= 0 (p=%d a=%d h=%d g=%d)", s.P, s.A, s.H, s.G)
	}
	if s.G > 1 && s.G > s.A*s.H+1 {
		return nil, fmt.Errorf("dragonfly: g=%d groups need at least %d global ports per group, but a*h = %d*%d = %d; raise h or a, or use at most %d groups",
			s.G, s.G-1, s.A, s.H, s.A*s.H, s.A*s.H+1)
	}
	if hostsF, localF, globalF := float64(s.P)*float64(s.A)*float64(s.G), float64(s.A)*float64(s.A-1)*float64(s.G), float64(s.A)*float64(s.H)*float64(s.G); hostsF > maxHosts || 2*hostsF+localF+globalF > maxLinks {
		// (Global links counted too: h = 10^8 on 2 groups ran out of
		// memory building them: an audit.)
		return nil, fmt.Errorf("dragonfly: %g hosts, %g local and %g global links is more than collsim builds (%d hosts, %d links)", hostsF, localF, globalF, maxHosts, maxLinks)
	}
	specs := []struct {
		what string
		spec LinkSpec
		used bool
	}{{"host", s.Host, true}, {"local", s.Local, s.A > 1}, {"global", s.Global, s.G > 1}}
	for _, l := range specs {
		if err := l.spec.check("dragonfly " + l.what + " link"); err != nil && l.used {
			return nil, err
		}
	}
	hosts := s.P * s.A * s.G
	b := newBuilder(fmt.Sprintf("dragonfly p=%d a=%d h=%d g=%d", s.P, s.A, s.H, s.G), hosts)
	rt := func(group, i int) int32 { return int32(hosts + group*s.A + i) }
	for g := range s.G {
		for i := range s.A {
			b.vertex(fmt.Sprintf("r%d.%d", g, i))
		}
	}
	for h := range hosts {
		b.pair(int32(h), rt(h/s.P/s.A, h/s.P%s.A), s.Host)
	}
	localBase := int32(len(b.t.links))
	for g := range s.G {
		for i := range s.A {
			for j := range s.A {
				if i != j {
					b.link(rt(g, i), rt(g, j), s.Local)
				}
			}
		}
	}
	local := func(g, i, j int) int32 {
		return localBase + int32((g*s.A+i)*(s.A-1)+j-b2i(j > i))
	}
	// global[g][t] lists the link IDs from group g to group t; a link's
	// source router is found from its ID.
	ports := s.A * s.H
	global := make([][][]int32, s.G)
	for g := range global {
		global[g] = make([][]int32, s.G)
	}
	other := func(g, k int) int { return k + b2i(k >= g) } // k-th group other than g
	index := func(g, t int) int { return t - b2i(t > g) }  // inverse of other
	for g := 0; s.G > 1 && g < s.G; g++ {
		for q := range ports {
			t := other(g, q%(s.G-1))
			back := q/(s.G-1)*(s.G-1) + index(t, g)
			if back >= ports || t < g {
				continue // unconnected, or added from the other side
			}
			id := b.pair(rt(g, q/s.H), rt(t, back/s.H), s.Global)
			global[g][t] = append(global[g][t], id)
			global[t][g] = append(global[t][g], id+1)
		}
	}
	links := b.t.links
	// toGroup appends the hops from router si of group sg to group dg
	// (sg != dg): a local hop to the router owning the chosen global link,
	// and that link. Among parallel links it takes one needing the fewest
	// local hops (at either end, toward router di of dg), searching from
	// number spread mod count. It returns the router reached in dg.
	toGroup := func(path []int32, sg, si, dg, di, spread int) ([]int32, int) {
		cands := global[sg][dg]
		first := spread % len(cands)
		id, hops := int32(-1), 3
		for k := range cands {
			c := cands[(first+k)%len(cands)]
			h := b2i(int(links[c].From)-hosts-sg*s.A != si) + b2i(int(links[c].To)-hosts-dg*s.A != di)
			if h < hops {
				id, hops = c, h
			}
		}
		out := int(links[id].From) - hosts - sg*s.A
		if out != si {
			path = append(path, local(sg, si, out))
		}
		return append(path, id), int(links[id].To) - hosts - dg*s.A
	}
	// via routes host src to host dst through group mid (minimal when mid
	// is src's or dst's group).
	via := func(src, dst int32, mid int, path []int32) []int32 {
		sr, dr := int(src)/s.P, int(dst)/s.P
		sg, si, dg, di := sr/s.A, sr%s.A, dr/s.A, dr%s.A
		spread := int(src) + int(dst)
		path = append(path, 2*src)
		if mid != sg && mid != dg {
			// Into the intermediate group, aiming at any router there
			// (the one the link reaches), then on from it.
			path, si = toGroup(path, sg, si, mid, -1, spread)
			sg = mid
		}
		if sg != dg {
			path, si = toGroup(path, sg, si, dg, di, spread)
		}
		if si != di {
			path = append(path, local(dg, si, di))
		}
		return append(path, 2*dst+1)
	}
	route := func(src, dst int32, path []int32) []int32 {
		return via(src, dst, int(src)/s.P/s.A, path)
	}
	t := b.done(route, cutFromGraph)
	t.groups, t.hostsPerGroup, t.via = s.G, s.P*s.A, via
	return t, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
