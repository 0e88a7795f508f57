package cost

import (
	"math/bits"
)

// Broadcast trees on single-port NICs. A rank that has the vector sends it
// to its children one after another; the NIC is busy G = n beta per send,
// and each message arrives alpha after it leaves, so the child sent i-th
// (from 0) has the vector at T(parent) + alpha + (i+1) G. The trees' time
// is the latest arrival. (The LogP view of broadcast trees: Karp et al.
// 1993; Culler et al. 1993.)

// binaryBcast: the heap-ordered binary tree, children 2v+1 and 2v+2 sent in
// that order. Relative rank v = u-1 sits at depth d = floor(log2 u), and
// each 1 in u's d low bits is a second child, which waits G more: T(v) =
// d alpha + (d + ones) G. The latest is either the all-ones rank one level
// up, (D-1)(alpha + 2G) with D = floor(log2 p), or the bottom level's rank
// with the most ones, D alpha + (D + w) G, w the most ones among 0..p-2^D.
// Exact.
func binaryBcast(m Hockney, s size) Prediction {
	return exact(binaryTree(s.p, m.Alpha, s.n*m.Beta))
}

// binaryTree is binaryBcast's time for p ranks, latency alpha and send
// time g.
func binaryTree(p int, alpha, g float64) float64 {
	if p == 1 {
		return 0
	}
	D := log2Floor(p)
	rest := uint(p - 1<<D) // the bottom level holds u = 2^D .. p
	w := max(bits.OnesCount(rest), bits.Len(rest)-1)
	bottom := float64(D)*alpha + float64(D+w)*g
	above := float64(D-1) * (alpha + 2*g)
	return max(bottom, above)
}

// segmentedBinaryBcast: the binary tree (binaryBcast) moving k segments of
// s bytes, event-driven (ADAPT) or lock-step. Every rank with two children
// spends 2 s beta of its NIC per segment and receives one segment every
// 2 s beta, so no queue builds up and segment j reaches each rank 2 j s
// beta after the first: T = binaryTree(s beta) + 2(k-1) s beta, for p >= 3
// (the pipelined binary tree of Sanders, Speck and Traff 2009, single
// port). On 2 ranks it is the chain, alpha + k s beta. The lock-step tree
// takes the same time without noise: a rank's next step waits for its
// sends to leave, which the NIC made it wait for anyway. Exact when the
// segments are equal; with a shorter last segment s', between
// 2(k-1) s beta + binaryTree(s' beta) (the root cannot send the last one
// earlier, and it still has to go down) and the equal-segment time.
func segmentedBinaryBcast(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	seg, k, last := s.segments(65536)
	g := float64(min(seg, s.count)*s.elem) * m.Beta
	gl := float64(last*s.elem) * m.Beta
	if s.p == 2 {
		return exact(m.Alpha + float64(k-1)*g + gl)
	}
	pipe := 2 * float64(k-1) * g
	return between(pipe+binaryTree(s.p, m.Alpha, gl), pipe+binaryTree(s.p, m.Alpha, g))
}

// knomialBcast: the radix-4 tree. Relative rank v receives from v minus its
// lowest non-zero base-4 digit times its place, and sends to v + j 4^i for
// every lower place i, farthest first (i from high to low, j from 3 to 1),
// skipping ranks past p. Evaluated over the tree, rank by rank (O(p)):
// exact.
func knomialBcast(m Hockney, s size) Prediction {
	const k = 4
	if s.p == 1 {
		return exact(0)
	}
	g := s.n * m.Beta
	span := 1
	for span < s.p {
		span *= k
	}
	type node struct {
		v, span int
		t       float64
	}
	stack := []node{{0, span, 0}}
	latest := 0.0
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		latest = max(latest, n.t)
		sent := 0
		for i := n.span / k; i >= 1; i /= k {
			for j := k - 1; j >= 1; j-- {
				if c := n.v + j*i; c < s.p {
					sent++
					stack = append(stack, node{c, i, n.t + m.Alpha + float64(sent)*g})
				}
			}
		}
	}
	return exact(latest)
}

// scatterAllgather: the root sends rank root+i its block, i = 1..p-1, one
// after another (rank root+i has it at alpha + the G of blocks 1..i), and a
// ring allgather starts on each rank once it has its block. Upper bound:
// the scatter's end plus a ring allgather from then (ringAllgather). Lower
// bound: the ring allgather alone, and, for every rank, the arrival of its
// block plus the p-1 hops that block still makes around the ring (van de
// Geijn's broadcast; Thakur et al. 2005 price it as the plain sum).
func scatterAllgather(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	ring := ringAllgather(m, s).Time
	hops := func(c float64) float64 { return float64(s.p-1) * (m.Alpha + c*m.Beta) }
	end, lower := s.scatter(m, hops)
	return between(max(ring, lower), end+ring)
}

// scatter prices a linear scatter from the root (rank root+i's block sent
// i-th) and returns when the last block arrives, and the latest of each
// block's arrival plus after(its size in bytes).
func (s size) scatter(m Hockney, after func(c float64) float64) (end, latest float64) {
	q, rem := s.count/int64(s.p), s.count%int64(s.p)
	bytes := func(r int) float64 {
		c := q
		if int64(r) < rem {
			c++
		}
		return float64(c * s.elem)
	}
	latest = after(bytes(s.root))
	sent := 0.0
	for i := 1; i < s.p; i++ {
		r := (s.root + i) % s.p
		sent += bytes(r) * m.Beta
		end = m.Alpha + sent
		latest = max(latest, end+after(bytes(r)))
	}
	return end, latest
}
