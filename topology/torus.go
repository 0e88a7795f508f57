package topology

import (
	"fmt"
	"strings"
)

// Torus builds a k-ary n-cube with one host per router: dims gives k for
// each dimension; routers link to their neighbours in both directions,
// wrapping around (a dimension of size 2 has one neighbour, joined once).
//
// Routes are dimension-order: dimension 0 first, each the short way round
// (the positive way on a tie). Bisection: see torusBisection.
func Torus(dims []int, link LinkSpec) (*Topology, error) {
	if len(dims) == 0 {
		return nil, fmt.Errorf("torus: need at least one dimension")
	}
	hosts := 1
	var names []string
	for i, k := range dims {
		if k < 1 {
			return nil, fmt.Errorf("torus: dimension %d has size %d; sizes must be at least 1", i, k)
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
	bisection := torusBisection(dims, hosts) * link.Bandwidth
	if bisection < 0 {
		bisection = cutFromGraph
	}
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
	return b.done(route, bisection), nil
}

// torusBisection returns the links (one direction) across the cheapest cut
// that halves the hosts: across an even-sized dimension k, which cuts two
// links of each of the hosts/k rings along it (one when k is 2). With no
// even dimension no such cut halves the hosts (it left 13 hosts against
// 14 on a 3x3x3 torus and counted more links than 13 hosts have): -1, for
// the graph's cut between the first and second half of the hosts.
func torusBisection(dims []int, hosts int) float64 {
	best, largest := -1.0, 0
	for d, k := range dims {
		if k > dims[largest] {
			largest = d
		}
		if k%2 != 0 {
			continue
		}
		rings := 2.0
		if k == 2 {
			rings = 1
		}
		if cut := rings * float64(hosts/k); best < 0 || cut < best {
			best = cut
		}
	}
	if best >= 0 {
		return best
	}
	if dims[largest] == 1 {
		return 0
	}
	return -1
}
