package collectives

import (
	"fmt"
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
// others among nodes (or, for nonoverlapping, on all ranks).
type Stage struct {
	Local bool
	Parts []Part
}

// Composite describes how a composite algorithm runs for p: the stages of
// one full segment, the stages of the last one, and how many segments
// there are (the last counted in; 1 when the vector is not cut). Segments
// overlap (HAN's tasks), stages within one do not.
type Composite struct {
	Full, Last []Stage
	Segments   int64
}

// CompositeOf returns how a composite algorithm runs for p; ok is false
// for algorithms that are not composites.
func CompositeOf(a Algorithm, p Params) (c Composite, ok bool, err error) {
	if a.Collective != Allreduce {
		return c, false, nil
	}
	switch a.Name {
	case "nonoverlapping":
		st, err := nonoverlappingStages(p)
		return Composite{Full: st, Last: st, Segments: 1}, true, err
	case "han", "smp":
		lv := twoLevelOf(a.Name, p)
		if err := lv.check(p); err != nil {
			return c, true, err
		}
		seg := lv.segment(p)
		k := int64(segments(p.Count, seg))
		full, err := lv.stages(p, min(seg, p.Count))
		if err != nil {
			return c, true, err
		}
		last, err := lv.stages(p, p.Count-(k-1)*seg)
		return Composite{Full: full, Last: last, Segments: k}, true, err
	}
	return c, false, nil
}

// nonoverlappingStages: Open MPI's nonoverlapping allreduce
// (ompi/mca/coll/base/coll_base_allreduce.c,
// ompi_coll_base_allreduce_intra_nonoverlapping, v4.1.8 and v5.0.10) is
// the communicator's MPI_Reduce to rank 0 followed by its MPI_Bcast from
// rank 0; under coll/tuned those are coll/tuned's fixed decisions for the
// same ranks and count, with their run-time fallbacks (ompiTuned).
func nonoverlappingStages(p Params) ([]Stage, error) {
	q := p
	q.Root = 0
	var out []Stage
	for _, c := range []Collective{Reduce, Bcast} {
		_, pick, err := ompiTuned(c, q)
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

// twoLevel is a library's hierarchical allreduce: per segment of the
// vector, a reduce inside each node to its first rank, an exchange among
// those leaders, and a bcast inside each node. Ranks r..r+NodeSize-1 share
// a node (block placement), the last node may hold fewer.
type twoLevel struct {
	name string
	// segBytes is the library's segment in bytes (0: the vector is not cut).
	segBytes int64
	// stages per segment: up (among the leaders) or inside the node, the
	// collective, and the library's choice of algorithm for it.
	steps []levelStep
}

type levelStep struct {
	up   bool
	c    Collective
	pick func(q Params) (string, Params, error)
}

// twoLevelOf returns the library's two-level allreduce named name.
func twoLevelOf(name string, p Params) twoLevel {
	if name == "han" {
		// Open MPI 5.0.10's coll/han (coll_han_allreduce.c,
		// mca_coll_han_allreduce_intra, the default "intra" algorithm):
		// segments of han_allreduce_segsize (65536 B, coll_han_component.c);
		// per segment a reduce on the node's low communicator (coll/tuned),
		// an MPI_Ireduce and an MPI_Ibcast on the leaders' up communicator
		// (coll/libnbc, han_allreduce_up_module 0), and a bcast on the node
		// (coll/tuned).
		return twoLevel{name: name, segBytes: 65536, steps: []levelStep{
			{false, Reduce, tunedPick(Reduce)}, {true, Reduce, libnbcReduce}, {true, Bcast, libnbcBcast}, {false, Bcast, tunedPick(Bcast)}}}
	}
	// MPICH 3.3.2's SMP allreduce (src/mpi/coll/allreduce/allreduce_intra_smp.c,
	// MPIR_Allreduce_intra_smp): MPIR_Reduce to the node's rank 0 on
	// node_comm, MPIR_Allreduce on node_roots_comm, MPIR_Bcast on node_comm,
	// each chosen by MPICH 3.3.2's classic rules (those sub-communicators
	// are not node-aware) unless p.Intra names the node's reduce and bcast
	// and p.Inner the roots' allreduce (as MPICH 4's selection does); the
	// vector is not cut.
	red, bc, all := mpich33Pick(Reduce), mpich33Pick(Bcast), mpich33Pick(Allreduce)
	if p.Intra != "" {
		red, bc = fixedPick(p.Intra), fixedPick(p.Intra)
	}
	if p.Inner != "" {
		all = fixedPick(p.Inner)
	}
	return twoLevel{name: name, steps: []levelStep{{false, Reduce, red}, {true, Allreduce, all}, {false, Bcast, bc}}}
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
		return &Unsupported{Reason: fmt.Sprintf("%s needs ranks per node (--node-size, or a machine config with nodes or several ranks per host); on a flat machine use ring or rabenseifner", lv.name)}
	}
	if lv.name == "smp" {
		for _, c := range []Collective{Reduce, Bcast} {
			if _, err := Lookup(c, p.Intra); p.Intra != "" && (err != nil || p.Intra == "rabenseifner") {
				return &Unsupported{Reason: fmt.Sprintf("--intra %q is not a reduce and bcast pair; use binomial, linear, chain, adapt or segmented_binary", p.Intra)}
			}
		}
		if a, err := Lookup(Allreduce, p.Inner); p.Inner != "" && (err != nil || a.scratch != nil || isComposite(a.Name)) {
			return &Unsupported{Reason: fmt.Sprintf("--inner %q cannot run among the node roots; use recursive_doubling, ring, rabenseifner or reduce_bcast", p.Inner)}
		}
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

// stages returns the stages of one segment of n elements: each stage's
// part on every node size (or on the leaders).
func (lv twoLevel) stages(p Params, n int64) ([]Stage, error) {
	ns := p.NodeSize
	nodes := (p.Ranks + ns - 1) / ns
	sizes := []int{min(ns, p.Ranks)}
	if last := p.Ranks - (nodes-1)*ns; last != sizes[0] {
		sizes = append(sizes, last)
	}
	var out []Stage
	for _, st := range lv.steps {
		stage := Stage{Local: !st.up}
		groups := sizes
		if st.up {
			groups = []int{nodes}
		}
		for _, g := range groups {
			if g < 2 {
				continue
			}
			name, q, err := st.pick(Params{Ranks: g, Count: n, ElemSize: p.ElemSize})
			if err != nil {
				return nil, err
			}
			a, err := Lookup(st.c, name)
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
	if err := lv.check(p); err != nil {
		return nil, err
	}
	ns := p.NodeSize
	node, local := r/ns, r%ns
	first := node * ns
	size := min(ns, p.Ranks-first)
	nodes := (p.Ranks + ns - 1) / ns
	members := make([]int, size)
	for i := range members {
		members[i] = first + i
	}
	var leaders []int
	if local == 0 {
		leaders = make([]int, nodes)
		for i := range leaders {
			leaders[i] = i * ns
		}
	}
	seg := lv.segment(p)
	h := &hierarchical{}
	for k := range segments(p.Count, seg) {
		part := segmentOf(0, p.Count, seg, k)
		ph := &phases{}
		for si, st := range lv.steps {
			tags := (k*len(lv.steps) + si) * tagSpan
			g, me, group := size, local, members
			if st.up {
				if local != 0 {
					continue
				}
				g, me, group = nodes, node, leaders
			}
			if g < 2 {
				continue
			}
			name, q, err := st.pick(Params{Ranks: g, Count: part.Count, ElemSize: p.ElemSize})
			if err != nil {
				return nil, err
			}
			a, err := Lookup(st.c, name)
			if err != nil {
				return nil, err
			}
			if a.scratch != nil || a.newRank == nil {
				return nil, fmt.Errorf("%s cannot run inside %s", a.ID(), lv.name)
			}
			ph.list = append(ph.list, newSub(a.newRank(q, me), group, tags, nil, part.Off))
		}
		h.segs = append(h.segs, ph)
	}
	return h, nil
}

// isComposite reports whether an allreduce calls other allreduces or
// composes hierarchies itself (it cannot run inside one).
func isComposite(name string) bool {
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
		ph.list = append(ph.list, newSub(part.Algorithm.newRank(part.Params, r), nil, i*tagSpan, nil, 0))
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
		{Collective: Allreduce, Name: "han",
			Summary: "Open MPI 5.0's coll/han allreduce (Luo et al. 2020), as 5.0 runs it by default on a communicator spanning several nodes: the vector in 64 KiB segments; per segment a reduce inside each node (Open MPI's tuned choice), a reduce and a bcast among the nodes' first ranks (coll/libnbc's choices: Rabenseifner, binomial or chain; linear or binomial), and a bcast inside each node (tuned). Segments overlap. Needs ranks per node (--node-size, or a machine with nodes).",
			Cost:    "about T_reduce,node(s) + T_reduce,leaders(s) + T_bcast,leaders(s) + T_bcast,node(s) + (k-1) max stage, for k segments of s",
			newRank: func(p Params, r int) stepper { st, _ := newTwoLevel(twoLevelOf("han", p), p, r); return st }, lookahead: 256,
			needs: func(p Params) error { _, err := newTwoLevel(twoLevelOf("han", p), p, 0); return err }},
		{Collective: Allreduce, Name: "smp",
			Summary: "MPICH's SMP-aware allreduce, which MPICH 3.3.2 runs whenever ranks share nodes: a reduce inside each node to its first rank, an allreduce among those ranks, and a bcast inside each node, each chosen by MPICH's classic rules for its sub-communicator; the vector is not cut. Needs ranks per node (--node-size, or a machine with nodes).",
			Cost:    "T_reduce,node + T_allreduce,leaders + T_bcast,node",
			newRank: func(p Params, r int) stepper { st, _ := newTwoLevel(twoLevelOf("smp", p), p, r); return st }, lookahead: 256,
			needs: func(p Params) error { _, err := newTwoLevel(twoLevelOf("smp", p), p, 0); return err }},
		scatteredAlltoall(),
	}
}

// scatteredAlltoall is MPICH's "scattered" alltoall
// (src/mpi/coll/alltoall/alltoall_intra_scattered.c, 3.3.2 and 4.3.2): the
// linear alltoall posted MPIR_CVAR_ALLTOALL_THROTTLE (default 32) pairs
// at a time, each batch waited for before the next.
func scatteredAlltoall() Algorithm {
	return Algorithm{Collective: Alltoall, Name: "scattered",
		Summary: "MPICH's medium-message alltoall: every rank posts the receives and sends of 32 partners at a time (MPIR_CVAR_ALLTOALL_THROTTLE) and waits for them before the next 32. Between linear (all at once) and pairwise (one at a time).",
		Cost:    "about ceil(p/32)(a + 32cb), c the block per pair",
		newRank: func(p Params, r int) stepper { return &linearSync{r: r, p: p.Ranks, c: p.Count, window: 32} }}
}
