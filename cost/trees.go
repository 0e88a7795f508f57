package cost

import (
	"math"
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
	pl := s.pipeline(m)
	g, gl := pl.g, pl.gLast
	if s.p == 2 {
		return exact(m.Alpha + float64(pl.k-1)*g + gl)
	}
	pipe := 2 * float64(pl.k-1) * g
	return between(pipe+binaryTree(s.p, m.Alpha, gl), pipe+binaryTree(s.p, m.Alpha, g))
}

// knomialBcast: the radix-4 tree. Relative rank v receives from v minus its
// lowest non-zero base-4 digit times its place, and sends to v + j 4^i for
// every lower place i (i from high to low, j from 1 to 3, as Open MPI's
// k-nomial tree orders them),
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
			for j := 1; j < k; j++ {
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

// inOrderBinaryReduce: Open MPI's in-order binary tree (rank p-1 at the
// top, ranks below its middle in its left subtree, the rest in its right,
// recursively), whole vectors up the tree. A rank with the vector of each
// child reduced sends it up: the child's message arrives alpha after it
// leaves and is taken in (G = n beta) when the parent's port is free, one
// at a time in order of arrival, and reduced (n gamma) when the parent's
// CPU is free, one after the other: children whose messages arrive at
// h1 <= h2 are taken in by i1 = h1 + G and i2 = max(h2, i1) + G, and both
// reduced by max(i2, i1 + n gamma) + n gamma. Evaluated rank by rank over
// the tree (O(p)). If the reduce's root is not rank p-1,
// rank p-1 then sends it the result, which it takes once its own send up
// the tree has left. Exact.
func inOrderBinaryReduce(m Hockney, s size) Prediction {
	g, red := s.n*m.Beta, s.n*m.Gamma
	// ready returns when the top of the subtree [lo, hi] (rank hi) has
	// reduced its children's vectors, noting the reduce's root's time.
	var ready func(lo, hi int) float64
	rootReady := 0.0
	ready = func(lo, hi int) float64 {
		mid := (lo + hi - 1) / 2
		var heads []float64
		if hi-1 >= lo && mid >= lo {
			heads = append(heads, ready(lo, mid)+m.Alpha)
		}
		if hi-1 >= mid+1 {
			heads = append(heads, ready(mid+1, hi-1)+m.Alpha)
		}
		t := 0.0
		switch len(heads) {
		case 1:
			t = heads[0] + g + red
		case 2:
			first, second := min(heads[0], heads[1]), max(heads[0], heads[1])
			in1 := first + g
			in2 := max(second, in1) + g
			t = max(in2, in1+red) + red
		}
		if hi == s.root {
			rootReady = t
		}
		return t
	}
	top := ready(0, s.p-1)
	if s.root == s.p-1 || s.p == 1 {
		return exact(top)
	}
	return exact(max(top+m.Alpha+g, rootReady+g))
}

// splitBinaryBcast: Open MPI's split binary tree (collectives' splitBinary):
// the root sends the first half of the vector (h0 = n/2 elements rounded
// down) to its first child and the second (h1) to its second, down the
// heap-ordered binary tree; then every rank sends its half to its mirror
// image in the other subtree, after its children, and takes in the other
// half from it, or, lacking a mirror, from the root, which sends those
// after its two halves, in rank order. A rank's NIC sends its messages one
// after another; its port takes in its two messages in order of arrival.
// Mirror images share a depth: the one whose half arrives first is never
// held up by the other's (which leaves only after that one has its own
// half), so each pair is settled in that order, depth by depth. Evaluated
// rank by rank (O(p)). Exact. With segments smaller than a half,
// splitBinarySegmented.
func splitBinaryBcast(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	if big := s.count - s.count/2; s.segment > 0 && s.segment < big {
		return splitBinarySegmented(m, s)
	}
	halfG := [2]float64{float64(s.count/2*s.elem) * m.Beta, float64((s.count-s.count/2)*s.elem) * m.Beta}
	side, mirror := splitSide, splitMirror
	kids := func(v int) int { return max(0, min(2, s.p-(2*v+1))) }
	head := make([]float64, s.p) // the half from the parent reaches v's port
	got := make([]float64, s.p)  // v has its own half
	end := 0.0
	// The root: its halves, then the other halves for ranks without a mirror.
	if s.p > 1 {
		head[1] = m.Alpha
	}
	if s.p > 2 {
		head[2] = halfG[0] + m.Alpha
	}
	rootFree := halfG[0]
	if s.p > 2 {
		rootFree += halfG[1]
	}
	fromRoot := make([]float64, s.p) // when the root's other half reaches v's port
	for u := 1; u < s.p; u++ {
		if mirror(u) >= s.p {
			fromRoot[u] = rootFree + m.Alpha
			rootFree += halfG[1-side(u)]
		}
	}
	end = rootFree
	// take settles v's port: its own half (g1 long) reaching it at h1, the
	// other (g2) at h2; it returns when v has its own half and the other.
	take := func(h1, g1, h2, g2 float64) (own, other float64) {
		if h1 <= h2 {
			own = h1 + g1
			return own, max(h2, own) + g2
		}
		other = h2 + g2
		return max(h1, other) + g1, other
	}
	sendHalf := func(v int) { // v forwards its half to its children
		g := halfG[side(v)]
		for i := range kids(v) {
			head[2*v+1+i] = got[v] + float64(i)*g + m.Alpha
		}
	}
	for first := 1; first < s.p; first = 2*first + 1 { // depth by depth
		last := min(2*first, s.p-1)
		for v := first; v <= last; v++ {
			w := mirror(v)
			g := halfG[side(v)]
			if w >= s.p {
				var other float64
				got[v], other = take(head[v], g, fromRoot[v], halfG[1-side(v)])
				end = max(end, other, got[v]+float64(kids(v))*g)
				sendHalf(v)
				continue
			}
			if side(v) == 1 {
				continue // settled with its left mirror image
			}
			a, b := v, w // a's half arrives first
			if head[w] < head[v] {
				a, b = w, v
			}
			ga, gb := halfG[side(a)], halfG[side(b)]
			got[a] = head[a] + ga
			toB := got[a] + float64(kids(a))*ga + m.Alpha // a's half reaches b's port
			var otherB float64
			got[b], otherB = take(head[b], gb, toB, ga)
			toA := got[b] + float64(kids(b))*gb + m.Alpha
			otherA := max(toA, got[a]) + gb
			end = max(end, otherA, otherB, toA-m.Alpha+gb, toB-m.Alpha+ga)
			sendHalf(a)
			sendHalf(b)
		}
	}
	return exact(end)
}

// splitSide is the half relative rank v >= 1 of the split binary tree
// gets first: 0 in the root's left subtree, 1 in its right.
func splitSide(v int) int {
	d := bits.Len(uint(v+1)) - 1
	if v-(1<<d-1) < (1<<d)/2 {
		return 0
	}
	return 1
}

// splitMirror is v's mirror image in the other subtree (same depth, same
// place), which may be past the last rank.
func splitMirror(v int) int {
	d := bits.Len(uint(v+1)) - 1
	if splitSide(v) == 0 {
		return v + (1<<d)/2
	}
	return v - (1<<d)/2
}

// splitBinarySegmented: the split binary tree with each half pipelined
// down its subtree in k segments of s elements (the larger half's k).
// Bounds, checked by simulation as the segmented trees' are. Lower: the
// root's NIC sends the whole vector before any rank can have it, alpha + n
// beta; and the deepest rank (depth D) gets its half's last segment (s'
// elements) only after the root has sent the k_h - 1 before it and the
// segment has made D hops: (k_h - 1) s beta + D (alpha + s' beta), the
// smaller over the two halves. Upper: the halves' descent as the
// segmented binary tree's (binaryTree(s beta) + 2(k-1) s beta: every rank
// with two children sends 2 segments per segment time), then the swap of
// halves, alpha + h beta, twice over for a swap that crowds a port still
// taking in segments, and the root's m halves for ranks without a mirror
// (h the larger half).
func splitBinarySegmented(m Hockney, s size) Prediction {
	h := [2]int64{s.count / 2, s.count - s.count/2}
	seg := s.segment
	depth := float64(log2Floor(s.p))
	lower := m.Alpha + s.n*m.Beta
	path := math.Inf(1)
	for _, c := range h {
		k := max(1, (c+seg-1)/seg)
		last := c - (k-1)*seg
		path = min(path, float64((k-1)*seg*s.elem)*m.Beta+depth*(m.Alpha+float64(last*s.elem)*m.Beta))
	}
	lower = max(lower, path)
	k := (h[1] + seg - 1) / seg
	g := float64(seg*s.elem) * m.Beta
	hg := float64(h[1]*s.elem) * m.Beta
	mirrorless := 0
	for u := 1; u < s.p; u++ {
		if splitMirror(u) >= s.p {
			mirrorless++
		}
	}
	upper := binaryTree(s.p, m.Alpha, g) + 2*float64(k-1)*g + 2*(m.Alpha+hg) + float64(mirrorless)*hg
	return Prediction{Time: upper, Lower: lower}
}

// heapReduce is the time a heap-ordered binary tree (children 2v+1, 2v+2)
// takes to reduce one message of g send time and red reduction time to
// its root, each rank taking its children's messages in order of arrival
// and reducing them one after another (as inOrderBinaryReduce).
func heapReduce(p int, alpha, g, red float64) float64 {
	return heapReduceOrdered(p, alpha, g, red, false)
}

// heapReduceOrdered is heapReduce, or, inOrder, with each rank reducing
// its children in their order in the tree (2v+1, then 2v+2) whatever the
// order their messages arrive in, as Open MPI's generic reduce waits for
// them. The port takes the messages in as they come; in order, a tie is
// taken in either order (2v+2's first is the later end).
func heapReduceOrdered(p int, alpha, g, red float64, inOrder bool) float64 {
	var ready func(v int) float64
	ready = func(v int) float64 {
		var heads []float64
		for _, c := range []int{2*v + 1, 2*v + 2} {
			if c < p {
				heads = append(heads, ready(c)+alpha)
			}
		}
		switch len(heads) {
		case 1:
			return heads[0] + g + red
		case 2:
			if !inOrder {
				first, second := min(heads[0], heads[1]), max(heads[0], heads[1])
				in1 := first + g
				in2 := max(second, in1) + g
				return max(in2, in1+red) + red
			}
			in := [2]float64{heads[0] + g, heads[1] + g}
			if heads[1] <= heads[0] {
				in[0] = max(heads[0], in[1]) + g
			} else {
				in[1] = max(heads[1], in[0]) + g
			}
			return max(in[1], in[0]+red) + red
		}
		return 0
	}
	return ready(0)
}

// pipelinedBinaryReduce: Open MPI's generic reduce on the binary tree
// (reduce/pipelined_binary) in k segments. Bounds, checked by simulation:
// the lock-step tree's lower bound (the deepest leaf's last segment
// climbing, the root's port, its CPU), and k times one segment's tree
// time with the children reduced in tree order (heapReduceOrdered).
func pipelinedBinaryReduce(m Hockney, s size) Prediction {
	pr := segmentedBinaryReduce(m, s)
	if s.p <= 2 {
		return pr
	}
	pl := s.pipeline(m)
	pr.Time = heapReduceOrdered(s.p, m.Alpha, pl.g, pl.red, true) * float64(pl.k)
	return pr
}

// segmentedBinaryReduce: the binary tree reduce in k segments of s bytes,
// event-driven (ADAPT) or lock-step. Bounds, not an exact form: a rank's
// port takes in two children's segments in order of arrival and its CPU
// reduces them in order of intake, so segments of different steps
// interleave. Lower bound: the last segment leaving the deepest leaf after
// the k-1 before it and climbing D levels (alpha + s' beta + s' gamma
// each); the root's port taking in both children's k segments; its CPU
// reducing them. Upper bound: k times one segment's tree time (heapReduce),
// as if the segments did not overlap. That one is checked by simulation
// (TestClosedFormsMatchSimulation; 800 random trees of up to 64 ranks with
// reductions up to 4x slower than the link), not proven. A tighter one, the
// first segment's tree time plus 3 s beta + 4 s gamma per further segment,
// held on up to 40 ranks but not on deeper trees with slow reductions,
// where ADAPT's event-driven reduce ran up to 27% over it.
func segmentedBinaryReduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pl := s.pipeline(m)
	k, g, red, gl, redl := pl.k, pl.g, pl.red, pl.gLast, pl.redLast
	if s.p == 2 {
		// A chain of two: rank 1 sends its segments back to back, rank 0
		// reduces each as it comes in (chainReduce).
		return chainReduce(m, s)
	}
	depth := float64(log2Floor(s.p))
	kk := float64(k - 1)
	lower := max(kk*g+depth*(m.Alpha+gl+redl),
		m.Alpha+2*kk*g+2*gl+redl,
		m.Alpha+g+2*kk*red+2*redl)
	upper := heapReduce(s.p, m.Alpha, g, red) * float64(k)
	return Prediction{Time: upper, Lower: lower}
}

// segmentedBinomialReduce: the binomial reduce (binomialReduce) moving k
// segments in lock step. Bounds, checked by simulation as
// segmentedBinaryReduce's. Lower: the deepest rank's NIC sends k-1 full
// segments before its last one, which then climbs the rank's D levels,
// each a message and a reduction: (k-1) s beta + D (alpha + s' beta + s'
// gamma), D the most ones in a relative rank below p. Upper: k times one
// full segment's binomial reduce (no overlap between segments). One
// segment on a power of two of ranks: both are the binomial reduce's
// exact form.
func segmentedBinomialReduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pl := s.pipeline(m)
	last := uint(s.p - 1)
	depth := float64(max(bits.OnesCount(last), bits.Len(last)-1))
	lower := float64(pl.k-1)*pl.g + depth*(m.Alpha+pl.gLast+pl.redLast)
	upper := float64(pl.k) * binomialTree(s.p, m.Alpha+pl.g+pl.red).Time
	return between(lower, upper)
}

// linearPipelineAllreduce: Linear Pipelining's allreduce, each segment
// reduced up the chain of ranks to rank 0 and broadcast back down. Bounds:
// a rank's NIC carries the reduction going up and the broadcast coming
// down, and its window of ops in flight can hold segments back, so the
// exact timing is not derived. Lower bound: the first segment's round trip,
// (p-1)(2 alpha + 2 s beta + s gamma), plus k-1 segments at the pace of the
// slower of moving and reducing one (s beta or s gamma) at the chain's end.
// Upper bound: k times one segment's round trip (no overlap), checked by
// simulation as segmentedBinaryReduce's is.
func linearPipelineAllreduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pl := s.pipeline(m)
	k, g, red, gl, redl := pl.k, pl.g, pl.red, pl.gLast, pl.redLast
	hops := float64(s.p - 1)
	trip := func(g, red float64) float64 { return hops * (2*m.Alpha + 2*g + red) }
	lower := float64(k-1)*max(g, red) + trip(gl, redl)
	return Prediction{Time: float64(k) * trip(g, red), Lower: lower}
}

// doubleBinaryTree: the double binary tree (collectives' double_binary_tree, heap-numbered as NCCL's is not), each half of the vector
// reduced up and broadcast down its own binary tree (the second the first's
// mirror image) in segments, the two trees' segments alternating. Bounds:
// every rank serves both trees through one port and one CPU, so the exact
// interleaving is not derived. Lower bound: a last segment's round trip,
// reduced up one tree (heapReduce) and broadcast down it (binaryTree).
// Upper bound: every segment's round trip one after another, checked by
// simulation as segmentedBinaryReduce's is.
func doubleBinaryTree(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	trip := func(count int64) float64 {
		g, red := float64(count*s.elem)*m.Beta, float64(count*s.elem)*m.Gamma
		return heapReduce(s.p, m.Alpha, g, red) + binaryTree(s.p, m.Alpha, g)
	}
	upper, lower := 0.0, math.Inf(1)
	for _, half := range []int64{s.count / 2, s.count - s.count/2} {
		h := s
		h.count = half
		seg, k, last := h.segments(65536)
		upper += float64(k) * trip(min(seg, half))
		lower = min(lower, trip(last))
	}
	return Prediction{Time: upper, Lower: lower}
}

// scatterAllgatherRD: the same scatter, then a recursive-doubling
// allgather (powers of two only). Not the sum of its parts: an early
// allgather message can take a rank's port before the scatter's block for
// it arrives. Upper bound: the scatter's end; plus every allgather message
// a rank takes in ((p-1) c beta), the most the scatter's block can wait;
// plus the allgather's bound (rdAllgather); plus, for each of its log2 p
// steps, one message of half the vector that another step's message can
// hold it up by. Lower bound: the allgather alone, and, for every rank,
// its block's arrival, then its NIC sending 1, 2, 4, ... blocks of its own
// block's size ((p-1) c beta in all: each step's send needs the step
// before to have left), and one alpha for the last. The upper bound is
// loose; both are checked by simulation.
func scatterAllgatherRD(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	rd := rdAllgather(m, s)
	if !isPow2(s.p) {
		return rd // no closed form: the algorithm refuses these p
	}
	c, _ := s.block(s.p)
	end, lower := s.scatter(m, func(c float64) float64 { return m.Alpha + float64(s.p-1)*c*m.Beta })
	wait := float64(s.p-1)*c*m.Beta + float64(log2Floor(s.p))*float64(s.p/2)*c*m.Beta
	return Prediction{Time: end + wait + rd.Time, Lower: max(rd.Lower, lower)}
}
