package cost

import (
	"github.com/collsim/collsim/collectives"
)

// Closed forms of the algorithms that reproduce what the MPI libraries run
// (collectives/library_*.go). They are added to the tables here, in an
// init that runs after those of hockney.go and levels.go (Go runs a
// package's init functions in the order of its file names).
func init() {
	formulas["bcast/scatter_rd_allgather"] = func(m Hockney, s size) Prediction { return binomialScatterAllgather(m, s, false) }
	formulas["bcast/scatter_ring_allgather"] = func(m Hockney, s size) Prediction { return binomialScatterAllgather(m, s, true) }
	formulas["alltoall/scattered"] = func(m Hockney, s size) Prediction { return batchedAlltoall(m, s, 32) }
	formulas["allreduce/nonoverlapping"] = func(m Hockney, s size) Prediction {
		return composite(Levels{m, m}, s, collectives.Allreduce, "nonoverlapping")
	}
	for _, c := range []collectives.Collective{collectives.Allreduce, collectives.Bcast, collectives.Reduce, collectives.Barrier} {
		for _, name := range []string{"han", "smp"} {
			formulas[string(c)+"/"+name] = func(m Hockney, s size) Prediction { return composite(Levels{m, m}, s, c, name) }
			levelForms[string(c)+"/"+name] = func(l Levels, s size) Prediction { return composite(l, s, c, name) }
		}
	}
}

// batchedAlltoall: the linear alltoall in batches of window partners
// (MPICH's scattered, 32), each batch after the one before: a batch of k
// other ranks costs alpha + k c beta (the rank's port sends its k blocks
// back to back while it takes in k from the others), the rank's exchange
// with itself costs nothing. Exact, as linear_sync's form (window 8).
func batchedAlltoall(m Hockney, s size, window int) Prediction {
	var t float64
	for first := 0; first < s.p; first += window {
		others := min(first+window, s.p) - first
		if first == 0 {
			others--
		}
		if others > 0 {
			t += m.Alpha + float64(others)*s.n*m.Beta
		}
	}
	return exact(t)
}

// binomialScatterAllgather: the libraries' scatter-allgather bcast
// (collectives.binomialScatterAllgather), blocks of c = ceil(n/p)
// elements. The scatter is evaluated over the tree, rank by rank: a rank
// that has its subtree's blocks at T sends its children theirs one after
// another, largest subtree first, with blocking sends: each arrives
// alpha + b beta after it starts, and the next starts at the latest then
// (an eager send is done when its data has left, a rendezvous one when it
// has arrived); the scatter ends, at the latest, at the last arrival.
// Upper bound: that end plus the allgather from a common start (finishing
// times only grow with start times): the ring's p-1 steps of
// alpha + c beta, or recursive doubling's steps of alpha + (blocks of a
// subtree) beta, each followed, where the partner subtree runs past p,
// by up to log2 of the distance more sends of that much. Lower bound: the
// root's port sends every block but its own, one message after another,
// and the last arrives alpha later (every rank sends at least one message
// in the allgather). Exact for one rank.
func binomialScatterAllgather(m Hockney, s size, ring bool) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	ss := (s.count + int64(s.p) - 1) / int64(s.p)
	bytes := func(lo, hi int) float64 {
		off := min(int64(lo)*ss, s.count)
		end := min(int64(hi)*ss, s.count)
		return float64(max(0, end-off) * s.elem)
	}
	// Scatter: at[v] is when relative rank v has its subtree's blocks.
	at := make([]float64, s.p)
	end := 0.0
	top := 1
	for top < s.p {
		top <<= 1
	}
	for v := 0; v < s.p; v++ {
		m0 := top
		if v != 0 {
			m0 = v & -v
		}
		t := at[v]
		for c := m0 >> 1; c > 0; c >>= 1 {
			if v+c >= s.p {
				continue
			}
			if b := bytes(v+c, v+2*c); b > 0 {
				// The next blocking send starts once this one is done:
				// when its data has left (eager), at the latest when it
				// has arrived (rendezvous).
				t += m.Alpha + b*m.Beta
				at[v+c] = t
				end = max(end, at[v+c])
			}
		}
	}
	var ag float64
	if ring {
		ag = float64(s.p-1) * (m.Alpha + bytes(0, 1)*m.Beta)
	} else {
		for mask := 1; mask < s.p; mask <<= 1 {
			step := m.Alpha + bytes(0, mask)*m.Beta
			ag += step
			if s.p%(2*mask) != 0 { // some partner subtree runs past p
				ag += float64(log2Floor(mask)) * step
			}
		}
	}
	return Prediction{Time: end + ag, Lower: m.Alpha + bytes(1, s.p)*m.Beta}
}

// composite prices the MPI libraries' composite collectives
// (collectives.CompositeOf): Open MPI's nonoverlapping allreduce (a reduce,
// then a bcast, on all ranks: Global), and the two-level han and smp
// allreduce, bcast and reduce (stages inside nodes on Local, among one
// rank of each node on Global). A stage takes as long as its slowest part
// (nodes work at once and share nothing). One segment on nodes of one
// size: the sum of the stages, each starting when the one before has
// ended where it matters (a bcast's root ends a reduce last; each node's
// stage starts when its rank in the stage before has its data, and the
// last of them still runs the whole stage): exact where the stages' forms
// are. With k segments, which overlap: the first segment's stages plus
// k-2 full segments' plus the last's is the upper bound, and the lower is
// the last segment's stages or what must pass through one port: for an
// allreduce, for every segment before the last, a node's first rank takes
// in a segment from its node's reduce and (N-1)/N of one from the other
// nodes; for a bcast every other rank, and for a reduce the root, takes
// in the whole vector. With nodes of unequal sizes the stages among nodes
// lose their lower bound (a small node's rank starts them early), and so
// does a stage most of whose ranks start early (Stage.Early).
func composite(l Levels, s size, c collectives.Collective, name string) Prediction {
	p := s.orig
	a, err := collectives.Lookup(c, name)
	if err != nil {
		return noForm()
	}
	comp, ok, err := collectives.CompositeOf(a, p)
	if !ok || err != nil {
		return noForm()
	}
	uneven := p.NodeSize > 0 && s.p%p.NodeSize != 0
	sum := func(stages []collectives.Stage) (Prediction, bool) {
		total := Prediction{Exact: true}
		for _, st := range stages {
			m := l.Global
			if st.Local {
				m = l.Local
			}
			var worst Prediction
			for i, part := range st.Parts {
				pr, err := m.Predict(part.Algorithm, part.Params)
				if err != nil {
					return total, false
				}
				if i == 0 {
					worst = pr
				} else {
					worst = Prediction{Time: max(worst.Time, pr.Time), Lower: max(worst.Lower, pr.Lower)}
				}
			}
			if uneven && !st.Local || st.Early {
				worst.Lower, worst.Exact = 0, false
			}
			total.Time, total.Lower = total.Time+worst.Time, total.Lower+worst.Lower
			total.Exact = total.Exact && worst.Exact
		}
		return total, true
	}
	if len(comp.Full) == 0 && len(comp.First) == 0 { // one rank: nothing to do
		return exact(0)
	}
	first, ok0 := sum(comp.First)
	full, ok1 := sum(comp.Full)
	last, ok2 := sum(comp.Last)
	if !ok0 || !ok1 || !ok2 {
		return noForm()
	}
	if comp.Segments == 1 {
		if first.Exact && first.Time == first.Lower {
			return exact(first.Time)
		}
		return Prediction{Time: first.Time, Lower: first.Lower}
	}
	k := float64(comp.Segments)
	ns := min(max(p.NodeSize, 1), s.p)
	nodes := (s.p + ns - 1) / ns
	port := 0.0
	if c == collectives.Allreduce {
		segBytes := float64(min(comp.Full[0].Parts[0].Params.Count, s.count) * s.elem)
		perSegment := 0.0
		if ns > 1 {
			perSegment += segBytes * l.Local.Beta
		}
		if nodes > 1 {
			perSegment += float64(nodes-1) / float64(nodes) * segBytes * l.Global.Beta
		}
		port = (k - 1) * perSegment
	} else if s.p > 1 {
		port = s.n * min(l.Local.Beta, l.Global.Beta)
	}
	return Prediction{Time: first.Time + (k-2)*full.Time + last.Time, Lower: max(last.Lower, port)}
}

func init() { formulas["reduce_scatter/butterfly"] = butterflyReduceScatter }

// butterflyReduceScatter: Open MPI's butterfly (collectives'
// butterflyReduceScatter). For p a power of two and blocks of c bytes
// alike, round k (k = 0..log2 p - 1) exchanges p/2^(k+1) blocks each way
// and reduces them, alpha + (p/2^(k+1)) c (beta + gamma), every rank in
// step; from 4 ranks a last exchange of one block with the mirror image,
// alpha + c beta: exact. Otherwise an upper bound: the fold (alpha +
// n (beta + gamma)), each round at its widest range of blocks, and the
// last sends (a block to the folded rank, then the exchange: 2(alpha +
// c beta), c the largest block); and a lower bound of one alpha per round
// and one for the fold.
func butterflyReduceScatter(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pof2 := 1 << log2Floor(s.p)
	rem := s.p - pof2
	largest, smallest := s.block(s.p)
	q, r := s.count/int64(s.p), s.count%int64(s.p)
	end := func(i int) int64 { return int64(i)*q + min(int64(i), r) } // first element of block i
	first := func(v int) int {
		if v < rem {
			return 2 * v
		}
		return v + rem
	}
	if rem == 0 && largest == smallest {
		t := 0.0
		for nb := pof2 / 2; nb >= 1; nb /= 2 {
			t += m.Alpha + float64(nb)*largest*(m.Beta+m.Gamma)
		}
		if s.p >= 4 {
			t += m.Alpha + largest*m.Beta
		}
		return exact(t)
	}
	upper, lower := 0.0, 0.0
	for nb := pof2 / 2; nb >= 1; nb /= 2 {
		widest := int64(0)
		for lo := 0; lo < pof2; lo += nb {
			widest = max(widest, end(first(lo+nb))-end(first(lo)))
		}
		upper += m.Alpha + float64(widest*s.elem)*(m.Beta+m.Gamma)
		lower += m.Alpha
		if rem > 0 && nb == pof2/2 {
			// The fold; a rank that takes it in may first take in its
			// partner's first-round message (the partner did not fold).
			upper += m.Alpha + s.n*(m.Beta+m.Gamma) + float64(widest*s.elem)*m.Beta
			lower += m.Alpha
		}
	}
	upper += 2 * (m.Alpha + largest*m.Beta)
	return Prediction{Time: upper, Lower: lower}
}
