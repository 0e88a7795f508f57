package collectives

import (
	"fmt"
	"strings"
)

// MPICH's choices. Two releases, since MPICH changed how it chooses:
//
// MPICH 3.3.2 (pmodels/mpich tag v3.3.2, its default ch3 device, which
// has no selection of its own) chooses in MPIR_<Collective>_intra_auto in
// src/mpi/coll/<collective>/<collective>.c by the MPIR_CVAR_* thresholds
// defined at the top of those files (defaults: reduce short 2048 B, and
// allreduce's the same, which its default never lets it reach; bcast short 12288 B, long 524288 B, at least 8 processes;
// allgather short 81920 B, long 524288 B; alltoall short 256 B, medium
// 32768 B per pair, throttle 32; reduce_scatter long 524288 B), and first
// takes the SMP-aware algorithms (MPIR_CVAR_ENABLE_SMP_COLLECTIVES, on by
// default, with no size limit) when the communicator is node-aware:
// MPIR_Comm_is_node_aware, set by MPIR_Comm_commit in
// src/mpi/comm/commutil.c whenever ranks share a node (not when every rank
// is alone on its node).
//
// MPICH 4.3.2 (tag v4.3.2, ch4 device) chooses by JSON decision trees
// compiled in from maint/tuning/coll/mpir/generic.json (the MPIR level,
// searched by src/mpi/coll/src/csel.c; message sizes as its
// get_avg_msgsize / get_total_msgsize count them) under the ch4 level's
// maint/tuning/coll/ch4/generic.json, which picks a composition
// (src/mpid/ch4/src/ch4_coll_impl.h): on communicators without a node
// hierarchy every composition calls the netmod, whose collectives are the
// MPIR level's; with one, allreduce runs composition alpha (a shared-memory
// reduce in the node, the MPIR allreduce among node roots, a shared-memory
// bcast), and a single-node communicator composition gamma (shared memory
// only).
//
// Collsim's data are sums of a built-in type: commutative, built-in op.
// A machine without nodes (Params.NodeSize 0) has one rank per host: no
// node hierarchy.

// mpichNodeAware reports whether MPICH builds a node hierarchy for p:
// ranks share nodes.
func mpichNodeAware(p Params) bool { return p.NodeSize >= 2 && p.Ranks > 1 }

// mpich33Classic is MPICH 3.3.2's choice on a communicator that is not
// node-aware (MPIR_<Collective>_intra_auto).
func mpich33Classic(c Collective, p Params) (string, Params, string, error) {
	n, pof2 := p.Ranks, floorPow2(max(p.Ranks, 1))
	bytes := p.SizeBytes(c)
	switch c {
	case Allreduce: // allreduce.c, MPIR_Allreduce_intra_auto
		// Its size is count x type size only when
		// MPIR_CVAR_MAX_SMP_ALLREDUCE_MSG_SIZE is set, and 0 at that
		// CVAR's default (0), so the 2048 B test that would switch to
		// Rabenseifner always passes (so in 3.3 to 3.3.2: 3.2 tested
		// count x type size, 3.4 chooses by its JSON tuning). collsim ran
		// Rabenseifner from 2049 B until an audit of the source.
		return "recursive_doubling", p, "recursive doubling at every size: with MPIR_CVAR_MAX_SMP_ALLREDUCE_MSG_SIZE at its default 0, MPIR_Allreduce_intra_auto takes the message as 0 bytes, under its 2048 B switch to Rabenseifner", nil
	case Bcast: // bcast.c, MPIR_Bcast_intra_auto
		switch {
		case bytes < 12288 || n < 8:
			return "binomial", p, "under 12288 B or under 8 ranks: binomial", nil
		case bytes < 524288 && isPow2(n):
			return "scatter_rd_allgather", p, "under 524288 B, power-of-two ranks: binomial scatter + recursive-doubling allgather", nil
		}
		return "scatter_ring_allgather", p, "524288 B or more, or ranks not a power of two: binomial scatter + ring allgather", nil
	case Reduce: // reduce.c, MPIR_Reduce_intra_auto
		if bytes > 2048 && p.Count >= int64(pof2) {
			return "rabenseifner", p, "over 2048 B and count >= the largest power of two <= ranks: reduce-scatter + gather (Rabenseifner)", nil
		}
		return "binomial", p, "at most 2048 B (or count < the largest power of two <= ranks): binomial", nil
	case Allgather: // allgather.c, MPIR_Allgather_intra_auto
		switch {
		case bytes < 524288 && isPow2(n):
			return "recursive_doubling", p, "under 524288 B in all, power-of-two ranks: recursive doubling", nil
		case bytes < 81920:
			return "bruck", p, "under 81920 B in all: Bruck", nil
		}
		return "ring", p, "long: ring", nil
	case ReduceScatter: // reduce_scatter.c, MPIR_Reduce_scatter_intra_auto (commutative)
		if bytes < 524288 {
			return "recursive_halving", p, "commutative, under 524288 B in all: recursive halving", nil
		}
		return "pairwise", p, "commutative, 524288 B or more: pairwise", nil
	case Alltoall: // alltoall.c, MPIR_Alltoall_intra_auto
		perPair := p.Count * p.elemSize()
		switch {
		case perPair <= 256 && n >= 8:
			return "bruck", p, "at most 256 B per pair, at least 8 ranks: Bruck", nil
		case perPair <= 32768:
			return "scattered", p, "at most 32768 B per pair: scattered (sends and receives posted 32 pairs at a time, MPIR_CVAR_ALLTOALL_THROTTLE)", nil
		}
		return "pairwise", p, "long: pairwise exchange", nil
	case Barrier: // barrier.c, MPIR_Barrier_intra_auto
		return "dissemination", p, "dissemination", nil
	case Gather: // gather.c, MPIR_Gather_intra_auto
		return "binomial", p, "binomial, at every size (MPIR_Gather_intra_auto)", nil
	case Scatter: // scatter.c, MPIR_Scatter_intra_auto
		return "binomial", p, "binomial, at every size (MPIR_Scatter_intra_auto)", nil
	}
	return "", p, "", &NotTranscribed{Library: "MPICH 3.3", Collective: c}
}

// mpich33Pick is MPICH 3.3.2's classic choice for c on a sub-communicator
// (the SMP algorithms' node and node-roots communicators are not
// node-aware themselves).
func mpich33Pick(c Collective) func(q Params) (string, Params, error) {
	return func(q Params) (string, Params, error) {
		name, q, _, err := mpich33Classic(c, q)
		return name, q, err
	}
}

// mpich33Choice is MPICH 3.3.2's choice for the call.
func mpich33Choice(c Collective, p Params) (choice, error) {
	name, q, rule, err := mpich33Classic(c, p)
	if err != nil {
		return choice{}, err
	}
	rule = "MPICH 3.3.2 " + rule
	if mpichNodeAware(p) {
		switch c {
		case Allreduce:
			// allreduce.c, MPIR_Allreduce_intra_auto: SMP first, for a
			// commutative op and nbytes <= MPIR_CVAR_MAX_SMP_ALLREDUCE_MSG_SIZE
			// (0: no limit).
			q := p
			q.Inner, q.Intra = "", ""
			return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node), so the communicator is node-aware: SMP allreduce (allreduce_intra_smp.c), its node reduce, node-roots allreduce and node bcast chosen by the classic rules", p.NodeSize)}, nil
		case Bcast:
			// bcast.c, MPIR_Bcast_intra_auto: SMP first (no size limit by
			// default); bcast_intra_smp.c then runs its short branch, its
			// medium one, or the ring scatter-allgather on everyone.
			q := p
			q.Inner, q.Intra = "", ""
			switch b := p.SizeBytes(c); {
			case b == 0:
			case b < 12288 || p.Ranks < 8:
				return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node): SMP bcast (bcast_intra_smp.c), short branch (under 12288 B or 8 ranks): the root's node's rank 0, the node roots, then every node", p.NodeSize)}, nil
			case mpichSMPBcastMedium(p):
				return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node): SMP bcast (bcast_intra_smp.c), medium branch (under 524288 B, a power of two of ranks): the root's node, the node roots, then the other nodes", p.NodeSize)}, nil
			default:
				return choice{name: "scatter_ring_allgather", params: p, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node): SMP bcast (bcast_intra_smp.c), long or non-power-of-two branch: scatter + ring allgather on the whole communicator", p.NodeSize)}, nil
			}
		case Reduce:
			// reduce.c, MPIR_Reduce_intra_auto: SMP first for a commutative
			// op (no size limit by default).
			q := p
			q.Inner, q.Intra = "", ""
			return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node): SMP reduce (reduce_intra_smp.c): the other nodes to their rank 0, the node roots to the root's node, the root's node to the root", p.NodeSize)}, nil
		case Barrier:
			// barrier.c, MPIR_Barrier_intra_auto: SMP first.
			return choice{name: "smp", params: p, rule: fmt.Sprintf("MPICH 3.3.2: ranks share nodes (%d per node): SMP barrier (barrier_intra_smp.c): node barriers, the node roots' barrier, a 1-byte bcast in each node", p.NodeSize)}, nil
		}
	}
	return choice{name: name, params: q, rule: rule}, nil
}

// mpich4Flat is MPICH 4.3.2's MPIR-level choice (mpir/generic.json) for a
// communicator without a node hierarchy.
func mpich4Flat(c Collective, p Params) (string, Params, string, error) {
	n, pof2 := p.Ranks, floorPow2(max(p.Ranks, 1))
	avg := p.SizeBytes(c) // allreduce, bcast, reduce: count x type size
	switch c {
	case Allreduce:
		switch {
		case avg <= 8:
			return "recursive_doubling", p, "avg_msg_size <= 8: recursive doubling", nil
		case p.Count < int64(pof2):
			return "recursive_doubling", p, "count < pow2: recursive doubling", nil
		}
		return "rabenseifner", p, "built-in op, count >= pow2: reduce_scatter_allgather (Rabenseifner)", nil
	case Bcast:
		switch {
		case n < 8:
			return "binomial", p, "comm_size < 8: binomial", nil
		case avg <= 12288:
			return "binomial", p, "avg_msg_size <= 12288: binomial", nil
		case isPow2(n) && avg <= 524288:
			return "scatter_rd_allgather", p, "pow2 comm_size, avg_msg_size <= 524288: scatter_recursive_doubling_allgather", nil
		}
		return "scatter_ring_allgather", p, "scatter_ring_allgather", nil
	case Reduce:
		if avg <= 2048 || p.Count < int64(pof2) {
			return "binomial", p, "avg_msg_size <= 2048 or count < pow2: binomial", nil
		}
		return "rabenseifner", p, "built-in op, count >= pow2: reduce_scatter_gather (Rabenseifner)", nil
	case Allgather: // total_msg_size: recvcount x comm_size x type size
		total := p.SizeBytes(c)
		switch {
		case isPow2(n) && total < 524288:
			return "recursive_doubling", p, "pow2 comm_size, total_msg_size < 524288: recursive doubling", nil
		case !isPow2(n) && total < 81920:
			return "bruck", p, "total_msg_size < 81920: Bruck", nil
		}
		return "ring", p, "ring", nil
	case ReduceScatter:
		if p.SizeBytes(c) < 524288 {
			return "recursive_halving", p, "commutative, total_msg_size < 524288: recursive halving", nil
		}
		return "pairwise", p, "commutative: pairwise", nil
	case Alltoall: // avg_msg_size: sendcount x type size, per pair
		perPair := p.Count * p.elemSize()
		switch {
		case n < 8 && perPair <= 32768:
			return "scattered", p, "comm_size < 8, avg_msg_size <= 32768: scattered", nil
		case n < 8:
			return "pairwise", p, "comm_size < 8: pairwise", nil
		case perPair <= 256:
			return "bruck", p, "avg_msg_size <= 256: Bruck", nil
		case perPair <= 32768:
			return "scattered", p, "avg_msg_size <= 32768: scattered", nil
		}
		return "pairwise", p, "pairwise", nil
	case Barrier:
		return "dissemination", p, "k_dissemination with k=2: dissemination", nil
	case Gather, Scatter:
		// ch4/generic.json picks composition alpha on every intra
		// communicator, which calls the netmod's, the MPIR level's.
		name := strings.ToUpper(string(c[:1])) + string(c[1:]) // MPICH's spelling: Gather, Scatter
		return "binomial", p, fmt.Sprintf("intra: MPIR_%s_intra_binomial, at every size (ch4/generic.json's composition alpha calls it: MPIDI_%s_intra_composition_alpha)", name, name), nil
	}
	return "", p, "", &NotTranscribed{Library: "MPICH 4", Collective: c}
}

// mpich4Pick is MPICH 4.3.2's MPIR-level choice for c on a
// sub-communicator (the node roots').
func mpich4Pick(c Collective) func(q Params) (string, Params, error) {
	return func(q Params) (string, Params, error) {
		name, q, _, err := mpich4Flat(c, q)
		return name, q, err
	}
}

// mpich4Choice is MPICH 4.3.2's choice for the call; its MPI_Allreduce
// runs a call of no elements (Params.ZeroCountSends).
func mpich4Choice(c Collective, p Params) (choice, error) {
	ch, err := mpich4Call(c, p)
	if err == nil && c == Allreduce {
		ch.params.ZeroCountSends = true
		if p.Count == 0 {
			ch.rule += "; a call of no elements runs as well: MPICH 4.3.2's MPI_Allreduce does not return early for it (src/binding/c/coll_api.txt), where its other collectives and Open MPI's return at once"
		}
	}
	return ch, err
}

// mpich4Call is MPICH 4.3.2's choice for the call as its rules make it;
// mpich4Choice adds what its MPI_Allreduce does with no elements.
func mpich4Call(c Collective, p Params) (choice, error) {
	name, q, rule, err := mpich4Flat(c, p)
	if err != nil {
		return choice{}, err
	}
	rule = "MPICH 4.3.2 mpir/generic.json: " + rule
	if !mpichNodeAware(p) {
		return choice{name: name, params: q, rule: rule}, nil
	}
	q = p
	q.Inner, q.Intra, q.Library = "", "", "mpich4"
	shm := "; approximate: MPICH runs the steps inside a node with its shared-memory release_gather algorithms, collsim with binomial trees (and a dissemination barrier)"
	roots := (p.Ranks + p.NodeSize - 1) / p.NodeSize
	switch c {
	case Allreduce:
		if p.NodeSize >= p.Ranks {
			// ch4/generic.json: comm_size=node_comm_size: composition gamma.
			rule += "; approximate: on a single node MPICH 4.3.2 runs composition gamma, its shared-memory release_gather allreduce, which collsim does not have; collsim runs the MPIR choice"
			return choice{name: name, params: p, rule: rule}, nil
		}
		_, _, innerRule, err := mpich4Flat(Allreduce, Params{Ranks: roots, Count: p.Count, ElemSize: p.ElemSize})
		if err != nil {
			return choice{}, err
		}
		return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 4.3.2 ch4/generic.json: ranks share nodes (%d per node), commutative op: composition alpha (ch4_coll_impl.h, MPIDI_Allreduce_intra_composition_alpha): node reduce, allreduce among the %d node roots (mpir/generic.json: %s), node bcast", p.NodeSize, roots, innerRule) + shm}, nil
	case Bcast:
		b := p.SizeBytes(c)
		switch {
		case p.Ranks < 8 || b < 12288:
			return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 4.3.2 ch4/generic.json: ranks share nodes (%d per node), under 8 ranks or 12288 B: composition alpha (MPIDI_Bcast_intra_composition_alpha): the root to its node's rank 0, the node roots (mpir/generic.json), every node", p.NodeSize) + shm}, nil
		case mpich4BcastBeta(p):
			return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 4.3.2 ch4/generic.json: ranks share nodes (%d per node), a power of two of ranks, under 524288 B: composition beta (MPIDI_Bcast_intra_composition_beta): the root's node, the node roots (mpir/generic.json), the other nodes", p.NodeSize) + shm}, nil
		}
		return choice{name: name, params: p, rule: "MPICH 4.3.2 ch4/generic.json: ranks share nodes, long message: composition gamma, the MPIR bcast on the whole communicator (mpir/generic.json: " + rule[len("MPICH 4.3.2 mpir/generic.json: "):] + ")"}, nil
	case Reduce:
		comp := "beta (MPIDI_Reduce_intra_composition_beta: the other nodes, the node roots to the root's node, the root's node)"
		if p.SizeBytes(c) > 2048 {
			comp = "alpha (MPIDI_Reduce_intra_composition_alpha: every node to its rank 0, the node roots to rank 0, rank 0 to the root)"
		}
		return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 4.3.2 ch4/generic.json: ranks share nodes (%d per node), commutative op: composition %s, the node roots' reduce by mpir/generic.json", p.NodeSize, comp) + shm}, nil
	case Barrier:
		return choice{name: "smp", params: q, rule: fmt.Sprintf("MPICH 4.3.2 ch4/generic.json: ranks share nodes (%d per node): composition alpha (MPIDI_Barrier_intra_composition_alpha): node barriers, the node roots' barrier, a 1-byte bcast in each node", p.NodeSize) + shm}, nil
	}
	return choice{name: name, params: p, rule: rule}, nil
}
