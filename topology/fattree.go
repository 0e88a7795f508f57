package topology

import (
	"fmt"
	"math"
)

// FatTree builds a k-ary n-tree (Petrini and Vanneschi 1997): k^n hosts,
// n levels of k^(n-1) switches with k ports down and (below the top) k up.
// Level-l switch w connects up to every level-(l+1) switch whose index
// differs from w only in base-k digit l.
//
// taper >= 1 divides the bandwidth of the leaf switches' uplinks: a 2:1
// tapered tree has half the bandwidth above the leaves that it has below.
// (The bandwidth is scaled rather than the uplinks removed, which keeps the
// tree regular; for contention it is the same cut.)
//
// Routes go up to the lowest common level and down again, choosing up port
// d_l at level l for destination host d = (d_0, d_1, ...) in base k: the
// classic D-mod-k rule, which spreads the destinations below one leaf over
// all its uplinks. RouteHashed picks the up ports from a hash instead
// (ECMP: every shortest path is equally likely for a given flow). Bisection: half the hosts times the leaf uplink bandwidth.
func FatTree(k, levels int, link LinkSpec, taper float64) (*Topology, error) {
	if k < 1 || levels < 1 {
		return nil, fmt.Errorf("fat-tree: k and levels must be at least 1 (k=%d, levels=%d)", k, levels)
	}
	hostsF := math.Pow(float64(k), float64(levels))
	if hostsF > maxHosts || 2*hostsF*float64(levels) > maxLinks {
		return nil, fmt.Errorf("fat-tree: k^levels = %g hosts is more than collsim builds (%d hosts, %d links)", hostsF, maxHosts, maxLinks)
	}
	if !(taper >= 1) || math.IsInf(taper, 0) {
		return nil, fmt.Errorf("fat-tree: taper must be a ratio of at least 1 (1 is a full tree, 2 is 2:1), not %g", taper)
	}
	if err := link.check("fat-tree link"); err != nil {
		return nil, err
	}
	hosts := int(hostsF)
	perLevel := hosts / k
	name := fmt.Sprintf("fat-tree k=%d n=%d", k, levels)
	if taper > 1 {
		name += fmt.Sprintf(" taper %g:1", taper)
	}
	b := newBuilder(name, hosts)
	sw := func(level, w int) int32 { return int32(hosts + level*perLevel + w) }
	for l := range levels {
		for w := range perLevel {
			b.vertex(fmt.Sprintf("s%d.%d", l, w))
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
	// upBase[l] + 2*(w*k+j) is the link from level-l switch w up through
	// port j; the next ID is the link back down.
	upBase := make([]int32, levels)
	for l := 0; l+1 < levels; l++ {
		upBase[l] = int32(len(b.t.links))
		spec := link
		if l == 0 {
			spec.Bandwidth /= taper
		}
		for w := range perLevel {
			digit := (w / pow[l]) % k
			for j := range k {
				b.pair(sw(l, w), sw(l+1, w+(j-digit)*pow[l]), spec)
			}
		}
	}
	// climb routes up to the lowest common level, taking up port up(l) at
	// level l (D-mod-k by default, or by hash for ECMP), and down again.
	var climb func(src, dst int32, up func(l int) int, path []int32) []int32
	route := func(src, dst int32, path []int32) []int32 {
		return climb(src, dst, func(l int) int { return (int(dst) / pow[l]) % k }, path)
	}
	hashed := func(src, dst int32, h uint64, path []int32) []int32 {
		return climb(src, dst, func(l int) int { return int(h / uint64(pow[l]) % uint64(k)) }, path)
	}
	climb = func(src, dst int32, up func(l int) int, path []int32) []int32 {
		s, d := int(src), int(dst)
		top := 0 // lowest level whose switch subtree holds both hosts
		for s/pow[top+1] != d/pow[top+1] {
			top++
		}
		path = append(path, 2*src)
		w := s / k
		for l := 0; l < top; l++ {
			j := up(l)
			path = append(path, upBase[l]+int32(2*(w*k+j)))
			w += (j - (w/pow[l])%k) * pow[l]
		}
		for l := top - 1; l >= 0; l-- {
			// Down from level l+1 switch w to the level-l switch on the way
			// to d: the one whose digit l is d's leaf digit l.
			below := w + ((d/k/pow[l])%k-(w/pow[l])%k)*pow[l]
			j := (w / pow[l]) % k
			path = append(path, upBase[l]+int32(2*(below*k+j))+1)
			w = below
		}
		return append(path, 2*dst+1)
	}
	t := b.done(route, float64(hosts/2)*link.Bandwidth/taper)
	t.hashed = hashed
	return t, nil
}
