package collectives

import (
	"fmt"

	"github.com/collsim/collsim/sim"
)

// The algorithms below are the MPI libraries' composite ones: each calls
// other collectives, chosen at run time by the library's own rules, as the
// library does (its reduce and bcast go through the communicator's
// collective table, not a fixed algorithm). Their parts are collsim's
// algorithms, picked by the same selector code as -a ompi, -a mpich.

// Part is one collective call inside a composite algorithm: the algorithm
// and its parameters on the sub-communicator that runs it (Ranks counts
// that sub-communicator).
type Part struct {
	Algorithm Algorithm
	Params    Params
}

// Stage is one step of a composite algorithm's segment: the parts that run
// at once on disjoint sub-communicators (every node's part, say), all
// alike or differing only in size. Local stages run inside nodes, the
// others among nodes (or, for nonoverlapping, on all ranks). Early: the
// stage's ranks other than the one the stage before hands its result
// start at once, before that stage ends (MPICH's SMP reduce in the
// root's node).
type Stage struct {
	Local, Early bool
	Parts        []Part
}

// Composite describes how a composite algorithm runs for p: the stages of
// the first segment, of the full ones after it, and of the last one, and
// how many segments there are (1 when the vector is not cut: then all
// three are that segment's). Segments overlap (HAN's tasks), stages
// within one do not.
type Composite struct {
	First, Full, Last []Stage
	Segments          int64
}

// CompositeOf returns how a composite algorithm runs for p; ok is false
// for algorithms that are not composites.
func CompositeOf(a Algorithm, p Params) (c Composite, ok bool, err error) {
	if a.Collective == Allreduce && a.Name == "nonoverlapping" {
		st, err := nonoverlappingStages(p)
		return Composite{First: st, Full: st, Last: st, Segments: 1}, true, err
	}
	lv, ok := twoLevelOf(a.Collective, a.Name, p)
	if !ok {
		return c, false, nil
	}
	if err := lv.check(p); err != nil {
		return c, true, err
	}
	seg := lv.segment(p)
	k := int64(segments(p.Count, seg))
	first, err := lv.stages(p, min(seg, p.Count), true)
	if err != nil {
		return c, true, err
	}
	full, err := lv.stages(p, min(seg, p.Count), false)
	if err != nil {
		return c, true, err
	}
	last, err := lv.stages(p, p.Count-(k-1)*seg, k == 1)
	return Composite{First: first, Full: full, Last: last, Segments: k}, true, err
}

// nonoverlappingStages: Open MPI's nonoverlapping allreduce
// (ompi/mca/coll/base/coll_base_allreduce.c,
// ompi_coll_base_allreduce_intra_nonoverlapping, v4.0.7, v4.1.8 and
// v5.0.10) is the communicator's MPI_Reduce to rank 0 followed by its
// MPI_Bcast from rank 0; under coll/tuned those are coll/tuned's fixed
// decisions for the same ranks and count, with their run-time fallbacks:
// 4.1's (ompiTuned), or 4.0's (ompi40Tuned) for p.Library "ompi40".
func nonoverlappingStages(p Params) ([]Stage, error) {
	q := p
	q.Root = 0
	var out []Stage
	for _, c := range []Collective{Reduce, Bcast} {
		var pick ompiPick
		var err error
		if p.Library == "ompi40" {
			_, pick, err = ompi40Tuned(c, q)
		} else {
			_, pick, err = ompiTuned(c, q)
		}
		if err != nil {
			return nil, err
		}
		a, err := Lookup(c, pick.name)
		if err != nil {
			return nil, err
		}
		out = append(out, Stage{Parts: []Part{{Algorithm: a, Params: pick.params}}})
	}
	return out, nil
}

// twoLevel is a library's hierarchical collective: per segment of the
// vector, stages that run inside each node or among one rank of each node
// (the node's "leader": its rank of local index lead). Ranks
// r..r+NodeSize-1 share a node (block placement), the last node may hold
// fewer.
type twoLevel struct {
	name string
	// barrier: the stages carry the barrier's knowledge vector (see
	// knowing).
	barrier bool
	// segBytes is the library's segment in bytes (0: the vector is not cut).
	segBytes int64
	// lead is the local index of the ranks that meet among nodes, given
	// the root's local index.
	lead  func(rootLocal int) int
	steps []levelStep
}

// levelStep is one stage of a two-level collective.
type levelStep struct {
	up bool // among the nodes' leaders (rooted at the root's node), else inside nodes
	c  Collective
	// pick is the library's choice for the stage's sub-communicator; first,
	// when set, its choice for the first segment.
	pick, first func(q Params) (string, Params, error)
	// on says which nodes run a stage inside nodes (nil: every node).
	on func(node, rootNode, rootLocal int) bool
	// root is the local index a stage inside a node is rooted at (nil: 0).
	root func(rootLocal int) int
	// pair: the stage runs between the node's first rank and the root only
	// (MPICH hands the root's vector to its node's first rank).
	pair bool
	// early: the stage may start before the stage before has ended (its
	// ranks but one have nothing to wait for, or the rank it waits for is
	// done early).
	early bool
	// wire, in a barrier, is the bytes each of the stage's messages carries
	// (MPICH's SMP barrier ends with a bcast of 1 byte).
	wire int64
	// upRoot0: the stage among nodes is rooted at the first node, not the
	// root's. zeroPair: the stage runs between rank 0 and the root only,
	// rooted at rank 0, when they differ.
	upRoot0, zeroPair bool
}

// twoLevelOf returns the library's two-level collective c/name, if it is
// one.
func twoLevelOf(c Collective, name string, p Params) (twoLevel, bool) {
	zero := func(int) int { return 0 }
	rootIdx := func(rl int) int { return rl }
	onRoot := func(node, rootNode, _ int) bool { return node == rootNode }
	offRoot := func(node, rootNode, _ int) bool { return node != rootNode }
	tr, tb := tunedPick(Reduce), tunedPick(Bcast)
	switch c + "/" + Collective(name) {
	case "allreduce/han":
		// Open MPI 5.0.10's coll/han (coll_han_allreduce.c,
		// mca_coll_han_allreduce_intra, the default "intra" algorithm):
		// segments of han_allreduce_segsize (65536 B, coll_han_component.c);
		// per segment a reduce on the node's low communicator (coll/tuned),
		// an MPI_Ireduce and an MPI_Ibcast on the leaders' up communicator
		// (coll/libnbc, han_allreduce_up_module 0), and a bcast on the node
		// (coll/tuned).
		return twoLevel{name: name, segBytes: 65536, lead: zero, steps: []levelStep{
			{c: Reduce, pick: tr}, {up: true, c: Reduce, pick: libnbcReduce}, {up: true, c: Bcast, pick: libnbcBcast}, {c: Bcast, pick: tb}}}, true
	case "bcast/han":
		// coll_han_bcast.c, mca_coll_han_bcast_intra: segments of
		// han_bcast_segsize (65536 B); the up communicator holds the ranks
		// of the root's local rank (coll_han_subcomms.c splits by local
		// rank), its first segment goes by a blocking MPI_Bcast there
		// (coll/tuned: libnbc has none, t0 task), the others by coll/libnbc's
		// MPI_Ibcast (t1 tasks); then each node's bcast (coll/tuned) from that
		// local rank.
		return twoLevel{name: name, segBytes: 65536, lead: rootIdx, steps: []levelStep{
			{up: true, c: Bcast, pick: libnbcBcast, first: tb}, {c: Bcast, pick: tb, root: rootIdx}}}, true
	case "reduce/han":
		// coll_han_reduce.c, mca_coll_han_reduce_intra: segments of
		// han_reduce_segsize (65536 B); each node's reduce (coll/tuned) to
		// the root's local rank, then coll/libnbc's MPI_Ireduce among those
		// ranks to the root.
		return twoLevel{name: name, segBytes: 65536, lead: rootIdx, steps: []levelStep{
			{c: Reduce, pick: tr, root: rootIdx}, {up: true, c: Reduce, pick: libnbcReduce}}}, true
	case "allreduce/smp":
		// MPICH 3.3.2's SMP allreduce (src/mpi/coll/allreduce/allreduce_intra_smp.c,
		// MPIR_Allreduce_intra_smp): MPIR_Reduce to the node's rank 0 on
		// node_comm, MPIR_Allreduce on node_roots_comm, MPIR_Bcast on
		// node_comm, each chosen by MPICH 3.3.2's classic rules (those
		// sub-communicators are not node-aware) unless p.Intra names the
		// node's reduce and bcast and p.Inner the roots' allreduce (as MPICH
		// 4's selection does); the vector is not cut.
		red, bc, all := mpich33Pick(Reduce), mpich33Pick(Bcast), mpich33Pick(Allreduce)
		if p.Library == "mpich4" {
			// MPICH 4.3.2's composition alpha (ch4_coll_impl.h,
			// MPIDI_Allreduce_intra_composition_alpha): the same three
			// steps, the node's by shared memory (release_gather; binomial
			// trees here), the roots' by mpir/generic.json.
			red, bc, all = fixedPick("binomial"), fixedPick("binomial"), mpich4Pick(Allreduce)
		}
		if p.Intra != "" {
			red, bc = fixedPick(p.Intra), fixedPick(p.Intra)
		}
		if p.Inner != "" {
			all = fixedPick(p.Inner)
		}
		return twoLevel{name: name, lead: zero, steps: []levelStep{{c: Reduce, pick: red}, {up: true, c: Allreduce, pick: all}, {c: Bcast, pick: bc}}}, true
	case "bcast/smp":
		if p.Library == "mpich4" {
			// MPICH 4.3.2's compositions alpha and beta
			// (MPIDI_Bcast_intra_composition_alpha / _beta): the shapes of
			// 3.3.2's short and medium branches, the node steps by shared
			// memory (binomial here), the roots' by mpir/generic.json;
			// ch4/generic.json picks beta for 12288 <= avg_msg_size < 524288
			// on a power of two of 8 ranks or more.
			nodeB, rootsB := fixedPick("binomial"), mpich4Pick(Bcast)
			if mpich4BcastBeta(p) {
				return twoLevel{name: name, lead: zero, steps: []levelStep{
					{c: Bcast, pick: nodeB, root: rootIdx, on: func(node, rootNode, rl int) bool { return node == rootNode && rl > 0 }},
					{up: true, c: Bcast, pick: rootsB, early: rootLate(p)},
					{c: Bcast, pick: nodeB, on: func(node, rootNode, rl int) bool { return node != rootNode || rl == 0 }}}}, true
			}
			return twoLevel{name: name, lead: zero, steps: []levelStep{
				{pair: true, c: Bcast, pick: fixedPick("linear"), on: func(node, rootNode, rl int) bool { return node == rootNode && rl > 0 }},
				{up: true, c: Bcast, pick: rootsB}, {c: Bcast, pick: nodeB}}}, true
		}
		// MPICH 3.3.2, src/mpi/coll/bcast/bcast_intra_smp.c,
		// MPIR_Bcast_intra_smp, below 12288 B or on fewer than 8 ranks (above
		// that it runs the pow2 variant, or MPIR_Bcast_intra_scatter_ring_allgather
		// on the whole communicator: mpich33Choice picks those): a root that
		// is not its node's rank 0 sends the vector to it (MPIC_Send), then
		// MPIR_Bcast among the node roots from the root's node, then
		// MPIR_Bcast in every node from its rank 0.
		if mpichSMPBcastMedium(p) {
			// nbytes < 524288 on a power-of-two communicator: MPIR_Bcast in
			// the root's node from the root when it is not the node's rank
			// 0, among the node roots, then in the other nodes (and the
			// root's, when the root is its rank 0).
			return twoLevel{name: name, lead: zero, steps: []levelStep{
				{c: Bcast, pick: mpich33Pick(Bcast), root: rootIdx, on: func(node, rootNode, rl int) bool { return node == rootNode && rl > 0 }},
				{up: true, c: Bcast, pick: mpich33Pick(Bcast), early: rootLate(p)},
				{c: Bcast, pick: mpich33Pick(Bcast), on: func(node, rootNode, rl int) bool { return node != rootNode || rl == 0 }}}}, true
		}
		return twoLevel{name: name, lead: zero, steps: []levelStep{
			{pair: true, c: Bcast, pick: fixedPick("linear"), on: func(node, rootNode, rl int) bool { return node == rootNode && rl > 0 }},
			{up: true, c: Bcast, pick: mpich33Pick(Bcast)}, {c: Bcast, pick: mpich33Pick(Bcast)}}}, true
	case "barrier/han":
		// coll_han_barrier.c, mca_coll_han_barrier_intra_simple (HAN's only
		// barrier): a barrier in each node, one among the nodes' first
		// ranks, and one in each node again, each coll/tuned's (the
		// intra- and inter-node sub-communicators' default module).
		tbar := tunedPick(Barrier)
		return twoLevel{name: name, barrier: true, lead: zero, steps: []levelStep{
			{c: Barrier, pick: tbar}, {up: true, c: Barrier, pick: tbar}, {c: Barrier, pick: tbar, early: true}}}, true
	case "barrier/smp":
		// MPICH 3.3.2, src/mpi/coll/barrier/barrier_intra_smp.c,
		// MPIR_Barrier_intra_smp: MPIR_Barrier in each node, MPIR_Barrier
		// among the node roots, then MPIR_Bcast of one byte in each node
		// from its rank 0 (classic rules: dissemination, binomial).
		node, roots, release := mpich33Pick(Barrier), mpich33Pick(Barrier), mpich33Pick(Bcast)
		if p.Library == "mpich4" {
			// MPIDI_Barrier_intra_composition_alpha: the same steps, the
			// node's by shared memory (dissemination and binomial here).
			node, roots, release = fixedPick("dissemination"), mpich4Pick(Barrier), fixedPick("binomial")
		}
		return twoLevel{name: name, barrier: true, lead: zero, steps: []levelStep{
			{c: Barrier, pick: node}, {up: true, c: Barrier, pick: roots},
			{c: Bcast, pick: release, wire: 1}}}, true
	case "reduce/smp":
		if p.Library == "mpich4" {
			nodeR, rootsR := fixedPick("binomial"), mpich4Pick(Reduce)
			if p.SizeBytes(Reduce) > 2048 {
				// MPIDI_Reduce_intra_composition_alpha (ch4/generic.json:
				// commutative, avg_msg_size > 2048): every node reduces to
				// its rank 0, the node roots to rank 0, and rank 0 sends the
				// result to a root that is another rank.
				return twoLevel{name: name, lead: zero, steps: []levelStep{
					{c: Reduce, pick: nodeR}, {up: true, c: Reduce, pick: rootsR, upRoot0: true},
					{zeroPair: true, c: Bcast, pick: fixedPick("linear")}}}, true
			}
			// MPIDI_Reduce_intra_composition_beta: 3.3.2's SMP shape.
			return twoLevel{name: name, lead: zero, steps: []levelStep{
				{c: Reduce, pick: nodeR, on: offRoot},
				{up: true, c: Reduce, pick: rootsR},
				{c: Reduce, pick: nodeR, on: onRoot, root: rootIdx, early: true}}}, true
		}
		// MPICH 3.3.2, src/mpi/coll/reduce/reduce_intra_smp.c,
		// MPIR_Reduce_intra_smp: MPIR_Reduce to rank 0 in every node but
		// the root's, MPIR_Reduce among the node roots to the root's node
		// (whose rank 0 brings its own vector only), then MPIR_Reduce in the
		// root's node to the root.
		return twoLevel{name: name, lead: zero, steps: []levelStep{
			{c: Reduce, pick: mpich33Pick(Reduce), on: offRoot},
			{up: true, c: Reduce, pick: mpich33Pick(Reduce)},
			{c: Reduce, pick: mpich33Pick(Reduce), on: onRoot, root: rootIdx, early: true}}}, true
	}
	return twoLevel{}, false
}

// mpichSMPBcastMedium reports whether MPIR_Bcast_intra_smp (MPICH 3.3.2)
// takes its medium-size branch: 12288 <= nbytes < 524288, at least 8
// ranks, a power of two of them.
func mpichSMPBcastMedium(p Params) bool {
	if p.Library == "mpich4" {
		return mpich4BcastBeta(p)
	}
	b := p.SizeBytes(Bcast)
	return b >= 12288 && p.Ranks >= 8 && b < 524288 && isPow2(p.Ranks)
}

// fixedPick always picks the algorithm named.
func fixedPick(name string) func(q Params) (string, Params, error) {
	return func(q Params) (string, Params, error) { return name, q, nil }
}

// tunedPick is coll/tuned's choice for c on a sub-communicator.
func tunedPick(c Collective) func(q Params) (string, Params, error) {
	return func(q Params) (string, Params, error) {
		_, pick, err := ompiTuned(c, q)
		return pick.name, pick.params, err
	}
}

// libnbcReduce is coll/libnbc's MPI_Ireduce choice (Open MPI 5.0.10,
// ompi/mca/coll/libnbc/nbc_ireduce.c, NBC_Ireduce with
// libnbc_ireduce_algorithm 0): for a commutative operation on more than 2
// ranks with count >= the largest power of two <= p, reduce-scatter and
// gather (Rabenseifner); otherwise on more than 4 ranks or under 65536 B a
// binomial tree; otherwise a chain of 8192-byte segments.
func libnbcReduce(q Params) (string, Params, error) {
	pof2 := floorPow2(max(q.Ranks, 1))
	switch {
	case q.Ranks > 2 && q.Count >= int64(pof2):
		return "rabenseifner", q, nil
	case q.Ranks > 4 || q.Count*q.elemSize() < 65536:
		return "binomial", q, nil
	}
	q.Segment = max(1, 8192/q.elemSize())
	return "chain", q, nil
}

// libnbcBcast is coll/libnbc's MPI_Ibcast choice (Open MPI 5.0.10,
// nbc_ibcast.c, NBC_Ibcast; libnbc_ibcast_skip_dt_decision is true by
// default, coll_libnbc_component.c): linear on up to 4 ranks, else
// binomial.
func libnbcBcast(q Params) (string, Params, error) {
	if q.Ranks <= 4 {
		return "linear", q, nil
	}
	return "binomial", q, nil
}

// check refuses parameters the two-level algorithm cannot run with.
func (lv twoLevel) check(p Params) error {
	if p.NodeSize < 1 {
		return &Unsupported{Reason: fmt.Sprintf("%s needs ranks per node (--node-size, or a machine config with nodes or several ranks per host); on a flat machine use a flat algorithm of the collective (collsim algos lists them)", lv.name)}
	}
	if lv.name == "smp" {
		for _, c := range []Collective{Reduce, Bcast} {
			if _, err := Lookup(c, p.Intra); p.Intra != "" && (err != nil || p.Intra == "rabenseifner") {
				return &Unsupported{Reason: fmt.Sprintf("--intra %q is not a reduce and bcast pair; use binomial, linear, chain, adapt or segmented_binary", p.Intra)}
			}
		}
		if a, err := Lookup(Allreduce, p.Inner); p.Inner != "" && (err != nil || a.scratch != nil || IsComposite(a.Name)) {
			return &Unsupported{Reason: fmt.Sprintf("--inner %q cannot run among the node roots; use recursive_doubling, ring, rabenseifner or reduce_bcast", p.Inner)}
		}
	}
	if rl := p.Root % p.NodeSize; lv.lead(rl) != 0 && p.Ranks%p.NodeSize != 0 && p.Ranks > p.NodeSize {
		return &Unsupported{Reason: fmt.Sprintf("%s with a root that is not its node's first rank needs nodes of equal size (%d ranks, %d per node); Open MPI's HAN hands any bcast or reduce on unequal nodes to coll/tuned (-a ompi5 runs its choice); use a --node-size that divides the ranks, or binomial", lv.name, p.Ranks, p.NodeSize)}
	}
	return nil
}

// segment is the segment in elements: the library's, as
// COLL_BASE_COMPUTED_SEGCOUNT rounds it (to the nearest whole element, at
// least one, the whole vector when the segment would hold it).
func (lv twoLevel) segment(p Params) int64 {
	es := p.elemSize()
	if lv.segBytes == 0 || lv.segBytes < es || lv.segBytes >= es*p.Count {
		return max(p.Count, 1)
	}
	seg := lv.segBytes / es
	if lv.segBytes-seg*es > es/2 {
		seg++
	}
	return seg
}

// layout is where p's ranks sit: node size, nodes, the root's node and
// local index, and the leaders' local index.
type layout struct {
	ns, nodes, rootNode, rootLocal, lead int
}

func (lv twoLevel) layout(p Params) layout {
	ns := p.NodeSize
	l := layout{ns: ns, nodes: (p.Ranks + ns - 1) / ns, rootNode: p.Root / ns, rootLocal: p.Root % ns}
	l.lead = lv.lead(l.rootLocal)
	return l
}

// nodeSize is the number of ranks on node i.
func (l layout) nodeSize(p Params, i int) int { return min(l.ns, p.Ranks-i*l.ns) }

// group returns, for rank r and stage st, the sub-communicator it joins
// (nil: none), r's index in it and the stage's root index.
func (l layout) group(p Params, st levelStep, r int) (members []int, me, root int) {
	node, local := r/l.ns, r%l.ns
	if st.zeroPair {
		if p.Root == 0 || r != 0 && r != p.Root {
			return nil, 0, 0
		}
		return []int{0, p.Root}, b2iInt(r == p.Root), 0
	}
	if st.up {
		if local != l.lead {
			return nil, 0, 0
		}
		for i := range l.nodes {
			if i*l.ns+l.lead < p.Ranks {
				members = append(members, i*l.ns+l.lead)
			}
		}
		if st.upRoot0 {
			return members, node, 0
		}
		return members, node, l.rootNode
	}
	if st.on != nil && !st.on(node, l.rootNode, l.rootLocal) {
		return nil, 0, 0
	}
	first := node * l.ns
	if st.pair {
		if local != 0 && r != p.Root {
			return nil, 0, 0
		}
		return []int{first, p.Root}, b2iInt(r == p.Root), 1
	}
	size := l.nodeSize(p, node)
	members = make([]int, size)
	for i := range members {
		members[i] = first + i
	}
	root = 0
	if st.root != nil {
		root = st.root(l.rootLocal)
	}
	return members, local, root
}

func b2iInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pickFor is the stage's choice on g ranks for segment k of n elements.
func (st levelStep) pickFor(k int, q Params) (Algorithm, Params, error) {
	pick := st.pick
	if k == 0 && st.first != nil {
		pick = st.first
	}
	name, q, err := pick(q)
	if err != nil {
		return Algorithm{}, q, err
	}
	a, err := Lookup(st.c, name)
	if err != nil {
		return a, q, err
	}
	if a.scratch != nil || a.newRank == nil {
		return a, q, fmt.Errorf("%s cannot run inside a two-level algorithm (it needs buffers of its own); use binomial, linear, chain, adapt or segmented_binary", a.ID())
	}
	return a, q, nil
}

// stages returns the stages of one segment of n elements (the first, if
// first): each stage's part on every distinct group size.
func (lv twoLevel) stages(p Params, n int64, first bool) ([]Stage, error) {
	l := lv.layout(p)
	k := 1
	if first {
		k = 0
	}
	var out []Stage
	for _, st := range lv.steps {
		stage := Stage{Local: !st.up, Early: st.early}
		seen := map[int]bool{}
		for node := range l.nodes {
			rep := node * l.ns // a rank of the node's group
			if st.up {
				rep += l.lead
			}
			if rep >= p.Ranks {
				continue
			}
			members, _, root := l.group(p, st, rep)
			if len(members) < 2 || seen[len(members)] {
				continue
			}
			seen[len(members)] = true
			q := Params{Ranks: len(members), Count: n, ElemSize: p.ElemSize, Root: root, ZeroCountSends: p.ZeroCountSends}
			if lv.barrier { // what goes on the wire: st.wire bytes a message
				q.Count, q.ElemSize = min(st.wire, 1), max(st.wire, 1)
			}
			a, q, err := st.pickFor(k, q)
			if err != nil {
				return nil, err
			}
			stage.Parts = append(stage.Parts, Part{Algorithm: a, Params: q})
		}
		if len(stage.Parts) > 0 {
			out = append(out, stage)
		}
	}
	return out, nil
}

// newTwoLevel builds rank r's program: per segment, the stages in turn
// (each waits for the one before on this rank), segments independent of
// each other, so that they overlap as HAN's tasks do.
func newTwoLevel(lv twoLevel, p Params, r int) (stepper, error) {
	h, err := lv.build(p, r, false)
	if err != nil {
		return nil, err // not a nil *hierarchical in a non-nil interface
	}
	return h, nil
}

// levelGroup is rank r's group at one step of a two-level algorithm.
type levelGroup struct {
	members  []int
	me, root int
}

// build returns rank r's program; with checkOnly it builds just the
// segments that can differ (the first, the second and the last) to see
// whether the program can be built, so that checking costs the same for
// any vector length.
func (lv twoLevel) build(p Params, r int, checkOnly bool) (*hierarchical, error) {
	if err := lv.check(p); err != nil {
		return nil, err
	}
	l := lv.layout(p)
	groups := make([]levelGroup, len(lv.steps))
	for i, st := range lv.steps {
		m, me, root := l.group(p, st, r)
		groups[i] = levelGroup{m, me, root}
	}
	seg := lv.segment(p)
	nseg := segments(p.Count, seg)
	if err := tagsFit(nseg, len(lv.steps), p.Count); err != nil {
		return nil, err
	}
	h := &hierarchical{}
	for k := range nseg {
		if checkOnly && k > 1 && k < nseg-1 {
			continue
		}
		ph, err := lv.segmentPhases(p, groups, k, seg)
		if err != nil {
			return nil, err
		}
		h.segs = append(h.segs, ph)
	}
	return h, nil
}

// segmentPhases is a rank's program for segment k: a phase per step.
func (lv twoLevel) segmentPhases(p Params, groups []levelGroup, k int, seg int64) (*phases, error) {
	part := segmentOf(0, p.Count, seg, k)
	ph := &phases{}
	for si, st := range lv.steps {
		g := groups[si]
		if len(g.members) < 2 {
			continue
		}
		// A library that runs a call of no elements runs its parts too:
		// they are its internal functions, not MPI calls that return early
		// (MPICH 4.3.2's composition alpha ran nothing: a new user's trial).
		a, q, err := st.pickFor(k, Params{Ranks: len(g.members), Count: part.Count, ElemSize: p.ElemSize, Root: g.root, ZeroCountSends: p.ZeroCountSends})
		if err != nil {
			return nil, err
		}
		tags := (k*len(lv.steps) + si) * tagSpan
		call := &Call{Collective: a.Collective, Group: g.members, Algorithm: a, Params: q}
		s := call.on(g.me, tags, nil, part.Off)
		if lv.barrier {
			s.inner = &knowing{inner: s.inner, n: p.Count, wire: st.wire}
		}
		ph.list = append(ph.list, s)
	}
	return ph, nil
}

// IsComposite reports whether the algorithm name is built from subsets of
// the ranks (hierarchical, SUARA, HAN, SMP): it needs its nodes or grid,
// and cannot run inside another of its kind.
func IsComposite(name string) bool {
	switch name {
	case "hierarchical", "suara", "han", "smp":
		return true
	}
	return false
}

// newNonoverlapping builds rank r's program of Open MPI's nonoverlapping
// allreduce: the reduce, then the bcast, on all ranks as they are.
func newNonoverlapping(p Params, r int) (stepper, error) {
	stages, err := nonoverlappingStages(p)
	if err != nil {
		return nil, err
	}
	ph := &phases{}
	for i, st := range stages {
		part := st.Parts[0]
		if part.Algorithm.scratch != nil {
			return nil, fmt.Errorf("%s cannot run inside nonoverlapping", part.Algorithm.ID())
		}
		call := &Call{Collective: part.Algorithm.Collective, Algorithm: part.Algorithm, Params: part.Params}
		ph.list = append(ph.list, call.on(r, i*tagSpan, nil, 0))
	}
	return ph, nil
}

// libraryAlgorithms are the algorithms that reproduce what the MPI
// libraries run where collsim's classic ones differ.
func libraryAlgorithms() []Algorithm {
	return []Algorithm{
		{Collective: Bcast, Name: "scatter_rd_allgather",
			Summary: "What MPICH and Open MPI run as their scatter-allgather bcast (van de Geijn): blocks of ceil(n/p) elements, a binomial scatter from the root (each rank receives its subtree's blocks, then hands each child its subtree's, largest first), then a recursive-doubling allgather over relative ranks for any p (where a partner's subtree runs past p, the ranks that received it pass it on by recursive halving). MPICH's medium-message bcast for powers of two; Open MPI's algorithm 8.",
			Cost:    "about log2 p a + (p-1)/p nb (scatter) + log2 p a + (p-1)/p nb (allgather), plus up to log2 p more steps for p not a power of two",
			newRank: func(p Params, r int) stepper { return newBinomialScatterAllgather(p, r, false) }},
		{Collective: Bcast, Name: "scatter_ring_allgather",
			Summary: "MPICH's long-message bcast and Open MPI's algorithm 9: the same binomial scatter of ceil(n/p)-element blocks as scatter_rd_allgather, then a ring allgather (p-1 steps of one block to the right neighbour). About 2n bytes per link whatever p: for long vectors, or p not a power of two.",
			Cost:    "about log2 p a + (p-1)/p nb (scatter) + (p-1)(a + nb/p) (ring)",
			newRank: func(p Params, r int) stepper { return newBinomialScatterAllgather(p, r, true) }},
		{Collective: Allreduce, Name: "nonoverlapping",
			Summary: "Open MPI's nonoverlapping allreduce (its algorithm 2): MPI_Reduce to rank 0, then MPI_Bcast from rank 0, each chosen as Open MPI's coll/tuned chooses it for the call (its fixed rules and their run-time fallbacks: a binomial or in-order reduce, a k-nomial, binary or binomial bcast, ...). What Open MPI 4.1 runs for short vectors on 128 ranks or more.",
			Cost:    "T_reduce + T_bcast of the algorithms Open MPI picks",
			newRank: func(p Params, r int) stepper { st, _ := newNonoverlapping(p, r); return st }, lookahead: 64,
			needs: func(p Params) error { _, err := nonoverlappingStages(p); return err }},
		twoLevelAlgorithm(Bcast, "han", "Open MPI 5.0's coll/han bcast, as 5.0 runs it on a communicator spanning several nodes: the vector in 64 KiB segments; per segment a bcast among the ranks of the root's local rank on every node (Open MPI's tuned choice for the first segment, coll/libnbc's linear or binomial for the others), then a bcast inside each node from that rank (tuned). Segments overlap (freely, up to 256 ahead, where Open MPI's han issues segment k+1 among the nodes alongside segment k inside them). Needs ranks per node; a root that is not its node's first rank needs nodes of equal size. Open MPI's han hands every bcast on nodes of unequal size to coll/tuned (-a ompi5 does), whatever the root."),
		twoLevelAlgorithm(Reduce, "han", "Open MPI 5.0's coll/han reduce on several nodes: the vector in 64 KiB segments; per segment a reduce inside each node to the rank of the root's local rank (Open MPI's tuned choice), then coll/libnbc's reduce among those ranks to the root (Rabenseifner, binomial or chain). Segments overlap (freely, up to 256 ahead, where Open MPI's han issues segment k+1 among the nodes alongside segment k inside them). Needs ranks per node; a root that is not its node's first rank needs nodes of equal size. Open MPI's han hands every reduce on nodes of unequal size to coll/tuned (-a ompi5 does), whatever the root."),
		twoLevelAlgorithm(Bcast, "smp", "MPICH 3.3.2's SMP-aware bcast (MPIR_Bcast_intra_smp), for short vectors (under 12288 B or 8 ranks): the root hands the vector to its node's first rank, the nodes' first ranks broadcast it, and each node broadcasts it from its first rank; for medium vectors on a power of two of ranks, the root's node first, then the first ranks, then the other nodes. Each part by MPICH's classic rules. Needs ranks per node."),
		twoLevelBarrier("han", "Open MPI 5.0's coll/han barrier on several nodes: a barrier inside each node, one among the nodes' first ranks, and one inside each node again, each Open MPI's tuned choice. Needs ranks per node."),
		twoLevelBarrier("smp", "MPICH 3.3.2's SMP-aware barrier: a barrier inside each node, one among the nodes' first ranks, then each first rank broadcasts one byte inside its node (dissemination, dissemination, binomial by MPICH's rules). Needs ranks per node."),
		twoLevelAlgorithm(Reduce, "smp", "MPICH 3.3.2's SMP-aware reduce (MPIR_Reduce_intra_smp): every node but the root's reduces to its first rank, the first ranks reduce to the root's node, and the root's node reduces to the root. Each part by MPICH's classic rules. Needs ranks per node."),
		{Collective: Allreduce, Name: "han",
			Summary: "Open MPI 5.0's coll/han allreduce (Luo et al. 2020), as 5.0 runs it by default on a communicator spanning several nodes: the vector in 64 KiB segments; per segment a reduce inside each node (Open MPI's tuned choice), a reduce and a bcast among the nodes' first ranks (coll/libnbc's choices: Rabenseifner, binomial or chain; linear or binomial), and a bcast inside each node (tuned). Segments overlap. Needs ranks per node (--node-size, or a machine with nodes).",
			Cost:    "about T_reduce,node(s) + T_reduce,leaders(s) + T_bcast,leaders(s) + T_bcast,node(s) + (k-1) max stage, for k segments of s",
			newRank: twoLevelRank(Allreduce, "han"), lookahead: 256, needs: twoLevelNeeds(Allreduce, "han")},
		{Collective: Allreduce, Name: "smp",
			Summary: "MPICH's SMP-aware allreduce, which MPICH 3.3.2 runs whenever ranks share nodes: a reduce inside each node to its first rank, an allreduce among those ranks, and a bcast inside each node, each chosen by MPICH's classic rules for its sub-communicator; the vector is not cut. Needs ranks per node (--node-size, or a machine with nodes).",
			Cost:    "T_reduce,node + T_allreduce,leaders + T_bcast,node",
			newRank: twoLevelRank(Allreduce, "smp"), lookahead: 256, needs: twoLevelNeeds(Allreduce, "smp")},
		scatteredAlltoall(),
		{Collective: ReduceScatter, Name: "butterfly",
			Summary: "Open MPI's butterfly reduce_scatter (Traff 2005; Open MPI's algorithm 4): after folding the ranks beyond the largest power of two, partners at distance 1, 2, 4, ... each keep half of their range of blocks (the lower half if that bit of their rank is 0) and reduce the partner's copy of it, so that each rank ends with the block of its mirror image (its rank's bits reversed); a last exchange with that rank puts every block home. log2 p steps of halving data, plus one exchange.",
			Cost:    "log2 p a + (p-1)/p n(b + g) + a + nb/p for p a power of two (from 4 ranks); a fold and a hand-back otherwise",
			newRank: func(p Params, r int) stepper {
				return &butterflyReduceScatter{foldPhase: newFold(r, p.Ranks), n: p.Count, last: -1}
			}},
	}
}

// scatteredAlltoall is MPICH's "scattered" alltoall
// (src/mpi/coll/alltoall/alltoall_intra_scattered.c, 3.3.2 and 4.3.2): the
// linear alltoall posted MPIR_CVAR_ALLTOALL_THROTTLE (default 32) pairs
// at a time, each batch waited for before the next.
func scatteredAlltoall() Algorithm {
	return Algorithm{Collective: Alltoall, Name: "scattered",
		Summary: "MPICH's medium-message alltoall: every rank posts the receives (from r, r+1, ...) and sends (to r, r-1, ...) of 32 partners at a time (MPIR_CVAR_ALLTOALL_THROTTLE), itself among the first, and waits for them before the next 32. Between linear (all at once) and pairwise (one at a time).",
		Cost:    "the sum over batches of 32 partners of a + k cb, k the batch's ranks other than itself: a + (p-1)cb up to 32 ranks, c the block per pair",
		newRank: func(p Params, r int) stepper { return &linearSync{r: r, p: p.Ranks, c: p.Count, window: 32} }}
}

// twoLevelRank and twoLevelNeeds are a two-level algorithm's registry
// functions.
func twoLevelRank(c Collective, name string) func(p Params, r int) stepper {
	return func(p Params, r int) stepper {
		lv, _ := twoLevelOf(c, name, p)
		st, _ := newTwoLevel(lv, p, r)
		return st
	}
}

func twoLevelNeeds(c Collective, name string) func(p Params) error {
	return func(p Params) error {
		lv, _ := twoLevelOf(c, name, p)
		if err := lv.check(p); err != nil {
			return err
		}
		for r := range min(p.Ranks, 2*max(p.NodeSize, 1)) { // one node's ranks and the next's
			if _, err := lv.build(p, r, true); err != nil {
				return err
			}
		}
		return nil
	}
}

// twoLevelAlgorithm registers a two-level bcast or reduce. Its Cost says
// what cost/library.go's composite prices: the smp algorithms cut
// nothing into segments, and han's k segments are bounded, not summed
// by HAN's own task model, which is not a bound (its Cost said "about
// ... plus (k-1) times the slowest stage" for both: a new user's trial).
func twoLevelAlgorithm(c Collective, name, summary string) Algorithm {
	cost := "the sum of its stages' forms, each stage as long as its slowest node (each part the library's choice, by its own form): exact where the parts' forms are, on nodes of one size"
	if name == "han" {
		cost = "for one segment the sum of its stages' forms (exact where theirs are, on nodes of one size); for k segments, which overlap, between the last segment's stages (or what one port must take in) and k segments' stages one after another"
	}
	return Algorithm{Collective: c, Name: name, Summary: summary,
		Cost:    cost,
		newRank: twoLevelRank(c, name), lookahead: 256, needs: twoLevelNeeds(c, name)}
}

// knowing runs a stage of a two-level barrier with the barrier's whole
// knowledge vector: whatever the stage's own size, each of its messages
// carries (in data mode) the p-entry vector by which the check proves the
// barrier, and wire bytes on the network.
type knowing struct {
	inner   stepper
	n, wire int64
}

func (k *knowing) step(b *builder) bool {
	before := len(b.ops)
	more := k.inner.step(b)
	for i := before; i < len(b.ops); i++ {
		if b.ops[i].Kind != sim.OpCalc {
			b.ops[i].Data, b.ops[i].Bytes = sim.Region{Count: k.n}, k.wire
		}
	}
	return more
}

// finals are the inner stage's.
func (k *knowing) finals() []int32 {
	if f, ok := k.inner.(finisher); ok {
		return f.finals()
	}
	return nil
}

// twoLevelBarrier registers a two-level barrier.
func twoLevelBarrier(name, summary string) Algorithm {
	a := twoLevelAlgorithm(Barrier, name, summary)
	a.Cost = "the sum of its three stages' latencies"
	a.emptyMessages = true
	return a
}

// rootLate reports whether the root is not its node's first rank: then
// the medium SMP bcast's first stage, in the root's node, may hand the
// node's first rank the vector before it ends, and the stage among nodes
// starts early.
func rootLate(p Params) bool { return p.NodeSize > 0 && p.Root%p.NodeSize > 0 }

// mpich4BcastBeta reports whether MPICH 4.3.2's ch4/generic.json picks
// composition beta for a bcast on a node-aware communicator:
// comm_size=pow2 (8 ranks or more) with 12288 <= avg_msg_size < 524288.
func mpich4BcastBeta(p Params) bool {
	b := p.SizeBytes(Bcast)
	return p.Ranks >= 8 && isPow2(p.Ranks) && b >= 12288 && b < 524288
}
