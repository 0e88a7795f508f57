package topology

import (
	"fmt"
	"slices"
	"strings"
)

// Torus builds a k-ary n-cube with one host per router: dims gives k for
// each dimension; routers link to their neighbours in both directions,
// wrapping around (a dimension of size 2 has one neighbour, joined once).
//
// Routes are dimension-order: dimension 0 first, each the short way round
// (the positive way on a tie). Bisection: see torusBisection.
func Torus(dims []int, link LinkSpec) (*Topology, error) {
	if len(dims) == 0 || len(dims) > 62 {
		// (At most 62: torusBisection takes the dimensions as bits.)
		return nil, fmt.Errorf("torus: %d dimensions; give 1 to 62", len(dims))
	}
	hosts := 1
	var names []string
	for i, k := range dims {
		if k < 1 {
			return nil, fmt.Errorf("torus: dimension %d has size %d; sizes must be at least 1", i, k)
		}
		if k > maxHosts/hosts {
			// (k checked before it multiplies: 2 x 2^62 wrapped to no
			// hosts, or to a length makeslice refused: an audit.)
			return nil, fmt.Errorf("torus: more hosts than collsim builds (%d hosts, %d links)", maxHosts, maxLinks)
		}
		hosts *= k
		if hosts > maxHosts || hosts*2*(len(dims)+1) > maxLinks {
			return nil, fmt.Errorf("torus: more hosts than collsim builds (%d hosts, %d links)", maxHosts, maxLinks)
		}
		names = append(names, fmt.Sprint(k))
	}
	if err := link.check("torus link"); err != nil {
		return nil, err
	}
	b := newBuilder("torus "+strings.Join(names, "x"), hosts)
	for r := range hosts {
		b.vertex(fmt.Sprintf("r%d", r))
	}
	for h := range hosts {
		b.pair(int32(h), int32(hosts+h), link)
	}
	stride := make([]int, len(dims))
	stride[0] = 1
	for i := 1; i < len(dims); i++ {
		stride[i] = stride[i-1] * dims[i-1]
	}
	neighbour := func(r, d, dir int) int {
		c := r / stride[d] % dims[d]
		return r + ((c+dir+dims[d])%dims[d]-c)*stride[d]
	}
	// out[(r*n+d)*2+dir] is the link from router r one step along dimension
	// d in direction + (dir 0) or - (dir 1).
	n := len(dims)
	out := make([]int32, hosts*n*2)
	for i := range out {
		out[i] = -1
	}
	for r := range hosts {
		for d, k := range dims {
			if k == 1 {
				continue
			}
			out[(r*n+d)*2] = b.link(int32(hosts+r), int32(hosts+neighbour(r, d, +1)), link)
			if k > 2 {
				out[(r*n+d)*2+1] = b.link(int32(hosts+r), int32(hosts+neighbour(r, d, -1)), link)
			} else {
				out[(r*n+d)*2+1] = out[(r*n+d)*2]
			}
		}
	}
	links, order := torusBisection(dims, hosts)
	bisection := links * link.Bandwidth
	route := func(src, dst int32, path []int32) []int32 {
		path = append(path, 2*src)
		r := int(src)
		for d, k := range dims {
			delta := (int(dst)/stride[d]%k - r/stride[d]%k + k) % k
			dir, steps := 0, delta
			if delta > k/2 {
				dir, steps = 1, k-delta
			}
			for range steps {
				path = append(path, out[(r*n+d)*2+dir])
				r = neighbour(r, d, 1-2*dir)
			}
		}
		return append(path, 2*dst+1)
	}
	t := b.done(route, bisection)
	// The graph's bisection, once a link fails, tries the cut the form
	// chose and one across each dimension (not only the hosts' numbering,
	// which cuts across the last).
	t.halves = append(t.halves, rankIn(dims, stride, order))
	for d := range dims {
		o := []int{d}
		for e := len(dims) - 1; e >= 0; e-- {
			if e != d {
				o = append(o, e)
			}
		}
		t.halves = append(t.halves, rankIn(dims, stride, o))
	}
	if hosts > 1 {
		// A host link at each end and, along each dimension, at most
		// floor(k/2) steps the short way round.
		t.diameter = 2
		for _, k := range dims {
			t.diameter += k / 2
		}
	}
	return t, nil
}

// torusBisection returns the links (one direction) across the cheapest
// of the cuts that halve the hosts across one dimension d of size k:
//   - k even: two links of each of the hosts/k rings along d (one when k
//     is 2);
//   - k odd: each ring along d is still cut twice, between the first
//     (k-1)/2 slabs across d and the last, and the middle slab (a torus
//     of the other dimensions) is itself halved the cheapest way, so two
//     links a ring plus that slab's own bisection (a 2x9 torus: 4 ring
//     links and 1 in the middle slab, where cutting its 2 took 9: an
//     audit).
//
// Each is set against cutting the smaller half's host links (their
// routers on the other side), here and in a middle slab: 13 of a 3x3x3
// torus's hosts are cut off by their 13 links, where cutting its rings
// takes 26.
//
// order lists the dimensions, the one cut across first, in the order
// whose ranking of the hosts (rankIn) halves them along that cut.
func torusBisection(dims []int, hosts int) (links float64, order []int) {
	type best struct {
		cut   float64
		order []int // the dimensions in the mask, most significant first
	}
	memo := map[uint64]best{}
	var solve func(mask uint64, hosts int) best
	solve = func(mask uint64, hosts int) best {
		if b, ok := memo[mask]; ok {
			return b
		}
		// Cutting the host links of the smaller half, its routers on the
		// other side, is one way (a ring of 3 hosts: 1 host link, not 2
		// ring links); any order of the dimensions then.
		b := best{cut: float64(hosts / 2)}
		for d := len(dims) - 1; d >= 0; d-- {
			if mask&(1<<d) != 0 {
				b.order = append(b.order, d)
			}
		}
		for d, k := range dims {
			if mask&(1<<d) == 0 || k == 1 {
				continue
			}
			c, rest := 0.0, []int(nil)
			switch {
			case k == 2:
				c = float64(hosts / 2)
			case k%2 == 0:
				c = 2 * float64(hosts/k)
			default:
				inner := solve(mask&^(1<<d), hosts/k)
				c, rest = 2*float64(hosts/k)+inner.cut, inner.order
			}
			if c < b.cut {
				b.cut, b.order = c, append([]int{d}, rest...)
				for e := len(dims) - 1; e >= 0; e-- {
					if e != d && mask&(1<<e) != 0 && !slices.Contains(b.order, e) {
						b.order = append(b.order, e)
					}
				}
			}
		}
		memo[mask] = b
		return b
	}
	b := solve(1<<len(dims)-1, hosts)
	return b.cut, b.order
}

// rankIn ranks the torus's hosts (coordinate d of host h is h/stride[d]
// mod dims[d]) by their coordinates, order[0] the most significant: the
// first half in that ranking lies on one side of a cut across order[0]
// (and, in its middle slab, across order[1], ...).
func rankIn(dims, stride, order []int) func(h int32) int {
	return func(h int32) int {
		key := 0
		for _, d := range order {
			key = key*dims[d] + int(h)/stride[d]%dims[d]
		}
		return key
	}
}
