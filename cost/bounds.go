package cost

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/collsim/collsim/collectives"
)

// Bound is a lower bound on the time of any algorithm for a collective
// call, term by term, after Chan, Heimlich, Purkayastha and van de Geijn,
// "Collective communication: theory, practice, and experience" (2007),
// Table 1: the latency term (information must reach every rank, and a
// single-port rank can at most double the ranks that have it per message
// time: ceil(log2 p) alpha), the bandwidth term (the bytes the busiest
// rank must take in or send, each at beta, after the first message's
// alpha), and the computation term (the reductions the busiest rank must
// do, at gamma, after the first message's alpha).
//
// Chan et al. bound each term separately; their sum is not a bound (an
// algorithm may overlap moving with reducing, or latency with bandwidth by
// pipelining). Their latency term assumes that a message occupies its
// sender's port for alpha, as in Hockney's model; collsim's networks charge
// alpha as latency in flight (LogGP's L) and let a port start its next
// message as soon as the last byte of the previous one has left, so a
// linear broadcast of empty messages takes one alpha, not ceil(log2 p).
// Time is therefore the largest of the bandwidth term, the computation term
// and one alpha: a bound in collsim's models. Latency is reported for
// machines where Chan's assumption holds. Sizes are rounded to whole
// elements where the paper's (p-1)/p n assumes even blocks: the busiest
// rank's bytes are n less the largest block, which never exceeds (p-1)/p n.
type Bound struct {
	Latency, Bandwidth, Compute float64 // seconds
	Time                        float64 // seconds: a lower bound on any algorithm's time in collsim's models
}

// LowerBound returns the lower bound on any algorithm's time for a call of
// collective c with parameters p under the model m.
func (m Hockney) LowerBound(c collectives.Collective, p collectives.Params) (Bound, error) {
	if p.Ranks < 1 || p.Count < 0 {
		return Bound{}, fmt.Errorf("%s: %d ranks and %d elements", c, p.Ranks, p.Count)
	}
	if p.Ranks == 1 || collectives.SendsNothing(c, p) {
		return Bound{}, nil
	}
	elem := p.ElemSize
	if elem == 0 {
		elem = 8
	}
	ranks := int64(p.Ranks)
	// In floats and 128-bit products: (p-1) count wrapped past 2^63
	// elements, and the bound lost its reductions (an audit).
	n := float64(p.Count) * float64(elem)
	hi := float64(ceilMulDiv(1, p.Count, ranks)) * float64(elem)
	// The reductions the busiest rank does: (p-1) count element-reductions
	// in all, spread over p ranks at best.
	reduced := float64(ceilMulDiv(ranks-1, p.Count, ranks)) * float64(elem)
	var moved, computed float64
	switch c {
	case collectives.Allreduce:
		// Every element of every rank's result depends on the others:
		// n bytes at least; Patarasuk and Yuan's 2(p-1)/p n for even blocks.
		moved, computed = math.Max(n, 2*(n-hi)), reduced
	case collectives.Reduce:
		moved, computed = n, reduced
	case collectives.ReduceScatter:
		moved, computed = n-hi, reduced
	case collectives.Bcast:
		moved = n
	case collectives.Gather, collectives.Scatter, collectives.Allgather:
		moved = n - hi
	case collectives.Alltoall:
		moved = float64(ranks-1) * float64(p.Count) * float64(elem)
	case collectives.Barrier:
	default:
		return Bound{}, fmt.Errorf("no lower bound for collective %q", c)
	}
	b := Bound{Latency: float64(log2Ceil(p.Ranks)) * m.Alpha}
	if moved > 0 {
		b.Bandwidth = m.Alpha + moved*m.Beta
	}
	if computed > 0 && m.Gamma > 0 {
		b.Compute = m.Alpha + computed*m.Gamma
	}
	b.Time = max(m.Alpha, b.Bandwidth, b.Compute)
	return b, nil
}

// ceilMulDiv is a*b/c rounded up, for a, b not negative and c positive,
// with a*b in 128 bits (its quotient fits: a < c here).
func ceilMulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		q++
	}
	return int64(q)
}
