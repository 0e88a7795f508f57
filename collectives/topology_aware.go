package collectives

import (
	"github.com/collsim/collsim/sim"
)

// twoLevelAlltoall aggregates inside nodes (or Dragonfly groups) of ns
// ranks before crossing the network. Rank (n, l) of node n, local index l:
// first it hands local rank (n, l') the blocks it holds for every rank
// (x, l') on any node x, packed into one message; then each rank holds, for
// every node x, all of its node's blocks for rank (x, l'), contiguous, and
// sends them to (x, l') in one message. Across the network each rank sends
// N-1 messages of ns blocks instead of p-ns messages of one. Both exchanges
// are linear, their sends posted at once (concurrent). Buffers: 2 is the
// aggregated blocks A[x*ns+l], 3 and 4 stage the packed messages.
type twoLevelAlltoall struct {
	r, p, ns int
	c        int64
	stage    int
	unpacked []int32
}

func (s *twoLevelAlltoall) blocks(buf uint8, first, count int) sim.Region {
	return sim.Region{Buf: buf, Off: int64(first) * s.c, Count: int64(count) * s.c}
}

func (s *twoLevelAlltoall) step(b *builder) bool {
	nodes := s.p / s.ns
	n, l := s.r/s.ns, s.r%s.ns
	switch s.stage {
	case 0: // intra-node: pack for each local peer, send, receive, unpack
		// Its own blocks for itself go straight to their places.
		for x := range nodes {
			s.unpacked = append(s.unpacked, b.copy(s.blocks(0, x*s.ns+l, 1), s.blocks(2, x*s.ns+l, 1)))
		}
		for dl := 1; dl < s.ns; dl++ {
			peer := n*s.ns + (l+dl)%s.ns
			lp := peer % s.ns
			var packs []int32
			for x := range nodes {
				packs = append(packs, b.copy(s.blocks(0, x*s.ns+lp, 1), s.blocks(3, lp*nodes+x, 1)))
			}
			b.sendConcurrent(peer, 1, s.blocks(3, lp*nodes, nodes), packs...)
		}
		for dl := 1; dl < s.ns; dl++ {
			src := n*s.ns + (l-dl+s.ns)%s.ns
			ls := src % s.ns
			got := b.recv(src, 1, s.blocks(4, ls*nodes, nodes))
			for x := range nodes {
				s.unpacked = append(s.unpacked, b.copy(s.blocks(4, ls*nodes+x, 1), s.blocks(2, x*s.ns+ls, 1), got))
			}
		}
		s.stage = 1
	case 1: // inter-node: one aggregated message per node
		b.copy(s.blocks(2, n*s.ns, s.ns), s.blocks(1, n*s.ns, s.ns), s.unpacked...) // its own node's
		for dx := 1; dx < nodes; dx++ {
			x := (n + dx) % nodes
			b.sendConcurrent(x*s.ns+l, 2, s.blocks(2, x*s.ns, s.ns), s.unpacked...)
		}
		for dx := 1; dx < nodes; dx++ {
			x := (n - dx + nodes) % nodes
			b.recv(x*s.ns+l, 2, s.blocks(1, x*s.ns, s.ns), s.unpacked...)
		}
		s.stage = 2
	default:
		return false
	}
	return true
}

// TwoLevelSize is the ranks per node (or Dragonfly group) that two_level
// alltoall aggregates over: NodeSize when it is more than 1, else
// GroupSize when it is; else 1 where either says each block holds one
// rank (a communicator of one rank per node: the exchange has one level,
// as a library's hierarchical component falls back to its flat one
// there), 0 where neither is set.
func TwoLevelSize(p Params) int {
	switch {
	case p.NodeSize > 1:
		return p.NodeSize
	case p.GroupSize > 1:
		return p.GroupSize
	}
	return max(p.NodeSize, p.GroupSize, 0)
}

// splitBinary is Open MPI's split binary tree bcast: the root sends the
// first half of the vector down its left subtree and the second half down
// its right one (binary trees in heap layout), in segments of seg elements
// that each rank forwards as soon as it has them (Open MPI's segment size;
// 0 sends each half whole); then every rank swaps halves with its mirror
// image in the other subtree (same depth, same place), or, lacking one,
// gets its missing half from the root. Each link carries half the vector
// once per direction.
type splitBinary struct {
	r, p, root int
	n, seg     int64
	k, nseg    int   // the next segment; the larger half's number of them
	got        int32 // the last segment of this rank's half received
	done       bool
}

func newSplitBinary(p Params, r int) *splitBinary {
	s := &splitBinary{r: r, p: p.Ranks, root: p.Root, n: p.Count, seg: p.Segment, got: -1}
	if big := p.Count - p.Count/2; s.seg <= 0 || s.seg >= big {
		s.seg = max(big, 1) // each half in one piece
	}
	s.nseg = segments(p.Count-p.Count/2, s.seg)
	return s
}

// splitSide returns whether relative rank v (>= 1) is in the root's left
// subtree, and its mirror image in the other subtree.
func splitSide(v int) (left bool, mirror int) {
	d := 0
	for (1<<(d+1))-1 <= v {
		d++
	}
	width := 1 << d
	j := v - (width - 1)
	if j < width/2 {
		return true, v + width/2
	}
	return false, v - width/2
}

func (s *splitBinary) step(b *builder) bool {
	if s.done || s.p == 1 {
		return false
	}
	v := mod(s.r-s.root, s.p)
	abs := func(x int) int { return mod(x+s.root, s.p) }
	half := [2]sim.Region{{Count: s.n / 2}, {Off: s.n / 2, Count: s.n - s.n/2}}
	// piece is segment k of half h, and ok whether h has one.
	piece := func(h sim.Region, k int) (sim.Region, bool) {
		pc := segmentOf(0, h.Count, s.seg, k)
		pc.Off += h.Off
		return pc, k < segments(h.Count, s.seg)
	}
	parent, children := treeOf(v, s.p)
	left, mirror := splitSide(max(v, 1))
	mine, other := half[1], half[0]
	if left {
		mine, other = half[0], half[1]
	}
	if s.k < s.nseg { // the halves down the subtrees, segment k
		if v == 0 {
			for i, c := range children {
				if pc, ok := piece(half[i], s.k); ok {
					b.send(abs(c), 0, pc)
				}
			}
		} else if pc, ok := piece(mine, s.k); ok {
			s.got = b.recv(abs(parent), 0, pc, s.got)
			for _, c := range children {
				b.send(abs(c), 0, pc, s.got)
			}
		}
		s.k++
		return true
	}
	s.done = true
	if v == 0 {
		for u := 1; u < s.p; u++ { // halves for ranks without a mirror
			if l, m := splitSide(u); m >= s.p {
				if l {
					b.send(abs(u), 1, half[1])
				} else {
					b.send(abs(u), 1, half[0])
				}
			}
		}
		return true
	}
	if mirror < s.p {
		b.send(abs(mirror), 1, mine, s.got)
		b.recv(abs(mirror), 1, other, s.got)
	} else {
		b.recv(s.root, 1, other, s.got)
	}
	return true
}

// inOrderBinary reduces up Open MPI's in-order binary tree.
type inOrderBinary struct {
	r, p, root   int
	n            int64
	parent       int
	children     []int
	stage        int
	reduced      []int32
	sent, handed int32
}

// inOrderNode finds rank r in the in-order tree over [lo, hi] (root hi,
// left subtree [lo, m], right [m+1, hi-1]) and returns its parent and
// children.
func inOrderNode(r, lo, hi, parent int) (int, []int) {
	for {
		var kids []int
		m := (lo + hi - 1) / 2
		if hi-1 >= lo {
			if m >= lo {
				kids = append(kids, m)
			}
			if hi-1 >= m+1 {
				kids = append(kids, hi-1)
			}
		}
		if r == hi {
			return parent, kids
		}
		parent = hi
		if r <= m {
			hi = m
		} else {
			lo, hi = m+1, hi-1
		}
	}
}

func newInOrderBinary(p Params, r int) *inOrderBinary {
	parent, kids := inOrderNode(r, 0, p.Ranks-1, -1)
	return &inOrderBinary{r: r, p: p.Ranks, root: p.Root, n: p.Count, parent: parent, children: kids, sent: -1, handed: -1}
}

// finals: the reduce's root is done when the result is in place.
func (s *inOrderBinary) finals() []int32 {
	if s.r == s.root && s.root != s.p-1 {
		return []int32{s.handed}
	}
	return s.reduced
}

func (s *inOrderBinary) step(b *builder) bool {
	all := sim.Region{Count: s.n}
	switch s.stage {
	case 0:
		for _, c := range s.children {
			s.reduced = append(s.reduced, b.recvReduce(c, 0, all))
		}
		if s.parent >= 0 {
			s.sent = b.send(s.parent, 0, all, s.reduced...)
		}
		s.stage = 1
		return true
	case 1:
		s.stage = 2
		switch {
		case s.root == s.p-1:
		case s.r == s.p-1:
			b.send(s.root, 1, all, s.reduced...)
			return true
		case s.r == s.root:
			s.handed = b.recv(s.p-1, 1, all, s.sent)
			return true
		}
	}
	return false
}
