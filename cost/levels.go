package cost

import (
	"github.com/collsim/collsim/collectives"
)

// Levels is the alpha-beta-gamma model of a machine in two levels: Local
// between ranks of one node (or Dragonfly group), Global between ranks of
// different ones. The hierarchical and topology-aware algorithms are priced
// level by level; the others, whose messages cross either level, with
// Global (the slower, on the machines collsim builds).
type Levels struct {
	Local, Global Hockney
}

// levelForms are the algorithms priced level by level (set in init: they
// refer to Predict).
var levelForms map[string]func(l Levels, s size) Prediction

func init() {
	levelForms = map[string]func(l Levels, s size) Prediction{
		"alltoall/two_level":     twoLevelAlltoall,
		"allreduce/hierarchical": hierarchicalAllreduce,
	}
}

// HasLevels reports whether a is priced level by level.
func HasLevels(a collectives.Algorithm) bool { _, ok := levelForms[a.ID()]; return ok }

// Predict prices one call of a on the two-level machine.
func (l Levels) Predict(a collectives.Algorithm, p collectives.Params) (Prediction, error) {
	f, ok := levelForms[a.ID()]
	if !ok || collectives.SendsNothing(a.Collective, p) {
		return l.Global.Predict(a, p)
	}
	return checked(a, p, f(l, sizeOf(p)))
}

// twoLevelAlltoall: inside each node of ns ranks, every rank sends each of
// the ns-1 others one message of the N nodes' blocks for it, back to back
// (a linear exchange: alpha + (ns-1) N c beta, Local); once it has unpacked
// them, one message of ns blocks to its counterpart on each of the N-1
// other nodes (alpha + (N-1) ns c beta, Global). A rank's message to
// itself goes through no NIC; packing and unpacking are local copies, which
// collsim takes as free. Exact on a contention-free machine: in every slot
// of either exchange each rank sends to a different rank and receives from
// a different one, and the nodes finish the first exchange together. Each
// exchange's messages are of one size, so each pays the handshake above
// the eager limit or none (their requests leave together).
func twoLevelAlltoall(l Levels, s size) Prediction {
	ns := collectives.TwoLevelSize(s.orig)
	if ns < 1 || s.p%ns != 0 {
		return noForm()
	}
	nodes := s.p / ns
	t := 0.0
	if ns > 1 { // messages of the N nodes' blocks for one rank
		t += l.Local.alphaFor(float64(nodes)*s.n) + float64((ns-1)*nodes)*s.n*l.Local.Beta
	}
	if nodes > 1 { // messages of ns blocks
		t += l.Global.alphaFor(float64(ns)*s.n) + float64((nodes-1)*ns)*s.n*l.Global.Beta
	}
	return exact(t)
}

// hierarchicalAllreduce: HAN's allreduce (Luo et al. 2020) segment by
// segment: a reduce inside each node to its first rank (Local, the --intra
// algorithm), an allreduce among the N nodes' first ranks (Global, the
// --inner algorithm for the segment's size), a bcast inside the node
// (Local). One segment on nodes of one size is exact where the three
// stages' forms are (each starts when the last ends, on every node at
// once: a stage's sum over the stages, as HAN's task model composes them).
// With k segments the stages overlap (segment j+1 reduces while segment j
// crosses the network): the k-fold sum of the stages is the upper bound
// (nothing overlaps); the stages of the last segment, which none can start
// early, or what a node's first rank must take in through its port, the
// lower bound. HAN's own model, the first segment's stages plus k-1 times
// the slowest stage, is not a bound here: where segments are bandwidth-
// bound the first rank's port carries the reduce's and the allreduce's
// messages of every segment, and the simulation runs up to 1.8x above it. With a smaller last node the full nodes
// set the pace: the same upper bound with the full node's size, and a lower
// bound without the allreduce among leaders (a smaller node's leader starts
// it early, so the full node's leader may find its data waiting).
func hierarchicalAllreduce(l Levels, s size) Prediction {
	p := s.orig
	ns := p.NodeSize
	if ns < 1 {
		return noForm()
	}
	ns = min(ns, s.p)
	nodes := (s.p + ns - 1) / ns
	intra := p.Intra
	if intra == "" {
		intra = "binomial"
	}
	seg, k, last := s.segments(65536)
	// stages sums the three stages for a segment of count elements; the
	// inner allreduce's lower bound counts only with nodes of one size (a
	// smaller node's leader starts it early, and the full node's leader
	// may find its partners' data already there).
	stages := func(count int64) (Prediction, bool) {
		part := collectives.Params{Count: count, ElemSize: s.elem, Segment: p.Segment}
		var sum Prediction
		sum.Exact = true
		for i, st := range []struct {
			m     Hockney
			c     collectives.Collective
			name  string
			ranks int
		}{{l.Local, collectives.Reduce, intra, ns}, {l.Global, collectives.Allreduce, collectives.InnerAlgorithm(p, count), nodes}, {l.Local, collectives.Bcast, intra, ns}} {
			a, err := collectives.Lookup(st.c, st.name)
			if err != nil {
				return sum, false
			}
			q := part
			q.Ranks = st.ranks
			pr, err := st.m.Predict(a, q)
			if err != nil {
				return sum, false
			}
			if i == 1 && s.p%ns != 0 {
				pr.Lower = 0
			}
			sum.Time, sum.Lower, sum.Exact = sum.Time+pr.Time, sum.Lower+pr.Lower, sum.Exact && pr.Exact
		}
		return sum, true
	}
	full, ok := stages(min(seg, s.count))
	tail, ok2 := stages(last)
	if !ok || !ok2 {
		return noForm()
	}
	if k == 1 && s.p%ns == 0 {
		return full
	}
	// A full node's first rank takes in, for every segment, at least one
	// segment from inside its node (any reduce does) and (N-1)/N of one
	// from the other nodes (any allreduce does: Chan et al. 2007), one
	// message at a time through its port.
	segBytes := float64(min(seg, s.count) * s.elem)
	perSegment := 0.0
	if ns > 1 {
		perSegment += segBytes * l.Local.Beta
	}
	if nodes > 1 {
		perSegment += float64(nodes-1) / float64(nodes) * segBytes * l.Global.Beta
	}
	return Prediction{Time: float64(k-1)*full.Time + tail.Time, Lower: max(tail.Lower, float64(k-1)*perSegment)}
}
