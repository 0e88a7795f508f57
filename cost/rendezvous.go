package cost

import "github.com/collsim/collsim/collectives"

// Rendezvous. A message larger than the eager limit does not move before
// its receive is posted: the sender's request reaches the receiver, a reply
// comes back, and only then does the data leave (sim's protocol). On a
// contention-free machine whose receives are posted in time, that costs a
// message on the critical path the request's and the reply's latencies on
// top of alpha: Hockney.Handshake, 2 alpha where every route is alike. The
// forms below are written for one alpha per message; an algorithm whose
// messages all pay the handshake is priced with alpha + Handshake, one
// whose messages all go eagerly with alpha, and one with both kinds lies
// between the two (a handshake never makes a message earlier), so it is
// priced as a bound (the binomial scatter's, whose eager sends once left
// while a larger one waited for its handshake, needed a margin until its
// sends became one blocking send after another, as the libraries' are).
// The handshakes of one rank's concurrent sends overlap
// (their requests leave together), and so do a pipeline's (the next
// segment's request travels while the last one's data leaves), which the
// substitution takes as the forms' own structure does; the simulation
// checks it (TestClosedFormsMatchSimulation, TestRendezvousForms).

// alphaFor is the latency a message of bytes costs: alpha, plus the
// handshake above the eager limit.
func (m Hockney) alphaFor(bytes float64) float64 {
	if m.Handshake > 0 && bytes > m.EagerLimit {
		return m.Alpha + m.Handshake
	}
	return m.Alpha
}

// priced applies form f to the call s of algorithm id, with the
// handshake where its messages pay it (see above). Algorithms composed of
// others (SUARA, hierarchical) are priced by their parts' forms, each with
// its own messages; f gets m as it is.
func (m Hockney) priced(id string, s size, f formula) Prediction {
	sizes, ok := msgSizes[id]
	if m.Handshake == 0 || !ok {
		return f(m, s)
	}
	lo, hi := sizes(s)
	eager, rndv := m, m
	eager.Handshake = 0
	rndv.Alpha, rndv.Handshake = m.Alpha+m.Handshake, 0
	switch {
	case hi <= m.EagerLimit:
		return f(eager, s)
	case id == "bcast/split_binary":
		// The half a rank gets from its mirror (or the root) is received
		// only once its own half is in; above the eager limit that
		// receive's handshake starts then, and the order in which the
		// root's and the mirrors' NICs send changes with it: no form.
		return noForm()
	case serialHandshakes[id]:
		// Bounds: no faster than eagerly; no slower than every segment's
		// whole journey, handshakes included, one after another.
		seg, k, last := s.segments(65536)
		one := func(count int64) float64 {
			t := s
			t.count, t.n, t.segment = count, float64(count*s.elem), count
			return f(rndv, t).Time
		}
		hi := float64(k-1)*one(min(seg, s.count)) + one(last)
		if grid, ok := gridBound(id, rndv, s); ok {
			hi = min(hi, grid)
		}
		return Prediction{Time: hi, Lower: f(eager, s).Lower}
	case lo > m.EagerLimit:
		return f(rndv, s)
	}
	e, r := f(eager, s), f(rndv, s)
	return Prediction{Time: r.Time, Lower: e.Lower}
}

// serialHandshakes are the pipelines that post the receive of a segment
// only once the one before it is in (the chain, the segmented trees, and
// the pipelines built of them): above the eager limit each segment waits
// for its handshake in turn, and the pipeline runs at a segment's bytes
// plus a handshake (and its reduction) rather than its bytes. Their
// rendezvous forms are bounds: the eager form below, every segment's
// journey one after another above (checked by simulation, not derived).
var serialHandshakes = map[string]bool{
	"bcast/chain": true, "reduce/chain": true, "bcast/adapt": true, "bcast/segmented_binary": true, "bcast/pipelined_binary": true,
	"reduce/adapt": true, "reduce/segmented_binary": true, "reduce/pipelined_binary": true, "reduce/segmented_binomial": true, "allreduce/linear_pipeline": true,
	"allreduce/double_binary_tree": true,
}

// gridBound is a tighter bound than every segment's journey in turn, for
// the chains. Take t0, when the rank before the i-th has segment j and
// the i-th has j-1 (A(i-1,j) and A(i,j-1)). By then j-1's data has left
// the sender's queue, so j's request (issued once the sender had j) has
// left too; the receive of j is posted (the bcast posts it once j-2 is
// in, the reduce once j-1 is in and reduced); so the reply leaves within
// a latency, and j's data, which then has the queue to itself, is in by
// t0 + alpha + handshake + sb: w. So A(i,j) <= max(A(i-1,j), A(i,j-1)) +
// w (+ sg where the rank reduces j), and by induction on i + j the call
// ends by (p-1 + k-1) w. Pipelined handshakes often hide more (a bcast's
// two posted receives on 2 ranks all of them); the eager form is the
// lower bound.
func gridBound(id string, rndv Hockney, s size) (float64, bool) {
	pl := s.pipeline(rndv)
	w := rndv.Alpha + pl.g // rndv.Alpha holds the handshake (priced)
	switch id {
	case "bcast/chain":
	case "reduce/chain":
		w += pl.red
	default:
		return 0, false
	}
	return float64(int64(s.p-1)+pl.k-1) * w, true
}

// msgSizes gives the smallest and the largest message (bytes) an
// algorithm's ranks send each other (local copies left out); an estimate above the largest is safe (the form is
// then a bound where it could have been exact).
var msgSizes = map[string]func(s size) (lo, hi float64){}

func init() {
	whole := func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		return s.n, s.n
	}
	empty := func(s size) (float64, float64) { return 0, 0 }
	blocks := func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		hi, lo := s.block(s.p)
		return lo, hi
	}
	// halving: blocks of the largest power of two's split, up to half the
	// vector, or all of it when a fold (p not a power of two) or a
	// hand-over to another root moves it whole.
	halving := func(s size, whole bool) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		pp := 1 << log2Floor(s.p)
		_, lo := s.block(pp)
		hi := s.spans(pp, max(1, pp/2))
		if whole || !isPow2(s.p) {
			hi = s.n
		}
		return lo, hi
	}
	segments := func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		seg, _, last := s.segments(65536)
		return float64(last * s.elem), float64(min(seg, s.count) * s.elem)
	}
	for _, id := range []string{"allreduce/recursive_doubling", "allreduce/reduce_bcast", "bcast/binomial", "reduce/binomial",
		"bcast/binary", "bcast/knomial", "reduce/in_order_binary", "bcast/linear", "reduce/linear", "allreduce/linear", "reduce/basic_linear", "allreduce/basic_linear",
		"allreduce/allgather_reduce", "alltoall/linear_sync", "alltoall/linear", "alltoall/pairwise", "alltoall/two_procs", "alltoall/group_aligned"} {
		msgSizes[id] = whole
	}
	for _, id := range []string{"barrier/dissemination", "barrier/tree", "barrier/recursive_doubling", "barrier/linear"} {
		msgSizes[id] = empty
	}
	for _, id := range []string{"allreduce/ring", "allgather/ring", "reduce_scatter/ring", "reduce_scatter/pairwise",
		"gather/linear", "scatter/linear", "scatter/linear_nb", "bcast/scatter_allgather"} {
		msgSizes[id] = blocks
	}
	for _, id := range []string{"allreduce/linear_pipeline", "bcast/chain", "reduce/chain", "bcast/adapt", "bcast/segmented_binary", "bcast/pipelined_binary",
		"reduce/adapt", "reduce/segmented_binary", "reduce/pipelined_binary", "reduce/segmented_binomial"} {
		msgSizes[id] = segments
	}
	msgSizes["allreduce/rabenseifner"] = func(s size) (float64, float64) { return halving(s, false) }
	msgSizes["reduce_scatter/recursive_halving"] = func(s size) (float64, float64) { return halving(s, false) }
	msgSizes["reduce/rabenseifner"] = func(s size) (float64, float64) { return halving(s, s.root != 0) }
	msgSizes["allgather/recursive_doubling"] = func(s size) (float64, float64) { return halving(s, false) }
	msgSizes["bcast/scatter_allgather_rd"] = func(s size) (float64, float64) { return halving(s, false) }
	binomialTree := func(s size) (float64, float64) { // blocks of subtrees, up to half (a tree rooted at the root)
		lo, hi := halving(s, false)
		if s.p > 1 {
			_, lo = s.block(s.p)
			hi = max(hi, s.spans(s.p, s.p/2))
		}
		return lo, hi
	}
	msgSizes["reduce_scatter/butterfly"] = func(s size) (float64, float64) { // the fold moves it whole
		lo, hi := halving(s, false)
		if s.p > 1 {
			_, lo = s.block(s.p)
		}
		return lo, hi
	}
	// The libraries' scatter-allgather bcasts: blocks of ceil(n/p)
	// elements (the last ones short or empty), subtrees of them up to half
	// the tree in the scatter and the recursive-doubling allgather.
	ceilBlocks := func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		ss := (s.count + int64(s.p) - 1) / int64(s.p)
		top := 1 << log2Floor(2*s.p-1)
		lo := max(0, s.count-int64(s.p-1)*ss)
		return float64(lo * s.elem), float64(min(s.count, int64(top/2)*ss) * s.elem)
	}
	msgSizes["bcast/scatter_rd_allgather"] = ceilBlocks
	msgSizes["bcast/scatter_ring_allgather"] = ceilBlocks
	msgSizes["alltoall/scattered"] = whole
	msgSizes["gather/binomial"] = binomialTree
	msgSizes["scatter/binomial"] = binomialTree
	msgSizes["allreduce/segmented_ring"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		seg := s.segment
		if seg == 0 {
			seg = max(1, (1<<20)/s.elem)
		}
		// The smallest: the smallest block's smaller piece; the largest:
		// the allgather's largest block.
		phases := collectives.SegmentedRingPhases(s.count, s.p, seg)
		hi, _ := s.block(s.p)
		return float64(s.count / int64(s.p) / phases * s.elem), hi
	}

	msgSizes["allreduce/double_binary_tree"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		lo, hi := float64(s.n), 0.0
		for _, half := range []int64{s.count / 2, s.count - s.count/2} {
			h := s
			h.count = half
			seg, _, last := h.segments(65536)
			lo = min(lo, float64(last*s.elem))
			hi = max(hi, float64(min(seg, half)*s.elem))
		}
		return lo, hi
	}
	msgSizes["allgather/bruck"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		most := 0
		bruckRounds(s.p, func(dist int) { most = max(most, min(dist, s.p-dist)) })
		hi, lo := s.block(s.p)
		return lo, float64(most) * hi
	}
	msgSizes["allgather/neighbor_exchange"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		hi, lo := s.block(s.p)
		return lo, 2 * hi
	}
	msgSizes["alltoall/bruck"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		lo, hi := s.p, 0
		bruckRounds(s.p, func(dist int) {
			moved := 0
			for i := 1; i < s.p; i++ {
				if i&dist != 0 {
					moved++
				}
			}
			lo, hi = min(lo, moved), max(hi, moved)
		})
		return float64(lo) * s.n, float64(hi) * s.n
	}
	msgSizes["allgather/linear"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		_, lo := s.block(s.p)
		return lo, s.n
	}
	msgSizes["reduce_scatter/non_overlapping"] = msgSizes["allgather/linear"]
	msgSizes["bcast/split_binary"] = func(s size) (float64, float64) {
		if s.p == 1 {
			return 0, 0
		}
		return float64(s.count / 2 * s.elem), float64((s.count - s.count/2) * s.elem)
	}
}

// spans is the bytes of the longest run of j consecutive blocks when the
// vector is cut into k blocks as evenly as possible (the first count mod k
// blocks are one element longer).
func (s size) spans(k, j int) float64 {
	q, r := s.count/int64(k), s.count%int64(k)
	return float64((int64(j)*q + min(int64(j), r)) * s.elem)
}
