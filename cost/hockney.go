package cost

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/collsim/collsim/collectives"
)

// Hockney holds the parameters of the alpha-beta-gamma model.
type Hockney struct {
	Alpha float64 // seconds per message (latency)
	Beta  float64 // seconds per byte moved
	Gamma float64 // seconds per byte reduced
	// Handshake is what the rendezvous protocol adds to a message larger
	// than EagerLimit bytes: the request's and the reply's latency, 2 alpha
	// on a machine whose routes are alike (see rendezvous.go). 0 prices
	// every message eagerly.
	Handshake  float64
	EagerLimit float64
}

// Prediction is a model's time for one call. When Exact, the analytic
// network's simulation of the algorithm on a contention-free crossbar with
// the same parameters takes exactly Time; otherwise the simulation lies in
// [Lower, Time] and the formula's doc comment says why.
type Prediction struct {
	Time  float64 // seconds
	Lower float64 // seconds; equals Time when Exact
	Exact bool
}

// HandshakeOf is the handshake a rendezvous message adds on routes of
// latency alpha alike: its request's latency and its reply's, 2 alpha.
func HandshakeOf(alpha float64) float64 { return 2 * alpha }

func exact(t float64) Prediction { return Prediction{Time: t, Lower: t, Exact: true} }

// noForm says a formula does not cover the parameters (Predict turns it
// into ErrNoClosedForm).
func noForm() Prediction { return Prediction{Time: math.NaN(), Lower: math.NaN()} }

// formula prices one algorithm: p ranks, n bytes (the vector, or per pair
// for alltoall), c bytes in the largest of the p blocks of the vector.
type formula func(m Hockney, s size) Prediction

// suara sums the closed forms of the allreduces SUARA runs one after the
// other on the subsets of its grid (all subsets of a step at once, alike on
// a uniform machine); exact where they all are, bounded by the sums of
// their bounds otherwise.
func suara(m Hockney, s size) Prediction {
	p := s.params()
	var sum Prediction
	sum.Exact = true
	for _, d := range collectives.SuaraGrid(p) {
		inner, err := collectives.Lookup(collectives.Allreduce, collectives.InnerAlgorithm(p, p.Count))
		if err != nil || !Has(inner) {
			return noForm()
		}
		q := p
		q.Ranks, q.Root = d, 0 // an allreduce has no root; the grid's subsets are smaller than p
		pr, err := m.Predict(inner, q)
		if err != nil {
			return noForm()
		}
		sum.Time, sum.Lower, sum.Exact = sum.Time+pr.Time, sum.Lower+pr.Lower, sum.Exact && pr.Exact
	}
	return sum
}

type size struct {
	orig    collectives.Params // the call as given, for composite algorithms
	p       int
	n       float64 // bytes of the whole vector (alltoall: per pair)
	count   int64   // elements of the whole vector
	elem    int64   // bytes per element
	root    int
	segment int64 // Params.Segment
}

// params returns the call as given.
func (s size) params() collectives.Params { return s.orig }

// segments returns the pipeline segment in elements (the algorithms'
// default: 64 KiB worth), their number, and the last one's length.
func (s size) segments(def int64) (seg int64, k int64, last int64) {
	seg = s.segment
	if seg == 0 {
		seg = max(1, def/s.elem)
	}
	k = max(1, (s.count+seg-1)/seg)
	last = s.count - (k-1)*seg
	return seg, k, last
}

// pipeline describes a call cut into pipeline segments (the algorithms'
// default: 64 KiB worth): their number, and the send (beta) and reduction
// (gamma) times of a full segment and of the last one.
type pipeline struct {
	k              int64
	g, red         float64 // a full segment's (the first's)
	gLast, redLast float64
}

func (s size) pipeline(m Hockney) pipeline {
	seg, k, last := s.segments(65536)
	full, tail := float64(min(seg, s.count)*s.elem), float64(last*s.elem)
	return pipeline{k: k, g: full * m.Beta, red: full * m.Gamma, gLast: tail * m.Beta, redLast: tail * m.Gamma}
}

// block returns the bytes of the largest block when the vector is cut into
// k blocks as evenly as possible, and of the smallest.
func (s size) block(k int) (largest, smallest float64) {
	q, r := s.count/int64(k), s.count%int64(k)
	hi := q
	if r > 0 {
		hi++
	}
	return float64(hi * s.elem), float64(q * s.elem)
}

var formulas = map[string]formula{
	"allreduce/ring":                   ringAllreduce,
	"allreduce/recursive_doubling":     recursiveDoubling,
	"allreduce/rabenseifner":           rabenseifner,
	"allreduce/reduce_bcast":           reduceBcast,
	"bcast/binomial":                   binomialBcast,
	"allgather/ring":                   ringAllgather,
	"reduce_scatter/ring":              ringReduceScatter,
	"alltoall/pairwise":                pairwiseAlltoall,
	"alltoall/two_procs":               pairwiseAlltoall, // pairwise's messages on 2 ranks, the copy after
	"alltoall/linear":                  linearAlltoall,
	"barrier/dissemination":            dissemination,
	"barrier/tree":                     barrierTree,
	"barrier/recursive_doubling":       barrierRecursiveDoubling,
	"barrier/linear":                   barrierLinear,
	"bcast/linear":                     linearBcast,
	"reduce/binomial":                  binomialReduce,
	"reduce/linear":                    linearReduce,
	"reduce/basic_linear":              basicLinearReduce,
	"gather/linear":                    linearGatherScatter,
	"scatter/linear":                   linearGatherScatter,
	"scatter/linear_nb":                linearGatherScatter,
	"gather/linear_sync":               linearSyncGather,
	"gather/basic_linear":              basicLinearGather,
	"scatter/basic_linear":             basicLinearScatter,
	"allreduce/linear":                 linearAllreduce,
	"allreduce/basic_linear":           basicLinearAllreduce,
	"allgather/linear":                 linearAllgather,
	"allgather/recursive_doubling":     rdAllgather,
	"reduce_scatter/pairwise":          pairwiseReduceScatter,
	"reduce_scatter/recursive_halving": rhReduceScatter,
	"bcast/chain":                      chainBcast,
	"reduce/chain":                     chainReduce,
	"allreduce/allgather_reduce":       allgatherReduce,
	"allreduce/segmented_ring":         segmentedRing,
	"gather/binomial":                  binomialGatherScatter,
	"scatter/binomial":                 binomialGatherScatter,
	"alltoall/group_aligned":           pairwiseAlltoall,
	"alltoall/linear_sync":             linearSyncAlltoall,
	"alltoall/bruck":                   bruckAlltoall,
	"allgather/neighbor_exchange":      neighborExchange,
	"allgather/bruck":                  bruckAllgather,
	"reduce/rabenseifner":              rabenseifnerReduce,
	"reduce_scatter/non_overlapping":   nonOverlappingReduceScatter,
	"bcast/binary":                     binaryBcast,
	"bcast/knomial":                    knomialBcast,
	"bcast/scatter_allgather":          scatterAllgather,
	"bcast/adapt":                      segmentedBinaryBcast,
	"reduce/in_order_binary":           inOrderBinaryReduce,
	"bcast/split_binary":               splitBinaryBcast,
	"reduce/adapt":                     segmentedBinaryReduce,
	"allreduce/linear_pipeline":        linearPipelineAllreduce,
	"allreduce/double_binary_tree":     doubleBinaryTree,
	"bcast/scatter_allgather_rd":       scatterAllgatherRD,
	"reduce/segmented_binary":          segmentedBinaryReduce,
	"reduce/pipelined_binary":          pipelinedBinaryReduce,
	"reduce/segmented_binomial":        segmentedBinomialReduce,
	"alltoall/two_level":               func(m Hockney, s size) Prediction { return twoLevelAlltoall(Levels{m, m}, s) },
	"bcast/segmented_binary":           segmentedBinaryBcast,
	"bcast/pipelined_binary":           segmentedBinaryBcast,
}

func init() {
	// These refer to Predict: set after formulas exists.
	formulas["allreduce/suara"] = suara
	formulas["allreduce/hierarchical"] = func(m Hockney, s size) Prediction { return hierarchicalAllreduce(Levels{m, m}, s) }
}

// Has reports whether the model has a closed form for the algorithm.
func Has(a collectives.Algorithm) bool { _, ok := formulas[a.ID()]; return ok }

// Predict prices one call of algorithm a.
func (m Hockney) Predict(a collectives.Algorithm, p collectives.Params) (Prediction, error) {
	f, ok := formulas[a.ID()]
	if !ok {
		return Prediction{}, fmt.Errorf("no closed form for %s yet", a.ID())
	}
	if err := a.CheckParams(p); err != nil {
		return Prediction{}, err // a negative count was priced, and marked exact
	}
	if collectives.SendsNothing(a.Collective, p) {
		return exact(0), nil
	}
	return checked(a, p, m.priced(a.ID(), sizeOf(p), f))
}

// checked turns a formula's noForm into ErrNoClosedForm.
func checked(a collectives.Algorithm, p collectives.Params, pred Prediction) (Prediction, error) {
	if math.IsNaN(pred.Time) {
		return pred, fmt.Errorf("%s on %d ranks: %w", a.ID(), p.Ranks, ErrNoClosedForm)
	}
	return pred, nil
}

// sizeOf describes a call for the formulas.
func sizeOf(p collectives.Params) size {
	elem := p.ElemSize
	if elem == 0 {
		elem = 8
	}
	return size{orig: p, p: p.Ranks, n: float64(p.Count * elem), count: p.Count, elem: elem, root: p.Root, segment: p.Segment}
}

// ErrNoClosedForm says that a formula does not cover the parameters given
// (an algorithm's closed form for powers of two only, say).
var ErrNoClosedForm = errors.New("no closed form for these parameters yet")

func log2Floor(p int) int { return bits.Len(uint(p)) - 1 }

func log2Ceil(p int) int { return bits.Len(uint(p - 1)) }

func isPow2(p int) bool { return p&(p-1) == 0 }

// ringAllreduce: 2(p-1)alpha + 2(p-1)c beta + (p-1)c gamma, c the largest
// block, n/p rounded up to whole elements (Patarasuk and Yuan 2009; Thakur
// et al. 2005 with n/p). Exact: the largest block's journey is a chain of
// 2(p-1) dependent messages of c bytes, p-1 of them reduced, which bounds
// the time from below; and by induction every step k ends by k times one
// step's cost, which bounds it from above.
func ringAllreduce(m Hockney, s size) Prediction {
	c, _ := s.block(s.p)
	k := float64(s.p - 1)
	return exact(2*k*m.Alpha + 2*k*c*m.Beta + k*c*m.Gamma)
}

// recursiveDoubling: log2 p (alpha + n beta + n gamma) for p a power of two
// (Thakur et al. 2005), exact. Otherwise Thakur's count adds the fold
// (alpha + n beta + n gamma) and the unfold (alpha + n beta) to floor(log2 p)
// rounds, an upper bound: ranks that skip the fold send their first round
// early, so the folded ranks often finish their rounds, and unfold, sooner.
// The lower bound is the chain fold, then floor(log2 p) rounds, each a
// dependent message and reduction: (floor(log2 p)+1)(alpha + n beta + n
// gamma).
func recursiveDoubling(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	step := m.Alpha + s.n*m.Beta + s.n*m.Gamma
	l := float64(log2Floor(s.p))
	if isPow2(s.p) {
		return exact(l * step)
	}
	return Prediction{Time: (l+1)*step + m.Alpha + s.n*m.Beta, Lower: (l + 1) * step}
}

// rabenseifner: reduce-scatter by recursive halving, allgather by
// recursive doubling: 2 log2 p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n
// gamma over p' = 2^floor(log2 p) ranks (Rabenseifner 2004; Thakur et al.
// 2005), plus a fold (alpha + n beta + n gamma) and an unfold (alpha +
// n beta) when p is not a power of two. Exact for p a power of two when p'
// divides the element count; otherwise the halves differ by up to one
// element per block and the formula, taken with the largest block for
// every block, is an upper bound (and with the smallest, a lower bound).
//
// When p is not a power of two the formula is a lower bound only: the rank
// that takes in the fold also receives its first half from its halving
// partner at the same moment, and sends the unfold while its last
// allgather half leaves, and a NIC takes in (sends) one message at a time.
// Which message waits depends on whether reducing (gamma) or moving (beta)
// a byte is slower; each of the two conflicts costs at most the size of
// the smaller message, n/2 beta, which gives the upper bound.
// (collsim validate found the formula exceeded when gamma > beta.)
func rabenseifner(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	if !isPow2(s.p) && s.orig.OpenMPIBase() {
		// Open MPI's fold (halves swapped, one returned) is not priced: a
		// 6-rank 64 MiB call simulated 27.2 ms under this form's lower
		// bound of 30.55 for MPICH's.
		return noForm()
	}
	pp := 1 << log2Floor(s.p)
	l := float64(log2Floor(s.p))
	hi, lo := s.block(pp)
	moved := func(b float64) float64 {
		k := float64(pp-1) * b
		return 2*l*m.Alpha + 2*k*m.Beta + k*m.Gamma
	}
	if isPow2(s.p) {
		if hi == lo {
			return exact(moved(hi))
		}
		return Prediction{Time: moved(hi), Lower: moved(lo)}
	}
	fold := 2*m.Alpha + 2*s.n*m.Beta + s.n*m.Gamma
	return Prediction{Time: moved(hi) + fold + s.n*m.Beta, Lower: moved(lo) + fold}
}

// binomialTree prices a binomial tree of whole-vector messages with per-hop
// cost hop: ceil(log2 p) hops (Thakur et al. 2005). Exact for p a power of
// two: the rank whose relative number is all ones is reached through
// log2 p first children. For other p the deepest rank has only
// floor(log2 p) hops and some hops are shorter, so the formula is an upper
// bound and floor(log2 p) hops a lower bound.
func binomialTree(p int, hop float64) Prediction {
	if p == 1 {
		return exact(0)
	}
	if isPow2(p) {
		return exact(float64(log2Floor(p)) * hop)
	}
	return Prediction{Time: float64(log2Ceil(p)) * hop, Lower: float64(log2Floor(p)) * hop}
}

// binomialBcast: ceil(log2 p)(alpha + n beta); see binomialTree.
func binomialBcast(m Hockney, s size) Prediction {
	return binomialTree(s.p, m.Alpha+s.n*m.Beta)
}

// reduceBcast: a binomial reduce, ceil(log2 p)(alpha + n beta + n gamma),
// then a binomial broadcast, ceil(log2 p)(alpha + n beta); see
// binomialTree. The broadcast starts only when the root has the whole sum.
func reduceBcast(m Hockney, s size) Prediction {
	return binomialTree(s.p, 2*m.Alpha+2*s.n*m.Beta+s.n*m.Gamma)
}

// ringAllgather: (p-1)(alpha + c beta), c the largest block (Thakur et
// al. 2005 with n/p); exact by the argument of ringAllreduce.
func ringAllgather(m Hockney, s size) Prediction {
	c, _ := s.block(s.p)
	return exact(float64(s.p-1) * (m.Alpha + c*m.Beta))
}

// ringReduceScatter: (p-1)(alpha + c beta + c gamma), c the largest block;
// exact by the argument of ringAllreduce.
func ringReduceScatter(m Hockney, s size) Prediction {
	c, _ := s.block(s.p)
	return exact(float64(s.p-1) * (m.Alpha + c*m.Beta + c*m.Gamma))
}

// pairwiseAlltoall: (p-1)(alpha + n beta) with n the bytes per pair
// (Thakur et al. 2005): one exchange per step, each step after the last.
func pairwiseAlltoall(m Hockney, s size) Prediction {
	return exact(float64(s.p-1) * (m.Alpha + s.n*m.Beta))
}

// linearAlltoall: alpha + (p-1) n beta, n the bytes per pair. Exact on a
// contention-free network with single-port NICs: rank r's i-th send goes to
// r+i, so in every slot each rank sends to a different rank and receives
// from a different one; the sends leave back to back, and the last arrives
// one latency after it leaves. (Thakur et al. price a linear exchange
// without port limits; with them, this is its single-port form.)
func linearAlltoall(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(m.Alpha + float64(s.p-1)*s.n*m.Beta)
}

// dissemination: ceil(log2 p) alpha (Hensgen, Finkel, Manber 1988).
func dissemination(m Hockney, s size) Prediction {
	return exact(float64(log2Ceil(s.p)) * m.Alpha)
}

// barrierTree: empty messages up a binomial tree and down again, each hop
// alpha. Rank r is popcount(r) hops below rank 0, the deepest
// floor(log2 p) (2^k - 1, or the ranks beside it), and empty messages
// never wait for each other at a port, so a parent hears from all its
// children a hop after the slowest is ready: 2 floor(log2 p) alpha,
// exact. (It was binomialTree's ceil(log2 p), a bound: 6 us for 5 ranks
// that take 4; an audit.)
func barrierTree(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(2 * float64(log2Floor(s.p)) * m.Alpha)
}

// barrierRecursiveDoubling: Open MPI's recursive doubling of empty
// messages among the first p' = 2^floor(log2 p) ranks. A rank r below
// p - p' starts once the message of r + p' is in (alpha); in each round a
// rank ends once its partner's message is in, sent when the partner's
// previous round ended (an empty eager send costs its rank nothing more):
// end_r = max(end_r, end_partner + alpha). A rank r below p - p' then
// sends its synchronous send to r + p', in a latency later, and has its
// acknowledgement back after another. The recurrence, run over the p'
// ranks, is exact: log2 p alpha for p a power of two.
func barrierRecursiveDoubling(m Hockney, s size) Prediction {
	adj := 1 << log2Floor(s.p)
	rem := s.p - adj
	end := make([]float64, adj)
	for r := range rem {
		end[r] = m.Alpha
	}
	next := make([]float64, adj)
	for mask := 1; mask < adj; mask <<= 1 {
		for r := range end {
			next[r] = max(end[r], end[r^mask]+m.Alpha)
		}
		end, next = next, end
	}
	var t float64
	for r, e := range end {
		t = max(t, e)
		if r < rem {
			t = max(t, e+2*m.Alpha)
		}
	}
	return exact(t)
}

// barrierLinear: p-1 empty messages to rank 0 and p-1 back, each a
// latency deep: 2 alpha (empty messages occupy no port).
func barrierLinear(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(2 * m.Alpha)
}

// linearBcast: the root's port sends the p-1 copies back to back; the last
// arrives a latency after it leaves: alpha + (p-1) n beta.
func linearBcast(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(m.Alpha + float64(s.p-1)*s.n*m.Beta)
}

// linearReduce: all p-1 vectors reach the root's port a latency after they
// leave and are taken in one after another (n beta each) while the root
// reduces them (n gamma each): the first reduction ends at alpha + n beta
// + n gamma and each further one max(n beta, n gamma) later.
func linearReduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(linearReduceTime(m, s))
}

// basicLinearReduce: Open MPI's root posts each receive once the vector
// before it is reduced, so that which vector its port takes in first, and
// each rendezvous handshake, set its time: between linearReduce's and each
// vector in turn, a request's latency, its handshake's reply, its bytes
// and its reduction, alpha + (p-1)(2 alpha + n beta + n gamma); on 2 ranks
// (one vector) linearReduce's.
func basicLinearReduce(m Hockney, s size) Prediction {
	return basicLinearBound(m, s, 0)
}

// basicLinearBound is basicLinearReduce with after added to it.
func basicLinearBound(m Hockney, s size, after float64) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	t := linearReduceTime(m, s) + after
	if s.p == 2 {
		return exact(t)
	}
	nb, ng := s.n*m.Beta, s.n*m.Gamma
	return Prediction{Time: m.Alpha + float64(s.p-1)*(2*m.Alpha+nb+ng) + after, Lower: t}
}

func linearReduceTime(m Hockney, s size) float64 {
	nb, ng := s.n*m.Beta, s.n*m.Gamma
	return m.Alpha + nb + ng + float64(s.p-2)*max(nb, ng)
}

// linearGatherScatter: the root's port takes in (gather) or sends out
// (scatter) every other rank's block back to back: alpha + (n - c_root)
// beta, c_root the root's own block (blocks of the even split).
func linearGatherScatter(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	q, r := s.count/int64(s.p), s.count%int64(s.p)
	own := q
	if int64(s.root) < r {
		own++
	}
	return exact(m.Alpha + float64(s.count-own)*float64(s.elem)*m.Beta)
}

// linearSyncGather: the root takes the ranks one after another: its
// empty go-ahead reaches rank i (alpha), whose block of c_i bytes then
// reaches the root (alpha + c_i beta, and the handshake above the eager
// limit, which the go-ahead's and the empty rest's messages never pass):
// the sum over i of 2 alpha + c_i beta. The empty rest leaves once the
// block is out and arrives with it. With a first segment shorter than a
// block the rest travels while the root starts on the next rank, sharing
// its port: no closed form here.
func linearSyncGather(m Hockney, s size) Prediction {
	if s.segment > 0 {
		hi, _ := s.block(s.p)
		if s.segment*s.elem < int64(hi) {
			return noForm()
		}
	}
	var t float64
	s.evenBlocks(func(bytes float64) { t += m.Alpha + m.alphaFor(bytes) + bytes*m.Beta })
	return exact(t)
}

// evenBlocks calls f with the bytes of each block of the even split but
// the root's, in rank order.
func (s size) evenBlocks(f func(bytes float64)) {
	q, r := s.count/int64(s.p), s.count%int64(s.p)
	for i := range int64(s.p) {
		c := q
		if i < r {
			c++
		}
		if i != int64(s.root) {
			f(float64(c * s.elem))
		}
	}
}

// basicLinearGather: eager blocks come in back to back through the root's
// port, as the linear gather's (linearGatherScatter), whatever the order
// of its receives. Above the eager limit every request is in by the time
// the root posts the receive for it after the first: the first block
// takes alpha + the handshake + c beta, each next one the reply's latency
// (half the handshake: request and reply cross the same route), alpha and
// its c beta. Blocks of both kinds: no closed form here.
func basicLinearGather(m Hockney, s size) Prediction {
	eager, rndv := 0, 0
	s.evenBlocks(func(bytes float64) {
		if m.alphaFor(bytes) > m.Alpha {
			rndv++
		} else {
			eager++
		}
	})
	switch {
	case rndv == 0:
		return linearGatherScatter(m, s)
	case eager > 0:
		return noForm()
	}
	t := m.Handshake / 2
	s.evenBlocks(func(bytes float64) { t += m.Alpha + m.Handshake/2 + bytes*m.Beta })
	return exact(t)
}

// basicLinearScatter: the root's blocking sends leave one after another,
// each once the one before is out: c beta each, and above the eager limit
// the handshake first; the last arrives alpha after it left.
func basicLinearScatter(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	t := m.Alpha
	s.evenBlocks(func(bytes float64) { t += m.alphaFor(bytes) - m.Alpha + bytes*m.Beta })
	return exact(t)
}

// linearAllreduce: a linear reduce to rank 0 (linearReduce), then rank 0
// sends the result to the others back to back (linearBcast).
func linearAllreduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	return exact(linearReduceTime(m, s) + m.Alpha + float64(s.p-1)*s.n*m.Beta)
}

// basicLinearAllreduce: Open MPI's basic_linear reduce (basicLinearReduce),
// then linearAllreduce's bcast.
func basicLinearAllreduce(m Hockney, s size) Prediction {
	return basicLinearBound(m, s, m.Alpha+float64(s.p-1)*s.n*m.Beta)
}

// binomialReduce: ceil(log2 p)(alpha + n beta + n gamma); see binomialTree.
func binomialReduce(m Hockney, s size) Prediction {
	return binomialTree(s.p, m.Alpha+s.n*m.Beta+s.n*m.Gamma)
}

// linearAllgather: every block to rank 0 (its port takes them in back to
// back: alpha + (n - c_0) beta), then rank 0 sends the whole vector to the
// others back to back (alpha + (p-1) n beta).
func linearAllgather(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	s0 := s
	s0.root = 0
	return exact(linearGatherScatter(m, s0).Time + m.Alpha + float64(s.p-1)*s.n*m.Beta)
}

// rdAllgather: partners at distance 2^k exchange 2^k blocks: sum over
// k of (alpha + 2^k c beta) = log2 p alpha + (p-1) c beta for p a power of
// two (Thakur et al. 2005), exact when p divides the count; with uneven
// blocks, between the smallest and largest block's value. collsim refuses
// other p, and so does this formula.
func rdAllgather(m Hockney, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	hi, lo := s.block(s.p)
	f := func(c float64) float64 { return float64(log2Floor(s.p))*m.Alpha + float64(s.p-1)*c*m.Beta }
	return between(f(lo), f(hi))
}

// pairwiseReduceScatter: p-1 steps, each one exchange and a reduction of a
// block: (p-1)(alpha + c beta + c gamma) when p divides the count; with
// uneven blocks, between the smallest and largest block's value.
func pairwiseReduceScatter(m Hockney, s size) Prediction {
	hi, lo := s.block(s.p)
	f := func(c float64) float64 { return float64(s.p-1) * (m.Alpha + c*m.Beta + c*m.Gamma) }
	return between(f(lo), f(hi))
}

// rhReduceScatter: for p a power of two, log2 p steps that halve what
// moves: log2 p alpha + (p-1) c (beta + gamma) (Thakur et al. 2005),
// exact when p divides the count, bounded by the smallest and largest
// block otherwise. Other p fold first; no closed form here yet.
func rhReduceScatter(m Hockney, s size) Prediction {
	if !isPow2(s.p) {
		return noForm()
	}
	hi, lo := s.block(s.p)
	f := func(c float64) float64 { return float64(log2Floor(s.p))*m.Alpha + float64(s.p-1)*c*(m.Beta+m.Gamma) }
	return between(f(lo), f(hi))
}

// between is exact when the bounds meet.
func between(lo, hi float64) Prediction {
	if lo == hi {
		return exact(lo)
	}
	return Prediction{Time: hi, Lower: lo}
}

// chainBcast: segments of s bytes flow down the chain; the root's port
// sends them back to back and every rank forwards each as it arrives, so
// segment j reaches the end at (p-1)(alpha + s beta) + j s beta: in all
// (p-1)(alpha + s beta) + (k-1) s beta for k segments (Linear Pipelining).
// Exact when the segments are equal; a shorter last segment of s' bytes
// gives between (k-1) s beta + (p-1)(alpha + s' beta) and that.
func chainBcast(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pl := s.pipeline(m)
	sb, lb := pl.g, pl.gLast
	hops, more := float64(s.p-1), float64(pl.k-1)
	return between(more*sb+hops*(m.Alpha+lb), hops*(m.Alpha+sb)+more*sb)
}

// chainReduce: the same chain upwards, each rank reducing segment j before
// passing it on: a hop costs alpha + s beta + s gamma and the pipeline
// advances by max(s beta, s gamma) per segment.
func chainReduce(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	pl := s.pipeline(m)
	sb, sg, lb, lg := pl.g, pl.red, pl.gLast, pl.redLast
	hops, more := float64(s.p-1), float64(pl.k-1)
	return between(more*max(sb, sg)+hops*(m.Alpha+lb+lg), hops*(m.Alpha+sb+sg)+more*max(sb, sg))
}

// allgatherReduce: a ring allgather of p whole vectors, (p-1)(alpha + n
// beta), then p-1 local reductions, (p-1) n gamma.
func allgatherReduce(m Hockney, s size) Prediction {
	return exact(float64(s.p-1) * (m.Alpha + s.n*m.Beta + s.n*m.Gamma))
}

// segmentedRing: Open MPI's segmented ring, the ring's reduce-scatter run
// phase after phase on one piece of every block, then one allgather of
// whole blocks. Each reduce-scatter step costs alpha and a block's piece
// of that phase, moved and reduced; a block's pieces add up to it, so over
// the phases (p-1)(phases alpha + c (beta + gamma)) for blocks of c bytes;
// the allgather is the ring's (p-1)(alpha + c beta). Exact when p divides
// the count; with uneven blocks between the smallest and largest block's
// value (a rank that sends a larger piece than it receives can run ahead
// where phases or the allgather begin). With one phase the schedule is
// the ring's, and so is the form.
func segmentedRing(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	seg := s.segment
	if seg == 0 {
		seg = max(1, (1<<20)/s.elem)
	}
	phases := float64(collectives.SegmentedRingPhases(s.count, s.p, seg))
	k := float64(s.p - 1)
	// Summed as ringAllreduce sums, so that one phase gives the ring's
	// value to the last bit.
	f := func(c float64) float64 { return k*(phases+1)*m.Alpha + 2*k*c*m.Beta + k*c*m.Gamma }
	hi, lo := s.block(s.p)
	if phases == 1 {
		return exact(f(hi)) // the ring's schedule, and its form
	}
	return between(f(lo), f(hi))
}

// binomialGatherScatter: for p a power of two, log2 p steps whose
// messages double (gather) or halve (scatter): log2 p alpha + (p-1) c
// beta, exact when p divides the count (Thakur et al. 2005 count the same),
// whatever the root (the tree is rooted there; the local copies of a root
// other than 0 cost nothing). Other cases: no closed form here yet.
func binomialGatherScatter(m Hockney, s size) Prediction {
	if s.p == 1 {
		return exact(0)
	}
	hi, lo := s.block(s.p)
	if !isPow2(s.p) || hi != lo {
		return noForm()
	}
	return exact(float64(log2Floor(s.p))*m.Alpha + float64(s.p-1)*hi*m.Beta)
}

// linearSyncAlltoall: batches of 8 partners, each batch after the last:
// a batch of m exchanges with other ranks costs alpha + m n beta (the
// sends leave back to back, each to a different rank, and the last arrives
// a latency later); rank r's exchange with itself is free.
func linearSyncAlltoall(m Hockney, s size) Prediction {
	var t float64
	for first := 0; first < s.p; first += 8 {
		others := min(first+8, s.p) - first
		if first == 0 {
			others-- // the exchange with oneself
		}
		if others > 0 {
			t += m.Alpha + float64(others)*s.n*m.Beta
		}
	}
	return exact(t)
}

// bruckRounds calls f with the number of blocks round k moves, for each of
// the ceil(log2 p) rounds of Bruck's algorithms.
func bruckRounds(p int, f func(blocks int)) {
	for dist := 1; dist < p; dist *= 2 {
		f(dist)
	}
}

// bruckAlltoall: round k moves the blocks whose index in 1..p-1 has bit k
// set, as one message, after the previous round: the sum over rounds of
// alpha + m_k n beta (Bruck et al. 1997); the local copies cost nothing in
// the model.
func bruckAlltoall(m Hockney, s size) Prediction {
	var t float64
	bruckRounds(s.p, func(dist int) {
		moved := 0
		for i := 1; i < s.p; i++ {
			if i&dist != 0 {
				moved++
			}
		}
		t += m.Alpha + float64(moved)*s.n*m.Beta
	})
	return exact(t)
}

// bruckAllgather: round k passes min(2^k, p-2^k) blocks: ceil(log2 p)
// alpha + (p-1) c beta when p divides the count; with uneven blocks,
// between the smallest and largest block's value.
func bruckAllgather(m Hockney, s size) Prediction {
	hi, lo := s.block(s.p)
	f := func(c float64) float64 {
		var t float64
		bruckRounds(s.p, func(dist int) { t += m.Alpha + float64(min(dist, s.p-dist))*c*m.Beta })
		return t
	}
	return between(f(lo), f(hi))
}

// neighborExchange: p/2 steps, the first moving one block, the others two:
// (p/2) alpha + (p-1) c beta when p divides the count; bounded by the
// smallest and largest block otherwise. Odd p is refused.
func neighborExchange(m Hockney, s size) Prediction {
	if s.p%2 != 0 {
		return noForm()
	}
	hi, lo := s.block(s.p)
	f := func(c float64) float64 { return float64(s.p/2)*m.Alpha + float64(s.p-1)*c*m.Beta }
	return between(f(lo), f(hi))
}

// rabenseifnerReduce: recursive halving (log2 p alpha + (p-1) c (beta +
// gamma)) then a binomial gather to the root (log2 p alpha + (p-1) c beta:
// MPICH's gather is rooted at the root, any root alike); for p a power of
// two dividing the count.
func rabenseifnerReduce(m Hockney, s size) Prediction {
	hi, lo := s.block(s.p)
	if !isPow2(s.p) || hi != lo {
		return noForm()
	}
	if s.p == 1 {
		return exact(0)
	}
	l := float64(log2Floor(s.p))
	return exact(2*l*m.Alpha + float64(s.p-1)*hi*(2*m.Beta+m.Gamma))
}

// nonOverlappingReduceScatter: a binomial reduce to rank 0 (see
// binomialTree), then rank 0's port sends every other rank its block.
func nonOverlappingReduceScatter(m Hockney, s size) Prediction {
	red := binomialTree(s.p, m.Alpha+s.n*m.Beta+s.n*m.Gamma)
	if s.p == 1 {
		return red
	}
	s0 := s
	s0.root = 0
	sc := linearGatherScatter(m, s0).Time
	return Prediction{Time: red.Time + sc, Lower: red.Lower + sc, Exact: red.Exact}
}
